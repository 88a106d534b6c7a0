"""A report on unread rows says so and counts only read rows; a
report is written beside its folder and renamed into place, so the old one stays whole."""

from __future__ import annotations

import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from glyphbench.core.errors import InputError
from glyphbench.core.staging import staged_folder
from glyphbench.report.build import REPORT_FILES, REPORT_MARKERS, write_report
from glyphbench.run.config import RunConfig
from glyphbench.run.operations import run_benchmark
from glyphbench.run.read_later import read_run
from tests.helpers.cli_errors import glyphbench
from tests.helpers.paths import REPO_ROOT
from tests.helpers.report_fixtures import build_run
from tests.helpers.runner_helper import prompt_set, register

register()
REPO = REPO_ROOT


def read_later_run(out: Path) -> Path:
    """A run made with --read-later: 2 models x 5 prompts x 2 seeds, nothing read."""
    config = RunConfig.from_mapping(
        {
            "models": ["control:render?size=64", "control:blank?size=64"],
            "batch_size": 4,
            "seeds": [0, 1],
            "ocr": "pixelocr",
            "out": str(out),
        }
    )
    run_benchmark(config, prompt_set=prompt_set(5), progress=False, read_later=True)
    return out


@pytest.mark.slow
def test_a_report_on_half_read_rows_says_so_above_the_summary_and_counts_read_rows(
    tmp_path: Path,
) -> None:
    run = read_later_run(tmp_path / "run")
    read_run(run, shard="0/2", workers=0, progress=False)  # about half the images read
    rows = pd.read_parquet(run / "results.parquet")
    read = rows["ocr_text"].notna()
    assert 0 < read.sum() < len(rows)
    index = write_report([run], tmp_path / "report", n_boot=20)
    summary = pd.read_csv(tmp_path / "report" / "tables" / "summary.csv")
    for model, n in summary.set_index("model")["n"].items():
        assert n == int(read[rows["model"] == model].sum()), model  # read rows only
    meta = json.loads((tmp_path / "report" / "report.json").read_text(encoding="utf-8"))
    assert meta["n_unread"] == int((~read).sum())
    html = index.read_text(encoding="utf-8")
    notice = html.index('id="rows"')
    assert notice < html.index('id="summary"')
    assert "not read yet" in html[notice : html.index('id="summary"')]
    assert f"{int((~read).sum())} rows have an image but no reading yet" in html


def test_a_report_on_a_run_with_nothing_read_is_refused_and_writes_nothing(
    tmp_path: Path,
) -> None:
    run = read_later_run(tmp_path / "run")
    with pytest.raises(InputError, match="none of the 20 rows has been read yet"):
        write_report([run], tmp_path / "report", n_boot=20)
    assert not (tmp_path / "report").exists()
    assert [p.name for p in tmp_path.iterdir()] == ["run"]  # no temporary folder left


@pytest.mark.slow
def test_failed_rows_are_stated_above_the_summary(tmp_path: Path) -> None:
    run = build_run(tmp_path / "run", n_prompts=8, n_errors=3, with_images=False)
    index = write_report([run], tmp_path / "report", n_boot=20)
    html = index.read_text(encoding="utf-8")
    block = html[html.index('id="rows"') : html.index('id="summary"')]
    assert "toy-bad: 3 failed" in block


