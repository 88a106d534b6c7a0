# mypy: disable-error-code="no-untyped-call"
"""Lumina-Image 2.0 (Alpha-VLLM): a 2.6B unified next-DiT with a Gemma-2-2B text encoder.

The pipeline prepends a fixed system prompt to every prompt (the model was
trained with it; kept). The card's example truncates CFG after the first 25 %
of the steps (``cfg_trunc_ratio`` 0.25) and renormalises it
(``cfg_normalization``). Sources: docs/models.md [22].
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glyphbench.models.families import Family, register_family
from glyphbench.tiny.parts import gemma2_encoder, gemma_tokenizer, kl_vae
from glyphbench.tiny.pipelines import build_tiny_pipeline

TINY_SETTINGS = {"height": 32, "width": 32, "steps": 2, "guidance": 4.0}


def build_tiny_lumina2(path: str | Path) -> Path:
    """A tiny random ``Lumina2Pipeline`` (Gemma2 text encoder, 2 layers)."""
    return build_tiny_pipeline(path, "lumina2", _make_lumina2, TINY_SETTINGS)


def _make_lumina2(work: Path) -> Any:
    from diffusers import FlowMatchEulerDiscreteScheduler, Lumina2Pipeline
    from diffusers import Lumina2Transformer2DModel as Transformer

    tokenizer = gemma_tokenizer()
    transformer = Transformer(
        sample_size=16,
        patch_size=2,
        in_channels=4,
        hidden_size=16,
        num_layers=2,
        num_refiner_layers=1,
        num_attention_heads=2,
        num_kv_heads=2,
        multiple_of=16,
        ffn_dim_multiplier=None,
        norm_eps=1e-5,
        scaling_factor=1.0,
        axes_dim_rope=[4, 2, 2],
        cap_feat_dim=16,
    )
    return Lumina2Pipeline(
        transformer=transformer,
        scheduler=FlowMatchEulerDiscreteScheduler(),
        # The pipeline assumes an 8x VAE (vae_scale_factor is hard-coded): four levels.
        vae=kl_vae(4, levels=4, shift_factor=0.0609, scaling_factor=1.5035),
        text_encoder=gemma2_encoder(tokenizer, 16),
        tokenizer=tokenizer,
    )


register_family(
    Family(
        "lumina2",
        ("Lumina2Pipeline", "Lumina2Text2ImgPipeline"),
        1024,
        1024,
        50,
        4.0,
        "bfloat16",
        max_sequence_length=256,
        call_kwargs={"cfg_trunc_ratio": 0.25, "cfg_normalization": True},
        notes=(
            "Lumina-Image 2.0: 2.6B next-DiT, Gemma-2-2B encoder; CFG 4 truncated after 25 % "
            "of the steps and renormalised, as the card's example."
        ),
        id_patterns=(r"lumina[.\-_]?image[.\-_]?2|lumina[.\-_]?2",),
        match_order=12,
        parameters={"transformer": 2.61, "text_encoder": 2.61, "vae": 0.08},
        sources="[22] card example: 1024 px, 50 steps, guidance 4, cfg_trunc_ratio 0.25",
        tiny=build_tiny_lumina2,
    ),
)
