"""Report tables: numbers for machines (CSV) and text for papers (Markdown, LaTeX).

The CSV keeps every column at full precision. Markdown and LaTeX get a
*display* table (:func:`display_summary`) where each metric is one cell,
``mean [lo, hi]``, and directions are marked with arrows.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from glyphbench.core.bootstrap import MIN_UNITS
from glyphbench.core.io import atomic_open, spreadsheet_safe, write_csv
from glyphbench.core.markdown import markdown_text
from glyphbench.report.latex import fit_table, tex_width_pt
from glyphbench.report.metric_info import metric_info


def fmt_number(value: Any, metric: str = "") -> str:
    """Display a number with the metric table's decimals for ``metric`` (3 for other columns).

    Edit counts carry 2 decimals in the table, rates and similarities 3.

    >>> fmt_number(0.81234, "ned"), fmt_number(1.5, "algorithm1"), fmt_number(float("nan"))
    ('0.812', '1.50', '–')
    """
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    digits = metric_info(metric).digits if metric else 3
    return f"{float(value):.{digits}f}"


def fmt_ci(mean: Any, lo: Any, hi: Any, metric: str = "") -> str:
    """``mean [lo, hi]``, or the mean alone when the interval is missing.

    >>> fmt_ci(0.5, 0.4, 0.6, "ned")
    '0.500 [0.400, 0.600]'
    """
    if lo is None or hi is None or (isinstance(lo, float) and math.isnan(lo)):
        return fmt_number(mean, metric)
    return f"{fmt_number(mean, metric)} [{fmt_number(lo, metric)}, {fmt_number(hi, metric)}]"


def too_few(n_prompts: Any, n_rows: Any = None) -> str:
    """The note shown instead of an interval resting on fewer than ``MIN_UNITS`` prompts.

    >>> too_few(1), too_few(2, 6)
    ('n = 1: too few', 'n = 6 (2 prompts): too few')
    """
    prompts = int(n_prompts)
    if n_rows is None or int(n_rows) == prompts:
        return f"n = {prompts}: too few"
    return f"n = {int(n_rows)} ({prompts} prompt{'' if prompts == 1 else 's'}): too few"


def fmt_ci_n(mean: Any, lo: Any, hi: Any, metric: str, n_prompts: Any, n_rows: Any = None) -> str:
    """:func:`fmt_ci`, or ``mean (n = K: too few)`` below the minimum number of prompts.

    >>> fmt_ci_n(63.0, None, None, "algorithm1", 1)
    '63.00 (n = 1: too few)'
    """

    known = mean is not None and not (isinstance(mean, float) and math.isnan(mean))
    if known and n_prompts is not None and n_prompts == n_prompts and n_prompts < MIN_UNITS:
        return f"{fmt_number(mean, metric)} ({too_few(n_prompts, n_rows)})"
    return fmt_ci(mean, lo, hi, metric)


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
    prompts = summary["n_prompts"] if "n_prompts" in summary else [None] * len(summary)
    for metric in metrics:
        out[metric_header(metric)] = [
            fmt_ci_n(m, lo, hi, metric, k, n)
            for m, lo, hi, k, n in zip(
                summary[metric],
                summary[f"{metric}_lo"],
                summary[f"{metric}_hi"],
                prompts,
                summary["n"],
                strict=False,
            )
        ]
    return out.reset_index(drop=True)


def to_markdown(table: pd.DataFrame) -> str:
    r"""A GitHub-flavoured Markdown table whose cells show their text as it is.

    ``& < >`` become HTML entities (a label ``<img onerror=...>`` is text, not a tag),
    Markdown's marks are escaped (``*a*`` is no emphasis, ``[x](url)`` no link), and line
    breaks and control characters become spaces (a cell never ends its row).

    >>> print(to_markdown(pd.DataFrame({"model": ["<b>*x*</b> | [y](z)\r"]})), end="")
    | model |
    | --- |
    | &lt;b&gt;\*x\*&lt;/b&gt; \| [y]\(z) |
    """

    def cell(value: Any) -> str:
        return markdown_text(_text(value))

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
    "—": "---",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"$|$",  # in OT1, the default font encoding, "|" prints as an em dash
    "→": r"$\rightarrow$",
    "←": r"$\leftarrow$",
    "−": "$-$",
    "≤": r"$\le$",
    "≥": r"$\ge$",
    "≈": r"$\approx$",
    "±": r"$\pm$",
    "×": r"$\times$",
    "∞": r"$\infty$",
    "·": r"$\cdot$",
    "…": r"\ldots{}",
    "’": "'",
    "\u2018": "`",
    "“": "``",
    "”": "''",
    "✓": r"$\checkmark$",
    "✗": r"$\times$",
    "\u00a0": "~",
}

#: What pdflatex cannot set (CJK, emoji, ...) prints as this; a comment in the file says so.
LATEX_UNSETTABLE = "?"


def latex_escape(text: str) -> str:
    r"""Escape LaTeX special characters; Unicode becomes what pdflatex can set.

    Accented Latin letters are kept (pdflatex reads UTF-8 since 2018); typographic
    symbols become their LaTeX commands; anything else outside Latin-1 (CJK, emoji)
    becomes :data:`LATEX_UNSETTABLE`, so the file always compiles.

    >>> latex_escape("50% of a_b & ↑")
    '50\\% of a\\_b \\& $\\uparrow$'
    >>> latex_escape("A → B − 1 ≤ café 汉")
    'A $\\rightarrow$ B $-$ 1 $\\le$ café ?'
    >>> latex_escape("a|b")
    'a$|$b'
    >>> latex_escape("bad\x7fname\x1b[2J")  # control characters: pdflatex stops on them
    'bad?name?[2J'
    """
    return "".join(_latex_char(ch) for ch in text)


def _latex_char(ch: str) -> str:
    if ch in _LATEX_ESCAPES:
        return _LATEX_ESCAPES[ch]
    if ch in "\t\n\r\v\f":
        return " "
    if ch.isascii() and not ch.isprintable():  # a control character stops pdflatex
        return LATEX_UNSETTABLE
    if ch.isascii() or ch in _LATEX_LETTERS:
        return ch
    base = unicodedata.normalize("NFKD", ch)
    if (
        base[:1].isascii()
        and base[:1].isalpha()
        and all(unicodedata.combining(c) for c in base[1:])
    ):
        return ch  # an accented Latin letter: utf8 inputenc sets it with its accent
    return LATEX_UNSETTABLE


#: Latin letters without a decomposition that pdflatex's default encoding sets.
_LATEX_LETTERS = frozenset("ßøØæÆœŒåÅłŁ")


def to_latex(
    table: pd.DataFrame,
    caption: str = "",
    label: str = "",
    *,
    marks: Mapping[str, Callable[[Any], str]] | None = None,
    marked: Callable[[Mapping[str, Any]], bool] | None = None,
    width_pt: float | None = None,
) -> str:
    """Booktabs ``table`` floats that pdflatex compiles (``booktabs``, ``amssymb``) and that
    fit ``width_pt`` (default 5.5 in, :func:`glyphbench.report.latex.tex_width_pt`;
    :mod:`glyphbench.report.latex`: abbreviated metric headers defined
    in the caption, intervals under their means, wrapped text, wide tables in blocks,
    long ones in parts).

    Text columns left-aligned, numbers right-aligned; floats at the report's
    precision (:func:`fmt_number`); a cell whose ``marks`` class is ``best`` (in a
    row ``marked`` accepts: the summary never bolds a control) is set in bold. A table
    without rows is a comment, never an empty ``tabular``.
    """
    if table.empty:
        return f"% {latex_escape(caption or label)}: no rows (nothing to compare)\n"

    numeric = {str(c): i > 0 and _numeric_like(table[c]) for i, c in enumerate(table.columns)}

    def bold(record: Mapping[str, Any], column: str) -> bool:
        if not marks or column not in marks or (marked is not None and not marked(record)):
            return False
        return marks[column](record[column]) == "best"

    return fit_table(
        table,
        caption,
        label,
        escape=latex_escape,
        text_of=_text,
        numeric=numeric,
        bold=bold,
        width_pt=tex_width_pt(width_pt),
    )


def _text(value: Any, column: str = "") -> str:
    """Cell text for Markdown/LaTeX: verdicts read pass/fail, missing values a dash,
    floats at the report's precision (never ``0.9964781746031747``)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    if isinstance(value, (bool, np.bool_)):
        return "pass" if value else "fail"
    if isinstance(value, (float, np.floating)):
        return fmt_number(float(value), column)
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
    *,
    marks: Mapping[str, Callable[[Any], str]] | None = None,
    marked: Callable[[Mapping[str, Any]], bool] | None = None,
    tex_width_pt: float | None = None,
) -> list[str]:
    """Write ``name.csv`` (raw numbers), ``name.md`` / ``name.tex`` (display); return file names.

    The ``.tex`` table always has a caption (the table's name when none is given) and
    fits ``tex_width_pt`` (default 5.5 in); ``marks``/``marked`` bold the best cells as on
    the page.
    """
    folder.mkdir(parents=True, exist_ok=True)
    display = raw if display is None else display

    with atomic_open(folder / f"{name}.csv", "w", encoding="utf-8", newline="") as handle:
        write_csv(spreadsheet_safe(raw), handle)  # no formula runs when opened; "\r" quoted
    with atomic_open(folder / f"{name}.md", "w", encoding="utf-8") as handle:
        handle.write(to_markdown(display))
    with atomic_open(folder / f"{name}.tex", "w", encoding="utf-8") as handle:
        title = caption or name.replace("_", " ").capitalize()
        latex = to_latex(
            display, title, f"tab:{name}", marks=marks, marked=marked, width_pt=tex_width_pt
        )
        handle.write(latex)
    return [f"{name}.csv", f"{name}.md", f"{name}.tex"]
