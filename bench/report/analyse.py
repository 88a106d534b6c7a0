"""Analysis: every table of the report, as a pure function of the results table.

:func:`analyse` takes the loaded results (:func:`glyphbench.report.load.load_runs`),
the resolved slicing (:class:`glyphbench.report.slices.Slicing`) and the bootstrap
settings, and returns an :class:`Analysis`: a bundle of named DataFrames
(summary, ranking, one table per slicing column, paired comparisons, peer
views, control checks, length curves, the gallery's picks). Nothing here writes
a file; :mod:`glyphbench.report.render` turns the bundle into the report folder.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from glyphbench.calibration.reader_error import ReaderBounds, ReaderError
from glyphbench.core.bootstrap import (
    MIN_UNITS,
    Estimands,
    Grouping,
    grouped_bootstrap,
    percentile_interval,
    seeded_rng,
    wilson_interval,
)
from glyphbench.core.errors import InputError
from glyphbench.core.schema import failed_mask, unread_mask
from glyphbench.report import compare, stats
from glyphbench.report import controls as ctl
from glyphbench.report.console import summarize
from glyphbench.report.gallery import select_examples
from glyphbench.report.load import protocol_tags
from glyphbench.report.reader_aware import (
    NOT_MEASURED_NOTE,
    ReaderAware,
    reader_bounds,
    reader_scores,
)
from glyphbench.report.slices import MISSING_LABEL, Slicing
from glyphbench.report.suites import SuiteSection, analyse_suites, protocol_clashes
from glyphbench.report.verdict import verdicts

#: The headline metric: figures, ranking and comparisons use it first.
PRIMARY_METRIC = "ned"
#: Compared in pairs after the primary metric.
SECOND_METRIC = "exact_match"
#: Checked along the control chain.
CONTROL_METRICS = ("ned", "exact_match")
#: Summarised along when present, for the MARIO-style peer view.
PEER_METRICS = ("word_precision", "word_recall")
#: Longest text length drawn as its own point in the length figure; longer ones are pooled.
LENGTH_CAP = 60


@dataclass(frozen=True)
class Settings:
    """Bootstrap settings and the report's choices of metrics."""

    n_boot: int = 1000
    seed: int = 0
    confidence: float = 0.95
    gallery_k: int = 2
    primary_metric: str = PRIMARY_METRIC
    metrics: tuple[str, ...] = stats.SUMMARY_METRICS
    #: Text width the LaTeX tables fit, in TeX points (None: 5.5 in; ``--tex-width``).
    tex_width_pt: float | None = None
    #: The reader's calibration card: widens intervals by its error (:mod:`.reader_aware`).
    reader_card: ReaderError | None = None

    def bootstrap(self) -> dict[str, Any]:
        """Keyword arguments of the statistics functions."""
        return {"n_boot": self.n_boot, "seed": self.seed, "confidence": self.confidence}


@dataclass(frozen=True)
class ControlCheck:
    """Control sanity and OCR ceiling for the overall table (``column`` "") or one slicing."""

    column: str
    sanity: pd.DataFrame
    ceiling: pd.DataFrame

    @property
    def by(self) -> list[str]:
        return [self.column] if self.column else []


