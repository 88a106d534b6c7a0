"""Statistics behind the report: slices, bootstrap intervals, paired comparisons, ranks.

Every function is pure: it takes the results table (or a summary made from it)
and returns numbers or a DataFrame; nothing here reads or writes files.

Conventions
-----------
* Metric means exclude failed rows (``error`` not empty); failures are counted
  separately (``n_errors``, ``error_rate``).
* Intervals are 95% percentile bootstrap intervals by default. Every random draw
  comes from a generator seeded with ``(seed, slice key)``, so an interval does
  not change when other slices or models are added, and the same seed gives the
  same report.
* Direction: :data:`bench.scoring.HIGHER_IS_BETTER` (``algorithm1`` is a count of
  edits: lower is better; the other summary metrics: higher is better).
"""

from __future__ import annotations

import contextlib
import math
import warnings
import zlib
from collections.abc import Callable, Iterable, Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from bench.scoring.pairs import HIGHER_IS_BETTER

#: Metrics of the summary table, in display order.
SUMMARY_METRICS: tuple[str, ...] = ("algorithm1", "exact_match", "ned", "anls", "word_f1")

#: Human labels for metric columns.
METRIC_LABELS: dict[str, str] = {
    "algorithm1": "Algorithm 1 distance",
    "exact_match": "Exact match",
    "ned": "NED similarity",
    "anls": "ANLS",
    "word_f1": "Word F1",
    "word_precision": "Word precision",
    "word_recall": "Word recall",
    "cer": "CER",
    "wer": "WER",
    "error_rate": "Error rate",
}

