"""Paired comparisons of models and the ranks they give: the report's model-vs-model
statistics (pure functions of the results table; nothing read or written).

* :func:`paired_difference`: one pair, one metric, on the prompts both saw;
* :func:`compare_models`: every pair and metric in one pass, Holm-corrected per metric;
* :func:`rank_models`: ranks from those verdicts (longest chain of significant wins).

The resampling unit is a prompt (each model's scores averaged per prompt first); the
intervals come from the one bootstrap kernel, :mod:`glyphbench.core.bootstrap`.
:mod:`glyphbench.report.stats` re-exports these names.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from glyphbench.calibration.reader_error import ReaderBounds, verdict
from glyphbench.core.bootstrap import MIN_UNITS, mean_interval, percentile_interval
from glyphbench.core.bootstrap import seeded_rng as slice_rng
from glyphbench.core.paired import holm_intervals, paired_differences
from glyphbench.core.schema import failed_mask
from glyphbench.report.metric_info import metric_info


def float_column(series: pd.Series) -> np.ndarray:
    """A score column as float64, anything not a number NaN (numpy floats: no object copy)."""
    if series.dtype.kind == "f" and isinstance(series.dtype, np.dtype):
        floats: np.ndarray = series.to_numpy(dtype="float64")
        return floats
    numbers = pd.to_numeric(series.astype(object), errors="coerce").astype("float64")
    converted: np.ndarray = numbers.to_numpy()
    return converted


def per_prompt_means(frame: pd.DataFrame, model: str, metric: str) -> pd.Series:
    """Mean of ``metric`` per prompt_id for one model (failed rows excluded)."""
    rows = frame[(frame["model"].astype(str) == model).to_numpy() & ~failed_mask(frame)]
    values = pd.to_numeric(rows[metric].astype(object), errors="coerce").astype("float64")
    return values.groupby(rows["prompt_id"].astype(str).to_numpy()).mean().dropna()


def _better(model_a: str, model_b: str, diff: float, metric: str) -> str:
    return model_a if (diff > 0) == metric_info(metric).higher_is_better else model_b


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
    With fewer than :data:`~glyphbench.core.bootstrap.MIN_UNITS` shared prompts there is
    no interval and nothing is significant. One pair alone: no multiplicity
    correction (:func:`compare_models` corrects over every pair of a report).

    >>> f = pd.DataFrame({"model": ["a"] * 5 + ["b"] * 5, "prompt_id": [1, 2, 3, 4, 5] * 2,
    ...                   "ned": [1.0, 0.8, 0.9, 0.7, 0.6, 0.5, 0.4, 0.5, 0.3, 0.2]})
    >>> d = paired_difference(f, "a", "b", "ned", n_boot=500)
    >>> d["n_prompts"], round(d["diff"], 3), d["better"]
    (5, 0.42, 'a')
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
    lo, hi = mean_interval(diffs, n_boot=n_boot, rng=rng, confidence=confidence)
    if diffs.size < MIN_UNITS:
        lo = hi = math.nan
    significant = bool(diffs.size >= MIN_UNITS and (lo > 0 or hi < 0))
    better = _better(model_a, model_b, result["diff"], metric) if significant else None
    result.update(lo=lo, hi=hi, significant=significant, better=better)
    return result


def prompt_means(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Mean ``metric`` per prompt (rows) and model (columns), failed rows excluded."""
    ok = frame.loc[~failed_mask(frame), ["prompt_id", "model", metric]]  # only these columns
    values = pd.Series(float_column(ok[metric]))
    # Grouped by sorted codes of the names (the order of the names), not by the strings.
    prompts, prompt_names = pd.factorize(ok["prompt_id"].astype(str), sort=True)
    models, model_names = pd.factorize(ok["model"].astype(str), sort=True)
    means = values.groupby([prompts, models], sort=True).mean().unstack()
    means.index = pd.Index(np.asarray(prompt_names, dtype=object)[means.index], name="prompt_id")
    means.columns = pd.Index(np.asarray(model_names, dtype=object)[means.columns], name="model")
    return means


COMPARISON_COLUMNS = [
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
    "p_value",
    "holm_confidence",
    "holm_lo",
    "holm_hi",
]


