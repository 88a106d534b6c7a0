"""Separate reading survives damage and races (issue 25): `glyphbench read RUN`.

One truncated PNG among many is one failed row naming the file; a damaged readings
file is set aside and its images read again; `read --follow` started with
`run --read-later` reads every image; worker processes die with `read`; readings
reach disk in small batches (docs/reliability.md).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from bench.config import RunConfig
from bench.engine.reading_store import READINGS_DIR, readings_table
from bench.reads import read_run
from bench.runs import run_benchmark
from tests.runner_helper import prompt_set, register

register()


def generate(out: Path, *, n: int = 6, read_later: bool = True, ocr: str = "pixelocr") -> None:
    config = RunConfig.from_mapping(
        {
            "models": ["control:render?size=64", "control:blank?size=64"],
            "batch_size": 4,
            "seeds": [0],
            "ocr": ocr,
            "out": str(out),
        }
    )
    run_benchmark(config, prompt_set=prompt_set(n), progress=False, read_later=read_later)


def test_one_truncated_png_is_one_failed_row_naming_the_file(tmp_path: Path) -> None:
    generate(tmp_path / "run")
    rows = pd.read_parquet(tmp_path / "run" / "results.parquet")
    damaged = str(rows["image_path"].iloc[3])
    path = tmp_path / "run" / damaged
    path.write_bytes(path.read_bytes()[:60])  # a truncated PNG
    done = read_run(tmp_path / "run", workers=0, progress=False)
    assert done["read"] == len(rows) and done["errors"] == 1
    rows = pd.read_parquet(tmp_path / "run" / "results.parquet").set_index("image_path")
    assert damaged in rows.at[damaged, "error"] and rows.at[damaged, "error"].startswith("OCR:")
    others = rows.drop(index=damaged)
    assert (others["error"] == "").all() and others["ocr_text"].notna().all()


def test_a_damaged_readings_file_is_set_aside_and_read_again(tmp_path: Path) -> None:
    generate(tmp_path / "run")
    read_run(tmp_path / "run", workers=0, progress=False)
    [stored] = sorted((tmp_path / "run" / READINGS_DIR).glob("*.parquet"))
    stored.write_bytes(b"PAR1 not a parquet file")
    assert readings_table(tmp_path / "run").empty  # no exception: set aside
    assert stored.with_name(stored.name + ".unreadable").is_file()
    done = read_run(tmp_path / "run", workers=0, progress=False, again=True)
    assert done["read"] == 12
    assert set(readings_table(tmp_path / "run")["image_sha256"]) == set(
        pd.read_parquet(tmp_path / "run" / "results.parquet")["image_sha256"]
    )
