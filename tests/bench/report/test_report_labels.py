"""A control row is never bold as best; the NED column says its direction."""

from __future__ import annotations

import pandas as pd
import pytest

from glyphbench.core.io import write_checksum
from glyphbench.report import display
from glyphbench.report.console import metric_header


def _summary() -> pd.DataFrame:
    rows = []
    for model, ned in (("model-a", 1.0), ("model-b", 0.5), ("control:render", 1.0)):
        rows.append(
            {"model": model, "n": 4, "n_errors": 0, "ned": ned, "ned_lo": ned, "ned_hi": ned}
        )
    return pd.DataFrame(rows)


def _won(better: str | None) -> pd.DataFrame:
    return pd.DataFrame(
        {"model_a": ["model-a"], "model_b": ["model-b"], "metric": ["ned"], "better": [better]}
    )


def test_control_rows_are_never_bold_even_when_they_equal_the_best_model() -> None:
    summary = _summary()
    shown = display.summary_display(summary, ["ned"], ["control:render"])
    models = ["model-a", "model-b"]
    marks = display.best_marks(summary, ["ned"], models, _won("model-a"))
    column = list(shown.columns).index(display.metric_header("ned"))

    def bold(marked: object) -> list[bool]:
        table = display.html_table(shown, classes=marks, marked=marked)  # type: ignore[arg-type]
        return ["best" in row[column].cls for row in table.rows]

    assert bold(display.best_rows(_won("model-a"), ["ned"], models)) == [True, False, False]
    assert bold(None) == [True, False, True]  # what the report showed before the change


def test_bold_only_for_a_model_significantly_better_than_every_other() -> None:
    """One model alone, or a best no comparison separates, is never bold."""
    summary = _summary()
    assert display.best_marks(summary, ["ned"], ["model-a", "model-b"], _won(None)) == {}
    assert display.best_marks(summary, ["ned"], ["model-a"], _won(None).iloc[:0]) == {}
    assert display.best_marks(summary, ["ned"], ["model-a", "model-b"]) == {}  # no comparisons


def test_ned_header_says_it_is_a_similarity_with_1_exact() -> None:
    assert metric_header("ned") == "NED similarity (1 = exact) ↑"
    assert display.metric_header("ned") == "NED similarity (1 = exact) ↑"


# ----------------------------------------------------------------------------- discovery
def test_unknown_by_column_lists_every_valid_column_and_a_close_match() -> None:
    import pytest

    from glyphbench.core.errors import InputError
    from glyphbench.report.slices import Slicing

    columns = {f"attribute_{i:02d}": ["x"] for i in range(60)}  # more than the old cut (40)
    frame = pd.DataFrame({"model": ["m"], "prompt_type": ["simple"], **columns})
    with pytest.raises(InputError) as info:
        Slicing.resolve(frame, ["prompt_typ", "nope"])
    problem = info.value.problem
    assert "unknown columns 'prompt_typ', 'nope'" in problem
    assert "did you mean 'prompt_type'?" in problem
    assert "valid columns (61):" in problem and "attribute_59" in problem
    assert "'model'" not in problem.split("valid columns")[1]


@pytest.mark.parametrize("score", ["ned", "algorithm1", "cvtg_word_ned", "cer"])
def test_a_score_column_is_refused_as_a_slice_and_not_offered(score: str) -> None:
    from glyphbench.core.errors import InputError
    from glyphbench.report.slices import Slicing

    frame = pd.DataFrame({"model": ["m"], "prompt_type": ["simple"], score: [0.5]})
    with pytest.raises(InputError, match=f"cannot use the score column '{score}'"):
        Slicing.resolve(frame, [score])  # it was a ValueError traceback ("not unique")
    with pytest.raises(InputError) as info:
        Slicing.resolve(frame, ["nope"])
    assert info.value.problem.endswith("valid columns (1): prompt_type")


@pytest.mark.slow
def test_default_slices_left_out_are_named_with_the_reason(tmp_path, capsys) -> None:
    import json

    from glyphbench.report import write_report
    from tests.helpers.report_fixtures import build_run

    run = build_run(tmp_path / "run", n_prompts=12, with_images=False)
    results = pd.read_parquet(run / "results.parquet")
    results["laion_freq"] = None
    results.drop(columns=["cefr"]).to_parquet(run / "results.parquet")
    write_checksum(run / "results.parquet")  # the table's sidecar follows the edit
    index = write_report([run], n_boot=20, seed=0, progress=True)
    meta = json.loads((index.parent / "report.json").read_text())
    assert "laion_freq" not in meta["by"] and "cefr" not in meta["by"]
    assert meta["by_skipped"] == {
        "cefr": "not in the results (the prompt set has no such column)",
        "laion_freq": "no values: every row is missing it",
    }
    html = index.read_text(encoding="utf-8")
    assert "Default slices left out: cefr (not in the results" in html
    assert "laion_freq (no values: every row is missing it)" in capsys.readouterr().err
    # An explicit --by is what the user asked for: nothing is reported as left out.
    index = write_report([run], tmp_path / "explicit", by=["prompt_type"], n_boot=20)
    assert json.loads((index.parent / "report.json").read_text())["by_skipped"] == {}


def test_unknown_stratify_column_lists_every_valid_column() -> None:
    import pytest

    from glyphbench.core.errors import InputError
    from glyphbench.prompts.stratify import sample_frame

    frame = pd.DataFrame({f"attribute_{i:02d}": ["x", "y"] for i in range(50)})
    with pytest.raises(InputError) as info:
        sample_frame(frame, 1, ["nope"], seed=0, floor=0)
    assert "unknown column(s) ['nope']" in info.value.problem
    assert "valid columns: attribute_00, " in info.value.problem
    assert info.value.problem.endswith("attribute_49")


def test_a_pages_decimals_follow_the_metric_tables_digits() -> None:
    """The report reads each metric's decimals from its record, not from a list of its own."""
    from dataclasses import replace

    from glyphbench.report.tables import fmt_ci, fmt_number
    from glyphbench.scoring.table import METRICS, register_metric

    assert fmt_number(1.5, "algorithm1") == "1.50" and fmt_number(0.81234, "ned") == "0.812"
    original = METRICS.get("ned", "glyphbench")
    register_metric(replace(original, digits=1), replace=True)
    try:
        assert fmt_number(0.81234, "ned") == "0.8"
        assert fmt_ci(0.81234, 0.7, 0.9, "ned") == "0.8 [0.7, 0.9]"
    finally:
        register_metric(original, replace=True)
    assert fmt_number(0.81234, "ned") == "0.812"
    assert fmt_number(0.81234, "a_column_of_the_user") == "0.812"
