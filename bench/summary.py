"""The per-model summary printed at the end of a run (and by the demo)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pandas as pd

from bench.schema import failed_mask

if TYPE_CHECKING:
    from rich.console import Console


#: How a refused image's error starts (a hosted API's content policy said no).
REFUSED = "Refused:"


def summarize(rows: pd.DataFrame) -> pd.DataFrame:
    """One line per model: images, errors and mean scores over the rows without error.

    Refusals (errors starting ``Refused:``) are counted apart from the other errors,
    with their rate over the model's images, and ``cost_usd`` is the model's total
    cost (NaN for models without prices).

    ``algorithm1`` is an edit count (lower is better); ``exact_match`` and
    ``ned`` (1 - normalised edit distance) are higher-is-better.

    >>> rows = pd.DataFrame({"model": ["a", "a", "b"], "is_control": [True, True, False],
    ...     "error": ["", "Generate: E: x", ""], "algorithm1": [0.0, None, 4.0],
    ...     "exact_match": [1.0, None, 0.0], "ned": [1.0, None, 0.5]})
    >>> summarize(rows)[["model", "images", "errors", "exact_match"]].values.tolist()
    [['a', 2, 1, 1.0], ['b', 1, 0, 0.0]]
    >>> rows.loc[1, "error"] = "Refused: openai: moderation_blocked"
    >>> summarize(rows)[["errors", "refused", "refusal_rate"]].values.tolist()[0]
    [0.0, 1.0, 0.5]
    """
    lines = []
    for model, group in rows.groupby("model", sort=False):
        ok = group[~failed_mask(group)]
        refused = int(group["error"].fillna("").astype(str).str.startswith(REFUSED).sum())
        cost = group["cost_usd"] if "cost_usd" in group.columns else pd.Series(dtype=float)
        lines.append(
            {
                "model": str(model),
                "control": bool(group["is_control"].fillna(False).astype(bool).any()),
                "images": len(group),
                "errors": len(group) - len(ok) - refused,
                "refused": refused,
                "refusal_rate": refused / len(group),
                "cost_usd": float(cost.sum()) if cost.notna().any() else float("nan"),
                "algorithm1": float(ok["algorithm1"].mean()) if len(ok) else float("nan"),
                "exact_match": float(ok["exact_match"].mean()) if len(ok) else float("nan"),
                "ned": float(ok["ned"].mean()) if len(ok) else float("nan"),
            }
        )
    columns = ["model", "control", "images", "errors", "algorithm1", "exact_match", "ned"]
    return pd.DataFrame(lines, columns=[*columns, "refused", "refusal_rate", "cost_usd"])


def print_summary(rows: pd.DataFrame, console: Console, title: str = "Summary") -> None:
    """Print :func:`summarize` as a rich table; controls are marked as such."""
    from rich.table import Table

    table = Table(title=title)
    lines = summarize(rows)
    refusals = bool(lines["refused"].sum())  # the extra columns only when they say something
    costs = bool(lines["cost_usd"].notna().any())
    for column, justify in (
        ("model", "left"),
        ("images", "right"),
        ("errors", "right"),
        ("mean algorithm1 (lower better)", "right"),
        ("exact match", "right"),
        ("mean NED", "right"),
    ):
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    if refusals:
        table.add_column("refused (rate)", justify="right")
    if costs:
        table.add_column("cost USD", justify="right")
    for line in lines.itertuples(index=False):
        label = f"{line.model} [dim](control)[/]" if line.control else str(line.model)
        cells = [
            label,
            str(line.images),
            str(line.errors),
            _fmt(float(line.algorithm1)),
            _fmt(float(line.exact_match)),
            _fmt(float(line.ned)),
        ]
        if refusals:
            cells.append(f"{line.refused} ({float(line.refusal_rate):.0%})")
        if costs:
            cost = float(line.cost_usd)
            cells.append("-" if cost != cost else f"{cost:.2f}")
        table.add_row(*cells)
    console.print(table)


def summary_console() -> Console:
    """A stdout console wide enough for the table even when output is piped to a file."""
    import sys

    from rich.console import Console

    return Console() if sys.stdout.isatty() else Console(width=120)


def _fmt(value: float) -> str:
    return "-" if value != value else f"{value:.3f}"
