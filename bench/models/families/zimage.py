# mypy: disable-error-code="no-untyped-call"
"""Z-Image (Tongyi-MAI): a 6B single-stream DiT with a Qwen3-4B text encoder.

Z-Image-Turbo is distilled to 8 steps without guidance; Z-Image (the base model)
is undistilled and runs real CFG. Both share ``ZImagePipeline``, so the id tells
them apart (``turbo`` in the name). The card's prompt enhancer (an LLM rewrite
template in the Z-Image space) is not part of diffusers and is not applied.
Sources: docs/models.md [18].
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.models.families import Family
from bench.models.tiny import build_tiny_pipeline

TINY_SETTINGS = {"height": 32, "width": 32, "steps": 2, "guidance": 3.0}


def build_tiny_z_image(path: str | Path) -> Path:
    """A tiny random ``ZImagePipeline`` (Qwen3 encoder, 2 layers); name the folder per variant."""
    return build_tiny_pipeline(path, "z-image", _make_z_image, TINY_SETTINGS)


def _make_z_image(work: Path) -> Any:
    import torch
    from diffusers import FlowMatchEulerDiscreteScheduler, ZImagePipeline, ZImageTransformer2DModel

    from bench.models.tinyparts import kl_vae, qwen3_encoder, qwen_tokenizer

    tokenizer = qwen_tokenizer()
    transformer = ZImageTransformer2DModel(
        all_patch_size=(2,),
        all_f_patch_size=(1,),
        in_channels=16,
        dim=32,
        n_layers=2,
        n_refiner_layers=1,
        n_heads=2,
        n_kv_heads=2,
        norm_eps=1e-5,
        qk_norm=True,
        cap_feat_dim=32,
        rope_theta=256.0,
        t_scale=1000.0,
        axes_dims=[8, 4, 4],
        axes_lens=[256, 32, 32],
    )
    # Both pad tokens are created with torch.empty: fix them so every build is identical.
    with torch.no_grad():
        for name in ("x_pad_token", "cap_pad_token"):
            getattr(transformer, name).fill_(1.0)
    return ZImagePipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(shift=3.0, use_dynamic_shifting=False),
        vae=kl_vae(16, scaling_factor=0.3611, shift_factor=0.1159),
        text_encoder=qwen3_encoder(tokenizer, 32),
        tokenizer=tokenizer,
        transformer=transformer,
    )


_PARAMETERS = {"transformer": 6.15, "text_encoder": 4.02, "vae": 0.08}

FAMILIES: tuple[Family, ...] = (
    Family(
        "z-image-turbo",
        ("ZImagePipeline",),
        1024,
        1024,
        8,
        0.0,
        "bfloat16",
        max_sequence_length=512,
        notes=(
            "Z-Image-Turbo: 8 steps (8 DiT evaluations; older diffusers needed 9), guidance 0 "
            "(the card: guidance should be 0 for Turbo). Negative prompts have no effect."
        ),
        id_patterns=(r"z[.\-_]?image[.\-_]?turbo",),
        match_order=7,
        parameters=_PARAMETERS,
        sources="[18] card and diffusers example: 1024 px, 8 steps, guidance 0",
        tiny=build_tiny_z_image,
    ),
    Family(
        "z-image",
        ("ZImagePipeline",),
        1024,
        1024,
        50,
        4.0,
        "bfloat16",
        max_sequence_length=512,
        call_kwargs={"cfg_normalization": False},
        notes=(
            "Z-Image (base, undistilled): 50 steps with CFG 4 and cfg_normalization off, as "
            "the card's example; supports negative prompts."
        ),
        id_patterns=(r"z[.\-_]?image",),
        match_order=8,
        parameters=_PARAMETERS,
        sources="[18] Z-Image card example: 50 steps, guidance 4, cfg_normalization False",
        tiny=build_tiny_z_image,
    ),
)
