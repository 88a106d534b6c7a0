"""One reader process per GPU, and one generator process per GPU.

No GPU here: the GPUs are named through ``GLYPHBENCH_READ_DEVICES`` (or
``CUDA_VISIBLE_DEVICES``), and each reader process reports the
``CUDA_VISIBLE_DEVICES`` it was started with. The multi-GPU recipe of
docs/running.md (one `run --read-later --shard I/N` per GPU, one `read --follow`
whose processes spread over the GPUs) runs here as CPU processes and must give the
rows of one process reading inline.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from glyphbench.engine.read_pool import READ_DEVICES_ENV, ReadPool, reader_devices
from glyphbench.run.results import TIMING_COLUMNS
from tests.helpers.paths import HELPERS
from tests.helpers.runner_helper import child_environment, write_prompts_csv

HELPER = HELPERS / "runner_helper.py"


def started(tmp_path: Path, workers: int) -> list[tuple[int, str | None]]:
    with ReadPool("tesseract", tmp_path, workers) as pool:
        return pool.check()


@pytest.mark.slow
def test_each_reader_process_is_pinned_to_its_own_gpu(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(READ_DEVICES_ENV, "0,1,2")
    answers = started(tmp_path, 3)
    assert len({pid for pid, _ in answers}) == 3  # every process answered once
    assert os.getpid() not in {pid for pid, _ in answers}
    assert sorted(device for _, device in answers) == ["0", "1", "2"]


@pytest.mark.slow
def test_more_reader_processes_than_gpus_go_round_robin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(READ_DEVICES_ENV, raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "4,6")  # the GPUs this process sees
    answers = started(tmp_path, 4)
    assert len({pid for pid, _ in answers}) == 4
    assert sorted(device for _, device in answers) == ["4", "4", "6", "6"]


@pytest.mark.slow
def test_one_gpu_or_an_empty_list_pins_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "5")
    monkeypatch.delenv(READ_DEVICES_ENV, raising=False)
    assert [device for _, device in started(tmp_path, 2)] == ["5", "5"]  # inherited
    monkeypatch.setenv(READ_DEVICES_ENV, "")
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "1,2")
    assert reader_devices() == []
    assert [device for _, device in started(tmp_path, 2)] == ["1,2", "1,2"]


def cli(*args: str) -> list[str]:
    return [sys.executable, str(HELPER), *args, "--no-progress"]


def comparable(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows without timings, in key order, string columns as one string type."""
    key = ["model", "prompt_id", "seed", "sample_index"]
    rows = rows.drop(columns=list(TIMING_COLUMNS)).sort_values(key).reset_index(drop=True)
    strings = [c for c in rows.columns if isinstance(rows[c].dtype, pd.StringDtype)]
    return rows.astype(dict.fromkeys(strings, "string"))


@pytest.mark.slow
def test_one_generator_per_gpu_with_readers_spread_gives_one_processs_rows(
    tmp_path: Path,
) -> None:
    """docs/running.md's recipe, two "GPUs": the rows equal one process reading inline."""
    csv = write_prompts_csv(tmp_path / "prompts.csv", 8)  # 4 a shard: batches of 2
    models = "slow:render?delay=0.3&size=64,control:blank?size=64"
    run = ["run", "--models", models, "--prompts", f"csv:{csv}", "--seeds", "0"]
    run += ["--batch-size", "2", "--ocr", "pixelocr"]
    env = child_environment()
    single = tmp_path / "single"
    subprocess.run(cli(*run, "--out", str(single)), env=env, check=True, capture_output=True)

    out = tmp_path / "spread"
    generators = [
        subprocess.Popen(
            cli(*run, "--out", str(out), "--read-later", "--shard", f"{gpu}/2"),
            env={**env, "CUDA_VISIBLE_DEVICES": str(gpu)},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for gpu in range(2)
    ]
    follow = cli("read", str(out), "--follow", "--read-workers", "2")
    reader = subprocess.Popen(
        follow,
        env={**env, READ_DEVICES_ENV: "0,1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    for process in [*generators, reader]:
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err[-2000:]
    # The recipe's last step: read what a follower started between two shards missed.
    subprocess.run(cli("read", str(out), "--read-workers", "0"), env=env, check=True)
    rows = pd.read_parquet(out / "results.parquet")
    assert rows["ocr_text"].notna().all()
    shards = {p.parent.parent.name for p in out.glob("parts/*/*/batch-*.parquet")}
    assert {"shard-0-of-2", "shard-1-of-2", "read-0-of-1"} <= shards
    pd.testing.assert_frame_equal(
        comparable(rows), comparable(pd.read_parquet(single / "results.parquet"))
    )
