"""The one bootstrap kernel: seeded, vectorised percentile intervals over resampled clusters.

Every interval glyphbench reports (benchmark summaries and slices, paired model
comparisons, length curves, VAE and human-study statistics) is computed here.

The resampling unit is a *cluster*: all rows of a cluster move together (in the
benchmark report, all images of one prompt), so correlated images of a prompt do
not count as independent evidence. A row whose cluster has no other rows is its
own cluster; with only such rows this is the ordinary bootstrap over rows.

One draw
    :func:`index_blocks` draws every resample as rows of cluster indices
    (``rng.integers(0, n, (resamples, n))``) in blocks of about
    :data:`MAX_CELLS` cells; every function here uses it (or, for a proportion
    or a mean of few distinct values, the exact multinomial/binomial shortcut of
    that same resampling). Tallies of those indices (:func:`count_blocks`) turn
    every statistic that is a sum over rows into one matrix product.

Unpaired
    :func:`grouped_bootstrap`: means (or pooled ratios, or derived aggregates,
    see :class:`Estimands`) of value columns within groups (the slices of one or
    several slicings), all from one shared draw of the clusters.
    :func:`resampled_means`: the same for one group, resample-major.

Paired (:mod:`glyphbench.core.paired`)
    :func:`~glyphbench.core.paired.paired_differences`: rows are clusters (prompts) with one
    mean per system; each pair's differences are resampled together, prompt by prompt.

    :func:`~glyphbench.core.paired.holm_intervals`: Holm's step-down over a family of such
    differences (the report's significance and ranks).

Single intervals
    :func:`mean_interval` (mean of values, optionally clustered),
    :func:`bootstrap_ci` (any numpy reduction, e.g. a median),
    :func:`share_bootstrap` (a proportion, e.g. an error rate),
    :func:`resample_weights` (the full resamples x units count matrix, for
    statistics that are functions of weighted sums, like rater agreement).

Every random draw comes from a generator the caller seeds (see
:func:`seeded_rng`), so the same seed gives the same interval.

>>> rng = seeded_rng(0, ("example",))
>>> values = np.array([[1.0], [2.0], [3.0], [4.0]])
>>> boot = resampled_means(values, n_boot=2000, rng=rng)
>>> lo, hi = percentile_interval(boot[:, 0])
>>> bool(1.0 <= lo < 2.5 < hi <= 4.0)
True
"""

from __future__ import annotations

import contextlib
import math
import warnings
import zlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from glyphbench.core.aggregates import Aggregate, Derived, Mean, Ratio

#: Most index cells drawn at once; larger bootstraps are drawn in blocks of resamples.
MAX_CELLS = 4_000_000

#: Fewest units for which :func:`tally` counts resample by resample.
_ROW_TALLY = 4096

#: A mean of values with at most ``1/16`` as many distinct values (or distinct
#: clusters) as values is drawn as multinomial counts of the distinct values.
_DISTINCT_SHARE = 16

#: Fewest resampling units (prompts, images) behind an interval that glyphbench prints.
#: Below it the report shows the mean with "n = K: too few" and no interval, and no
#: verdict (badge, significance, survival threshold) rests on it. A convention: the
#: sources are silent. Why 5: with ``n`` units a resample repeats one unit ``n`` times
#: with probability ``n ** (1 - n)`` (n = 2: 50%, n = 3: 11%, n = 4: 1.6%, n = 5: 0.16%),
#: so below 5 the 2.5% and 97.5% tails are single-unit resamples and the "interval" is
#: the range of the data. Even at 5 a nominal 95% interval of a normal mean covers
#: about 84% (measured: docs/report.md, "Small slices").
MIN_UNITS = 5


# --------------------------------------------------------------------------- seeds, intervals


