"""`glyphbench human sample` on a small run: defaults adapt, errors say what to pass."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from glyphbench.cli.root import app
from glyphbench.core.errors import InputError
from tests.helpers.human_fixtures import make_run


def test_defaults_adapt_to_a_small_run(tmp_path: Path) -> None:
    # like the demo's run: one image per (group, model) cell, far fewer than 1000 images
    run = make_run(tmp_path / "run", per_cell=1)
    result = CliRunner().invoke(app, ["human", "sample", str(run), "--out", str(tmp_path / "s")])
    assert result.exit_code == 0, result.output
    assert "adapted to the run: --min-per-cell 1 (default 10)" in result.output
    assert "adapted to the run: --n 9 (default 1000)" in result.output
    # 9 control images with a known answer: fewer gold items than --gold's 20, and said so
    assert "adapted to the run: --gold 20 -> 9 (the control images with a known answer" in (
        result.output
    )
    assert "+ 9 gold" in result.output
    config = json.loads((tmp_path / "s" / "study.json").read_text())
    assert config["n"] == 9 and config["min_per_cell"] == 1 and len(config["design_notes"]) == 3


def test_controls_in_the_sample_leave_fewer_gold_items_and_it_is_said(tmp_path: Path) -> None:
    """--include-controls with every image sampled leaves no control for gold: "+ 0 gold"
    was all the command said; a run of controls alone names --include-controls."""
    run = make_run(tmp_path / "run", per_cell=1)
    args = ["human", "sample", str(run), "--out", str(tmp_path / "s"), "--include-controls"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "--gold 20 -> 0" in result.output and "--include-controls put the others" in (
        result.output
    )
    controls = make_run(tmp_path / "controls", per_cell=1, models=())
    refused = CliRunner().invoke(
        app, ["human", "sample", str(controls), "--out", str(tmp_path / "c")]
    )
    assert isinstance(refused.exception, InputError)
    assert "every usable image of the runs is a control's" in str(refused.exception)
    assert "--include-controls" in str(refused.exception) and not (tmp_path / "c").exists()


def test_given_values_are_kept_and_a_refusal_says_what_to_pass(tmp_path: Path) -> None:
    run = make_run(tmp_path / "run", per_cell=2)
    runner = CliRunner()
    args = ["human", "sample", str(run), "--out", str(tmp_path / "s")]
    refused = runner.invoke(app, [*args, "--min-per-cell", "5"])
    assert isinstance(refused.exception, InputError)  # one line, exit 2 through glyphbench.cli.main
    message = str(refused.exception)
    assert message.startswith("cannot give every cell 5 images")  # no stray "[sample]: "
    assert "pass --min-per-cell 2" in message
    too_many = runner.invoke(app, [*args, "--n", "500"])
    assert str(too_many.exception).endswith("pass --n 18 or less")
    unknown = runner.invoke(app, [*args, "--cells", "colour"])
    assert str(unknown.exception).startswith("--cells: unknown column 'colour'")
    assert "prompt_type" in str(unknown.exception)  # the full list of columns
    given = runner.invoke(app, [*args, "--n", "9", "--min-per-cell", "1"])
    assert given.exit_code == 0, given.output
    assert "adapted to the run: --n" not in given.output
    assert "adapted to the run: --min-per-cell" not in given.output