@dataclass(frozen=True)
class ControlVerdict:
    """The control checks in a few values (page badges and ``report.json``)."""

    present: bool
    passed: bool | None = None
    overall_passed: bool | None = None
    n_checks: int = 0
    n_failed: int = 0
    chains: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Analysis:
    """Every table of one report (see the module docstring)."""

    settings: Settings
    slicing: Slicing
    runs: dict[str, Any]
    n_rows: int
    n_errors: int
    models: list[str]  # best first by the primary metric
    controls: list[str]  # in chain order
    summary: pd.DataFrame
    ranking: pd.DataFrame
    slices: dict[str, pd.DataFrame]
    comparisons: pd.DataFrame
    peers: dict[str, pd.DataFrame]
    control_checks: list[ControlCheck]
    verdict: ControlVerdict
    length_curves: pd.DataFrame | None
    heat_column: str | None
    scores: dict[str, np.ndarray]  # per-image primary metric of each model
    gallery: pd.DataFrame
    #: One section per benchmark suite in the results (:mod:`glyphbench.report.suites`).
    suites: list[SuiteSection] = field(default_factory=list)
    #: Runs combined although their protocol cards differ (their numbers are not comparable).
    protocol_warnings: list[str] = field(default_factory=list)
    #: Runs that have not made every row yet (run.json: rows < expected_rows): said first.
    run_warnings: list[str] = field(default_factory=list)
    #: Each reader's faithfulness on the typo controls (:func:`controls.reader_faithfulness`).
    faithfulness: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: Refusals and cost per model (hosted APIs); empty when no row was refused or priced.
    outcomes: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: Rows not read yet (``run --read-later``) and failed rows per model (:func:`row_states`):
    #: stated above the summary; unread rows are left out of every table.
    row_states: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: Each model placed against its run's controls (:func:`glyphbench.report.verdict.verdicts`).
    verdicts: pd.DataFrame = field(default_factory=pd.DataFrame)
    #: The reader's error: which card, and each score's reader-aware interval.
    reader_aware: ReaderAware = field(default_factory=lambda: ReaderAware(NOT_MEASURED_NOTE))

    @property
    def n_unread(self) -> int:
        """Rows left out because no reader has read their image yet."""
        return int(self.row_states["unread"].sum()) if len(self.row_states) else 0

    @property
    def ordered(self) -> list[str]:
        """Models then controls: the row order of every table."""
        return self.models + self.controls


class Stopwatch:
    """Seconds per stage, measured between calls of :meth:`lap` (plus an optional callback)."""

    def __init__(self, on_lap: Callable[[str], None] | None = None) -> None:
        self.seconds: dict[str, float] = {}
        self._last = time.perf_counter()
        self._on_lap = on_lap

    def lap(self, name: str) -> None:
        now = time.perf_counter()
        self.seconds[name] = round(now - self._last, 3)
        self._last = now
        if self._on_lap is not None:
            self._on_lap(name)


def analyse(
    frame: pd.DataFrame,
    slicing: Slicing,
    settings: Settings,
    stopwatch: Stopwatch | None = None,
) -> Analysis:
    """Every table of the report for ``frame`` (see :class:`Analysis`)."""
    watch = stopwatch or Stopwatch()
    states = row_states(frame)
    frame, slicing = read_rows(frame, slicing)
    peer_metrics = [m for m in PEER_METRICS if m in frame.columns]
    # One shared resample per model serves the overall table and every slicing.
    summaries = stats.summarize_many(
        frame,
        slicing.slicings(),
        metrics=[*settings.metrics, *peer_metrics],
        labels=slicing.labels,
        **settings.bootstrap(),
    )
    ranked = rank_and_place(frame, summaries[0], settings)
    models, controls, overall = ranked.models, ranked.controls, ranked.summary
    ordered = models + controls
    slices = {
        column: in_order(summary[summary["model"].isin(ordered)], ordered, column)
        for column, summary in zip(slicing.columns, summaries[1:], strict=True)
    }
    watch.lap("summaries")
    peers = {
        name: in_order(view, ordered)
        for name, view in stats.peer_views(
            frame, n_boot=settings.n_boot, seed=settings.seed, summary=overall
        ).items()
    }
    watch.lap("comparisons")
    checks = control_checks(frame, overall, slices) if controls else []
    watch.lap("controls")
    analysis = Analysis(
        settings=settings,
        slicing=slicing,
        runs=frame.attrs.get("runs", {}),
        n_rows=len(frame),
        n_errors=int(failed_mask(frame).sum()),
        models=models,
        controls=controls,
        summary=overall,
        ranking=ranked.ranking,
        slices=slices,
        comparisons=ranked.comparisons,
        verdicts=ranked.verdicts,
        reader_aware=ranked.reader_aware,
        peers=peers,
        control_checks=checks,
        verdict=control_verdict(checks, present=bool(controls)),
        length_curves=_length_curves(frame, ordered, settings),
        heat_column=heat_column(slicing, slices),
        scores=per_image_scores(frame, ordered, settings.primary_metric),
        gallery=select_examples(
            frame,
            slicing.first,
            k=settings.gallery_k,
            labels=slicing.labels.get(slicing.first) if slicing.first else None,
        ),
    )
    watch.lap("curves and gallery picks")
    return replace(_with_suites(analysis, frame, settings), row_states=states)


