"""Slices: the attribute columns a report is cut by (``--by``), and each row's slice label.

:class:`Slicing` resolves ``--by`` once (defaults, checks, every column's labels);
everything downstream takes that one object. Numeric attributes are binned
(:data:`NUMERIC_BINS`, else quartiles), booleans become ``yes``/``no``, missing
values ``(none)``; labels are ordered categoricals in display order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from glyphbench.core.errors import InputError
from glyphbench.scoring.table import METRICS

#: Slices used when ``by`` is not given (those present in the table).
DEFAULT_BY = ("prompt_type", "group", "cefr", "char_length", "word_count", "laion_freq")

Bin = tuple[float, str]  # (inclusive lower bound, label); a bin ends where the next begins

#: Text length in characters.
CHAR_LENGTH_BINS: tuple[Bin, ...] = (
    (1, "1-5"),
    (6, "6-10"),
    (11, "11-20"),
    (21, "21-50"),
    (51, "51+"),
)
#: Words in the text.
WORD_COUNT_BINS: tuple[Bin, ...] = ((1, "1"), (2, "2-3"), (4, "4-10"), (11, "11+"))
#: Corpus frequency counts, in log10 bands (0 = never seen).
FREQUENCY_BINS: tuple[Bin, ...] = (
    (0, "0"),
    (1, "1-9"),
    (10, "10-99"),
    (100, "100-999"),
    (1_000, "1k-9.9k"),
    (10_000, "10k-99k"),
    (100_000, "100k+"),
)
#: Prompt length in characters / words.
PROMPT_CHAR_BINS: tuple[Bin, ...] = ((1, "1-50"), (51, "51-100"), (101, "101-200"), (201, "201+"))
PROMPT_WORD_BINS: tuple[Bin, ...] = ((1, "1-10"), (11, "11-20"), (21, "21-40"), (41, "41+"))

#: Documented bins of the numeric prompt attributes; other numeric columns use quartiles.
NUMERIC_BINS: dict[str, tuple[Bin, ...]] = {
    "char_length": CHAR_LENGTH_BINS,
    "word_count": WORD_COUNT_BINS,
    "laion_freq": FREQUENCY_BINS,
    "coco_freq": FREQUENCY_BINS,
    "prompt_char_length": PROMPT_CHAR_BINS,
    "prompt_word_count": PROMPT_WORD_BINS,
}

#: Fixed display orders for categorical attributes.
KNOWN_ORDERS: dict[str, tuple[str, ...]] = {
    "prompt_type": ("simple", "complex", "real_world"),
    "cefr": ("A1", "A2", "B1", "B2", "C1", "C2"),
}

MISSING_LABEL = "(none)"
UNKNOWN_LABEL = "unknown"


def bin_numeric(series: pd.Series, bins: Sequence[Bin]) -> pd.Series:
    """Label each value with its bin; missing values become ``"unknown"``.

    A bin holds values from its lower bound up to (not including) the next bin's
    lower bound; the last bin is open. Values below the first bound get ``"<lo"``.
    The result is an ordered categorical in bin order.

    >>> bin_numeric(pd.Series([1, 5, 6, 20, 21, 300, None]), CHAR_LENGTH_BINS).tolist()
    ['1-5', '1-5', '6-10', '11-20', '21-50', '51+', 'unknown']
    >>> bin_numeric(pd.Series([0, 9, 10, 12_000]), FREQUENCY_BINS).tolist()
    ['0', '1-9', '10-99', '10k-99k']
    """
    lows = np.array([low for low, _ in bins], dtype=float)
    labels = [label for _, label in bins]
    values = pd.to_numeric(series, errors="coerce").astype("float64").to_numpy()
    position = np.searchsorted(lows, values, side="right") - 1
    below = f"<{bins[0][0]:g}"
    code = np.where(np.isnan(values), len(labels) + 1, position + 1)
    categories = [below, *labels, UNKNOWN_LABEL]
    used = [c for c in categories if c != below or (code == 0).any()]
    if used[0] != below:
        code = code - 1  # no value below the first bound: its category is left out
    return pd.Series(
        pd.Categorical.from_codes(code, categories=used, ordered=True),
        index=series.index,
        name=series.name,
    )


def quantile_bins(series: pd.Series, n: int = 4) -> tuple[Bin, ...]:
    """Bins starting at the ``n``-quantiles of ``series`` (numeric columns without documented bins).

    >>> quantile_bins(pd.Series(range(1, 101)), 4)
    ((1.0, '1-25'), (26.0, '26-50'), (51.0, '51-75'), (76.0, '76+'))
    """
    values = pd.to_numeric(series, errors="coerce").dropna().astype("float64")
    if values.empty:
        return ((0.0, "0+"),)
    # "higher" makes each quantile the first value of its bin.
    lows = sorted({float(values.quantile(q, interpolation="higher")) for q in np.arange(n) / n})
    integer = bool((values == values.round()).all())
    out: list[Bin] = []
    for i, low in enumerate(lows):
        if i + 1 == len(lows):
            out.append((low, f"{low:g}+"))
        else:
            high = lows[i + 1] - 1 if integer else lows[i + 1]
            out.append((low, f"{low:g}-{high:g}" if high != low else f"{low:g}"))
    return tuple(out)


def slice_labels(frame: pd.DataFrame, column: str) -> pd.Series:
    """The slice label of every row for attribute ``column``, as an ordered categorical.

    Numeric attributes are binned (:data:`NUMERIC_BINS`, else quartiles), booleans
    become ``yes``/``no``, missing values ``(none)``; known attributes keep their
    natural order (prompt types, CEFR levels), others sort alphabetically.
    """
    if column not in frame.columns:
        raise KeyError(column)
    series = frame[column]
    if column in NUMERIC_BINS:
        return bin_numeric(series, NUMERIC_BINS[column])
    if pd.api.types.is_bool_dtype(series):
        labels = series.map({True: "yes", False: "no"}).astype(object)
        labels = labels.where(series.notna(), MISSING_LABEL)
        order = ["yes", "no", MISSING_LABEL]
        return pd.Series(
            pd.Categorical(labels, categories=order, ordered=True), index=series.index, name=column
        )
    if pd.api.types.is_numeric_dtype(series) and series.nunique(dropna=True) > 12:
        return bin_numeric(series, quantile_bins(series))
    if isinstance(series.dtype, pd.StringDtype):  # label the distinct values, not every row
        codes, uniques = pd.factorize(series)
        distinct = [str(u) for u in uniques] + [MISSING_LABEL]  # code -1: missing
        order = _label_order(
            column, set(distinct[:-1]) | ({MISSING_LABEL} if (codes < 0).any() else set())
        )
        position = {label: i for i, label in enumerate(order)}
        to_order = np.array([position.get(label, -1) for label in distinct], dtype=np.int64)
        return pd.Series(
            pd.Categorical.from_codes(to_order[codes], categories=order, ordered=True),
            index=series.index,
            name=column,
        )
    labels = series.astype(object).where(series.notna(), MISSING_LABEL).astype(str)
    order = _label_order(column, set(labels.unique()))
    return pd.Series(
        pd.Categorical(labels, categories=order, ordered=True), index=series.index, name=column
    )


def _label_order(column: str, present: set[str]) -> list[str]:
    """Slice labels in order: a known attribute's own order, others sorted, missing last."""
    known = KNOWN_ORDERS.get(column, ())
    order = [v for v in known if v in present]
    order += sorted(present - set(order) - {MISSING_LABEL})
    if MISSING_LABEL in present:
        order.append(MISSING_LABEL)
    return order


