"""A small HTML report of ``vae_results.parquet``: the rendering (the figures come from
:mod:`glyphbench.vae_eval.analyse`).

``OUT/report/index.html`` holds

* the reader (OCR engine) used, name and version, its calibration figures (the OCR
  ceiling this run measures, :func:`reader_calibration`), and how times were measured
  (run.json ``timing``);
* a summary per codec: images, failures, mean WR / PA next to the OCR ceiling
  (the same metrics on the original image), the loss, PSNR and SSIM on the whole
  image and on the text region ("n/a" where the set has no text boxes), and the mean
  codec and OCR seconds per image;
* the *text-survival threshold* per codec and the first size below the absolute floor
  (:func:`~glyphbench.vae_eval.analyse.survival_threshold`,
  :func:`~glyphbench.vae_eval.analyse.first_size_below`),
  with the evidence behind them;
* the reader's limits: font sizes, character classes and backgrounds whose OCR
  ceiling is below :data:`glyphbench.vae_eval.analyse.READER_FLOOR` are marked "reader cannot read
  this" in every table, so the reader's limit is not read as codec loss;
* mean WR tables codec x font size, codec x character class, codec x background
  and codec x font size x character class (ceiling in the first row), each for the
  columns the table has;
* ``wr_vs_font_size.png``: WR against font size, one line per codec, the OCR
  ceiling dashed;
* before/after pairs: per codec, one image per font size (the first in set order),
  original and reconstruction side by side at full resolution (small text stays
  legible), with both OCR texts.

Rows whose reference is the original's OCR (no ground truth) are flagged in a note.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glyphbench import templates
from glyphbench.core.io import atomic_open, atomic_path, read_run_json
from glyphbench.core.schema import failed_mask
from glyphbench.report.tables import write_table_set
from glyphbench.scoring.table import METRICS
from glyphbench.templates import Cell, Table
from glyphbench.vae_eval.analyse import (
    ABSOLUTE_FLOOR,
    CEILING,
    CONFIDENCE,
    MIN_IMAGES_PER_SIZE,
    MIN_SIZES,
    N_BOOT,
    READER_FLOOR,
    SURVIVAL_RATIO,
    SizeEvidence,
    codec_labels,
    failure_banner,
    first_size_below,
    images_per_column,
    pivot_bounds,
    plain_value,
    reader_limits,
    size_evidence,
    summary_bounds,
    summary_metrics,
    summary_table,
    survival_threshold,
    threshold_warnings,
    too_thin,
    wr_by,
    wr_metric,
    wr_pivot,
)

if TYPE_CHECKING:
    import pandas as pd

    from glyphbench.scoring.table import Metric
    from glyphbench.vae_eval.analyse import Bounds


PAIRS_PER_CODEC = 6


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
#: "no successful row": those :func:`~glyphbench.vae_eval.metrics.image_scores` measures on
#: the boxes.
TEXT_REGION = ("psnr_text", "ssim_text")


def digits() -> dict[str, int]:
    """Decimals per column: each summary metric (and the first one's loss) under its short
    label, from the metric table; the time columns 2; any other column (the WR tables'
    bins) WR's own (:func:`_table`).

    >>> digits()["SSIM"], digits()["WR loss"], digits()["codec s/img"]
    (3, 1, 2)
    """
    metrics = summary_metrics()
    out = {m.short_label: m.digits for m in metrics}
    out[f"{metrics[0].short_label} loss"] = metrics[0].digits
    return {**out, **TIME_DIGITS}


def not_applicable() -> tuple[str, ...]:
    """Short labels (metric table) of the columns whose NaN reads "n/a": :data:`TEXT_REGION`.

    >>> not_applicable()
    ('PSNR text', 'SSIM text')
    """
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
    places, blank, default = digits(), not_applicable(), wr_metric().digits

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
    wr = wr_metric()
    return {
        f"words read on the original images ({wr.short_label} ceiling)": _fmt(
            ceiling.get(wr.short_label, math.nan), wr.digits
        ),
        "full card": f"glyphbench readers calibrate --reader {name} (docs/readers/{name}.md)",
    }


def plot_wr_vs_font_size(table: pd.DataFrame, path: Path) -> bool:
    """Write the WR-vs-font-size PNG; False (nothing written) without font sizes."""
    figure = wr_figure(table)
    if figure is None:
        return False
    import matplotlib.pyplot as plt

    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=110, bbox_inches="tight")
    with atomic_path(path.with_suffix(".svg")) as tmp:
        figure.savefig(tmp, format="svg", bbox_inches="tight")
    plt.close(figure)
    return True


def write_tables(table: pd.DataFrame, folder: Path) -> list[str]:
    """The summary and the WR pivots as CSV (full precision), Markdown and LaTeX files."""
    if not len(table):
        return []
    files = write_table_set(
        folder, "summary", summary_table(table).reset_index(), caption=summary_caption()
    )
    wr = wr_metric()
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
    metrics = [m for m in summary_metrics() if m.name not in TEXT_REGION]
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

    >>> axis_label(wr_metric())
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

    plt.rcParams["text.parse_math"] = False  # codec labels are text: "$" is no math

    figure, axes = plt.subplots(figsize=(8.5, 4.5))
    ceiling = wr_by(ok.drop_duplicates("image_id"), "font_size", CEILING)
    # A wide grey band, under the codecs: a codec equal to it (identity) stays visible on
    # top and says so in the legend, instead of hiding the ceiling exactly.
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
        means = wr_by(group, "font_size")
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
    axes.set_ylabel(axis_label(wr_metric()))
    axes.set_ylim(-3, 103)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
    figure.tight_layout()
    return figure


def _pairs(table: pd.DataFrame, out: Path) -> list[dict[str, Any]]:
    """Per codec: one before/after pair per font size (first in set order), with OCR texts."""
    wr = wr_metric()
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

    def size(value: float | None, empty: str, thin: str | None) -> Cell:
        if thin:
            return Cell(thin, cls="na")
        return Cell(empty if value is None else f"{value:g} px")

    wr = wr_metric()
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
                Cell(shown, cls="evidence"),  # wraps at its "; " (not one long line)
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
            "title": f"Mean {wr_metric().short_label} by {title} x codec",
            "table": _table(pivot, " / ".join(by), bounds=(lower, upper)),
        }
    pivot, lower, upper = frames
    marked = {_limit_label(v, by, limits) for v in limits.get(by[0], {})}
    return {
        "title": f"Mean {wr_metric().short_label} by codec x {title}",
        "table": _table(pivot, "codec", weak=marked.__contains__, bounds=(lower, upper)),
    }


READER_MARK = " (reader cannot read this)"


def _limit_label(key: Any, by: list[str], limits: dict[str, dict[Any, float]]) -> str:
    """A pivot label, marked when one of its values is beyond the reader."""
    values = key if isinstance(key, tuple) else (key,)
    pairs = zip(by, values, strict=True)
    weak = any(plain_value(value) in limits.get(attribute, {}) for attribute, value in pairs)
    return _label(key) + (READER_MARK if weak else "")


def _limit_notes(limits: dict[str, dict[Any, float]]) -> list[str]:
    names = {"font_size": "font size", "char_class": "character class", "background": "background"}
    wr = wr_metric()
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
            "reference, so the OCR ceiling is 100% by construction there and "
            f"{wr_metric().short_label} measures agreement with it."
        )
    return notes


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
        "timing": read_run_json(out).get("timing", ""),
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
        "wr": wr_metric().short_label,
        "pa": summary_metrics()[1].short_label,
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


def write_report(table: pd.DataFrame, out: Path, *, notes: list[str] | None = None) -> Path:
    """Write ``out/report/index.html``, its figure (PNG and SVG) and its tables (CSV,
    Markdown, LaTeX under ``report/tables/``) from the results table; returns the HTML path.

    Codecs are shown by short labels (:func:`codec_labels`); the page lists each label's
    full spec, and ``vae_results.parquet`` keeps the specs.
    """
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