@dataclass(frozen=True)
class Ranked:
    """The report's answer: the overall summary in table order, the ranking, the verdicts."""

    models: list[str]  # best first by the primary metric
    controls: list[str]  # in chain order
    summary: pd.DataFrame
    comparisons: pd.DataFrame
    ranking: pd.DataFrame
    verdicts: pd.DataFrame
    #: Which reader card widened the intervals, and what the report says of it.
    reader_aware: ReaderAware = field(default_factory=lambda: ReaderAware(NOT_MEASURED_NOTE))
    #: The card's drawn reader errors (None: intervals cover prompt sampling only).
    bounds: ReaderBounds | None = None


def rank_and_place(frame: pd.DataFrame, overall: pd.DataFrame, settings: Settings) -> Ranked:
    """Who is best and how sure (paired comparisons, Holm ranks per protocol) and where each
    model stands against its run's controls, from the read rows and their overall summary.

    The report's first screen and the answer ``glyphbench run`` prints (one computation,
    so the terminal and the page show the same numbers for the same seed).
    """
    models, controls = model_order(overall, settings.primary_metric)
    protocols = protocol_groups(frame, models)
    bounds, aware = reader_bounds(
        frame, settings.reader_card, n_boot=settings.n_boot, seed=settings.seed
    )
    comparisons = compare.compare_models(
        frame,
        models,
        (settings.primary_metric, SECOND_METRIC),
        **settings.bootstrap(),
        reader=bounds,
    )
    comparisons = within_protocols(comparisons, protocols)
    overall = in_order(overall, models + controls)
    placed = verdicts(
        frame, models, controls, settings.primary_metric, **settings.bootstrap(), reader=bounds
    )
    scores = reader_scores(frame, overall, models + controls, bounds, **settings.bootstrap())
    return Ranked(
        models=models,
        controls=controls,
        summary=overall,
        comparisons=comparisons,
        ranking=rank_per_protocol(overall, comparisons, protocols, settings.primary_metric),
        verdicts=placed,
        reader_aware=replace(aware, scores=scores),
        bounds=bounds,
    )


def _with_suites(analysis: Analysis, frame: pd.DataFrame, settings: Settings) -> Analysis:
    """The analysis with its suite sections and the runs' protocol clashes."""
    runs = frame.attrs.get("runs", {})
    cards = {run: (info.get("meta") or {}).get("protocol") for run, info in runs.items()}
    return replace(
        analysis,
        suites=analyse_suites(
            frame, n_boot=settings.n_boot, seed=settings.seed, confidence=settings.confidence
        ),
        protocol_warnings=protocol_clashes(cards),
        run_warnings=incomplete_runs(runs),
        faithfulness=ctl.reader_faithfulness(frame) if analysis.controls else pd.DataFrame(),
        outcomes=outcomes(frame, analysis.ordered),
    )


def read_rows(frame: pd.DataFrame, slicing: Slicing) -> tuple[pd.DataFrame, Slicing]:
    """``frame`` and ``slicing``'s labels without the unread rows (every table's ``n``
    counts read rows only).

    A table of which no row is read yet has nothing to report: an
    :class:`~glyphbench.core.errors.InputError` that says how to read it.
    """
    unread = unread_mask(frame)
    if not unread.any():
        return frame, slicing
    if unread.all():
        runs = frame.attrs.get("runs", {})
        where = ", ".join(str(info.get("dir", name)) for name, info in runs.items()) or None
        raise InputError(
            where,
            f"none of the {len(frame)} rows has been read yet (made with --read-later?): "
            "read them first with `glyphbench read RUN`",
        )
    kept = frame.loc[~unread].reset_index(drop=True)
    kept.attrs = dict(frame.attrs)
    labels = {c: label[~unread].reset_index(drop=True) for c, label in slicing.labels.items()}
    return kept, replace(slicing, labels=labels)


