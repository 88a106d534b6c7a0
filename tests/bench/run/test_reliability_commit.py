"""A results table, its checksum and run.json change together (docs/reliability.md,
"Commits"): a kill at any moment of `rescore`, `merge`, `read` or `run`'s merge leaves
the old table with the old run.json and its checksum, or the new with the new.

The rescore is killed (SIGKILL, SIGTERM) at random moments near its end, seeds fixed;
every step of a commit is also interrupted in turn; a rescore that kept some old
readings names every reader its table holds.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pandas as pd
import pytest

from glyphbench.core.durable import COMMIT_RECORD, Commit, settle
from glyphbench.core.io import checksum_path, read_json, verify_checksum
from glyphbench.engine.folder import RunFolder
from glyphbench.run.config import RunConfig
from glyphbench.run.operations import merge_run, rescore_run, run_benchmark
from glyphbench.run.results import RESULTS, read_results
from tests.helpers.paths import HELPERS
from tests.helpers.runner_helper import child_environment, prompt_set, register

register()
HELPER = HELPERS / "runner_helper.py"


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("commit") / "run"
    config = RunConfig.from_mapping(
        {"models": ["control:render?size=32", "control:typo?rate=0.5&size=32"],
         "batch_size": 8, "seeds": [0, 1], "ocr": "pixelocr", "out": str(out)}
    )  # fmt: skip
    run_benchmark(config, prompt_set=prompt_set(30), progress=False)
    return out


def consistent(run: Path) -> str:
    """The reader the run's table and run.json agree on; fails the test when they do not.

    Read as every glyphbench command reads (an interrupted commit finished first).
    """
    meta = read_json(run / "run.json")
    table = read_results(run / RESULTS)  # its SHA-256 checked against results.parquet.sha256
    assert checksum_path(run / RESULTS).is_file(), "a table without its checksum"
    reader = meta["reader"]
    engines = set(table["ocr_engine"].dropna())
    assert engines == {reader}, f"table read by {engines}, run.json says {reader}"
    assert meta["protocol"]["reader"] == reader, "the protocol card names another reader"
    assert meta["protocol"]["reader_engines"] == [f"{reader} {reader} 1"]
    assert len(meta.get("rescores", [])) == (reader == "flipocr")
    return str(reader)


def rescore_process(run: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, str(HELPER), "rescore", str(run), "--ocr", "flipocr", "--no-progress"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=child_environment(),
    )  # fmt: skip


def wait_for_reading_done(process: subprocess.Popen[str]) -> float:
    """Block until the rescore says its readings are stored (the start of its end)."""
    assert process.stderr is not None
    for line in process.stderr:
        if line.startswith("rescore: readings of"):
            return time.monotonic()
    raise AssertionError("the rescore ended without reading")


def end_phase_seconds(made: Path, tmp_path: Path) -> float:
    """How long an uninterrupted rescore runs after its readings are stored."""
    run = tmp_path / "calibration"
    shutil.copytree(made, run)
    process = rescore_process(run)
    started = wait_for_reading_done(process)
    process.communicate(timeout=120)  # the rest of its output read, so it never blocks
    assert process.returncode == 0
    assert consistent(run) == "flipocr"
    return time.monotonic() - started


@pytest.mark.slow
@pytest.mark.parametrize(
    "how, seed", [(signal.SIGKILL, 45), (signal.SIGKILL, 46), (signal.SIGTERM, 47)]
)
def test_a_rescore_killed_near_its_end_leaves_old_or_new_never_mixed(
    made: Path, tmp_path: Path, how: signal.Signals, seed: int
) -> None:
    """24 kills in three rounds of 8 (SIGKILL twice, SIGTERM once) at random moments of a
    rescore's end (seeded): every table agrees with run.json and has its checksum, and a
    later merge keeps it so."""
    kills = 8
    window = end_phase_seconds(made, tmp_path) * 1.2
    rng = random.Random(seed)
    seen: dict[str, int] = {}
    for trial in range(kills):
        run = tmp_path / f"trial-{trial}"
        shutil.copytree(made, run)
        process = rescore_process(run)
        started = wait_for_reading_done(process)
        time.sleep(max(0.0, started + rng.uniform(0.0, window) - time.monotonic()))
        process.send_signal(how)
        process.communicate(timeout=120)
        reader = consistent(run)
        seen[reader] = seen.get(reader, 0) + 1
        merge_run(run)  # the old reader's table stays the old reader's; the new, the new
        assert consistent(run) == reader
        shutil.rmtree(run)
    assert sum(seen.values()) == kills
    print(f"{how.name}: {kills} kills, tables left: {seen}")  # old (pixelocr) or new (flipocr)


@pytest.mark.slow
def test_a_merge_stopped_by_sigterm_never_leaves_a_table_without_its_checksum(
    made: Path, tmp_path: Path
) -> None:
    """8 SIGTERMs of `glyphbench merge` at random moments of its run (seeded)."""
    command = [sys.executable, str(HELPER), "merge"]
    run = tmp_path / "calibration"
    shutil.copytree(made, run)
    started = time.monotonic()
    subprocess.run([*command, str(run)], env=child_environment(), check=True,
                   capture_output=True, timeout=120)  # fmt: skip
    lifetime = time.monotonic() - started
    rng = random.Random(8)
    for trial in range(8):
        run = tmp_path / f"trial-{trial}"
        shutil.copytree(made, run)
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        process = subprocess.Popen([*command, str(run)], env=child_environment(), **quiet)
        time.sleep(rng.uniform(0.5, 1.1) * lifetime)
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=120)
        assert consistent(run) == "pixelocr"
        shutil.rmtree(run)


class Killed(BaseException):
    """Stands for a kill at one step of a commit (nothing after it runs)."""


class StopAt:
    """Counts the calls of the functions it wraps and raises :class:`Killed` at the
    ``step``-th (that call and everything after it never happen)."""

    def __init__(self, step: int) -> None:
        self.step, self.calls = step, 0

    def wrap(self, real: Callable[..., object]) -> Callable[..., object]:
        def counted(*args: object, **kwargs: object) -> object:
            self.calls += 1
            if self.calls == self.step:
                raise Killed
            return real(*args, **kwargs)

        return counted


def test_a_commit_interrupted_at_any_step_reads_as_old_or_new(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each rename and flush of a commit interrupted in turn: what a reader then sees is
    the three old files or the three new ones, and the table has its checksum."""
    from glyphbench.core import durable, io

    def files(tag: str, folder: Path) -> None:
        (folder / "t.parquet").write_text(f"{tag} table")
        io.write_checksum(folder / "t.parquet")
        (folder / "run.json").write_text(json.dumps({"tag": tag}))

    def seen(folder: Path) -> str:
        settle(folder)
        verify_checksum(folder / "t.parquet")  # raises when table and sum differ
        tags = {
            (folder / "t.parquet").read_text().split()[0],
            json.loads((folder / "run.json").read_text())["tag"],
        }
        assert len(tags) == 1, tags
        return tags.pop()

    outcomes = []
    for step in range(1, 100):
        folder = tmp_path / f"step-{step}"
        folder.mkdir()
        files("old", folder)
        stop = StopAt(step)
        with monkeypatch.context() as patch:
            for name in ("replace", "fsync", "link"):
                patch.setattr(durable.os, name, stop.wrap(getattr(os, name)))
            try:
                with Commit(folder) as commit:
                    files("new", commit.path("x").parent)
            except Killed:
                pass
        outcomes.append(seen(folder))
        if stop.calls < step:  # the commit ran to its end without reaching this step
            break
    print(f"{len(outcomes)} steps: {outcomes}")
    assert outcomes[0] == "old" and outcomes[-1] == "new"
    assert outcomes == sorted(outcomes, key=["old", "new"].index), outcomes  # once new, new


