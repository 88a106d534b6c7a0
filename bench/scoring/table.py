"""The metric table: every metric glyphbench computes is one :class:`Metric` record.

A record says everything the rest of glyphbench needs: the column name, the
function that scores one (expected, read) pair, how scores are aggregated over a
set of images (a per-image mean, a pooled ratio of sums, or a function of other
aggregates), whether higher is better, its label and unit, a one-line definition
and the benchmark it reproduces. Result columns, report tables and labels, the
CLI's metric list (``glyphbench list metrics``) and ``docs/metrics.md`` are all
read from this table.

Metrics come in *families*: ``glyphbench`` (the default scores of every run), and
one family per benchmark whose scorer glyphbench reproduces (``textinvision``, and
the suites' scorers). A family is one module of :mod:`bench.scoring` that calls
:func:`register_metric`; every module of the package is imported on first use.

Adding a metric = one function + one record + its test::

    def shouting(pair: Pair) -> float:
        return float(pair.read_raw.isupper())

    register_metric(Metric("shouting", shouting, label="All caps", higher_is_better=False,
                           doc="1 when the reader's text is all upper case."))

>>> table = MetricTable()
>>> _ = table.add(Metric("chars", lambda pair: float(len(pair.read)), label="Characters read",
...                  higher_is_better=True, doc="Characters the reader returned.", family="toy"))
>>> table.columns(["toy"])
['chars']
>>> table.get("chars").direction
'higher is better'
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bench.errors import InputError

# --------------------------------------------------------------------------- aggregates


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

# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Metric:
    """One metric. ``function`` is None for set-level metrics (a :class:`Ratio` or :class:`Derived`).

    ``function`` takes a :class:`~bench.scoring.pair.Pair` (the expected and read
    texts, raw and normalised, with shared intermediate results) and returns a number.
    """

    name: str
    function: Callable[[Any], float] | None
    label: str
    higher_is_better: bool
    doc: str
    family: str = "glyphbench"
    aggregate: Aggregate = field(default_factory=Mean)
    unit: str = ""
    reference: str = ""
    dtype: str = "float64"
    #: Shown in summary tables by default.
    summary: bool = False

    #: Per-image column written to results (False for set-level metrics).
    @property
    def per_image(self) -> bool:
        return self.function is not None

    @property
    def direction(self) -> str:
        return "higher is better" if self.higher_is_better else "lower is better"


class MetricTable:
    """Metric records by name, in registration order; families load on first use."""

    def __init__(self, package: str | None = None) -> None:
        self._metrics: dict[str, Metric] = {}
        self._package = package
        self._loaded = package is None

    def add(self, metric: Metric) -> Metric:
        existing = self._metrics.get(metric.name)
        if existing is not None and existing.family != metric.family:
            raise ValueError(
                f"metric {metric.name!r} is already registered by family {existing.family!r}"
            )
        self._metrics[metric.name] = metric
        return metric

    def remove(self, name: str) -> None:
        self._metrics.pop(name, None)

    def _load(self) -> None:
        if self._loaded or self._package is None:
            return
        self._loaded = True
        from bench.registry import _package_modules

        for module in _package_modules(self._package):
            importlib.import_module(module)

    def all(self) -> list[Metric]:
        self._load()
        return list(self._metrics.values())

    def get(self, name: str) -> Metric:
        self._load()
        metric = self._metrics.get(name)
        if metric is None:
            raise InputError(
                None, f"unknown metric {name!r}; known: {', '.join(self._metrics)}", key="metrics"
            )
        return metric

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._metrics

    def families(self) -> list[str]:
        return list(dict.fromkeys(metric.family for metric in self.all()))

    def of(self, families: Iterable[str]) -> list[Metric]:
        """The records of ``families``, in registration order; unknown families are errors."""
        wanted = list(families)
        known = self.families()
        unknown = [f for f in wanted if f not in known]
        if unknown:
            raise InputError(
                None, f"unknown metric family {unknown[0]!r}; known: {', '.join(known)}"
            )
        return [metric for metric in self.all() if metric.family in wanted]

    def columns(self, families: Iterable[str]) -> list[str]:
        """Per-image result columns of ``families``."""
        return [metric.name for metric in self.of(families) if metric.per_image]

    def higher_is_better(self) -> Mapping[str, bool]:
        return {metric.name: metric.higher_is_better for metric in self.all()}

    def labels(self) -> Mapping[str, str]:
        return {metric.name: metric.label for metric in self.all()}

    def summary_names(self, families: Sequence[str] = ("glyphbench",)) -> list[str]:
        return [metric.name for metric in self.of(families) if metric.summary]


#: The table every part of glyphbench reads.
METRICS = MetricTable("bench.scoring")


def register_metric(metric: Metric) -> Metric:
    """Add ``metric`` to :data:`METRICS` (call at import time of a family module)."""
    return METRICS.add(metric)