def row_states(frame: pd.DataFrame) -> pd.DataFrame:
    """Per model with unread or failed rows: rows, unread, failed and the commonest error.

    Empty when every row is read and none failed.

    >>> rows = pd.DataFrame({"model": ["a", "a", "a", "b"], "image_path": ["x"] * 4,
    ...     "ocr_text": ["hi", None, None, "yo"], "error": ["", "", "OCR: boom", ""]})
    >>> row_states(rows).to_dict("records")
    [{'model': 'a', 'rows': 3, 'unread': 1, 'failed': 1, 'error': 'OCR: boom'}]
    """
    columns = ["model", "rows", "unread", "failed", "error"]
    unread = unread_mask(frame)
    failed = failed_mask(frame)
    if not (unread.any() or failed.any()):
        return pd.DataFrame([], columns=columns)
    lines = []
    models = frame["model"].astype(str).to_numpy()
    for model, index in pd.Series(np.arange(len(frame))).groupby(models, sort=True).indices.items():
        n_unread, n_failed = int(unread[index].sum()), int(failed[index].sum())
        if not (n_unread or n_failed):
            continue
        errors = frame["error"].iloc[index[failed[index]]].astype(str)
        common = errors.value_counts().index[0] if len(errors) else ""
        lines.append([model, len(index), n_unread, n_failed, common])
    return pd.DataFrame(lines, columns=columns)


def incomplete_runs(runs: dict[str, Any]) -> list[str]:
    """One line per run whose run.json has fewer rows than it expects, and one
    per run whose table holds the readings of more than one reader.

    >>> incomplete_runs({"r": {"meta": {"rows": 8, "expected_rows": 12}}})[0][:38]
    'r: incomplete run: 8 of 12 rows made; '
    >>> incomplete_runs({"r": {"meta": {"rows": 12, "expected_rows": 12}}})
    []
    """
    lines = []
    for name, info in runs.items():
        meta = info.get("meta") or {}
        rows, expected = meta.get("rows"), meta.get("expected_rows")
        if isinstance(rows, int) and isinstance(expected, int) and rows < expected:
            lines.append(
                f"{name}: incomplete run: {rows} of {expected} rows made; its numbers will "
                "change when it finishes (run the same command again)"
            )
        readers = (meta.get("protocol") or {}).get("reader_rows") or {}
        if len(readers) > 1:  # a rescore whose reader failed on some rows kept their reading
            each = ", ".join(f"{r} ({n} row{'s' if n != 1 else ''})" for r, n in readers.items())
            lines.append(
                f"{name}: the results table holds readings of {len(readers)} readers: {each} "
                "(rows a rescore could not re-read keep their previous reading)"
            )
    return lines


def run_warnings(meta: dict[str, Any]) -> list[str]:
    """What a reader of one run's results must know first, as the report says it (an
    unfinished run, readings of several readers): :func:`incomplete_runs` of its run.json.
    ``merge`` and ``export`` print these.

    >>> run_warnings({"run_id": "r", "rows": 28, "expected_rows": 120})[0][:43]
    'r: incomplete run: 28 of 120 rows made; its'
    """
    return incomplete_runs({str(meta.get("run_id") or "run"): {"meta": meta}})


def protocol_groups(frame: pd.DataFrame, models: Sequence[str]) -> dict[str, str]:
    """Each model's protocol: the tag of its run's card where the runs' cards differ.

    One protocol (a single run, or runs whose cards agree): every model maps to "".
    Otherwise models are grouped by the protocol fields in which the runs' cards differ
    (:func:`glyphbench.report.load.protocol_tags`, e.g. ``reader rapidocr``).
    """

    runs = frame.attrs.get("runs", {})
    if len(runs) < 2 or "run" not in frame.columns:
        return dict.fromkeys(models, "")
    tags = protocol_tags(runs)
    run_of = frame.drop_duplicates("model").set_index("model")["run"].astype(str)
    return {m: tags.get(run_of.get(m, ""), "") for m in models}


def within_protocols(comparisons: pd.DataFrame, protocols: Mapping[str, str]) -> pd.DataFrame:
    """Only pairs of models made under one protocol: across protocols nothing is comparable."""
    if comparisons.empty or len(set(protocols.values())) < 2:
        return comparisons
    same = [
        protocols.get(a) == protocols.get(b)
        for a, b in zip(comparisons["model_a"], comparisons["model_b"], strict=True)
    ]
    return comparisons[same].reset_index(drop=True)