# --------------------------------------------------------------------------- bins

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
    names = np.array([below, *labels, UNKNOWN_LABEL], dtype=object)
    code = np.where(np.isnan(values), len(labels) + 1, position + 1)
    categories = [below, *labels, UNKNOWN_LABEL]
    used = [c for c in categories if c != below or (code == 0).any()]
    return pd.Series(
        pd.Categorical(names[code], categories=used, ordered=True),
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
    labels = series.astype(object).where(series.notna(), MISSING_LABEL).astype(str)
    present = set(labels.unique())
    known = KNOWN_ORDERS.get(column, ())
    order = [v for v in known if v in present]
    order += sorted(present - set(order) - {MISSING_LABEL})
    if MISSING_LABEL in present:
        order.append(MISSING_LABEL)
    return pd.Series(
        pd.Categorical(labels, categories=order, ordered=True), index=series.index, name=column
    )


# --------------------------------------------------------------------------- bootstrap


def _alpha(confidence: float) -> float:
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return 1.0 - confidence


def slice_rng(seed: int, key: Iterable[object]) -> np.random.Generator:
    """A generator seeded by ``seed`` and a slice key (stable across runs and platforms)."""
    digest = zlib.crc32("\x1f".join(map(str, key)).encode("utf-8"))
    return np.random.default_rng([seed, digest])


def single_threaded_blas() -> contextlib.AbstractContextManager[Any]:
    """Limit BLAS to one thread while resampling (a no-op without threadpoolctl).

    The bootstrap does many small matrix products; on a 2-core machine a
    multi-threaded BLAS spends most of each call starting and syncing threads
    (measured: 7 slice products took 55 ms with 2 OpenBLAS threads, 6 ms with 1).
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


#: Most index cells drawn at once; larger bootstraps are drawn in blocks of resamples.
_MAX_CELLS = 4_000_000


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    *,
    n_boot: int = 1000,
    seed: int | np.random.Generator = 0,
    stat: Callable[..., Any] = np.mean,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``stat`` over ``values`` (NaNs dropped).

    All resample indices are drawn as one ``(n_boot, n)`` matrix and ``stat`` is
    applied along axis 1 (so ``stat`` must accept ``axis=``, as numpy reductions do);
    only when that matrix would exceed 4 million cells is it drawn in blocks of
    resamples. One value gives a zero-width interval; none gives (nan, nan).

    >>> lo, hi = bootstrap_ci([1.0, 2.0, 3.0, 4.0], n_boot=2000, seed=0)
    >>> 1.0 <= lo < 2.5 < hi <= 4.0
    True
    >>> bootstrap_ci([7.0], n_boot=10)
    (7.0, 7.0)
    """
    data = np.asarray(values, dtype="float64")
    data = data[~np.isnan(data)]
    n = data.size
    if n == 0:
        return (math.nan, math.nan)
    if n == 1:
        return (float(data[0]), float(data[0]))
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    stats = np.empty(n_boot)
    block = max(1, _MAX_CELLS // n)
    for start in range(0, n_boot, block):
        size = min(block, n_boot - start)
        idx = rng.integers(0, n, size=(size, n))
        stats[start : start + size] = stat(data[idx], axis=1)
    alpha = _alpha(confidence)
    lo, hi = np.quantile(stats, [alpha / 2, 1 - alpha / 2])
    return (float(lo), float(hi))


def bootstrap_mean_ci(
    values: np.ndarray,
    *,
    n_boot: int,
    rng: np.random.Generator,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean, drawn the cheapest exact way.

    Resampling ``n`` values with replacement is the same as drawing how many
    times each *distinct* value is picked: a multinomial over the distinct values
    with their observed frequencies. Scores take few distinct values (exact match:
    2; edit counts: a handful), so when there are at most ``n / 16`` of them the
    resample counts are drawn directly (``n_boot`` x distinct values instead of
    ``n_boot`` x ``n`` indices). The distribution of resampled means is identical;
    only the random stream differs. Otherwise this falls back to the index matrix
    of :func:`bootstrap_ci`.

    >>> rng = np.random.default_rng(0)
    >>> lo, hi = bootstrap_mean_ci(np.array([0.0] * 50 + [1.0] * 50), n_boot=2000, rng=rng)
    >>> 0.38 < lo < 0.5 < hi < 0.62
    True
    """
    data = np.asarray(values, dtype="float64")
    data = data[~np.isnan(data)]
    n = data.size
    if n <= 1:
        return bootstrap_ci(data, n_boot=n_boot, seed=rng)
    distinct, counts = np.unique(data, return_counts=True)
    if distinct.size * 16 > n:
        return bootstrap_ci(data, n_boot=n_boot, seed=rng, confidence=confidence)
    draws = rng.multinomial(n, counts / n, size=n_boot)
    means = draws @ distinct / n
    alpha = _alpha(confidence)
    lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return (float(lo), float(hi))


def bootstrap_means(values: np.ndarray, *, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """Bootstrap means of every column of ``values`` (n x k), sharing the resamples.

    Returns an ``(n_boot, k)`` array. Resample indices are drawn as one matrix;
    instead of gathering ``n_boot * n * k`` values, each resample's index counts
    are tallied (``bincount``) and multiplied with the value matrix, so all
    metrics of a slice cost one draw and one matrix product. NaNs are skipped per
    column (the mean is over that resample's finite values). Blocks of resamples
    keep memory near 4 million cells.

    >>> means = bootstrap_means(np.array([[1.0, 0.0], [3.0, 1.0]]), n_boot=4000,
    ...                         rng=np.random.default_rng(0))
    >>> sorted(set(means[:, 0].round(6).tolist()))  # resamples of 2 values: means 1, 2 or 3
    [1.0, 2.0, 3.0]
    >>> bool(abs(means[:, 0].mean() - 2.0) < 0.05)
    True
    """
    data = np.asarray(values, dtype="float64")
    if data.ndim == 1:
        data = data[:, None]
    n, k = data.shape
    out = np.full((n_boot, k), np.nan)
    if n == 0:
        return out
    finite = np.isfinite(data)
    filled = np.where(finite, data, 0.0)
    weights = finite.astype("float64")
    block = max(1, _MAX_CELLS // n)
    index_type = np.int32 if min(block, n_boot) * n < 2**31 else np.int64
    with single_threaded_blas():
        _fill_means(out, filled, weights, n_boot, block, index_type, rng)
    return out


def _fill_means(
    out: np.ndarray,
    filled: np.ndarray,
    weights: np.ndarray,
    n_boot: int,
    block: int,
    index_type: type,
    rng: np.random.Generator,
) -> None:
    n = filled.shape[0]
    for start in range(0, n_boot, block):
        size = min(block, n_boot - start)
        idx = rng.integers(0, n, size=(size, n), dtype=index_type)
        # Row r of idx is shifted into bins [r*n, (r+1)*n): one bincount gives every resample's counts.
        idx += (np.arange(size, dtype=index_type) * n)[:, None]
        counts = np.bincount(idx.ravel(), minlength=size * n).reshape(size, n).astype("float64")
        with np.errstate(invalid="ignore", divide="ignore"):
            out[start : start + size] = (counts @ filled) / (counts @ weights)


# --------------------------------------------------------------------------- summaries


def failed_mask(frame: pd.DataFrame) -> np.ndarray:
    """True for rows whose generation/OCR/scoring failed (``error`` not empty)."""
    if "error" not in frame.columns:
        return np.zeros(len(frame), dtype=bool)
    errors = frame["error"].astype(object)
    return (errors.notna() & (errors.astype(str).str.strip() != "")).to_numpy()


def _metric_matrix(frame: pd.DataFrame, metrics: Sequence[str]) -> np.ndarray:
    missing = [m for m in metrics if m not in frame.columns]
    if missing:
        raise KeyError(f"results table lacks score columns {missing}")
    return (
        np.column_stack(
            [
                pd.to_numeric(frame[m].astype(object), errors="coerce").astype("float64").to_numpy()
                for m in metrics
            ]
        )
        if metrics
        else np.empty((len(frame), 0))
    )


#: Most slices (times metrics) a slicing may have for the shared-resample path of
#: :func:`summarize_many`; beyond it, per-slice Python work dominates and each slice
#: is resampled on its own (fixed size) instead.
_MAX_SLICE_MATRIX = 2_000


def summarize(
    frame: pd.DataFrame,
    by: Sequence[str] = (),
    *,
    metrics: Sequence[str] = SUMMARY_METRICS,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Per model and slice: n, errors and the mean of each metric with its interval.

    One row per (model, slice of ``by``); ``by=()`` gives one row per model.
    Columns: ``model``, the ``by`` columns (slice labels, see :func:`slice_labels`),
    ``n`` (rows that succeeded), ``n_errors``, ``error_rate`` with
    ``error_rate_lo``/``_hi``, then for each metric ``m``: ``m``, ``m_lo``, ``m_hi``.
    ``frame.attrs`` of the result records ``n_boot``, ``seed`` and ``confidence``.
    Intervals: see :func:`summarize_many`.

    >>> f = pd.DataFrame({"model": ["a", "a", "a", "b"], "prompt_type": ["simple"] * 4,
    ...                   "ned": [1.0, 0.5, None, 0.25], "error": ["", "", "Generate: X", ""]})
    >>> s = summarize(f, ["prompt_type"], metrics=["ned"], n_boot=200)
    >>> s[["model", "prompt_type", "n", "n_errors", "ned"]].to_dict("records")
    [{'model': 'a', 'prompt_type': 'simple', 'n': 2, 'n_errors': 1, 'ned': 0.75}, \
{'model': 'b', 'prompt_type': 'simple', 'n': 1, 'n_errors': 0, 'ned': 0.25}]
    """
    return summarize_many(
        frame, [by], metrics=metrics, n_boot=n_boot, seed=seed, confidence=confidence
    )[0]


def _slice_codes(
    frame: pd.DataFrame, by: Sequence[str], labels: dict[str, pd.Series]
) -> tuple[np.ndarray, list[tuple]]:
    """Code of every row's slice of ``by`` (0..S-1, in label order) and each code's label tuple."""
    if not by:
        return np.zeros(len(frame), dtype=np.int64), [()]
    key_frame = pd.DataFrame({c: labels[c].to_numpy() for c in by})
    grouped = key_frame.groupby(list(by), observed=True, sort=True)
    codes = grouped.ngroup().to_numpy()
    first = pd.Series(np.arange(len(codes))).groupby(codes).first().to_numpy()
    keys = [tuple(key_frame.iloc[i]) for i in first]
    return codes, keys


def _summarize_model(
    model: str,
    idx: np.ndarray,
    slicings: list[list[str]],
    coded: list[tuple[np.ndarray, list[tuple]]],
    too_big: list[int],
    failed: np.ndarray,
    values: np.ndarray,
    metrics: list[str],
    n_boot: int,
    seed: int,
    alpha: float,
    results: list[list[dict[str, Any]]],
) -> None:
    """One model's part of :func:`summarize_many`: appends its rows to ``results``."""
    k = len(metrics)
    ok_rows = idx[~failed[idx]]
    data = values[ok_rows]
    finite = np.isfinite(data)
    filled = np.where(finite, data, 0.0)
    all_finite = bool(finite.all())
    plans: list[dict[str, Any] | None] = []
    for j, (codes, _keys) in enumerate(coded):
        if j in too_big:
            plans.append(None)
            continue
        present, local_all = np.unique(codes[idx], return_inverse=True)
        local_ok = local_all[~failed[idx]]
        # Rows sorted by slice: each slice is a contiguous block of columns of the counts.
        order = np.argsort(local_ok, kind="stable")
        edges = np.searchsorted(local_ok[order], np.arange(present.size + 1))
        plans.append(
            {
                "present": present,
                "local_all": local_all,
                "local_ok": local_ok,
                "order": order,
                "edges": edges,
                "values": filled[order],
                "finite": finite[order].astype("float64"),
                "boot": np.full((n_boot, k, present.size), np.nan),
            }
        )
    n_ok = ok_rows.size
    if n_ok and any(p is not None for p in plans):
        rng = slice_rng(seed, ("model", model))
        block = max(1, _MAX_CELLS // n_ok)
        index_type = np.int32 if min(block, n_boot) * n_ok < 2**31 else np.int64
        for start in range(0, n_boot, block):
            size = min(block, n_boot - start)
            draw = rng.integers(0, n_ok, size=(size, n_ok), dtype=index_type)
            # Image i of resample r lands in bin i*size + r: counts come out image-major
            # (n_ok x size), so a slice's rows are one contiguous block.
            draw *= size
            draw += np.arange(size, dtype=index_type)[:, None]
            counts = (
                np.bincount(draw.ravel(), minlength=size * n_ok)
                .reshape(n_ok, size)
                .astype("float64")
            )
            for plan in plans:
                if plan is None:
                    continue
                edges = plan["edges"]
                ordered = counts if edges.size == 2 else np.take(counts, plan["order"], axis=0)
                for s_local in range(edges.size - 1):
                    a, b = edges[s_local], edges[s_local + 1]
                    segment = ordered[a:b]
                    sums = segment.T @ plan["values"][a:b]
                    if all_finite:
                        weights = segment.sum(axis=0)[:, None]
                    else:
                        weights = segment.T @ plan["finite"][a:b]
                    with np.errstate(invalid="ignore", divide="ignore"):
                        plan["boot"][start : start + size, :, s_local] = sums / weights
    for j, plan in enumerate(plans):
        if plan is None:
            continue
        by = slicings[j]
        keys = coded[j][1]
        quantiles = [alpha / 2, 1 - alpha / 2]
        if np.isnan(plan["boot"]).any():  # a slice missing from some resamples: skip those
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # never drawn: NaN bounds
                bounds = np.nanquantile(plan["boot"], quantiles, axis=0)  # (2, k, S)
        else:
            bounds = np.quantile(plan["boot"], quantiles, axis=0)
        for s_local, code in enumerate(plan["present"]):
            key = keys[code]
            in_slice = plan["local_all"] == s_local
            n_all = int(in_slice.sum())
            ok_in = plan["local_ok"] == s_local
            n_good = int(ok_in.sum())
            row: dict[str, Any] = {"model": model, **dict(zip(by, key))}
            row.update(n=n_good, n_errors=n_all - n_good, error_rate=(n_all - n_good) / n_all)
            rates = (
                slice_rng(seed, ("errors", model, *by, *key)).binomial(
                    n_all, row["error_rate"], size=n_boot
                )
                / n_all
            )
            row["error_rate_lo"], row["error_rate_hi"] = (
                float(x) for x in np.quantile(rates, [alpha / 2, 1 - alpha / 2])
            )
            for m, metric in enumerate(metrics):
                column = data[ok_in, m]
                column = column[np.isfinite(column)]
                if column.size:
                    row[metric] = float(column.mean())
                    row[f"{metric}_lo"], row[f"{metric}_hi"] = (
                        float(bounds[0, m, s_local]),
                        float(bounds[1, m, s_local]),
                    )
                else:
                    row[metric] = row[f"{metric}_lo"] = row[f"{metric}_hi"] = math.nan
            results[j].append(row)


def summarize_many(
    frame: pd.DataFrame,
    slicings: Sequence[Sequence[str]],
    *,
    metrics: Sequence[str] = SUMMARY_METRICS,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> list[pd.DataFrame]:
    """:func:`summarize` for several slicings at once, sharing the resamples.

    The resampling unit is a model's successful images: each resample draws that
    many of them with replacement (seeded by ``(seed, model)``), and every slice
    mean of every slicing is computed from the same draw; a slice's size then
    varies across resamples as it would in a re-run drawing new prompts from the
    same mix (resamples where a slice is empty are skipped for that slice). One
    draw per model serves all slicings and metrics: with the rows sorted by slice,
    each slice's sums are one product of a block of the resample counts with that
    slice's values. Slicings with very many slices (e.g. ``by=["prompt_id"]``) are
    resampled slice by slice instead. Error rates use the exact ``Binomial(n, p) / n``
    distribution of a resampled 0/1 mean.
    """
    slicing_lists: list[list[str]] = [list(b) for b in slicings]
    if not slicing_lists:
        return []
    alpha = _alpha(confidence)
    metrics = list(metrics)
    k = len(metrics)
    labels = {c: slice_labels(frame, c) for c in dict.fromkeys(c for b in slicing_lists for c in b)}
    coded = [_slice_codes(frame, by, labels) for by in slicing_lists]
    failed = failed_mask(frame)
    values = _metric_matrix(frame, metrics)
    models = frame["model"].astype(str).to_numpy()
    model_rows = pd.Series(np.arange(len(frame))).groupby(models, sort=True).indices
    too_big = [
        j for j, (_codes, keys) in enumerate(coded) if max(k, 1) * len(keys) > _MAX_SLICE_MATRIX
    ]
    results: list[list[dict[str, Any]]] = [[] for _ in slicing_lists]
    with single_threaded_blas():
        for model, idx in model_rows.items():
            _summarize_model(
                str(model),
                idx,
                slicing_lists,
                coded,
                too_big,
                failed,
                values,
                metrics,
                n_boot,
                seed,
                alpha,
                results,
            )
    outputs = []
    for j, by in enumerate(slicing_lists):
        if j in too_big:
            outputs.append(
                _summarize_slice_by_slice(
                    frame, by, metrics=metrics, n_boot=n_boot, seed=seed, confidence=confidence
                )
            )
            continue
        columns = ["model", *by, "n", "n_errors", "error_rate", "error_rate_lo", "error_rate_hi"]
        for metric in metrics:
            columns += [metric, f"{metric}_lo", f"{metric}_hi"]
        out = pd.DataFrame(results[j], columns=columns)
        for column in by:
            out[column] = pd.Categorical(
                out[column], categories=labels[column].cat.categories, ordered=True
            )
        out = out.sort_values(["model", *by], kind="stable").reset_index(drop=True)
        out.attrs.update(n_boot=n_boot, seed=seed, confidence=confidence)
        outputs.append(out)
    return outputs


def _summarize_slice_by_slice(
    frame: pd.DataFrame,
    by: Sequence[str] = (),
    *,
    metrics: Sequence[str] = SUMMARY_METRICS,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Fallback of :func:`summarize` for slicings with very many slices: each
    (model, slice) is resampled on its own (fixed slice size), seeded by its key."""
    by = list(by)
    keys = {"model": frame["model"].astype(str).to_numpy()}
    label_series = {c: slice_labels(frame, c) for c in by}
    key_frame = pd.DataFrame({**keys, **{c: s.to_numpy() for c, s in label_series.items()}})
    failed = failed_mask(frame)
    values = _metric_matrix(frame, metrics)
    rows: list[dict[str, Any]] = []
    alpha = _alpha(confidence)
    groups = key_frame.groupby(list(key_frame.columns), observed=True, sort=False).indices
    for key, idx in groups.items():
        key_tuple = key if isinstance(key, tuple) else (key,)
        rng = slice_rng(seed, (*key_tuple, *by))
        bad = failed[idx]
        n_all = idx.size
        n_err = int(bad.sum())
        row: dict[str, Any] = dict(zip(key_frame.columns, key_tuple))
        row.update(n=n_all - n_err, n_errors=n_err, error_rate=n_err / n_all if n_all else math.nan)
        # The resampled mean of a 0/1 column is Binomial(n, p)/n: drawn directly.
        rates = rng.binomial(n_all, row["error_rate"], size=n_boot) / n_all
        row["error_rate_lo"], row["error_rate_hi"] = (
            float(x) for x in np.quantile(rates, [alpha / 2, 1 - alpha / 2])
        )
        good = values[idx[~bad]]
        if len(good) > 1:
            boot = bootstrap_means(good, n_boot=n_boot, rng=rng)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns give NaN bounds
                bounds = np.nanquantile(boot, [alpha / 2, 1 - alpha / 2], axis=0)
        else:
            bounds = (
                np.vstack([good[0], good[0]]) if len(good) else np.full((2, len(metrics)), math.nan)
            )
        for j, metric in enumerate(metrics):
            column = good[:, j]
            column = column[~np.isnan(column)]
            row[metric] = float(column.mean()) if column.size else math.nan
            lo, hi = (
                (float(bounds[0, j]), float(bounds[1, j])) if column.size else (math.nan, math.nan)
            )
            row[f"{metric}_lo"], row[f"{metric}_hi"] = lo, hi
        rows.append(row)
    columns = ["model", *by, "n", "n_errors", "error_rate", "error_rate_lo", "error_rate_hi"]
    for metric in metrics:
        columns += [metric, f"{metric}_lo", f"{metric}_hi"]
    out = pd.DataFrame(rows, columns=columns)
    for column, labels in label_series.items():
        out[column] = pd.Categorical(out[column], categories=labels.cat.categories, ordered=True)
    out = out.sort_values(["model", *by], kind="stable").reset_index(drop=True)
    out.attrs.update(n_boot=n_boot, seed=seed, confidence=confidence)
    return out


# --------------------------------------------------------------------------- comparisons


def per_prompt_means(frame: pd.DataFrame, model: str, metric: str) -> pd.Series:
    """Mean of ``metric`` per prompt_id for one model (failed rows excluded)."""
    rows = frame[(frame["model"].astype(str) == model).to_numpy() & ~failed_mask(frame)]
    values = pd.to_numeric(rows[metric].astype(object), errors="coerce").astype("float64")
    return values.groupby(rows["prompt_id"].astype(str).to_numpy()).mean().dropna()


def paired_difference(
    frame: pd.DataFrame,
    model_a: str,
    model_b: str,
    metric: str = "ned",
    *,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> dict[str, Any]:
    """``model_a`` minus ``model_b`` on the prompts both saw, with a paired bootstrap interval.

    Each model's scores are first averaged per prompt (over seeds and samples);
    the differences of those prompt means are resampled together, prompt by
    prompt, so prompt difficulty cancels out. ``better`` names the model whose
    advantage is significant (interval excludes 0), in the metric's direction.

    >>> f = pd.DataFrame({"model": ["a", "a", "b", "b"], "prompt_id": ["p1", "p2", "p1", "p2"],
    ...                   "ned": [1.0, 0.8, 0.5, 0.4]})
    >>> d = paired_difference(f, "a", "b", "ned", n_boot=500)
    >>> d["n_prompts"], round(d["diff"], 3), d["better"]
    (2, 0.45, 'a')
    """
    a = per_prompt_means(frame, model_a, metric)
    b = per_prompt_means(frame, model_b, metric)
    shared = a.index.intersection(b.index)
    diffs = (a[shared] - b[shared]).to_numpy()
    result: dict[str, Any] = {
        "model_a": model_a,
        "model_b": model_b,
        "metric": metric,
        "n_prompts": int(shared.size),
        "mean_a": float(a[shared].mean()) if shared.size else math.nan,
        "mean_b": float(b[shared].mean()) if shared.size else math.nan,
        "diff": float(diffs.mean()) if diffs.size else math.nan,
    }
    rng = slice_rng(seed, ("paired", model_a, model_b, metric))
    lo, hi = bootstrap_mean_ci(diffs, n_boot=n_boot, rng=rng, confidence=confidence)
    significant = bool(diffs.size > 1 and (lo > 0 or hi < 0))
    better = None
    if significant:
        a_higher = result["diff"] > 0
        better = model_a if a_higher == HIGHER_IS_BETTER.get(metric, True) else model_b
    result.update(lo=lo, hi=hi, significant=significant, better=better)
    return result


def prompt_means(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Mean ``metric`` per prompt (rows) and model (columns), failed rows excluded."""
    ok = frame[~failed_mask(frame)]
    values = pd.to_numeric(ok[metric].astype(object), errors="coerce").astype("float64")
    keys = pd.DataFrame(
        {
            "prompt_id": ok["prompt_id"].astype(str).to_numpy(),
            "model": ok["model"].astype(str).to_numpy(),
            "v": values.to_numpy(),
        }
    )
    return keys.groupby(["prompt_id", "model"], sort=True)["v"].mean().unstack("model")


def compare_models(
    frame: pd.DataFrame,
    models: Sequence[str],
    metrics: Sequence[str] = ("ned", "exact_match"),
    *,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Paired differences (as :func:`paired_difference`) for every pair of ``models`` and metric.

    Same point estimates as calling :func:`paired_difference` pair by pair, and
    the same kind of interval, computed in one pass: prompt means are tabulated
    once per metric, and the prompts seen by any of ``models`` are resampled
    once (one index matrix, see :func:`bootstrap_means`) for all pairs. A pair
    skips the resampled prompts it does not share (a failed row, a prompt one
    run lacks), so each interval is the bootstrap of that pair's mean difference
    over its shared prompts. Intervals come from a different random stream than
    single calls; their distribution is the same up to that rare skipping.
    """
    columns = [
        "model_a",
        "model_b",
        "metric",
        "n_prompts",
        "mean_a",
        "mean_b",
        "diff",
        "lo",
        "hi",
        "significant",
        "better",
    ]
    pairs = list(combinations(models, 2))
    if not pairs:
        return pd.DataFrame(columns=columns)
    alpha = _alpha(confidence)
    rows: list[dict[str, Any]] = []
    for metric in metrics:
        table = prompt_means(frame, metric).reindex(columns=list(models))
        diffs = np.column_stack([(table[a] - table[b]).to_numpy() for a, b in pairs])
        masks = np.isfinite(diffs)
        seen = masks.any(axis=1)
        lo = np.full(len(pairs), math.nan)
        hi = np.full(len(pairs), math.nan)
        if seen.sum() > 1:
            rng = slice_rng(seed, ("paired", metric, *models))
            boot = bootstrap_means(diffs[seen], n_boot=n_boot, rng=rng)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # pairs with no shared prompt: NaN
                lo, hi = np.nanquantile(boot, [alpha / 2, 1 - alpha / 2], axis=0)
        for j, (a, b) in enumerate(pairs):
            shared = masks[:, j]
            n_shared = int(shared.sum())
            diff = float(diffs[shared, j].mean()) if n_shared else math.nan
            low, high = (float(lo[j]), float(hi[j])) if n_shared > 1 else (diff, diff)
            significant = bool(n_shared > 1 and (low > 0 or high < 0))
            better = None
            if significant:
                better = a if (diff > 0) == HIGHER_IS_BETTER.get(metric, True) else b
            rows.append(
                {
                    "model_a": a,
                    "model_b": b,
                    "metric": metric,
                    "n_prompts": n_shared,
                    "mean_a": float(table[a].to_numpy()[shared].mean()) if n_shared else math.nan,
                    "mean_b": float(table[b].to_numpy()[shared].mean()) if n_shared else math.nan,
                    "diff": diff,
                    "lo": low,
                    "hi": high,
                    "significant": significant,
                    "better": better,
                }
            )
    return pd.DataFrame(rows, columns=columns)


def rank_models(
    summary: pd.DataFrame, metric: str = "ned", *, higher_is_better: bool | None = None
) -> pd.DataFrame:
    """Rank models by ``metric``; models whose intervals overlap are marked as ties.

    ``summary`` has one row per model (e.g. ``summarize(frame)``) with ``metric``,
    ``metric_lo`` and ``metric_hi``. A model's rank is 1 + the number of models
    that are better with non-overlapping intervals, so models that cannot be told
    apart share a rank; ``tied_with`` lists the models whose interval overlaps.

    >>> s = pd.DataFrame({"model": ["a", "b", "c"], "ned": [0.9, 0.88, 0.5],
    ...                   "ned_lo": [0.85, 0.8, 0.45], "ned_hi": [0.95, 0.9, 0.55]})
    >>> rank_models(s, "ned")[["rank", "model", "tie", "tied_with"]].to_dict("records")
    [{'rank': 1, 'model': 'a', 'tie': True, 'tied_with': 'b'}, \
{'rank': 1, 'model': 'b', 'tie': True, 'tied_with': 'a'}, \
{'rank': 3, 'model': 'c', 'tie': False, 'tied_with': ''}]
    """
    if higher_is_better is None:
        higher_is_better = HIGHER_IS_BETTER.get(metric, True)
    table = summary[["model", metric, f"{metric}_lo", f"{metric}_hi"]].dropna(subset=[metric])
    table = table.sort_values(metric, ascending=not higher_is_better, kind="stable").reset_index(
        drop=True
    )
    lo = table[f"{metric}_lo"].to_numpy()
    hi = table[f"{metric}_hi"].to_numpy()
    names = table["model"].astype(str).tolist()
    ranks, ties = [], []
    for i in range(len(table)):
        if higher_is_better:
            better = int((lo > hi[i]).sum())
        else:
            better = int((hi < lo[i]).sum())
        overlap = [
            names[j] for j in range(len(table)) if j != i and lo[j] <= hi[i] and lo[i] <= hi[j]
        ]
        ranks.append(better + 1)
        ties.append(overlap)
    table.insert(0, "rank", ranks)
    table["tie"] = [bool(t) for t in ties]
    table["tied_with"] = [", ".join(t) for t in ties]
    return table


# --------------------------------------------------------------------------- peer views

#: AnyText reports sentence accuracy (whole line exactly right) and NED.
ANYTEXT_COLUMNS = {"exact_match": "sentence_acc", "ned": "ned"}
#: MARIO-Eval (TextDiffuser) reports word-level OCR precision, recall and F-measure.
MARIO_COLUMNS = {"word_precision": "precision", "word_recall": "recall", "word_f1": "f1"}


def peer_views(
    frame: pd.DataFrame,
    by: Sequence[str] = (),
    *,
    n_boot: int = 1000,
    seed: int = 0,
    summary: pd.DataFrame | None = None,
) -> dict[str, pd.DataFrame]:
    """The same rows scored the way peer benchmarks report them.

    Returns ``{"anytext": ..., "mario": ...}``, each one row per model (and slice),
    with the peer benchmark's column names and bootstrap intervals. Word scores are
    per-image means (macro averages) of ``word_precision``/``word_recall``/``word_f1``.
    Pass a ``summary`` (from :func:`summarize` with ``by`` and these metrics) to
    reuse its numbers instead of resampling again.
    """
    needed = [*ANYTEXT_COLUMNS, *MARIO_COLUMNS]
    if summary is None or any(m not in summary.columns for m in needed):
        summary = summarize(frame, by, metrics=needed, n_boot=n_boot, seed=seed)
    views = {}
    for name, mapping in (("anytext", ANYTEXT_COLUMNS), ("mario", MARIO_COLUMNS)):
        rename: dict[str, str] = {}
        for metric, new in mapping.items():
            rename.update({metric: new, f"{metric}_lo": f"{new}_lo", f"{metric}_hi": f"{new}_hi"})
        keep = ["model", *by, "n", *rename]
        views[name] = summary[keep].rename(columns=rename).reset_index(drop=True)
    return views
