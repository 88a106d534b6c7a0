"""The answer in the terminal and exit codes a scheduler can trust.

``glyphbench run`` and ``glyphbench report`` end with the report's answer (intervals,
ranks, the verdict against the controls; ``--json`` for scripts); a model that fails on
every row makes the run exit 3 after the other models finished, and ``--dry-run`` names
each model whose weights are neither in a local folder, the hub cache nor on a hub that
answers (exit 3), which the run itself refuses before writing (exit 2). Real
reading (RapidOCR) where the numbers matter.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from glyphbench.cli.exit_codes import MODEL_FAILED, USER_ERROR
from glyphbench.report.build import ANSWER, write_report
from tests.helpers.cli_runs import invoke_cli
from tests.helpers.report_fixtures import build_run

#: A hub id no test machine caches (the hub is made unreachable below).
UNCACHED = "stabilityai/stable-diffusion-xl-base-1.0"
CONTROLS = "control:render?size=128,control:typo?rate=0.3&size=128,control:blank?size=128"


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``glyphbench ARGS`` in this process: exit code, stdout and stderr."""
    return invoke_cli(args, capsys)


@pytest.fixture
def offline_hub(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty hub cache and a hub that does not answer (as on a cluster node offline)."""
    from huggingface_hub import constants

    cache = tmp_path / "hf-cache"
    cache.mkdir()
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(cache))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    return cache


@pytest.fixture(scope="module")
def tiny_sd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from glyphbench.tiny.pipelines import build_tiny_sd

    return build_tiny_sd(tmp_path_factory.mktemp("models") / "tiny-sd")


@pytest.mark.slow  # 6 s of two tiny pipelines: make test runs it
def test_a_model_failing_on_every_row_exits_3_after_the_others_finished(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], offline_hub: Path, tiny_sd: Path
) -> None:
    """A local folder whose UNet config is damaged: its weights check passes (a local
    folder), loading fails, so each of its rows fails while the controls make theirs."""
    damaged = tmp_path / "damaged-sd"
    shutil.copytree(tiny_sd, damaged)
    (damaged / "unet" / "config.json").write_text("{ not json")
    out = tmp_path / "run"
    models = f"{CONTROLS},diffusers:{damaged}"
    args = ["run", "-m", models, "--sample", "6", "--out", str(out), "--no-progress"]
    code, stdout, stderr = cli(args, capsys)
    assert code == MODEL_FAILED == 3, stderr
    assert "model diffusers:damaged-sd failed: every row failed (6 of 6)" in stderr
    rows = pd.read_parquet(out / "results.parquet")
    made = rows[rows["model"].str.startswith("control:")]
    assert len(made) == 18 and (made["error"] == "").all()  # the controls finished first
    # the answer is printed all the same: the controls' numbers with their intervals
    assert "No model besides the controls made a scored row" in stdout
    assert "Every row of diffusers:damaged-sd failed" in stdout and "[0.000, 0.000]" in stdout


def test_a_model_that_cannot_load_here_is_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], offline_hub: Path
) -> None:
    """What ``--dry-run`` names (weights in no cache, the hub silent) the run refuses at
    once: exit 2, one line naming the model and what to do, no folder; not the controls'
    images made first and every row of the model failed."""
    out = tmp_path / "run"
    models = f"{CONTROLS},diffusers:{UNCACHED}"
    args = ["run", "-m", models, "--sample", "6", "--out", str(out), "--no-progress"]
    code, _, stderr = cli(args, capsys)
    assert code == USER_ERROR == 2, stderr
    assert f"model diffusers:{UNCACHED} cannot run here: {UNCACHED} not in the local cache" in (
        stderr
    )
    assert "give a local folder" in stderr and len(stderr.strip().splitlines()) == 1
    assert not out.exists()


def test_partial_failures_exit_0_and_are_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Some failed rows of a model that made others: exit 0, one warning naming the model."""
    run = build_run(tmp_path / "run", n_prompts=8, models={"toy-bad": 0.1}, n_errors=2)
    from glyphbench.cli.run import fail_when_a_model_failed

    rows = pd.read_parquet(run / "results.parquet")
    fail_when_a_model_failed(rows)  # no exit
    err = capsys.readouterr().err
    assert "warning: toy-bad: 2 of 8 rows failed" in err and "retries them" in err

    # A label and an error that quote prompt text reach the terminal escaped, on one line.
    rows["model"] = "bad\x1b]8;;http://x\x1b\\"
    rows.loc[rows["error"] != "", "error"] = "cannot draw 'A\x1b[2J\nB'"
    fail_when_a_model_failed(rows)
    err = capsys.readouterr().err
    assert "\x1b" not in err and err.count("\n") == 1 and "\\u001b]8;;http://x" in err


def test_dry_run_names_the_model_whose_weights_are_unreachable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], offline_hub: Path, tiny_sd: Path
) -> None:
    out = tmp_path / "run"
    models = f"control:render,diffusers:{tiny_sd},diffusers:{UNCACHED}"
    code, stdout, stderr = cli(
        ["run", "-m", models, "--sample", "4", "--out", str(out), "--dry-run"], capsys
    )
    assert code == 3, stderr
    assert f"weights: local folder {tiny_sd}" in stdout
    assert f"CANNOT RUN: {UNCACHED} not in the local cache ({offline_hub})" in stdout
    assert stderr.count("error: model") == 1 and UNCACHED in stderr and "tiny-sd" not in stderr
    assert not out.exists()
    # the same plan with the reachable models only: exit 0, JSON names where weights are
    code, stdout, stderr = cli(
        [
            "run",
            "-m",
            f"diffusers:{tiny_sd}",
            "--limit",
            "2",
            "--out",
            str(out),
            "--dry-run",
            "--json",
        ],
        capsys,
    )
    assert code == 0, stderr
    (model,) = json.loads(stdout)["models"]
    assert model["weights"] == {"source": f"local folder {tiny_sd}", "problem": None}


