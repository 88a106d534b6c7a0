"""glyphbench.vae_eval.codecs: reference codecs, spec parsing, a tiny AutoencoderKL via
diffusers:<path>."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image

from glyphbench.core.errors import InputError
from glyphbench.core.registry import PLUGINS
from glyphbench.vae_eval.codecs import CodecFailure, DiffusersCodec, get_codec, split_target
from glyphbench.vae_eval.metrics import psnr
from tests.helpers.vae_fixtures import TINY_BUILDS, tiny_autoencoder_kl


def _image(width: int = 64, height: int = 64, seed: int = 0) -> Image.Image:
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 256, (height // 8 + 1, width // 8 + 1, 3), dtype=np.uint8)
    smooth = np.kron(coarse, np.ones((8, 8, 1), np.uint8))[:height, :width]
    return Image.fromarray(np.ascontiguousarray(smooth), "RGB")


def test_identity_returns_equal_pixels() -> None:
    image = _image()
    (out,) = get_codec("identity").roundtrip([image])
    assert isinstance(out, Image.Image)
    assert np.array_equal(np.asarray(out), np.asarray(image))


def test_jpeg_quality_orders_fidelity() -> None:
    image = _image(96, 80)
    scores = []
    for quality in (95, 50, 10):
        (out,) = get_codec(f"jpeg?quality={quality}").roundtrip([image])
        assert isinstance(out, Image.Image) and out.size == image.size and out.mode == "RGB"
        scores.append(psnr(image, out))
    assert scores[0] > scores[1] > scores[2]


def test_resize_factor_orders_fidelity_and_keeps_size() -> None:
    image = _image(100, 60, seed=3)
    scores = []
    for factor in (2, 4, 8):
        codec = get_codec(f"resize?factor={factor}")
        assert codec.name == f"resize?factor={factor}"
        (out,) = codec.roundtrip([image])
        assert isinstance(out, Image.Image) and out.size == (100, 60)
        scores.append(psnr(image, out))
    assert scores[0] > scores[1] > scores[2]


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("jpeg?quality=0", "'quality': Input should be greater than or equal to 1"),
        ("jpeg?quality=high", "'quality': Input should be a valid integer"),
        ("jpeg?qualty=30", "unknown option 'qualty'; known: quality"),
        ("resize?factor=1", "'factor': Input should be greater than 1"),
        ("identity?quality=3", "unknown option 'quality'; known: none"),
        ("jpeg:x", "'jpeg' takes no target"),
        ("diffusers:", "needs a target, e.g. diffusers:<hub id or path>"),
        ("diffusers:x?dtype=int8", "dtype 'int8' is not one of float32, float16, bfloat16"),
        ("diffusers:x?device=tpu", "'device': Input should be 'auto', 'cpu' or 'cuda'"),
    ],
)
def test_bad_specs_are_input_errors(spec: str, problem: str) -> None:
    with pytest.raises(InputError, match=problem.replace("(", r"\(")):
        get_codec(spec)


def test_an_unknown_codec_lists_every_registered_one() -> None:
    codecs = PLUGINS.names("codecs")  # a plug-in codec is listed too
    assert {"diffusers", "identity", "jpeg", "python", "resize", "taesd"} <= set(codecs)
    with pytest.raises(InputError) as caught:
        get_codec("nosuchcodec")
    assert f"unknown codec 'nosuchcodec'; known: {', '.join(codecs)}" in str(caught.value)


@pytest.mark.parametrize(
    ("target", "expected"),
    [
        ("stabilityai/sd-vae-ft-mse", ("stabilityai/sd-vae-ft-mse", None)),
        (
            "stabilityai/stable-diffusion-xl-base-1.0:vae",
            ("stabilityai/stable-diffusion-xl-base-1.0", "vae"),
        ),
        ("/models/sd15:vae", ("/models/sd15", "vae")),
        ("/models/my:vae/weights", ("/models/my:vae/weights", None)),  # colon inside a path
        ("C:\\models\\vae", ("C:\\models\\vae", None)),  # Windows drive letter
        ("relative/dir:", ("relative/dir:", None)),
    ],
)
def test_split_target(target: str, expected: tuple[str, str | None]) -> None:
    assert split_target(target) == expected


# --------------------------------------------------------------------------- tiny AutoencoderKL


@pytest.fixture(scope="module")
def tiny_vae_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A pipeline-like folder holding a tiny AutoencoderKL in ``vae/``."""
    root = tmp_path_factory.mktemp("tiny_pipeline")
    tiny_autoencoder_kl().save_pretrained(root / "vae")
    return root


