# mypy: disable-error-code="no-untyped-call"
"""Chroma (lodestones): an 8.9B FLUX.1-schnell derivative with a T5-XXL encoder and real CFG.

Chroma drops FLUX's CLIP encoder and its distilled guidance: it runs
classifier-free guidance with a negative prompt. The defaults follow the
diffusers Chroma1-HD example (40 steps, guidance 3, its negative prompt).
Sources: docs/models.md [25].
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glyphbench.models.families import Family, register_family
from glyphbench.tiny.parts import kl_vae, t5_encoder, t5_tokenizer
from glyphbench.tiny.pipelines import build_tiny_pipeline

TINY_SETTINGS = {"height": 32, "width": 32, "steps": 2, "guidance": 3.0}

#: The negative prompt of the diffusers Chroma1-HD example.
NEGATIVE = (
    "low quality, ugly, unfinished, out of focus, deformed, disfigure, blurry, smudged, "
    "restricted palette, flat colors"
)


def build_tiny_chroma(path: str | Path) -> Path:
    """A tiny random ``ChromaPipeline`` (T5 encoder, 2 layers)."""
    return build_tiny_pipeline(path, "chroma", _make_chroma, TINY_SETTINGS)


def _make_chroma(work: Path) -> Any:
    from diffusers import ChromaPipeline, ChromaTransformer2DModel, FlowMatchEulerDiscreteScheduler

    tokenizer = t5_tokenizer()
    transformer = ChromaTransformer2DModel(
        patch_size=1,
        in_channels=16,
        num_layers=1,
        num_single_layers=1,
        attention_head_dim=16,
        num_attention_heads=2,
        joint_attention_dim=32,
        axes_dims_rope=[4, 4, 8],
        approximator_hidden_dim=32,
        approximator_layers=1,
        approximator_num_channels=16,
    )
    return ChromaPipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(),
        vae=kl_vae(4, shift_factor=0.0609, scaling_factor=1.5035),
        text_encoder=t5_encoder(len(tokenizer), 32),
        tokenizer=tokenizer,
        transformer=transformer,
    )


register_family(
    Family(
        "chroma",
        ("ChromaPipeline",),
        1024,
        1024,
        40,
        3.0,
        "bfloat16",
        max_sequence_length=512,
        negative_prompt=NEGATIVE,
        notes=(
            "Chroma1 (HD/Base): 8.9B FLUX.1-derived transformer, T5-XXL only, real CFG with the "
            "example's negative prompt."
        ),
        id_patterns=(r"chroma",),
        match_order=13,
        parameters={"transformer": 8.9, "text_encoder": 4.76, "vae": 0.08},
        sources="[25] diffusers Chroma1-HD example: 40 steps, guidance 3, negative prompt",
        tiny=build_tiny_chroma,
    ),
)
