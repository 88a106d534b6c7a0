"""Statistics behind the report: slice summaries and peer views (the paired comparisons
and ranks live in :mod:`glyphbench.report.compare`; importable from here too, as
docs/report.md names them).

Every function is pure: it takes the results table (or a summary made from it)
and returns numbers or a DataFrame; nothing here reads or writes files. The
intervals come from the one bootstrap kernel, :mod:`glyphbench.core.bootstrap`.

Conventions
-----------
* Metric means exclude failed rows (:func:`glyphbench.core.schema.failed_mask`); failures
  are counted separately (``n_errors``, ``error_rate``).
* Intervals are 95% percentile bootstrap intervals by default. The resampling
  unit is a *prompt*: all images of a prompt (seeds, samples) move together, and
  a prompt with one image is resampled like a single image. Every random draw
  comes from a generator seeded with ``(seed, key)``, so the same seed gives
  the same report; summaries draw the table's prompts once for all models, so
  an interval does not change when other slices, or models on the same
  prompts, are added.
* Direction and labels: :func:`glyphbench.report.metric_info.metric_info`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from glyphbench.core.bootstrap import (
    MIN_UNITS,
    Estimands,
    Grouping,
    cluster_codes,
    grouped_bootstrap,
    percentile_interval,
    share_bootstrap,
    tail,
)
from glyphbench.core.bootstrap import seeded_rng as slice_rng
from glyphbench.core.schema import failed_mask
from glyphbench.report.compare import (
    compare_models,
    float_column,
    paired_difference,
    prompt_means,
    rank_models,
)
from glyphbench.report.metric_info import metric_aggregate
from glyphbench.report.slices import slice_labels
from glyphbench.scoring.table import METRICS

#: glyphbench's own summary metrics, in display order: read from the metric table (the
#: ``summary`` ranks of the ``glyphbench`` family), never listed here.
SUMMARY_METRICS: tuple[str, ...] = tuple(METRICS.summary_names(["glyphbench"]))


def summary_metrics(columns: Sequence[str], families: Sequence[str] = ()) -> tuple[str, ...]:
    """The summary metrics of the metric table present among ``columns``, in display order:
    glyphbench's, then those of the ``families`` a run asked for (``run --metrics``).

    >>> summary_metrics(["ned", "exact_match", "model"])
    ('exact_match', 'ned')
    >>> summary_metrics(["ned", "mario_f", "mario_acc"], ["mario"])
    ('ned', 'mario_f', 'mario_acc')
    """
    present = set(columns)
    names = METRICS.summary_names(["glyphbench", *families])
    return tuple(dict.fromkeys(name for name in names if name in present))


def requested_families(runs: Mapping[str, Any]) -> list[str]:
    """The metric families the runs asked for besides glyphbench's (their configs' ``metrics``).

    >>> requested_families({"a": {"meta": {"config": {"metrics": ["mario"]}}}, "b": {}})
    ['mario']
    """
    families: list[str] = []
    for info in runs.values():
        config = (info.get("meta") or {}).get("config") or {}
        families += [str(name) for name in config.get("metrics") or []]
    return list(dict.fromkeys(families))


#: Rows of one prompt are one resampling cluster.
CLUSTER_COLUMN = "prompt_id"

#: Most slices (times metrics) a slicing may have for the shared-resample path of
#: :func:`summarize_many`; beyond it, per-slice Python work and memory dominate and
#: each slice is resampled on its own (fixed size) instead.
_MAX_SLICE_MATRIX = 2_000

__all__ = [
    "SUMMARY_METRICS",
    "compare_models",
    "paired_difference",
    "peer_views",
    "prompt_means",
    "rank_models",
    "slice_rng",
    "summarize",
    "summarize_many",
]

# --------------------------------------------------------------------------- summaries


def _metric_matrix(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    missing = [m for m in columns if m not in frame.columns]
    if missing:
        raise KeyError(f"results table lacks score columns {missing}")
    if not columns:
        return np.empty((len(frame), 0))
    return np.column_stack([float_column(frame[m]) for m in columns])


def _row_clusters(frame: pd.DataFrame, column: str | None) -> np.ndarray | None:
    """Every row's cluster (its prompt) as a code; None (rows alone) without the column."""
    if not column or column not in frame.columns:
        return None
    # Sorted: the shared prompt draw does not depend on the order of the rows.
    codes: np.ndarray = pd.factorize(frame[column].astype(str), sort=True)[0]
    return codes