def test_a_commit_left_by_a_dead_process_is_finished_and_its_leftovers_removed(
    tmp_path: Path,
) -> None:
    from glyphbench.core.durable import HOST_TAG

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
    (tmp_path / "a.txt").write_text("old")
    stage = tmp_path / f".commit.{HOST_TAG}-{dead}-abcdef.tmp"
    stage.mkdir()
    (stage / "a.txt").write_text("new")
    (tmp_path / COMMIT_RECORD).write_text(json.dumps({"stage": stage.name, "files": ["a.txt"]}))
    orphan = tmp_path / f".commit.{HOST_TAG}-{dead}-123456.tmp"  # never committed
    orphan.mkdir()
    (orphan / "a.txt").write_text("uncommitted")
    assert settle(tmp_path) and (tmp_path / "a.txt").read_text() == "new"  # a reader
    assert (tmp_path / COMMIT_RECORD).exists()  # readers only finish; the next commit tidies
    with Commit(tmp_path) as commit:
        commit.path("b.txt").write_text("b")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt", "b.txt"]


def test_a_record_naming_a_file_outside_its_folder_is_refused(tmp_path: Path) -> None:
    from glyphbench.core.errors import InputError

    (tmp_path / COMMIT_RECORD).write_text(
        json.dumps({"stage": ".commit.abcdef-1-abcdef.tmp", "files": ["../x"]})
    )
    with pytest.raises(InputError, match="not a commit record glyphbench wrote"):
        settle(tmp_path)


