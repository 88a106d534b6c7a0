"""The report's first screen says which model is best and how sure,
placing every model against the controls of its run."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from glyphbench.report.build import write_report
from glyphbench.report.verdict import verdicts
from tests.helpers.report_fixtures import build_run

CONTROLS = {
    "control:render": 0.0,
    "control:typo?rate=0.1": 0.1,
    "control:typo?rate=0.3": 0.3,
    "control:blank": 1.0,
}


@pytest.mark.slow
def test_an_untrained_model_alone_is_no_better_than_blank_unranked_and_never_bold(
    tmp_path: Path,
) -> None:
    run = build_run(tmp_path / "run", n_prompts=16, models={"untrained": 1.0, **CONTROLS})
    index = write_report([run], tmp_path / "report", n_boot=100, by=["prompt_type"])
    html = index.read_text(encoding="utf-8")
    answer = html[html.index('id="answer"') : html.index('id="summary"')]
    assert "One model (untrained): nothing to rank it against" in answer
    assert "no better than a blank image" in answer
    tables = tmp_path / "report" / "tables"
    assert r"\textbf" not in (tables / "summary.tex").read_text(encoding="utf-8")
    assert 'class="num best"' not in html
    ranking = pd.read_csv(tables / "ranking.md", sep="|", skiprows=[1]).iloc[:, 1:-1]
    assert ranking.iloc[0, 0].strip() == "– (nothing to compare)"


@pytest.mark.slow
def test_models_are_placed_on_the_control_ladder_and_the_best_named_when_significant(
    tmp_path: Path,
) -> None:
    run = build_run(
        tmp_path / "run", n_prompts=30, models={"good": 0.0, "bad": 0.5, **CONTROLS}, n_errors=0
    )
    index = write_report([run], tmp_path / "report", n_boot=200, by=["prompt_type"])
    html = index.read_text(encoding="utf-8")
    answer = html[html.index('id="answer"') : html.index('id="summary"')]
    assert "good is best on NED" in answer and "significantly better than every other" in answer
    placed = pd.read_csv(tmp_path / "report" / "tables" / "verdicts.csv").set_index("model")
    good = placed.loc["good"]  # draws the text exactly, as render does: at the top
    assert good["level"] == "ceiling" or good["verdict"] in {
        "between typo 10% and render",
        "level with typo 10%",  # 30 prompts cannot always tell 0.96 from typo 10%'s 0.93
    }
    assert placed.loc["bad", "verdict"] == "between blank and typo 30%"  # half its letters wrong
    assert "blank +" in placed.loc["bad", "controls"]
    assert r"\textbf" in (tmp_path / "report" / "tables" / "summary.tex").read_text("utf-8")


def test_verdicts_without_controls_say_so() -> None:
    frame = pd.DataFrame({"model": ["m"] * 6, "prompt_id": list(range(6)), "ned": [0.5] * 6})
    assert verdicts(frame, ["m"], [], "ned", n_boot=10, seed=0).empty
