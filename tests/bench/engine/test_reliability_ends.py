"""How `read` ends (case 8): an unfinished run is said, SIGTERM leaves no warning.

`read --follow` whose run died part-way says so and exits 1 instead of reporting a
plain merge; a `read` ended by SIGTERM shuts its worker pool down like Ctrl-C (exit
143), so the multiprocessing resource tracker prints no "leaked semaphore" warning
(docs/reliability.md); a `run` ended by SIGTERM while its worker thread reads with the
default (ONNX) reader exits 143 too, not aborted in native code, and resumes whole.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli_runs import run_cli
from tests.helpers.polling import wait_until
from tests.helpers.read_later_runs import environment, generate
from tests.helpers.runner_helper import doubles_script, register

register()


@pytest.mark.slow
def test_read_follow_says_when_its_run_died_part_way(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import glyphbench.run.read_later as read_later

    monkeypatch.setattr(read_later, "FOLLOW_WAIT_S", 0.2)
    run = tmp_path / "run"
    generate(run)
    shard = run / "parts" / "shard-0-of-1" / "shard.json"
    info = json.loads(shard.read_text())
    shard.write_text(json.dumps({**info, "finished": False}))  # killed before its end
    args = ["read", str(run), "--follow", "--read-workers", "0", "--no-progress"]
    code, err = run_cli(args, capsys)
    assert code == 1 and "stopped before it finished" in err, err
    assert "glyphbench run" in err
    shard.write_text(json.dumps(info))  # a finished run: a plain success
    code, err = run_cli(args, capsys)
    assert code == 0, err


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals")
def test_sigterm_of_read_leaves_no_leaked_semaphore_warning(tmp_path: Path) -> None:
    generate(tmp_path / "run")
    script = doubles_script(tmp_path)
    started = tmp_path / "started"
    command = [sys.executable, str(script), "read", str(tmp_path / "run"), "--no-progress"]
    command += ["--read-workers", "2", "--batch-size", "1"]
    command += ["--ocr", f"slowocr?delay=2&started={started}"]
    reader = subprocess.Popen(command, env=environment(), stderr=subprocess.PIPE)
    reading = lambda: len(list(started.glob("*"))) >= 2  # noqa: E731
    wait_until(reading, "two workers reading", interval=0.1, process=reader)
    reader.send_signal(signal.SIGTERM)
    _, err = reader.communicate(timeout=60)  # to EOF: the resource tracker's output too
    text = err.decode(errors="replace")
    assert "leaked semaphore" not in text and "resource_tracker" not in text, text
    assert reader.returncode == 143 and "terminated" in text, text


def terminated_after_two_batches(command: list[str], out: Path) -> tuple[int | None, str]:
    """Start ``command``, send SIGTERM once two part files of ``out`` are written (its
    worker mid-batch), and wait for it: its exit code and stderr."""
    process = subprocess.Popen(command, env=environment(), stderr=subprocess.PIPE)
    parts = lambda: len(list(out.glob("parts/*/*/*.parquet"))) >= 2  # noqa: E731
    wait_until(parts, "two batches written", interval=0.05, process=process)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=120)
    return process.returncode, err.decode(errors="replace")


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals")
def test_sigterm_of_a_run_reading_with_the_default_reader_exits_143_and_resumes(
    tmp_path: Path,
) -> None:
    """SIGTERM passed by the engine's Ctrl-C handling, so the worker thread was still in
    onnxruntime when the interpreter went down: "terminate called without an active
    exception", exit 134, which a scheduler reads as a crash."""
    import pandas as pd

    out = tmp_path / "run"
    command = [sys.executable, "-m", "glyphbench", "run", "--models",
               "control:render,control:blank", "--sample", "60", "--batch-size", "4",
               "--out", str(out), "--no-progress"]  # fmt: skip
    code, text = terminated_after_two_batches(command, out)
    assert code == 143, text
    assert "terminate called" not in text and "terminated: finishing the batch" in text, text
    resumed = subprocess.run(command, env=environment(), capture_output=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr.decode(errors="replace")[-2000:]
    rows = pd.read_parquet(out / "results.parquet")
    assert len(rows) == 120 and not rows.duplicated(["model", "prompt_id", "seed"]).any()
    assert (rows["error"] == "").all()


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="POSIX signals")
def test_sigterm_of_vae_eval_says_how_to_resume(tmp_path: Path) -> None:
    """vae-eval ended on SIGTERM with exit 143 and not a word; it says what run does."""
    out = tmp_path / "vae"
    command = [sys.executable, "-m", "glyphbench", "vae-eval", "--vae", "identity",
               "--vae", "resize?factor=8", "--limit", "25", "--batch-size", "2",
               "--out", str(out)]  # fmt: skip
    code, text = terminated_after_two_batches(command, out)
    assert code == 143, text
    assert "terminated: run the same command again to resume" in text, text
