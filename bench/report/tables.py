"""Report tables: numbers for machines (CSV) and text for papers (Markdown, LaTeX).

The CSV keeps every column at full precision. Markdown and LaTeX get a
*display* table (:func:`display_summary`) where each metric is one cell,
``mean [lo, hi]``, and directions are marked with arrows.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bench.io import atomic_open
from bench.report.metrics import metric_info


def fmt_number(value: Any, metric: str = "") -> str:
    """Display a number: edit counts with 2 decimals, rates and similarities with 3.

    >>> fmt_number(0.81234, "ned"), fmt_number(1.5, "algorithm1"), fmt_number(float("nan"))
    ('0.812', '1.50', '–')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    digits = 2 if metric in ("algorithm1", "edit_distance", "lcs_len", "lom_len") else 3
    return f"{float(value):.{digits}f}"


def fmt_ci(mean: Any, lo: Any, hi: Any, metric: str = "") -> str:
    """``mean [lo, hi]``, or the mean alone when the interval is missing.

    >>> fmt_ci(0.5, 0.4, 0.6, "ned")
    '0.500 [0.400, 0.600]'
    """
    if lo is None or hi is None or (isinstance(lo, float) and math.isnan(lo)):
        return fmt_number(mean, metric)
    return f"{fmt_number(mean, metric)} [{fmt_number(lo, metric)}, {fmt_number(hi, metric)}]"


def metric_header(metric: str) -> str:
    """Column header with the metric's direction: ``NED similarity (1 = exact) ↑``."""
    info = metric_info(metric)
    return f"{info.label} {'↑' if info.higher_is_better else '↓'}"


def display_summary(
    summary: pd.DataFrame, by: Sequence[str], metrics: Sequence[str]
) -> pd.DataFrame:
    """One row per (model, slice) with formatted ``mean [lo, hi]`` cells."""
    out = pd.DataFrame({"Model": summary["model"].astype(str)})
    for column in by:
        out[column] = summary[column].astype(str)
    out["n"] = summary["n"].astype(int).astype(str)
    out["Errors"] = summary["n_errors"].astype(int).astype(str)
    for metric in metrics:
        out[metric_header(metric)] = [
            fmt_ci(m, lo, hi, metric)
            for m, lo, hi in zip(
                summary[metric], summary[f"{metric}_lo"], summary[f"{metric}_hi"], strict=False
            )
        ]
    return out.reset_index(drop=True)


def to_markdown(table: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table (pipes in cells are escaped)."""

    def cell(value: Any) -> str:
        return _text(value).replace("|", "\\|").replace("\n", " ")

    header = "| " + " | ".join(cell(c) for c in table.columns) + " |"
    rule = "| " + " | ".join("---" for _ in table.columns) + " |"
    body = ["| " + " | ".join(cell(v) for v in row) + " |" for row in table.itertuples(index=False)]
    return "\n".join([header, rule, *body]) + "\n"


_LATEX_ESCAPES = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "↑": r"$\uparrow$",
    "↓": r"$\downarrow$",
    "–": "--",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
}


def latex_escape(text: str) -> str:
    r"""Escape LaTeX special characters.

    >>> latex_escape("50% of a_b & ↑")
    '50\\% of a\\_b \\& $\\uparrow$'
    """
    return "".join(_LATEX_ESCAPES.get(ch, ch) for ch in text)


def to_latex(table: pd.DataFrame, caption: str = "", label: str = "") -> str:
    """A booktabs ``table`` environment; text columns left-aligned, others centred."""
    align = "".join(
        "l" if i == 0 or not _numeric_like(table[c]) else "r" for i, c in enumerate(table.columns)
    )
    lines = [
        r"\begin{table}[t]",
        r"\centering",
        r"\small",
        rf"\begin{{tabular}}{{{align}}}",
        r"\toprule",
    ]
    lines.append(" & ".join(latex_escape(_text(c)) for c in table.columns) + r" \\")
    lines.append(r"\midrule")
    for row in table.itertuples(index=False):
        lines.append(" & ".join(latex_escape(_text(v)) for v in row) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    if caption:
        lines.append(rf"\caption{{{latex_escape(caption)}}}")
    if label:
        lines.append(rf"\label{{{label}}}")
    lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"


def _text(value: Any) -> str:
    """Cell text for Markdown/LaTeX: verdicts read pass/fail, missing values a dash."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, (bool, np.bool_)):
        return "pass" if value else "fail"
    return str(value)


def _numeric_like(column: pd.Series) -> bool:
    text = column.astype(str).str.strip()
    return bool(len(text)) and bool(text.str.match(r"^[-–0-9.]").all())


def write_table_set(
    folder: Path,
    name: str,
    raw: pd.DataFrame,
    display: pd.DataFrame | None = None,
    caption: str = "",
) -> list[str]:
    """Write ``name.csv`` (raw numbers), ``name.md`` / ``name.tex`` (display); return file names."""
    folder.mkdir(parents=True, exist_ok=True)
    display = raw if display is None else display
    from bench.io import spreadsheet_safe

    with atomic_open(folder / f"{name}.csv", "w", encoding="utf-8", newline="") as handle:
        spreadsheet_safe(raw).to_csv(handle, index=False)  # no formula runs when opened
    with atomic_open(folder / f"{name}.md", "w", encoding="utf-8") as handle:
        handle.write(to_markdown(display))
    with atomic_open(folder / f"{name}.tex", "w", encoding="utf-8") as handle:
        handle.write(to_latex(display, caption=caption, label=f"tab:{name}"))
    return [f"{name}.csv", f"{name}.md", f"{name}.tex"]
