"""How `read` ends (case 8): an unfinished run is said, SIGTERM leaves no warning.

`read --follow` whose run died part-way says so and exits 1 instead of reporting a
plain merge; a `read` ended by SIGTERM shuts its worker pool down like Ctrl-C (exit
143), so the multiprocessing resource tracker prints no "leaked semaphore" warning
(docs/reliability.md).
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
