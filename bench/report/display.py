"""Display tables: the analysis' numbers as text for Markdown, LaTeX and the page.

Each function turns one raw table of :class:`glyphbench.report.analyse.Analysis` into
a display DataFrame (``mean [lo, hi]`` cells, labels, arrows); :func:`html_table`
turns a display table into cells for the page template.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd

from glyphbench.report.metric_info import metric_label
from glyphbench.report.tables import display_summary, fmt_ci, fmt_ci_n, fmt_number, metric_header
from glyphbench.report.verdict import best_of
from glyphbench.templates import Cell, Table


def summary_display(
    summary: pd.DataFrame, metrics: Sequence[str], controls: Sequence[str]
) -> pd.DataFrame:
    """The overall summary, with a column marking control models."""
    out = display_summary(summary, [], metrics)
    out.insert(1, "Control", ["yes" if m in controls else "" for m in summary["model"]])
    return out


def ranking_display(ranked: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Rank (``=`` for a shared rank), model, ``metric`` with its interval, undecided pairs;
    first the protocol when the runs' protocols differ (one ranking per protocol)."""
    alone = _alone(ranked)
    shown = pd.DataFrame(
        {
            "Rank": [
                "– (nothing to compare)" if one else f"{r}=" if t else str(r)
                for r, t, one in zip(ranked["rank"], ranked["tie"], alone, strict=True)
            ],
            "Model": ranked["model"],
            metric_header(metric): _intervals(ranked, metric, metric),
            "No significant difference from (paired, Holm)": ranked["not_different_from"].replace(
                "", "–"
            ),
        }
    )
    if "protocol" in ranked.columns:
        shown.insert(0, "Protocol", ranked["protocol"].to_numpy())
    return shown


def _alone(ranked: pd.DataFrame) -> list[bool]:
    """Rows of a ranking with no other model to compare with (in their protocol)."""
    if "protocol" not in ranked.columns:
        return [len(ranked) == 1] * len(ranked)
    sizes = ranked["protocol"].map(ranked["protocol"].value_counts())
    return [int(n) == 1 for n in sizes]


def comparison_display(comparisons: pd.DataFrame) -> pd.DataFrame:
    """Pairs, metric, shared prompts, difference with its interval, the Holm verdict."""
    return pd.DataFrame(
        {
            "Model A": comparisons["model_a"],
            "Model B": comparisons["model_b"],
            "Metric": comparisons["metric"].map(metric_label),
            "Shared prompts": comparisons["n_prompts"],
            "A − B [95% CI]": [
                fmt_ci_n(d, lo, hi, "ned", n)
                for d, lo, hi, n in comparisons[["diff", "lo", "hi", "n_prompts"]].to_numpy()
            ],
            "Holm-adjusted CI": [
                _holm_text(level, lo, hi)
                for level, lo, hi in comparisons[
                    ["holm_confidence", "holm_lo", "holm_hi"]
                ].to_numpy(dtype=float)
            ],
            "Significantly better (Holm)": comparisons["better"].fillna("– (no clear difference)"),
        }
    )


def _holm_text(level: float, lo: float, hi: float) -> str:
    """``[lo, hi] at 98.3%``; a dash where the pair is not in the family (too few prompts).

    >>> _holm_text(0.98333, 0.01, 0.05)
    '[0.010, 0.050] at 98.3%'
    """
    if math.isnan(level):
        return "–"
    return f"[{fmt_number(lo, 'ned')}, {fmt_number(hi, 'ned')}] at {100 * level:.1f}%"


#: The page's headers of the peer views' columns (their CSV files keep the peers' names).
PEER_HEADERS = {
    "sentence_acc": "Sentence accuracy",
    "ned": "NED",
    "precision": "Precision",
    "recall": "Recall",
    "f1": "F1",
}


def peer_display(view: pd.DataFrame, mapping: Mapping[str, str]) -> pd.DataFrame:
    """A peer view with the peer benchmark's measures, named in words (:data:`PEER_HEADERS`).

    >>> view = pd.DataFrame({"model": ["m"], "n": [4], "sentence_acc": [0.5],
    ...                      "sentence_acc_lo": [0.25], "sentence_acc_hi": [0.75]})
    >>> list(peer_display(view, {"exact_match": "sentence_acc"}).columns)
    ['Model', 'n', 'Sentence accuracy']
    """
    out = pd.DataFrame({"Model": view["model"], "n": view["n"]})
    for metric, column in mapping.items():
        out[PEER_HEADERS.get(column, column)] = _intervals(view, column, metric)
    return out


def control_display(
    sanity: pd.DataFrame, by: Sequence[str], metrics: Sequence[str]
) -> pd.DataFrame:
    """Compact sanity table: slice, fewest control rows, each metric's chain of means, verdicts."""
    if sanity.empty:
        return sanity
    out = pd.DataFrame()
    if sanity["run"].astype(str).str.len().any():
        out["Run"] = sanity["run"]
    for column in by:
        out[column] = sanity[column].astype(str)
    out["Fewest rows"] = sanity["min_n"].astype(int)
    for metric in metrics:
        label = metric_label(metric)
        out[f"{label} (blank → render)"] = [
            chain_text(means, metric) for means in sanity[f"{metric}_means"]
        ]
        out[f"{label} order"] = sanity[f"{metric}_order"]
    few = sanity["too_few"] if "too_few" in sanity else pd.Series([""] * len(sanity))
    out["Passed"] = [
        note if isinstance(note, str) and note else passed
        for passed, note in zip(sanity["passed"], few, strict=True)
    ]
    return out


