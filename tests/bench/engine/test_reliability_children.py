"""Processes glyphbench starts that end under it are one line, not a traceback
(docs/reliability.md): the image writer or a reader process killed mid-run, and
`read` given a reader that cannot start in its reader processes.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import HELPERS
from tests.helpers.polling import wait_until
from tests.helpers.runner_helper import (
    GATE_VARIABLE,
    child_environment,
    descendants,
    write_prompts_csv,
)

HELPER = str(HELPERS / "runner_helper.py")


def glyphbench(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, HELPER, *args, "--no-progress"],
        env=env or child_environment(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip


def one_line(process: subprocess.Popen[str], *words: str) -> None:
    _, err = process.communicate(timeout=300)
    lines = [line for line in err.splitlines() if line.strip()]
    assert process.returncode == 2, err
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
    for word in words:
        assert word in lines[0], err


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")
    except OSError:
        return ""


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_a_killed_image_writer_is_one_line(tmp_path: Path) -> None:
    csv = write_prompts_csv(tmp_path / "prompts.csv", 6)
    gate = tmp_path / "gate"  # the run waits after its first batch: the writer is started
    env = {**child_environment(), "GLYPHBENCH_IMAGE_WRITER": "process", GATE_VARIABLE: str(gate)}
    run = glyphbench(
        "run", "--models", "slow:render?size=256&delay=0.05", "--prompts", f"csv:{csv}",
        "--seeds", "0", "--batch-size", "2", "--ocr", "pixelocr", "--out", str(tmp_path / "run"),
        env=env,
    )  # fmt: skip

    def writers() -> list[int]:  # not the multiprocessing resource tracker
        return [p for p in descendants(run.pid) if "resource_tracker" not in command_line(p)]

    wait_until(lambda: bool(writers()) and (tmp_path / "run" / "parts").is_dir(), "a batch")
    for pid in writers():
        os.kill(pid, signal.SIGKILL)
    gate.touch()
    one_line(run, "image writer process ended unexpectedly", "SIGKILL", "run the same command")


@pytest.mark.slow
def test_a_killed_reader_process_is_one_line(tmp_path: Path) -> None:
    csv = write_prompts_csv(tmp_path / "prompts.csv", 6)
    made = subprocess.run(
        [sys.executable, HELPER, "run", "--models", "control:render?size=32", "--prompts",
         f"csv:{csv}", "--seeds", "0", "--ocr", "pixelocr", "--out", str(tmp_path / "run"),
         "--read-later", "--no-progress"],
        env=child_environment(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    started = tmp_path / "started"  # each reader call first leaves its pid here
    read = glyphbench(
        "read", str(tmp_path / "run"), "--ocr", f"slowocr?delay=2&started={started}",
        "--read-workers", "1", "--batch-size", "1",
    )  # fmt: skip
    wait_until(lambda: started.is_dir() and any(started.iterdir()), "a reader call")
    os.kill(int(next(started.iterdir()).name), signal.SIGKILL)
    one_line(read, "a reader process of", "ended unexpectedly", "readings made so far are kept")


@pytest.mark.parametrize(
    "workers",
    ["0", pytest.param("2", marks=pytest.mark.slow)],  # 6 s: make test runs it
)
def test_read_with_a_reader_that_cannot_start_is_one_line(tmp_path: Path, workers: str) -> None:
    csv = write_prompts_csv(tmp_path / "prompts.csv", 3)
    subprocess.run(
        [sys.executable, HELPER, "run", "--models", "control:render?size=32", "--prompts",
         f"csv:{csv}", "--seeds", "0", "--ocr", "pixelocr", "--out", str(tmp_path / "run"),
         "--read-later", "--no-progress"],
        env=child_environment(), capture_output=True, timeout=300, check=True,
    )  # fmt: skip
    read = glyphbench("read", str(tmp_path / "run"), "--ocr", "ocr_dead", "--read-workers", workers)
    one_line(read, "--ocr: cannot start the OCR engine 'ocr_dead'", "engine binary missing")
