"""The per-model summary printed at the end of a run (and by the demo)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import pandas as pd

from bench.schema import failed_mask

if TYPE_CHECKING:
    from rich.console import Console


#: The metrics of the console summary, a compact view of the table's summary metrics.
CONSOLE_METRICS = ("algorithm1", "exact_match", "ned")


def summarize(rows: pd.DataFrame, metrics: Sequence[str] = CONSOLE_METRICS) -> pd.DataFrame:
    """One line per model: images, errors and mean scores over the rows without error.

    A row failed when :func:`bench.schema.failed_mask` says so. Directions and
    labels come from the metric table (``algorithm1`` is an edit count, lower is
    better; ``exact_match`` and ``ned`` are higher-is-better).

    >>> rows = pd.DataFrame({"model": ["a", "a", "b"], "is_control": [True, True, False],
    ...     "error": ["", "Generate: E: x", ""], "algorithm1": [0.0, None, 4.0],
    ...     "exact_match": [1.0, None, 0.0], "ned": [1.0, None, 0.5]})
    >>> summarize(rows)[["model", "images", "errors", "exact_match"]].values.tolist()
    [['a', 2, 1, 1.0], ['b', 1, 0, 0.0]]
    """

    failed = pd.Series(failed_mask(rows), index=rows.index)
    lines = []
    for model, group in rows.groupby("model", sort=False):
        ok = group[~failed.loc[group.index]]
        line: dict[str, object] = {
            "model": str(model),
            "control": bool(group["is_control"].fillna(False).astype(bool).any()),
            "images": len(group),
            "errors": len(group) - len(ok),
        }
        for metric in metrics:
            line[metric] = float(ok[metric].mean()) if len(ok) else float("nan")
        lines.append(line)
    return pd.DataFrame(lines, columns=["model", "control", "images", "errors", *metrics])


def metric_header(metric: str) -> str:
    """A console column header from the metric table: its label and direction arrow.

    >>> metric_header("algorithm1"), metric_header("ned")
    ('Algorithm 1 distance ↓', 'NED similarity ↑')
    """
    from bench.scoring.table import METRICS

    record = METRICS.get(metric)
    return f"{record.label} {'↑' if record.higher_is_better else '↓'}"


def print_summary(rows: pd.DataFrame, console: Console, title: str = "Summary") -> None:
    """Print :func:`summarize` as a rich table; controls are marked as such."""
    from rich.table import Table

    table = Table(title=title)
    for column in ("model", "images", "errors"):
        table.add_column(column, justify="left" if column == "model" else "right")
    for metric in CONSOLE_METRICS:
        table.add_column(metric_header(metric), justify="right")
    for line in summarize(rows).to_dict("records"):
        label = f"{line['model']} [dim](control)[/]" if line["control"] else str(line["model"])
        scores = [_fmt(float(line[metric])) for metric in CONSOLE_METRICS]
        table.add_row(label, str(line["images"]), str(line["errors"]), *scores)
    console.print(table)


def summary_console() -> Console:
    """A stdout console wide enough for the table even when output is piped to a file."""
    import sys

    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=120)


def _fmt(value: float) -> str:
    return "-" if value != value else f"{value:.3f}"
