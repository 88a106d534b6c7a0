"""Every diffusers autoencoder class an installed text-to-image pipeline uses is accepted.

The list comes from diffusers itself (``pipeline_autoencoders`` reads each text-to-image
pipeline's ``vae`` type hint), so a new class in a new diffusers shows up here as a
failure. A tiny random build of each supported class is saved, loaded back through
``diffusers:<folder>`` and round-tripped; the codec's latent normalisation must cancel
exactly (the round trip equals the model's own encode -> decode) and must be the one
its pipeline applies.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from tests.helpers.vae_fixtures import TINY_BUILDS

pytest.importorskip("diffusers")

from glyphbench.vae_eval.codecs import get_codec
from glyphbench.vae_eval.codecs.diffusers_vae import (
    SUPPORTED_CLASSES,
    DiffusersCodec,
    is_text_to_image,
    patchify,
    pipeline_autoencoders,
    unpatchify,
)

#: Video autoencoders: their pipelines feed images as one-frame 5-D tensors.
VIDEO_CLASSES = {
    "AutoencoderKLQwenImage",
    "AutoencoderKLQwenImage21",
    "AutoencoderKLWan",
    "AutoencoderKLHunyuanImageRefiner",
}


def _image(width: int, height: int, seed: int = 0) -> Image.Image:
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 256, (height // 4 + 1, width // 4 + 1, 3), dtype=np.uint8)
    smooth = np.kron(coarse, np.ones((4, 4, 1), np.uint8))[:height, :width]
    return Image.fromarray(np.ascontiguousarray(smooth), "RGB")


@pytest.fixture(scope="module")
def used_by_pipelines() -> dict[str, list[str]]:
    return pipeline_autoencoders()


def test_every_autoencoder_of_a_text_to_image_pipeline_is_supported(
    used_by_pipelines: dict[str, list[str]],
) -> None:
    # A sanity floor: diffusers' own SD, FLUX.2 and Qwen-Image pipelines are found.
    assert {"AutoencoderKL", "AutoencoderKLFlux2", "AutoencoderKLQwenImage"} <= set(
        used_by_pipelines
    )
    assert "StableDiffusionPipeline" in used_by_pipelines["AutoencoderKL"]
    missing = {
        name: pipelines[:3]
        for name, pipelines in used_by_pipelines.items()
        if name not in SUPPORTED_CLASSES
    }
    assert not missing, f"autoencoders of text-to-image pipelines without a recipe: {missing}"


def test_text_to_image_is_read_from_the_pipeline_signature() -> None:
    import diffusers

    assert is_text_to_image(diffusers.StableDiffusionXLPipeline)
    assert is_text_to_image(diffusers.QwenImagePipeline)
    assert not is_text_to_image(diffusers.StableDiffusionImg2ImgPipeline)  # image required
    assert not is_text_to_image(diffusers.WanPipeline)  # num_frames: video
    assert not is_text_to_image(diffusers.StableAudioPipeline)


def test_every_supported_class_has_a_tiny_build() -> None:
    assert set(TINY_BUILDS) == set(SUPPORTED_CLASSES)


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    import torch

    root = tmp_path_factory.mktemp("tiny_autoencoders")
    folders = {}
    for name, build in TINY_BUILDS.items():
        torch.manual_seed(0)
        build().save_pretrained(root / name)
        folders[name] = root / name
    return folders


def _raw_roundtrip(model: Any, x: Any, name: str) -> Any:
    """The model's own encode -> decode, without any latent normalisation."""
    import torch

    if model.config.get("in_channels") == 4:  # RGBA autoencoder: an opaque alpha channel
        x = torch.cat([x, torch.ones_like(x[:, :1])], dim=1)
    if name in VIDEO_CLASSES:
        x = x.unsqueeze(2)
    encoded = model.encode(x)
    if hasattr(encoded, "latent_dist"):
        latents = encoded.latent_dist.mode()
    else:
        latents = encoded.latents if hasattr(encoded, "latents") else encoded.latent
    out = model.decode(latents).sample
    return (out[:, :, 0] if name in VIDEO_CLASSES else out)[:, :3]


@pytest.mark.parametrize("name", sorted(TINY_BUILDS))
def test_tiny_build_round_trips_as_its_pipeline_would(name: str, saved: dict[str, Path]) -> None:
    import torch

    from glyphbench.vae_eval.codecs.protocol import images_to_tensor

    codec = get_codec(f"diffusers:{saved[name]}")
    assert isinstance(codec, DiffusersCodec) and codec.class_name == name
    assert name in codec.describe()
    image = _image(32, 32, seed=1)  # a multiple of every tiny grid: no padding
    (out,) = codec.roundtrip([image])
    assert isinstance(out, Image.Image) and out.size == image.size and out.mode == "RGB"
    with torch.inference_mode():
        raw = _raw_roundtrip(codec.model, images_to_tensor([image]), name)
    expected = ((raw[0].clamp(-1, 1) + 1) * 127.5).round().permute(1, 2, 0).numpy()
    difference = np.abs(np.asarray(out, dtype=np.float64) - expected)
    assert difference.max() <= 1.0  # normalisation cancels up to float rounding

    odd = _image(37, 23, seed=2)  # padded to the latent grid, cropped back
    first, second = codec.roundtrip([odd]), codec.roundtrip([odd])
    assert isinstance(first[0], Image.Image) and first[0].size == (37, 23)
    assert isinstance(second[0], Image.Image)
    assert np.array_equal(np.asarray(first[0]), np.asarray(second[0]))


def test_latents_are_normalised_as_the_pipelines_do(saved: dict[str, Path]) -> None:
    import torch

    torch.manual_seed(1)
    kl = get_codec(f"diffusers:{saved['AutoencoderKL']}")
    z = torch.randn(1, 4, 4, 4)
    assert isinstance(kl, DiffusersCodec)
    assert torch.allclose(kl._normalise(z), (z - 0.1) * 0.18215)

    qwen = get_codec(f"diffusers:{saved['AutoencoderKLQwenImage']}")
    assert isinstance(qwen, DiffusersCodec)
    z5 = torch.randn(1, 4, 1, 4, 4)
    mean = torch.tensor([0.1, -0.2, 0.3, 0.0]).view(1, 4, 1, 1, 1)
    std = torch.tensor([2.0, 0.5, 1.5, 1.0]).view(1, 4, 1, 1, 1)
    assert torch.allclose(qwen._normalise(z5), (z5 - mean) / std)

    flux2 = get_codec(f"diffusers:{saved['AutoencoderKLFlux2']}")
    assert isinstance(flux2, DiffusersCodec) and flux2.multiple == 4  # 2 (blocks) x 2 (patch)
    norm = flux2.model.bn
    normalised = flux2._normalise(z)
    expected = (patchify(z) - norm.running_mean.view(1, -1, 1, 1)) / (
        norm.running_var.view(1, -1, 1, 1) + 1e-4
    ).sqrt()
    assert normalised.shape == (1, 16, 2, 2)
    assert torch.allclose(normalised, expected)
    assert torch.allclose(flux2._denormalise(normalised), z, atol=1e-5)


def test_patchify_is_inverted_by_unpatchify() -> None:
    import torch

    z = torch.arange(2 * 3 * 4 * 6, dtype=torch.float32).view(2, 3, 4, 6)
    patched = patchify(z)
    assert patched.shape == (2, 12, 2, 3)
    assert torch.equal(patched[0, :4, 0, 0], torch.tensor([0.0, 1.0, 6.0, 7.0]))  # one 2x2 patch
    assert torch.equal(unpatchify(patched), z)