def default_by(frame: pd.DataFrame) -> list[str]:
    """The :data:`DEFAULT_BY` columns that exist and hold at least one value."""
    return [c for c in DEFAULT_BY if c not in skipped_defaults(frame)]


def skipped_defaults(frame: pd.DataFrame) -> dict[str, str]:
    """The :data:`DEFAULT_BY` columns a default report leaves out, each with the reason.

    >>> skipped_defaults(pd.DataFrame({"prompt_type": ["simple"], "laion_freq": [None]}))
    ... # doctest: +NORMALIZE_WHITESPACE
    {'group': 'not in the results (the prompt set has no such column)',
     'cefr': 'not in the results (the prompt set has no such column)',
     'char_length': 'not in the results (the prompt set has no such column)',
     'word_count': 'not in the results (the prompt set has no such column)',
     'laion_freq': 'no values: every row is missing it'}
    """
    skipped = {}
    for column in DEFAULT_BY:
        if column not in frame.columns:
            skipped[column] = "not in the results (the prompt set has no such column)"
        elif not frame[column].notna().any():
            skipped[column] = "no values: every row is missing it"
    return skipped


def score_columns() -> frozenset[str]:
    """The per-image score columns of every metric family (``ned``, ``cvtg_word_ned``, ...)."""
    return frozenset(metric.name for metric in METRICS.all() if metric.per_image)


