"""``glyphbench score``: score a CSV of (expected, OCR) pairs with a family of the metric table."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from bench.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

COMPAT_HELP = (
    "Score with another metric family instead of glyphbench's own, e.g. 'reference' "
    "(TextInVision's score.py columns, see docs/metrics.md) or 'vae' (WR, PA); "
    "`python -m bench.scoring.docs` lists every family."
)


def score_command(
    pairs: Annotated[Path, typer.Argument(help="CSV with one (expected, OCR) pair per row.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write the scored CSV.")],
    expected_col: Annotated[str, typer.Option(help="Column holding the expected text.")] = (
        "expected"
    ),
    ocr_col: Annotated[str, typer.Option(help="Column holding the OCR text.")] = "ocr",
    compat: Annotated[str | None, typer.Option(help=COMPAT_HELP)] = None,
    keep_case: Annotated[bool, typer.Option(help="Do not case-fold before comparing.")] = False,
    strip_punct: Annotated[
        bool, typer.Option(help="Strip COCO-Text punctuation from word ends before comparing.")
    ] = False,
    summary: Annotated[
        Path | None,
        typer.Option(
            "--summary",
            help="Also write the family's headline aggregates over all pairs to this JSON file.",
        ),
    ] = None,
) -> None:
    """Append every score to a CSV of pairs; input columns are kept as they are.

    Empty cells are empty strings. Example:

        glyphbench score pairs.csv --out scores.csv --expected-col text --ocr-col ocr_text
    """
    from bench.io import read_table, write_json, write_table
    from bench.scoring import score_pairs

    family = compat_family(compat)
    frame = read_table(pairs, text_columns=True)
    for column in (expected_col, ocr_col):
        if column not in frame.columns:
            available = ", ".join(map(str, frame.columns)) or "none"
            raise InputError(pairs, f"missing column {column!r} (columns: {available})", line=1)
    scores = score_pairs(
        frame[expected_col],
        frame[ocr_col],
        families=(family,),
        keep_case=keep_case,
        strip_punct=strip_punct,
    )
    clashes = [c for c in scores.columns if c in frame.columns]
    if clashes:
        raise InputError(pairs, f"input already has score columns {clashes}; rename them first")
    write_table(frame.join(scores), out)
    if summary is not None:
        write_json(summary, headline(frame.join(scores), family))
    typer.echo(f"scored {len(frame)} pairs -> {out}")


def compat_family(compat: str | None) -> str:
    """The metric family ``--compat`` names (``glyphbench`` without it); unknown: InputError.

    >>> compat_family(None), compat_family("reference")
    ('glyphbench', 'textinvision')
    """
    from bench.scoring.table import METRICS

    if compat is None:
        return "glyphbench"
    names = METRICS.compat_names()
    if compat not in names:
        raise InputError(None, f"--compat must be one of {', '.join(names)}; got {compat!r}")
    return names[compat]


def headline(scored: pd.DataFrame, family: str) -> dict[str, float | None]:
    """The family's summary metrics aggregated over every row that did not fail.

    Each metric is aggregated as its record says (mean, pooled ratio, or derived);
    a family that marks no summary metric reports all of its text metrics. Values
    that are not finite are written as null.

    >>> import pandas as pd
    >>> headline(pd.DataFrame({"wr": [100.0, 50.0], "pa": [100.0, 80.0]}), "vae")
    {'wr': 75.0, 'pa': 90.0}
    """
    from bench.schema import failed_mask
    from bench.scoring.table import METRICS

    names = METRICS.summary_names([family]) or [
        m.name for m in METRICS.of([family]) if m.inputs == "text"
    ]
    names = [n for n in names if METRICS.get(n, family).inputs == "text"]
    values = METRICS.aggregate(scored[~failed_mask(scored)], names, family)
    return {name: value if math.isfinite(value) else None for name, value in values.items()}


def register(app: typer.Typer) -> None:
    app.command("score")(score_command)
