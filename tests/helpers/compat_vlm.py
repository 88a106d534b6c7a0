"""Helpers for the compat tests of the VLM-read benchmarks (OneIG-Bench, LongText-Bench).

The data under ``tests/data/compat`` holds, per pair, the values the benchmarks'
original code produced (see ``tests/data/compat/README.md``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from glyphbench.scoring.table import Derived, Mean, Metric, Ratio


@dataclass(frozen=True)
class StandInPair:
    """The two attributes of a Pair that compat metrics may use."""

    expected_raw: str
    read_raw: str


def per_image_columns(
    metrics: Sequence[Metric], rows: Sequence[dict[str, Any]]
) -> list[dict[str, float]]:
    """Every per-image record's value for every row, computed from expected and read."""
    return [
        {
            metric.name: metric.function(StandInPair(row["expected"], row["read"]))
            for metric in metrics
            if metric.function is not None
        }
        for row in rows
    ]


def aggregate(metrics: Sequence[Metric], columns: Sequence[dict[str, float]]) -> dict[str, float]:
    """Each record's set-level value as its aggregate declares (NaN-skipping mean)."""
    values: dict[str, float] = {}
    for metric in metrics:
        rule = metric.aggregate
        if isinstance(rule, Mean):
            kept = [row[metric.name] for row in columns if not math.isnan(row[metric.name])]
            values[metric.name] = sum(kept) / len(kept)
        elif isinstance(rule, Ratio):
            numerator = sum(row[rule.numerator] for row in columns)
            values[metric.name] = numerator / sum(row[rule.denominator] for row in columns)
    for metric in metrics:
        if isinstance(metric.aggregate, Derived):
            inputs = [values[name] for name in metric.aggregate.inputs]
            values[metric.name] = float(metric.aggregate.function(*inputs))
    return values
