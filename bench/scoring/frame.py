"""Score many (expected, OCR) pairs at once into a DataFrame, one column per metric."""

from __future__ import annotations

import functools
import gc
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from itertools import count, repeat
from typing import TYPE_CHECKING, Any, Literal, TypedDict, Unpack

import numpy as np
import pandas as pd

from glyphbench.scoring.normalize import Normalization, tokens
from glyphbench.scoring.pair import PAPER, Pair
from glyphbench.scoring.table import METRICS, Metric

if TYPE_CHECKING:
    #: Columns of :func:`score_pairs` in its default mode (the ``glyphbench`` family).
    SCORE_COLUMNS: tuple[str, ...]
    #: Direction of every metric in the table: True where higher is better.
    HIGHER_IS_BETTER: dict[str, bool]


def __getattr__(name: str) -> Any:
    """``SCORE_COLUMNS`` and ``HIGHER_IS_BETTER``, read from the table on first use.

    Computed lazily so that importing :mod:`glyphbench.scoring` does not import every
    family module while the package itself is still being imported.
    """
    if name == "SCORE_COLUMNS":
        value: Any = tuple(METRICS.columns(["glyphbench"], inputs="text"))
    elif name == "HIGHER_IS_BETTER":
        value = dict(METRICS.higher_is_better())
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def _clean(value: object) -> str:
    """Missing values (None, NaN) become empty strings, never the text 'nan'."""
    if value is None:
        return ""
    if isinstance(value, float) and value != value:
        return ""
    return str(value)


def text_metrics(
    families: Sequence[str] = ("glyphbench",), compat: str | None = None
) -> list[Metric]:
    """The per-image text metrics ``score_pairs`` computes for ``families`` or ``compat``.

    ``compat`` names a family (or an alias such as ``"reference"``) and replaces
    ``families``; an unknown name is a ValueError.

    >>> [metric.name for metric in text_metrics(compat="reference")][:2]
    ['score_longest_match', 'score_lcs']
    """
    if compat is not None:
        families = [METRICS.compat_family(compat)]
    return [m for m in METRICS.of(families) if m.per_image and m.inputs == "text"]


def score_one(expected: str, ocr: str, norm: Normalization = PAPER) -> tuple[Any, ...]:
    """All default scores of one pair, in the order of :data:`SCORE_COLUMNS`.

    >>> score_one("Hello", "HELL0")[:2]
    (1, 1)
    """
    pair = Pair(expected, ocr, norm)
    return tuple(_function(metric)(pair) for metric in text_metrics())


#: What a read cell holds: a glyphbench reader's lines (converted to each family's reader
#: units first) or text already in the benchmark reader's units (used as it is).
ReadAs = Literal["lines", "units"]


class ScoreOptions(TypedDict, total=False):
    """The keyword options of :func:`score_pairs` and :func:`score_columns`, all optional.

    ``families`` (default ``("glyphbench",)``): the metric families to score; ``compat``
    (default None): one family by name or alias instead; ``keep_case``, ``strip_punct``,
    ``nfkc``, ``fold_width`` (default False): the options of
    :func:`glyphbench.scoring.normalize.normalize`; ``read_as`` (default ``"lines"``): what a
    read cell holds (:data:`ReadAs`).
    """

    families: Sequence[str]
    compat: str | None
    keep_case: bool
    strip_punct: bool
    nfkc: bool
    fold_width: bool
    read_as: ReadAs


def score_pairs(
    expected: Iterable[object],
    ocr: Iterable[object],
    **options: Unpack[ScoreOptions],
) -> pd.DataFrame:
    """Score each (expected, OCR) pair; one row per pair, one column per metric.

    The columns are the per-image text metrics of ``families`` in the metric table
    (:data:`glyphbench.scoring.table.METRICS`), each with its record's dtype; by default
    the ``glyphbench`` family, i.e. :data:`SCORE_COLUMNS`. The normalisation options
    are those of :func:`glyphbench.scoring.normalize.normalize` (Han and kana are always
    scored per character). ``compat`` selects one
    family by name or alias instead: ``compat="reference"`` returns the four columns
    of TextInVision's ``score.py`` (:data:`glyphbench.scoring.REFERENCE_COLUMNS`), which
    ignore normalisation, as that script does.

    Missing values (None/NaN) are treated as empty strings.

    ``read_as="lines"`` (the default): each OCR cell is a glyphbench reader's output,
    lines in reading order; a family with a reader-units record
    (:meth:`glyphbench.scoring.table.MetricTable.units`, e.g. MARIO-Eval's one word per
    detection) scores the cell converted to its benchmark reader's units.
    ``read_as="units"``: the cells already are in those units (e.g. the OCR files a
    benchmark's own reader wrote) and every family scores them as they are.

    >>> row = score_pairs(["Hello"], ["HELL0"]).iloc[0]
    >>> int(row.algorithm1), float(row.ned), bool(row.exact_match)
    (1, 0.8, False)
    >>> list(score_pairs(["Hello"], ["HELL0"], families=["vae"]).columns)
    ['wr', 'pa']
    """
    return pd.DataFrame(score_columns(expected, ocr, **options))


