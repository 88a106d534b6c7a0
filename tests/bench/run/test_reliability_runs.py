"""Races, torn files, poisoned folders, permissions, leftovers.

Each test pins one failure found by injecting faults (see docs/reliability.md): two
processes on one ``--out``, an unreadable part file, a failed first attempt, the file
mode of outputs, stale temporary files and a double Ctrl-C.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pandas as pd
import pytest

from glyphbench.core.durable import HOST_TAG
from glyphbench.core.errors import InputError
from glyphbench.core.io import atomic_path, stale_temp_files, write_json
from glyphbench.core.schema import ROW_KEY
from glyphbench.engine import FolderBusy, RunFolder
from glyphbench.run.config import RunConfig
from glyphbench.run.operations import merge_run, run_benchmark
from tests.helpers.cli_runs import run_cli
from tests.helpers.paths import HELPERS, TESTS
from tests.helpers.polling import wait_until
from tests.helpers.race_helper import race
from tests.helpers.runner_helper import register, write_prompts_csv

register()

BUSY = re.compile(r"another glyphbench process \(pid \d+, host [^)]+\) is writing ")
TINY = {"ocr": "pixelocr", "batch_size": 2, "seeds": [0]}


def config(out: Path, csv: Path, **changes: object) -> RunConfig:
    data = {
        "models": ["control:render?size=32", "control:blank?size=32"],
        "prompts": f"csv:{csv}",
        "out": str(out),
        **TINY,
        **changes,
    }
    return RunConfig.from_mapping(data, "test")


def quiet_console():
    import io

    from rich.console import Console

    return Console(file=io.StringIO())


# ------------------------------------------------------------------ case 1: two writers
@pytest.mark.slow
def test_two_processes_on_one_folder_never_mix_rows(tmp_path: Path) -> None:
    """20 trials of two processes started together on one folder (every 4th: other seeds)."""
    csv = write_prompts_csv(tmp_path / "prompts.csv", 6)
    base = {
        "models": ["slow:render?delay=0.05&size=32", "control:blank?size=32"],
        "prompts": f"csv:{csv}",
        **TINY,
    }
    trials = []
    for number in range(20):
        first = {**base, "out": str(tmp_path / f"run{number}")}
        second = {**first, "seeds": [1]} if number % 4 == 3 else first
        trials.append((first, second))
    outcomes = race(trials, TESTS)

    busy_refusals = 0
    for (first, second), (a, b) in zip(trials, outcomes, strict=True):
        assert not [o for o in (a, b) if o.startswith("CRASH")], (a, b)
        for outcome in (a, b):
            assert outcome == "ok" or BUSY.search(outcome) or "different run" in outcome, outcome
        busy_refusals += sum(bool(BUSY.search(o)) for o in (a, b) if first == second)
        if first != second:
            assert sorted([a == "ok", b == "ok"]) == [False, True], (a, b)
        out = Path(first["out"])
        rows = pd.read_parquet(out / "results.parquet")
        manifest = json.loads((out / "run.json").read_text())
        assert len(rows) == 2 * 6 and not rows.duplicated(list(ROW_KEY)).any()
        assert (rows["error"] == "").all()
        # the rows are those of the run run.json describes, never a mix
        assert set(rows["seed"]) == set(manifest["config"]["seeds"])
        assert set(rows["run_id"]) == {manifest["run_id"]}
        assert len(list((out / "parts").glob("*/*/batch-*.parquet"))) == 3 + 3
    assert busy_refusals >= 1, "the same command twice was never refused: no race observed"


def test_a_second_writer_of_a_shard_is_refused_with_pid_and_host(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path / "run")
    with folder.hold_shard("shard-0-of-1"):
        second = RunFolder(tmp_path / "run")
        with pytest.raises(FolderBusy, match=BUSY) as refused, second.hold_shard("shard-0-of-1"):
            pass
        assert f"pid {os.getpid()}" in str(refused.value)
        with RunFolder(tmp_path / "run").hold_shard("shard-1-of-2"):  # other shards may run
            pass
    with RunFolder(tmp_path / "run").hold_shard("shard-0-of-1"):  # released at the end
        pass


# --------------------------------------------------------- case 3: torn and unflushed files
def test_an_unreadable_part_file_is_set_aside_and_its_rows_redone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = write_prompts_csv(tmp_path / "prompts.csv", 4)
    run = config(tmp_path / "run", csv)
    first = run_benchmark(run, progress=False, console=quiet_console())
    parts = sorted((tmp_path / "run" / "parts").glob("*/*/batch-*.parquet"))
    victim = parts[0]
    victim.write_bytes(victim.read_bytes()[:100])  # truncated, as by a full disk

    capsys.readouterr()
    table = (tmp_path / "run" / "results.parquet").read_bytes()
    with pytest.raises(InputError, match="kept as it is"):  # 8 rows never replaced by 6
        merge_run(tmp_path / "run")
    assert (tmp_path / "run" / "results.parquet").read_bytes() == table
    notice = capsys.readouterr().err
    assert "unreadable part file" in notice and victim.name in notice
    assert len(notice.strip().splitlines()) == 1
    assert victim.with_name(victim.name + ".unreadable").is_file()
    again = run_benchmark(run, progress=False, console=quiet_console())
    assert again.outcome.rows_written == 2  # the set-aside batch, made again
    rows = pd.read_parquet(tmp_path / "run" / "results.parquet")
    pd.testing.assert_frame_equal(
        rows.drop(columns=["gen_seconds", "ocr_seconds"]),
        first.results.drop(columns=["gen_seconds", "ocr_seconds"]),
    )


def test_atomic_writes_flush_the_file_before_the_rename_and_the_folder_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        target = os.readlink(f"/proc/self/fd/{fd}")
        events.append("fsync folder" if os.path.isdir(target) else "fsync file")
        real_fsync(fd)

    def replace(source: object, target: object) -> None:
        events.append("rename")
        real_replace(source, target)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    (tmp_path / "run").mkdir()
    for write in (
        lambda: RunFolder(tmp_path / "run").write_part(
            pd.DataFrame({"k": [1]}), "shard-0-of-1", "m"
        ),
        lambda: write_json(tmp_path / "run" / "run.json", {"a": 1}),
        lambda: RunFolder(tmp_path / "run").write_image(_image(), "images/m/x.png"),
    ):
        events.clear()
        write()
        assert "fsync file" in events and "rename" in events, events
        assert events.index("fsync file") < events.index("rename")
        assert events[-1] == "fsync folder", events


def _image():
    from PIL import Image

    return Image.new("RGB", (8, 8), "white")


# ----------------------------------------------------------- case 4: a failed first attempt
def test_nothing_is_written_before_every_input_is_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = write_prompts_csv(tmp_path / "prompts.csv", 2)
    empty = tmp_path / "empty.csv"
    empty.write_text("prompt_id,prompt,text\np1,A sign,\n")
    common = ["--prompts", f"csv:{csv}", "--no-progress"]
    images = tmp_path / "images"
    images.mkdir()
    _image().save(images / "a.png")
    (images / "b.png").write_bytes(b"not a png at all")
    attempts = {
        "reader that cannot start": ["run", "-m", "control:blank", "--ocr", "ocr_dead", *common],
        "mistyped reader": ["run", "-m", "control:blank", "--ocr", "easyocrr", *common],
        "mistyped model option": ["run", "-m", "control:blank?sise=3", *common],
        "empty text cell": [
            "run",
            "-m",
            "control:blank",
            "--ocr",
            "pixelocr",
            "--prompts",
            f"csv:{empty}",
        ],
        "mistyped codec": ["vae-eval", "--vae", "jpeg?quality=abc", "--images", "default"],
        "codec reader that cannot start": ["vae-eval", "--vae", "identity", "--ocr", "ocr_dead"],
        "missing image folder": ["vae-eval", "--vae", "identity", "--images", str(tmp_path / "no")],
        # was refused at the first batch, after run.json and .locks/ were written
        "a file that is no image": ["vae-eval", "--vae", "identity", "--images", str(images)],
    }
    for number, (what, args) in enumerate(attempts.items()):
        out = tmp_path / f"out{number}"
        code, err = run_cli([*args, "--out", str(out)], capsys)
        assert code == 2 and err.startswith("error: ") and err.count("\n") == 1, (what, err)
        assert not out.exists(), f"{what}: {sorted(p.name for p in out.rglob('*'))}"


def test_a_failed_first_attempt_does_not_poison_the_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = write_prompts_csv(tmp_path / "prompts.csv", 2)
    out = tmp_path / "run"
    args = ["run", "--ocr", "pixelocr", "--prompts", f"csv:{csv}", "--out", str(out)]
    # a model that cannot load (a reader that cannot read is refused before writing)
    code, err = run_cli([*args, "-m", "broken:", "--no-progress"], capsys)
    assert code == 1 and "every row of the run failed (2 of 2)" in err
    code, err = run_cli([*args, "-m", "control:render?size=32", "--no-progress"], capsys)
    assert code == 0, err
    rows = pd.read_parquet(out / "results.parquet")
    assert len(rows) == 2 and (rows["error"] == "").all()
    assert json.loads((out / "run.json").read_text())["config"]["models"][0]["spec"].startswith(
        "control:render"
    )
    # a run with usable rows is still protected from another config
    code, err = run_cli([*args, "-m", "broken:", "--no-progress"], capsys)
    assert code == 2 and "different run" in err


def test_a_run_json_of_an_unknown_png_format_stops_the_resume_before_it_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A folder a newer glyphbench started (a PNG format this one does not know): exit 2,
    one line naming run.json and the key, nothing written."""
    csv = write_prompts_csv(tmp_path / "prompts.csv", 3)
    out = tmp_path / "run"
    args = ["run", "-m", "control:render?size=32", "--ocr", "pixelocr", "--prompts", f"csv:{csv}"]
    code, err = run_cli([*args, "--out", str(out), "--no-progress"], capsys)
    assert code == 0, err
    manifest = json.loads((out / "run.json").read_text())
    assert manifest["png"] == 2
    for part in out.glob("parts/*/*/*.parquet"):
        part.unlink()
    (out / "results.parquet").unlink()
    (out / "run.json").write_text(json.dumps({**manifest, "png": 3}))
    before = sorted((p.relative_to(out), p.stat().st_mtime_ns) for p in out.rglob("*"))
    code, err = run_cli([*args, "--out", str(out), "--no-progress"], capsys)
    assert code == 2
    assert "run.json [png]: PNG format 3 is not one this glyphbench writes ([1, 2])" in err
    assert sorted((p.relative_to(out), p.stat().st_mtime_ns) for p in out.rglob("*")) == before