def test_dry_run_finds_a_hub_model_in_the_cache(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], offline_hub: Path, tiny_sd: Path
) -> None:
    """A model whose pipeline is in the hub cache runs offline; one missing a component
    folder does not, and the plan says so."""
    import shutil

    snapshot = offline_hub / "models--someone--tiny" / "snapshots" / ("a" * 40)
    shutil.copytree(tiny_sd, snapshot)
    (offline_hub / "models--someone--tiny" / "refs").mkdir()
    (offline_hub / "models--someone--tiny" / "refs" / "main").write_text("a" * 40)
    args = ["run", "-m", "diffusers:someone/tiny", "--limit", "2", "--dry-run"]
    code, stdout, stderr = cli([*args, "--out", str(tmp_path / "a")], capsys)
    assert code == 0 and "weights: hub cache" in stdout, stdout + stderr
    shutil.rmtree(snapshot / "unet")
    code, stdout, stderr = cli([*args, "--out", str(tmp_path / "b")], capsys)
    assert code == 3 and "CANNOT RUN: someone/tiny not in the local cache" in stdout


@pytest.mark.slow
def test_run_and_report_print_the_same_answer_with_intervals_and_verdicts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], tiny_sd: Path
) -> None:
    """The run's answer (--json) is the report's answer.json, number for number; the
    terminal shows intervals, ranks and the verdict against the controls."""
    out = tmp_path / "run"
    models = f"{CONTROLS},diffusers:{tiny_sd}"
    args = ["run", "-m", models, "--sample", "8", "--out", str(out), "--no-progress"]
    code, stdout, stderr = cli([*args, "--json"], capsys)
    assert code == 0, stderr
    from_run = json.loads(stdout)
    assert from_run["schema"] == "glyphbench.answer/1"
    assert from_run["results"] == str(out / "results.parquet")
    tiny = next(m for m in from_run["models"] if not m["control"])
    assert tiny["verdict"] == "no better than a blank image"  # noise: it draws no text
    assert tiny["metrics"]["ned"]["lo"] is not None and tiny["n_prompts"] == 8
    code, stdout, stderr = cli(["report", str(out), "--json"], capsys)
    assert code == 0, stderr
    from_report = json.loads(stdout)
    assert from_report["report"].endswith("index.html")
    keys = ("headline", "models", "metrics", "primary_metric", "n_boot", "seed", "reader_error")
    for key in keys:
        assert from_run[key] == from_report[key], key
    code, stdout, stderr = cli(["report", str(out)], capsys)
    assert code == 0 and stdout.rstrip().endswith("index.html")
    assert "One model (diffusers:tiny-sd): nothing to rank it against" in stdout
    assert "no better than a blank" in stdout and "vs controls" in stdout
    assert "[0.000, 0.000]" in stdout and "95% intervals" in stdout


