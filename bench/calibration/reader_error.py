"""What a reader's measured error against people does to a score: reader-aware intervals.

Every benchmark score is a reader's reading: a model's score ``S`` (the mean over its
images of NED against the intended text, computed from the reader's reading) differs
from the score a person's reading would give, ``T``, by the reader's bias on that
model's images, ``B = S - T`` (the mean of the per-image errors ``e = s_reader -
s_person``). The card of ``glyphbench readers calibrate`` measures ``e`` on real
text-to-image outputs that a person read; this module turns those errors into a second
interval for every score and every difference of scores (docs/metrics.md, "Reader-aware
intervals").

The bound. Split each calibration error into its over-read and under-read parts,
``e = e+ - e-`` (``e+ = max(e, 0)``, ``e- = max(-e, 0)``), with means ``over`` and
``under`` over the calibration images. *Assumption*: on any model's images the reader
over-reads no more on average than ``over``, and under-reads no more than ``under``
(its error is no worse there, in either direction, than where it was calibrated). Then

* a model: ``B`` lies in ``[-under, over]``, so ``T`` lies in ``[S - over, S + under]``;
* two models read by the same reader: ``B_a - B_b`` lies in ``[-(over + under),
  over + under]``: their difference can be shifted by differing biases by up to the
  reader's mean absolute error, however many images each model has.

The bounds are estimated from ``n`` calibration images (resampled with the bootstrap
kernel, by source repository where the card records one), independently of the
benchmark's own resamples; the interval for the true value is Imbens and Manski's for a
quantity known to lie in an interval whose ends are estimated (Imbens & Manski 2004,
"Confidence Intervals for Partially Identified Parameters", Econometrica 72(6):1845-1857),
in percentile form: :func:`bounded_interval`.

What it does not cover: a reader that errs more on a model's images than on the
calibration images (the assumption above; the card's per-family table shows how far the
error varies between sources); people who disagree with each other (one person read the
calibration set); other metrics than the card's (NED).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np

from glyphbench.core.bootstrap import (
    cluster_codes,
    percentile_interval,
    resampled_means,
    seeded_rng,
    tail,
)
from glyphbench.core.errors import InputError

#: The metric whose reader error the card measures (NED against the intended text).
CARD_METRIC = "ned"

#: The range of the card's metric: a person's NED lies in it, so a score's interval is cut
#: to it and a difference's to its width either side of zero (nothing true is cut off).
METRIC_RANGE = (0.0, 1.0)

#: The card section this module reads (``card.json`` -> ``real_images`` -> this key).
SECTION = "reader_error"

#: The default reader's card on the held-out part of the shipped real-image set (its
#: ``reader_error`` section): a report uses it when no card is given and the run was read
#: by exactly that reader (docs/readers.md, "The default reader").
SHIPPED_CARD = Path(__file__).with_name("default_reader_card.json")


@dataclass(frozen=True)
class ReaderError:
    """A reader's signed per-image errors against a person, as one card measured them.

    ``errors`` is reader minus person (glyphbench NED against the intended text), one
    per calibration image with an intended text; ``clusters`` the source repository of
    each (they are resampled together), or None.
    """

    reader: str
    version: str
    errors: np.ndarray
    clusters: np.ndarray | None = None
    part: str = "all"
    manifest: str = ""
    source: str = ""
    metric: str = CARD_METRIC
    #: Shipped with glyphbench (:data:`SHIPPED_CARD`), not given by the user: it then
    #: applies only to rows read by the very reader version it was made with.
    shipped: bool = False

    @property
    def n(self) -> int:
        """Calibration images behind the bounds."""
        return int(self.errors.size)

    @property
    def n_clusters(self) -> int:
        """Source repositories behind the bounds (``n`` without clusters)."""
        return self.n if self.clusters is None else len(set(self.clusters.tolist()))

    @property
    def over(self) -> float:
        """Mean over-read per image (``e+``): how far above the person's score it reads."""
        return float(np.maximum(self.errors, 0.0).mean()) if self.n else math.nan

    @property
    def under(self) -> float:
        """Mean under-read per image (``e-``)."""
        return float(np.maximum(-self.errors, 0.0).mean()) if self.n else math.nan

    def bound_resamples(self, n_boot: int, rng: np.random.Generator) -> np.ndarray:
        """``(n_boot, 2)``: resampled ``over`` and ``under`` (the kernel's draw).

        Images of one source repository move together (``clusters``): a gallery's
        images share a model and a style, so they are not independent evidence.
        """
        parts = np.column_stack([np.maximum(self.errors, 0.0), np.maximum(-self.errors, 0.0)])
        clusters = None if self.clusters is None else cluster_codes(self.clusters, self.n)
        return resampled_means(parts, n_boot=n_boot, rng=rng, clusters=clusters)

    def describe(self) -> str:
        """One line for a report: which card, how many images, which part of which set.

        >>> ReaderError("rapidocr", "v", np.zeros(3), np.array(["a", "a", "b"]),
        ...             "held-out", "tests/data/real_t2i/manifest.csv").describe()
        'rapidocr card: n = 3 images from 2 repositories, held-out part of \
tests/data/real_t2i/manifest.csv'
        """
        where = f", {self.part} part" if self.part else ""
        where += f" of {self.manifest}" if self.manifest else ""
        count = f"n = {self.n} images" + (
            f" from {self.n_clusters} repositories" if self.clusters is not None else ""
        )
        return f"{self.reader} card: {count}{where}"

    def to_json(self) -> dict[str, Any]:
        """The card section :func:`load_reader_error` reads back."""
        return {
            "reader": self.reader,
            "version": self.version,
            "metric": self.metric,
            "part": self.part,
            "manifest": self.manifest,
            "errors": [round(float(e), 6) for e in self.errors],
            "clusters": None if self.clusters is None else [str(c) for c in self.clusters],
        }

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str = "") -> ReaderError:
        clusters = data.get("clusters")
        return cls(
            reader=str(data["reader"]),
            version=str(data.get("version", "")),
            errors=np.asarray(data["errors"], dtype="float64"),
            clusters=None if clusters is None else np.asarray(clusters, dtype=object),
            part=str(data.get("part") or "all"),
            manifest=str(data.get("manifest") or ""),
            source=source,
            metric=str(data.get("metric", CARD_METRIC)),
        )


