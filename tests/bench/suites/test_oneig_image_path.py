"""OneIG's image path as a run option: ``--suite "oneig-text?image_path=oneig"``.

The reader reads the cells OneIG's scorer reads (the prompt's 4 images in a 2x2 WebP
grid at quality 80, cut, each cell a JPEG at quality 75), not the stored PNGs, which
stay as made. A spy reader records what it was given; the runs use the control model
on the OneIG fixture (tests/data/suites/oneig).
"""

from __future__ import annotations

import hashlib
import io
import json
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
from glyphbench.core.registry import PLUGINS, Options, Spec
from glyphbench.engine import RunFolder
from glyphbench.readers.base import Reader, Reading
from glyphbench.run.grid_path import check_groups
from glyphbench.suites.oneig import oneig_cells, oneig_image_path, split_grid, tile_grid
from tests.helpers.paths import DATA

FIXTURE = DATA / "suites" / "oneig"
SEEN: list[tuple[str | None, bytes, tuple[int, int]]] = []


class SpyReader(Reader):
    """Reads every image as its size, and keeps (format, pixels, size) of what it saw."""

    name = "grid-spy"

    def __init__(self, spec: Spec, options: Options) -> None:
        pass

    @property
    def version(self) -> str:
        return "grid-spy 1"

    def read(self, images: Sequence[Image.Image]) -> list[Reading]:
        for image in images:
            SEEN.append((image.format, image.convert("RGB").tobytes(), image.size))
        return [Reading(f"image {im.width}", pieces=[f"image {im.width}"]) for im in images]


@pytest.fixture(scope="module", autouse=True)
def _spy() -> Iterator[None]:
    PLUGINS.register("readers", "grid-spy", summary="test double")(SpyReader)
    yield
    PLUGINS.unregister("readers", "grid-spy")


def _args(out: Path, *extra: str, option: str = "?image_path=oneig") -> list[str]:
    return ["run", "--suite", f"oneig-text:en{option}", "--data", str(FIXTURE),
            "--models", "control:render?size=64", "--ocr", "grid-spy", "--limit", "2",
            "--out", str(out), "--no-progress", *extra]  # fmt: skip


def _run(out: Path, *extra: str, option: str = "?image_path=oneig") -> Any:
    SEEN.clear()
    return CliRunner().invoke(app, _args(out, *extra, option=option))


