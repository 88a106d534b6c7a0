"""What the report needs to know about a metric: its label, direction and aggregate.

Everything is read from the metric table (:data:`bench.scoring.table.METRICS`)
through :func:`metric_info`. Names the table does not (yet) hold fall back to
:data:`FALLBACK_LABELS` and :data:`bench.scoring.pairs.HIGHER_IS_BETTER`, with a
per-image mean as aggregate.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.scoring.pairs import HIGHER_IS_BETTER
from bench.scoring.table import METRICS, Aggregate, Mean

#: Labels of names the metric table lacks (``error_rate`` is a report column, not a metric).
FALLBACK_LABELS: dict[str, str] = {
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
_FALLBACK_DIRECTIONS = {**HIGHER_IS_BETTER, "error_rate": False}


@dataclass(frozen=True)
class MetricInfo:
    """A metric as the report shows it."""

    label: str
    higher_is_better: bool
    aggregate: Aggregate


def metric_info(name: str) -> MetricInfo:
    """Label, direction and aggregate of ``name`` (the metric table first, then the fallback).

    >>> info = metric_info("algorithm1")
    >>> info.label, info.higher_is_better
    ('Algorithm 1 distance', False)
    >>> metric_info("some_column").label
    'some_column'
    """
    if name in METRICS:
        metric = METRICS.get(name)
        return MetricInfo(metric.label, metric.higher_is_better, metric.aggregate)
    return MetricInfo(FALLBACK_LABELS.get(name, name), _FALLBACK_DIRECTIONS.get(name, True), Mean())


def metric_label(name: str) -> str:
    """The human label of ``name``."""
    return metric_info(name).label


def higher_is_better(name: str) -> bool:
    """True unless lower values of ``name`` are better (edit counts, error rates)."""
    return metric_info(name).higher_is_better


def metric_aggregate(name: str) -> Aggregate:
    """How ``name`` is aggregated over images (Mean, Ratio or Derived)."""
    return metric_info(name).aggregate
