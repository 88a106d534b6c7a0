"""Separate reading survives damage and races: `glyphbench read RUN`.

One truncated PNG among many is one failed row naming the file; a damaged readings
file is set aside and its images read again; `read --follow` started with
`run --read-later` reads every image; worker processes die with `read`; readings
reach disk in small batches (docs/reliability.md).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from glyphbench.run.read_later import read_run
from glyphbench.run.reading_store import READINGS_DIR, readings_table
from tests.helpers.polling import wait_until
from tests.helpers.read_later_runs import HELPER, environment, generate
from tests.helpers.runner_helper import (
    descendants,
    doubles_script,
    register,
    survivors,
    write_prompts_csv,
)

register()


@pytest.mark.slow
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


def cli(*args: str) -> list[str]:
    return [sys.executable, str(HELPER), *args, "--no-progress"]


@pytest.mark.slow
def test_read_follow_started_with_run_read_later_reads_every_image(tmp_path: Path) -> None:
    csv = write_prompts_csv(tmp_path / "prompts.csv", 6)
    for trial in range(3):
        out = tmp_path / f"run{trial}"
        run = cli(
            "run", "-m", "slow:render?delay=0.3", "--prompts", f"csv:{csv}", "--out", str(out),
            "--ocr", "pixelocr", "--batch-size", "2", "--read-later",
        )  # fmt: skip
        read = cli("read", str(out), "--follow", "--read-workers", "0")
        env = environment()
        reader = subprocess.Popen(read, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        writer = subprocess.Popen(run, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        _, run_err = writer.communicate(timeout=300)
        read_out, read_err = reader.communicate(timeout=300)
        assert writer.returncode == 0, run_err.decode()[-2000:]
        assert reader.returncode == 0, read_err.decode()[-2000:]
        rows = pd.read_parquet(out / "results.parquet")
        assert len(rows) == 6, trial
        assert rows["ocr_text"].notna().all(), (trial, read_out.decode(), read_err.decode())
        assert b"read 6 images" in read_out, read_out.decode()


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGKILL])
def test_read_workers_die_with_their_parent(tmp_path: Path, how: signal.Signals) -> None:
    generate(tmp_path / "run")
    script = doubles_script(tmp_path)  # workers (spawn) import it: doubles too
    command = [sys.executable, str(script), "read", str(tmp_path / "run"), "--no-progress"]
    started = tmp_path / "started"
    command += ["--read-workers", "2", "--batch-size", "1"]
    command += ["--ocr", f"slowocr?delay=2&started={started}"]
    reader = subprocess.Popen(command, env=environment(), stderr=subprocess.DEVNULL)
    reading = lambda: len(list(started.glob("*"))) >= 2  # noqa: E731
    wait_until(reading, "two workers reading", interval=0.1, process=reader)
    left = descendants(reader.pid)
    assert len(left) >= 2, "the workers are not below the reader"
    reader.send_signal(how)
    reader.wait(timeout=60)
    assert survivors(left) == []


@pytest.mark.slow
def test_a_killed_reader_keeps_what_it_read_seconds_ago(tmp_path: Path) -> None:
    from glyphbench.run.stages import PART_SECONDS

    generate(tmp_path / "run")  # 12 images
    command = cli("read", str(tmp_path / "run"), "--read-workers", "0", "--batch-size", "1")
    command += ["--ocr", "slowocr?delay=0.5"]  # pixelocr's readings, 0.5 s an image
    reader = subprocess.Popen(command, env=environment(), stderr=subprocess.DEVNULL)
    parts = tmp_path / "run" / "parts"
    wait_until(lambda: list(parts.glob("read-*/*/*.parquet")), "a readings part file", interval=0.1)
    reader.kill()
    reader.wait(timeout=60)
    rows = pd.concat(pd.read_parquet(p) for p in parts.glob("read-*/*/*.parquet"))
    assert 0 < len(rows) < 12  # written well before the 512-row part file
    assert len(rows) >= PART_SECONDS / 0.5 - 2
    stored = set(readings_table(tmp_path / "run")["image_sha256"])
    assert stored == set(rows["image_sha256"])  # the readings too


@pytest.mark.parametrize(
    "args, said",
    [
        # it said the results are read with 'pixelocr' and suggested the typo to rescore
        (["--ocr", "easyorc"], "--ocr: unknown"),
        (["--batch-size", "0"], "--batch-size"),  # accepted: read nothing, exit 0
    ],
)
def test_read_refuses_a_misspelt_reader_and_a_batch_of_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    from tests.helpers.cli_runs import run_cli

    run = tmp_path / "run"
    generate(run, n=2)
    code, err = run_cli(["read", run, *args, "--read-workers", "0", "--no-progress"], capsys)
    assert code == 2 and said in err and err.count("\n") == 1, err
    assert "rescore" not in err
    assert not list(run.glob("parts/read-*"))


def test_rescore_refuses_a_batch_of_none(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.helpers.cli_runs import run_cli

    run = tmp_path / "run"
    generate(run, n=2, read_later=False)
    before = (run / "results.parquet").read_bytes()
    code, err = run_cli(["rescore", run, "--batch-size", "0", "--no-progress"], capsys)
    assert code == 2 and "--batch-size" in err and err.count("\n") == 1, err
    assert (run / "results.parquet").read_bytes() == before
