"""The codec protocol: the ten-line example of docs/vae_eval.md, python:module:Object,
register_codec, codec objects in RunOptions, tiling, and what is refused."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from typer.testing import CliRunner

from glyphbench.cli.root import app
from glyphbench.core.errors import InputError
from glyphbench.core.registry import PLUGINS
from glyphbench.readers.base import Reader, Reading
from glyphbench.vae_eval.codecs import (
    CodecFailure,
    TensorCodec,
    TensorOptions,
    get_codec,
    register_codec,
)
from glyphbench.vae_eval.codecs.protocol import name_codecs, tile_starts
from glyphbench.vae_eval.imageset import ImageSet, default_set
from glyphbench.vae_eval.metrics import psnr
from glyphbench.vae_eval.runner import RunOptions, evaluate
from tests.helpers.paths import REPO_ROOT

DOCS = REPO_ROOT / "docs" / "vae_eval.md"


def example_code() -> str:
    """The python block right after the ``<!-- example-codec -->`` marker."""
    text = DOCS.read_text(encoding="utf-8")
    found = re.search(r"<!-- example-codec -->\s*```python\n(.*?)```", text, re.S)
    assert found, "docs/vae_eval.md lost its example codec"
    return found.group(1)


def _image(width: int = 64, height: int = 48, seed: int = 0) -> Image.Image:
    rng = np.random.default_rng(seed)
    coarse = rng.integers(0, 256, (height // 8 + 1, width // 8 + 1, 3), dtype=np.uint8)
    smooth = np.kron(coarse, np.ones((8, 8, 1), np.uint8))[:height, :width]
    return Image.fromarray(np.ascontiguousarray(smooth), "RGB")


@pytest.fixture
def example_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The docs example written as an importable module (imported, so it registers)."""
    (tmp_path / "docs_example_codec.py").write_text(example_code(), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield "docs_example_codec"
    sys.modules.pop("docs_example_codec", None)
    PLUGINS.unregister("codecs", "block-average")


def test_example_is_ten_lines() -> None:
    lines = [line for line in example_code().splitlines() if line.strip()]
    assert len(lines) <= 10, lines


def test_docs_example_registers_and_runs(example_module: str) -> None:
    import importlib

    importlib.import_module(example_module)
    codec = get_codec("block-average")
    image, odd = _image(64, 48), _image(37, 22, seed=1)  # 37x22 is padded to the f4 grid
    out = codec.roundtrip([image, odd])
    assert [o.size for o in out if isinstance(o, Image.Image)] == [(64, 48), (37, 22)]
    assert isinstance(out[0], Image.Image)
    assert 12.0 < psnr(image, out[0]) < 40.0  # a real, lossy round trip
    assert "BlockAverage" in codec.describe() and "float32" in codec.describe()
    # the same class through the python: entry, with tensor options
    entry = get_codec(f"python:{example_module}:BlockAverage?dtype=bf16&batch_size=1")
    assert isinstance(entry, TensorCodec) and entry.batch_size == 1
    (again,) = entry.roundtrip([image])
    assert isinstance(again, Image.Image) and psnr(out[0], again) > 30.0  # bf16 ~ fp32


class ConstantReader(Reader):
    """Reads every image as the same words (the protocol, not OCR, is under test here)."""

    name = "constant"

    @property
    def version(self) -> str:
        return "constant 1"

    def read(self, images: Sequence[Image.Image]) -> list[Reading]:
        return [Reading("river candle") for _ in images]


class HalfBright:
    """A roundtrip-protocol object: halves every pixel value."""

    name = "half-bright"

    def roundtrip(self, images: Sequence[Image.Image]) -> list[Image.Image]:
        return [Image.eval(image, lambda value: value // 2) for image in images]


def test_codec_objects_run_in_an_evaluation(example_module: str, tmp_path: Path) -> None:
    import importlib

    module: Any = importlib.import_module(example_module)
    full = default_set(size=128)
    image_set = ImageSet(full.name, full.items[:2])
    options = RunOptions(codecs=["identity", module.BlockAverage(), HalfBright()], limit=2)
    table = evaluate(options, tmp_path / "out", image_set=image_set, ocr_engine=ConstantReader())
    assert list(dict.fromkeys(table["vae"])) == ["identity", "BlockAverage", "half-bright"]
    assert (table["error"] == "").all()
    by_codec = table.groupby("vae")["psnr"].mean()
    assert by_codec["identity"] == np.inf and 5 < by_codec["half-bright"] < 20
    assert (
        table.loc[table["vae"] == "BlockAverage", "vae_description"].str.contains("float32").all()
    )
    assert pd.notna(table["psnr_text"]).all()  # rendered images carry their text boxes


def test_registered_instance_and_refusals() -> None:
    register_codec("half-bright-test", HalfBright())
    try:
        (out,) = get_codec("half-bright-test").roundtrip([_image()])
        assert isinstance(out, Image.Image)
        assert np.asarray(out).max() <= 127
    finally:
        PLUGINS.unregister("codecs", "half-bright-test")
    with pytest.raises(InputError, match="cannot import 'no_such_module_here'"):
        get_codec("python:no_such_module_here:Codec")
    with pytest.raises(InputError, match="has no 'Nothing'"):
        get_codec("python:collections:Nothing")
    with pytest.raises(InputError, match="is not a codec: it needs encode"):
        get_codec("python:collections:OrderedDict")
    with pytest.raises(InputError, match="expected python:module:Object"):
        get_codec("python:collections")


def test_objects_are_named_and_repeats_dropped() -> None:
    names, objects = name_codecs(["identity", HalfBright(), "identity"])
    assert names == ["identity", "half-bright"] and list(objects) == ["half-bright"]


class Exact(TensorCodec):
    """Encode and decode are the identity: tiling must give the input back exactly."""

    multiple = 1

    def encode(self, x: Any) -> Any:
        return x

    def decode(self, latents: Any) -> Any:
        return latents


class Broken(Exact):
    def decode(self, latents: Any) -> Any:
        raise RuntimeError("decoder exploded")


def test_tiles_cover_and_blend_exactly() -> None:
    assert tile_starts(100, 64, 48) == [0, 36]
    image = _image(230, 150, seed=4)  # tiles of 64 px, several each way
    (whole,) = Exact(TensorOptions()).roundtrip([image])
    (tiled,) = Exact(TensorOptions(tile=64)).roundtrip([image])
    assert isinstance(whole, Image.Image) and isinstance(tiled, Image.Image)
    assert np.array_equal(np.asarray(whole), np.asarray(image))
    assert np.array_equal(np.asarray(tiled), np.asarray(image))


@pytest.mark.parametrize("tile", [1, 2, 3, 4, 63])
def test_a_tile_smaller_than_64_pixels_is_refused_before_anything_runs(
    tile: int, tmp_path: Path
) -> None:
    """tile=1 divided by zero after the whole run, tile=2 ran 65,000 round trips an image,
    tile=4 passed and let its seams wreck the result."""
    result = CliRunner().invoke(
        app, ["vae-eval", "--vae", f"taesd:/nowhere?tile={tile}", "--out", str(tmp_path / "o")]
    )
    assert isinstance(result.exception, InputError)  # the command line's exit 2
    assert f"must be 0 (off) or at least 64 pixels, not {tile}" in str(result.exception)
    assert not (tmp_path / "o").exists()
    assert TensorOptions(tile=0).tile == 0 and TensorOptions(tile=64).tile == 64


def test_a_failing_batch_becomes_failures() -> None:
    out = Broken(TensorOptions()).roundtrip([_image(), _image(seed=2)])
    assert all(isinstance(o, CodecFailure) and "decoder exploded" in o.message for o in out)
