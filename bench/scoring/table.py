"""The metric table: every metric glyphbench computes is one :class:`Metric` record.

A record says everything the rest of glyphbench needs: the column name, the
function that scores one pair, how scores are aggregated over a set of images (a
per-image mean, a pooled ratio of sums, or a function of other aggregates),
whether higher is better, its label and unit, a one-line definition and the
benchmark it reproduces. Result columns, report tables and labels, the CLI's
metric list and ``docs/metrics.md`` (``python -m glyphbench.scoring.docs``) are all
read from this table.

Metrics come in *families*: ``glyphbench`` (the default scores of every run),
``vae`` (text survival and image fidelity of a VAE round trip) and one family
per benchmark whose scorer glyphbench reproduces (``textinvision``, and the
suites' scorers). A family is one module of :mod:`glyphbench.scoring` that calls
:func:`register_metric`; every module of the package is imported on first use.
``score_pairs(..., compat=NAME)`` and ``glyphbench score --compat NAME`` select a
family by its name or by the ``compat`` alias its records carry (TextInVision's
``score.py`` columns are ``compat="reference"``).

Text metrics take a :class:`~glyphbench.scoring.pair.Pair`; image metrics
(``inputs="image"``, e.g. PSNR) take an :class:`~glyphbench.scoring.pair.ImagePair`
and are computed by their own pipeline (``vae_eval``), never by ``score_pairs``.
They are in the table so that their labels, directions and units have one home.

Adding a metric = one function (its docstring with a worked example as a doctest)
+ one record + its test, e.g. in a new family module ``bench/scoring/toy.py``::

    def shouting(pair: Pair) -> float:
        '''1.0 when the reader's text is all upper case (``Pair("exit", "EXIT")``: 1.0).'''
        return float(pair.read_raw.isupper())

    register_metric(Metric("shouting", shouting, label="All caps", higher_is_better=False,
                           doc="1 when the reader's text is all upper case.", family="toy"))

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
import importlib.util
import math
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from glyphbench.core.aggregates import Aggregate as Aggregate
from glyphbench.core.aggregates import Derived as Derived
from glyphbench.core.aggregates import Mean as Mean
from glyphbench.core.aggregates import Ratio as Ratio
from glyphbench.core.errors import InputError
from glyphbench.core.registry import check_free, package_modules

if TYPE_CHECKING:
    import pandas as pd

# --------------------------------------------------------------------------- aggregates


# Mean, Ratio and Derived live in glyphbench.core.aggregates, where the bootstrap kernel
# (glyphbench.core.bootstrap) reads them too; they stay importable from here.

#: What a metric's function receives: a text :class:`Pair` or an :class:`ImagePair`.
Inputs = Literal["text", "image"]

#: Column types a per-image metric may declare (numpy dtype names).
DTYPES = ("float64", "int64", "bool")

# --------------------------------------------------------------------------- reader units


@dataclass(frozen=True)
class ReaderUnits:
    """How a glyphbench reader's output becomes what a benchmark's own reader hands its scorer.

    Every glyphbench reader returns lines in reading order (one read cell, lines
    joined by ``"\\n"``); each peer benchmark's scorer assumes its own reader's units
    (MARIO-Eval: one word per detection; LeX-Bench: PaddleOCR boxes; ...).
    ``convert`` maps the read cell to those units; ``rule`` says how in one line and
    ``source`` names the benchmark file and line that makes it so. A family without
    a record takes the read cell as it is. ``score_pairs`` (and through it
    ``glyphbench score --compat`` and the suites) applies it before any metric runs.
    """

    family: str
    convert: Callable[[str], str]
    rule: str
    source: str


# --------------------------------------------------------------------------- records


@dataclass(frozen=True)
class Metric:
    """One metric; ``function`` is None for set-level ones (a :class:`Ratio` or :class:`Derived`).

    ``function`` takes a :class:`~glyphbench.scoring.pair.Pair` (the expected and read
    texts, raw and normalised, with shared intermediate results) and returns a
    number; with ``inputs="image"`` it takes a :class:`~glyphbench.scoring.pair.ImagePair`.
    ``dtype`` is the type of the result column. ``summary`` is the metric's place in
    summary tables (1 first; ``True`` counts as 1, ties keep registration order;
    0 or ``False``: not shown by default). ``compat`` is another name selecting the
    metric's family in ``score_pairs(compat=...)`` besides the family's own name.
    ``helper`` marks a per-image count a family keeps in a run's results only for its
    pooled aggregates and the bootstrap (``longtext_matched``): the benchmark's own code
    writes no such per-pair column, so ``glyphbench score --compat`` leaves it out
    (:meth:`MetricTable.contract`). ``short`` is the header of dense tables (the VAE
    summary's ``WR``); empty: the label (:attr:`short_label`). ``digits`` is the number of
    decimals a page shows of the metric's aggregate (edit counts 2, percentages and dB 1).
    ``study`` is the metric's place among the scores a human study copies from a run into
    its manifest (1 first; 0: not copied); ``human`` its place among those the study
    compares with people's judgement (alignment, model ranking; 0: not compared), which
    needs a ``study`` place (:meth:`MetricTable.human_names`).
    """

    name: str
    function: Callable[[Any], Any] | None
    label: str
    higher_is_better: bool
    doc: str
    family: str = "glyphbench"
    aggregate: Aggregate = field(default_factory=Mean)
    unit: str = ""
    reference: str = ""
    dtype: str = "float64"
    #: Position in summary tables (0: not shown by default).
    summary: int = 0
    inputs: Inputs = "text"
    compat: str = ""
    helper: bool = False
    short: str = ""
    digits: int = 3
    study: int = 0
    human: int = 0

    def __post_init__(self) -> None:
        problems = [
            f"empty {what}"
            for what, value in (("name", self.name), ("label", self.label), ("doc", self.doc))
            if not value.strip()
        ]
        if self.dtype not in DTYPES:
            problems.append(f"dtype {self.dtype!r} is not one of {', '.join(DTYPES)}")
        if self.function is None and isinstance(self.aggregate, Mean):
            problems.append("a metric without a function needs a Ratio or Derived aggregate")
        if self.inputs not in ("text", "image"):
            problems.append(f"inputs {self.inputs!r} is not 'text' or 'image'")
        if self.digits < 0:
            problems.append(f"digits {self.digits} is negative")
        if self.human and not self.study:
            problems.append("a metric compared with people (human) needs a study place")
        if problems:
            raise ValueError(f"metric {self.name!r}: {'; '.join(problems)}")

    #: Per-image column written to results (False for set-level metrics).
    @property
    def per_image(self) -> bool:
        return self.function is not None

    @property
    def short_label(self) -> str:
        return self.short or self.label

    @property
    def direction(self) -> str:
        return "higher is better" if self.higher_is_better else "lower is better"


class MetricTable:
    """Metric records by (family, name), in registration order; families load on first use.

    Language variants of one benchmark (``oneig`` and ``oneig-zh``) register the same
    column names in two families: the records must then agree on label, direction and
    dtype, and a run or a ``--compat`` choice selects one family, so a column never
    means two things in one table.
    """

    def __init__(self, package: str | None = None) -> None:
        self._metrics: dict[tuple[str, str], Metric] = {}
        self._units: dict[str, ReaderUnits] = {}
        self._places: dict[tuple[str, str], str] = {}
        self._package = package
        self._loaded = package is None
        #: name -> the first family's record, rebuilt after a change (reports look up per cell)
        self._by_name: dict[str, Metric] | None = None

    def add(self, metric: Metric, *, replace: bool = False, place: str | None = None) -> Metric:
        """Register ``metric``; a (family, name) another module registered is an error.

        ``place`` is the registering module (default: the caller's); the same module
        registering again is no conflict, and ``replace=True`` overrides on purpose
        (:class:`~glyphbench.core.registry.DuplicateName` otherwise, naming both modules).
        """
        key = (metric.family, metric.name)
        place = place or sys._getframe(1).f_globals.get("__name__", "?")
        check_free(
            f"metric {metric.name!r} of family {metric.family!r}",
            self._places.get(key) if key in self._metrics else None,
            place,
            replace=replace,
        )
        for other in self._metrics.values():
            if other.name == metric.name and other.family != metric.family:
                _check_same_meaning(other, metric)
        self._metrics[key] = metric
        self._places[key] = place
        self._by_name = None
        return metric

    def add_units(self, units: ReaderUnits) -> ReaderUnits:
        """Register the reader-units conversion of ``units.family`` (again: replaces it)."""
        self._units[units.family] = units
        return units

    def units(self, family: str) -> ReaderUnits | None:
        """The reader-units conversion of ``family``; None: the read cell is used as it is.

        >>> METRICS.units("mario").convert("HELLO WORLD\\n\\nOPEN ")
        'HELLO\\nWORLD\\nOPEN'
        >>> METRICS.units("glyphbench") is None
        True
        """
        self._load()
        return self._units.get(family)

    def remove(self, name: str, family: str | None = None) -> None:
        for key in [k for k in self._metrics if k[1] == name and family in (None, k[0])]:
            del self._metrics[key]
            self._places.pop(key, None)
        self._by_name = None

    def _load(self) -> None:
        if self._loaded or self._package is None:
            return
        # A module may read the table while it is being imported (glyphbench.scoring.frame
        # derives SCORE_COLUMNS at import time): such a nested call imports every module
        # not imported yet, so it sees every family. Modules already being imported are
        # returned as they are by import_module, so nothing is imported twice.
        for module in package_modules(self._package):
            importlib.import_module(module)
        self._loaded = True

    def all(self) -> list[Metric]:
        self._load()
        return list(self._metrics.values())

    def get(self, name: str, family: str | None = None) -> Metric:
        """The record ``name`` (of ``family``, else the first family registering it)."""
        self._load()
        if family is None and name in self._first_by_name():
            return self._first_by_name()[name]
        for (owner, key), metric in self._metrics.items():
            if key == name and family in (None, owner):
                return metric
        known = ", ".join(dict.fromkeys(key for _, key in self._metrics))
        where = f" in family {family!r}" if family else ""
        raise InputError(None, f"unknown metric {name!r}{where}; known: {known}", key="metrics")

    def __contains__(self, name: object) -> bool:
        self._load()
        return name in self._first_by_name()

    def _first_by_name(self) -> dict[str, Metric]:
        if self._by_name is None:
            by_name: dict[str, Metric] = {}
            for (_, key), metric in self._metrics.items():
                by_name.setdefault(key, metric)
            self._by_name = by_name
        return self._by_name

    def families(self) -> list[str]:
        return list(dict.fromkeys(metric.family for metric in self.all()))

    def of(self, families: Iterable[str]) -> list[Metric]:
        """The records of ``families``, in registration order; unknown families are errors."""
        wanted = [families] if isinstance(families, str) else list(families)
        known = self.families()
        unknown = [f for f in wanted if f not in known]
        if unknown:
            raise InputError(
                None, f"unknown metric family {unknown[0]!r}; known: {', '.join(known)}"
            )
        return [metric for metric in self.all() if metric.family in wanted]

    def columns(self, families: Iterable[str], inputs: Inputs | None = None) -> list[str]:
        """Per-image result columns of ``families`` (only those taking ``inputs`` if given)."""
        return [
            metric.name
            for metric in self.of(families)
            if metric.per_image and inputs in (None, metric.inputs)
        ]

    def higher_is_better(self) -> Mapping[str, bool]:
        return {metric.name: metric.higher_is_better for metric in self.all()}

    def labels(self) -> Mapping[str, str]:
        return {metric.name: metric.label for metric in self.all()}

    def summary_names(self, families: Sequence[str] = ("glyphbench",)) -> list[str]:
        """Metrics of ``families`` shown in summary tables, in their ``summary`` order."""
        shown = [metric for metric in self.of(families) if metric.summary]
        return [metric.name for metric in sorted(shown, key=lambda metric: int(metric.summary))]

    def human_names(self, *, compared: bool = False) -> list[str]:
        """Scores a human study copies into its manifest, in their ``study`` order; with
        ``compared``: those it compares with people's judgement, in their ``human`` order.

        A name several families register (language variants) counts once.

        >>> METRICS.human_names(compared=True)
        ['ned', 'algorithm1']
        """
        place = "human" if compared else "study"
        placed = {m.name: int(getattr(m, place)) for m in self.all() if getattr(m, place)}
        return sorted(placed, key=placed.__getitem__)

    def contract(self, family: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """What ``glyphbench score --compat FAMILY`` writes: (per-pair columns, summary keys).

        The per-pair columns are the family's per-image text columns that are not
        helpers; the summary keys its summary metrics in order (text metrics only), or
        every per-pair column when it marks none (TextInVision's ``score.py`` reports
        the mean of each of its four scores).

        >>> METRICS.contract("longtext")
        (('longtext_recall',), ('longtext_text_score',))
        >>> METRICS.contract("vae")
        (('wr', 'pa'), ('wr', 'pa'))
        """
        metrics = self.of([family])
        columns = tuple(
            m.name for m in metrics if m.per_image and m.inputs == "text" and not m.helper
        )
        summary = tuple(
            name for name in self.summary_names([family]) if self.get(name, family).inputs == "text"
        )
        return columns, summary or columns

    def peer_families(self) -> list[str]:
        """Families reproducing another benchmark's scorer, in registration order.

        Each has a reader-units conversion (its benchmark's reader hands the scorer
        other units than glyphbench's lines) or a ``compat`` alias (TextInVision's
        ``score.py``, ``compat="reference"``, takes the read cell as it is);
        glyphbench's own families (``glyphbench``, ``vae``) have neither.

        >>> "mario" in METRICS.peer_families(), "vae" in METRICS.peer_families()
        (True, False)
        """
        aliased = {m.family for m in self.all() if m.compat}
        return [f for f in self.families() if f in self._units or f in aliased]

    def compat_names(self) -> dict[str, str]:
        """Every name ``compat=`` accepts -> its family: each family's name and its aliases."""
        names = {family: family for family in self.families()}
        names.update({m.compat: m.family for m in self.all() if m.compat})
        return names

    def compat_family(self, compat: str) -> str:
        """The family ``compat`` selects; unknown names are a ValueError listing the known.

        >>> METRICS.compat_family("reference")
        'textinvision'
        """
        names = self.compat_names()
        if compat not in names:
            raise ValueError(
                f"unknown compat mode {compat!r}; use None or one of: {', '.join(names)}"
            )
        return names[compat]

    def inputs(self, names: Iterable[str], family: str | None = None) -> list[str]:
        """The per-image columns :meth:`aggregate` reads for the metrics ``names``.

        A mean reads the metric's own column, a :class:`Ratio` its numerator and
        denominator, a :class:`Derived` metric the columns of its inputs: what a reader
        of the results needs to load to aggregate them.

        >>> METRICS.inputs(["ned", "exact_match"])
        ['ned', 'exact_match']
        >>> METRICS.inputs(["longtext_text_score"], "longtext")
        ['longtext_matched', 'longtext_total']
        """
        columns: list[str] = []

        def visit(name: str) -> None:
            aggregate = self.get(name, family).aggregate
            if isinstance(aggregate, Ratio):
                columns.extend((aggregate.numerator, aggregate.denominator))
            elif isinstance(aggregate, Derived):
                for each in aggregate.inputs:
                    visit(each)
            else:
                columns.append(name)

        for name in names:
            visit(name)
        return list(dict.fromkeys(columns))

    def aggregate(
        self, scores: pd.DataFrame, names: Iterable[str], family: str | None = None
    ) -> dict[str, float]:
        """Point estimates of the metrics ``names`` over the rows of ``scores``.

        Means skip NaN; a :class:`Ratio` is sum(numerator) / sum(denominator) (NaN
        when the denominator sums to 0); a :class:`Derived` metric is computed from
        the aggregates of its inputs (which need not be among ``names``).

        >>> import pandas as pd
        >>> METRICS.aggregate(pd.DataFrame({"ned": [1.0, 0.5, None]}), ["ned"])
        {'ned': 0.75}
        """
        import numpy as np

        values: dict[str, float] = {}

        def value_of(name: str) -> float:
            if name not in values:
                aggregate = self.get(name, family).aggregate
                if isinstance(aggregate, Ratio):
                    denominator = float(scores[aggregate.denominator].sum())
                    numerator = float(scores[aggregate.numerator].sum())
                    values[name] = numerator / denominator if denominator else math.nan
                elif isinstance(aggregate, Derived):
                    inputs = [np.asarray(value_of(each)) for each in aggregate.inputs]
                    values[name] = float(aggregate.function(*inputs))
                else:
                    column = scores[name].astype("float64")
                    values[name] = float(column.mean()) if column.notna().any() else math.nan
            return values[name]

        return {name: value_of(name) for name in names}

    def aggregate_column(
        self, scores: pd.DataFrame, name: str, column: str, family: str | None = None
    ) -> float:
        """:meth:`aggregate` of the metric ``name`` over values held in another ``column``.

        For the same metric scored against something else (the VAE report's ``wr_original``:
        WR on the original images; a calibration card's ``ned_vs_human``). The other columns
        stay, so a pooled or derived aggregate finds its inputs. NaN when ``column`` is absent.

        >>> import pandas as pd
        >>> METRICS.aggregate_column(pd.DataFrame({"ned_vs_human": [1.0, 0.5]}), "ned",
        ...                          "ned_vs_human")
        0.75
        """
        if column not in scores.columns:
            return math.nan
        if column != name:
            scores = scores.drop(columns=[name], errors="ignore").rename(columns={column: name})
        return self.aggregate(scores, [name], family)[name]

    def aggregate_groups(
        self,
        scores: pd.DataFrame,
        by: str | list[str],
        name: str,
        family: str | None = None,
        *,
        sort: bool = False,
    ) -> pd.Series:
        """:meth:`aggregate` of the metric ``name`` per group of ``by`` (in order met, or sorted).

        A :class:`Mean` is pandas' grouped mean (NaN skipped); another aggregate is
        computed group by group.

        >>> import pandas as pd
        >>> rows = pd.DataFrame({"size": [48, 48, 10], "ned": [1.0, 0.5, 0.0]})
        >>> METRICS.aggregate_groups(rows, "size", "ned").to_dict()
        {48: 0.75, 10: 0.0}
        >>> rows["longtext_matched"], rows["longtext_total"] = [1, 2, 0], [4, 4, 3]
        >>> METRICS.aggregate_groups(rows, "size", "longtext_text_score", "longtext", sort=True)
        10    0.000
        48    0.375
        Name: longtext_text_score, dtype: float64
        """
        import pandas as pd

        if isinstance(self.get(name, family).aggregate, Mean):
            return scores.groupby(by, sort=sort)[name].mean()
        groups = scores.groupby(by, sort=sort)
        values = {key: self.aggregate(rows, [name], family)[name] for key, rows in groups}
        return pd.Series(values, name=name, dtype="float64")


def _check_same_meaning(first: Metric, second: Metric) -> None:
    """Two families may share a column name only when it means the same kind of number."""
    for field_name in ("label", "higher_is_better", "dtype", "inputs"):
        if getattr(first, field_name) != getattr(second, field_name):
            raise ValueError(
                f"metric {second.name!r} of family {second.family!r} differs from family "
                f"{first.family!r} in {field_name}; a shared column name must mean the same"
            )


#: The table every part of glyphbench reads.
METRICS = MetricTable("glyphbench.scoring")


def on_raw(function: Callable[[str, str], Any]) -> Callable[[Any], Any]:
    """A metric function over a pair's untouched expected and read cells.

    Peer benchmarks' scorers apply their own text rules, so they take the raw cells.

    >>> from glyphbench.scoring.pair import Pair
    >>> on_raw(lambda expected, read: len(expected) - len(read))(Pair("abc", "a"))
    2
    """

    def metric(pair: Any) -> Any:
        return function(pair.expected_raw, pair.read_raw)

    metric.__module__ = function.__module__  # the family module (docs read it)
    return metric


def register_metric(metric: Metric, *, replace: bool = False) -> Metric:
    """Add ``metric`` to :data:`METRICS` (call at import time of a family module).

    A (family, name) another module registered already is a
    :class:`~glyphbench.core.registry.DuplicateName` error unless ``replace=True``.
    """
    return METRICS.add(
        metric, replace=replace, place=sys._getframe(1).f_globals.get("__name__", "?")
    )


def register_units(units: ReaderUnits) -> ReaderUnits:
    """Add a family's reader-units conversion to :data:`METRICS` (at import of its module)."""
    return METRICS.add_units(units)
