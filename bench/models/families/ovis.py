# mypy: disable-error-code="no-untyped-call"
"""Ovis-Image (AIDC-AI): a 7B text-rendering model, an MMDiT reading Ovis 2.5's Qwen3 LLM.

Sources: docs/models.md [26].
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glyphbench.models.families import Family, register_family
from glyphbench.tiny.parts import kl_vae, qwen3_encoder, qwen_tokenizer
from glyphbench.tiny.pipelines import build_tiny_pipeline

TINY_SETTINGS = {"height": 32, "width": 32, "steps": 2, "guidance": 5.0}


def build_tiny_ovis_image(path: str | Path) -> Path:
    """A tiny random ``OvisImagePipeline`` (Qwen3 encoder, 2 layers)."""
    return build_tiny_pipeline(path, "ovis-image", _make_ovis_image, TINY_SETTINGS)


def _make_ovis_image(work: Path) -> Any:
    from diffusers import (
        FlowMatchEulerDiscreteScheduler,
        OvisImagePipeline,
        OvisImageTransformer2DModel,
    )

    tokenizer = qwen_tokenizer()
    transformer = OvisImageTransformer2DModel(
        patch_size=1,
        in_channels=16,  # 4 latent channels packed 2x2
        out_channels=16,
        num_layers=1,
        num_single_layers=1,
        attention_head_dim=16,
        num_attention_heads=2,
        joint_attention_dim=32,
        axes_dims_rope=(4, 4, 8),
    )
    return OvisImagePipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(),
        vae=kl_vae(4, shift_factor=0.0609, scaling_factor=1.5035),
        text_encoder=qwen3_encoder(tokenizer, 32),
        tokenizer=tokenizer,
        transformer=transformer,
    )


register_family(
    Family(
        "ovis-image",
        ("OvisImagePipeline",),
        1024,
        1024,
        50,
        5.0,
        "bfloat16",
        max_sequence_length=256,
        negative_prompt="",
        notes="Ovis-Image-7B: 50 steps, CFG 5 with an empty negative prompt (the card's example).",
        id_patterns=(r"ovis[.\-_]?image",),
        match_order=14,
        parameters={"transformer": 7.37, "text_encoder": 2.03, "vae": 0.08},
        sources="[26] diffusers OvisImagePipeline example: 50 steps, guidance 5, negative ''",
        tiny=build_tiny_ovis_image,
    ),
)
