"""Analysis of ``vae_results.parquet``: pure functions of the table, nothing rendered.

What the VAE report (:mod:`glyphbench.vae_eval.report`, the rendering) shows, computed here:

* the summary per codec and the OCR ceiling (:func:`summary_table`), with bootstrap
  intervals over images (:func:`summary_bounds`, :func:`mean_bounds`);
* the *text-survival threshold* per codec (:func:`survival_threshold`: the smallest
  font size from which upward the codec keeps at least :data:`SURVIVAL_RATIO` of the
  ceiling's WR at every size), the first size below :data:`ABSOLUTE_FLOOR`
  (:func:`first_size_below`) and the evidence behind both (:func:`size_evidence`,
  :func:`too_thin`, :func:`threshold_warnings`);
* the reader's limits (:func:`reader_limits`: values whose OCR ceiling is below
  :data:`READER_FLOOR`);
* the mean WR pivots codec x attribute (:func:`wr_pivot`, :func:`pivot_bounds`,
  :func:`images_per_column`), the failure count (:func:`failure_banner`) and the
  codecs' short labels (:func:`codec_labels`).

Means skip failed rows (NaN metrics); metrics, labels and aggregates come from the
metric table (family ``vae``).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glyphbench.core.bootstrap import MIN_UNITS, mean_interval, seeded_rng
from glyphbench.core.registry import Spec
from glyphbench.core.schema import failed_mask
from glyphbench.scoring.table import METRICS, Mean

if TYPE_CHECKING:
    import pandas as pd

    from glyphbench.scoring.table import Metric

    #: Lower and upper interval bounds, each a frame shaped like the table it bounds.
    Bounds = tuple[pd.DataFrame, pd.DataFrame]


#: Share of the OCR ceiling's WR a codec must keep at a font size to "preserve" it.
SURVIVAL_RATIO = 0.9

#: Below this mean OCR-ceiling WR (%) a font size, character class or background is one
#: the reader cannot read: what a codec scores there is the reader's limit, not codec loss.
READER_FLOOR = 50.0

#: "First size below": the largest font size where a codec's mean WR falls under this (%).
ABSOLUTE_FLOOR = 50.0

#: A text-survival threshold resting on fewer font sizes than this gets a warning.
MIN_SIZES = 3

#: Fewest successful images at every font size for a threshold to be stated (else "evidence
#: too thin"): the report's one minimum for an interval
#: (:data:`glyphbench.core.bootstrap.MIN_UNITS`).
MIN_IMAGES_PER_SIZE = MIN_UNITS

#: Bootstrap of every interval on the page: resamples, seed, level (images resampled).
N_BOOT = 1000

SEED = 0

CONFIDENCE = 0.95

#: The result column of WR on the original images (the OCR ceiling).
CEILING = "wr_original"


def wr_by(rows: pd.DataFrame, by: str, column: str = "wr") -> pd.Series:
    """WR's aggregate (metric table, family ``vae``) per value of ``by``, sorted by value.

    ``column`` holds the per-image WR (``wr``, or :data:`CEILING` for the original images).
    """
    values = rows[[by, column]].set_axis([by, "wr"], axis=1)
    return METRICS.aggregate_groups(values, by, "wr", "vae", sort=True)


def _pivot_aggfunc() -> str:
    """WR's aggregate as a pivot-table function: the metric table's per-image mean.

    The codec x attribute tables average one value per image; a WR aggregated any
    other way (pooled, derived) could not be pivoted so, and is refused here.
    """
    aggregate = METRICS.get("wr", "vae").aggregate
    if not isinstance(aggregate, Mean):
        raise ValueError(f"the WR tables need a per-image mean; the metric table has {aggregate}")
    return "mean"


def survival_threshold(
    table: pd.DataFrame, ratio: float = SURVIVAL_RATIO
) -> dict[str, float | None]:
    """Per codec: the smallest font size s such that at every size >= s, mean WR >= ratio x ceiling.

    The ceiling at a size is the mean ``wr_original`` over the same rows. ``None``
    when even the largest size fails, or when the table has no ``font_size`` column.

    Worked example: sizes 48, 32, 20, 10 with mean WR 100, 95, 60, 90 and a ceiling of
    100 everywhere: 48 and 32 pass (>= 90), 20 fails, so the threshold is 32 even
    though 10 passes again (text must survive at every larger size).
    """
    import pandas as pd

    if "font_size" not in table.columns:
        return {}
    rows = table[~failed_mask(table)]
    out: dict[str, float | None] = {}
    for vae, group in rows.groupby("vae", sort=False):
        means = pd.DataFrame(
            {"wr": wr_by(group, "font_size"), "wr_original": wr_by(group, "font_size", CEILING)}
        ).sort_index(ascending=False)
        threshold: float | None = None
        for size, row in means.iterrows():
            if row["wr"] >= ratio * row["wr_original"]:
                threshold = float(str(size))
            else:
                break
        out[str(vae)] = threshold
    return out


def wr_metric() -> Metric:
    """WR's record in the metric table (family ``vae``): the metric of every WR table."""
    return METRICS.get("wr", "vae")


