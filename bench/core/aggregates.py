"""How a metric's per-image values become one number: a mean, a pooled ratio or a derived value.

A :class:`~glyphbench.scoring.table.Metric` names one of these as its ``aggregate``; the
bootstrap kernel (:mod:`glyphbench.core.bootstrap`) resamples each kind. They live in core so
that the kernel stands below the metric table.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Mean:
    """The mean over images of the metric's own per-image column (NaN skipped)."""


@dataclass(frozen=True)
class Ratio:
    """A pooled ratio: sum of ``numerator`` over images / sum of ``denominator``.

    For benchmarks that pool counts over the whole set (e.g. LongText-Bench's
    matched words / all words) rather than averaging per image.
    """

    numerator: str
    denominator: str


@dataclass(frozen=True)
class Derived:
    """A function of other metrics' aggregates, e.g. an F-measure of mean P and mean R.

    ``function`` receives one array per name in ``inputs`` (the aggregates, over
    resamples when bootstrapping) and returns an array of the same shape.
    """

    inputs: tuple[str, ...]
    function: Callable[..., Any]


Aggregate = Mean | Ratio | Derived
