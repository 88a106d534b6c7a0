"""Commands that take a run accept the folder above it (the demo's) or say which to pass."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from glyphbench.cli.root import app
from glyphbench.core.errors import InputError
from glyphbench.core.io import locate_run, write_json
from tests.helpers.human_fixtures import make_run


@pytest.fixture(scope="module")
def demo_like(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder laid out like `glyphbench demo --out demo_out`: the run is demo_out/run."""
    top = tmp_path_factory.mktemp("demo_out")
    make_run(top / "run")
    (top / "report").mkdir()
    return top


def test_the_run_inside_a_folder_is_found_and_named(demo_like: Path, capsys) -> None:
    assert locate_run(demo_like) == demo_like / "run"
    assert "using the run folder inside it" in capsys.readouterr().err
    assert locate_run(demo_like / "run") == demo_like / "run"


def test_several_runs_or_none_name_what_to_pass(demo_like: Path, tmp_path: Path) -> None:
    shutil.copytree(demo_like / "run", tmp_path / "a")
    shutil.copytree(demo_like / "run", tmp_path / "b")
    with pytest.raises(InputError, match=r"several runs, pass one: .*a, .*b"):
        locate_run(tmp_path)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"no run\.json or results\.parquet"):
        locate_run(tmp_path / "empty")
    (tmp_path / "a" / "results.parquet").unlink()
    with pytest.raises(InputError, match="has the run finished"):
        locate_run(tmp_path / "a")


@pytest.mark.slow
def test_human_sample_and_report_take_the_demo_folder(demo_like: Path, tmp_path: Path) -> None:
    runner = CliRunner()
    sampled = runner.invoke(app, ["human", "sample", str(demo_like), "--out", str(tmp_path / "s")])
    assert sampled.exit_code == 0, sampled.output
    assert (tmp_path / "s" / "study.json").is_file()
    reported = runner.invoke(app, ["report", str(demo_like), "--out", str(tmp_path / "r")])
    assert reported.exit_code == 0, reported.output
    assert (tmp_path / "r" / "index.html").is_file()


def test_json_files_never_hold_bare_nan(tmp_path: Path) -> None:
    write_json(tmp_path / "x.json", {"mean": float("nan"), "rows": [float("-inf"), 1.0]})
    text = (tmp_path / "x.json").read_text(encoding="utf-8")
    assert "NaN" not in text and "Infinity" not in text
    assert json.loads(text) == {"mean": None, "rows": [None, 1.0]}