def digest(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_a_failing_report_leaves_the_old_one_whole_and_no_temporary_folder(
    tmp_path: Path,
) -> None:
    target = tmp_path / "report"
    target.mkdir()
    (target / "report.json").write_text("{}", encoding="utf-8")
    (target / "index.html").write_text("old", encoding="utf-8")
    before = digest(target)
    with pytest.raises(RuntimeError), staged_folder(target, REPORT_MARKERS, "report") as staged:
        (staged / "index.html").write_text("new", encoding="utf-8")
        raise RuntimeError("killed part-way")
    assert digest(target) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report"]
    with staged_folder(target, REPORT_MARKERS, "report") as staged:
        (staged / "index.html").write_text("new", encoding="utf-8")
    assert digest(target) == {"index.html": hashlib.sha256(b"new").hexdigest()}


def test_a_report_never_replaces_a_folder_that_is_not_a_report(tmp_path: Path) -> None:
    run = build_run(tmp_path / "run", n_prompts=6, with_images=False)
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("keep me", encoding="utf-8")
    with pytest.raises(InputError, match="not a report folder"):
        write_report([run], mine, n_boot=20)
    assert digest(mine) == {"thesis.tex": hashlib.sha256(b"keep me").hexdigest()}


@pytest.mark.slow
def test_sigterm_mid_report_leaves_the_old_report_intact_and_no_mixed_folder(
    tmp_path: Path,
) -> None:
    old = build_run(tmp_path / "old", n_prompts=8, with_images=False)
    write_report([old], tmp_path / "report", n_boot=20)
    before = digest(tmp_path / "report")
    new = build_run(tmp_path / "new", n_prompts=30, models={"toy-good": 0.04}, with_images=False)
    started = time.time()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "glyphbench",
            "report",
            str(new),
            "--out",
            str(tmp_path / "report"),
            "--n-boot",
            "3000",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def written_since_start() -> bool:  # a table of the new report is on disk somewhere
        return any(
            p.stat().st_mtime > started for p in tmp_path.rglob("*.md") if "old" not in p.parts
        )

    deadline = time.time() + 120
    while not written_since_start() and process.poll() is None and time.time() < deadline:
        time.sleep(0.01)
    assert process.poll() is None, "the report finished before a table was written"
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143
    assert "terminated: nothing written;" in err
    assert digest(tmp_path / "report") == before  # the old report, every file as it was
    assert sorted(p.name for p in tmp_path.iterdir()) == ["new", "old", "report"]


def test_ctrl_c_mid_report_says_nothing_was_written_and_exits_130(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from glyphbench.report import build

    old = build_run(tmp_path / "old", n_prompts=6, with_images=False)
    write_report([old], tmp_path / "report", n_boot=20)
    before = digest(tmp_path / "report")

    def interrupted(*args: object, **kwargs: object) -> None:  # Ctrl-C inside the staged folder
        raise KeyboardInterrupt

    monkeypatch.setattr(build, "write_json", interrupted)
    args = ["report", str(old), "--out", str(tmp_path / "report"), "--n-boot", "20"]
    code, err = glyphbench(args, capsys)
    assert code == 130
    assert f"interrupted: nothing written; {tmp_path / 'report'} is as it was before" in err, err
    assert "Traceback" not in err
    assert digest(tmp_path / "report") == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old", "report"]


def test_a_report_never_replaces_a_folder_holding_its_run_or_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`report site/run --out site` deleted the run (an index.html of the user's own made
    `site` look like a report); `--out .` was a traceback."""
    site = tmp_path / "site"
    run = build_run(site / "run", n_prompts=6, with_images=False)
    (site / "index.html").write_text("<html>my site</html>", encoding="utf-8")
    (site / "report.json").write_text("{}", encoding="utf-8")  # even one that looks like ours
    with pytest.raises(InputError, match=r"holds .*run, which the report would delete"):
        write_report([run], site, n_boot=20)
    assert (run / "run.json").is_file() and (site / "index.html").is_file()
    monkeypatch.chdir(tmp_path / "site")
    with pytest.raises(InputError, match="holds the current folder"):
        write_report([run], ".", n_boot=20)


def test_an_output_named_by_a_link_replaces_the_folder_it_points_at(tmp_path: Path) -> None:
    """The link was replaced by a real folder, the old report left where the link pointed
    and a temporary link left beside it."""
    real = tmp_path / "real"
    real.mkdir()
    (real / "report.json").write_text("old", encoding="utf-8")
    link = tmp_path / "link"
    link.symlink_to(real)
    with staged_folder(link, REPORT_MARKERS, "report") as staged:
        (staged / "report.json").write_text("new", encoding="utf-8")
    assert link.is_symlink() and (real / "report.json").read_text() == "new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link", "real"]


def test_a_report_folder_holding_the_users_own_files_is_not_replaced(tmp_path: Path) -> None:
    """A re-run of `report --out rep` deleted notes the user had put in rep (exit 0)."""
    run = build_run(tmp_path / "run", n_prompts=6, with_images=False)
    out = tmp_path / "rep"
    write_report([run], out, n_boot=20)
    assert {p.name for p in out.iterdir()} <= set(REPORT_FILES)  # the list is complete
    (out / "notes.md").write_text("my notes", encoding="utf-8")
    with pytest.raises(InputError, match=r"notes\.md: not written by a report"):
        write_report([run], out, n_boot=20)
    assert (out / "notes.md").read_text() == "my notes"
    (out / "notes.md").unlink()
    write_report([run], out, n_boot=20)  # its own files only: replaced