def seeded_rng(seed: int, key: Iterable[object] = ()) -> np.random.Generator:
    """A generator seeded by ``seed`` and a key (stable across runs and platforms).

    >>> float(seeded_rng(1, ("a", 2)).random()) == float(seeded_rng(1, ("a", 2)).random())
    True
    """
    digest = zlib.crc32("\x1f".join(map(str, key)).encode("utf-8"))
    return np.random.default_rng([seed, digest])


def single_threaded_blas() -> contextlib.AbstractContextManager[Any]:
    """Limit BLAS to one thread while resampling (a no-op without threadpoolctl).

    The bootstrap does many small matrix products; on a 2-core machine a
    multi-threaded BLAS spends most of each call starting and syncing threads
    (measured: 7 slice products took 55 ms with 2 OpenBLAS threads, 6 ms with 1).
    One thread also keeps every product's summation order fixed.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    limits: contextlib.AbstractContextManager[Any] = threadpool_limits(limits=1, user_api="blas")
    return limits


def tail(confidence: float) -> float:
    """The probability outside a ``confidence`` interval (checked).

    >>> round(tail(0.95), 3)
    0.05
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    return 1.0 - confidence


def percentile_interval(
    boot: np.ndarray, confidence: float = 0.95, axis: int = 0
) -> tuple[Any, Any]:
    """Percentile interval of resampled statistics along ``axis``; NaN resamples are skipped.

    Returns ``(lo, hi)`` (arrays shaped like ``boot`` without ``axis``; numpy
    scalars for a 1-D ``boot``). All-NaN positions give NaN bounds.

    >>> lo, hi = percentile_interval(np.array([1.0, 2.0, np.nan, 3.0]), 0.5)
    >>> float(lo), float(hi)
    (1.5, 2.5)
    """
    alpha = tail(confidence)
    quantiles = [alpha / 2, 1 - alpha / 2]
    if np.isnan(boot).any():  # e.g. a slice missing from some resamples: skip those
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # never drawn: NaN bounds
            bounds = np.nanquantile(boot, quantiles, axis=axis)
    else:
        bounds = np.quantile(boot, quantiles, axis=axis)
    return bounds[0], bounds[1]


def wilson_interval(hits: Any, n: Any, confidence: float = 0.95) -> tuple[np.ndarray, np.ndarray]:
    """The Wilson score interval of the proportion ``hits / n`` (arrays or numbers): well
    behaved at 0 and at ``n``, where a percentile bootstrap has no width.

    >>> low, high = wilson_interval(1, 4)
    >>> round(float(low), 3), round(float(high), 3)
    (0.046, 0.699)
    """
    from statistics import NormalDist

    z = NormalDist().inv_cdf(1 - tail(confidence) / 2)
    hits, n = np.asarray(hits, dtype=float), np.asarray(n, dtype=float)
    with np.errstate(invalid="ignore", divide="ignore"):
        p = hits / n
        centre = (p + z * z / (2 * n)) / (1 + z * z / n)
        half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return centre - half, centre + half


# --------------------------------------------------------------------------- the draw


