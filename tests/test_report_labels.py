"""Issue 15 labels: a control row is never bold as best; the NED column says its direction."""

from __future__ import annotations

import pandas as pd

from bench.report import display
from bench.summary import metric_header


def _summary() -> pd.DataFrame:
    rows = []
    for model, ned in (("model-a", 1.0), ("model-b", 0.5), ("control:render", 1.0)):
        rows.append(
            {"model": model, "n": 4, "n_errors": 0, "ned": ned, "ned_lo": ned, "ned_hi": ned}
        )
    return pd.DataFrame(rows)


def test_control_rows_are_never_bold_even_when_they_equal_the_best_model() -> None:
    summary = _summary()
    shown = display.summary_display(summary, ["ned"], ["control:render"])
    marks = display.best_marks(summary, ["ned"], ["model-a", "model-b"])
    column = list(shown.columns).index(display.metric_header("ned"))

    def bold(marked: object) -> list[bool]:
        table = display.html_table(shown, classes=marks, marked=marked)  # type: ignore[arg-type]
        return ["best" in row[column].cls for row in table.rows]

    assert bold(display.not_a_control) == [True, False, False]
    assert bold(None) == [True, False, True]  # what the report showed before issue 15


def test_ned_header_says_it_is_a_similarity_with_1_exact() -> None:
    assert metric_header("ned") == "NED similarity (1 = exact) ↑"
    assert display.metric_header("ned") == "NED similarity (1 = exact) ↑"
