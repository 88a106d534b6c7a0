"""Damaged files elsewhere: export checks every image against its SHA-256,
`human sample` names a damaged image and leaves no partial study, a FIFO in an
`images:` manifest is `Unreadable:`, and `human serve` refuses impossible ports and
hosts in one line (docs/reliability.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from glyphbench.cli.export import export_run
from glyphbench.core.errors import InputError
from glyphbench.run.config import RunConfig
from glyphbench.run.operations import run_benchmark
from tests.helpers.paths import REPO_ROOT
from tests.helpers.runner_helper import PixelOCR, prompt_set, register

register()
REPO = REPO_ROOT


def generate(out: Path) -> pd.DataFrame:
    config = RunConfig.from_mapping(
        {"models": ["control:render?size=64"], "batch_size": 4, "seeds": [0],
         "ocr": "pixelocr", "out": str(out)}
    )  # fmt: skip
    result = run_benchmark(config, prompt_set=prompt_set(6), reader=PixelOCR(), progress=False)
    assert result.results is not None
    return result.results


def test_export_refuses_images_that_do_not_match_their_sha256(tmp_path: Path) -> None:
    rows = generate(tmp_path / "run")
    damaged = str(rows["image_path"].iloc[2])
    path = tmp_path / "run" / damaged
    path.write_bytes(path.read_bytes()[:100])  # truncated: still a file, not the image
    with pytest.raises(InputError, match="does not match its image_sha256") as refused:
        export_run(tmp_path / "run", tmp_path / "export")
    assert damaged in str(refused.value.source) and "1 of 6" in str(refused.value)
    assert not (tmp_path / "export").exists()  # nothing half-written


def test_an_export_stopped_part_way_leaves_no_folder_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import shutil

    generate(tmp_path / "run")
    copied: list[str] = []
    real_copy = shutil.copy2

    def copy_then_stop(source: Path, target: Path) -> None:  # Ctrl-C after the second image
        if len(copied) == 2:
            raise KeyboardInterrupt
        copied.append(str(target))
        real_copy(source, target)

    monkeypatch.setattr(shutil, "copy2", copy_then_stop)
    with pytest.raises(KeyboardInterrupt):
        export_run(tmp_path / "run", tmp_path / "export")
    assert len(copied) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # no export, no temporary
    monkeypatch.setattr(shutil, "copy2", real_copy)
    folder, warnings = export_run(tmp_path / "run", tmp_path / "export")
    assert len(list((folder / "images").rglob("*.png"))) == 6 and warnings == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["export", "run"]


def test_an_export_onto_a_file_is_refused(tmp_path: Path) -> None:
    generate(tmp_path / "run")
    (tmp_path / "export").write_text("mine", encoding="utf-8")
    with pytest.raises(InputError, match="not a folder; choose another --hf-dataset"):
        export_run(tmp_path / "run", tmp_path / "export")
    assert (tmp_path / "export").read_text(encoding="utf-8") == "mine"


def glyphbench(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "glyphbench", *args],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    sys.path.insert(0, str(REPO / "tests"))
    from glyphbench.human_eval.study import create_study
    from tests.helpers.human_fixtures import make_run

    root = tmp_path_factory.mktemp("serve")
    run = make_run(root / "run", image_size=32)
    create_study([run], root / "study", n=9, min_per_cell=1, progress=False)
    return root / "study"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("flag", "value", "said"),
    [("--port", "99999", "--port 99999 is not a port"), ("--host", "999.1.1.1", "--host")],
)
def test_serve_refuses_impossible_ports_and_hosts_in_one_line(
    study: Path, flag: str, value: str, said: str
) -> None:
    done = glyphbench("human", "serve", str(study), flag, value)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and said in done.stderr


def test_human_sample_names_a_damaged_image_and_leaves_no_study(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "tests"))
    from glyphbench.human_eval.study import create_study
    from tests.helpers.human_fixtures import make_run

    run = make_run(tmp_path / "run", image_size=32)
    rows = pd.read_parquet(run / "results.parquet")
    damaged = [p for p in rows["image_path"].dropna().astype(str) if p]
    for relative in damaged:  # every image damaged: whichever is sampled, one is bad
        path = run / relative
        path.write_bytes(path.read_bytes()[:60])
    with pytest.raises(InputError, match="cannot read the sampled image") as refused:
        create_study([run], tmp_path / "study", n=9, min_per_cell=1, progress=False)
    assert str(refused.value.source).endswith(".png")
    assert not (tmp_path / "study").exists()


@pytest.mark.timeout(120)
@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_in_an_images_manifest_is_an_unreadable_row(tmp_path: Path) -> None:
    import io

    from rich.console import Console

    made = generate(tmp_path / "made")
    fifo = tmp_path / "p01.png"
    os.mkfifo(fifo)  # opening it to read would wait for a writer forever
    good = tmp_path / "made" / str(made["image_path"].iloc[0])
    manifest = tmp_path / "list.csv"
    manifest.write_text(f"prompt_id,path\np00,{good}\np01,{fifo}\n")
    config = RunConfig.from_mapping(
        {"models": [f"images:{manifest}"], "seeds": [0], "ocr": "pixelocr",
         "out": str(tmp_path / "scored")}
    )  # fmt: skip
    console = Console(file=io.StringIO(), width=400)
    result = run_benchmark(
        config, prompt_set=prompt_set(2), reader=PixelOCR(), progress=False, console=console
    )
    assert result.results is not None
    errors = dict(zip(result.results["prompt_id"], result.results["error"], strict=True))
    assert errors["p00"] == ""
    assert errors["p01"] == "Unreadable: p01.png: not a regular file (a FIFO)"


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["read", "RUN", "--read-workers", "abc"], "error: Invalid value for '--read-workers'"),
        (["human", "serve", "STUDY", "--port", "abc"], "error: Invalid value for '--port'"),
        (["read"], "error: Missing argument"),
        (["no-such-command"], "error: No such command"),
    ],
)
def test_flags_typer_checks_are_one_line_too(args: list[str], said: str) -> None:
    done = glyphbench(*args)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and done.stderr.startswith(said), done.stderr


@pytest.mark.slow
def test_a_sample_larger_than_the_pool_is_refused_with_its_size(tmp_path: Path) -> None:
    from glyphbench.prompts.selection import select
    from tests.helpers.runner_helper import write_prompts_csv

    csv = write_prompts_csv(tmp_path / "prompts.csv", 5)
    with pytest.raises(InputError, match=r"--sample 999999999 is larger than the pool: 5 prompt"):
        select(f"csv:{csv}", sample=999999999)
    assert len(select(f"csv:{csv}", sample=5)) == 5  # the whole pool, asked for, is fine
    done = glyphbench(
        "prompts", "select", "default", "--sample", "999999999", "--out", str(tmp_path / "x.csv")
    )
    assert done.returncode == 2 and "is larger than the pool" in done.stderr


@pytest.mark.slow
def test_a_report_on_an_incomplete_run_says_so_at_the_top(tmp_path: Path) -> None:
    from glyphbench.run.operations import merge_run

    config = RunConfig.from_mapping(
        {"models": ["control:render?size=64", "control:blank?size=64"], "batch_size": 4,
         "seeds": [0], "ocr": "pixelocr", "out": str(tmp_path / "run")}
    )  # fmt: skip
    run_benchmark(config, prompt_set=prompt_set(6), reader=PixelOCR(), progress=False)
    for part in (tmp_path / "run" / "parts").glob("*/control_blank*/*.parquet"):
        part.unlink()  # as if the run had stopped half-way: 6 of 12 rows
    merge_run(tmp_path / "run")
    done = glyphbench("report", str(tmp_path / "run"), "--out", str(tmp_path / "report"))
    assert done.returncode == 0, done.stderr[-2000:]
    page = (tmp_path / "report" / "index.html").read_text(encoding="utf-8")
    top = page.index('<section id="incomplete">')
    assert top < page.index('<section id="summary">')
    assert "incomplete run: 6 of 12 rows made" in page


def test_report_tables_neutralise_spreadsheet_formulas(tmp_path: Path) -> None:
    from glyphbench.report.tables import write_table_set

    raw = pd.DataFrame({"model": ["=cmd|' /C calc'!A0", "@SUM(1)", "fine"], "ned": [-0.5, 1, 2]})
    write_table_set(tmp_path, "summary", raw)
    back = pd.read_csv(tmp_path / "summary.csv")
    assert back["model"].tolist() == ["'=cmd|' /C calc'!A0", "'@SUM(1)", "fine"]
    assert back["ned"].tolist() == [-0.5, 1, 2]  # numbers stay numbers


def test_a_damaged_shard_json_is_set_aside_and_the_run_resumes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A shard.json that was no JSON blocked every resume ("malformed JSON", exit 2) with no
    fix named; it holds facts about processes, not rows."""
    from tests.helpers.cli_runs import run_cli

    out = tmp_path / "run"
    args = ["run", "--models", "control:render?size=64", "--sample", "3", "--out", str(out)]
    code, err = run_cli([*args, "--no-progress"], capsys)
    assert code == 0, err
    [shard_json] = list((out / "parts").glob("*/shard.json"))
    shard_json.write_text("{not json", encoding="utf-8")
    code, err = run_cli([*args, "--no-progress"], capsys)
    assert code == 0 and "set aside as shard.json.damaged" in err, err
    assert json.loads(shard_json.read_text(encoding="utf-8"))["finished"] is True
    assert shard_json.with_name("shard.json.damaged").read_text(encoding="utf-8") == "{not json"
