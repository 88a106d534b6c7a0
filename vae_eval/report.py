"""A small HTML report of ``vae_results.parquet``: a pure function of that table.

``OUT/report/index.html`` holds

* the reader (OCR engine) used, name and version, its calibration figures (a slot:
  :func:`reader_calibration` returns None until the readers' calibration lands), and
  how times were measured (run.json ``timing``);
* a summary per codec: images, failures, mean WR / PA next to the OCR ceiling
  (the same metrics on the original image), the loss, PSNR and SSIM on the whole
  image and on the text region ("n/a" where the set has no text boxes), and the mean
  codec and OCR seconds per image;
* the *text-survival threshold* per codec: the smallest font size from which
  upward the codec keeps at least :data:`SURVIVAL_RATIO` of the ceiling's WR at
  every size (see :func:`survival_threshold`), and the first size (from the largest
  down) where its mean WR falls below :data:`ABSOLUTE_FLOOR` (:func:`first_size_below`);
* the reader's limits: font sizes, character classes and backgrounds whose OCR
  ceiling is below :data:`READER_FLOOR` are marked "reader cannot read this" in
  every table (:func:`reader_limits`), so the reader's limit is not read as codec loss;
* mean WR tables codec x font size, codec x character class, codec x background
  and codec x font size x character class (ceiling in the first row), each for the
  columns the table has;
* ``wr_vs_font_size.png``: WR against font size, one line per codec, the OCR
  ceiling dashed;
* before/after pairs: per codec, one image per font size (the first in set order),
  original and reconstruction side by side at full resolution (small text stays
  legible), with both OCR texts.

Means skip failed rows (NaN metrics); failures are counted in the summary. Rows
whose reference is the original's OCR (no ground truth) are flagged in a note.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.core.schema import failed_mask
from bench.scoring.bootstrap import MIN_UNITS

if TYPE_CHECKING:
    import pandas as pd

    from bench.scoring.table import Metric
    from bench.templates import Cell, Table

    #: Lower and upper interval bounds, each a frame shaped like the table it bounds.
    Bounds = tuple[pd.DataFrame, pd.DataFrame]

#: Share of the OCR ceiling's WR a codec must keep at a font size to "preserve" it.
SURVIVAL_RATIO = 0.9
PAIRS_PER_CODEC = 6
#: Below this mean OCR-ceiling WR (%) a font size, character class or background is one
#: the reader cannot read: what a codec scores there is the reader's limit, not codec loss.
READER_FLOOR = 50.0
#: "First size below": the largest font size where a codec's mean WR falls under this (%).
ABSOLUTE_FLOOR = 50.0
#: A text-survival threshold resting on fewer font sizes than this gets a warning.
MIN_SIZES = 3
#: Fewest successful images at every font size for a threshold to be stated (else "evidence
#: too thin"): the report's one minimum for an interval (:data:`bench.scoring.bootstrap.MIN_UNITS`).
MIN_IMAGES_PER_SIZE = MIN_UNITS
#: Bootstrap of every interval on the page: resamples, seed, level (images resampled).
N_BOOT = 1000
SEED = 0
CONFIDENCE = 0.95


#: The result column of WR on the original images (the OCR ceiling).
CEILING = "wr_original"


def _wr_by(rows: pd.DataFrame, by: str, column: str = "wr") -> pd.Series:
    """WR's aggregate (metric table, family ``vae``) per value of ``by``, sorted by value.

    ``column`` holds the per-image WR (``wr``, or :data:`CEILING` for the original images).
    """
    from bench.scoring.table import METRICS

    values = rows[[by, column]].set_axis([by, "wr"], axis=1)
    return METRICS.aggregate_groups(values, by, "wr", "vae", sort=True)


def _pivot_aggfunc() -> str:
    """WR's aggregate as a pivot-table function: the metric table's per-image mean.

    The codec x attribute tables average one value per image; a WR aggregated any
    other way (pooled, derived) could not be pivoted so, and is refused here.
    """
    from bench.scoring.table import METRICS, Mean

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
            {"wr": _wr_by(group, "font_size"), "wr_original": _wr_by(group, "font_size", CEILING)}
        ).sort_index(ascending=False)
        threshold: float | None = None
        for size, row in means.iterrows():
            if row["wr"] >= ratio * row["wr_original"]:
                threshold = float(str(size))
            else:
                break
        out[str(vae)] = threshold
    return out


def _fmt(value: object, digits: int = 1) -> str:
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        if math.isinf(value):
            return "∞"
        return f"{value:.{digits}f}"
    return str(value)


def _label(key: object) -> str:
    return " / ".join(map(str, key)) if isinstance(key, tuple) else str(key)


#: Decimals of the summary's time columns (the metric columns: their table ``digits``).
TIME_DIGITS = {"codec s/img": 2, "OCR s/img": 2}
#: Metrics whose NaN means "not measurable here" (the set has no text boxes) rather than
#: "no successful row": those :func:`vae_eval.metrics.image_scores` measures on the boxes.
TEXT_REGION = ("psnr_text", "ssim_text")


def _wr() -> Metric:
    """WR's record in the metric table (family ``vae``): the metric of every WR table."""
    from bench.scoring.table import METRICS

    return METRICS.get("wr", "vae")


