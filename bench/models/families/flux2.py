# mypy: disable-error-code="no-untyped-call"
"""FLUX.2: [dev] (32B, Mistral Small 3.1 encoder) and [klein] 4B/9B (Qwen3 encoders).

[klein] ships step-distilled checkpoints (4 steps, guidance 1) and undistilled
"base" ones (50 steps, guidance 4); ``model_index.json`` records which
(``is_distilled``), so the two families are told apart without the id.
FLUX.2 [dev]'s card describes prompt "upsampling" (the Mistral encoder rewrites
the prompt at temperature 0.15 before encoding): the ``upsample`` quirk, off
unless asked for. Sources: docs/models.md [16]-[17].
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glyphbench.models.families import Family, Quirk, register_family
from glyphbench.tiny.parts import fast_bpe_tokenizer, qwen_text_config, qwen_tokenizer
from glyphbench.tiny.pipelines import build_tiny_pipeline

#: Tiny pipelines: 32 px; the VAE scales by 2, the pipeline packs 2x2 latents.
TINY_SETTINGS = {"height": 32, "width": 32, "steps": 2, "guidance": 4.0}

#: Layers whose hidden states FLUX.2 stacks: the tiny encoders need this many layers.
_DEV_LAYERS, _KLEIN_LAYERS = 31, 28

_MISTRAL_TEMPLATE = (
    "{{ bos_token }}{% for message in messages %}"
    "{% set text = message['content'] if message['content'] is string "
    "else message['content'] | selectattr('type', 'equalto', 'text') | map(attribute='text') "
    "| join('') %}"
    "{% if message['role'] == 'system' %}[SYSTEM_PROMPT]{{ text }}[/SYSTEM_PROMPT]"
    "{% elif message['role'] == 'user' %}[INST]{{ text }}[/INST]"
    "{% else %}{{ text }}{{ eos_token }}{% endif %}{% endfor %}"
)


def build_tiny_flux2(path: str | Path) -> Path:
    """A tiny random ``Flux2Pipeline`` (Mistral3 encoder of 31 thin layers, Pixtral processor)."""
    return build_tiny_pipeline(path, "flux2-dev", _make_flux2, TINY_SETTINGS)


def build_tiny_flux2_klein(path: str | Path) -> Path:
    """A tiny random distilled ``Flux2KleinPipeline`` (Qwen3 encoder of 28 thin layers)."""
    settings = {**TINY_SETTINGS, "guidance": 1.0}
    return build_tiny_pipeline(path, "flux2-klein", _make_klein_distilled, settings)


def build_tiny_flux2_klein_base(path: str | Path) -> Path:
    """A tiny random undistilled (base) ``Flux2KleinPipeline``."""
    return build_tiny_pipeline(path, "flux2-klein-base", _make_klein_base, TINY_SETTINGS)


def _transformer(text_width: int, *, guidance_embeds: bool) -> Any:
    from diffusers import Flux2Transformer2DModel

    return Flux2Transformer2DModel(
        patch_size=1,
        in_channels=4,
        num_layers=1,
        num_single_layers=1,
        attention_head_dim=16,
        num_attention_heads=2,
        joint_attention_dim=3 * text_width,  # three stacked hidden-state layers
        timestep_guidance_channels=256,
        axes_dims_rope=[4, 4, 4, 4],
        guidance_embeds=guidance_embeds,
    )


def _vae() -> Any:
    from diffusers import AutoencoderKLFlux2

    return AutoencoderKLFlux2(
        sample_size=32,
        in_channels=3,
        out_channels=3,
        down_block_types=("DownEncoderBlock2D", "DownEncoderBlock2D"),
        up_block_types=("UpDecoderBlock2D", "UpDecoderBlock2D"),
        block_out_channels=(8, 8),
        layers_per_block=1,
        latent_channels=1,
        norm_num_groups=1,
        use_quant_conv=False,
        use_post_quant_conv=False,
    )


def _pixtral_processor() -> Any:
    from transformers import PixtralImageProcessor, PixtralProcessor

    specials = ["<unk>", "<s>", "</s>", "<pad>", "[INST]", "[/INST]", "[SYSTEM_PROMPT]"]
    specials += ["[/SYSTEM_PROMPT]", "[IMG]", "[IMG_BREAK]", "[IMG_END]"]
    tokenizer = fast_bpe_tokenizer(specials, bos="<s>", eos="</s>", pad="<pad>")
    image_processor = PixtralImageProcessor(patch_size=16, size={"longest_edge": 64})
    return PixtralProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        patch_size=16,
        chat_template=_MISTRAL_TEMPLATE,
    )


def _make_flux2(work: Path) -> Any:
    from diffusers import FlowMatchEulerDiscreteScheduler, Flux2Pipeline
    from transformers import Mistral3Config, Mistral3ForConditionalGeneration

    processor = _pixtral_processor()
    tokenizer = processor.tokenizer
    width = 16
    config = Mistral3Config(
        text_config={
            "model_type": "mistral",
            "vocab_size": len(tokenizer),
            "hidden_size": width,
            "intermediate_size": 2 * width,
            "max_position_embeddings": 1024,
            "num_attention_heads": 2,
            "num_hidden_layers": _DEV_LAYERS - 1,
            "num_key_value_heads": 2,
            "head_dim": 8,
            "sliding_window": None,
            "bos_token_id": tokenizer.bos_token_id,
            "eos_token_id": tokenizer.eos_token_id,
            "pad_token_id": tokenizer.pad_token_id,
        },
        vision_config={
            "model_type": "pixtral",
            "hidden_size": 16,
            "num_hidden_layers": 1,
            "num_attention_heads": 2,
            "intermediate_size": 16,
            "image_size": 64,
            "patch_size": 16,
            "num_channels": 3,
        },
        image_token_index=tokenizer.convert_tokens_to_ids("[IMG]"),
        spatial_merge_size=1,
    )
    return Flux2Pipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(),
        vae=_vae(),
        text_encoder=Mistral3ForConditionalGeneration(config).eval(),
        tokenizer=processor,
        transformer=_transformer(width, guidance_embeds=True),
    )


def _make_klein(*, distilled: bool) -> Any:
    from diffusers import FlowMatchEulerDiscreteScheduler, Flux2KleinPipeline
    from transformers import Qwen3Config, Qwen3ForCausalLM

    tokenizer = qwen_tokenizer()
    width = 16
    config = Qwen3Config(
        **qwen_text_config(len(tokenizer), width, num_hidden_layers=_KLEIN_LAYERS - 1),
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.convert_tokens_to_ids("<|im_end|>"),
        bos_token_id=tokenizer.pad_token_id,
    )
    return Flux2KleinPipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(),
        vae=_vae(),
        text_encoder=Qwen3ForCausalLM(config).eval(),
        tokenizer=tokenizer,
        transformer=_transformer(width, guidance_embeds=False),
        is_distilled=distilled,
    )


def _make_klein_distilled(work: Path) -> Any:
    return _make_klein(distilled=True)


def _make_klein_base(work: Path) -> Any:
    return _make_klein(distilled=False)


_KLEIN_NOTE = (
    "FLUX.2 [klein]: 4B (Qwen3-4B encoder, Apache-2.0) or 9B (Qwen3-8B encoder) transformer; "
)

register_family(
    Family(
        "flux2-dev",
        ("Flux2Pipeline",),
        1024,
        1024,
        50,
        4.0,
        "bfloat16",
        max_sequence_length=512,
        quirks=(
            Quirk(
                "upsample",
                "prompt upsampling: the Mistral encoder rewrites the prompt first "
                "(caption_upsample_temperature 0.15, the official recommendation)",
                call_on={"caption_upsample_temperature": 0.15},
            ),
        ),
        notes=(
            "FLUX.2 [dev]: 32B rectified-flow transformer, Mistral-Small-3.1-24B text encoder "
            "(hidden states of layers 10/20/30 stacked); guidance is a distilled guidance "
            "embedding, not CFG."
        ),
        id_patterns=(r"flux[.\-_]?2(?![.\-_]?klein)",),
        match_order=3,
        parameters={"transformer": 32.22, "text_encoder": 24.01, "vae": 0.08},
        sources=(
            "[16] card/diffusers example: 50 steps, guidance 4; upsampling 0.15 (diffusers docs)"
        ),
        tiny=build_tiny_flux2,
        tiny_note="the Mistral3 encoder has 31 thin layers: the pipeline stacks layers 10/20/30",
    ),
    Family(
        "flux2-klein",
        ("Flux2KleinPipeline",),
        1024,
        1024,
        4,
        1.0,
        "bfloat16",
        max_sequence_length=512,
        index_match={"is_distilled": True},
        notes=_KLEIN_NOTE + "step-distilled: 4 steps, guidance 1.",
        id_patterns=(r"flux[.\-_]?2[.\-_]?klein(?![.\-_]?base)",),
        match_order=2,
        parameters={"transformer": 3.88, "text_encoder": 4.02, "vae": 0.08},
        sources="[17] card: 4 steps, guidance_scale 1.0 (distilled)",
        tiny=build_tiny_flux2_klein,
        tiny_note="the Qwen3 encoder has 28 thin layers: the pipeline stacks layers 9/18/27",
    ),
    Family(
        "flux2-klein-base",
        ("Flux2KleinPipeline",),
        1024,
        1024,
        50,
        4.0,
        "bfloat16",
        max_sequence_length=512,
        index_match={"is_distilled": False},
        notes=_KLEIN_NOTE + "undistilled base checkpoint: 50 steps, CFG 4.",
        id_patterns=(r"flux[.\-_]?2[.\-_]?klein[.\-_]?base",),
        match_order=1,
        parameters={"transformer": 3.88, "text_encoder": 4.02, "vae": 0.08},
        sources="[17] diffusers Flux2KleinPipeline example (klein-base-9B): 50 steps, guidance 4",
        tiny=build_tiny_flux2_klein_base,
        tiny_note="the Qwen3 encoder has 28 thin layers: the pipeline stacks layers 9/18/27",
    ),
)