def compare_models(
    frame: pd.DataFrame,
    models: Sequence[str],
    metrics: Sequence[str] = ("ned", "exact_match"),
    *,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    reader: ReaderBounds | None = None,
) -> pd.DataFrame:
    """Paired differences for every pair of ``models`` and metric, Holm-corrected per metric.

    Same point estimates as calling :func:`paired_difference` pair by pair, and
    the same kind of interval (``lo``, ``hi``: the pair's own interval at
    ``confidence``), computed in one pass: prompt means are tabulated once per
    metric, and the prompts seen by any of ``models`` are resampled once for all
    pairs (:func:`glyphbench.core.paired.paired_differences`). A pair skips the
    resampled prompts it does not share (a failed row, a prompt one run lacks).

    Significance is corrected for the number of pairs: for each metric, the pairs
    with at least :data:`~glyphbench.core.bootstrap.MIN_UNITS` shared prompts are one family
    and :func:`glyphbench.core.paired.holm_intervals` decides them (``p_value``, the
    level ``holm_confidence`` each was tested at and the interval ``holm_lo`` /
    ``holm_hi`` at that level); ``significant`` and ``better`` are Holm's verdict,
    which is what :func:`rank_models` ranks by. With two models the Holm level is
    ``confidence`` itself. Pairs with fewer shared prompts get no interval.

    ``reader`` (a calibration card's bounds) adds, on the card's metric, the pair's
    reader-aware interval at its Holm level (``reader_lo``, ``reader_hi``: the same
    resamples, widened by the reader's error) and ``reader_verdict``
    (:func:`glyphbench.calibration.reader_error.verdict`).
    """
    pairs = list(combinations(models, 2))
    extra = list(READER_COLUMNS) if reader is not None else []
    if not pairs:  # one model: no pair, the same columns
        return pd.DataFrame(columns=[*COMPARISON_COLUMNS, *extra])
    index = {m: i for i, m in enumerate(models)}
    rows: list[dict[str, Any]] = []
    for metric in metrics:
        table = prompt_means(frame, metric).reindex(columns=list(models)).to_numpy()
        paired = paired_differences(
            table,
            [(index[a], index[b]) for a, b in pairs],
            n_boot=n_boot,
            rng=slice_rng(seed, ("paired", metric, *models)),
        )
        lo, hi = percentile_interval(paired.resamples, confidence)
        eligible = paired.shared.sum(axis=0) >= MIN_UNITS
        holm = holm_intervals(paired.resamples, confidence, eligible)
        for j, (a, b) in enumerate(pairs):
            row = _comparison_row(a, b, metric, table[:, [index[a], index[b]]], paired.shared[:, j])
            enough = bool(eligible[j])
            significant = enough and bool(holm.significant[j])
            row.update(
                lo=float(lo[j]) if enough else math.nan,
                hi=float(hi[j]) if enough else math.nan,
                significant=significant,
                better=_better(a, b, row["diff"], metric) if significant else None,
                p_value=float(holm.p_values[j]),
                holm_confidence=float(holm.confidence[j]),
                holm_lo=float(holm.lo[j]),
                holm_hi=float(holm.hi[j]),
            )
            if reader is not None:
                row.update(_reader_columns(reader, row, paired.resamples[:, j], metric))
            rows.append(row)
    return pd.DataFrame(rows, columns=[*COMPARISON_COLUMNS, *extra])


#: Columns :func:`compare_models` adds with a reader's bounds.
READER_COLUMNS = ("reader_lo", "reader_hi", "reader_verdict")


def _reader_columns(
    reader: ReaderBounds, row: Mapping[str, Any], resamples: np.ndarray, metric: str
) -> dict[str, Any]:
    """A pair's reader-aware interval at its Holm level, and its verdict."""
    if metric != reader.card.metric:
        return dict.fromkeys(READER_COLUMNS[:2], math.nan) | {"reader_verdict": ""}
    lo, hi = reader.difference(row["model_a"], row["model_b"], resamples, row["holm_confidence"])
    return {"reader_lo": lo, "reader_hi": hi, "reader_verdict": verdict(row["significant"], lo, hi)}


def _comparison_row(
    a: str, b: str, metric: str, means: np.ndarray, shared: np.ndarray
) -> dict[str, Any]:
    n_shared = int(shared.sum())
    mean_a, mean_b = means[shared, 0], means[shared, 1]
    return {
        "model_a": a,
        "model_b": b,
        "metric": metric,
        "n_prompts": n_shared,
        "mean_a": float(mean_a.mean()) if n_shared else math.nan,
        "mean_b": float(mean_b.mean()) if n_shared else math.nan,
        "diff": float((mean_a - mean_b).mean()) if n_shared else math.nan,
    }