def digits() -> dict[str, int]:
    """Decimals per column: each summary metric (and the first one's loss) under its short
    label, from the metric table; the time columns 2; any other column (the WR tables'
    bins) WR's own (:func:`_table`).

    >>> digits()["SSIM"], digits()["WR loss"], digits()["codec s/img"]
    (3, 1, 2)
    """
    metrics = _summary_metrics()
    out = {m.short_label: m.digits for m in metrics}
    out[f"{metrics[0].short_label} loss"] = metrics[0].digits
    return {**out, **TIME_DIGITS}


def not_applicable() -> tuple[str, ...]:
    """Short labels (metric table) of the columns whose NaN reads "n/a": :data:`TEXT_REGION`.

    >>> not_applicable()
    ('PSNR text', 'SSIM text')
    """
    from bench.scoring.table import METRICS

    return tuple(METRICS.get(name, "vae").short_label for name in TEXT_REGION)


def _table(
    frame: pd.DataFrame,
    index_name: str = "",
    weak: Callable[[Any], bool] | None = None,
    bounds: Bounds | None = None,
) -> Table:
    """Index as the first (header) column; numbers with the decimals of :func:`digits`.

    ``weak(column)`` marks the cells of columns the reader cannot read (shown muted);
    ``bounds`` (frames shaped like ``frame``: lower, upper) adds an interval to each
    cell whose bounds are finite.
    """
    from bench.templates import Cell, Table

    places, blank, default = digits(), not_applicable(), _wr().digits

    def cell(row: int, col: int, column: str, value: Any) -> Cell:
        if column in blank and isinstance(value, float) and math.isnan(value):
            return Cell("n/a", cls="na")
        shown = places.get(column, default)
        ci = _interval_text(bounds, row, col, shown) if bounds is not None else ""
        return Cell(_fmt(value, shown), ci=ci, cls="reader-limit" if weak and weak(column) else "")

    names = [_label(c) for c in frame.columns]
    rows = []
    for i, (key, values) in enumerate(
        zip(frame.index, frame.astype(object).itertuples(index=False), strict=True)
    ):
        cells = [
            cell(i, j, name, value)
            for j, (name, value) in enumerate(zip(names, values, strict=True))
        ]
        rows.append([Cell(_label(key)), *cells])
    return Table([index_name, *names], rows, row_headers=True)