def _sorted_codes(codes: np.ndarray) -> np.ndarray:
    """``codes`` renumbered 0..C-1 in sorted order (independent of the rows' order).

    >>> _sorted_codes(np.array([7, 3, 7, 5])).tolist()
    [2, 0, 2, 1]
    """
    inverse: np.ndarray = np.unique(codes, return_inverse=True)[1]
    return inverse.reshape(-1)


def _slice_codes(
    frame: pd.DataFrame, by: Sequence[str], labels: Mapping[str, pd.Series]
) -> tuple[np.ndarray, list[tuple[Any, ...]]]:
    """Code of every row's slice of ``by`` (0..S-1, in label order) and each code's label tuple."""
    if not by:
        return np.zeros(len(frame), dtype=np.int64), [()]
    columns = [labels[c] for c in by]
    if all(
        isinstance(c.dtype, pd.CategoricalDtype)
        and all(isinstance(v, str) for v in c.cat.categories)
        for c in columns
    ):
        codes_of = [c.cat.codes.to_numpy().astype(np.int64) for c in columns]
        if all(c.size == 0 or c.min() >= 0 for c in codes_of):  # no missing label
            # The slices present, from the labels' codes; numbered in the sorted order of
            # their label tuples, as the groupby of the labels' values below numbers them.
            sizes = [len(c.cat.categories) for c in columns]
            combined = np.zeros(len(frame), dtype=np.int64)
            for size, code in zip(sizes, codes_of, strict=True):
                combined = combined * size + code
            present, inverse = np.unique(combined, return_inverse=True)
            digits = []
            for size in reversed(sizes):
                digits.append(present % size)
                present = present // size
            per_column = [
                list(c.cat.categories[d]) for c, d in zip(columns, reversed(digits), strict=True)
            ]
            found = list(zip(*per_column, strict=True))
            order = sorted(range(len(found)), key=found.__getitem__)
            rank = np.empty(len(found), dtype=np.int64)
            rank[order] = np.arange(len(found))
            return rank[inverse.reshape(-1)], [found[i] for i in order]
    key_frame = pd.DataFrame({c: labels[c].to_numpy() for c in by})
    grouped = key_frame.groupby(list(by), observed=True, sort=True)
    codes = grouped.ngroup().to_numpy()
    first = pd.Series(np.arange(len(codes))).groupby(codes).first().to_numpy()
    keys = [tuple(key_frame.iloc[i]) for i in first]
    return codes, keys


#: The generator of one slice's error rate, by slicing columns and slice labels.
_RngFor = Callable[[list[str], tuple[Any, ...]], np.random.Generator]


@dataclass(frozen=True)
class _Job:
    """What every model's summary needs: the table's arrays and the settings."""

    values: np.ndarray  # rows x estimand columns
    failed: np.ndarray
    clusters: np.ndarray | None
    estimands: Estimands
    n_boot: int
    confidence: float

    def clusters_of(self, rows: np.ndarray) -> np.ndarray | None:
        return None if self.clusters is None else cluster_codes(self.clusters[rows], rows.size)


@dataclass(frozen=True)
class _Slicing:
    """One slicing: its columns, every row's slice code and each code's labels."""

    by: list[str]
    codes: np.ndarray
    keys: list[tuple[Any, ...]]