def rank_models(
    summary: pd.DataFrame,
    comparisons: pd.DataFrame,
    metric: str = "ned",
    *,
    higher_is_better: bool | None = None,
) -> pd.DataFrame:
    """Rank models by the paired comparisons on ``metric`` (:func:`compare_models`).

    ``summary`` has one row per model with ``metric``, ``metric_lo`` and
    ``metric_hi`` (shown beside the rank; models without a value are left out);
    ``comparisons`` holds the Holm-corrected verdicts. A model's rank is 1 + the
    length of the longest chain of models each significantly better than the
    next, ending above it: a model significantly better than another always
    ranks strictly higher, and models share a rank only when no comparison
    separates them. ``tie`` marks a shared rank and ``tied_with`` lists the models
    sharing it; ``not_different_from`` lists every model with no significant
    difference (which may rank differently through a third model). Should the
    verdicts form a cycle (possible only when pairs share different prompts),
    the models on it share a rank.

    >>> s = pd.DataFrame({"model": ["a", "b", "c"], "ned": [0.9, 0.88, 0.5],
    ...                   "ned_lo": [0.85, 0.8, 0.45], "ned_hi": [0.95, 0.9, 0.55]})
    >>> c = pd.DataFrame({"model_a": ["a", "a", "b"], "model_b": ["b", "c", "c"],
    ...                   "metric": "ned", "better": [None, "a", "b"]})
    >>> rank_models(s, c, "ned")[["rank", "model", "tie", "tied_with"]].to_dict("records")
    [{'rank': 1, 'model': 'a', 'tie': True, 'tied_with': 'b'}, \
{'rank': 1, 'model': 'b', 'tie': True, 'tied_with': 'a'}, \
{'rank': 2, 'model': 'c', 'tie': False, 'tied_with': ''}]
    """
    higher = metric_info(metric).higher_is_better if higher_is_better is None else higher_is_better
    table = summary[["model", metric, f"{metric}_lo", f"{metric}_hi"]].dropna(subset=[metric])
    names = table["model"].astype(str).tolist()
    beats = _significant_wins(comparisons, metric, names)
    ranks = _chain_ranks(names, beats)
    table = table.assign(rank=[ranks[m] for m in names], _value=table[metric].to_numpy())
    table = table.sort_values(["rank", "_value"], ascending=[True, not higher], kind="stable").drop(
        columns="_value"
    )
    order = table["model"].astype(str).tolist()
    same = [[o for o in order if o != m and ranks[o] == ranks[m]] for m in order]
    apart = {(winner, loser) for winner, losers in beats.items() for loser in losers}
    undecided = [
        [o for o in order if o != m and (m, o) not in apart and (o, m) not in apart] for m in order
    ]
    table = table[["rank", "model", metric, f"{metric}_lo", f"{metric}_hi"]].reset_index(drop=True)
    table["tie"] = [bool(s) for s in same]
    table["tied_with"] = [", ".join(s) for s in same]
    table["not_different_from"] = [", ".join(u) for u in undecided]
    return table


def _significant_wins(
    comparisons: pd.DataFrame, metric: str, names: Sequence[str]
) -> dict[str, set[str]]:
    """Model -> the models it is significantly better than on ``metric``."""
    wins: dict[str, set[str]] = {m: set() for m in names}
    if comparisons.empty:
        return wins
    rows = comparisons[comparisons["metric"] == metric]
    for a, b, better in rows[["model_a", "model_b", "better"]].itertuples(index=False):
        if isinstance(better, str) and a in wins and b in wins:
            loser = b if better == a else a
            wins[better].add(loser)
    return wins


def _chain_ranks(names: Sequence[str], beats: Mapping[str, set[str]]) -> dict[str, int]:
    """1 + the longest chain of significant wins above each model (cycles collapsed).

    >>> _chain_ranks(["x", "a", "b"], {"x": {"a"}, "a": {"b"}, "b": set()})
    {'x': 1, 'a': 2, 'b': 3}
    """
    index = {m: i for i, m in enumerate(names)}
    n = len(names)
    reach = np.zeros((n, n), bool)  # reach[i, j]: a chain of wins leads from i down to j
    for winner, losers in beats.items():
        for loser in losers:
            reach[index[winner], index[loser]] = True
    for k in range(n):  # transitive closure (Warshall); a handful of models
        reach |= reach[:, [k]] & reach[[k], :]
    component = [
        min(j for j in range(n) if j == i or (reach[i, j] and reach[j, i])) for i in range(n)
    ]
    above: dict[int, set[int]] = {c: set() for c in set(component)}
    for i in range(n):
        for j in range(n):
            if reach[i, j] and component[i] != component[j]:
                above[component[j]].add(component[i])
    depth: dict[int, int] = {}

    def rank_of(c: int) -> int:  # acyclic between components
        if c not in depth:
            depth[c] = 1 + max((rank_of(a) for a in above[c]), default=0)
        return depth[c]

    return {m: rank_of(component[index[m]]) for m in names}
