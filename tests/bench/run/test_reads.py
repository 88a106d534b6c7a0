"""`run --read-later` then `glyphbench read RUN` (in-process, sharded, worker process)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from glyphbench.run.config import RunConfig
from glyphbench.run.operations import run_benchmark
from glyphbench.run.read_later import read_run
from tests.helpers.runner_helper import PixelOCR, prompt_set, register

register()


def generate(out: Path, ocr: str = "pixelocr", *, read_later: bool) -> pd.DataFrame:
    config = RunConfig.from_mapping(
        {
            "models": ["control:render?size=64", "control:blank?size=64"],
            "batch_size": 4,
            "seeds": [0, 1],
            "ocr": ocr,
            "out": str(out),
        }
    )
    ocr_engine = None if read_later else PixelOCR()
    result = run_benchmark(
        config, prompt_set=prompt_set(5), reader=ocr_engine, progress=False, read_later=read_later
    )
    assert result.results is not None
    return result.results


@pytest.mark.slow
def test_read_later_then_read_in_shards_matches_reading_during_the_run(tmp_path: Path) -> None:
    unread = generate(tmp_path / "later", read_later=True)
    assert len(unread) == 20 and unread["ocr_text"].isna().all()
    assert unread["ned"].isna().all() and (unread["error"] == "").all()
    first = read_run(tmp_path / "later", workers=0, shard="0/2", progress=False)
    second = read_run(tmp_path / "later", workers=0, shard="1/2", progress=False)
    assert first["read"] > 0 and second["read"] > 0
    assert first["read"] + second["read"] == 20
    assert read_run(tmp_path / "later", workers=0, progress=False)["read"] == 0  # nothing left
    merged = pd.read_parquet(tmp_path / "later" / "results.parquet")
    direct = generate(tmp_path / "direct", read_later=False)
    key = ["model", "prompt_id", "seed", "sample_index"]
    merged, direct = (t.sort_values(key).reset_index(drop=True) for t in (merged, direct))
    assert merged["ocr_text"].tolist() == direct["ocr_text"].tolist()
    assert merged["ned"].tolist() == pytest.approx(direct["ned"].tolist(), nan_ok=True)
    assert set(merged["ocr_engine"]) == {"pixelocr"}


@pytest.mark.slow
def test_read_in_a_worker_process_with_a_real_reader(tmp_path: Path) -> None:
    generate(tmp_path / "run", ocr="tesseract", read_later=True)
    done = read_run(tmp_path / "run", workers=1, progress=False)
    assert done["read"] == 20 and done["merged"] == 20
    rows = pd.read_parquet(tmp_path / "run" / "results.parquet")
    assert rows["ocr_text"].notna().all() and set(rows["ocr_engine"]) == {"tesseract"}
    render = rows[rows["model"] == "control:render?size=64"]
    assert render["ned"].mean() > 0.3  # the render control's text is readable


def test_read_keeps_its_readings_in_the_run_store(tmp_path: Path) -> None:
    """Readings made by `read` sit in RUN/readings/ like those made during a run."""
    from glyphbench.run.reading_store import readings_table

    generate(tmp_path / "later", read_later=True)
    read_run(tmp_path / "later", workers=0, progress=False)
    stored = readings_table(tmp_path / "later")
    rows = pd.read_parquet(tmp_path / "later" / "results.parquet")
    assert set(stored["reader_name"]) == {"pixelocr"}
    assert set(stored["image_sha256"]) == set(rows["image_sha256"])
    direct = generate(tmp_path / "direct", read_later=False)
    during = readings_table(tmp_path / "direct")
    assert set(during["reader"]) == set(stored["reader"])  # the same identity either way
    assert len(direct) == len(rows)


@pytest.mark.slow
def test_a_first_look_reads_whole_only_the_part_files_with_unread_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A resumed reader does not hold the table of a mostly read run."""
    from glyphbench.engine import RunFolder
    from glyphbench.run.read_later import _rows

    generate(tmp_path / "run", read_later=True)  # 20 unread rows, one part file per batch
    folder = RunFolder(tmp_path / "run")
    generated = folder.part_files()
    whole: list[list[Path]] = []
    read_parts = RunFolder.read_parts

    def spy(self: RunFolder, *args: object, files: list[Path] | None = None, **kw: object):
        whole.append(list(files or []))
        return read_parts(self, *args, files=files, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(RunFolder, "read_parts", spy)
    assert len(_rows(folder, set())) == 20 and whole == [generated]
    read_run(tmp_path / "run", workers=0, shard="0/2", progress=False)  # about half read
    whole.clear()
    left = _rows(RunFolder(tmp_path / "run"), set())
    assert 0 < len(left) < 20 and left["ocr_text"].isna().all()
    assert len(whole) == 1 and set(whole[0]) < set(generated)  # not every file whole
    everything = _rows(RunFolder(tmp_path / "run"), set(), every=True)
    assert len(everything) == 20
    read_run(tmp_path / "run", workers=0, progress=False)
    whole.clear()
    assert _rows(RunFolder(tmp_path / "run"), set()).empty and whole == []