def test_diffusers_codec_roundtrip_shape_dtype_determinism(tiny_vae_dir: Path) -> None:
    codec = get_codec(f"diffusers:{tiny_vae_dir}:vae")
    assert isinstance(codec, DiffusersCodec)
    assert codec.class_name == "AutoencoderKL"
    assert codec.native_resolution == 64
    assert codec.multiple == 2  # two blocks -> one downsampling step
    assert "float32" in codec.describe() and "scale 0.18215" in codec.describe()
    # an odd size exercises padding to the latent grid and cropping back
    images = [_image(64, 64, seed=1), _image(64, 64, seed=2), _image(37, 50, seed=3)]
    first = codec.roundtrip(images)
    second = get_codec(f"diffusers:{tiny_vae_dir}:vae").roundtrip(images)
    for image, a, b in zip(images, first, second, strict=True):
        assert isinstance(a, Image.Image) and isinstance(b, Image.Image)
        assert a.size == image.size and a.mode == "RGB"
        assert np.asarray(a).dtype == np.uint8
        assert np.array_equal(np.asarray(a), np.asarray(b))  # deterministic: mode(), no sampling
    # batch composition does not change a result
    (alone,) = codec.roundtrip([images[1]])
    assert isinstance(alone, Image.Image)
    assert np.array_equal(np.asarray(alone), np.asarray(first[1]))


def test_diffusers_fp16_request_is_upcast_when_config_says_so(tiny_vae_dir: Path) -> None:
    codec = get_codec(f"diffusers:{tiny_vae_dir}:vae?dtype=fp16")
    assert isinstance(codec, DiffusersCodec)
    assert codec.upcast  # AutoencoderKL's config defaults to force_upcast=True
    assert "force_upcast" in codec.describe() and "float32" in codec.describe()


def test_diffusers_nan_output_becomes_failure(tmp_path: Path) -> None:
    import torch

    vae = tiny_autoencoder_kl()
    with torch.no_grad():
        vae.decoder.conv_out.bias.fill_(float("nan"))  # type: ignore[attr-defined]
    vae.save_pretrained(tmp_path / "nan_vae")  # type: ignore[attr-defined]
    (out,) = get_codec(f"diffusers:{tmp_path / 'nan_vae'}").roundtrip([_image()])
    assert isinstance(out, CodecFailure)
    assert "NaN" in out.message


def test_diffusers_missing_path_is_input_error(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"config\.json"):
        get_codec(f"diffusers:{tmp_path / 'empty'}")
    with pytest.raises(InputError, match="unknown option"):
        get_codec(f"diffusers:{tmp_path / 'empty'}?precision=fp16")


@pytest.mark.parametrize(
    ("build", "class_name"),
    [(TINY_BUILDS[name], name) for name in ("AutoencoderTiny", "AutoencoderDC")],
)
def test_other_autoencoders_are_picked_from_config(
    tmp_path: Path, build: Callable[[], Any], class_name: str
) -> None:
    import torch

    torch.manual_seed(0)
    build().save_pretrained(tmp_path / "model")
    codec = get_codec(f"diffusers:{tmp_path / 'model'}")
    assert isinstance(codec, DiffusersCodec) and codec.class_name == class_name
    image = _image(52, 40, seed=5)
    first, second = codec.roundtrip([image]), codec.roundtrip([image])
    assert isinstance(first[0], Image.Image) and first[0].size == (52, 40)
    assert isinstance(second[0], Image.Image)
    assert np.array_equal(np.asarray(first[0]), np.asarray(second[0]))


def test_a_missing_local_vae_folder_is_refused(tmp_path: Path) -> None:
    """A path (not a hub id) that is not there is a typo: one line before the run, not a
    run of failed rows; a hub id is looked up only when it loads."""
    from glyphbench.vae_eval.codecs import check_codec_files

    with pytest.raises(InputError, match=r"no-such-vae: no such folder"):
        check_codec_files(f"diffusers:{tmp_path / 'no-such-vae'}:vae")
    with pytest.raises(InputError, match=r"no such folder"):
        check_codec_files("diffusers:./models/sdxl-vae")
    check_codec_files("diffusers:stabilityai/sdxl-vae")
    check_codec_files(f"diffusers:{tmp_path}")