def _interval_text(bounds: Bounds, row: int, col: int, digits: int) -> str:
    lo, hi = (float(frame.iat[row, col]) for frame in bounds)
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return ""
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def mean_bounds(values: Any, key: tuple[object, ...]) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``values`` over images (NaNs dropped).

    Each image is its own resampling unit; the one kernel
    :func:`bench.scoring.bootstrap.mean_interval`
    draws the resamples, seeded by :data:`SEED` and ``key`` (same input, same interval).
    Fewer than two finite values, or any infinite one (a pixel-identical PSNR), give NaN.

    >>> lo, hi = mean_bounds([0.0, 100.0] * 20, ("doc",))
    >>> bool(30 < lo < 50 < hi < 70)
    True
    >>> mean_bounds([80.0], ("doc",))
    (nan, nan)
    """
    import numpy as np

    from bench.scoring.bootstrap import mean_interval, seeded_rng

    data = np.asarray(values, dtype="float64")
    data = data[~np.isnan(data)]
    if data.size < 2 or not np.isfinite(data).all():
        return (math.nan, math.nan)
    rng = seeded_rng(SEED, key)
    return mean_interval(data, n_boot=N_BOOT, rng=rng, confidence=CONFIDENCE)


#: The row of the summary and of every WR table that holds the OCR ceiling (computed once).
CEILING_LABEL = "OCR ceiling (original)"


def _summary_metrics() -> list[Metric]:
    """The ``vae`` family's summary metrics, in their table order (WR, PA, PSNR, SSIM, ...)."""
    from bench.scoring.table import METRICS

    return [METRICS.get(name, "vae") for name in METRICS.summary_names(["vae"])]


def _aggregate(rows: pd.DataFrame, metric: Metric, column: str | None = None) -> float:
    """``metric``'s aggregate from the metric table over ``rows``, read from ``column``.

    ``column`` defaults to the metric's own (``wr_original``: the same metric on the
    original images). NaN when the table predates the column or every value is NaN.
    """
    from bench.scoring.table import METRICS

    return METRICS.aggregate_column(rows, metric.name, column or metric.name, "vae")


