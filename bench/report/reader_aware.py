"""The report's reader-aware intervals: each score and comparison with the reader's error.

A reader's calibration card (``glyphbench readers calibrate``) measures how far its
readings' scores fall from a person's on real images; :mod:`glyphbench.calibration.
reader_error` turns that into bounds on the reader's bias. Here the report applies them:
:func:`reader_bounds` finds which models the card's reader read, :func:`reader_scores`
gives each model's score a second interval (the same prompt resamples as the summary's,
widened), and the comparisons and control verdicts take the bounds along
(:func:`glyphbench.report.compare.compare_models`, :func:`glyphbench.report.verdict.verdicts`).
Pure: tables in, tables out.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from glyphbench.calibration.reader_error import BEYOND, WITHIN, ReaderBounds, ReaderError
from glyphbench.core.bootstrap import (
    MIN_UNITS,
    Estimands,
    Grouping,
    grouped_bootstrap,
    seeded_rng,
)
from glyphbench.core.errors import InputError
from glyphbench.core.schema import failed_mask
from glyphbench.report.compare import float_column
from glyphbench.report.metric_info import metric_aggregate
from glyphbench.report.tables import fmt_ci, fmt_number, metric_header

#: Said where no card measures the reader that read the rows.
NOT_MEASURED_NOTE = "reader error not measured"

#: Columns of :attr:`ReaderAware.scores`.
SCORE_COLUMNS = ["model", "metric", "value", "lo", "hi", "reader_lo", "reader_hi"]


@dataclass(frozen=True)
class ReaderAware:
    """What the report says about its reader's error: the card used (or why none) and the
    reader-aware interval of every model's score."""

    source: str  # the card's description, or why no interval is widened
    measured: bool = False
    caveats: list[str] = field(default_factory=list)
    scores: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=SCORE_COLUMNS))


def _readers(frame: pd.DataFrame) -> pd.DataFrame:
    """Each model's reader (``ocr_engine``) and reader version (``ocr_version``), its commonest."""
    columns = [c for c in ("ocr_engine", "ocr_version") if c in frame.columns]
    if "ocr_engine" not in columns:
        return pd.DataFrame(columns=["model", "ocr_engine", "ocr_version"])
    read = frame.loc[frame["ocr_engine"].notna(), ["model", *columns]].astype(str)
    if "ocr_version" not in read.columns:
        read["ocr_version"] = ""
    common = read.groupby(["model", "ocr_engine", "ocr_version"]).size().reset_index(name="rows")
    common = common.sort_values(["model", "rows"], ascending=[True, False], kind="stable")
    return common.drop_duplicates("model")[["model", "ocr_engine", "ocr_version"]]


def reader_bounds(
    frame: pd.DataFrame, card: ReaderError | None, *, n_boot: int, seed: int
) -> tuple[ReaderBounds | None, ReaderAware]:
    """The card's bounds for the models its reader read, and what the report says of it.

    A model counts as read by the card's reader when its rows' ``ocr_engine`` is the
    card's reader; a reader version other than the card's is said as a caveat (the
    card then describes a reader configured otherwise).
    """
    readers = _readers(frame)
    used = sorted(set(readers["ocr_engine"]))
    mine = readers[readers["ocr_engine"] == (card.reader if card is not None else None)]
    if card is None or (card.shipped and mine.empty):
        names = ", ".join(used) or "the reader"
        return None, ReaderAware(f"{NOT_MEASURED_NOTE}: no calibration card for {names}")
    if card.shipped:  # glyphbench's own card: only for the very reader it measured
        mine = mine[mine["ocr_version"] == card.version]
    if mine.empty and card.shipped:
        note = (
            f"{NOT_MEASURED_NOTE}: glyphbench's card is for {card.reader} version "
            f"'{card.version}'; make one for this reader with `glyphbench readers calibrate`"
        )
        return None, ReaderAware(note)
    if mine.empty:  # a card given for these runs that measures none of them: a mistake
        raise InputError(
            "--reader-card",
            f"the card is for {card.reader}, and no row of these runs was read by it (they "
            f"were read by {', '.join(used) or 'no reader'}): give the card of that reader "
            "(glyphbench readers calibrate --reader NAME), or none",
        )
    caveats = [
        f"the card was made with reader version '{card.version}'; {model} was read with '{version}'"
        for model, version in zip(mine["model"], mine["ocr_version"], strict=True)
        if version != card.version
    ]
    others = sorted(set(readers["model"]) - set(mine["model"]))
    if others:
        caveats.append(f"{NOT_MEASURED_NOTE} for {', '.join(others)} (another reader)")
    bounds = ReaderBounds.draw(card, mine["model"], n_boot=n_boot, seed=seed)
    return bounds, ReaderAware(card.describe(), True, caveats)