# --------------------------------------------------------------- case 6: file permissions
@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o002, 0o664)])
def test_outputs_follow_the_umask(tmp_path: Path, umask: int, mode: int) -> None:
    csv = write_prompts_csv(tmp_path / "prompts.csv", 2)
    previous = os.umask(umask)
    try:
        run_benchmark(config(tmp_path / "run", csv), progress=False, console=quiet_console())
    finally:
        os.umask(previous)
    run = tmp_path / "run"
    files = [run / "results.parquet", run / "run.json", run / "prompts.parquet"]
    files += list(run.glob("images/*/*.png")) + list(run.glob("parts/*/*/*.parquet"))
    assert len(files) > 5
    assert {oct(path.stat().st_mode & 0o777) for path in files} == {oct(mode)}


# ------------------------------------------------------------------- case 8: leftovers
def test_stale_temporary_files_are_removed_when_the_shard_is_taken(tmp_path: Path) -> None:
    csv = write_prompts_csv(tmp_path / "prompts.csv", 2)
    run = tmp_path / "run"
    (run / "images" / "m").mkdir(parents=True)
    dead = _dead_pid()
    stale = [
        run / f".results.parquet.{HOST_TAG}-{dead}-abcdef.tmp",  # a killed process's
        run / "images" / "m" / ".x.png.k2j4h5g6.tmp",  # an older glyphbench's, a day old
        run / f".run.json.{'f' * 6 if HOST_TAG != 'f' * 6 else 'e' * 6}-1-abcdef.tmp",
    ]
    for path in stale:
        path.write_bytes(b"x" * 1000)
    day_ago = time.time() - 86400
    for path in stale[1:]:
        os.utime(path, (day_ago, day_ago))
    alive = run / f".prompts.parquet.{HOST_TAG}-{os.getpid()}-abcdef.tmp"  # being written
    fresh = run / ".command.txt.a1b2c3d4.tmp"  # another host's, just now: maybe being written
    alive.write_bytes(b"x")
    fresh.write_bytes(b"x")
    run_benchmark(config(run, csv), progress=False, console=quiet_console())
    assert not [path for path in stale if path.exists()]
    assert alive.exists() and fresh.exists()
    assert stale_temp_files(run) == []


