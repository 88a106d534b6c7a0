"""The answer of a run in a few numbers: for the terminal and for scripts (``--json``).

``glyphbench run`` and ``glyphbench report`` end by printing it (:func:`print_answer` in
:mod:`glyphbench.report.console`), and ``--json`` prints it as JSON; the report folder
keeps it as ``answer.json``. It is the report's first screen: the headline (who is best,
and how sure), then per model its images and failed rows, each summary metric with its
interval, its rank and its place against the run's controls. Every number comes from
:func:`glyphbench.report.analyse.rank_and_place`, so the terminal, ``answer.json`` and the
page agree for one seed.

The JSON document (``"schema": "glyphbench.answer/1"``; docs/report.md, "The answer in
the terminal") holds::

    schema, primary_metric, metrics, labels, higher_is_better, confidence, n_boot, seed,
    interval, headline (sentences), reader_error (report.json's: source, measured, caveats,
    headline, scores, comparisons), n_unread, failed_models (every row failed), models:
    [{model, control, images, failed, refused, read, n_prompts, rank, tied_with,
      metrics: {name: {value, lo, hi}}, verdict, level, against_controls}]

Numbers that are not known (no interval on fewer than ``MIN_UNITS`` prompts, a model
whose every row failed) are ``null``. Pure: DataFrames in, a dict out.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any

import pandas as pd

from glyphbench.calibration.reader_error import shipped_reader_error
from glyphbench.core.io import json_safe
from glyphbench.core.schema import unread_mask
from glyphbench.report import console
from glyphbench.report.analyse import (
    PEER_METRICS,
    Analysis,
    Ranked,
    Settings,
    rank_and_place,
)
from glyphbench.report.metric_info import metric_info
from glyphbench.report.reader_aware import report_section
from glyphbench.report.stats import summarize, summary_metrics
from glyphbench.report.verdict import headline
from glyphbench.scoring.table import METRICS

#: The document's schema name; a new number when a key changes meaning or goes away.
SCHEMA = "glyphbench.answer/1"

#: How every interval of the document is made (docs/report.md).
INTERVAL = "percentile bootstrap over prompts (all images of a prompt resampled together)"


def answer_columns(families: Sequence[str] = ()) -> list[str]:
    """The results columns :func:`answer_of_rows` reads besides the summary's: the prompt
    (the resampling unit), the reader and its version (a reader card applies to rows its
    reader read) and the report's summary metrics of glyphbench and ``families``.

    >>> answer_columns()[:4]
    ['prompt_id', 'ocr_engine', 'ocr_version', 'algorithm1']
    """
    return ["prompt_id", *READER_COLUMNS, *METRICS.summary_names(["glyphbench", *families])]


#: The columns that say which reader read a row (:func:`answer_columns`).
READER_COLUMNS = ("ocr_engine", "ocr_version")


def answer_settings(frame: pd.DataFrame, families: Sequence[str] = ()) -> Settings | None:
    """The report's default settings for ``frame`` (its summary metrics present), or None
    when no row is read yet (``run --read-later``: nothing to answer)."""
    if not len(frame) or bool(unread_mask(frame).all()):
        return None
    return Settings(
        metrics=summary_metrics(list(frame.columns), families),
        reader_card=shipped_reader_error(),  # as the report: the shipped card, its reader only
    )


def answer_of_rows(frame: pd.DataFrame, settings: Settings) -> dict[str, Any]:
    """The answer for a results table (``glyphbench run``): the report's numbers, computed
    from the read rows with the report's settings.

    Needs ``model``, ``prompt_id``, ``error`` and the metrics' columns (``is_control``,
    ``image_path`` and ``ocr_text`` when present: unread rows are left out, as in the report).
    """

    unread = unread_mask(frame)
    read = frame.loc[~unread].reset_index(drop=True)
    read.attrs = dict(frame.attrs)
    metrics = [m for m in settings.metrics if m in read.columns]
    overall = summarize(read, metrics=metrics, **settings.bootstrap())
    settings = replace(settings, metrics=tuple(metrics))
    return answer_document(frame, rank_and_place(read, overall, settings), settings)


def answer_of_analysis(frame: pd.DataFrame, analysis: Analysis) -> dict[str, Any]:
    """The answer of a report (the page's first screen as a dict; ``answer.json``)."""
    ranked = Ranked(
        models=analysis.models,
        controls=analysis.controls,
        summary=analysis.summary,
        comparisons=analysis.comparisons,
        ranking=analysis.ranking,
        verdicts=analysis.verdicts,
        reader_aware=analysis.reader_aware,
    )
    settings = analysis.settings
    shown = tuple(m for m in settings.metrics if m not in PEER_METRICS)
    clashes = [f"runs not comparable, protocols differ: {w}" for w in analysis.protocol_warnings]
    warnings = [*analysis.run_warnings, *clashes]
    return answer_document(frame, ranked, replace(settings, metrics=shown), warnings=warnings)


def answer_document(
    frame: pd.DataFrame, ranked: Ranked, settings: Settings, *, warnings: Sequence[str] = ()
) -> dict[str, Any]:
    """The JSON-ready answer (see the module docstring) of ``ranked`` over ``frame``'s rows;
    ``warnings``: what the page says before its answer (unfinished runs, runs whose protocols
    differ), said first in the terminal too."""

    primary = settings.primary_metric
    counts = console.summarize(frame, metrics=()).set_index("model")
    unread = pd.Series(unread_mask(frame), index=frame.index)
    read_counts = (~unread).groupby(frame["model"].astype(str)).sum()
    summary = ranked.summary.set_index("model")
    ranks = ranked.ranking.set_index("model") if len(ranked.ranking) else pd.DataFrame()
    placed = ranked.verdicts.set_index("model") if len(ranked.verdicts) else pd.DataFrame()
    models = []
    for name in [*ranked.models, *ranked.controls, *_failed_everywhere(frame, ranked)]:
        line = counts.loc[name] if name in counts.index else None
        models.append(
            {
                "model": name,
                "control": name in ranked.controls,
                "images": _int(line["images"]) if line is not None else 0,
                "failed": _int(line["errors"]) if line is not None else 0,
                "refused": _int(line["refused"]) if line is not None else 0,
                "read": int(read_counts.get(name, 0)),
                "n_prompts": _int(summary.loc[name, "n_prompts"]) if name in summary.index else 0,
                **_rank(ranks, name),
                "metrics": {
                    metric: _interval(summary, name, metric) for metric in settings.metrics
                },
                **_placed(placed, name),
            }
        )
    failed = [m["model"] for m in models if m["images"] and m["failed"] == m["images"]]
    lost = [m for m in failed if m not in ranked.controls]
    return {
        "schema": SCHEMA,
        "primary_metric": primary,
        "metrics": list(settings.metrics),
        "labels": {m: metric_info(m).label for m in settings.metrics},
        "higher_is_better": {m: metric_info(m).higher_is_better for m in settings.metrics},
        "confidence": settings.confidence,
        "n_boot": settings.n_boot,
        "seed": settings.seed,
        "interval": INTERVAL,
        "warnings": list(warnings),
        "headline": headline(
            ranked.ranking, ranked.verdicts, primary, controls=ranked.controls, failed=lost
        ),
        # report.json's section, number for number (NaN as null)
        "reader_error": json_safe(report_section(ranked.reader_aware, ranked.comparisons)),
        "n_unread": int(unread.sum()),
        "failed_models": failed,
        "models": models,
    }


def _failed_everywhere(frame: pd.DataFrame, ranked: Ranked) -> list[str]:
    """Models of ``frame`` missing from the summary: every row of theirs failed or is unread."""
    known = {*ranked.models, *ranked.controls}
    return [m for m in dict.fromkeys(frame["model"].astype(str)) if m not in known]


def _int(value: Any) -> int:
    return 0 if value is None or value != value else int(value)


def _number(value: Any) -> float | None:
    """A finite float, or None (JSON has no NaN)."""
    if value is None:
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _interval(summary: pd.DataFrame, model: str, metric: str) -> dict[str, float | None]:
    """``{value, lo, hi}`` of ``metric`` for ``model`` (None where unknown)."""
    if model not in summary.index or metric not in summary.columns:
        return {"value": None, "lo": None, "hi": None}
    row = summary.loc[model]
    return {
        "value": _number(row[metric]),
        "lo": _number(row.get(f"{metric}_lo")),
        "hi": _number(row.get(f"{metric}_hi")),
    }


def _rank(ranks: pd.DataFrame, model: str) -> dict[str, Any]:
    """``rank`` (None for a control, a model without a value, or a model alone: nothing
    to rank it against) and who shares it."""
    if model not in ranks.index or len(ranks) < 2:
        return {"rank": None, "tied_with": []}
    row = ranks.loc[model]
    tied = str(row.get("tied_with") or "")
    return {
        "rank": _int(row["rank"]),
        "tied_with": [t.strip() for t in tied.split(",") if t.strip()],
    }


def _placed(placed: pd.DataFrame, model: str) -> dict[str, Any]:
    """The model's verdict against the controls (None for a control, or without controls)."""
    if model not in placed.index:
        return {"verdict": None, "level": None, "against_controls": None}
    row = placed.loc[model]
    return {
        "verdict": str(row["verdict"]),
        "level": str(row["level"]),
        "against_controls": str(row["controls"]) or None,
    }


def failed_models(document: Mapping[str, Any]) -> list[str]:
    """The models of an answer every row of which failed."""
    return list(document.get("failed_models") or [])