def _refused(args: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    """``glyphbench ARGS`` as the console script runs it: exit 2 and its one-line error."""
    from glyphbench.cli import main

    capsys.readouterr()
    saved, sys.argv = sys.argv, ["glyphbench", *args]
    try:
        with pytest.raises(SystemExit) as stop:
            main()
    finally:
        sys.argv = saved
    err = capsys.readouterr().err.strip()
    assert stop.value.code == 2 and len(err.splitlines()) == 1, err
    return err


def _seen() -> list[tuple[str | None, bytes, tuple[int, int]]]:
    """What the reader read of the run's images (not the sample image a reader is tried on)."""
    return [entry for entry in SEEN if entry[2] == (64, 64)]


def _noise(seed: int, size: int = 40) -> Image.Image:
    pixels = np.random.default_rng(seed).integers(0, 256, (size, size, 3), dtype=np.uint8)
    return Image.fromarray(pixels)


def _stored_cells(out: Path) -> dict[str, list[bytes]]:
    """Each row's cell through OneIG's path, computed here from the stored PNGs."""
    rows = pd.read_parquet(out / "results.parquet")
    cells: dict[str, list[bytes]] = {}
    for _, group in rows.groupby(["model", "prompt_id", "seed"]):
        group = group.sort_values("sample_index")
        images = [Image.open(out / path).convert("RGB") for path in group["image_path"]]
        for path, cell in zip(group["image_path"], oneig_cells(images), strict=True):
            assert cell is not None
            cells[path] = [cell.tobytes()]
    return cells


# --------------------------------------------------------------------------- the path


def test_the_cells_go_through_webp_and_jpeg_and_black_cells_are_dropped() -> None:
    images = [_noise(seed) for seed in range(4)]
    cells = oneig_cells(images)
    assert all(cell is not None for cell in cells)
    kept = [cell for cell in cells if cell is not None]
    assert [c.tobytes() for c in oneig_image_path(images)] == [c.tobytes() for c in kept]
    assert all(cell.format == "JPEG" and cell.size == (40, 40) for cell in kept)
    # lossy: not the images themselves, though a lossless cut of the grid gives them back
    lossless = split_grid(tile_grid(images))
    for cell, image, plain in zip(kept, images, lossless, strict=True):
        assert cell.tobytes() != image.tobytes()
        assert plain.tobytes() == image.tobytes()
    # the same steps by hand: WebP at PIL's default quality is quality 80, JPEG's is 75
    webp = io.BytesIO()
    tile_grid(images).save(webp, format="WEBP", quality=80)
    assert webp.getvalue()[:4] == b"RIFF" and webp.getvalue()[8:12] == b"WEBP"
    grid = Image.open(io.BytesIO(webp.getvalue())).convert("RGB")
    jpeg = io.BytesIO()
    grid.crop((40, 0, 80, 40)).save(jpeg, format="JPEG", quality=75)
    assert Image.open(jpeg).convert("RGB").tobytes() == kept[1].tobytes()
    # a cell still all black after the WebP grid is dropped (utils.py:48-49); beside
    # strong colours the lossy grid leaves it not quite black, and OneIG reads it
    white = [Image.new("RGB", (32, 32), "white")] * 3
    assert [c is None for c in oneig_cells([*white, Image.new("RGB", (32, 32))])] == [
        False, False, False, True,
    ]  # fmt: skip
    colours = [Image.new("RGB", (32, 32), c) for c in ("red", "green", "blue", "black")]
    assert oneig_cells(colours)[3] is not None


# --------------------------------------------------------------------------- a run


@pytest.mark.slow
def test_a_run_reads_each_prompts_grid_cells_and_keeps_the_pngs(tmp_path: Path) -> None:
    out = tmp_path / "grid"
    result = _run(out)
    assert result.exit_code == 0, result.output
    rows = pd.read_parquet(out / "results.parquet")
    assert len(rows) == 8 and (rows["error"] == "").all()
    assert rows["ocr_engine"].eq("grid-spy").all() and rows["ocr_text"].eq("image 64").all()
    # the stored PNGs are as made: their files still match the recorded SHA-256
    for path, digest in zip(rows["image_path"], rows["image_sha256"], strict=True):
        assert path.endswith(".png")
        assert hashlib.sha256((out / path).read_bytes()).hexdigest() == digest
    # the reader saw JPEG cells, exactly the function's, never a stored PNG's pixels
    assert len(_seen()) == 8 and {fmt for fmt, _, _ in _seen()} == {"JPEG"}
    expected = sorted(c for cells in _stored_cells(out).values() for c in cells)
    assert sorted(pixels for _, pixels, _ in _seen()) == expected
    stored = {Image.open(out / p).convert("RGB").tobytes() for p in rows["image_path"]}
    assert not stored & {pixels for _, pixels, _ in _seen()}
    # the run records the path: the protocol card and the report's card lines
    card = json.loads((out / "run.json").read_text())["protocol"]
    assert "WebP" in card["image_path"] and "JPEG" in card["image_path"]
    from glyphbench.report.suites import card_lines

    assert ("Images read", card["image_path"]) in card_lines(card)

    # a rescore reads the cells again, from the stored PNGs (with no stored readings, as
    # a new reader would); besides them only the one image a reader is tried on
    import shutil

    shutil.rmtree(out / "readings")
    SEEN.clear()
    again = CliRunner().invoke(app, ["rescore", str(out), "--no-progress"])
    assert again.exit_code == 0, again.output
    cells = [pixels for fmt, pixels, _ in _seen() if fmt == "JPEG"]
    assert sorted(cells) == expected and len(_seen()) - len(cells) <= 1
    assert pd.read_parquet(out / "results.parquet")["ocr_text"].eq("image 64").all()


def test_the_default_path_reads_the_stored_pngs_as_before(tmp_path: Path) -> None:
    out = tmp_path / "plain"
    result = _run(out, option="")
    assert result.exit_code == 0, result.output
    rows = pd.read_parquet(out / "results.parquet")
    stored = sorted(Image.open(out / p).convert("RGB").tobytes() for p in rows["image_path"])
    assert len(_seen()) == 8 and "JPEG" not in {fmt for fmt, _, _ in _seen()}
    assert sorted(pixels for _, pixels, _ in _seen()) == stored
    assert "image_path" not in json.loads((out / "run.json").read_text())["protocol"]


@pytest.mark.slow
def test_read_later_then_read_reads_the_cells_and_refuses_shares(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "later"
    assert _run(out, "--read-later").exit_code == 0
    assert _seen() == []  # nothing read while generating
    shared = _refused(["read", str(out), "--shard", "0/2", "--no-progress"], capsys)
    assert "--shard does not go with it" in shared
    done = CliRunner().invoke(app, ["read", str(out), "--no-progress"])
    assert done.exit_code == 0, done.output
    assert len(_seen()) == 8 and {fmt for fmt, _, _ in _seen()} == {"JPEG"}
    rows = pd.read_parquet(out / "results.parquet")
    assert rows["ocr_text"].eq("image 64").all()
    assert sorted(p for _, p, _ in _seen()) == sorted(c[0] for c in _stored_cells(out).values())


# --------------------------------------------------------------------------- refusals


def test_a_grid_needs_four_images_per_prompt_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "two"
    two = _refused(_args(out, "--images-per-prompt", "2"), capsys)
    assert "image_path=oneig reads a prompt's images as one 2x2 grid of 4" in two
    workers = _refused(_args(out, "--read-workers", "1"), capsys)
    assert "--read-workers does not go with it" in workers
    assert not out.exists()


def _folder(tmp_path: Path, images: list[Image.Image]) -> tuple[RunFolder, pd.DataFrame]:
    paths = []
    for k, image in enumerate(images):
        path = f"images/m/p_s0_i{k}.png"
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        image.save(tmp_path / path)
        paths.append(path)
    rows = pd.DataFrame(
        {"model": "m", "prompt_id": "p", "seed": 0, "sample_index": range(len(images)),
         "image_path": paths, "error": ""}
    )  # fmt: skip
    return RunFolder(tmp_path), rows


def test_images_of_different_sizes_or_not_square_are_refused_in_one_line(tmp_path: Path) -> None:
    folder, rows = _folder(tmp_path / "sizes", [_noise(0), _noise(1), _noise(2, 32), _noise(3)])
    with pytest.raises(InputError) as sizes:
        check_groups(folder, rows, (2, 2))
    assert "32x32 where" in sizes.value.problem and "one size per prompt" in sizes.value.problem
    assert "\n" not in str(sizes.value)
    wide = [Image.new("RGB", (48, 32), "white")] * 4
    folder, rows = _folder(tmp_path / "wide", wide)
    with pytest.raises(InputError, match="not square"):
        check_groups(folder, rows, (2, 2))
    folder, rows = _folder(tmp_path / "five", [_noise(k) for k in range(5)])
    with pytest.raises(InputError, match="holds 4 images per prompt"):
        check_groups(folder, rows, (2, 2))
    folder, rows = _folder(tmp_path / "ok", [_noise(k) for k in range(4)])
    check_groups(folder, rows, (2, 2))  # four square images of one size: a grid


def test_a_stored_image_changed_since_it_was_made_is_refused_before_reading(
    tmp_path: Path,
) -> None:
    folder, rows = _folder(tmp_path, [_noise(k) for k in range(4)])
    rows["image_sha256"] = [
        hashlib.sha256((tmp_path / p).read_bytes()).hexdigest() for p in rows["image_path"]
    ]
    check_groups(folder, rows, (2, 2))
    _noise(9).save(tmp_path / rows.at[2, "image_path"])
    with pytest.raises(InputError, match="changed since it was generated") as changed:
        check_groups(folder, rows, (2, 2))
    assert changed.value.source == str(tmp_path / rows.at[2, "image_path"])