def chain_text(means: Sequence[float], metric: str) -> str:
    """The chain's means joined by how each pair compares, as displayed.

    ``=`` equal values, ``<`` / ``>`` values that differ at the shown precision,
    ``≤`` / ``≥`` values that differ only below it (so ``0.000 < 0.000`` never prints).

    >>> chain_text([0.0, 0.0, 0.0004, 0.5, 0.4], "ned")
    '0.000 = 0.000 ≤ 0.000 < 0.500 > 0.400'
    """
    if not len(means):
        return ""
    parts = [fmt_number(means[0], metric)]
    for a, b in pairwise(means):
        shown_a, shown_b = fmt_number(a, metric), fmt_number(b, metric)
        if math.isnan(a) or math.isnan(b):
            sign = "·"
        elif a == b:
            sign = "="
        elif shown_a == shown_b:
            sign = "≤" if a < b else "≥"
        else:
            sign = "<" if a < b else ">"
        parts += [sign, shown_b]
    return " ".join(parts)


def ceiling_display(ceiling: pd.DataFrame, by: Sequence[str], metric: str) -> pd.DataFrame:
    """Each model's score beside the OCR ceiling, the gap and OCR's share of the error."""
    out = pd.DataFrame({"Model": ceiling["model"]})
    for column in by:
        out[column] = ceiling[column].astype(str)
    out["Model NED"] = ceiling[metric]
    out["OCR ceiling (render NED)"] = ceiling["ceiling"]
    out["Gap to ceiling"] = ceiling["gap"]
    out["Share of error that is OCR's"] = [
        "–" if math.isnan(v) else f"{100 * v:.0f}%" for v in ceiling["ocr_share"].astype(float)
    ]
    return out


def _intervals(table: pd.DataFrame, column: str, metric: str) -> list[str]:
    return [
        fmt_ci(m, lo, hi, metric)
        for m, lo, hi in table[[column, f"{column}_lo", f"{column}_hi"]].to_numpy()
    ]


# --------------------------------------------------------------------------- HTML cells


def best_marks(
    summary: pd.DataFrame,
    metrics: Sequence[str],
    models: Sequence[str],
    comparisons: pd.DataFrame | None = None,
) -> dict[str, Callable[[Any], str]]:
    """CSS classes that bold the significantly best model in each metric's column.

    A model is bold only where the paired comparisons (Holm) find it significantly
    better than every other model on that metric (:func:`glyphbench.report.verdict.best_of`):
    never one model alone, never a tie, never a metric without comparisons. Pass
    :func:`best_rows` as ``html_table(marked=...)`` so that another row whose mean reads
    the same is not bold too.
    """

    marks: dict[str, Callable[[Any], str]] = {}
    if comparisons is None:
        return marks
    for metric in metrics:
        best = best_of(comparisons, models, metric)
        if best is None or metric not in summary.columns:
            continue
        value = summary.loc[summary["model"].astype(str) == best, metric]
        if len(value) and value.notna().iloc[0]:
            marks[metric_header(metric)] = _best_class(fmt_number(float(value.iloc[0]), metric))
    return marks


def best_rows(
    comparisons: pd.DataFrame, metrics: Sequence[str], models: Sequence[str]
) -> Callable[[Mapping[str, Any]], bool]:
    """Which display rows :func:`best_marks` may bold: those of a significantly best model."""

    names = {best_of(comparisons, models, metric) for metric in metrics} - {None}

    def marked(record: Mapping[str, Any]) -> bool:
        return str(record.get("Model", "")) in names

    return marked


def not_a_control(record: Mapping[str, Any]) -> bool:
    """Whether a row of :func:`summary_display` is a model's (its Control cell is empty)."""
    return str(record.get("Control", "")) != "yes"


def _best_class(best_text: str) -> Callable[[Any], str]:
    """``best`` for cells whose mean reads ``best_text``."""

    def css(value: Any) -> str:
        return "best" if str(value).split(" ")[0] == best_text else ""

    return css


def html_cell(column: str, value: Any) -> Cell:
    """A page cell: verdicts read ✓/✗, missing values a dash, numbers right-aligned.

    >>> html_cell("ned", "0.500 [0.400, 0.600]")
    Cell(text='0.500', ci='[0.400, 0.600]', cls='num')
    >>> html_cell("Passed", False)
    Cell(text='✗ fail', ci='', cls='fail')
    """
    if isinstance(value, (bool, np.bool_)):
        return Cell("✓ pass", cls="pass") if value else Cell("✗ fail", cls="fail")
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return Cell("–", cls="na")
    if isinstance(value, (float, np.floating)):
        return Cell(fmt_number(float(value), column), cls="num")
    if isinstance(value, (int, np.integer)):
        return Cell(str(value), cls="num")
    text = str(value)
    if text[:1] and text[:1] in "-0123456789" and " [" in text:
        mean, interval = text.split(" [", 1)
        return Cell(mean, "[" + interval, "num")
    return Cell(text, cls="num" if text[:1] and text[:1] in "-0123456789" and "[" in text else "")


def html_table(
    table: pd.DataFrame,
    *,
    classes: Mapping[str, Callable[[Any], str]] | None = None,
    caption: str = "",
    id: str = "",
    marked: Callable[[Mapping[str, Any]], bool] | None = None,
) -> Table:
    """The page's version of a display table; ``classes`` adds CSS classes per column.

    ``marked`` says which rows ``classes`` apply to (all rows when None): the summary
    never marks a control row as best.
    """
    classes = classes or {}
    rows = []
    for record in table.to_dict("records"):
        cells = []
        apply = marked is None or marked(record)
        for column, value in record.items():
            cell = html_cell(str(column), value)
            if apply and column in classes:
                css = (cell.cls + " " + classes[str(column)](value)).strip()
                cell = Cell(cell.text, cell.ci, css)
            cells.append(cell)
        rows.append(cells)
    return Table([str(c) for c in table.columns], rows, caption=caption, id=id)