@dataclass(frozen=True)
class _Local:
    """One slicing within one model's rows: the slices present and each row's position."""

    present: np.ndarray  # slice codes present among the rows
    position: np.ndarray  # each row's index into ``present``
    ok: np.ndarray  # which rows succeeded

    @classmethod
    def of(cls, codes: np.ndarray, ok: np.ndarray) -> _Local:
        present, position = np.unique(codes, return_inverse=True)
        return cls(present, position.reshape(-1), ok)

    def grouping(self) -> Grouping:
        """The slice of each successful row."""
        return Grouping(self.position[self.ok], self.present.size)


def _summarize_rows(
    model: str,
    rows: np.ndarray,
    slicings: Sequence[_Slicing],
    job: _Job,
    means_rng: np.random.Generator,
    errors_rng: _RngFor,
) -> list[list[dict[str, Any]]]:
    """One summary row per slice of each slicing, for the ``rows`` of one model alone.

    The model's successful rows are resampled once (by prompt, from ``means_rng``)
    for every slicing; each slice's error rate is resampled from ``errors_rng``
    (drawn first: the two may be one generator).
    """
    ok = ~job.failed[rows]
    locals_ = [_Local.of(s.codes[rows], ok) for s in slicings]
    errors = _slice_errors(rows, slicings, locals_, job, errors_rng)
    boots = grouped_bootstrap(
        job.values[rows[ok]],
        [local.grouping() for local in locals_],
        estimands=job.estimands,
        n_boot=job.n_boot,
        rng=means_rng,
        clusters=job.clusters_of(rows[ok]),
    )
    return _model_tables(model, rows, slicings, locals_, boots, errors, job)


def _slice_errors(
    rows: np.ndarray,
    slicings: Sequence[_Slicing],
    locals_: Sequence[_Local],
    job: _Job,
    errors_rng: _RngFor,
) -> list[list[dict[str, float]]]:
    """Each slice's error rate interval, slicing by slicing (one model's ``rows``)."""
    return [
        [
            _error_bounds(rows[local.position == i], job, errors_rng(s.by, s.keys[code]))
            for i, code in enumerate(local.present)
        ]
        for s, local in zip(slicings, locals_, strict=True)
    ]


def _model_tables(
    model: str,
    rows: np.ndarray,
    slicings: Sequence[_Slicing],
    locals_: Sequence[_Local],
    boots: Sequence[np.ndarray],
    errors: Sequence[list[dict[str, float]]],
    job: _Job,
) -> list[list[dict[str, Any]]]:
    """The summary rows of one model for each slicing, from its resampled aggregates."""
    return [
        _slice_rows(model, s, local, rows, boot, slice_errors, job)
        for s, local, boot, slice_errors in zip(slicings, locals_, boots, errors, strict=True)
    ]


@dataclass(frozen=True)
class _ModelPart:
    """One model's rows and, per shared slicing, its slices among them."""

    model: str
    rows: np.ndarray
    locals_: list[_Local]


def _joint_bootstrap(
    parts: Sequence[_ModelPart], n_slicings: int, job: _Job, rng: np.random.Generator
) -> list[list[np.ndarray]]:
    """Every model's resampled slice aggregates from one draw of the prompts.

    The groups of slicing ``k`` are the (model, slice) pairs, so one
    :func:`~glyphbench.core.bootstrap.grouped_bootstrap` call draws the table's prompts
    once for all models. Failed rows take part with unknown values: a prompt
    then has the same units in every model that saw it, so one gather of the
    resample counts serves a slice of every model (see the kernel), and a
    model's failed prompt adds nothing to its means, as if left out.
    Returns, per model, one ``(n_boot, names, slices present)`` array per slicing.
    """
    rows = np.concatenate([p.rows for p in parts])
    values = job.values[rows]
    values[job.failed[rows]] = np.nan
    groupings = []
    for k in range(n_slicings):
        starts = np.cumsum([0, *(p.locals_[k].present.size for p in parts)])
        codes = np.concatenate(
            [start + p.locals_[k].position for start, p in zip(starts, parts, strict=False)]
        )
        groupings.append(Grouping(codes, int(starts[-1])))
    boots = grouped_bootstrap(
        values,
        groupings,
        estimands=job.estimands,
        n_boot=job.n_boot,
        rng=rng,
        clusters=None if job.clusters is None else _sorted_codes(job.clusters[rows]),
    )
    out: list[list[np.ndarray]] = [[] for _ in parts]
    for k, boot in enumerate(boots):
        start = 0
        for m, part in enumerate(parts):
            stop = start + part.locals_[k].present.size
            out[m].append(boot[:, :, start:stop])
            start = stop
    return out