def unknown_columns_problem(unknown: Sequence[str], frame: pd.DataFrame) -> str:
    """The ``--by`` error: the unknown names, a close match, and every valid column.

    >>> frame = pd.DataFrame(columns=["model", "prompt_type", "cefr", "ned"])
    >>> for part in unknown_columns_problem(["prompt_typ"], frame).split("; "):
    ...     print(part)
    --by names unknown column 'prompt_typ' (did you mean 'prompt_type'?)
    valid columns (2): cefr, prompt_type
    """
    import difflib

    valid = sorted(str(c) for c in frame.columns if c != "model" and c not in score_columns())
    names = ", ".join(repr(c) for c in unknown)
    hints = [m for c in unknown for m in difflib.get_close_matches(c, valid, n=1)]
    hint = f" (did you mean {', '.join(repr(h) for h in hints)}?)" if hints else ""
    plural = "s" if len(unknown) > 1 else ""
    return (
        f"--by names unknown column{plural} {names}{hint}; "
        f"valid columns ({len(valid)}): {', '.join(valid)}"
    )


def bins_note(column: str) -> str:
    """A sentence naming the documented bins of ``column`` (empty for other columns).

    >>> bins_note("word_count")
    'Bins: 1, 2-3, 4-10, 11+ (missing values: unknown).'
    """
    bins = NUMERIC_BINS.get(column)
    if not bins:
        return ""
    return "Bins: " + ", ".join(label for _, label in bins) + " (missing values: unknown)."


@dataclass(frozen=True)
class Slicing:
    """The resolved ``--by``: slicing columns and every row's slice label for each.

    >>> frame = pd.DataFrame({"model": ["m", "m"], "prompt_type": ["simple", "complex"]})
    >>> slicing = Slicing.resolve(frame, None)
    >>> slicing.columns, slicing.labels["prompt_type"].tolist(), slicing.first
    (('prompt_type',), ['simple', 'complex'], 'prompt_type')
    """

    columns: tuple[str, ...]
    labels: Mapping[str, pd.Series]
    #: default columns left out (only when ``by`` was not given) -> why
    skipped: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def resolve(cls, frame: pd.DataFrame, by: Sequence[str] | None) -> Slicing:
        """Check ``by`` against ``frame`` (default: :func:`default_by`) and label every row."""
        columns = default_by(frame) if by is None else list(by)
        if "model" in columns:
            raise InputError(None, "--by cannot include 'model': every table is already per model")
        unknown = [c for c in columns if c not in frame.columns]
        if unknown:
            raise InputError(None, unknown_columns_problem(unknown, frame))
        outcomes = [c for c in columns if c in score_columns()]
        if outcomes:  # every table already aggregates them; a slice by its own outcome is circular
            raise InputError(
                None,
                f"--by cannot use the score column {outcomes[0]!r}: slice by what was asked "
                "(a prompt's attributes), not by how it was scored",
            )
        labels = {c: slice_labels(frame, c) for c in dict.fromkeys(columns)}
        return cls(tuple(columns), labels, skipped_defaults(frame) if by is None else {})

    @property
    def first(self) -> str | None:
        """The first column (the gallery's slices), None without columns."""
        return self.columns[0] if self.columns else None

    def slicings(self) -> list[list[str]]:
        """Overall (no column), then each column on its own."""
        return [[], *([c] for c in self.columns)]
