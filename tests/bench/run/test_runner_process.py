"""The runner as separate processes: kill and resume, two shards, accelerate launch.

Every run here goes through the real CLI (tests/helpers/runner_helper.py registers the
fast ``pixelocr`` engine and the ``slow:`` adapter, then calls ``glyphbench``).
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from tests.helpers.polling import wait_until
from tests.helpers.run_process import BATCHES, HELPER, N_PROMPTS, _parts, command, comparable
from tests.helpers.runner_helper import GATE_VARIABLE, child_environment, write_prompts_csv


def environment() -> dict[str, str]:
    return child_environment()


@pytest.fixture(scope="module")
def csv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_prompts_csv(tmp_path_factory.mktemp("prompts") / "prompts.csv", N_PROMPTS)


@pytest.fixture(scope="module")
def baseline(tmp_path_factory: pytest.TempPathFactory, csv: Path) -> pd.DataFrame:
    """One uninterrupted single-process run."""
    out = tmp_path_factory.mktemp("baseline") / "run"
    subprocess.run(
        command(out, csv), env=environment(), check=True, capture_output=True, timeout=300
    )
    rows = pd.read_parquet(out / "results.parquet")
    assert len(rows) == 2 * N_PROMPTS and (rows["error"] == "").all()
    return rows


@pytest.mark.parametrize(
    "how",
    [
        pytest.param(signal.SIGKILL, id="kill"),  # the quick suite's kill -9 resume test
        pytest.param(signal.SIGINT, id="ctrl-c", marks=pytest.mark.slow),
    ],
)
def test_interrupted_run_resumes_to_the_same_rows(
    tmp_path: Path, csv: Path, baseline: pd.DataFrame, how
) -> None:
    out = tmp_path / "run"
    # The slow model waits for a gate file after its first batch: the run is mid-way when
    # the signal comes, however loaded the machine (the resumed run has no gate).
    gated = {**environment(), GATE_VARIABLE: str(tmp_path / "gate")}
    process = subprocess.Popen(
        command(out, csv), env=gated, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    wait_until(lambda: _parts(out), "a first part file", timeout=240, process=process)
    assert process.poll() is None, "the run ended before it could be interrupted"
    process.send_signal(how)
    process.wait(timeout=120)
    assert process.returncode == (-9 if how == signal.SIGKILL else 130)
    written = len(_parts(out))
    assert 1 <= written < BATCHES, f"{written} part files: the interruption was not mid-way"
    assert not (out / "results.parquet").exists()

    resumed = subprocess.run(
        command(out, csv), env=environment(), capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    rows = pd.read_parquet(out / "results.parquet")
    pd.testing.assert_frame_equal(comparable(rows), comparable(baseline))
    assert len(_parts(out)) == BATCHES  # finished work was not redone


@pytest.mark.slow
def test_two_shards_give_the_same_rows_as_one_process(
    tmp_path: Path, csv: Path, baseline: pd.DataFrame
) -> None:
    out = tmp_path / "run"
    shards = [
        subprocess.Popen(
            command(out, csv, "--shard", f"{i}/2"),
            env=environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for i in range(2)
    ]
    for process in shards:
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err[-2000:]
    assert {p.parent.parent.name for p in _parts(out)} == {"shard-0-of-2", "shard-1-of-2"}
    rows = pd.read_parquet(out / "results.parquet")  # the last shard to finish merged
    pd.testing.assert_frame_equal(comparable(rows), comparable(baseline))

    merged = subprocess.run(
        [sys.executable, str(HELPER), "merge", str(out)],
        env=environment(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert merged.returncode == 0, merged.stderr[-2000:]
    pd.testing.assert_frame_equal(
        comparable(pd.read_parquet(out / "results.parquet")), comparable(baseline)
    )


@pytest.mark.slow
def test_accelerate_launch_two_cpu_processes(
    tmp_path: Path, csv: Path, baseline: pd.DataFrame
) -> None:
    launcher = shutil.which("accelerate", path=str(Path(sys.executable).parent))
    if launcher is None:
        pytest.skip("accelerate is not installed")
    out = tmp_path / "run"
    done = subprocess.run(
        [
            # on a machine without GPUs, --multi_gpu starts torchrun with the gloo backend
            launcher, "launch", "--multi_gpu", "--num_processes", "2", "--num_machines", "1",
            "--mixed_precision", "no", "--dynamo_backend", "no", "--main_process_port", "29517",
            *command(out, csv)[1:],
        ],
        env=environment(), capture_output=True, text=True, timeout=400,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert {p.parent.parent.name for p in _parts(out)} == {"shard-0-of-2", "shard-1-of-2"}
    rows = pd.read_parquet(out / "results.parquet")
    pd.testing.assert_frame_equal(comparable(rows), comparable(baseline))