def load_reader_error(path: str | Path) -> ReaderError:
    """The reader error of a card: its folder, its ``card.json``, or a file of the section.

    An :class:`~glyphbench.core.errors.InputError` names the file when it has no
    real-image part to take the errors from.
    """
    target = Path(path)
    if target.is_dir():
        target = target / "card.json"
    if not target.is_file():
        raise InputError(
            target,
            "no such reader card (make one with `glyphbench readers "
            "calibrate --reader NAME --out DIR`)",
        )
    try:
        data = json.loads(target.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InputError(target, f"not a reader card: {error}") from None
    section = data.get(SECTION) or (data.get("real_images") or {}).get(SECTION)
    if not isinstance(section, dict) or not section.get("errors"):
        raise InputError(
            target,
            "this card has no reader error: make it with the real-image part "
            "(`glyphbench readers calibrate` without --no-real)",
        )
    return ReaderError.from_json(section, source=str(path))


def shipped_reader_error() -> ReaderError | None:
    """The card shipped for the default reader (:data:`SHIPPED_CARD`), if present."""
    if not SHIPPED_CARD.is_file():
        return None
    card = load_reader_error(SHIPPED_CARD)
    return ReaderError(**{**card.__dict__, "source": "shipped", "shipped": True})


# --------------------------------------------------------------------------- intervals


def imbens_manski_level(width: float, spread: float, confidence: float) -> float:
    """The one-sided level of each end of an interval for a point inside estimated bounds.

    Solves ``Phi(c + width / spread) - Phi(-c) = confidence`` for ``c`` (Imbens & Manski
    2004, eq. 6) and returns ``Phi(c)``: ``(1 + confidence) / 2`` when the bounds
    coincide (the usual two-sided interval), falling to ``confidence`` as they move
    apart relative to their sampling spread (then the true value can be near only one end).

    >>> round(imbens_manski_level(0.0, 1.0, 0.95), 4), round(imbens_manski_level(9.0, 1.0, 0.95), 4)
    (0.975, 0.95)
    """
    tail(confidence)
    if not spread > 0:
        return confidence if width > 0 else (1 + confidence) / 2
    normal = NormalDist()
    ratio = max(width, 0.0) / spread
    low, high = normal.inv_cdf(confidence), normal.inv_cdf((1 + confidence) / 2)
    for _ in range(60):  # bisection: the left side grows with c
        middle = (low + high) / 2
        if normal.cdf(middle + ratio) - normal.cdf(-middle) < confidence:
            low = middle
        else:
            high = middle
    return normal.cdf(high)


def bounded_interval(
    lower: np.ndarray, upper: np.ndarray, confidence: float = 0.95
) -> tuple[float, float]:
    """Interval for a value known to lie between two estimated ends, from their resamples.

    ``lower`` and ``upper`` are resamples of the two ends (NaN resamples skipped). The
    interval runs from the lower end's ``1 - level`` percentile to the upper end's
    ``level`` percentile, ``level`` from :func:`imbens_manski_level` with the ends'
    estimated distance apart (mean of the resamples) and the larger of their standard
    deviations. Ends that coincide give the plain percentile interval.

    >>> rng = np.random.default_rng(0)
    >>> draws = rng.normal(0.5, 0.01, 4000)
    >>> lo, hi = bounded_interval(draws, draws)
    >>> (round(lo, 2), round(hi, 2))
    (0.48, 0.52)
    >>> lo, hi = bounded_interval(draws - 0.1, draws + 0.1)
    >>> (round(lo, 3), round(hi, 3))
    (0.384, 0.616)
    """
    low, high = np.asarray(lower, dtype="float64"), np.asarray(upper, dtype="float64")
    known = np.isfinite(low) & np.isfinite(high)
    if known.sum() < 2:
        return (math.nan, math.nan)
    low, high = low[known], high[known]
    width = float(high.mean() - low.mean())
    spread = float(max(low.std(), high.std()))
    level = imbens_manski_level(width, spread, confidence)
    below = percentile_interval(low, 2 * level - 1)[0]  # its 1 - level quantile
    above = percentile_interval(high, 2 * level - 1)[1]  # its level quantile
    return (float(below), float(above))


def widened(
    resamples: np.ndarray,
    bounds: np.ndarray,
    confidence: float = 0.95,
    *,
    difference: bool = False,
    limits: tuple[float, float] | None = METRIC_RANGE,
) -> tuple[float, float]:
    """The reader-aware interval of a score (or of a difference of two scores).

    ``resamples``: the benchmark's own bootstrap resamples of the score (prompts
    drawn); ``bounds``: :meth:`ReaderError.bound_resamples` (as many rows). A score's
    true value lies in ``[S - over, S + under]``; a difference's in ``[D - (over +
    under), D + (over + under)]`` (see the module docstring). The interval is
    :func:`bounded_interval` joined with the plain percentile interval, so it never
    leaves out what the plain one holds (on a side where the reader never erred, the
    bounded interval alone is one-sided there, a little narrower than the plain one), then
    cut to ``limits``, the range of the metric (a difference: its width either side of 0;
    None: no cut).

    >>> boot = np.full(1000, 0.8)
    >>> widened(boot, np.column_stack([np.full(1000, 0.01), np.full(1000, 0.05)]))
    (0.79, 0.85)
    >>> widened(boot - 0.8, np.column_stack([np.full(1000, 0.01), np.full(1000, 0.05)]),
    ...         difference=True)
    (-0.06, 0.06)

    A score at the top of the metric's range keeps its upper end there (a person's NED is
    at most 1), and a difference stays within the range's width either side of zero:

    >>> widened(np.full(1000, 0.99), np.column_stack([np.full(1000, 0.01), np.full(1000, 0.05)]))
    (0.98, 1.0)
    >>> widened(np.full(1000, -0.98), np.column_stack([np.full(1000, 0.03), np.full(1000, 0.05)]),
    ...         difference=True)
    (-1.0, -0.9)
    """
    values = np.asarray(resamples, dtype="float64")
    over, under = bounds[: values.size, 0], bounds[: values.size, 1]
    if difference:
        over = under = over + under
    low, high = bounded_interval(values - over, values + under, confidence)
    plain_low_high = percentile_interval(values, confidence)
    plain_low, plain_high = float(plain_low_high[0]), float(plain_low_high[1])
    # rounded to drop float dust, then never inside the plain interval (rounding may move it up)
    low, high = min(round(low, 12), plain_low), max(round(high, 12), plain_high)
    if limits is None:  # a metric without a known range
        return (low, high)
    floor, ceiling = limits
    if difference:  # a difference of two scores in the range lies within its width of zero
        floor, ceiling = floor - ceiling, ceiling - floor
    return (max(low, floor), min(high, ceiling))


#: How a comparison stands once the reader's error is counted (:func:`verdict`).
BEYOND = "significant, and beyond the reader's error"
WITHIN = "significant, but within the reader's error"
NOT_SIGNIFICANT = "not significant"
NOT_MEASURED = "reader error not measured"


@dataclass(frozen=True)
class ReaderBounds:
    """One draw of a card's bounds, for the models its reader read (a report's widening).

    ``draws`` is :meth:`ReaderError.bound_resamples` (``n_boot`` rows, the report's);
    ``models`` the report's models (controls included) read by the card's reader: any
    other model's interval is not widened (its reader's error is not measured).
    """

    card: ReaderError
    draws: np.ndarray
    models: frozenset[str]

    @classmethod
    def draw(cls, card: ReaderError, models: Any, *, n_boot: int, seed: int) -> ReaderBounds:
        """The bounds resampled ``n_boot`` times, seeded by ``(seed, "reader-error", reader)``."""

        rng = seeded_rng(seed, ("reader-error", card.reader))
        return cls(card, card.bound_resamples(n_boot, rng), frozenset(map(str, models)))

    @property
    def limits(self) -> tuple[float, float] | None:
        """The range of the card's metric (:data:`METRIC_RANGE` for NED), None if unknown."""
        return METRIC_RANGE if self.card.metric == CARD_METRIC else None

    def covers(self, *models: str) -> bool:
        """Whether every one of ``models`` was read by the card's reader."""
        return all(model in self.models for model in models)

    def score(self, model: str, resamples: np.ndarray, confidence: float) -> tuple[float, float]:
        """:func:`widened` for one model's score (NaN when the card does not cover it)."""
        if not self.covers(model):
            return (math.nan, math.nan)
        return widened(resamples, self.draws, confidence, limits=self.limits)

    def difference(
        self, a: str, b: str, resamples: np.ndarray, confidence: float
    ) -> tuple[float, float]:
        """:func:`widened` for ``a`` minus ``b`` (NaN when the card does not cover both)."""
        if not self.covers(a, b) or not np.isfinite(confidence):
            return (math.nan, math.nan)
        return widened(resamples, self.draws, confidence, difference=True, limits=self.limits)


def verdict(significant: bool, lo: float, hi: float) -> str:
    """A comparison's verdict with the reader's error counted.

    >>> verdict(True, 0.01, 0.2), verdict(True, -0.01, 0.2), verdict(False, 0.01, 0.2)
    ("significant, and beyond the reader's error", "significant, but within the reader's \
error", 'not significant')
    >>> verdict(True, float("nan"), float("nan"))
    'reader error not measured'
    """
    if not significant:
        return NOT_SIGNIFICANT
    if math.isnan(lo) or math.isnan(hi):
        return NOT_MEASURED
    return BEYOND if lo > 0 or hi < 0 else WITHIN


def from_real_rows(
    rows: Any, reader: str, version: str, *, part: str | None, manifest: str
) -> ReaderError:
    """The reader error of a card's real-image rows (:func:`~glyphbench.calibration.
    real_set.real_rows`): its signed score errors on the images with an intended text."""
    scored = rows[rows["score_reader"].notna()]
    errors = (scored["score_reader"] - scored["score_human"]).to_numpy(dtype="float64")
    clusters = (
        scored["source_repo"].astype(str).to_numpy(dtype=object)
        if "source_repo" in scored.columns
        else None
    )
    return ReaderError(reader, version, errors, clusters, part or "all", manifest)
