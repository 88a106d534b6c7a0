"""One reader per results table: `read`, `rescore` and `run` never mix readers.

The reader is part of a results table's identity (run.json's ``reader``): `read`
refuses while a rescore holds the folder, a `read --shard` with another reader than
the table's is refused, and a `run` that resumes a rescored folder reads its new
rows with the rescore's reader (docs/reliability.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from glyphbench.core.errors import InputError
from glyphbench.core.registry import PLUGINS
from glyphbench.engine.lock import FolderBusy, FolderLock
from glyphbench.run.config import RunConfig
from glyphbench.run.operations import rescore_run, run_benchmark
from glyphbench.run.read_later import read_run
from glyphbench.run.reader_claim import RESCORE_LOCK
from tests.helpers.runner_helper import PixelOCR, prompt_set, register

register()


class OtherOCR(PixelOCR):
    """A second reader, told apart from pixelocr by its name."""

    name = "otherocr"

    @property
    def version(self) -> str:
        return "otherocr 1"


if "otherocr" not in PLUGINS.names("readers"):
    PLUGINS.register("readers", "otherocr", summary="test double")(lambda spec, _: OtherOCR())


def generate(out: Path, models: list[str], *, read_later: bool) -> RunConfig:
    config = RunConfig.from_mapping(
        {"models": models, "batch_size": 2, "seeds": [0], "ocr": "pixelocr", "out": str(out)}
    )
    run_benchmark(config, prompt_set=prompt_set(4), progress=False, read_later=read_later)
    return config


def test_read_is_refused_while_a_rescore_holds_the_folder(tmp_path: Path) -> None:
    generate(tmp_path / "run", ["control:render?size=64"], read_later=True)
    rescoring = FolderLock(tmp_path / "run", RESCORE_LOCK).try_hold()  # a rescore at work
    with rescoring, pytest.raises(FolderBusy, match=r"is rescoring .*\(rescore\)"):
        read_run(tmp_path / "run", workers=0, progress=False)
    assert not list((tmp_path / "run" / "parts").glob("read-*"))


def test_read_shards_with_two_readers_are_refused(tmp_path: Path) -> None:
    generate(tmp_path / "run", ["control:render?size=64"], read_later=True)
    first = read_run(
        tmp_path / "run", reader_spec="otherocr", workers=0, shard="0/2", progress=False
    )
    assert first["read"] > 0
    with pytest.raises(InputError, match="would mix two readers in one table") as refused:
        read_run(tmp_path / "run", reader_spec="pixelocr", workers=0, shard="1/2", progress=False)
    assert "glyphbench rescore" in str(refused.value)
    # The table's reader (not the config's) is the default of a later `read`.
    second = read_run(tmp_path / "run", workers=0, shard="1/2", progress=False)
    rows = pd.read_parquet(tmp_path / "run" / "results.parquet")
    assert second["read"] > 0 and set(rows["ocr_engine"]) == {"otherocr"}


def test_a_run_resumed_after_a_rescore_reads_with_the_rescore_reader(tmp_path: Path) -> None:
    marker = tmp_path / "failed-once"
    flaky = f"flaky:render?fail=(#1)&marker={marker}"
    config = generate(tmp_path / "run", [flaky], read_later=False)
    rows = pd.read_parquet(tmp_path / "run" / "results.parquet")
    assert (rows["error"] != "").any()  # a batch failed: the next run retries it
    rescore_run(tmp_path / "run", reader_spec="otherocr", progress=False)
    run_benchmark(config, prompt_set=prompt_set(4), progress=False)
    rows = pd.read_parquet(tmp_path / "run" / "results.parquet")
    assert (rows["error"] == "").all()
    assert set(rows["ocr_engine"]) == {"otherocr"}  # one reader in the table
    meta = json.loads((tmp_path / "run" / "run.json").read_text())
    assert meta["reader"] == "otherocr"


def test_a_rescore_that_finds_none_of_the_images_changes_nothing(tmp_path: Path) -> None:
    generate(tmp_path / "run", ["control:render?size=64"], read_later=False)
    table = (tmp_path / "run" / "results.parquet").read_bytes()
    meta = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    for image in (tmp_path / "run" / "images").rglob("*.png"):
        image.unlink()  # the folder copied without its images
    with pytest.raises(InputError, match=r"none of the 4 images listed in results\.parquet"):
        rescore_run(tmp_path / "run", reader_spec="otherocr", progress=False)
    assert (tmp_path / "run" / "results.parquet").read_bytes() == table
    after = json.loads((tmp_path / "run" / "run.json").read_text(encoding="utf-8"))
    assert {**after, "merged_at": None} == {**meta, "merged_at": None}  # re-merged, as ever
    # Scores alone need no image: still allowed.
    rows = rescore_run(tmp_path / "run", scores_only=True, progress=False)
    assert not rows["error"].astype(bool).any()


def _damage(images: list[Path]) -> None:
    for image in images:
        image.write_bytes(image.read_bytes()[:200])  # truncated: no longer the image made


def test_a_rescore_over_damaged_images_keeps_their_rows_readings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Truncated images turned good rows into "image changed since it was generated" failed
    rows (every row: exit 1 with the table replaced; some: exit 0 without a word)."""
    generate(tmp_path / "run", ["control:render?size=64"], read_later=False)
    run = tmp_path / "run"
    before = pd.read_parquet(run / "results.parquet").sort_values("prompt_id")
    images = sorted((run / "images").rglob("*.png"))
    _damage(images)
    table = (run / "results.parquet").read_bytes()
    with pytest.raises(InputError, match=r"none of the 4 images is as it was generated"):
        rescore_run(run, reader_spec="otherocr", progress=False)
    assert (run / "results.parquet").read_bytes() == table
    for image in images[:1]:  # the others made whole again: one damaged image
        image.unlink()
    generate(tmp_path / "fresh", ["control:render?size=64"], read_later=False)
    for image in images[1:]:
        image.write_bytes((tmp_path / "fresh" / image.relative_to(run)).read_bytes())
    capsys.readouterr()
    rows = rescore_run(run, reader_spec="otherocr", progress=False).sort_values("prompt_id")
    assert not rows["error"].astype(bool).any()
    assert list(rows["ocr_text"]) == list(before["ocr_text"])
    assert (rows["ocr_engine"] == "otherocr").sum() == 3  # the one gone kept pixelocr's
    assert "1 images of rows read before are missing or changed" in capsys.readouterr().err
