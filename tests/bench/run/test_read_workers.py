"""`glyphbench run --read-workers N` starts its own reader processes.

Every run goes through the real CLI (tests/helpers/runner_helper.py as the script, so the
reader processes, which import it as ``__mp_main__``, have the test doubles too):
the results equal a run that reads in its own thread; generation never gets more
than ``--read-backlog`` images ahead of a slow reader; kill -9 and Ctrl-C of the run
leave no reader process behind and a folder the same command finishes exactly.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from glyphbench.core.errors import InputError
from glyphbench.engine.backlog import default_backlog
from glyphbench.run.config import RunConfig
from glyphbench.run.reading_store import readings_table
from glyphbench.run.results import TIMING_COLUMNS
from tests.helpers.paths import HELPERS
from tests.helpers.polling import wait_until
from tests.helpers.runner_helper import (
    GATE_VARIABLE,
    child_environment,
    descendants,
    survivors,
    write_prompts_csv,
)

HELPER = HELPERS / "runner_helper.py"
N_PROMPTS = 8
MODELS = "slow:render?delay=0.2&size=64,control:blank?size=64"
READER = "slowocr?delay=0.3"  # pixelocr's readings, 0.3 s a call


def command(
    out: Path, csv: Path, *extra: str, models: str = MODELS, ocr: str = READER
) -> list[str]:
    return [
        sys.executable, str(HELPER), "run", "--models", models, "--prompts", f"csv:{csv}",
        "--seeds", "0", "--batch-size", "2", "--ocr", ocr, "--out", str(out),
        "--no-progress", *extra,
    ]  # fmt: skip


def run(args: list[str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        args, env=child_environment(), capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done


def comparable(rows: pd.DataFrame) -> pd.DataFrame:
    """Rows without timings; string columns as one string type.

    The schema's string columns come back from Parquet as pandas' ``str`` (NaN for a
    missing value) or ``string`` (pd.NA) depending on how the part files were built
    (rows read later, as by ``glyphbench read``, carry ``string``): same values.
    """
    rows = rows.drop(columns=list(TIMING_COLUMNS)).reset_index(drop=True)
    strings = [c for c in rows.columns if isinstance(rows[c].dtype, pd.StringDtype)]
    return rows.astype(dict.fromkeys(strings, "string"))


def shard_json(out: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((out / "parts/shard-0-of-1/shard.json").read_text())
    return data


@pytest.fixture(scope="module")
def csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_prompts_csv(tmp_path_factory.mktemp("prompts") / "prompts.csv", N_PROMPTS)


@pytest.fixture(scope="module")
def inline(tmp_path_factory: pytest.TempPathFactory, csv: Path) -> pd.DataFrame:
    """The same run reading in its own thread (read_workers 0: today's behaviour)."""
    out = tmp_path_factory.mktemp("inline") / "run"
    run(command(out, csv))
    rows = pd.read_parquet(out / "results.parquet")
    assert len(rows) == 2 * N_PROMPTS and (rows["error"] == "").all()
    assert "readers" not in shard_json(out)
    return rows


@pytest.mark.slow
def test_a_run_with_reader_processes_equals_the_run_that_reads_inline(
    tmp_path: Path, csv: Path, inline: pd.DataFrame
) -> None:
    out = tmp_path / "run"
    run(command(out, csv, "--read-workers", "1"))
    rows = pd.read_parquet(out / "results.parquet")
    pd.testing.assert_frame_equal(comparable(rows), comparable(inline))
    assert rows["ocr_text"].notna().all()
    readers = shard_json(out)["readers"]
    assert readers == {**readers, "workers": 1, "read": 2 * N_PROMPTS, "errors": 0}
    assert list((out / "parts/read-0-of-1").glob("*/batch-*.parquet"))  # read by the readers
    stored = readings_table(out)
    assert set(stored["image_sha256"]) == set(rows["image_sha256"])  # the reading store too
    # How a run reads is not what it is: the same run id, and a resume with another N.
    config = json.loads((out / "run.json").read_text())
    assert config["config"]["read_workers"] == 1 and rows["run_id"].equals(inline["run_id"])
    again = run(command(out, csv, "--read-workers", "2"))
    assert "results:" in again.stdout


@pytest.mark.slow
def test_a_run_read_later_is_read_by_a_run_with_reader_processes(
    tmp_path: Path, csv: Path, inline: pd.DataFrame
) -> None:
    """`run --read-later` then the same run with --read-workers: the readers read it all."""
    out = tmp_path / "run"
    later = run(command(out, csv, "--read-later"))
    assert pd.read_parquet(out / "results.parquet")["ocr_text"].isna().all()
    assert f"{2 * N_PROMPTS} images not read yet: `glyphbench read {out}`" in later.stderr
    done = run(command(out, csv, "--read-workers", "1"))
    assert "not read yet" not in done.stderr
    rows = pd.read_parquet(out / "results.parquet")
    pd.testing.assert_frame_equal(comparable(rows), comparable(inline))


@pytest.mark.slow
def test_generation_never_gets_more_than_the_backlog_ahead_of_a_slow_reader(
    tmp_path: Path, csv: Path
) -> None:
    out, log = tmp_path / "run", tmp_path / "backlog.log"
    backlog = 4
    reader = f"watchocr?delay=0.4&watch={out / 'images'}&log={log}"
    run(
        command(
            out,
            csv,
            "--read-workers",
            "1",
            "--read-backlog",
            str(backlog),
            models="control:render?size=64,control:blank?size=64",
            ocr=reader,
        )
    )
    observed = [int(line) for line in log.read_text().split()]
    # Seen by the reader process itself: images on disk it had not read yet, at each call.
    assert max(observed) <= backlog, observed
    assert max(observed) >= backlog - 1, observed  # generation did run ahead to the bound
    readers = shard_json(out)["readers"]
    assert isinstance(readers, dict)
    assert readers["backlog"] == backlog and readers["peak_backlog"] <= backlog
    assert readers["waited_s"] > 0  # and waited there for the reader
    rows = pd.read_parquet(out / "results.parquet")
    assert len(rows) == 2 * N_PROMPTS and rows["ocr_text"].notna().all()


@pytest.mark.slow
def test_read_workers_are_checked_before_anything_is_written(tmp_path: Path, csv: Path) -> None:
    out = tmp_path / "run"
    for extra, words in (
        (["--read-workers", "-1"], "--read-workers"),
        (["--read-backlog", "4"], "needs read_workers"),
        (["--read-workers", "1", "--read-later"], "--read-later"),
        (["--read-workers", "1", "--shard", "0/2"], "--shard"),
    ):
        done = subprocess.run(
            command(out, csv, *extra), env=child_environment(), capture_output=True, text=True
        )
        assert done.returncode == 2, (extra, done.stderr)
        assert words in done.stderr, (extra, done.stderr)
        assert not out.exists(), extra
    dead = subprocess.run(
        command(out, csv, "--read-workers", "1", ocr="ocr_dead"),
        env=child_environment(),
        capture_output=True,
        text=True,
    )
    assert dead.returncode == 2 and "could not start in a reader process" in dead.stderr
    assert "engine binary missing" in dead.stderr and not out.exists()
    # a reader that starts but cannot read is tried on a sample image first
    blind = subprocess.run(
        command(out, csv, "--read-workers", "1", ocr="ocr_blind"),
        env=child_environment(),
        capture_output=True,
        text=True,
    )
    assert blind.returncode == 2 and "cannot read a sample image" in blind.stderr, blind.stderr
    assert blind.stderr.count("\n") == 1 and not out.exists()


def test_the_config_keys_are_typed_and_not_part_of_the_run(tmp_path: Path) -> None:
    base = {"models": ["control:blank"], "out": str(tmp_path)}
    plain = RunConfig.from_mapping(base)
    spawned = RunConfig.from_mapping({**base, "read_workers": 2, "read_backlog": 32})
    assert spawned.config_hash() == plain.config_hash()
    assert "read_workers" not in plain.model_dump(mode="json")  # old run.json unchanged
    with pytest.raises(InputError, match="read_workers"):
        RunConfig.from_mapping({**base, "read_workers": "two"})
    with pytest.raises(InputError, match="read_backlog"):
        RunConfig.from_mapping({**base, "read_workers": 1, "read_backlog": 0})
    assert default_backlog(1, 4) == 16


def test_the_dry_run_says_who_reads(tmp_path: Path) -> None:
    from glyphbench.run.operations import plan_run
    from glyphbench.run.plan import plan_lines
    from tests.helpers.runner_helper import prompt_set

    config = RunConfig.from_mapping(
        {"models": ["control:blank"], "out": str(tmp_path), "batch_size": 2, "read_workers": 2}
    )
    plan = plan_run(config, prompt_set=prompt_set(4))
    assert (plan["read_workers"], plan["read_backlog"]) == (2, 16)
    [line] = [line for line in plan_lines(plan) if line.startswith("reader:")]
    assert "in 2 reader processes the run starts" in line and "past 16 images" in line
    assert not tmp_path.joinpath("run.json").exists()


# ---------------------------------------------------------------- kill -9 and Ctrl-C


def read_parts(out: Path) -> list[Path]:
    return list((out / "parts/read-0-of-1").glob("*/batch-*.parquet"))


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize(
    "how",
    [
        pytest.param("kill-9"),
        pytest.param("ctrl-c"),  # SIGINT to the run only
        pytest.param("ctrl-c-terminal", marks=pytest.mark.slow),  # to its process group
    ],
)
def test_an_interrupted_run_leaves_no_reader_and_resumes_exactly(
    tmp_path: Path, csv: Path, inline: pd.DataFrame, how: str
) -> None:
    out = tmp_path / "run"
    args = command(out, csv, "--read-workers", "1", "--read-backlog", "2")
    # The slow model waits for a gate file after its first batch: the run is mid-way when
    # the signal comes, however loaded the machine (the resumed run has no gate).
    gated = {**child_environment(), GATE_VARIABLE: str(tmp_path / "gate")}
    process = subprocess.Popen(args, env=gated, stderr=subprocess.PIPE, start_new_session=True)
    readers: set[int] = set()

    def reading_written() -> bool:  # noting the run's processes on the way
        readers.update(descendants(process.pid))
        return bool(read_parts(out))

    wait_until(reading_written, "a part file of readings", timeout=240, process=process)
    assert process.poll() is None, "the run ended before it could be interrupted"
    assert readers, "no reader process was seen"
    if how == "ctrl-c-terminal":  # a terminal sends SIGINT to every process of the group
        os.killpg(process.pid, signal.SIGINT)
    else:
        process.send_signal(signal.SIGKILL if how == "kill-9" else signal.SIGINT)
    _, err = process.communicate(timeout=120)
    assert process.returncode == (-9 if how == "kill-9" else 130), err.decode()[-2000:]
    if how != "kill-9":
        assert "Traceback" not in err.decode(), err.decode()[-2000:]  # readers ignore SIGINT
    assert survivors(readers) == []
    assert not (out / "results.parquet").exists()  # interrupted mid-way

    run(args)
    rows = pd.read_parquet(out / "results.parquet")
    pd.testing.assert_frame_equal(comparable(rows), comparable(inline))
    generated = list((out / "parts/shard-0-of-1").glob("*/batch-*.parquet"))
    assert len(generated) == N_PROMPTS  # 2 models x 8 prompts in batches of 2: none made twice
