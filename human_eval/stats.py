"""Agreement between raters and alignment between people and automatic scores.

Everything here is a pure function of DataFrames. Ratings come in long form:
one row per (image_id, rater_id, criterion) with an integer ``value``
(1 = yes, 0 = no on the yes/no scale; 1..5 on the five-point scale).

Definitions (n_ic = raters who gave image i category c; m_i = raters of image i;
only images with m_i >= 2 enter agreement, as a single rating cannot agree):

* **percent agreement** of image i = max_c n_ic / m_i, the share of its raters
  who agree with the image's majority label (TextInVision's per-image agreement).
  With a tie the majority is ambiguous but the share is the same whichever tied
  label is taken (e.g. 2 yes / 2 no -> 0.5), so ties need no rule. The study
  value is the unweighted mean over images.
* **pairwise agreement** of image i = sum_c n_ic (n_ic - 1) / (m_i (m_i - 1)),
  the share of rater pairs that agree; mean over images.
* **Krippendorff's alpha** (nominal) = 1 - (n - 1) * D / (n^2 - sum_c n_c^2) where
  D = sum_i (m_i^2 - sum_c n_ic^2) / (m_i - 1) is the off-diagonal mass of the
  coincidence matrix, n_c = sum_i n_ic and n = sum_i m_i. Handles any number of
  raters per image. **Ordinal** alpha (for the five-point scale, whose answers are
  ordered) = 1 - (n - 1) * sum_ck o_ck d_ck / sum_ck n_c n_k d_ck with the coincidence
  matrix o_ck = sum_i n_ic (n_ik - [c = k]) / (m_i - 1) and Krippendorff's ordinal
  distance d_ck = (sum_{g from c to k} n_g - (n_c + n_k) / 2)^2: a disagreement
  between 4 and 5 weighs less than one between 1 and 5. With two categories it
  equals the nominal alpha.
* **Fleiss' kappa** = (P - Pe) / (1 - Pe) with P the mean pairwise agreement and
  Pe = sum_c p_c^2, p_c the share of all ratings in category c. Defined only when
  every image has the same number of raters; NaN (with a note) otherwise.
* **Gwet's AC1** = (P - Pe) / (1 - Pe) with Pe = sum_c pi_c (1 - pi_c) / (q - 1),
  pi_c = mean over images of n_ic / m_i and q the number of categories of the scale.

With binary labels and high prevalence (most images "yes"), percent agreement
is high while kappa and alpha are low (their chance term Pe is close to 1);
AC1 stays close to percent agreement. Report all three.

Confidence intervals: percentile bootstrap over images (resampling whole images
with their ratings: an image is the cluster), seeded, computed for all resamples
at once as matrix products of the resample counts of :mod:`glyphbench.core.bootstrap`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from glyphbench.core.bootstrap import (
    MAX_CELLS,
    MIN_UNITS,
    percentile_interval,
    resample_weights,
    seeded_rng,
    wilson_interval,
)
from glyphbench.scoring.table import METRICS, Mean

RATING_COLUMNS = ("image_id", "rater_id", "criterion", "value")
STATISTICS = (
    "percent_agreement",
    "pairwise_agreement",
    "krippendorff_alpha",
    "fleiss_kappa",
    "gwet_ac1",
)
#: Columns of :func:`agreement`, in order.
AGREEMENT_COLUMNS = (
    "criterion",
    "n_images",
    "n_ratings",
    "n_raters",
    "balanced",
    "raters_per_image",
    "prevalence",
    *(f"{stat}{suffix}" for stat in STATISTICS for suffix in ("", "_lo", "_hi")),
    "note",
    "alpha_level",
    "n_ratings_used",
)

#: How alpha measures disagreement: answers as unordered labels, or as ordered ranks.
NOMINAL, ORDINAL = "nominal", "ordinal"


# -- the count matrix ---------------------------------------------------------------


def count_matrix(
    ratings: pd.DataFrame, categories: Sequence[int] | None = None
) -> tuple[np.ndarray, list[str], list[int]]:
    """Images x categories counts for one criterion (images with >= 2 ratings only).

    Returns (counts, image_ids, categories). Duplicate (image, rater) rows are
    an error: each rater gives one answer per image.
    """
    duplicated = ratings.duplicated(["image_id", "rater_id"])
    if duplicated.any():
        first = ratings[duplicated].iloc[0]
        raise ValueError(f"rater {first['rater_id']!r} rated image {first['image_id']!r} twice")
    cats = sorted({int(v) for v in ratings["value"]} | set(categories or ()))
    table = pd.crosstab(ratings["image_id"], ratings["value"].astype(int))
    table = table.reindex(columns=cats, fill_value=0)
    table = table[table.sum(axis=1) >= 2]
    return table.to_numpy(dtype=float), [str(i) for i in table.index], cats


def per_image_agreement(ratings: pd.DataFrame) -> pd.DataFrame:
    """One row per (criterion, image) with >= 2 ratings: raters, majority, agreement, pairwise.

    ``majority`` is the most common answer (ties: the smallest value, and
    ``tie`` is True); ``agreement`` is the share of raters giving it, the
    per-image value that :func:`agreement` averages.

    >>> r = pd.DataFrame({"image_id": list("aaa"), "rater_id": list("xyz"),
    ...                   "criterion": "text", "value": [1, 1, 0]})
    >>> row = per_image_agreement(r).iloc[0]
    >>> int(row.majority), round(float(row.agreement), 3), round(float(row.pairwise), 3)
    (1, 0.667, 0.333)
    """
    rows = []
    for criterion, part in ratings.groupby("criterion", sort=True):
        counts, ids, cats = count_matrix(part)
        if not len(ids):
            continue
        m = counts.sum(axis=1)
        top = counts.max(axis=1)
        rows.append(
            pd.DataFrame(
                {
                    "criterion": criterion,
                    "image_id": ids,
                    "raters": m.astype(int),
                    "majority": np.asarray(cats)[counts.argmax(axis=1)],
                    "tie": (counts == top[:, None]).sum(axis=1) > 1,
                    "agreement": top / m,
                    "pairwise": ((counts**2).sum(axis=1) - m) / (m * (m - 1)),
                }
            )
        )
    columns = ["criterion", "image_id", "raters", "majority", "tie", "agreement", "pairwise"]
    return pd.concat(rows, ignore_index=True) if rows else pd.DataFrame(columns=columns)


def _statistics(
    counts: np.ndarray, weights: np.ndarray, q: int, level: str = NOMINAL
) -> dict[str, np.ndarray]:
    """Every statistic for each row of ``weights`` (B x images: how often each image is drawn).

    A row of ones gives the point estimate; bootstrap rows give resamples. ``level``:
    nominal or ordinal Krippendorff's alpha (columns of ``counts`` in scale order).
    """
    m = counts.sum(axis=1)  # raters per image
    sq = (counts**2).sum(axis=1)
    majority = counts.max(axis=1) / m
    pairwise = (sq - m) / (m * (m - 1))
    share = counts / m[:, None]
    disagreement = (m**2 - sq) / (m - 1)  # off-diagonal coincidences of each image

    images = weights.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        percent = weights @ majority / images
        p_obs = weights @ pairwise / images
        # Krippendorff's alpha from the coincidence matrix.
        n = weights @ m
        n_c = weights @ counts
        expected = n**2 - (n_c**2).sum(axis=1)
        alpha = 1.0 - (n - 1.0) * (weights @ disagreement) / expected
        alpha = np.where(expected > 0, alpha, np.nan)
        if level == ORDINAL:
            alpha = _ordinal_alpha(counts, weights)
        # Fleiss' kappa (meaningful only when m is constant; the caller checks).
        p_c = n_c / n[:, None]
        pe_fleiss = (p_c**2).sum(axis=1)
        kappa = np.where(pe_fleiss < 1, (p_obs - pe_fleiss) / (1 - pe_fleiss), np.nan)
        # Gwet's AC1.
        pi = (weights @ share) / images[:, None]
        pe_gwet = (pi * (1 - pi)).sum(axis=1) / (q - 1) if q > 1 else np.full_like(p_obs, np.nan)
        ac1 = (p_obs - pe_gwet) / (1 - pe_gwet)
    return {
        "percent_agreement": percent,
        "pairwise_agreement": p_obs,
        "krippendorff_alpha": alpha,
        "fleiss_kappa": kappa,
        "gwet_ac1": ac1,
    }


def _coincidences(counts: np.ndarray) -> np.ndarray:
    """Images x (q*q): each image's coincidences n_ic (n_ik - [c = k]) / (m_i - 1), flattened."""
    q = counts.shape[1]
    m = counts.sum(axis=1)
    pairs = counts[:, :, None] * counts[:, None, :]
    pairs[:, np.arange(q), np.arange(q)] -= counts
    flat: np.ndarray = (pairs / (m - 1)[:, None, None]).reshape(len(counts), q * q)
    return flat