def test_the_answer_fits_80_columns_and_cuts_no_number(tmp_path: Path) -> None:
    from rich.console import Console

    from glyphbench.report.console import print_answer

    run = build_run(tmp_path / "run", n_prompts=12, models={"a-long-model-name": 0.05})
    index = write_report([run], tmp_path / "report", n_boot=100, by=["prompt_type"])
    answer = json.loads((index.parent / ANSWER).read_text(encoding="utf-8"))
    console = Console(width=80, record=True, color_system=None)
    print_answer(answer, console)
    text = console.export_text()
    assert max(map(len, text.splitlines())) <= 80
    lines = {m["model"]: m for m in answer["models"]}
    ned = lines["a-long-model-name"]["metrics"]["ned"]
    assert f"[{ned['lo']:.3f}, {ned['hi']:.3f}]" in text
    assert "…" not in text


def test_a_controls_only_report_opens_without_a_rank_shared_by_nobody(tmp_path: Path) -> None:
    run = build_run(
        tmp_path / "run",
        n_prompts=8,
        models={"control:render": 0.0, "control:blank": 1.0},
    )
    index = write_report([run], tmp_path / "report", n_boot=50, by=["prompt_type"])
    html = index.read_text(encoding="utf-8")
    answer = html[html.index('id="answer"') : html.index('id="summary"')]
    assert "share rank 1" not in answer and "significantly best" not in answer
    assert "Only control models" in answer


def test_a_report_of_runs_whose_every_row_failed_exits_1_as_the_run_did(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`report` of a run where every row failed exited 0 where `run` exited 1."""
    from glyphbench.core.io import write_checksum, write_table
    from tests.helpers.cli_runs import invoke_cli

    run = build_run(tmp_path / "run", n_prompts=4, models={"m": 0.1}, with_images=False)
    code, _, err = invoke_cli(["report", run, "--n-boot", "10"], capsys)
    assert code == 0, err
    rows = pd.read_parquet(run / "results.parquet")
    rows["error"] = "Generate: RuntimeError: boom"
    write_table(rows, run / "results.parquet")
    write_checksum(run / "results.parquet")
    code, _, err = invoke_cli(["report", run, "--n-boot", "10"], capsys)
    assert code == 1 and "every row of the reported runs failed (4 of 4)" in err, err
    assert (run / "report" / "index.html").is_file()  # the page shows the failures


def test_report_json_escapes_a_labels_terminal_controls_and_stays_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`report --json` printed a label's U+202E and ESC raw on stdout."""
    import json

    from glyphbench.core.io import write_checksum, write_table
    from tests.helpers.cli_runs import invoke_cli

    run = build_run(tmp_path / "run", n_prompts=4, models={"m": 0.1}, with_images=False)
    rows = pd.read_parquet(run / "results.parquet")
    rows["model"] = "m\u202egnp\x1b[2J"
    write_table(rows, run / "results.parquet")
    write_checksum(run / "results.parquet")
    code, out, err = invoke_cli(["report", run, "--n-boot", "10", "--json"], capsys)
    assert code == 0, err
    assert "\u202e" not in out and "\x1b" not in out
    assert json.loads(out)["models"][0]["model"] == "m\u202egnp\x1b[2J"