def _error_bounds(rows: np.ndarray, job: _Job, rng: np.random.Generator) -> dict[str, float]:
    """Error rate of ``rows`` with its interval (resampled by prompt)."""
    flags = job.failed[rows]
    draws = share_bootstrap(flags, n_boot=job.n_boot, rng=rng, clusters=job.clusters_of(rows))
    lo, hi = percentile_interval(draws, job.confidence)
    return {"error_rate_lo": float(lo), "error_rate_hi": float(hi)}


def _slice_rows(
    model: str,
    slicing: _Slicing,
    local: _Local,
    rows: np.ndarray,
    boot: np.ndarray,
    errors: list[dict[str, float]],
    job: _Job,
) -> list[dict[str, Any]]:
    """The summary rows of one slicing from its resampled aggregates ``(n_boot, names, slices)``."""
    lo, hi = percentile_interval(boot, job.confidence)
    n_slices = local.present.size
    # Rows sorted by slice (stable: each slice keeps its rows' order), counted at once.
    order = np.argsort(local.position, kind="stable")
    edges = np.searchsorted(local.position[order], np.arange(n_slices + 1))
    ok_sorted = local.ok[order]
    units_all = _units_per_slice(rows, local.position, n_slices, job)
    units_ok = _units_per_slice(rows[local.ok], local.position[local.ok], n_slices, job)
    out = []
    for i, code in enumerate(local.present):
        n_all = int(edges[i + 1] - edges[i])
        part = order[edges[i] : edges[i + 1]]
        good = job.values[rows[part[ok_sorted[edges[i] : edges[i + 1]]]]]
        row: dict[str, Any] = {
            "model": model,
            **dict(zip(slicing.by, slicing.keys[code], strict=True)),
        }
        row.update(n=len(good), n_errors=n_all - len(good), error_rate=(n_all - len(good)) / n_all)
        row["n_prompts"] = int(units_ok[i])
        row.update(errors[i])
        if units_all[i] < MIN_UNITS:  # too few prompts for an interval
            row.update(error_rate_lo=math.nan, error_rate_hi=math.nan)
        points = job.estimands.point(good)
        for m, (metric, point) in enumerate(zip(job.estimands.names, points, strict=True)):
            known = not math.isnan(point) and row["n_prompts"] >= MIN_UNITS
            row[metric] = point
            row[f"{metric}_lo"] = float(lo[m, i]) if known else math.nan
            row[f"{metric}_hi"] = float(hi[m, i]) if known else math.nan
        out.append(row)
    return out


def _units_per_slice(
    rows: np.ndarray, position: np.ndarray, n_slices: int, job: _Job
) -> np.ndarray:
    """Resampling units (distinct prompts; rows without a prompt column) in each slice."""
    if job.clusters is None:
        return np.bincount(position, minlength=n_slices)
    clusters = job.clusters[rows]
    seen = np.zeros((n_slices, int(clusters.max()) + 1 if clusters.size else 0), dtype=bool)
    seen[position, clusters] = True
    counts: np.ndarray = seen.sum(axis=1)
    return counts