def mean_bounds(values: Any, key: tuple[object, ...]) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` over images (NaNs dropped).

    Each image is its own resampling unit; the one kernel
    :func:`glyphbench.core.bootstrap.mean_interval`
    draws the resamples, seeded by :data:`SEED` and ``key`` (same input, same interval).
    Fewer than two finite values, or any infinite one (a pixel-identical PSNR), give NaN.

    >>> lo, hi = mean_bounds([0.0, 100.0] * 20, ("doc",))
    >>> bool(30 < lo < 50 < hi < 70)
    True
    >>> mean_bounds([80.0], ("doc",))
    (nan, nan)
    """
    import numpy as np

    data = np.asarray(values, dtype="float64")
    data = data[~np.isnan(data)]
    if data.size < 2 or not np.isfinite(data).all():
        return (math.nan, math.nan)
    rng = seeded_rng(SEED, key)
    return mean_interval(data, n_boot=N_BOOT, rng=rng, confidence=CONFIDENCE)


#: The row of the summary and of every WR table that holds the OCR ceiling (computed once).
CEILING_LABEL = "OCR ceiling (original)"


def summary_metrics() -> list[Metric]:
    """The ``vae`` family's summary metrics, in their table order (WR, PA, PSNR, SSIM, ...)."""
    return [METRICS.get(name, "vae") for name in METRICS.summary_names(["vae"])]


def aggregate_metric(rows: pd.DataFrame, metric: Metric, column: str | None = None) -> float:
    """``metric``'s aggregate from the metric table over ``rows``, read from ``column``.

    ``column`` defaults to the metric's own (``wr_original``: the same metric on the
    original images). NaN when the table predates the column or every value is NaN.
    """
    return METRICS.aggregate_column(rows, metric.name, column or metric.name, "vae")


def summary_sources() -> tuple[dict[str, str], dict[str, str]]:
    """(summary column -> result column of each codec row, ceiling column -> result column).

    Read from the metric table: each ``vae`` summary metric under its short label, the
    first one's loss (``WR loss``: ceiling minus codec, per image) after it; the ceiling
    row holds the text metrics on the original images (``wr_original``, ``pa_original``).

    >>> summary_sources()[1]
    {'WR': 'wr_original', 'PA': 'pa_original'}
    """
    metrics = summary_metrics()
    codec: dict[str, str] = {}
    for metric in metrics:
        codec[metric.short_label] = metric.name
        if metric is metrics[0]:
            codec[f"{metric.short_label} loss"] = f"{metric.name}_loss"
    ceiling = {m.short_label: f"{m.name}_original" for m in metrics if m.inputs == "text"}
    return codec, ceiling


def summary_table(table: pd.DataFrame) -> pd.DataFrame:
    """The OCR ceiling (first row), then per codec (in table order) counts and mean metrics.

    The ceiling (WR and PA of the reader on the *original* images) does not depend
    on the codec, so it is computed once, over the distinct images any codec read
    successfully, and shown once (it used to be repeated per codec, each
    time with its own interval). Each codec's ``WR loss`` stays paired: ceiling
    minus codec on that codec's own successful images. Metrics, their short labels
    and their aggregates come from the metric table (family ``vae``); a PSNR mean is
    +inf when any reconstruction is pixel-identical, and the text-region columns are
    NaN (n/a) when the set has no text boxes.
    """
    import pandas as pd

    metrics = {m.name: m for m in summary_metrics()}
    codec_sources, ceiling_sources = summary_sources()
    ok_all = table[~failed_mask(table)]
    distinct = ok_all.drop_duplicates("image_id") if "image_id" in ok_all else ok_all
    ceiling: dict[str, Any] = {"vae": CEILING_LABEL, "images": len(distinct), "failed": math.nan}
    for column, source in ceiling_sources.items():
        ceiling[column] = aggregate_metric(
            distinct, metrics[source.removesuffix("_original")], source
        )
    records: list[dict[str, Any]] = [ceiling]
    for vae, group in table.groupby("vae", sort=False):
        failed = failed_mask(group)
        ok = group[~failed]
        record: dict[str, Any] = {"vae": vae, "images": len(group), "failed": int(failed.sum())}
        for column, source in codec_sources.items():
            record[column] = aggregate_metric(ok, metrics[source.removesuffix("_loss")], source)
        record["codec s/img"] = _mean(ok, "codec_seconds")
        record["OCR s/img"] = _mean(ok, "ocr_seconds")
        records.append(record)
    columns = ["vae", "images", "failed", *codec_sources, "codec s/img", "OCR s/img"]
    out = pd.DataFrame(records, columns=columns).set_index("vae")
    # counts stay integers ("0", not "0.0"); the ceiling row has no failures of its own
    out["failed"] = pd.Series(
        [v if math.isnan(v) else int(v) for v in out["failed"]], index=out.index, dtype=object
    )
    return out


def summary_bounds(table: pd.DataFrame, summary: pd.DataFrame) -> Bounds:
    """Bootstrap interval bounds (over images) for the mean columns of :func:`summary_table`.

    The ceiling row's interval is drawn once, over the distinct images.
    """
    lower, upper = empty_bounds(summary)
    codec_sources, ceiling_sources = summary_sources()
    ok = table[~failed_mask(table)]
    if CEILING_LABEL in summary.index:
        distinct = ok.drop_duplicates("image_id") if "image_id" in ok else ok
        for column, source in ceiling_sources.items():
            if source in distinct.columns:
                lo, hi = mean_bounds(distinct[source], ("ceiling", source))
                lower.loc[CEILING_LABEL, column], upper.loc[CEILING_LABEL, column] = lo, hi
    for vae, group in ok.groupby("vae", sort=False):
        for column, source in codec_sources.items():
            if source in group.columns and column in summary.columns:
                lo, hi = mean_bounds(group[source], ("summary", vae, source))
                lower.loc[vae, column], upper.loc[vae, column] = lo, hi
    return lower, upper


def empty_bounds(frame: pd.DataFrame) -> Bounds:
    import pandas as pd

    def empty() -> pd.DataFrame:
        return pd.DataFrame(math.nan, index=frame.index, columns=frame.columns)

    return empty(), empty()


def _mean(rows: pd.DataFrame, column: str) -> float:
    """Mean of ``column`` (NaN when the table predates it or every value is NaN)."""
    return float(rows[column].mean()) if column in rows.columns else math.nan


def first_size_below(table: pd.DataFrame, floor: float = ABSOLUTE_FLOOR) -> dict[str, float | None]:
    """Per codec: scanning font sizes from the largest down, the first whose mean WR < ``floor``.

    None when no size falls below (or the table has no ``font_size``). Unlike
    :func:`survival_threshold` this is absolute (not relative to the OCR ceiling): the
    figure the VAE table quotes ("first font size below 50% WR").

    >>> import pandas as pd
    >>> rows = pd.DataFrame({"vae": ["t"] * 3, "font_size": [48, 20, 10], "wr": [80.0, 60.0, 8.0],
    ...                      "error": [""] * 3})
    >>> first_size_below(rows)
    {'t': 10.0}
    """
    if "font_size" not in table.columns:
        return {}
    rows = table[~failed_mask(table)]
    out: dict[str, float | None] = {}
    for vae, group in rows.groupby("vae", sort=False):
        means = wr_by(group, "font_size").sort_index(ascending=False)
        below = [float(str(size)) for size, wr in means.items() if wr < floor]
        out[str(vae)] = below[0] if below else None
    return out


#: Image attributes whose values can be beyond the reader (font sizes, classes, backgrounds).
READER_ATTRIBUTES = ("font_size", "char_class", "background")


def reader_limits(table: pd.DataFrame, floor: float = READER_FLOOR) -> dict[str, dict[Any, float]]:
    """Attribute -> {value: ceiling WR} where the reader's own ceiling is below ``floor``.

    The ceiling is the mean ``wr_original`` (the reader on the *original* images) over
    the distinct images with that value. There the reader cannot read the text in the
    first place, so a codec's low WR is not codec loss: the report says so.

    >>> import pandas as pd
    >>> rows = pd.DataFrame({"vae": ["a", "a"], "image_id": ["x", "y"], "error": ["", ""],
    ...                      "char_class": ["lower", "accented"], "wr_original": [90.0, 0.0]})
    >>> reader_limits(rows)
    {'char_class': {'accented': 0.0}}
    """
    rows = table[~failed_mask(table)].drop_duplicates("image_id")
    out: dict[str, dict[Any, float]] = {}
    for attribute in READER_ATTRIBUTES:
        if attribute not in rows.columns:
            continue
        ceiling = wr_by(rows, attribute, CEILING)
        weak = {plain_value(value): float(wr) for value, wr in ceiling.items() if wr < floor}
        if weak:
            out[attribute] = weak
    return out


def plain_value(value: Any) -> Any:
    """numpy scalars as Python values (so they print and compare plainly)."""
    return value.item() if hasattr(value, "item") else value


def codec_labels(specs: Iterable[str]) -> dict[str, str]:
    """Short labels for codec specs: a path target becomes its folder or file name.

    Two specs that would share a label keep their full spec.

    >>> labels = codec_labels(["taesd:/data/shared/taef2", "identity", "resize?factor=8"])
    >>> list(labels.values())
    ['taesd:taef2', 'identity', 'resize?factor=8']
    """
    short: dict[str, str] = {}
    for spec in dict.fromkeys(specs):
        parsed = Spec.parse(spec)
        target = parsed.target or ""
        if "/" in target or target.startswith("."):
            query = spec.partition("?")[2]
            name = Path(target.rstrip("/")).name or target
            short[spec] = f"{parsed.kind}:{name}" + (f"?{query}" if query else "")
        else:
            short[spec] = spec
    counts = Counter(short.values())
    return {spec: label if counts[label] == 1 else spec for spec, label in short.items()}


def wr_pivot(table: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Mean WR with codecs as rows and ``by`` as columns; first row is the OCR ceiling.

    Font sizes run in numeric order, smallest first (as on the plot's x axis); other
    values keep the image set's order.
    """
    import pandas as pd

    ok = table[~failed_mask(table)]
    aggfunc = _pivot_aggfunc()
    pivot = ok.pivot_table(index="vae", columns=by, values="wr", aggfunc=aggfunc, sort=False)
    ceiling = ok.drop_duplicates("image_id").pivot_table(
        columns=by, values=CEILING, aggfunc=aggfunc, sort=False
    )
    ceiling.index = pd.Index([CEILING_LABEL])
    combined = pd.concat([ceiling, pivot])
    return combined[_natural_order(list(combined.columns), by)]


def _natural_order(columns: list[Any], by: list[str]) -> list[Any]:
    """Columns sorted by font size as a number (stable: other values keep their order).

    >>> _natural_order([(48, "a"), (10, "b"), (48, "b"), (10, "a")], ["font_size", "class"])
    [(10, 'b'), (10, 'a'), (48, 'a'), (48, 'b')]
    >>> _natural_order([100, 12, 9], ["font_size"])
    [9, 12, 100]
    """
    if "font_size" not in by:
        return columns
    at = by.index("font_size")

    def size(column: Any) -> float:
        value = column[at] if isinstance(column, tuple) else column
        return float(value)

    return sorted(columns, key=size)


def pivot_bounds(table: pd.DataFrame, pivot: pd.DataFrame, by: list[str]) -> Bounds:
    """Bootstrap interval bounds (over images) for each cell of :func:`wr_pivot`."""
    ok = table[~failed_mask(table)]
    lower, upper = empty_bounds(pivot)
    groups = [(CEILING_LABEL, ok.drop_duplicates("image_id"), "wr_original")]
    groups += [(vae, rows, "wr") for vae, rows in ok.groupby("vae", sort=False)]
    for name, rows, source in groups:
        for key, cell in rows.groupby(by if len(by) > 1 else by[0], sort=False):
            if key in pivot.columns:
                at = (list(pivot.index).index(name), list(pivot.columns).index(key))
                lower.iat[at], upper.iat[at] = mean_bounds(cell[source], ("pivot", name, key))
    return lower, upper


def images_per_column(table: pd.DataFrame, pivot: pd.DataFrame, by: list[str]) -> list[int]:
    """Distinct images behind each column of :func:`wr_pivot` (the sample size of a bin)."""
    ok = table[~failed_mask(table)].drop_duplicates("image_id")
    counts = ok.groupby(by if len(by) > 1 else by[0], sort=False).size()
    return [int(counts.get(key, 0)) for key in pivot.columns]


@dataclass(frozen=True)
class SizeEvidence:
    """One codec's mean WR at one font size, with its interval and n (successful images)."""

    size: float
    n: int
    wr: float
    lo: float
    hi: float
    needed: float  # SURVIVAL_RATIO x the ceiling at this size, over the same rows

    def text(self) -> str:
        """``20 px: 93.1 [88.0, 97.5], n = 6`` (WR's decimals from the metric table)."""
        d = wr_metric().digits
        interval = f" [{self.lo:.{d}f}, {self.hi:.{d}f}]" if math.isfinite(self.lo) else ""
        return f"{self.size:g} px: {self.wr:.{d}f}{interval}, n = {self.n}"


def size_evidence(
    table: pd.DataFrame, ratio: float = SURVIVAL_RATIO
) -> dict[str, list[SizeEvidence]]:
    """Per codec, each font size (largest first) with mean WR, its interval and n.

    The interval is the same one the codec x font size table shows (same seed key).
    """
    if "font_size" not in table.columns:
        return {}
    wr = wr_metric()
    rows = table[~failed_mask(table)]
    out: dict[str, list[SizeEvidence]] = {}
    for vae, group in rows.groupby("vae", sort=False):
        sizes = []
        for size, cell in group.groupby("font_size", sort=False):
            lo, hi = mean_bounds(cell["wr"], ("pivot", vae, size))
            sizes.append(
                SizeEvidence(
                    float(str(size)),
                    len(cell),
                    aggregate_metric(cell, wr),
                    lo,
                    hi,
                    ratio * aggregate_metric(cell, wr, CEILING),
                )
            )
        out[str(vae)] = sorted(sizes, key=lambda e: -e.size)
    return out


def too_thin(evidence: list[SizeEvidence], minimum: int = MIN_IMAGES_PER_SIZE) -> str | None:
    """ "evidence too thin (...)" when some font size has fewer than ``minimum`` images, else None.

    >>> too_thin([SizeEvidence(48, 4, 90.0, 80.0, 99.0, 81.0), SizeEvidence(10, 4, 0, 0, 0, 9)])
    'evidence too thin: n = 4 per font size (48, 10 px), fewer than 5'
    """
    fewest = min((e.n for e in evidence), default=0)
    if fewest >= minimum:
        return None
    counts = sorted({e.n for e in evidence})
    n = f"n = {counts[0]}" if len(counts) == 1 else f"n = {counts[0]} to {counts[-1]}"
    sizes = ", ".join(f"{e.size:g}" for e in evidence)
    return f"evidence too thin: {n} per font size ({sizes} px), fewer than {minimum}"


def threshold_warnings(table: pd.DataFrame, minimum: int = MIN_SIZES) -> list[str]:
    """Warnings for codecs whose threshold rests on fewer than ``minimum`` font sizes.

    >>> import pandas as pd
    >>> rows = pd.DataFrame({"vae": ["t", "t"], "font_size": [48, 10], "error": ["", ""]})
    >>> threshold_warnings(rows)  # doctest: +NORMALIZE_WHITESPACE
    ['t: the threshold rests on 2 font sizes (10, 48 px), fewer than 3: evaluate more
      images (e.g. without --limit) before quoting it.']
    """
    if "font_size" not in table.columns:
        return []
    ok = table[~failed_mask(table)]
    out = []
    for vae, group in ok.groupby("vae", sort=False):
        sizes = sorted(float(size) for size in group["font_size"].unique())
        if len(sizes) < minimum:
            shown = ", ".join(f"{size:g}" for size in sizes)
            out.append(
                f"{vae}: the threshold rests on {len(sizes)} font size"
                f"{'' if len(sizes) == 1 else 's'} ({shown} px), fewer than {minimum}: "
                "evaluate more images (e.g. without --limit) before quoting it."
            )
    return out


def failure_banner(table: pd.DataFrame) -> dict[str, Any] | None:
    """Failed rows, all rows and the first error (None when no row failed).

    >>> import pandas as pd
    >>> failure_banner(pd.DataFrame({"error": ["", "codec: hub unreachable"]}))
    {'failed': 1, 'rows': 2, 'every': False, 'first': 'codec: hub unreachable'}
    """
    if not len(table):
        return None
    failed = failed_mask(table)
    if not failed.any():
        return None
    errors = [str(e) for e in table.loc[failed, "error"] if str(e)]
    count = int(failed.sum())
    return {
        "failed": count,
        "rows": len(table),
        "every": count == len(table),
        "first": errors[0] if errors else "(no message)",
    }
