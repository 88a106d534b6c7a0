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

from glyphbench.models.families import Family, register_family
from glyphbench.tiny.parts import kl_vae, qwen3_encoder, qwen_tokenizer
from glyphbench.tiny.pipelines import build_tiny_pipeline

#: The first diffusers release whose ZImagePipeline ends its default sigmas at 1/N
#: (``get_default_z_image_sigmas``): N steps are N useful DiT forwards. Before it
#: (0.36-0.38) the pipeline set ``sigma_min = 0``, so the last of N steps ran at
#: sigma 0 and changed nothing; the card's ``num_inference_steps=9  # This actually
#: results in 8 DiT forwards`` (Tongyi-MAI/Z-Image@c7ec135 README.md:165) is that.
#: Checked in the 0.36.0, 0.37.0, 0.38.0, 0.39.0, 0.40.0 and 0.42.1 wheels.
NEW_SIGMAS_DIFFUSERS = (0, 39, 0)


def turbo_steps() -> int:
    """Z-Image-Turbo's steps for the installed diffusers: 8, or 9 where 9 give 8 useful forwards.

    Decided by the installed ``pipeline_z_image.py`` (found without importing
    diffusers): whether it defines ``get_default_z_image_sigmas``; without the file,
    by the version number; without diffusers, 8.
    """
    import importlib.util
    from importlib.metadata import PackageNotFoundError, version

    spec = importlib.util.find_spec("diffusers")
    if spec is not None and spec.origin:
        source = Path(spec.origin).parent / "pipelines" / "z_image" / "pipeline_z_image.py"
        if source.is_file():
            return 8 if "def get_default_z_image_sigmas" in source.read_text("utf-8") else 9
    try:
        installed = version("diffusers")
    except PackageNotFoundError:
        return 8
    return 8 if _release(installed) >= NEW_SIGMAS_DIFFUSERS else 9


def _release(text: str) -> tuple[int, ...]:
    """``"0.38.0.dev0"`` -> ``(0, 38, 0)``.

    >>> _release("0.38.0.dev0"), _release("0.42.1")
    ((0, 38, 0), (0, 42, 1))
    """
    parts = []
    for piece in text.split(".")[:3]:
        digits = "".join(c for c in piece if c.isdigit())
        parts.append(int(digits or 0))
    return tuple(parts)


TINY_SETTINGS = {"height": 32, "width": 32, "steps": 2, "guidance": 3.0}


def build_tiny_z_image(path: str | Path) -> Path:
    """A tiny random ``ZImagePipeline`` (Qwen3 encoder, 2 layers); name the folder per variant."""
    return build_tiny_pipeline(path, "z-image", _make_z_image, TINY_SETTINGS)


def _make_z_image(work: Path) -> Any:
    import torch
    from diffusers import FlowMatchEulerDiscreteScheduler, ZImagePipeline, ZImageTransformer2DModel

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

register_family(
    Family(
        "z-image-turbo",
        ("ZImagePipeline",),
        1024,
        1024,
        turbo_steps(),
        0.0,
        "bfloat16",
        max_sequence_length=512,
        notes=(
            "Z-Image-Turbo: 8 useful DiT forwards, as the card: 8 steps with diffusers >= 0.39, "
            "9 before (the last step ran at sigma 0); picked from the installed diffusers. "
            "Guidance 0 (the card: guidance should be 0 for Turbo). Negative prompts have no "
            "effect."
        ),
        id_patterns=(r"z[.\-_]?image[.\-_]?turbo",),
        match_order=7,
        parameters=_PARAMETERS,
        sources="[18], [35] card (Tongyi-MAI/Z-Image@c7ec135 README.md:165-166: 9 steps = 8 DiT "
        "forwards, guidance 0) and diffusers example: 1024 px",
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