def _summary_frame(
    rows: list[dict[str, Any]],
    by: Sequence[str],
    metrics: Sequence[str],
    labels: Mapping[str, pd.Series],
    attrs: dict[str, Any],
) -> pd.DataFrame:
    columns = ["model", *by, "n", "n_errors", "error_rate", "error_rate_lo", "error_rate_hi"]
    columns.append("n_prompts")
    for metric in metrics:
        columns += [metric, f"{metric}_lo", f"{metric}_hi"]
    out = pd.DataFrame(rows, columns=columns)
    for column in by:
        out[column] = pd.Categorical(
            out[column], categories=labels[column].cat.categories, ordered=True
        )
    out = out.sort_values(["model", *by], kind="stable").reset_index(drop=True)
    out.attrs.update(attrs)
    return out


def summarize(
    frame: pd.DataFrame,
    by: Sequence[str] = (),
    *,
    metrics: Sequence[str] = SUMMARY_METRICS,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
) -> pd.DataFrame:
    """Per model and slice: n, errors and the aggregate of each metric with its interval.

    One row per (model, slice of ``by``); ``by=()`` gives one row per model.
    Columns: ``model``, the ``by`` columns (slice labels, see
    :func:`glyphbench.report.slices.slice_labels`), ``n`` (rows that succeeded),
    ``n_errors``, ``error_rate`` with ``error_rate_lo``/``_hi``, then for each
    metric ``m``: ``m``, ``m_lo``, ``m_hi``. A metric's aggregate (mean, pooled
    ratio or derived) is the metric table's. ``frame.attrs`` of the result
    records ``n_boot``, ``seed`` and ``confidence``. Intervals: see
    :func:`summarize_many`.

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


def summarize_many(
    frame: pd.DataFrame,
    slicings: Sequence[Sequence[str]],
    *,
    metrics: Sequence[str] = SUMMARY_METRICS,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    labels: Mapping[str, pd.Series] | None = None,
) -> list[pd.DataFrame]:
    """:func:`summarize` for several slicings at once, sharing the resamples.

    The resampling unit is a prompt: each resample draws as many of the table's
    prompts as it has, with replacement (seeded by ``(seed, "prompts")``), all
    images of a drawn prompt together; every model and every slice of every
    slicing is aggregated from that same draw (see
    :func:`glyphbench.core.bootstrap.grouped_bootstrap`), a model's failed rows and the
    prompts it did not see adding nothing to its means. (An earlier version made each
    model drew its own prompts, seeded by ``(seed, model)``; for models that saw
    every prompt the two have the same distribution, and one shared draw is
    about 10x cheaper at a million rows.) A slice's size then varies across
    resamples as it would in a re-run drawing new prompts from the same mix
    (resamples where a slice is empty are skipped for it). With one image per
    prompt this is the bootstrap over images. Slicings with very many slices
    (e.g. ``by=["prompt_id"]``) are resampled slice by slice instead, each seeded
    by its key. Error rates are resampled by prompt per slice, seeded by
    ``("errors", model, slice)``; with one image per prompt that is the exact
    ``Binomial(n, p) / n`` distribution of a resampled 0/1 mean.
    ``labels`` (column -> slice labels) saves recomputing them.
    """
    slicing_lists: list[list[str]] = [list(b) for b in slicings]
    if not slicing_lists:
        return []
    tail(confidence)  # a bad level fails before any work
    estimands = Estimands(metrics, metric_aggregate)
    wanted = dict.fromkeys(c for b in slicing_lists for c in b)
    given = labels or {}
    labels = {c: given[c] if c in given else slice_labels(frame, c) for c in wanted}
    job = _Job(
        _metric_matrix(frame, estimands.columns),
        failed_mask(frame),
        _row_clusters(frame, CLUSTER_COLUMN),
        estimands,
        n_boot,
        confidence,
    )
    coded = [_Slicing(by, *_slice_codes(frame, by, labels)) for by in slicing_lists]
    size = max(len(estimands.names), 1)
    shared = [j for j, s in enumerate(coded) if size * len(s.keys) <= _MAX_SLICE_MATRIX]
    results: list[list[dict[str, Any]]] = [[] for _ in slicing_lists]
    models = frame["model"].astype(str).to_numpy()
    shared_slicings = [coded[j] for j in shared]
    parts = [
        _ModelPart(
            str(model), rows, [_Local.of(s.codes[rows], ~job.failed[rows]) for s in shared_slicings]
        )
        for model, rows in pd.Series(np.arange(len(frame)))
        .groupby(models, sort=True)
        .indices.items()
    ]
    if parts and shared_slicings:
        boots = _joint_bootstrap(parts, len(shared_slicings), job, slice_rng(seed, ("prompts",)))
        for part, model_boots in zip(parts, boots, strict=True):
            errors = _slice_errors(
                part.rows, shared_slicings, part.locals_, job, _error_rngs(seed, part.model)
            )
            tables = _model_tables(
                part.model, part.rows, shared_slicings, part.locals_, model_boots, errors, job
            )
            for j, table in zip(shared, tables, strict=True):
                results[j] += table
    for j, slicing in enumerate(coded):
        if j not in shared:
            results[j] = _slice_by_slice(slicing, models, job, seed)
    attrs = {"n_boot": n_boot, "seed": seed, "confidence": confidence}
    return [
        _summary_frame(results[j], by, estimands.names, labels, attrs)
        for j, by in enumerate(slicing_lists)
    ]


def _error_rngs(seed: int, model: str) -> _RngFor:
    """Each slice's error-rate generator, seeded by ``(seed, "errors", model, slice)``."""

    def rng(by: list[str], key: tuple[Any, ...]) -> np.random.Generator:
        return slice_rng(seed, ("errors", model, *by, *key))

    return rng


