"""``glyphbench score``: score a CSV of (expected, OCR) pairs with a family of the metric table.

With ``--compat NAME`` the output follows the pair-level contract of the suites (docs/suites.md)
(:data:`CONTRACT`): OUT.csv gains exactly the benchmark's per-pair columns and the
summary JSON holds exactly its set-level keys, computed as the benchmark does
(pooled where it pools). Helper columns some families keep in a run's results for
their pooled aggregates and the bootstrap (``longtext_matched``, ``oneig_wac_total``,
...) are not written here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from glyphbench.core.errors import InputError
from glyphbench.core.io import LINE_NUMBERS, read_table, write_json, write_table
from glyphbench.core.schema import failed_mask
from glyphbench.core.words import plural
from glyphbench.scoring.table import METRICS

if TYPE_CHECKING:
    import pandas as pd


class _Contract(Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]]):
    """``--compat`` family -> (per-pair columns of OUT.csv, keys of the summary JSON), exactly.

    Read from the metric table on first use (:meth:`glyphbench.scoring.table.MetricTable.contract`:
    the family's per-image text columns less its helper columns, and its summary
    metrics), so ``glyphbench --help`` loads no scorer. It lists the families that
    reproduce another benchmark's scorer
    (:meth:`~glyphbench.scoring.table.MetricTable.peer_families`);
    glyphbench's own families (``glyphbench``, ``vae``) follow the same rule.
    tests/bench/cli/test_cli_score_contract.py checks every entry against values from the
    benchmarks' own code.
    """

    def _table(self) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
        return {family: METRICS.contract(family) for family in METRICS.peer_families()}

    def __getitem__(self, family: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return self._table()[family]

    def __iter__(self) -> Iterator[str]:
        return iter(self._table())

    def __len__(self) -> int:
        return len(self._table())


CONTRACT = _Contract()

#: Typed here, not read from the metric table: that would load every scorer for
#: ``glyphbench --help``. tests/bench/cli/test_cli_score_contract.py checks it names every
#: ``compat`` name of the table (``glyphbench``, the default, aside) and no other.
COMPAT_HELP = (
    "Score as a benchmark's own code does: anytext, anytext-zh, mario, cocotext, oneig, "
    "oneig-zh, longtext, longtext-zh, lex, cvtg, stvqa, reference (alias textinvision); or 'vae' "
    "(WR, PA). See docs/suites.md. Default: glyphbench's own metrics ('glyphbench')."
)


def score_command(
    pairs: Annotated[Path, typer.Argument(help="CSV with one (expected, OCR) pair per row.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Where to write the scored CSV.")],
    expected_col: Annotated[
        str | None,
        typer.Option(
            help="Column holding the expected text (default: expected, else glyphbench's text)."
        ),
    ] = None,
    ocr_col: Annotated[
        str | None,
        typer.Option(
            help="Column holding the OCR text (default: ocr, else glyphbench's ocr_text)."
        ),
    ] = None,
    compat: Annotated[str | None, typer.Option(help=COMPAT_HELP)] = None,
    keep_case: Annotated[bool, typer.Option(help="Do not case-fold before comparing.")] = False,
    strip_punct: Annotated[
        bool, typer.Option(help="Strip COCO-Text punctuation from word ends before comparing.")
    ] = False,
    nfkc: Annotated[
        bool,
        typer.Option(
            "--nfkc",
            help="Unicode NFKC first: composed and decomposed accents, ligatures and "
            "full-width forms compare equal (docs/metrics.md, Normalisation).",
        ),
    ] = False,
    fold_width: Annotated[
        bool,
        typer.Option(
            "--fold-width", help="Full-width ASCII and half-width kana to their plain forms."
        ),
    ] = False,
    read_as: Annotated[
        str,
        typer.Option(
            "--read-as",
            help="lines: the OCR column is a glyphbench reader's output (lines in reading "
            "order), converted to the benchmark reader's units first (docs/scorers/, 'Reader "
            "units'); units: it already holds them (e.g. the benchmark's own OCR files).",
        ),
    ] = "lines",
    summary: Annotated[
        Path | None,
        typer.Option(
            "--summary",
            help="Also write the family's headline aggregates over all pairs to this JSON file.",
        ),
    ] = None,
) -> None:
    """Append every score to a CSV of pairs; input columns are kept as they are.

    Empty cells are empty strings. The columns default to 'expected' and 'ocr',
    else glyphbench's own 'text' and 'ocr_text' (a report's per_image.csv).

    With --compat NAME the OCR column is a glyphbench reader's lines, turned
    into the benchmark reader's units before scoring (--read-as units: the
    column is in them already). Example:

        glyphbench score pairs.csv --out scores.csv \\
            --expected-col truth --ocr-col read
    """
    from glyphbench.scoring import score_pairs

    family = compat_family(compat)
    for path, option in ((out, "--out"), (summary, "--summary")):
        if path is not None and Path(path).is_dir():  # nothing written when one cannot be
            raise InputError(option, f"{path} is a folder; give a file path")
    if read_as not in ("lines", "units"):
        raise InputError(None, f"--read-as must be 'lines' or 'units'; got {read_as!r}")
    frame = read_table(pairs, text_columns=True)
    expected_col = _column(frame, pairs, expected_col, ("expected", "text"), "--expected-col")
    ocr_col = _column(frame, pairs, ocr_col, ("ocr", "ocr_text"), "--ocr-col")
    for column in (expected_col, ocr_col):
        _strings_only(frame, column, pairs)
    scores = score_pairs(
        frame[expected_col],
        frame[ocr_col],
        families=(family,),
        keep_case=keep_case,
        strip_punct=strip_punct,
        nfkc=nfkc,
        fold_width=fold_width,
        read_as="units" if read_as == "units" else "lines",
    )
    clashes = [c for c in scores.columns if c in frame.columns]
    if clashes:
        raise InputError(pairs, f"input already has score columns {clashes}; rename them first")
    scored = frame.join(scores)
    totals = headline(scored, family) if summary is not None else None
    write_table(frame.join(scores[list(METRICS.contract(family)[0])]), out)
    if summary is not None:
        write_json(summary, totals)
    typer.echo(f"scored {plural(len(frame), 'pair')} -> {out}")


def _strings_only(frame: pd.DataFrame, column: str, pairs: Path) -> None:
    """Refuse a JSON value that is no string (``["a"]`` was scored as the text "['a']",
    ``true`` as "True"); a missing one is an empty text, as an empty CSV cell is."""
    lines = frame.attrs.get(LINE_NUMBERS)
    for row, value in enumerate(frame[column].tolist()):
        if value is None or isinstance(value, str) or (isinstance(value, float) and value != value):
            continue
        line = lines[row] if lines is not None and row < len(lines) else None
        raise InputError(
            pairs,
            f"{column} is {type(value).__name__} {json.dumps(value, default=str)[:40]}, not a "
            'string; write the text as a JSON string ("...")',
            line=line,
        )


def _column(
    frame: pd.DataFrame, pairs: Path, given: str | None, defaults: tuple[str, ...], flag: str
) -> str:
    """The column ``flag`` names, or the first of ``defaults`` the table has; else one line
    naming the columns there are and the flag that picks one."""
    found = [given] if given is not None else [c for c in defaults if c in frame.columns][:1]
    if found and found[0] in frame.columns:
        return found[0]
    available = ", ".join(map(str, frame.columns)) or "none"
    wanted = repr(given) if given is not None else " or ".join(map(repr, defaults))
    raise InputError(
        pairs, f"no column {wanted} (columns: {available}); name yours with {flag}", line=1
    )


def compat_family(compat: str | None) -> str:
    """The metric family ``--compat`` names (``glyphbench`` without it); unknown: InputError.

    >>> compat_family(None), compat_family("reference")
    ('glyphbench', 'textinvision')
    """

    if compat is None:
        return "glyphbench"
    names = METRICS.compat_names()
    if compat not in names:
        raise InputError(None, f"--compat must be one of {', '.join(names)}; got {compat!r}")
    return names[compat]


def headline(scored: pd.DataFrame, family: str) -> dict[str, float | None]:
    """The family's summary metrics aggregated over every row that did not fail.

    Each metric is aggregated as its record says (mean, pooled ratio, or derived);
    the keys are the family's contract (:meth:`~glyphbench.scoring.table.MetricTable.contract`:
    its summary text metrics, else its per-pair columns). Values that are not finite
    are written as null.

    >>> import pandas as pd
    >>> headline(pd.DataFrame({"wr": [100.0, 50.0], "pa": [100.0, 80.0]}), "vae")
    {'wr': 75.0, 'pa': 90.0}
    """

    names = METRICS.contract(family)[1]
    values = METRICS.aggregate(scored[~failed_mask(scored)], names, family)
    return {name: value if math.isfinite(value) else None for name, value in values.items()}


def register(app: typer.Typer) -> None:
    app.command("score")(score_command)
