"""What the report needs to know about a metric: label, direction, aggregate and decimals.

Everything is read from the metric table (:data:`glyphbench.scoring.table.METRICS`)
through :func:`metric_info`; the report's own columns (:data:`REPORT_COLUMNS`) and any
other numeric column a user slices by are shown under their own name, averaged.
"""

from __future__ import annotations

from dataclasses import dataclass

from glyphbench.scoring.table import METRICS, Aggregate, Mean

#: Columns the report computes itself (not metrics of the table): label, higher is better.
REPORT_COLUMNS: dict[str, tuple[str, bool]] = {"error_rate": ("Error rate", False)}


@dataclass(frozen=True)
class MetricInfo:
    """A metric as the report shows it."""

    label: str
    higher_is_better: bool
    aggregate: Aggregate
    #: Decimals a page shows (the record's ``digits``; 3 for a column that is no metric).
    digits: int = 3


def metric_info(name: str) -> MetricInfo:
    """Label, direction, aggregate and decimals of ``name`` (from the metric table if a metric).

    >>> info = metric_info("algorithm1")
    >>> info.label, info.higher_is_better, info.digits
    ('Algorithm 1 distance', False, 2)
    >>> metric_info("some_column").label
    'some_column'
    """
    if name in METRICS:
        metric = METRICS.get(name)
        return MetricInfo(metric.label, metric.higher_is_better, metric.aggregate, metric.digits)
    label, higher = REPORT_COLUMNS.get(name, (name, True))
    return MetricInfo(label, higher, Mean())


def metric_label(name: str) -> str:
    """The human label of ``name``."""
    return metric_info(name).label


def higher_is_better(name: str) -> bool:
    """True unless lower values of ``name`` are better (edit counts, error rates)."""
    return metric_info(name).higher_is_better


def metric_aggregate(name: str) -> Aggregate:
    """How ``name`` is aggregated over images (Mean, Ratio or Derived)."""
    return metric_info(name).aggregate
