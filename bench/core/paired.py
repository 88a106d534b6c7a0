"""Paired comparisons on the bootstrap kernel: differences of systems, p-values, Holm.

Two systems (models, readers, codecs) scored on the same clusters (prompts) are compared
on their per-cluster differences, resampled with :func:`glyphbench.core.bootstrap.resampled_means`
so cluster difficulty cancels out; :func:`holm_intervals` decides a family of such
differences with Holm's step-down (the report's significance and ranks).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from glyphbench.core.bootstrap import percentile_interval, resampled_means, tail


@dataclass(frozen=True)
class PairedResampling:
    """Differences of per-cluster means for pairs of systems, with their resamples."""

    differences: np.ndarray  # (clusters, pairs); NaN where a pair does not share the cluster
    shared: np.ndarray  # (clusters, pairs) bool
    resamples: np.ndarray  # (n_boot, pairs) resampled mean differences over shared clusters


def paired_differences(
    cluster_means: np.ndarray,
    pairs: Sequence[tuple[int, int]],
    *,
    n_boot: int,
    rng: np.random.Generator,
) -> PairedResampling:
    """Paired bootstrap of mean differences: rows are clusters (prompts), columns systems.

    For each pair (a, b), the differences ``cluster_means[:, a] - cluster_means[:, b]``
    are resampled cluster by cluster, so cluster difficulty cancels out. All pairs
    share one draw over the clusters any system has; a pair skips drawn clusters it
    does not share. With fewer than two such clusters the resamples are NaN.

    >>> table = np.array([[1.0, 0.5], [0.8, 0.4], [0.6, 0.5]])
    >>> paired = paired_differences(table, [(0, 1)], n_boot=500, rng=np.random.default_rng(0))
    >>> paired.differences[:, 0].round(2).tolist(), bool(paired.resamples.min() > 0.09)
    ([0.5, 0.4, 0.1], True)
    """
    differences = np.column_stack(
        [cluster_means[:, a] - cluster_means[:, b] for a, b in pairs]
    ).reshape(len(cluster_means), len(pairs))
    shared = np.isfinite(differences)
    seen = shared.any(axis=1)
    if seen.sum() > 1:
        resamples = resampled_means(differences[seen], n_boot=n_boot, rng=rng)
    else:
        resamples = np.full((n_boot, len(pairs)), np.nan)
    return PairedResampling(differences, shared, resamples)


def bootstrap_p_values(resamples: np.ndarray) -> np.ndarray:
    """Two-sided bootstrap p-value of "the difference is 0" for each column of ``resamples``.

    ``2 * min(share of resamples <= 0, share >= 0)``, capped at 1, NaN resamples
    skipped (a column with none: NaN). It orders pairs for :func:`holm_intervals`;
    0 means no resample reached zero (p < 2 / n_boot).

    >>> bootstrap_p_values(np.array([[0.1, -1.0], [0.2, 1.0], [0.3, 2.0], [0.4, 3.0]])).tolist()
    [0.0, 0.5]
    """
    boot = np.asarray(resamples, dtype="float64")
    if boot.ndim == 1:
        boot = boot[:, None]
    known = np.isfinite(boot)
    count = known.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        below = (known & (boot <= 0)).sum(axis=0) / count
        above = (known & (boot >= 0)).sum(axis=0) / count
        p: np.ndarray = np.minimum(1.0, 2.0 * np.minimum(below, above))
    return np.where(count > 0, p, np.nan)


@dataclass(frozen=True)
class HolmIntervals:
    """Holm-adjusted decisions for a family of differences, with the interval behind each.

    ``confidence[j]`` is the level at which pair ``j`` was tested; ``lo``/``hi`` its
    percentile interval at that level; ``significant[j]`` is True exactly when that
    interval excludes 0 and Holm's step-down reached pair ``j``.
    """

    p_values: np.ndarray
    confidence: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    significant: np.ndarray


def holm_intervals(
    resamples: np.ndarray, confidence: float = 0.95, eligible: np.ndarray | None = None
) -> HolmIntervals:
    """Holm's step-down over the columns of ``resamples`` (one per compared pair).

    The family is the ``eligible`` columns (default: all), ``m`` of them. In order
    of :func:`bootstrap_p_values`, smallest first, step ``k`` (0-based) tests its
    pair with the percentile interval at level ``1 - alpha / (m - k)`` (``alpha =
    1 - confidence``): the pair is significant when that interval excludes 0, and
    the first pair whose interval holds 0 stops the procedure; it and every later
    pair are not significant and show their interval at that same stopping level.
    With one pair this is the plain interval at ``confidence``. (Holm 1979, "A
    simple sequentially rejective multiple test procedure", Scand. J. Statist. 6:65-70.)
    Columns not eligible get NaN and are never significant.

    >>> rng = np.random.default_rng(0)
    >>> boot = np.column_stack([rng.normal(1, 0.3, 2000), rng.normal(0.5, 0.3, 2000)])
    >>> holm = holm_intervals(boot)
    >>> holm.significant.tolist(), holm.confidence.round(3).tolist()
    ([True, False], [0.975, 0.95])
    """
    boot = np.asarray(resamples, dtype="float64")
    if boot.ndim == 1:
        boot = boot[:, None]
    pairs = boot.shape[1]
    alpha = tail(confidence)
    ok = np.ones(pairs, bool) if eligible is None else np.asarray(eligible, bool).copy()
    p = bootstrap_p_values(boot)
    ok &= np.isfinite(p)
    levels = np.full(pairs, np.nan)
    lo, hi = np.full(pairs, np.nan), np.full(pairs, np.nan)
    significant = np.zeros(pairs, bool)
    family = np.flatnonzero(ok)
    order = family[np.argsort(p[family], kind="stable")]
    stopped: float | None = None
    for k, j in enumerate(order):
        level = stopped if stopped is not None else 1.0 - alpha / (family.size - k)
        low, high = percentile_interval(boot[:, j], level)
        levels[j], lo[j], hi[j] = level, float(low), float(high)
        if stopped is None and (low > 0 or high < 0):
            significant[j] = True
        elif stopped is None:
            stopped = level
    return HolmIntervals(np.where(ok, p, np.nan), levels, lo, hi, significant)
