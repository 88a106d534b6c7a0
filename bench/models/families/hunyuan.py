# mypy: disable-error-code="no-untyped-call"
"""HunyuanImage 2.1 (Tencent): a 17B DiT drawing 2K images, with a ByT5 glyph encoder.

Text in quotes is also encoded character by character with ByT5 (and guided by
a separate "OCR" guider). The full model's guidance lives in its guider
components (adaptive projected guidance mixed with CFG, scale 3.5); the adapter
rebuilds both guiders with the ``guidance`` setting. The distilled model uses a
guidance embedding (``distilled_guidance_scale`` 3.25) and 8 steps. The card's
prompt enhancer ("reprompt") and refiner are separate models, not applied.
Sources: docs/models.md [28].
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glyphbench.models.families import Family, register_family
from glyphbench.tiny.parts import qwen25_vl_encoder, qwen_tokenizer
from glyphbench.tiny.pipelines import build_tiny_pipeline

TINY_SETTINGS = {"height": 32, "width": 32, "steps": 2, "guidance": 3.5}


#: ByT5 settings T5Config accepts through its keyword arguments.
_BYT5_EXTRA: dict[str, Any] = {"dense_act_fn": "gelu_new", "tie_word_embeddings": False}


def build_tiny_hunyuanimage(path: str | Path) -> Path:
    """A tiny random ``HunyuanImagePipeline`` with both guiders (Qwen2.5-VL + ByT5 encoders)."""
    return build_tiny_pipeline(path, "hunyuanimage-2.1", _make_hunyuanimage, TINY_SETTINGS)


def _make_hunyuanimage(work: Path) -> Any:
    from diffusers import (
        AdaptiveProjectedMixGuidance,
        AutoencoderKLHunyuanImage,
        FlowMatchEulerDiscreteScheduler,
        HunyuanImagePipeline,
        HunyuanImageTransformer2DModel,
    )
    from transformers import ByT5Tokenizer, T5Config, T5EncoderModel

    tokenizer = qwen_tokenizer()
    transformer = HunyuanImageTransformer2DModel(
        in_channels=4,
        out_channels=4,
        num_attention_heads=2,
        attention_head_dim=8,
        num_layers=1,
        num_single_layers=1,
        num_refiner_layers=1,
        patch_size=(1, 1),
        guidance_embeds=False,
        text_embed_dim=32,
        text_embed_2_dim=32,
        rope_axes_dim=(4, 4),
    )
    vae = AutoencoderKLHunyuanImage(
        in_channels=3,
        out_channels=3,
        latent_channels=4,
        block_out_channels=(32, 32, 32, 32),  # group norms of 32 groups
        layers_per_block=1,
        scaling_factor=0.476986,
        spatial_compression_ratio=8,
        sample_size=32,
    )
    byt5: Any = T5Config(
        **_BYT5_EXTRA,
        d_model=32,
        d_kv=4,
        d_ff=16,
        num_layers=2,
        num_heads=2,
        relative_attention_num_buckets=8,
        relative_attention_max_distance=32,
        vocab_size=384,  # ByT5: 256 bytes + 3 specials + 125 sentinels
        feed_forward_proj="gated-gelu",
        is_encoder_decoder=False,
        use_cache=False,
    )
    return HunyuanImagePipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(shift=7.0),
        vae=vae,
        text_encoder=qwen25_vl_encoder(tokenizer, 32),
        tokenizer=tokenizer,
        text_encoder_2=T5EncoderModel(byt5).eval(),
        tokenizer_2=ByT5Tokenizer(),
        transformer=transformer,
        guider=AdaptiveProjectedMixGuidance(adaptive_projected_guidance_start_step=1),
        ocr_guider=AdaptiveProjectedMixGuidance(adaptive_projected_guidance_start_step=1),
    )


_PARAMETERS = {"transformer": 17.41, "text_encoder": 8.29, "text_encoder_2 (ByT5)": 0.22}

register_family(
    Family(
        "hunyuanimage-2.1",
        ("HunyuanImagePipeline",),
        2048,
        2048,
        50,
        3.5,
        "bfloat16",
        guidance_keyword="guider",
        negative_prompt="",
        scheduler_shift=5.0,
        notes=(
            "HunyuanImage-2.1: 2048x2048 (its native 2K), 50 steps; guidance 3.5 set on the "
            "guider and OCR-guider components (APG mixed with CFG); scheduler shift 5."
        ),
        id_patterns=(r"hunyuan[.\-_]?image[.\-_]?2[.\-_]?1(?![.\-_]?distill)",),
        match_order=16,
        parameters=_PARAMETERS,
        sources="[28] diffusers HunyuanImage-2.1 docs: 2048 px, 50 steps, guider guidance 3.5; "
        "shift 5: [33] Tencent-Hunyuan/HunyuanImage-2.1@307df88 README.md:121 and 163",
        tiny=build_tiny_hunyuanimage,
    ),
    Family(
        "hunyuanimage-2.1-distilled",
        ("HunyuanImagePipeline",),
        2048,
        2048,
        8,
        3.25,
        "bfloat16",
        guidance_keyword="distilled_guidance_scale",
        scheduler_shift=4.0,
        notes="HunyuanImage-2.1 distilled: 8 steps, distilled_guidance_scale 3.25, 2048 px, "
        "scheduler shift 4.",
        id_patterns=(r"hunyuan[.\-_]?image[.\-_]?2[.\-_]?1[.\-_]?distill",),
        match_order=15,
        parameters=_PARAMETERS,
        sources="[28] diffusers docs, distilled example: 8 steps, distilled_guidance_scale 3.25; "
        "shift 4: [33] Tencent-Hunyuan/HunyuanImage-2.1@307df88 README.md:122 and 163",
    ),
)