def test_a_partial_rescore_names_both_readers_in_the_card_and_the_report(
    made: Path, tmp_path: Path
) -> None:
    """One image the new reader cannot read keeps its old reading: the card and the
    report say the table holds two readers, with their rows."""
    from glyphbench.report.analyse import incomplete_runs
    from glyphbench.report.suites import card_lines

    run = tmp_path / "run"
    shutil.copytree(made, run)
    table = read_results(run / RESULTS)
    hard = str(table["ocr_text"].iloc[-1])  # not the first: the probe reads that one
    rescore_run(run, reader_spec=f"flipocr?fail={hard}", progress=False)
    meta = read_json(run / "run.json")
    rows = meta["protocol"]["reader_rows"]
    assert rows == {"flipocr flipocr 1": len(table) - 1, "pixelocr pixelocr 1": 1}
    assert meta["protocol"]["reader"] == "flipocr?fail=" + hard
    [line] = incomplete_runs({"r": {"meta": meta}})
    assert "2 readers" in line and "pixelocr pixelocr 1 (1 row)" in line
    shown = dict(card_lines(meta["protocol"]))  # the report's and the export's card
    assert shown["Readers in the table (rows)"].endswith("pixelocr pixelocr 1: 1")


def test_report_and_merge_name_a_missing_checksum(
    made: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.helpers.cli_runs import run_cli

    run = tmp_path / "run"
    shutil.copytree(made, run)
    checksum_path(run / RESULTS).unlink()
    code, err = run_cli(["report", str(run), "--out", str(tmp_path / "r"), "--n-boot", "20"],
                        capsys)  # fmt: skip
    assert code == 0
    assert "results.parquet.sha256" in err and "unverified" in err
    code, err = run_cli(["merge", str(run)], capsys)
    assert code == 0 and "results.parquet.sha256" in err and "unverified" in err
    assert checksum_path(run / RESULTS).is_file()  # rebuilt from the parts, with its sum
    RunFolder(run)  # and read back without a word
    capsys.readouterr()
    read_results(run / RESULTS)
    assert "unverified" not in capsys.readouterr().err
    pd.testing.assert_frame_equal(read_results(run / RESULTS), read_results(made / RESULTS))


def test_a_commit_with_nothing_staged_changes_nothing(tmp_path: Path) -> None:
    """A run whose every image was refused (a spending cap) stages no file: its commit is
    a no-op, not an error (it once failed with "cannot commit: No such file or directory")."""
    (tmp_path / "a.txt").write_text("old")
    with Commit(tmp_path):
        pass
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]
    assert (tmp_path / "a.txt").read_text() == "old"
