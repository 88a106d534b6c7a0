"""``glyphbench score``: score a CSV of (expected, OCR) pairs."""

from __future__ import annotations

from pathlib import Path

import typer

from bench.errors import InputError


def score_command(
    pairs: Path = typer.Argument(..., help="CSV with one (expected, OCR) pair per row."),
    out: Path = typer.Option(..., "--out", "-o", help="Where to write the scored CSV."),
    expected_col: str = typer.Option("expected", help="Column holding the expected text."),
    ocr_col: str = typer.Option("ocr", help="Column holding the OCR text."),
    compat: str = typer.Option(
        None, help="'reference' reproduces TextInVision's score.py columns (see docs/metrics.md)."
    ),
    keep_case: bool = typer.Option(False, help="Do not case-fold before comparing."),
    strip_punct: bool = typer.Option(
        False, help="Strip COCO-Text punctuation from word ends before comparing."
    ),
) -> None:
    """Append every score to a CSV of pairs; input columns are kept as they are.

    Empty cells are empty strings. Example:

        glyphbench score pairs.csv --out scores.csv --expected-col text --ocr-col ocr_text
    """
    from bench.io import read_table, write_table
    from bench.scoring import score_pairs

    if compat not in (None, "reference"):
        raise InputError(None, f"--compat must be 'reference', got {compat!r}")
    frame = read_table(pairs, text_columns=True)
    for column in (expected_col, ocr_col):
        if column not in frame.columns:
            available = ", ".join(map(str, frame.columns)) or "none"
            raise InputError(pairs, f"missing column {column!r} (columns: {available})", line=1)
    scores = score_pairs(
        frame[expected_col],
        frame[ocr_col],
        compat="reference" if compat else None,
        keep_case=keep_case,
        strip_punct=strip_punct,
    )
    clashes = [c for c in scores.columns if c in frame.columns]
    if clashes:
        raise InputError(pairs, f"input already has score columns {clashes}; rename them first")
    write_table(frame.join(scores), out)
    typer.echo(f"scored {len(frame)} pairs -> {out}")


def register(app: typer.Typer) -> None:
    app.command("score")(score_command)