def score_columns(
    expected: Iterable[object],
    ocr: Iterable[object],
    **options: Unpack[ScoreOptions],
) -> dict[str, np.ndarray]:
    """:func:`score_pairs` as metric name -> column (a numpy array), without the frame.

    For callers scoring a few pairs at a time, where building the frame costs more
    than the scores (the run scores each batch of images).

    >>> score_columns(["Hello"], ["HELL0"])["ned"].tolist()
    [0.8]
    """
    unknown = sorted(set(options) - ScoreOptions.__optional_keys__)
    if unknown:
        raise TypeError(f"unexpected keyword argument(s): {', '.join(unknown)}")
    metrics = text_metrics(options.get("families", ("glyphbench",)), options.get("compat"))
    norm = Normalization(
        options.get("keep_case", False),
        options.get("strip_punct", False),
        options.get("nfkc", False),
        options.get("fold_width", False),
    )
    read_as = options.get("read_as", "lines")
    if read_as not in ("lines", "units"):
        raise ValueError(f"read_as must be 'lines' or 'units'; got {read_as!r}")
    convert = {m.family: _units_of(m.family, read_as) for m in metrics}
    if len(set(convert.values())) > 1:  # families reading different units: one table each
        ocr = list(ocr)
        expected = list(expected)
        groups: dict[Any, list[Metric]] = {}
        for metric in metrics:
            groups.setdefault(convert[metric.family], []).append(metric)
        joined: dict[str, np.ndarray] = {}
        for function, group in groups.items():
            joined.update(_score(expected, ocr, group, norm, function))
        return {metric.name: joined[metric.name] for metric in metrics}
    return _score(expected, ocr, metrics, norm, next(iter(convert.values()), None))


def _units_of(family: str, read_as: ReadAs) -> Callable[[str], str] | None:
    """The function turning a read cell into ``family``'s reader units (None: as it is)."""
    units = METRICS.units(family) if read_as == "lines" else None
    return None if units is None else units.convert


def _score(
    expected: Iterable[object],
    ocr: Iterable[object],
    metrics: Sequence[Metric],
    norm: Normalization,
    convert: Callable[[str], str] | None,
) -> dict[str, np.ndarray]:
    """One column per metric; each OCR cell goes through ``convert`` first when given."""
    with _collector_paused():
        # (a str is by far the most common value: skip the call for it)
        exp_list = [v if type(v) is str else _clean(v) for v in expected]
        ocr_list = [v if type(v) is str else _clean(v) for v in ocr]
        if convert is not None:
            ocr_list = list(map(convert, ocr_list))
        if len(exp_list) != len(ocr_list):
            raise ValueError(f"expected has {len(exp_list)} items but ocr has {len(ocr_list)}")
        # Identical pairs are common in real runs (empty OCR, the same text across
        # seeds): each distinct pair is scored once and its row is repeated. ``first``
        # maps each distinct pair to the row where it first occurs.
        first: dict[tuple[str, str], int] = {}
        first_rows = list(map(first.setdefault, zip(exp_list, ocr_list, strict=True), count()))
        expected_texts = [e for e, _ in first]
        read_texts = [o for _, o in first]
        # The texts are normalised and split here, in one pass each, rather than
        # lazily by each pair; the rest each pair computes when a metric asks.
        expected_norm, read_norm = norm.many(expected_texts), norm.many(read_texts)
        pairs = map(
            Pair,
            expected_texts,
            read_texts,
            repeat(norm),
            expected_norm,
            read_norm,
            map(tokens, expected_norm),
            map(tokens, read_norm),
        )
        # Row by row: each pair (and all it cached) is dropped before the next is built.
        values = list(map(_row_function(metrics), pairs))
        # numpy converts the row tuples into typed columns in one pass.
        table = np.array(values, dtype=[(metric.name, metric.dtype) for metric in metrics])
        if len(first) < len(exp_list):
            table = table[_spread(first_rows, first.values())]
    return {metric.name: table[metric.name] for metric in metrics}


def _spread(first_rows: list[int], firsts: Iterable[int]) -> np.ndarray:
    """For every row, the index of its distinct pair (distinct pairs in first-seen order).

    >>> _spread([0, 1, 0, 3, 1], [0, 1, 3]).tolist()
    [0, 1, 0, 2, 1]
    """
    distinct_firsts = np.fromiter(firsts, np.intp)
    slot = np.empty(len(first_rows), dtype=np.intp)
    slot[distinct_firsts] = np.arange(len(distinct_firsts))
    return slot[np.asarray(first_rows, dtype=np.intp)]


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector: scoring builds many small acyclic objects
    (pairs, their cached results, row tuples) that it would rescan over and over."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _row_function(metrics: Sequence[Metric]) -> Callable[[Pair], tuple[Any, ...]]:
    """One function returning the tuple of every metric of a pair.

    Generated like a dataclass's ``__init__``: a literal tuple of direct calls is
    several times cheaper per row than a loop over the functions.

    >>> _row_function(text_metrics(compat="reference"))(Pair("Dream", "dram"))
    (2, 4, 1, 1)
    """
    return _row_of(tuple(map(_function, metrics)))


@functools.lru_cache(maxsize=64)
def _row_of(functions: tuple[Callable[[Any], Any], ...]) -> Callable[[Pair], tuple[Any, ...]]:
    """:func:`_row_function`, generated once per set of functions (a run scores every
    batch with the same ones: the harness paid ``exec`` per batch)."""
    names = [f"metric_{index}" for index in range(len(functions))]
    calls = "".join(f"{name}(pair), " for name in names)
    namespace: dict[str, Any] = dict(zip(names, functions, strict=True))
    exec(f"def row(pair):\n    return ({calls})\n", namespace)
    row: Callable[[Pair], tuple[Any, ...]] = namespace["row"]
    return row


def _function(metric: Metric) -> Callable[[Any], Any]:
    if metric.function is None:  # text_metrics keeps per-image metrics only
        raise ValueError(f"metric {metric.name!r} has no per-image function")
    return metric.function