def summary_sources() -> tuple[dict[str, str], dict[str, str]]:
    """(summary column -> result column of each codec row, ceiling column -> result column).

    Read from the metric table: each ``vae`` summary metric under its short label, the
    first one's loss (``WR loss``: ceiling minus codec, per image) after it; the ceiling
    row holds the text metrics on the original images (``wr_original``, ``pa_original``).

    >>> summary_sources()[1]
    {'WR': 'wr_original', 'PA': 'pa_original'}
    """
    metrics = _summary_metrics()
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
    successfully, and shown once (issue 22: it used to be repeated per codec, each
    time with its own interval). Each codec's ``WR loss`` stays paired: ceiling
    minus codec on that codec's own successful images. Metrics, their short labels
    and their aggregates come from the metric table (family ``vae``); a PSNR mean is
    +inf when any reconstruction is pixel-identical, and the text-region columns are
    NaN (n/a) when the set has no text boxes.
    """
    import pandas as pd

    metrics = {m.name: m for m in _summary_metrics()}
    codec_sources, ceiling_sources = summary_sources()
    ok_all = table[~failed_mask(table)]
    distinct = ok_all.drop_duplicates("image_id") if "image_id" in ok_all else ok_all
    ceiling: dict[str, Any] = {"vae": CEILING_LABEL, "images": len(distinct), "failed": math.nan}
    for column, source in ceiling_sources.items():
        ceiling[column] = _aggregate(distinct, metrics[source.removesuffix("_original")], source)
    records: list[dict[str, Any]] = [ceiling]
    for vae, group in table.groupby("vae", sort=False):
        failed = failed_mask(group)
        ok = group[~failed]
        record: dict[str, Any] = {"vae": vae, "images": len(group), "failed": int(failed.sum())}
        for column, source in codec_sources.items():
            record[column] = _aggregate(ok, metrics[source.removesuffix("_loss")], source)
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
    lower, upper = _empty_bounds(summary)
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


def _empty_bounds(frame: pd.DataFrame) -> Bounds:
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
    figure issue 16 quotes ("first font size below 50% WR").

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
        means = _wr_by(group, "font_size").sort_index(ascending=False)
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
        ceiling = _wr_by(rows, attribute, CEILING)
        weak = {_plain(value): float(wr) for value, wr in ceiling.items() if wr < floor}
        if weak:
            out[attribute] = weak
    return out


def _plain(value: Any) -> Any:
    """numpy scalars as Python values (so they print and compare plainly)."""
    return value.item() if hasattr(value, "item") else value


def reader_calibration(table: pd.DataFrame) -> dict[str, Any] | None:
    """The reader's calibration, as far as this table measures it: the OCR ceiling on
    the original images (the reader's own accuracy on this known text).

    The reader's full card (typo faithfulness, long text, real images) is measured by
    ``glyphbench readers calibrate``; the page links to its documented figures.
    """
    if not len(table) or "vae" not in table.columns:
        return None
    name = str(table["ocr_engine"].iloc[0]).split("?")[0]
    ceiling = summary_table(table).iloc[0]
    wr = _wr()
    return {
        f"words read on the original images ({wr.short_label} ceiling)": _fmt(
            ceiling.get(wr.short_label, math.nan), wr.digits
        ),
        "full card": f"glyphbench readers calibrate --reader {name} (docs/readers/{name}.md)",
    }


def codec_labels(specs: Iterable[str]) -> dict[str, str]:
    """Short labels for codec specs: a path target becomes its folder or file name.

    Two specs that would share a label keep their full spec.

    >>> labels = codec_labels(["taesd:/data/shared/taef2", "identity", "resize?factor=8"])
    >>> list(labels.values())
    ['taesd:taef2', 'identity', 'resize?factor=8']
    """
    from bench.core.registry import Spec

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
    lower, upper = _empty_bounds(pivot)
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


def plot_wr_vs_font_size(table: pd.DataFrame, path: Path) -> bool:
    """Write the WR-vs-font-size PNG; False (nothing written) without font sizes."""
    figure = wr_figure(table)
    if figure is None:
        return False
    import matplotlib.pyplot as plt

    from bench.core.io import atomic_path

    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    with atomic_path(path.with_suffix(".svg")) as tmp:
        figure.savefig(tmp, format="svg", bbox_inches="tight")
    plt.close(figure)
    return True


def write_tables(table: pd.DataFrame, folder: Path) -> list[str]:
    """The summary and the WR pivots as CSV (full precision), Markdown and LaTeX files."""
    from bench.report.tables import write_table_set

    if not len(table):
        return []
    files = write_table_set(
        folder, "summary", summary_table(table).reset_index(), caption=summary_caption()
    )
    wr = _wr()
    for by in (["font_size"], ["char_class"]):
        if by[0] in table.columns:
            pivot = wr_pivot(table, by).reset_index()
            caption = f"{wr.short_label} ({wr.unit}) by {by[0]}"
            files += write_table_set(folder, f"wr_by_{by[0]}", pivot, caption=caption)
    return files


def summary_caption() -> str:
    """The summary table's caption: its metrics' short labels and units (metric table).

    >>> summary_caption()
    'VAE text survival per codec (WR, PA in %; PSNR, SSIM), original first.'
    """
    metrics = [m for m in _summary_metrics() if m.name not in TEXT_REGION]
    by_unit: dict[str, list[str]] = {}
    for metric in metrics:
        by_unit.setdefault(metric.unit if metric.inputs == "text" else "", []).append(
            metric.short_label
        )
    parts = [
        ", ".join(labels) + (f" in {unit}" if unit else "") for unit, labels in by_unit.items()
    ]
    return f"VAE text survival per codec ({'; '.join(parts)}), original first."


def axis_label(metric: Metric) -> str:
    """A metric's axis label: its label's words, its short label, its unit (metric table).

    >>> axis_label(_wr())
    'word retention WR (%)'
    """
    words = metric.label.removesuffix(f" ({metric.short_label})")
    words = words[:1].lower() + words[1:]
    named = words if words == metric.short_label else f"{words} {metric.short_label}"
    return f"{named} ({metric.unit})" if metric.unit else named


def wr_figure(table: pd.DataFrame) -> Any:
    """The WR-vs-font-size matplotlib figure (None without font sizes or successful rows).

    The legend sits to the right of the axes, so it never covers a data point.
    """
    if "font_size" not in table.columns:
        return None
    ok = table[~failed_mask(table)]
    if ok.empty:
        return None
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np
    from matplotlib.ticker import NullLocator

    figure, axes = plt.subplots(figsize=(8.5, 4.5))
    ceiling = _wr_by(ok.drop_duplicates("image_id"), "font_size", CEILING)
    # A wide grey band, under the codecs: a codec equal to it (identity) stays visible on
    # top and says so in the legend, instead of hiding the ceiling exactly (issue 33).
    axes.plot(
        ceiling.index,
        ceiling.values,
        color="0.55",
        linewidth=7,
        alpha=0.35,
        solid_capstyle="round",
        zorder=1,
        label="OCR ceiling (original)",
    )
    for vae, group in ok.groupby("vae", sort=False):
        means = _wr_by(group, "font_size")
        same = means.reindex(ceiling.index)
        equal = len(means) == len(ceiling) and bool(np.allclose(same, ceiling, equal_nan=True))
        label = f"{vae} (= OCR ceiling)" if equal else str(vae)
        axes.plot(means.index, means.values, marker="o", label=label, zorder=3)
    axes.set_xscale("log")
    axes.xaxis.set_minor_locator(NullLocator())  # only the evaluated sizes are labelled
    sizes = sorted(ok["font_size"].unique())
    axes.set_xticks(sizes)
    axes.set_xticklabels([str(s) for s in sizes])
    axes.set_xlabel("font size (px)")
    axes.set_ylabel(axis_label(_wr()))
    axes.set_ylim(-3, 103)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    figure.tight_layout()
    return figure


def _pairs(table: pd.DataFrame, out: Path) -> list[dict[str, Any]]:
    """Per codec: one before/after pair per font size (first in set order), with OCR texts."""
    wr = _wr()
    codecs = []
    for vae, group in table.groupby("vae", sort=False):
        if "font_size" in group.columns:
            picks = group.sort_values("image_index").drop_duplicates("font_size")
        else:
            picks = group.sort_values("image_index")
        pairs = []
        for row in picks.head(PAIRS_PER_CODEC).itertuples():
            before = (
                f"../{row.original_path}"
                if row.original_path and (out / str(row.original_path)).exists()
                else ""
            )
            after = f"../{row.reconstruction_path}" if row.reconstruction_path else ""
            pairs.append(
                {
                    "image_id": str(row.image_id),
                    "truth": str(row.truth),
                    "before": str(row.ocr_original),
                    "after": str(row.ocr_reconstruction),
                    "wr": _fmt(float(row.wr), wr.digits),
                    "ceiling": _fmt(float(row.wr_original), wr.digits),
                    "error": str(row.error or ""),
                    "images": [src for src in (before, after) if src],
                }
            )
        codecs.append({"name": str(vae), "pairs": pairs})
    return codecs


#: Mean WR tables: (columns, title); two columns are shown one row per cell.
PIVOTS = (
    (["font_size"], "font size"),
    (["char_class"], "character class"),
    (["background"], "background"),
    (["font_size", "char_class"], "font size x character class"),
)


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
        d = _wr().digits
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
    wr = _wr()
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
                    _aggregate(cell, wr),
                    lo,
                    hi,
                    ratio * _aggregate(cell, wr, CEILING),
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


def _thresholds_table(
    thresholds: dict[str, float | None],
    below: dict[str, float | None],
    evidence: dict[str, list[SizeEvidence]],
) -> Table:
    """Threshold, first size below and the evidence behind them, per codec.

    Both verdicts are stated only where every font size has at least
    :data:`MIN_IMAGES_PER_SIZE` images; the evidence column always shows each
    size's mean WR with its interval and n (the size the threshold rests on, and
    the first size that fails).
    """
    from bench.templates import Cell, Table

    def size(value: float | None, empty: str, thin: str | None) -> Cell:
        if thin:
            return Cell(thin, cls="na")
        return Cell(empty if value is None else f"{value:g} px")

    wr = _wr()
    columns = [
        "codec",
        f"survival threshold (keeps ≥ {SURVIVAL_RATIO:.0%} of the ceiling)",
        f"first size below {ABSOLUTE_FLOOR:g}{wr.unit} {wr.short_label}",
        f"{wr.short_label} per size, {CONFIDENCE:.0%} interval, n (largest first; needed: "
        f"{SURVIVAL_RATIO:.0%} of the ceiling)",
    ]
    rows = []
    for vae, threshold in thresholds.items():
        sizes = evidence.get(vae, [])
        thin = too_thin(sizes)
        shown = "; ".join(
            f"{e.text()} ({'≥' if e.wr >= e.needed else '<'} {e.needed:.{wr.digits}f})"
            for e in sizes
        )
        rows.append(
            [
                Cell(vae),
                size(threshold, "none", thin),
                size(below.get(vae), "none (all sizes ≥ floor)", thin),
                Cell(shown, cls="evidence"),  # wraps at its "; " (issue 33: not one long line)
            ]
        )
    return Table(columns, rows, row_headers=True)


def _pivot_tables(table: pd.DataFrame, limits: dict[str, dict[Any, float]]) -> list[dict[str, Any]]:
    out = []
    for by, title in PIVOTS:
        if all(column in table.columns for column in by):
            out.append(_pivot_table(table, by, title, limits))
    return out


#: The row (or, in the two-attribute tables, column) with each bin's sample size.
IMAGES_LABEL = "images (n)"


def _pivot_table(
    table: pd.DataFrame, by: list[str], title: str, limits: dict[str, dict[Any, float]]
) -> dict[str, Any]:
    """One mean-WR table with intervals and the number of images behind each bin."""
    pivot = wr_pivot(table, by)
    lower, upper = pivot_bounds(table, pivot, by)
    counts = images_per_column(table, pivot, by)
    labels = [_limit_label(c, by, limits) for c in pivot.columns]
    frames = [frame.set_axis(labels, axis=1) for frame in (pivot, lower, upper)]
    frames[0] = frames[0].astype(object)
    frames[0].loc[IMAGES_LABEL] = counts
    for bound in frames[1:]:
        bound.loc[IMAGES_LABEL] = math.nan
    if len(by) > 1:  # many cells: one row per cell, one column per codec reads better
        pivot, lower, upper = (frame.T for frame in frames)
        return {
            "title": f"Mean {_wr().short_label} by {title} x codec",
            "table": _table(pivot, " / ".join(by), bounds=(lower, upper)),
        }
    pivot, lower, upper = frames
    marked = {_limit_label(v, by, limits) for v in limits.get(by[0], {})}
    return {
        "title": f"Mean {_wr().short_label} by codec x {title}",
        "table": _table(pivot, "codec", weak=marked.__contains__, bounds=(lower, upper)),
    }


READER_MARK = " (reader cannot read this)"


def _limit_label(key: Any, by: list[str], limits: dict[str, dict[Any, float]]) -> str:
    """A pivot label, marked when one of its values is beyond the reader."""
    values = key if isinstance(key, tuple) else (key,)
    pairs = zip(by, values, strict=True)
    weak = any(_plain(value) in limits.get(attribute, {}) for attribute, value in pairs)
    return _label(key) + (READER_MARK if weak else "")


def _limit_notes(limits: dict[str, dict[Any, float]]) -> list[str]:
    names = {"font_size": "font size", "char_class": "character class", "background": "background"}
    wr = _wr()
    notes = []
    for attribute, weak in limits.items():
        for value, ceiling in weak.items():
            shown = f"{value} px" if attribute == "font_size" else str(value)
            notes.append(
                f"{names.get(attribute, attribute)} {shown}: the reader's own ceiling "
                f"({wr.short_label} on the original images) is {ceiling:.{wr.digits}f}{wr.unit} < "
                f"{READER_FLOOR:g}{wr.unit}: the reader cannot read this, so low {wr.short_label} "
                "there is the reader's limit, not codec loss."
            )
    return notes


def _notes(table: pd.DataFrame, notes: list[str] | None) -> list[str]:
    notes = list(notes or [])
    if len(table) and (table["truth_source"] == "ocr_original").any():
        share = (table["truth_source"] == "ocr_original").mean() * 100
        notes.append(
            f"{share:.0f}% of rows have no ground truth: the original image's OCR is the "
            f"reference, so the OCR ceiling is 100% by construction there and {_wr().short_label} "
            "measures agreement with it."
        )
    return notes


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


def page_context(
    table: pd.DataFrame, out: Path, folder: Path, notes: list[str] | None = None
) -> dict[str, Any]:
    """Everything ``vae_report.html.j2`` shows (writes the WR-vs-font-size PNG into ``folder``)."""
    context: dict[str, Any] = {
        "title": "VAE text survival",
        "n_rows": len(table),
        "n_codecs": table["vae"].nunique() if len(table) else 0,
        "ocr": "",
        "reader": None,
        "reader_calibration": None,
        "reader_limits": [],
        "reader_floor": f"{READER_FLOOR:g}%",
        "timing": _run_facts(out).get("timing", ""),
        "notes": _notes(table, notes),
        "summary": None,
        "thresholds": None,
        "ratio": f"{SURVIVAL_RATIO:.0%}",
        "plot": "",
        "pivots": [],
        "pairs": [],
        "failures": failure_banner(table),
        "threshold_warnings": [],
        "min_sizes": MIN_SIZES,
        "min_per_size": MIN_IMAGES_PER_SIZE,
        "level": f"{CONFIDENCE:.0%}",
        "n_boot": N_BOOT,
        # the metrics' short labels, as the tables head them (metric table)
        "wr": _wr().short_label,
        "pa": _summary_metrics()[1].short_label,
    }
    if not len(table):
        return context
    thresholds = survival_threshold(table)
    limits = reader_limits(table)
    context.update(
        ocr=f"{table['ocr_engine'].iloc[0]} ({table['ocr_version'].iloc[0]})",
        reader=_reader(table),
        reader_calibration=reader_calibration(table),
        reader_limits=_limit_notes(limits),
        summary=_summary(table),
        thresholds=(
            _thresholds_table(thresholds, first_size_below(table), size_evidence(table))
            if thresholds
            else None
        ),
        threshold_warnings=threshold_warnings(table) if thresholds else [],
        plot="wr_vs_font_size.png"
        if plot_wr_vs_font_size(table, folder / "wr_vs_font_size.png")
        else "",
        pivots=_pivot_tables(table, limits) if (~failed_mask(table)).any() else [],
        pairs=_pairs(table, out),
    )
    return context


def _summary(table: pd.DataFrame) -> Table:
    summary = summary_table(table)
    return _table(summary, "codec", bounds=summary_bounds(table, summary))


def _reader(table: pd.DataFrame) -> dict[str, str]:
    """Name and version of the reader (OCR engine) every row was read with."""
    pairs = table[["ocr_engine", "ocr_version"]].drop_duplicates().astype(str)
    return {
        "name": ", ".join(pairs["ocr_engine"].unique()),
        "version": "; ".join(pairs["ocr_version"].unique()),
    }


def _run_facts(out: Path) -> dict[str, Any]:
    """run.json of the evaluation in ``out`` ({} when absent or unreadable)."""
    import json

    try:
        facts = json.loads((out / "run.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return facts if isinstance(facts, dict) else {}


def write_report(table: pd.DataFrame, out: Path, *, notes: list[str] | None = None) -> Path:
    """Write ``out/report/index.html``, its figure (PNG and SVG) and its tables (CSV,
    Markdown, LaTeX under ``report/tables/``) from the results table; returns the HTML path.

    Codecs are shown by short labels (:func:`codec_labels`); the page lists each label's
    full spec, and ``vae_results.parquet`` keeps the specs.
    """
    from bench import templates
    from bench.core.io import atomic_open

    folder = out / "report"
    folder.mkdir(parents=True, exist_ok=True)
    labels = codec_labels(table["vae"].astype(str)) if len(table) else {}
    shown = table.assign(vae=table["vae"].astype(str).map(labels)) if len(table) else table
    context = page_context(shown, out, folder, notes)
    context["codec_specs"] = {label: spec for spec, label in labels.items() if label != spec}
    write_tables(shown, folder / "tables")
    page = templates.render("vae_report.html.j2", **context)
    with atomic_open(folder / "index.html", "w", encoding="utf-8") as handle:
        handle.write(page)
    return folder / "index.html"