def rank_per_protocol(
    overall: pd.DataFrame, comparisons: pd.DataFrame, protocols: Mapping[str, str], metric: str
) -> pd.DataFrame:
    """One ranking per protocol (models read by different readers are never
    ranked together); a ``protocol`` column names each when there are several."""
    groups = list(dict.fromkeys(protocols.values())) or [""]  # no model: an empty ranking
    tables = []
    for group in groups:
        members = [m for m, g in protocols.items() if g == group]
        ranked = compare.rank_models(overall[overall["model"].isin(members)], comparisons, metric)
        tables.append(ranked.assign(protocol=group) if len(groups) > 1 else ranked)
    return pd.concat(tables, ignore_index=True)


def outcomes(frame: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    """Images, errors, refusals (rate with a 95% Wilson interval) and cost per model.

    Empty unless some row was refused or has a cost: a study of local models has
    nothing to say here.

    >>> rows = pd.DataFrame({"model": ["api"] * 4, "is_control": False, "cost_usd": 0.04,
    ...     "error": ["Refused: policy", None, None, None]})
    >>> line = outcomes(rows, ["api"]).iloc[0]
    >>> int(line["refused"]), float(line["refusal_rate"]), round(float(line["cost_usd"]), 2)
    (1, 0.25, 0.16)
    >>> round(float(line["refusal_rate_lo"]), 3), round(float(line["refusal_rate_hi"]), 3)
    (0.046, 0.699)
    """

    lines = summarize(frame, metrics=())
    if not (lines["refused"].sum() or lines["cost_usd"].notna().any()):
        return pd.DataFrame()
    lines = lines.set_index("model").reindex([m for m in order if m in set(lines["model"])])
    low, high = wilson_interval(lines["refused"].to_numpy(float), lines["images"].to_numpy(float))
    lines["refusal_rate_lo"], lines["refusal_rate_hi"] = low, high
    return lines.reset_index()


# --------------------------------------------------------------------------- pieces


def model_order(overall: pd.DataFrame, metric: str = PRIMARY_METRIC) -> tuple[list[str], list[str]]:
    """(models best-first by ``metric``, control models in chain order)."""
    names = overall["model"].astype(str)
    is_control = names.map(lambda m: ctl.parse_control(m) is not None)
    models = overall[~is_control.to_numpy()].sort_values(metric, ascending=False, kind="stable")
    chain = [m for chain in ctl.control_chain(names[is_control].tolist()).values() for m in chain]
    others = [m for m in names[is_control] if m not in chain]
    return models["model"].astype(str).tolist(), chain + others


def in_order(
    table: pd.DataFrame, ordered: Sequence[str], column: str | None = None
) -> pd.DataFrame:
    """``table`` sorted by the position of its model in ``ordered`` (then by ``column``)."""
    position = table["model"].map({m: i for i, m in enumerate(ordered)})
    keys = ["_order"] if column is None else ["_order", column]
    return (
        table.assign(_order=position)
        .sort_values(keys, kind="stable")
        .drop(columns="_order")
        .reset_index(drop=True)
    )


def control_checks(
    frame: pd.DataFrame, overall: pd.DataFrame, slices: dict[str, pd.DataFrame]
) -> list[ControlCheck]:
    """Sanity and ceiling per table (overall, then each slicing) that has control rows."""
    model_runs = frame.groupby("model")["run"].first().astype(str).to_dict()
    checks = []
    for column, summary in [("", overall), *slices.items()]:
        by = [column] if column else []
        sanity = ctl.control_sanity(summary, by, CONTROL_METRICS)
        if sanity.empty:
            continue
        ceiling = ctl.ocr_ceiling(summary, by, model_runs=model_runs)
        checks.append(ControlCheck(column, sanity, ceiling))
    return checks


def control_verdict(checks: Sequence[ControlCheck], *, present: bool) -> ControlVerdict:
    """Pass/fail over every checked slice, and for the overall table alone."""
    if not present:
        return ControlVerdict(present=False)
    verdicts: list[bool] = []
    overall_passed: bool | None = None
    chains: dict[str, None] = {}
    for check in checks:
        known = [bool(v) for v in check.sanity["passed"] if v is not None]
        verdicts += known
        if not check.column:
            overall_passed = all(known) if known else None
        chains.update(dict.fromkeys(check.sanity["chain"].astype(str)))
    return ControlVerdict(
        present=True,
        passed=all(verdicts) if verdicts else None,
        overall_passed=overall_passed,
        n_checks=len(verdicts),
        n_failed=sum(not v for v in verdicts),
        chains=list(chains),
    )


def heat_column(slicing: Slicing, slices: dict[str, pd.DataFrame]) -> str | None:
    """The heatmap's column: ``group`` when it has two slices of at least ``MIN_UNITS``
    prompts (a heatmap's cells need intervals' worth of prompts), else the slicing
    column with the most such slices (the first on a tie; ``group`` when none has two).
    """

    def sizable(column: str) -> int:
        table = slices[column]
        counts = table["n_prompts"] if "n_prompts" in table else table["n"]
        return int((counts.groupby(table[column].astype(str).to_numpy()).max() >= MIN_UNITS).sum())

    group = slices.get("group")
    has_group = group is not None and (group["group"].astype(str) != MISSING_LABEL).any()
    if has_group and sizable("group") >= 2:
        return "group"
    best = max(slicing.columns, key=sizable, default=None)
    if best is not None and sizable(best) >= 2:
        return best
    return "group" if has_group else slicing.first


def per_image_scores(frame: pd.DataFrame, models: Sequence[str], metric: str) -> dict[str, Any]:
    """Per-image ``metric`` of each model's successful rows (the distributions figure)."""
    ok = frame.loc[~failed_mask(frame), ["model", metric]]  # not a copy of every column
    return {
        m: pd.to_numeric(ok.loc[ok["model"] == m, metric].astype(object), errors="coerce")
        .astype(float)
        .to_numpy()
        for m in models
    }


def _length_curves(
    frame: pd.DataFrame, models: Sequence[str], settings: Settings
) -> pd.DataFrame | None:
    if "char_length" not in frame.columns and "text" not in frame.columns:
        return None
    return length_curves(
        frame, models, settings.primary_metric, n_boot=settings.n_boot, seed=settings.seed
    )


def length_curves(
    frame: pd.DataFrame, models: Sequence[str], metric: str, *, n_boot: int, seed: int
) -> pd.DataFrame:
    """Mean ``metric`` with its interval per (model, text length), lengths above the cap pooled.

    Intervals resample prompts (all images of a prompt together): one draw of
    the table's prompts, seeded by ``(seed, "length")``, serves every (model,
    length) point, as the summaries' draw does (an earlier version drew for each point
    its own prompts; one shared draw is about 5x cheaper at a million rows).
    """
    failed = failed_mask(frame)
    lengths = (
        pd.to_numeric(frame["char_length"], errors="coerce")
        if "char_length" in frame
        else frame["text"].str.len()
    )
    values = pd.to_numeric(frame[metric].astype(object), errors="coerce").astype(float).to_numpy()
    values = np.where(
        failed, np.nan, values
    )  # failed rows stay in the draw, adding nothing to the means
    # Models as codes numbered in name order: grouped like the names, without a string per row.
    codes, names = pd.factorize(frame["model"].astype(str), sort=True)
    key = pd.DataFrame({"model": codes, "length": lengths.clip(upper=LENGTH_CAP).to_numpy(float)})
    wanted = np.append(np.isin(np.asarray(names, dtype=object), list(models)), False)
    inside = wanted[codes] & np.isfinite(key["length"].to_numpy())  # code -1 (missing): out
    columns = ["model", "length", "n", metric, f"{metric}_lo", f"{metric}_hi"]
    if not inside.any():
        return pd.DataFrame([], columns=columns)
    grouped = key[inside].groupby(["model", "length"], sort=True)
    boot = grouped_bootstrap(
        values[inside][:, None],
        [Grouping(grouped.ngroup().to_numpy(), grouped.ngroups)],
        estimands=Estimands([metric]),
        n_boot=n_boot,
        rng=seeded_rng(seed, ("length",)),
        clusters=(
            pd.factorize(frame["prompt_id"].astype(str)[inside], sort=True)[0]
            if "prompt_id" in frame
            else None
        ),
    )[0][:, 0, :]
    lo, hi = percentile_interval(boot, axis=0)
    rows = []
    kept, indices = values[inside], grouped.indices
    for g, (code, length) in enumerate(sorted(indices)):  # ngroup numbers sorted keys
        v = kept[indices[(code, length)]]
        v = v[np.isfinite(v)]
        if v.size:
            rows.append([names[code], length, v.size, float(v.mean()), float(lo[g]), float(hi[g])])
    return pd.DataFrame(rows, columns=columns)
