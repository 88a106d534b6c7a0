# mypy: disable-error-code="no-untyped-call"
"""LongCat-Image (Meituan): a 6B FLUX-style DiT reading Qwen2.5-VL-7B hidden states.

The pipeline can rewrite the prompt with its own Qwen2.5-VL before encoding
(``enable_prompt_rewrite``): the card's example enables it
(meituan-longcat/LongCat-Image@af39f67 README.md:164) and so does diffusers'
default, so the ``rewrite`` quirk is on by default; ``quirks=-rewrite`` turns it
off (the prompt then reaches the encoder as written). Guidance 4.0 is the
README's (l. 159); CFG renormalisation stays on (l. 163, the pipeline default).
Sources: docs/models.md [27].
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glyphbench.models.families import Family, Quirk, register_family
from glyphbench.tiny.parts import kl_vae, qwen2_vl_processor, qwen25_vl_encoder, qwen_tokenizer
from glyphbench.tiny.pipelines import build_tiny_pipeline

TINY_SETTINGS = {"height": 32, "width": 32, "steps": 2, "guidance": 4.5}


def build_tiny_longcat_image(path: str | Path) -> Path:
    """A tiny random ``LongCatImagePipeline`` (Qwen2.5-VL encoder and processor, 2 layers)."""
    return build_tiny_pipeline(path, "longcat-image", _make_longcat_image, TINY_SETTINGS)


def _make_longcat_image(work: Path) -> Any:
    from diffusers import (
        FlowMatchEulerDiscreteScheduler,
        LongCatImagePipeline,
        LongCatImageTransformer2DModel,
    )

    tokenizer = qwen_tokenizer()
    transformer = LongCatImageTransformer2DModel(
        patch_size=1,
        in_channels=64,  # the pipeline fixes 16 latent channels, packed 2x2
        num_layers=1,
        num_single_layers=1,
        attention_head_dim=16,
        num_attention_heads=2,
        joint_attention_dim=32,
        pooled_projection_dim=32,
        axes_dims_rope=[4, 4, 8],
    )
    return LongCatImagePipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(),
        vae=kl_vae(16, shift_factor=0.0609, scaling_factor=1.5035),
        text_encoder=qwen25_vl_encoder(tokenizer, 32),
        tokenizer=tokenizer,
        text_processor=qwen2_vl_processor(tokenizer),
        transformer=transformer,
    )


register_family(
    Family(
        "longcat-image",
        ("LongCatImagePipeline",),
        768,
        1344,
        50,
        4.0,
        "bfloat16",
        quirks=(
            Quirk(
                "rewrite",
                "the pipeline's prompt rewrite by its own Qwen2.5-VL before encoding "
                "(enable_prompt_rewrite; on in the card's example and in diffusers; "
                "quirks=-rewrite turns it off)",
                default=True,
                call_on={"enable_prompt_rewrite": True},
                call_off={"enable_prompt_rewrite": False},
            ),
        ),
        notes=(
            "LongCat-Image: 768x1344 (the card's example size, about 1 MP), 50 steps, "
            "guidance 4.0 with CFG renormalisation; the pipeline's prompt rewrite on, as in "
            "the card (quirks=-rewrite: off)."
        ),
        id_patterns=(r"longcat[.\-_]?image",),
        match_order=15,
        parameters={"transformer": 6.0, "text_encoder": 8.29, "vae": 0.08},
        sources="[27], [32] meituan-longcat/LongCat-Image@af39f67 README.md:155-165: 768x1344, "
        "50 steps, guidance 4.0, enable_cfg_renorm and enable_prompt_rewrite True",
        tiny=build_tiny_longcat_image,
    ),
)