def _ordinal_alpha(counts: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Ordinal Krippendorff's alpha for each row of ``weights`` (see the module docstring)."""
    q = counts.shape[1]
    coincidence = (weights @ _coincidences(counts)).reshape(len(weights), q, q)
    totals = coincidence.sum(axis=2)  # n_c per resample
    cumulative = np.cumsum(totals, axis=1)
    index = np.arange(q)
    low, high = np.minimum.outer(index, index), np.maximum.outer(index, index)
    between = cumulative[:, high] - cumulative[:, low] + totals[:, low]
    distance = (between - (totals[:, :, None] + totals[:, None, :]) / 2) ** 2
    n = totals.sum(axis=1)
    observed = (coincidence * distance).sum(axis=(1, 2))
    expected = (totals[:, :, None] * totals[:, None, :] * distance).sum(axis=(1, 2))
    with np.errstate(invalid="ignore", divide="ignore"):
        alpha = 1.0 - (n - 1.0) * observed / expected
    return np.where(expected > 0, alpha, np.nan)


# -- single statistics (point estimates) ----------------------------------------------


def percent_agreement(counts: np.ndarray) -> float:
    """Mean over images of the share of raters agreeing with the image's majority.

    >>> round(percent_agreement(np.array([[3, 0], [2, 1]])), 4)  # (3/3 + 2/3) / 2
    0.8333
    """
    return float(_point(counts, 2)["percent_agreement"])


def krippendorff_alpha(counts: np.ndarray, level: str = NOMINAL) -> float:
    """Krippendorff's alpha (nominal or ordinal) of an images x categories count matrix.

    >>> round(krippendorff_alpha(np.array([[2, 0], [0, 2], [1, 1]])), 4)
    0.4444
    >>> near = np.array([[0, 2, 0], [0, 1, 1], [1, 1, 0], [0, 0, 2]])  # 1-2 and 2-3 splits
    >>> far = np.array([[0, 2, 0], [1, 0, 1], [1, 1, 0], [0, 0, 2]])  # a 1-3 split instead
    >>> bool(krippendorff_alpha(near, ORDINAL) > krippendorff_alpha(far, ORDINAL))
    True
    """
    return float(_point(counts, counts.shape[1], level)["krippendorff_alpha"])


def fleiss_kappa(counts: np.ndarray) -> float:
    """Fleiss' kappa; NaN unless every image has the same number of raters.

    >>> round(fleiss_kappa(np.array([[2, 0], [0, 2], [1, 1]])), 4)
    0.3333
    """
    m = counts.sum(axis=1)
    if len(m) == 0 or not np.all(m == m[0]):
        return math.nan
    return float(_point(counts, counts.shape[1])["fleiss_kappa"])


def gwet_ac1(counts: np.ndarray, q: int | None = None) -> float:
    """Gwet's AC1 for ``q`` categories (default: the matrix's columns).

    >>> round(gwet_ac1(np.array([[2, 0], [0, 2], [1, 1]])), 4)
    0.3333
    """
    return float(_point(counts, q or counts.shape[1])["gwet_ac1"])


def _point(counts: np.ndarray, q: int, level: str = NOMINAL) -> dict[str, float]:
    stats = _statistics(np.asarray(counts, dtype=float), np.ones((1, len(counts))), q, level)
    return {k: float(v[0]) for k, v in stats.items()}


def bootstrap_weights(n_images: int, n_boot: int, seed: int) -> np.ndarray:
    """B x images matrix: how often each image appears in each bootstrap resample."""
    return resample_weights(n_images, n_boot, np.random.default_rng(seed))


def agreement(
    ratings: pd.DataFrame,
    *,
    categories: Sequence[int] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
    alpha_level: str = NOMINAL,
    alpha_levels: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Agreement per criterion: one row each, with bootstrap intervals.

    ``ratings`` has columns image_id, rater_id, criterion, value. ``categories``
    lists the scale's possible values (e.g. [0, 1]); it matters for AC1, whose
    chance term depends on how many answers were possible. Columns: criterion,
    n_images (images with >= 2 ratings), n_ratings (all ratings of the criterion),
    n_raters, balanced, raters_per_image, prevalence (share of the most common answer),
    each statistic of :data:`STATISTICS` with ``<stat>_lo`` / ``<stat>_hi``, note,
    alpha_level (``alpha_level``, or per criterion from ``alpha_levels``: nominal for
    yes/no answers, ordinal for a rating scale) and n_ratings_used (the ratings of the
    images that enter agreement).

    >>> r = pd.DataFrame({"image_id": list("aabbcc"), "rater_id": list("xyxyxy"),
    ...                   "criterion": "text", "value": [1, 1, 0, 0, 1, 0]})
    >>> row = agreement(r, categories=[0, 1], n_boot=200).iloc[0]
    >>> round(float(row.percent_agreement), 4), round(float(row.fleiss_kappa), 4)
    (0.8333, 0.3333)
    """
    alpha_levels = dict(alpha_levels or {})
    missing = [c for c in RATING_COLUMNS if c not in ratings.columns]
    if missing:
        raise ValueError(f"ratings lack columns {missing}")
    rows = [
        _criterion_row(
            str(criterion),
            part,
            categories,
            Resampling(n_boot, seed, level),
            alpha_levels.get(str(criterion), alpha_level),
        )
        for criterion, part in ratings.groupby("criterion", sort=True)
    ]
    return pd.DataFrame(rows, columns=list(AGREEMENT_COLUMNS))


@dataclass(frozen=True)
class Resampling:
    """Bootstrap settings of the agreement intervals."""

    n_boot: int
    seed: int
    level: float


def _criterion_row(
    criterion: str,
    part: pd.DataFrame,
    categories: Sequence[int] | None,
    resampling: Resampling,
    alpha_level: str,
) -> dict[str, object]:
    """One row of :func:`agreement`: counts, every statistic with its interval, notes."""
    counts, _, cats = count_matrix(part, categories)
    m = counts.sum(axis=1)
    balanced = bool(len(m) and np.all(m == m[0]))
    row: dict[str, object] = {
        "criterion": criterion,
        "n_images": len(counts),
        "n_ratings": len(part),  # every rating, also of images rated once
        "n_ratings_used": int(m.sum()),  # ratings of images with >= 2 (agreement needs pairs)
        "n_raters": int(part["rater_id"].nunique()),
        "balanced": balanced,
        "raters_per_image": float(np.median(m)) if len(m) else math.nan,
        "prevalence": float(part["value"].value_counts(normalize=True).max())
        if len(part)
        else math.nan,
        "alpha_level": alpha_level,
    }
    notes = []
    if len(counts) == 0:
        notes.append("no image has two ratings")
        for stat in STATISTICS:
            row.update({stat: math.nan, f"{stat}_lo": math.nan, f"{stat}_hi": math.nan})
        row["note"] = "; ".join(notes)
        return row
    q = len(cats)
    point = _point(counts, q, alpha_level)
    weights = bootstrap_weights(len(counts), resampling.n_boot, resampling.seed)
    boot = _statistics(counts, weights, q, alpha_level)
    if not balanced:
        notes.append("Fleiss' kappa needs the same number of raters per image: not computed")
        point["fleiss_kappa"] = math.nan
    withheld: dict[str, list[str]] = {}
    for stat in STATISTICS:
        if stat == "fleiss_kappa" and not balanced:
            lo = hi = math.nan
        else:
            lo, hi, why = honest_interval(
                point[stat], boot[stat], resampling.level, bounds=STATISTIC_BOUNDS[stat]
            )
            if why:
                withheld.setdefault(why, []).append(stat.replace("_", " "))
        row.update({stat: point[stat], f"{stat}_lo": lo, f"{stat}_hi": hi})
    notes += [f"{', '.join(names)}: {why}" for why, names in withheld.items()]
    if len(set(part["value"])) == 1:
        notes.append("every rating is the same answer: chance-corrected statistics undefined")
    row["note"] = "; ".join(notes)
    return row


# -- intervals on thin evidence ---------------------------------------------------------

#: The range of each statistic: an interval may end at its estimate only at such a bound.
STATISTIC_BOUNDS: dict[str, tuple[float, float]] = {
    "percent_agreement": (0.0, 1.0),
    "pairwise_agreement": (0.0, 1.0),
    "krippendorff_alpha": (-math.inf, 1.0),
    "fleiss_kappa": (-math.inf, 1.0),
    "gwet_ac1": (-math.inf, 1.0),
    "roc_auc": (0.0, 1.0),
    "point_biserial": (-1.0, 1.0),
    "spearman": (-1.0, 1.0),
}

#: The note of an interval the resamples cannot give (the cell then shows no interval).
FLAT = "no interval: the resamples do not spread beyond the estimate"


def honest_interval(
    point: float,
    resamples: np.ndarray,
    level: float,
    *,
    bounds: tuple[float, float] = (-math.inf, math.inf),
) -> tuple[float, float, str]:
    """The percentile interval of ``resamples``, or NaN and why when it would say too much.

    Withheld (NaN, NaN, reason) when more than half the tail share ``(1 - level) / 2`` of
    the resamples are undefined (a resample that lost a class: dropping them would keep only
    the resamples that look like the data), or when the interval has no width or ends at
    the estimate inside the statistic's range ``bounds``: the resamples then cannot go
    beyond the data's extreme, which says the evidence is too thin, not that the value is
    known exactly. An end at a bound the statistic cannot pass (an AUC of 1.0) is kept.

    >>> honest_interval(0.5, np.linspace(0.3, 0.7, 101), 0.95)[:2]
    (0.31, 0.69)
    >>> honest_interval(1.0, np.ones(100), 0.95, bounds=(0.0, 1.0))[2]
    'no interval: the resamples do not spread beyond the estimate'
    >>> honest_interval(0.8, np.r_[np.full(90, 0.8), np.full(10, 0.5)], 0.95)[2]
    'no interval: the resamples do not spread beyond the estimate'
    >>> honest_interval(1.0, np.r_[np.ones(90), np.full(10, 0.8)], 0.95, bounds=(0, 1))[:2]
    (0.8, 1.0)
    >>> honest_interval(0.6, np.r_[np.full(10, np.nan), np.linspace(0.4, 0.8, 90)], 0.95)[2]
    'no interval: undefined in 10% of the resamples (a class lost)'
    """
    values = np.asarray(resamples, dtype=float)
    if not math.isfinite(point) or not values.size:
        return math.nan, math.nan, ""
    finite = values[np.isfinite(values)]
    undefined = 1.0 - finite.size / values.size
    if undefined > (1.0 - level) / 4:
        return (
            math.nan,
            math.nan,
            f"no interval: undefined in {undefined:.0%} of the resamples (a class lost)",
        )
    lo, hi = (float(x) for x in percentile_interval(finite, level))
    at_low = math.isclose(lo, point, abs_tol=1e-12) and point > bounds[0]
    at_high = math.isclose(hi, point, abs_tol=1e-12) and point < bounds[1]
    if math.isclose(lo, hi, abs_tol=1e-12) or at_low or at_high:
        return math.nan, math.nan, FLAT
    return lo, hi, ""


def auc_bound_interval(
    auc: float, n_accepted: int, n_rejected: int, level: float
) -> tuple[float, float]:
    """A conservative interval for an AUC whose bootstrap is flat (every resample separates
    the classes as the data do): the Wilson score interval of a proportion ``auc`` on
    ``min(n_accepted, n_rejected)`` trials. Birnbaum and Klose (1957, Ann. Math. Statist.
    28, 933-945) bound the variance of the Mann-Whitney estimate by A (1 - A) / min(m, n)
    whatever the two distributions, the variance of such a proportion; the interval never
    has zero width.

    >>> [round(float(x), 3) for x in auc_bound_interval(1.0, 5, 7, 0.95)]
    [0.566, 1.0]
    """
    low, high = wilson_interval(
        auc * min(n_accepted, n_rejected), min(n_accepted, n_rejected), level
    )
    return float(low), float(high)


# -- metric-human alignment ---------------------------------------------------------------


def roc_auc(scores: Sequence[float] | np.ndarray, labels: Sequence[int] | np.ndarray) -> float:
    """Area under the ROC curve = P(score of a positive > score of a negative), ties count 1/2.

    Computed from the Mann-Whitney U statistic with average ranks. NaN without
    both classes.

    >>> roc_auc([0.9, 0.8, 0.3, 0.8], [1, 1, 0, 0])  # pairs: (.9>.3) (.9>.8) (.8>.3) (.8=.8)
    0.875
    """
    s = np.asarray(scores, dtype=float)
    y = np.asarray(labels).astype(bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if n_pos == 0 or n_neg == 0:
        return math.nan
    ranks = pd.Series(s).rank(method="average").to_numpy()
    u = ranks[y].sum() - n_pos * (n_pos + 1) / 2
    return float(u / (n_pos * n_neg))


def human_labels(ratings: pd.DataFrame, criterion: str, positive: int = 1) -> pd.DataFrame:
    """Per image: ``human_share`` (share answering >= ``positive``), raters, ``human_label``.

    ``human_label`` is 1 when more than half said yes, 0 when fewer than half,
    and <NA> for an exact tie (left out of AUC and point-biserial).
    """
    part = ratings[ratings["criterion"] == criterion]
    grouped = (part["value"].astype(int) >= positive).groupby(part["image_id"])
    frame = pd.DataFrame({"human_share": grouped.mean(), "raters": grouped.size()})
    label = pd.Series(pd.NA, index=frame.index, dtype="Int64")
    label[frame["human_share"] > 0.5] = 1
    label[frame["human_share"] < 0.5] = 0
    frame["human_label"] = label
    return frame.reset_index()


#: Alignment statistics, each with ``<stat>_lo`` / ``<stat>_hi`` bootstrap bounds.
ALIGNMENT_STATISTICS = ("roc_auc", "point_biserial", "spearman")


#: Fewest images of each class (people's majority said yes; said no) before an AUC or a
#: correlation with people is shown: the report's floor for any interval
#: (:data:`glyphbench.core.bootstrap.MIN_UNITS`, and why 5 is given there). Below it the
#: estimate is kept in the tables but shown as "too few", with no interval.
MIN_PER_CLASS = MIN_UNITS


def _alignment_row(
    scores: np.ndarray, share: np.ndarray, label: pd.Series, resampling: Resampling | None = None
) -> dict[str, float | int | str]:
    """Point estimates and (with ``resampling``) percentile bootstrap bounds over images.

    AUC and point-biserial use the images with a label (ties left out); Spearman
    uses every image. The resamples are stratified, as pROC's ``ci.auc`` does by default
    (``boot.stratified = TRUE``): each redraws the accepted, the rejected and the tied
    images apart, so none loses a class. With fewer than :data:`MIN_PER_CLASS` images of
    a class there is no interval and ``note`` says "too few"; an interval the resamples
    cannot give is withheld (:func:`honest_interval`), except an AUC's flat one, which
    becomes :func:`auc_bound_interval`.
    """
    known = label.notna().to_numpy()
    values = label.to_numpy(dtype=float, na_value=np.nan)
    accepted, rejected = np.flatnonzero(values == 1), np.flatnonzero(values == 0)
    out: dict[str, float | int | str] = {
        "n_images": len(scores),
        "n_ties": int((~known).sum()),
        "n_accepted": len(accepted),
        "n_rejected": len(rejected),
        "note": "",
    }
    point = _alignment_statistics(
        scores[known][None, :], values[known][None, :], scores[None, :], share[None, :]
    )
    for stat, estimate in point.items():
        out[stat] = float(estimate[0])
    thin = min(len(accepted), len(rejected)) < MIN_PER_CLASS
    if thin:
        out["note"] = (
            f"too few: {len(accepted)} accepted, {len(rejected)} rejected "
            f"({MIN_PER_CLASS} of each needed)"
        )
    if resampling is None:
        return out
    if thin:
        out.update({f"{stat}_{end}": math.nan for stat in point for end in ("lo", "hi")})
        return out
    boot = _stratified_alignment(scores, share, values, (accepted, rejected), resampling)
    notes = []
    for stat, resamples in boot.items():
        lo, hi, why = honest_interval(
            float(out[stat]), resamples, resampling.level, bounds=STATISTIC_BOUNDS[stat]
        )
        if why == FLAT and stat == "roc_auc":
            lo, hi = auc_bound_interval(
                float(out[stat]), len(accepted), len(rejected), resampling.level
            )
            why = "AUC: Wilson bound (Birnbaum-Klose), the resamples being flat"
        if why:
            notes.append(why if stat == "roc_auc" else f"{stat.replace('_', '-')}: {why}")
        out[f"{stat}_lo"], out[f"{stat}_hi"] = lo, hi
    out["note"] = "; ".join(notes)
    return out


def _stratified_alignment(
    scores: np.ndarray,
    share: np.ndarray,
    values: np.ndarray,
    classes: tuple[np.ndarray, np.ndarray],
    resampling: Resampling,
) -> dict[str, np.ndarray]:
    """Each alignment statistic over ``resampling.n_boot`` stratified resamples (the accepted,
    the rejected and the tied images each redrawn within themselves)."""
    tied = np.flatnonzero(np.isnan(values))
    strata = [stratum for stratum in (*classes, tied) if len(stratum)]
    n_labelled = sum(map(len, classes))
    rng = seeded_rng(resampling.seed, ("alignment", len(scores), n_labelled))
    block = max(1, MAX_CELLS // max(len(scores), 1))
    parts: dict[str, list[np.ndarray]] = {stat: [] for stat in ALIGNMENT_STATISTICS}
    for first in range(0, resampling.n_boot, block):
        size = min(block, resampling.n_boot - first)
        rows = np.hstack(
            [
                stratum[rng.integers(0, len(stratum), size=(size, len(stratum)))]
                for stratum in strata
            ]
        )
        labelled = rows[:, :n_labelled]  # the accepted and the rejected come first
        drawn = _alignment_statistics(scores[labelled], values[labelled], scores[rows], share[rows])
        for stat, estimate in drawn.items():
            parts[stat].append(estimate)
    return {stat: np.concatenate(chunks) for stat, chunks in parts.items()}


def _alignment_statistics(
    labelled_scores: np.ndarray, labels: np.ndarray, scores: np.ndarray, share: np.ndarray
) -> dict[str, np.ndarray]:
    """ROC-AUC, point-biserial and Spearman for each row (one row per resample).

    ``labelled_scores`` / ``labels`` (0/1): the images with a human label; ``scores`` /
    ``share``: every image. NaN where a statistic is undefined (one class, no spread).

    >>> s = np.array([[0.9, 0.8, 0.3, 0.8]]); y = np.array([[1.0, 1.0, 0.0, 0.0]])
    >>> float(_alignment_statistics(s, y, s, y)["roc_auc"][0])
    0.875
    """
    from scipy.stats import rankdata

    positives = labels.sum(axis=1)
    negatives = labels.shape[1] - positives
    with np.errstate(invalid="ignore", divide="ignore"):
        if labels.shape[1]:
            ranks = rankdata(labelled_scores, axis=1)
            u = (ranks * labels).sum(axis=1) - positives * (positives + 1) / 2
            spread = labelled_scores.max(axis=1) > labelled_scores.min(axis=1)
            # A constant score ranks nothing: its AUC is undefined, not 0.5 [0.5, 0.5].
            defined = (positives > 0) & (negatives > 0) & spread
            auc = np.where(defined, u / (positives * negatives), np.nan)
        else:
            auc = np.full(len(labels), np.nan)
        biserial = _pearson_rows(labels, labelled_scores)
        spearman = _pearson_rows(rankdata(scores, axis=1), rankdata(share, axis=1))
    if scores.shape[1] <= 2:
        spearman = np.full(len(scores), np.nan)
    return {"roc_auc": auc, "point_biserial": biserial, "spearman": spearman}


def _pearson_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson correlation of each row pair; NaN where either row has no spread."""
    a = a - a.mean(axis=1, keepdims=True)
    b = b - b.mean(axis=1, keepdims=True)
    spread = np.sqrt((a * a).sum(axis=1) * (b * b).sum(axis=1))
    tiny = spread <= 1e-12 * max(1.0, float(np.abs(spread).max(initial=0.0)))
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(tiny, np.nan, (a * b).sum(axis=1) / spread)


def metric_alignment(
    labels: pd.DataFrame,
    manifest: pd.DataFrame,
    metrics: Sequence[str] | None = None,
    higher_is_better: dict[str, bool] | None = None,
    *,
    n_boot: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """How well each automatic score predicts the human label, overall and per model.

    ``labels`` is :func:`human_labels` output; ``manifest`` gives model and scores
    per image_id; ``metrics`` defaults to the scores the metric table compares with people
    (its ``human`` places: ned, algorithm1). Scores where lower is better (the table's
    direction, e.g. algorithm1, an error count)
    are negated first, so for every metric AUC > 0.5 and positive correlations
    mean "agrees with people". Columns: metric, model ("(all)" for overall),
    n_images, n_ties, roc_auc, point_biserial (with the binary label), spearman
    (with the share of yes answers), each with ``_lo`` / ``_hi`` percentile bootstrap
    bounds over images (``n_boot`` resamples; 0 for none).
    """
    resampling = Resampling(n_boot, seed, level) if n_boot > 0 else None

    direction = {**METRICS.higher_is_better(), **(higher_is_better or {})}
    data = labels.merge(manifest, on="image_id", how="inner")
    rows = []
    for metric in METRICS.human_names(compared=True) if metrics is None else metrics:
        if metric not in data.columns:
            continue
        usable = data[data[metric].notna()]
        sign = 1.0 if direction.get(metric, True) else -1.0
        groups = [("(all)", usable)] + [(str(k), g) for k, g in sorted(usable.groupby("model"))]
        for model, group in groups:
            row = _alignment_row(
                sign * group[metric].to_numpy(dtype=float),
                group["human_share"].to_numpy(dtype=float),
                group["human_label"].reset_index(drop=True),
                resampling,
            )
            rows.append({"metric": metric, "model": model, **row})
    return pd.DataFrame(rows)


def model_ranking(
    labels: pd.DataFrame,
    manifest: pd.DataFrame,
    metric: str | None = None,
    higher_is_better: bool | None = None,
) -> tuple[pd.DataFrame, float, float]:
    """Rank models by people and by ``metric``; return (table, Kendall tau, p-value).

    ``metric`` defaults to the first score the metric table compares with people (its
    ``human`` places: ned), ranked in the table's direction unless ``higher_is_better``.
    Per model: the weighted mean share of "yes" and the weighted mean metric on
    the same rated images, weighted by 1 / inclusion probability so each mean
    estimates the model's whole run rather than the sample's cell mix. This is the
    one mean not taken from the table's aggregate: it is the design-weighted form of
    the table's per-image mean, so a metric the table aggregates otherwise (a pooled
    ratio, a derived figure) has no such form here and is refused (ValueError).
    """
    from scipy import stats as sps

    if metric is None:
        metric = METRICS.human_names(compared=True)[0]
    if metric in METRICS and not isinstance(METRICS.get(metric).aggregate, Mean):
        raise ValueError(
            f"the model ranking weighs a per-image mean; the metric table aggregates "
            f"{metric!r} as {METRICS.get(metric).aggregate}"
        )
    directions = METRICS.higher_is_better()
    better = directions.get(metric, True) if higher_is_better is None else higher_is_better
    data = labels.merge(manifest, on="image_id", how="inner")
    data = data[data[metric].notna()]
    weight = data["weight"].where(np.isfinite(data["weight"]), 1.0) if "weight" in data else 1.0
    data = data.assign(_w=weight)
    rows = []
    for model, group in sorted(data.groupby("model")):
        w = group["_w"].to_numpy(dtype=float)
        rows.append(
            {
                "model": model,
                "n_images": len(group),
                "human_score": float(np.average(group["human_share"], weights=w)),
                "metric_score": float(np.average(group[metric], weights=w)),
            }
        )
    table = pd.DataFrame(rows, columns=["model", "n_images", "human_score", "metric_score"])
    if table.empty:
        return table, math.nan, math.nan
    table["human_rank"] = table["human_score"].rank(ascending=False, method="min").astype(int)
    table["metric_rank"] = (
        table["metric_score"].rank(ascending=not better, method="min").astype(int)
    )
    if len(table) < 2:
        return table, math.nan, math.nan
    tau, p = sps.kendalltau(table["human_rank"], table["metric_rank"])
    return (
        table.sort_values(["human_rank", "model"], kind="stable").reset_index(drop=True),
        float(tau),
        float(p),
    )