def score_resamples(
    frame: pd.DataFrame, metric: str, *, n_boot: int, seed: int
) -> dict[str, np.ndarray]:
    """Each model's resampled aggregate of ``metric``: the summaries' very draw.

    :func:`glyphbench.report.stats.summarize_many` draws the table's prompts once for every
    model, seeded by ``(seed, "prompts")``, failed rows taking part with unknown values;
    drawing again from that seed over the same prompts gives the same resamples, so a
    reader-aware interval widens exactly the interval the summary shows.
    """
    values = float_column(frame[metric])
    values = np.where(failed_mask(frame), np.nan, values)[:, None]
    codes, names = pd.factorize(frame["model"].astype(str), sort=True)
    clusters = None
    if "prompt_id" in frame.columns:
        clusters = pd.factorize(frame["prompt_id"].astype(str), sort=True)[0]
    boot = grouped_bootstrap(
        values,
        [Grouping(codes, len(names))],
        estimands=Estimands([metric], metric_aggregate),
        n_boot=n_boot,
        rng=seeded_rng(seed, ("prompts",)),
        clusters=clusters,
    )[0][:, 0, :]
    return {str(name): boot[:, i] for i, name in enumerate(names)}


def reader_scores(
    frame: pd.DataFrame,
    summary: pd.DataFrame,
    models: Sequence[str],
    bounds: ReaderBounds | None,
    *,
    n_boot: int,
    seed: int,
    confidence: float,
) -> pd.DataFrame:
    """Per model: the card's metric with the summary's interval and the reader-aware one.

    Models with fewer than :data:`~glyphbench.core.bootstrap.MIN_UNITS` prompts get no
    interval (as in the summary); models the card does not cover get NaN.
    """
    if bounds is None or bounds.card.metric not in summary.columns:
        return pd.DataFrame(columns=SCORE_COLUMNS)
    metric = bounds.card.metric
    boots = score_resamples(frame, metric, n_boot=n_boot, seed=seed)
    shown = summary.set_index("model")
    rows = []
    for model in models:
        line = shown.loc[model]
        lo, hi = math.nan, math.nan
        if int(line["n_prompts"]) >= MIN_UNITS and model in boots:
            lo, hi = bounds.score(model, boots[model], confidence)
        rows.append(
            [model, metric, line[metric], line[f"{metric}_lo"], line[f"{metric}_hi"], lo, hi]
        )
    return pd.DataFrame(rows, columns=SCORE_COLUMNS)


# --------------------------------------------------------------------------- display


def _interval(lo: float, hi: float, metric: str) -> str:

    if math.isnan(lo) or math.isnan(hi):
        return "–"
    return f"[{fmt_number(lo, metric)}, {fmt_number(hi, metric)}]"


def score_display(scores: pd.DataFrame) -> pd.DataFrame:
    """Model, score with the summary's interval, and the reader-aware interval."""

    metric = str(scores["metric"].iloc[0]) if len(scores) else "ned"
    return pd.DataFrame(
        {
            "Model": scores["model"],
            f"{metric_header(metric)} [95% CI]": [
                fmt_ci(v, lo, hi, metric)
                for v, lo, hi in scores[["value", "lo", "hi"]].to_numpy(dtype=float)
            ],
            "With the reader's error": [
                _interval(lo, hi, metric)
                for lo, hi in scores[["reader_lo", "reader_hi"]].to_numpy(dtype=float)
            ],
        }
    )


def comparison_display(comparisons: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Each pair on the card's metric: difference, Holm interval, reader-aware one, verdict."""

    rows = comparisons[comparisons["metric"] == metric]
    return pd.DataFrame(
        {
            "Model A": rows["model_a"],
            "Model B": rows["model_b"],
            "A − B": [fmt_number(d, metric) for d in rows["diff"]],
            "Holm CI": [
                _interval(lo, hi, metric)
                for lo, hi in rows[["holm_lo", "holm_hi"]].to_numpy(dtype=float)
            ],
            "With the reader's error": [
                _interval(lo, hi, metric)
                for lo, hi in rows[["reader_lo", "reader_hi"]].to_numpy(dtype=float)
            ],
            "Verdict": rows["reader_verdict"],
        }
    )


def headline(aware: ReaderAware, comparisons: pd.DataFrame) -> str:
    """The answer's sentence on the reader's error.

    >>> headline(ReaderAware("reader error not measured: no calibration card for x"),
    ...          pd.DataFrame())
    'Reader error not measured: no calibration card for x.'
    """
    if not aware.measured or "reader_verdict" not in comparisons.columns:
        return aware.source[:1].upper() + aware.source[1:] + "."

    said = comparisons["reader_verdict"]
    beyond, within = int((said == BEYOND).sum()), int((said == WITHIN).sum())
    if not beyond + within:
        return f"With the reader's error counted ({aware.source}): no difference to test."
    return (
        f"With the reader's error counted ({aware.source}): {beyond} of the "
        f"{beyond + within} significant differences are beyond it, {within} within it."
    )


def report_section(aware: ReaderAware, comparisons: pd.DataFrame) -> dict[str, object]:
    """``report.json``'s ``reader_error``: the card, its caveats, every widened interval."""
    kept = [
        c
        for c in ("model_a", "model_b", "metric", "diff", "holm_lo", "holm_hi")
        if c in comparisons.columns
    ]
    pairs = (
        comparisons.loc[
            comparisons["reader_verdict"] != "", [*kept, "reader_lo", "reader_hi", "reader_verdict"]
        ]
        if "reader_verdict" in comparisons.columns
        else pd.DataFrame()
    )
    return {
        "source": aware.source,
        "measured": aware.measured,
        "caveats": aware.caveats,
        "headline": headline(aware, comparisons),
        "scores": aware.scores.to_dict("records"),
        "comparisons": pairs.to_dict("records"),
    }