def _same(generator: np.random.Generator) -> _RngFor:
    """Every slice's error rate drawn from ``generator`` (before the means)."""

    def rng(by: list[str], key: tuple[Any, ...]) -> np.random.Generator:
        return generator

    return rng


def _slice_by_slice(
    slicing: _Slicing, models: np.ndarray, job: _Job, seed: int
) -> list[dict[str, Any]]:
    """Summary rows of a slicing with very many slices: each (model, slice) resampled alone.

    Each slice keeps its size in every resample; its generator is seeded by
    ``(seed, model, slice labels, columns)`` and draws the error rate, then the means.
    """
    key_frame = pd.DataFrame({"model": models, "_slice": slicing.codes})
    groups = key_frame.groupby(["model", "_slice"], sort=False).indices
    rows: list[dict[str, Any]] = []
    for (model, code), idx in groups.items():
        key = slicing.keys[code]
        rng = slice_rng(seed, (model, *key, *slicing.by))
        alone = _Slicing(slicing.by, np.zeros(len(models), dtype=np.int64), [key])
        rows += _summarize_rows(str(model), idx, [alone], job, rng, _same(rng))[0]
    return rows


# --------------------------------------------------------------------------- peer views

#: AnyText reports sentence accuracy (whole line exactly right) and NED.
ANYTEXT_COLUMNS = {"exact_match": "sentence_acc", "ned": "ned"}

#: MARIO-Eval (TextDiffuser) reports word-level OCR precision, recall and F-measure.
MARIO_COLUMNS = {"word_precision": "precision", "word_recall": "recall", "word_f1": "f1"}

#: Peer views: name -> (title, metric -> peer column).
PEER_VIEWS: dict[str, tuple[str, dict[str, str]]] = {
    "anytext": ("AnyText-style: sentence accuracy and NED", ANYTEXT_COLUMNS),
    "mario": ("MARIO-Eval-style: word precision, recall, F1 (per-image means)", MARIO_COLUMNS),
}


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
    for name, (_title, mapping) in PEER_VIEWS.items():
        rename: dict[str, str] = {}
        for metric, new in mapping.items():
            rename.update({metric: new, f"{metric}_lo": f"{new}_lo", f"{metric}_hi": f"{new}_hi"})
        keep = ["model", *by, "n", *rename]
        views[name] = summary[keep].rename(columns=rename).reset_index(drop=True)
    return views
