"""No command replaces a good row with a failed one (case 1).

A reader is tried on one real image before anything is written: one that fails at
start or on that image is refused in one line (exit 2) and the folder is left as it
was; a `read` or `rescore` in which every image failed exits non-zero; a rescore
whose new reader fails on images the old one read keeps their old reading and says
how many (docs/reliability.md).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from glyphbench.core.registry import PLUGINS
from glyphbench.run.config import RunConfig
from glyphbench.run.operations import run_benchmark
from tests.helpers.cli_runs import run_cli
from tests.helpers.runner_helper import PixelOCR, prompt_set, register

register()


class BlankBlindOCR(PixelOCR):
    """Reads every image but the blank (one colour) ones, on which it raises."""

    name = "blankblind"

    @property
    def version(self) -> str:
        return "blankblind 1"

    def read(self, images: Sequence[Any]) -> list[Any]:
        if any(len(image.convert("L").getcolors(2) or []) == 1 for image in images):
            raise RuntimeError("cannot read a blank page")
        return super().read(images)


class OnceOCR(PixelOCR):
    """Reads once (in this process), then fails on every call."""

    name = "onceocr"
    calls = 0

    def read(self, images: Sequence[Any]) -> list[Any]:
        OnceOCR.calls += 1
        if OnceOCR.calls > 1:
            raise RuntimeError("lost its language data")
        return super().read(images)


if "onceocr" not in PLUGINS.names("readers"):
    PLUGINS.register("readers", "onceocr", summary="test double")(lambda spec, _: OnceOCR())
if "blankblind" not in PLUGINS.names("readers"):
    PLUGINS.register("readers", "blankblind", summary="test double")(
        lambda spec, _: BlankBlindOCR()
    )


def generate(out: Path, *, read_later: bool = False) -> None:
    config = RunConfig.from_mapping(
        {
            "models": ["control:render?size=64", "control:blank?size=64"],
            "batch_size": 2,
            "seeds": [0],
            "ocr": "pixelocr",
            "out": str(out),
        }
    )
    run_benchmark(config, prompt_set=prompt_set(3), progress=False, read_later=read_later)


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def snapshot(run: Path) -> dict[str, str]:
    """Every file of the run folder (locks aside) and its SHA-256."""
    return {
        str(path.relative_to(run)): sha256(path)
        for path in sorted(run.rglob("*"))
        if path.is_file() and ".locks" not in path.parts
    }


def test_a_rescore_with_a_reader_that_cannot_read_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    generate(run)
    before = snapshot(run)
    code, err = run_cli(["rescore", str(run), "--ocr", "ocr_blind", "--no-progress"], capsys)
    assert code == 2 and err.startswith("error: --ocr: ") and err.count("\n") == 1, err
    assert "ocr_blind" in err and "Could not initialize" in err
    assert snapshot(run) == before  # the table, run.json (its reader) and the parts


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="needs the tesseract binary")
def test_a_rescore_with_tesseract_of_a_missing_language_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    generate(run)
    table, meta = sha256(run / "results.parquet"), json.loads((run / "run.json").read_text())
    args = ["rescore", str(run), "--ocr", "tesseract?lang=zzz", "--no-progress"]
    code, err = run_cli(args, capsys)
    assert code == 2 and err.count("\n") == 1 and "zzz" in err, err
    assert sha256(run / "results.parquet") == table
    assert json.loads((run / "run.json").read_text()).get("reader") == meta.get("reader")


def test_a_read_with_a_reader_that_cannot_read_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    generate(run, read_later=True)
    before = snapshot(run)
    args = ["read", str(run), "--ocr", "ocr_blind", "--read-workers", "0", "--no-progress"]
    code, err = run_cli(args, capsys)
    assert code == 2 and err.startswith("error: --ocr: ") and err.count("\n") == 1, err
    assert snapshot(run) == before
    assert "reader" not in json.loads((run / "run.json").read_text())


def test_a_run_with_a_reader_that_cannot_read_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    args = ["run", "-m", "control:render?size=32", "--limit", "2", "--out", str(out)]
    code, err = run_cli([*args, "--ocr", "ocr_blind", "--no-progress"], capsys)
    assert code == 2 and err.startswith("error: --ocr: ") and err.count("\n") == 1, err
    assert not out.exists()


def test_a_read_where_every_image_failed_exits_non_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    generate(run, read_later=True)
    OnceOCR.calls = 0  # reads its probe, then fails on every image
    args = ["read", str(run), "--ocr", "onceocr", "--read-workers", "0", "--no-progress"]
    code, err = run_cli(args, capsys)
    assert OnceOCR.calls > 1
    assert code == 1 and "every image read failed (6 of 6)" in err, err


def test_a_rescore_keeps_the_old_reading_where_the_new_reader_fails(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    generate(run)
    old = pd.read_parquet(run / "results.parquet")
    assert (old["error"] == "").all() and len(old) == 6
    code, err = run_cli(["rescore", str(run), "--ocr", "blankblind", "--no-progress"], capsys)
    assert code == 0, err
    assert "3 rows" in err and "kept their previous reading" in err
    new = pd.read_parquet(run / "results.parquet")
    assert (new["error"] == "").all()  # no good row became a failed one
    blank = new["model"] == "control:blank?size=64"
    assert set(new.loc[blank, "ocr_engine"]) == {"pixelocr"}
    assert set(new.loc[~blank, "ocr_engine"]) == {"blankblind"}
    assert new.loc[blank, "ocr_text"].tolist() == old.loc[blank.values, "ocr_text"].tolist()


def test_a_rescore_where_the_new_reader_fails_on_every_image_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    config = RunConfig.from_mapping(
        {"models": ["control:blank?size=64"], "seeds": [0], "ocr": "pixelocr", "out": str(run)}
    )
    run_benchmark(config, prompt_set=prompt_set(3), progress=False)
    before = snapshot(run)
    # blankblind fails on its probe here (every image is blank): refused, nothing written
    code, err = run_cli(["rescore", str(run), "--ocr", "blankblind", "--no-progress"], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert snapshot(run) == before