def test_a_run_killed_before_its_run_json_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A run writes its config and prompts before run.json: killed between them, it leaves a
    folder with those and no run.json. That is no folder of someone else's files: the next
    command runs there, though its config reads otherwise (another --device, an edited file,
    more prompts), and its prompts, not the killed start's, are the run's."""
    run = tmp_path / "run"

    def killed(self: RunFolder, data: object) -> bool:
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(RunFolder, "create_manifest", killed)
        with pytest.raises(KeyboardInterrupt):
            run_benchmark(config(run, write_prompts_csv(tmp_path / "two.csv", 2)),
                          config_text="models: [a]\n", progress=False,
                          console=quiet_console())  # fmt: skip
    assert not (run / "run.json").exists()
    assert {p.name for p in run.iterdir()} == {
        "config.yaml",
        "prompts.parquet",
        "prompts.parquet.sha256",
        ".locks",
    }
    three = write_prompts_csv(tmp_path / "three.csv", 3)
    run_benchmark(config(run, three), config_text="models: [a, b]\n", progress=False,
                  console=quiet_console())  # fmt: skip
    assert (run / "run.json").is_file() and (run / "results.parquet").is_file()
    assert len(pd.read_parquet(run / "prompts.parquet")) == 3
    assert (run / "config.yaml").read_text() == "models: [a, b]\n"


def _dead_pid() -> int:
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], check=True,
                          capture_output=True, text=True)  # fmt: skip
    return int(done.stdout)


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "table.parquet"
    with pytest.raises(RuntimeError), atomic_path(target) as tmp:
        tmp.write_bytes(b"half")
        raise RuntimeError("killed mid-write")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_a_double_ctrl_c_stops_at_once_without_a_crash(tmp_path: Path) -> None:
    csv = write_prompts_csv(tmp_path / "prompts.csv", 6)
    out = tmp_path / "run"
    helper = HELPERS / "runner_helper.py"
    args = [
        sys.executable, str(helper), "run", "--models", "slow:render?delay=0.2&size=32",
        "--prompts", f"csv:{csv}", "--batch-size", "2", "--ocr", "slowocr?delay=0.8&torch=1",
        "--out", str(out), "--no-progress",
    ]  # fmt: skip
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(TESTS), str(TESTS.parent)]))
    process = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert process.stderr is not None
    lines: list[str] = []
    collect = threading.Thread(target=lambda: lines.extend(map(bytes.decode, process.stderr)))
    collect.start()
    parts = lambda: list(out.glob("parts/*/*/batch-*.parquet"))  # noqa: E731
    wait_until(parts, "a first part file", process=process)
    process.send_signal(signal.SIGINT)  # the worker is reading the next batch, in torch
    taken = lambda: any(line.startswith("interrupted:") for line in lines)  # noqa: E731
    wait_until(taken, "the first Ctrl-C's message", process=process)
    process.send_signal(signal.SIGINT)
    process.wait(timeout=60)
    collect.join(timeout=60)
    stderr = "".join(lines)
    assert process.returncode == 130, stderr[-2000:]
    assert "interrupted again" in stderr
    assert "Traceback" not in stderr and "terminate called" not in stderr
    # what was written is whole: the same command resumes and completes
    resumed = subprocess.run(args, env=env, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    assert len(pd.read_parquet(out / "results.parquet")) == 6


def test_merge_of_a_corrupt_run_json_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "run.json").write_text("{not json")
    with pytest.raises(InputError, match=r"run.json:1: malformed JSON"):
        merge_run(tmp_path)


def test_many_threads_create_one_folder_tree_at_once(tmp_path: Path) -> None:
    """ensure_folder raced with itself: a folder made meanwhile is no "file in the way"."""
    import threading

    from glyphbench.core.io import ensure_folder

    problems: list[BaseException] = []
    for trial in range(30):
        root = tmp_path / f"t{trial}"
        barrier = threading.Barrier(8)

        def make(index: int, root: Path = root, barrier: threading.Barrier = barrier) -> None:
            barrier.wait()
            try:
                ensure_folder(root / "c" / f"{index:02d}")
            except BaseException as exc:
                problems.append(exc)

        threads = [threading.Thread(target=make, args=(i,)) for i in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert problems == []
        assert len(list((root / "c").iterdir())) == 8
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="exists and is not a folder"):
        ensure_folder(tmp_path / "file" / "sub")
