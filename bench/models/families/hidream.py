# mypy: disable-error-code="no-untyped-call"
"""HiDream-I1 (HiDream.ai): a 17B sparse (mixture-of-experts) DiT with four text encoders.

CLIP-L and CLIP-G (pooled), T5-XXL and Llama-3.1-8B-Instruct (hidden states of
several layers). The diffusers repos leave the Llama out: the card loads it
from ``meta-llama/Meta-Llama-3.1-8B-Instruct`` (gated: accept its licence), and
so does the adapter, unless ``text_encoder_4`` names another source. Full runs
CFG; Dev and Fast are guidance-distilled. Sources: docs/models.md [19].
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glyphbench.models.families import ExtraComponent, Family, register_family
from glyphbench.tiny.parts import (
    clip_text_encoder,
    clip_tokenizer,
    kl_vae,
    llama3_tokenizer,
    llama_encoder,
    seeded,
    t5_encoder,
    t5_tokenizer,
)
from glyphbench.tiny.pipelines import build_tiny_pipeline

TINY_SETTINGS = {"height": 32, "width": 32, "steps": 2, "guidance": 5.0}

#: Where the card gets the fourth text encoder and its tokenizer.
LLAMA = "meta-llama/Meta-Llama-3.1-8B-Instruct"

#: Tiny builds keep their Llama here, outside the pipeline (as on the hub):
#: ``diffusers:<folder>?text_encoder_4=<folder>/llama``.
TINY_LLAMA_FOLDER = "llama"

_EXTRAS = (
    ExtraComponent(
        "tokenizer_4", "transformers.AutoTokenizer", "text_encoder_4", LLAMA, weighted=False
    ),
    ExtraComponent(
        "text_encoder_4",
        "transformers.LlamaForCausalLM",
        "text_encoder_4",
        LLAMA,
        kwargs={"output_hidden_states": True, "output_attentions": True},
    ),
)


def build_tiny_hidream(path: str | Path) -> Path:
    """A tiny random ``HiDreamImagePipeline`` without its Llama, which goes to ``path/llama``."""
    root = build_tiny_pipeline(path, "hidream-i1", _make_hidream, TINY_SETTINGS)
    llama = root / TINY_LLAMA_FOLDER
    if not (llama / "config.json").is_file():
        tokenizer = llama3_tokenizer(max_length=128)
        with seeded(4):
            encoder = llama_encoder(tokenizer, width=16, layers=2)
        tokenizer.save_pretrained(str(llama))
        encoder.save_pretrained(str(llama), safe_serialization=True)
    return root


def _make_hidream(work: Path) -> Any:
    from diffusers import (
        FlowMatchEulerDiscreteScheduler,
        HiDreamImagePipeline,
        HiDreamImageTransformer2DModel,
    )

    tokenizer, tokenizer_2 = clip_tokenizer(128), clip_tokenizer(128)
    tokenizer_3 = t5_tokenizer(128)
    transformer = HiDreamImageTransformer2DModel(
        patch_size=2,
        in_channels=4,
        out_channels=4,
        num_layers=1,
        num_single_layers=1,
        attention_head_dim=8,
        num_attention_heads=4,
        caption_channels=[32, 16],  # T5 width, Llama width
        text_emb_dim=64,  # the two pooled CLIP embeddings side by side
        num_routed_experts=4,
        num_activated_experts=2,
        axes_dims_rope=(4, 2, 2),
        max_resolution=(32, 32),
        llama_layers=(0, 1),
    )
    # Built without the Llama pair, as the hub repos are; saved with [null, null] entries.
    return HiDreamImagePipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(shift=3.0),
        vae=kl_vae(4, scaling_factor=0.3611, shift_factor=0.1159),
        text_encoder=clip_text_encoder(len(tokenizer), 32, projection=True, positions=128),
        tokenizer=tokenizer,
        text_encoder_2=clip_text_encoder(len(tokenizer_2), 32, projection=True, positions=128),
        tokenizer_2=tokenizer_2,
        text_encoder_3=t5_encoder(len(tokenizer_3), 32),
        tokenizer_3=tokenizer_3,
        text_encoder_4=None,
        tokenizer_4=None,
        transformer=transformer,
    )


_PARAMETERS = {
    "transformer": 17.1,
    "text_encoder_4 (Llama-3.1-8B)": 8.03,
    "text_encoder_3 (T5-XXL)": 4.76,
    "text_encoders 1-2 (CLIP-L/G)": 0.82,
    "vae": 0.08,
}
#: The official inference script's schedulers (HiDream-ai/HiDream-I1@9b42dd6 inference.py:16-37,
#: built at l. 55 with ``num_train_timesteps=1000, shift, use_dynamic_shifting=False``) are its
#: own classes (hi_diffusers/schedulers). Their diffusers counterparts: FlowUniPCMultistep is
#: UniPC on flow sigmas with a flow shift; FlashFlowMatchEulerDiscrete's step
#: (flash_flow_match.py:318-337: x0 = sample - v*sigma, re-noised to the next sigma) is
#: FlowMatchEulerDiscreteScheduler's ``stochastic_sampling``, except the last step: Flash
#: returns that step's input sample (l. 329-337 re-noise only before the last step), diffusers
#: its x0. Not compared numerically here (no GPU, no HiDream weights).
_UNIPC_FLOW = {
    "use_flow_sigmas": True,
    "prediction_type": "flow_prediction",
    "num_train_timesteps": 1000,
}
_FLASH = {"stochastic_sampling": True, "num_train_timesteps": 1000}
_NOTE = "HiDream-I1 {}: 17B MoE DiT; CLIP-L/G, T5-XXL and Llama-3.1-8B text encoders. "

register_family(
    Family(
        "hidream-i1-full",
        ("HiDreamImagePipeline",),
        1024,
        1024,
        50,
        5.0,
        "bfloat16",
        max_sequence_length=128,
        scheduler_shift=3.0,
        scheduler="UniPCMultistepScheduler",
        scheduler_config=_UNIPC_FLOW,
        extras=_EXTRAS,
        notes=_NOTE.format("Full") + "50 steps, CFG 5, shift 3, flow UniPC.",
        id_patterns=(r"hidream[.\-_]?i1(?![.\-_]?(dev|fast))",),
        match_order=9,
        parameters=_PARAMETERS,
        sources="[19] card example (50 steps, guidance 5); [34] HiDream-ai/HiDream-I1@9b42dd6 "
        "inference.py:25-30 (FlowUniPCMultistepScheduler, shift 3) and :55",
        tiny=build_tiny_hidream,
        tiny_note="the tiny Llama lives in <folder>/llama: pass text_encoder_4=<folder>/llama",
    ),
    Family(
        "hidream-i1-dev",
        ("HiDreamImagePipeline",),
        1024,
        1024,
        28,
        0.0,
        "bfloat16",
        max_sequence_length=128,
        scheduler_shift=6.0,
        scheduler="FlowMatchEulerDiscreteScheduler",
        scheduler_config=_FLASH,
        extras=_EXTRAS,
        notes=_NOTE.format("Dev") + "guidance-distilled: 28 steps, guidance 0, shift 6, "
        "stochastic flow-match Euler.",
        id_patterns=(r"hidream[.\-_]?i1[.\-_]?dev",),
        match_order=9,
        parameters=_PARAMETERS,
        sources="[34] HiDream-ai/HiDream-I1@9b42dd6 inference.py:18-23 "
        "(FlashFlowMatchEulerDiscreteScheduler, shift 6, 28 steps, guidance 0) and :55",
        tiny=build_tiny_hidream,
        tiny_note="the tiny Llama lives in <folder>/llama: pass text_encoder_4=<folder>/llama",
    ),
    Family(
        "hidream-i1-fast",
        ("HiDreamImagePipeline",),
        1024,
        1024,
        16,
        0.0,
        "bfloat16",
        max_sequence_length=128,
        scheduler_shift=3.0,
        scheduler="FlowMatchEulerDiscreteScheduler",
        scheduler_config=_FLASH,
        extras=_EXTRAS,
        notes=_NOTE.format("Fast") + "guidance-distilled: 16 steps, guidance 0, shift 3, "
        "stochastic flow-match Euler.",
        id_patterns=(r"hidream[.\-_]?i1[.\-_]?fast",),
        match_order=9,
        parameters=_PARAMETERS,
        sources="[34] HiDream-ai/HiDream-I1@9b42dd6 inference.py:32-37 "
        "(FlashFlowMatchEulerDiscreteScheduler, shift 3, 16 steps, guidance 0) and :55",
        tiny=build_tiny_hidream,
        tiny_note="the tiny Llama lives in <folder>/llama: pass text_encoder_4=<folder>/llama",
    ),
)