def index_blocks(rng: np.random.Generator, n: int, n_boot: int) -> Iterator[tuple[int, np.ndarray]]:
    """The one resample draw: ``(first resample, indices)`` blocks, indices ``(size, n)`` in [0, n).

    Blocks hold about :data:`MAX_CELLS` cells. The stream of indices does not
    depend on the block size or the index type, so any caller drawing ``n_boot``
    resamples of ``n`` units from the same generator state gets the same resamples.
    """
    block = max(1, MAX_CELLS // max(n, 1))  # n = 0: empty resamples (e.g. no labelled image)
    index_type = np.int32 if min(block, n_boot) * n < 2**31 else np.int64
    for start in range(0, n_boot, block):
        size = min(block, n_boot - start)
        yield start, rng.integers(0, n, size=(size, n), dtype=index_type)


def tally(indices: np.ndarray, *, by_unit: bool = False) -> np.ndarray:
    """How often each unit is drawn in each resample: ``(size, n)``, or ``(n, size)`` ``by_unit``.

    One ``bincount`` per resample when there are many units, else one over shifted
    indices for every resample at once (the same whole numbers). The unit-major
    layout lets a contiguous block of units (a slice) be one product.

    >>> tally(np.array([[0, 0, 2], [1, 2, 2]])).tolist()
    [[2.0, 0.0, 1.0], [0.0, 1.0, 2.0]]
    """
    size, n = indices.shape
    if n >= _ROW_TALLY:  # one bincount per resample: its bins stay in cache (2x faster)
        out = np.empty((n, size) if by_unit else (size, n))
        for r in range(size):
            if by_unit:
                out[:, r] = np.bincount(indices[r], minlength=n)
            else:
                out[r] = np.bincount(indices[r], minlength=n)
        return out
    if by_unit:  # unit i of resample r lands in bin i * size + r
        indices *= size
        indices += np.arange(size, dtype=indices.dtype)[:, None]
        shape = (n, size)
    else:  # resample r's units land in bins [r * n, (r + 1) * n)
        indices += (np.arange(size, dtype=indices.dtype) * n)[:, None]
        shape = (size, n)
    return np.bincount(indices.ravel(), minlength=size * n).reshape(shape).astype("float64")


def count_blocks(
    rng: np.random.Generator, n: int, n_boot: int, *, by_unit: bool = False
) -> Iterator[tuple[int, np.ndarray]]:
    """:func:`index_blocks`, tallied (see :func:`tally`)."""
    for start, indices in index_blocks(rng, n, n_boot):
        yield start, tally(indices, by_unit=by_unit)


def resample_weights(n: int, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """``(n_boot, n)``: how often each of ``n`` units appears in each resample.

    For statistics that are functions of weighted sums over units (``weights @ x``).

    >>> w = resample_weights(5, 3, np.random.default_rng(0))
    >>> w.shape, w.sum(axis=1).tolist()
    ((3, 5), [5.0, 5.0, 5.0])
    """
    out = np.empty((n_boot, n))
    for start, counts in count_blocks(rng, n, n_boot):
        out[start : start + len(counts)] = counts
    return out


def cluster_codes(keys: Sequence[Any] | np.ndarray | None, n: int) -> np.ndarray:
    """Each row's cluster as 0..C-1 in order of first appearance; ``None``: every row alone.

    >>> cluster_codes(["p2", "p1", "p2", "p3"], 4).tolist()
    [0, 1, 0, 2]
    """
    if keys is None:
        return np.arange(n)
    import pandas as pd

    codes: np.ndarray = pd.factorize(np.asarray(keys))[0]  # numbered by first appearance
    return codes.astype(np.int64)


def _is_singletons(clusters: np.ndarray) -> bool:
    """True when every row is its own cluster (codes are then 0..n-1 in row order)."""
    return clusters.size == 0 or int(clusters.max()) + 1 == clusters.size


def _pool(clusters: np.ndarray, columns: np.ndarray) -> np.ndarray:
    """Column sums per cluster: ``(C, m)`` from rows ``(n, m)``."""
    n_clusters = int(clusters.max()) + 1 if clusters.size else 0
    one_row_each = n_clusters == clusters.size and columns.shape[1] > 1
    if one_row_each and (np.bincount(clusters, minlength=n_clusters) == 1).all():
        alone = np.empty((n_clusters, columns.shape[1]))
        alone[clusters] = columns
        alone += 0.0  # what bincount's 0.0 + value gives (-0.0 becomes 0.0)
        return alone
    pooled = np.zeros((n_clusters, columns.shape[1]))
    for j in range(columns.shape[1]):  # bincount: many times faster than np.add.at
        pooled[:, j] = np.bincount(clusters, weights=columns[:, j], minlength=n_clusters)
    return pooled


# --------------------------------------------------------------------------- estimands

#: The default aggregate: a mean over rows.
MEAN = Mean()


class Estimands:
    """What to estimate per group: each name's aggregate over rows (see glyphbench.scoring.table).

    * :class:`~glyphbench.core.aggregates.Mean`: the mean of the name's own column (NaN rows
    skipped);
    * :class:`~glyphbench.core.aggregates.Ratio`: sum of ``numerator`` / sum of ``denominator``
      over rows where both are known (a pooled ratio);
    * :class:`~glyphbench.core.aggregates.Derived`: a function of other names' aggregates,
      evaluated per resample (inputs not requested are computed along).

    ``columns`` lists the value columns the caller must supply, in order.

    >>> est = Estimands(["f"], {"f": Derived(("p", "r"), lambda p, r: 2 * p * r / (p + r))}.get)
    >>> est.columns
    ('p', 'r')
    >>> est.point(np.array([[1.0, 0.5], [0.0, 0.5]]))
    [0.5]
    """

    def __init__(
        self,
        names: Sequence[str],
        aggregate_of: Callable[[str], Aggregate | None] | Mapping[str, Aggregate] | None = None,
    ) -> None:
        lookup = aggregate_of.get if isinstance(aggregate_of, Mapping) else aggregate_of
        self.names = tuple(names)
        self._aggregates: dict[str, Aggregate] = {}
        for name in self.names:
            self._add(name, lookup)
        columns: dict[str, None] = {}
        for name, aggregate in self._aggregates.items():
            if isinstance(aggregate, Mean):
                columns[name] = None
            elif isinstance(aggregate, Ratio):
                columns.update(dict.fromkeys((aggregate.numerator, aggregate.denominator)))
        self.columns = tuple(columns)
        self._position = {column: i for i, column in enumerate(self.columns)}
        #: Only means of the requested names, in order: resamples are sums / counts at once.
        self.plain = self.columns == self.names and all(
            isinstance(a, Mean) for a in self._aggregates.values()
        )

    def _add(
        self,
        name: str,
        lookup: Callable[[str], Aggregate | None] | None,
        visiting: tuple[str, ...] = (),
    ) -> None:
        """Add ``name`` after the inputs it derives from (evaluation follows insertion order)."""
        if name in visiting:
            raise ValueError(f"metric {name!r} is derived from itself: {' -> '.join(visiting)}")
        if name in self._aggregates:
            return
        aggregate = (lookup(name) if lookup else None) or MEAN
        if isinstance(aggregate, Derived):
            for source in aggregate.inputs:
                self._add(source, lookup, (*visiting, name))
        self._aggregates[name] = aggregate

    def prepare(self, values: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(filled, known)``: values with unknowns as 0, and 1/0 for known cells.

        A ratio's numerator and denominator are known only together.
        """
        known = np.isfinite(values)
        for aggregate in self._aggregates.values():
            if isinstance(aggregate, Ratio):
                pair = [self._position[aggregate.numerator], self._position[aggregate.denominator]]
                known[:, pair] = known[:, pair].all(axis=1, keepdims=True)
        return np.where(known, values, 0.0), known.astype("float64")

    def combine(self, sums: np.ndarray, known: np.ndarray) -> np.ndarray:
        """Aggregates ``(..., names)`` from summed values and known counts ``(..., columns)``.

        ``known`` may have one column (every cell known: the row counts).
        """
        with np.errstate(invalid="ignore", divide="ignore"):
            if self.plain:
                ratios: np.ndarray = sums / known
                return ratios
            values = self._evaluate(
                lambda i: sums[..., i],
                lambda i: sums[..., i] / known[..., i if known.shape[-1] > 1 else 0],
            )
        return np.stack([values[name] for name in self.names], axis=-1)

    def point(self, values: np.ndarray) -> list[float]:
        """Point estimates over the rows of ``values`` (columns as :attr:`columns`).

        Means are ``numpy.mean`` of the known values; NaN where nothing is known.
        """
        filled, known = self.prepare(values)

        def mean(i: int) -> np.ndarray:
            column = values[known[:, i] > 0, i]
            return np.asarray(column.mean() if column.size else math.nan)

        with np.errstate(invalid="ignore", divide="ignore"):
            results = self._evaluate(lambda i: np.asarray(filled[:, i].sum()), mean)
        return [float(results[name]) for name in self.names]

    def _evaluate(
        self, total: Callable[[int], np.ndarray], mean: Callable[[int], np.ndarray]
    ) -> dict[str, np.ndarray]:
        """Every aggregate from column totals and column means, inputs before derived names."""
        results: dict[str, np.ndarray] = {}
        for name, aggregate in self._aggregates.items():
            if isinstance(aggregate, Derived):
                inputs = [results[source] for source in aggregate.inputs]
                results[name] = np.asarray(aggregate.function(*inputs), dtype="float64")
            elif isinstance(aggregate, Ratio):
                numerator = total(self._position[aggregate.numerator])
                results[name] = numerator / total(self._position[aggregate.denominator])
            else:
                results[name] = mean(self._position[name])
        return results


# --------------------------------------------------------------------------- unpaired


@dataclass(frozen=True)
class Grouping:
    """The group (0..n_groups-1) of every row, e.g. its slice of one slicing."""

    codes: np.ndarray
    n_groups: int


@dataclass(frozen=True)
class _Pattern:
    """Groups whose units are the same clusters, in the same order (e.g. one slice of
    several models): their counts are gathered once and multiplied in one product."""

    clusters: slice | np.ndarray  # rows of the unit-major counts: a range or gathered indices
    groups: np.ndarray  # the groups sharing these clusters
    sums: np.ndarray  # (units, groups * columns) each group's pooled values, side by side
    known: np.ndarray  # (units, groups * known columns) each group's known counts
    short: _Shortfall | None = None  # ``known`` as full counts less a few units' shortfall

    def aggregate(self, counts: np.ndarray, estimands: Estimands) -> np.ndarray:
        """``(size, names, groups)`` aggregates from one block of unit-major counts."""
        if isinstance(self.clusters, slice):
            drawn = counts[self.clusters]
        else:  # np.take: several times faster than fancy indexing for these row gathers
            drawn = np.take(counts, self.clusters, axis=0)
        n_groups = self.groups.size
        sums = (drawn.T @ self.sums).reshape(drawn.shape[1], n_groups, -1)
        known = drawn.T @ self.known if self.short is None else self.short.known(drawn)
        known = known.reshape(drawn.shape[1], n_groups, -1)
        return np.moveaxis(estimands.combine(sums, known), 1, 2)


@dataclass(frozen=True)
class _Shortfall:
    """Known counts ``(units, k)`` as ``full`` per column less the few units that fall short.

    Counts and known counts are whole numbers, so every way of summing them is exact:
    ``drawn.T @ known`` equals the drawn units' total times ``full`` less the shortfall
    of the (usually few) units with an unknown row, a product over those units alone.
    """

    full: np.ndarray  # (k,) the most known rows of a unit, per column
    rows: np.ndarray  # the units short of it
    missing: np.ndarray  # (len(rows), k) by how much

    @classmethod
    def of(cls, known: np.ndarray) -> _Shortfall | None:
        """The shortfall form of ``known``; None when it saves nothing (many units short)."""
        full = known.max(axis=0)
        missing = full - known
        rows = np.flatnonzero(missing.any(axis=1))
        if rows.size * 4 > len(known):
            return None
        return cls(full, rows, missing[rows])

    def known(self, drawn: np.ndarray) -> np.ndarray:
        """``drawn.T @ known`` for unit-major counts ``drawn``."""
        out: np.ndarray = drawn.sum(axis=0)[:, None] * self.full
        if self.rows.size:
            out -= np.take(drawn, self.rows, axis=0).T @ self.missing
        return out

    def known_by_resample(self, counts: np.ndarray) -> np.ndarray:
        """``counts @ known`` for resample-major counts."""
        out: np.ndarray = counts.sum(axis=1)[:, None] * self.full
        if self.rows.size:
            out -= np.take(counts, self.rows, axis=1) @ self.missing
        return out


def _as_range(indices: np.ndarray) -> slice | np.ndarray:
    """``indices`` as a slice when they are consecutive (no gather needed)."""
    if indices.size and int(indices[-1]) - int(indices[0]) + 1 == indices.size:
        return slice(int(indices[0]), int(indices[-1]) + 1)
    return indices


def _patterns(
    edges: np.ndarray, cluster: np.ndarray, sums: np.ndarray, known: np.ndarray
) -> list[_Pattern]:
    """Group the groups by their exact cluster lists (units sorted by group, then cluster)."""
    by_key: dict[bytes, list[int]] = {}
    for group in range(edges.size - 1):
        a, b = edges[group], edges[group + 1]
        if a < b:  # a group without units stays NaN
            by_key.setdefault(cluster[a:b].tobytes(), []).append(group)
    patterns = []
    for groups in by_key.values():
        parts = [slice(edges[g], edges[g + 1]) for g in groups]
        known_side_by_side = np.hstack([known[part] for part in parts])
        patterns.append(
            _Pattern(
                _as_range(cluster[parts[0]]),
                np.array(groups),
                np.hstack([sums[part] for part in parts]),
                known_side_by_side,
                _Shortfall.of(known_side_by_side),
            )
        )
    return patterns


def _known_columns(known: np.ndarray) -> np.ndarray:
    """``known`` with one column when every column is the same (the usual case): fewer products."""
    if known.shape[1] > 1 and (known == known[:, :1]).all():
        return known[:, :1]
    return known


def _units(
    grouping: Grouping, clusters: np.ndarray, filled: np.ndarray, known: np.ndarray
) -> list[_Pattern]:
    """Rows pooled into resampling units, one per (group, cluster), as shared patterns."""
    codes = np.asarray(grouping.codes).astype(np.int64)
    groups = np.arange(grouping.n_groups + 1)
    if _is_singletons(clusters):  # every row is its own cluster
        order = np.argsort(codes, kind="stable")
        edges = np.searchsorted(codes[order], groups)
        return _patterns(edges, order, filled[order], _known_columns(known[order]))
    n_clusters = int(clusters.max()) + 1
    keys, unit = np.unique(codes * n_clusters + clusters, return_inverse=True)
    unit = unit.reshape(-1)
    edges = np.searchsorted(keys // n_clusters, groups)
    pooled_known = _known_columns(_pool(unit, known))
    return _patterns(edges, keys % n_clusters, _pool(unit, filled), pooled_known)


def grouped_bootstrap(
    values: np.ndarray,
    groupings: Sequence[Grouping],
    *,
    estimands: Estimands,
    n_boot: int,
    rng: np.random.Generator,
    clusters: np.ndarray | None = None,
) -> list[np.ndarray]:
    """Resampled aggregates per group, for several groupings from one shared draw.

    ``values`` is ``(rows, len(estimands.columns))`` (NaN: unknown); ``clusters``
    (see :func:`cluster_codes`; default: every row alone) says which rows move
    together. Each resample draws as many clusters as there are, with
    replacement; every group of every grouping is aggregated from that same draw,
    so a group's size varies across resamples as in a re-run drawing new clusters
    from the same mix (a group absent from a resample is NaN there).

    Returns one ``(n_boot, len(estimands.names), n_groups)`` array per grouping.
    Rows are pooled into one unit per (group, cluster), sorted by group; groups
    whose units are the same clusters (one slice of several models) share one
    gather of the unit-major resample counts and one matrix product.
    """
    clusters = np.arange(len(values)) if clusters is None else np.asarray(clusters)
    k = len(estimands.names)
    out = [np.full((n_boot, k, g.n_groups), np.nan) for g in groupings]
    if not len(values) or not groupings:
        return out
    filled, known = estimands.prepare(values)
    # Known counts are whole numbers, summed exactly: when every column has the same
    # ones, pooling one column gives what pooling all of them and collapsing gives.
    known = _known_columns(known)
    patterns = [_units(g, clusters, filled, known) for g in groupings]
    n_clusters = int(clusters.max()) + 1
    with single_threaded_blas():
        for start, counts in count_blocks(rng, n_clusters, n_boot, by_unit=True):
            stop = start + counts.shape[1]
            for grouping_patterns, boot in zip(patterns, out, strict=True):
                for pattern in grouping_patterns:
                    boot[start:stop, :, pattern.groups] = pattern.aggregate(counts, estimands)
    return out


def resampled_means(
    values: np.ndarray,
    *,
    n_boot: int,
    rng: np.random.Generator,
    clusters: np.ndarray | None = None,
    estimands: Estimands | None = None,
) -> np.ndarray:
    """``(n_boot, k)`` resampled aggregates of the columns of ``values`` (one group).

    Default estimands: the mean of every column, NaNs skipped per column (the
    mean is over that resample's known values). Resample-major products.

    >>> means = resampled_means(np.array([[1.0, 0.0], [3.0, 1.0]]), n_boot=4000,
    ...                         rng=np.random.default_rng(0))
    >>> sorted(set(means[:, 0].round(6).tolist()))  # resamples of 2 values: means 1, 2 or 3
    [1.0, 2.0, 3.0]
    """
    data = np.asarray(values, dtype="float64")
    if data.ndim == 1:
        data = data[:, None]
    estimands = estimands or Estimands([str(i) for i in range(data.shape[1])])
    out = np.full((n_boot, len(estimands.names)), np.nan)
    if not len(data):
        return out
    filled, known = estimands.prepare(data)
    if clusters is not None and not _is_singletons(np.asarray(clusters)):
        filled, known = _pool(np.asarray(clusters), filled), _pool(np.asarray(clusters), known)
    short = _Shortfall.of(known) if len(known) else None
    with single_threaded_blas():
        for start, counts in count_blocks(rng, len(filled), n_boot):
            drawn = counts @ known if short is None else short.known_by_resample(counts)
            out[start : start + len(counts)] = estimands.combine(counts @ filled, drawn)
    return out


def share_bootstrap(
    flags: np.ndarray, *, n_boot: int, rng: np.random.Generator, clusters: np.ndarray | None = None
) -> np.ndarray:
    """Resampled share of true ``flags`` (e.g. failed rows): ``(n_boot,)``.

    Without clusters (or with one row each) the resampled share of ``n`` 0/1
    values is exactly ``Binomial(n, p) / n``, drawn directly; with clusters,
    each resample's share pools the drawn clusters' flags and rows.

    >>> draws = share_bootstrap(np.array([True, False, False, False]), n_boot=5000,
    ...                         rng=np.random.default_rng(0))
    >>> bool(abs(draws.mean() - 0.25) < 0.01)
    True
    """
    flags = np.asarray(flags, dtype=bool)
    n = flags.size
    if clusters is None or _is_singletons(np.asarray(clusters)):
        return rng.binomial(n, int(flags.sum()) / n, size=n_boot) / n
    pooled = _pool(np.asarray(clusters), np.column_stack([flags, np.ones(n)]).astype("float64"))
    out = np.empty(n_boot)
    for start, counts in count_blocks(rng, len(pooled), n_boot):
        drawn = counts @ pooled
        out[start : start + len(counts)] = drawn[:, 0] / drawn[:, 1]
    return out


# --------------------------------------------------------------------------- single intervals


def bootstrap_ci(
    values: Sequence[float] | np.ndarray,
    *,
    n_boot: int = 1000,
    seed: int | np.random.Generator = 0,
    stat: Callable[..., Any] = np.mean,
    confidence: float = 0.95,
) -> tuple[float, float]:
    """Percentile bootstrap interval of ``stat`` over ``values`` (NaNs dropped).

    Resamples are gathered (``values[indices]``) and ``stat`` is applied along
    axis 1, so ``stat`` must accept ``axis=`` as numpy reductions do. One value
    gives a zero-width interval; none gives (nan, nan).

    >>> lo, hi = bootstrap_ci([1.0, 2.0, 3.0, 4.0], n_boot=2000, seed=0)
    >>> 1.0 <= lo < 2.5 < hi <= 4.0
    True
    >>> bootstrap_ci([7.0], n_boot=10)
    (7.0, 7.0)
    """
    data = np.asarray(values, dtype="float64")
    data = data[~np.isnan(data)]
    if data.size == 0:
        return (math.nan, math.nan)
    if data.size == 1:
        return (float(data[0]), float(data[0]))
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    stats = np.empty(n_boot)
    for start, indices in index_blocks(rng, data.size, n_boot):
        stats[start : start + len(indices)] = stat(data[indices], axis=1)
    lo, hi = percentile_interval(stats, confidence)
    return (float(lo), float(hi))


def mean_interval(
    values: np.ndarray,
    *,
    n_boot: int,
    rng: np.random.Generator,
    confidence: float = 0.95,
    clusters: np.ndarray | None = None,
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` (NaNs dropped), cheapest draw.

    Resampling ``n`` clusters with replacement is the same as drawing how many
    times each *kind* of cluster (its sum and size; a single value without
    clusters) is picked: a multinomial over the distinct kinds with their
    observed frequencies. Scores take few distinct values (exact match: 2), so
    when there are at most ``n / 16`` kinds the counts are drawn directly;
    otherwise the clusters themselves are drawn (:func:`index_blocks`).

    >>> rng = np.random.default_rng(0)
    >>> lo, hi = mean_interval(np.array([0.0] * 50 + [1.0] * 50), n_boot=2000, rng=rng)
    >>> 0.38 < lo < 0.5 < hi < 0.62
    True
    """
    data = np.asarray(values, dtype="float64")
    keep = ~np.isnan(data)
    data = data[keep]
    codes = None if clusters is None else cluster_codes(np.asarray(clusters)[keep], data.size)
    if codes is None or _is_singletons(codes):
        return _singletons_interval(data, n_boot, rng, confidence)
    units = _pool(codes, np.column_stack([data, np.ones(data.size)]))
    n = len(units)
    if n == 1:
        mean = float(units[0, 0] / units[0, 1])
        return (mean, mean)
    kinds, frequency = np.unique(units, axis=0, return_counts=True)
    means = np.empty(n_boot)
    if kinds.shape[0] * _DISTINCT_SHARE <= n:
        draws = rng.multinomial(n, frequency / n, size=n_boot)
        means = (draws @ kinds[:, 0]) / (draws @ kinds[:, 1])
    else:
        for start, counts in count_blocks(rng, n, n_boot):
            means[start : start + len(counts)] = (counts @ units[:, 0]) / (counts @ units[:, 1])
    lo, hi = percentile_interval(means, confidence)
    return (float(lo), float(hi))


def _singletons_interval(
    data: np.ndarray, n_boot: int, rng: np.random.Generator, confidence: float
) -> tuple[float, float]:
    """:func:`mean_interval` of values that are each their own cluster."""
    n = data.size
    if n <= 1:
        return bootstrap_ci(data, n_boot=n_boot, seed=rng)
    distinct, frequency = np.unique(data, return_counts=True)
    if distinct.size * _DISTINCT_SHARE > n:
        return bootstrap_ci(data, n_boot=n_boot, seed=rng, confidence=confidence)
    draws = rng.multinomial(n, frequency / n, size=n_boot)
    lo, hi = percentile_interval(draws @ distinct / n, confidence)
    return (float(lo), float(hi))
