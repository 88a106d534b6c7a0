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
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bench.schema import failed_mask

if TYPE_CHECKING:
    import pandas as pd

    from bench.templates import Cell, Table

#: Share of the OCR ceiling's WR a codec must keep at a font size to "preserve" it.
SURVIVAL_RATIO = 0.9
PAIRS_PER_CODEC = 6
#: Below this mean OCR-ceiling WR (%) a font size, character class or background is one
#: the reader cannot read: what a codec scores there is the reader's limit, not codec loss.
READER_FLOOR = 50.0
#: "First size below": the largest font size where a codec's mean WR falls under this (%).
ABSOLUTE_FLOOR = 50.0


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
    if "font_size" not in table.columns:
        return {}
    rows = table[~failed_mask(table)]
    out: dict[str, float | None] = {}
    for vae, group in rows.groupby("vae", sort=False):
        means = group.groupby("font_size")[["wr", "wr_original"]].mean().sort_index(ascending=False)
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


#: Decimals per summary column (others: 1).
DIGITS = {"SSIM": 3, "SSIM text": 3, "codec s/img": 2, "OCR s/img": 2}
#: Columns whose NaN means "not measurable here" rather than "no successful row".
NOT_APPLICABLE = ("PSNR text", "SSIM text")


def _table(
    frame: pd.DataFrame, index_name: str = "", weak: Callable[[Any], bool] | None = None
) -> Table:
    """Index as the first (header) column; SSIM with 3 decimals, other numbers with 1.

    ``weak(column)`` marks the cells of columns the reader cannot read (shown muted).
    """
    from bench.templates import Cell, table_from_frame

    def cell(column: str, value: Any) -> Cell:
        if column in NOT_APPLICABLE and isinstance(value, float) and math.isnan(value):
            return Cell("n/a", cls="na")
        text = _fmt(value, DIGITS.get(column, 1))
        return Cell(text, cls="reader-limit") if weak and weak(column) else Cell(text)

    return table_from_frame(frame, cell, index=index_name, label=_label)


def summary_table(table: pd.DataFrame) -> pd.DataFrame:
    """Per codec (in table order): counts and mean metrics of the successful rows."""
    import pandas as pd

    records = []
    for vae, group in table.groupby("vae", sort=False):
        failed = failed_mask(group)
        ok = group[~failed]
        records.append(
            {
                "vae": vae,
                "images": len(group),
                "failed": int(failed.sum()),
                "WR": ok["wr"].mean(),
                "WR ceiling": ok["wr_original"].mean(),
                "WR loss": ok["wr_loss"].mean(),
                "PA": ok["pa"].mean(),
                "PA ceiling": ok["pa_original"].mean(),
                "PSNR": ok["psnr"].mean(),  # +inf when any reconstruction is pixel-identical
                "SSIM": ok["ssim"].mean(),
                "PSNR text": _mean(ok, "psnr_text"),  # NaN (n/a): the set has no text boxes
                "SSIM text": _mean(ok, "ssim_text"),
                "codec s/img": _mean(ok, "codec_seconds"),
                "OCR s/img": _mean(ok, "ocr_seconds"),
            }
        )
    return pd.DataFrame(records).set_index("vae")


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
        means = group.groupby("font_size")["wr"].mean().sort_index(ascending=False)
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
        ceiling = rows.groupby(attribute)["wr_original"].mean()
        weak = {_plain(value): float(wr) for value, wr in ceiling.items() if wr < floor}
        if weak:
            out[attribute] = weak
    return out


def _plain(value: Any) -> Any:
    """numpy scalars as Python values (so they print and compare plainly)."""
    return value.item() if hasattr(value, "item") else value


def reader_calibration(table: pd.DataFrame) -> dict[str, Any] | None:
    """The reader's calibration figures for the report (its accuracy on known text).

    A slot: the readers' calibration (issue on readers) is not available yet, so this
    returns None and the report says "not available". When it lands, return a mapping
    of label -> figure here; the template shows it under "Reader".
    """
    return None


def wr_pivot(table: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Mean WR with codecs as rows and ``by`` as columns; first row is the OCR ceiling."""
    import pandas as pd

    ok = table[~failed_mask(table)]
    pivot = ok.pivot_table(index="vae", columns=by, values="wr", aggfunc="mean", sort=False)
    ceiling = ok.drop_duplicates("image_id").pivot_table(
        columns=by, values="wr_original", aggfunc="mean"
    )
    ceiling.index = pd.Index(["OCR ceiling (original)"])
    combined = pd.concat([ceiling, pivot])
    if "font_size" in by and len(by) == 1:
        combined = combined[sorted(combined.columns, reverse=True)]
    return combined


def plot_wr_vs_font_size(table: pd.DataFrame, path: Path) -> bool:
    """Write the WR-vs-font-size PNG; False (nothing written) without font sizes."""
    if "font_size" not in table.columns:
        return False
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import NullLocator

    from bench.io import atomic_path

    ok = table[~failed_mask(table)]
    if ok.empty:
        return False
    figure, axes = plt.subplots(figsize=(7, 4.5))
    ceiling = ok.drop_duplicates("image_id").groupby("font_size")["wr_original"].mean()
    axes.plot(ceiling.index, ceiling.values, "k--", label="OCR ceiling (original)")
    for vae, group in ok.groupby("vae", sort=False):
        means = group.groupby("font_size")["wr"].mean()
        axes.plot(means.index, means.values, marker="o", label=str(vae))
    axes.set_xscale("log")
    axes.xaxis.set_minor_locator(NullLocator())  # only the evaluated sizes are labelled
    sizes = sorted(ok["font_size"].unique())
    axes.set_xticks(sizes)
    axes.set_xticklabels([str(s) for s in sizes])
    axes.set_xlabel("font size (px)")
    axes.set_ylabel("word retention WR (%)")
    axes.set_ylim(-3, 103)
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="lower right")
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=110)
    plt.close(figure)
    return True


def _pairs(table: pd.DataFrame, out: Path) -> list[dict[str, Any]]:
    """Per codec: one before/after pair per font size (first in set order), with OCR texts."""
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
                    "wr": _fmt(float(row.wr)),
                    "ceiling": _fmt(float(row.wr_original)),
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


def _thresholds_table(thresholds: dict[str, float | None], below: dict[str, float | None]) -> Table:
    from bench.templates import Cell, Table

    def size(value: float | None, empty: str) -> Cell:
        return Cell(empty if value is None else f"{value:g} px")

    columns = [
        "codec",
        f"survival threshold (keeps ≥ {SURVIVAL_RATIO:.0%} of the ceiling)",
        f"first size below {ABSOLUTE_FLOOR:g}% WR",
    ]
    rows = [
        [Cell(vae), size(t, "none"), size(below.get(vae), "none (all sizes ≥ floor)")]
        for vae, t in thresholds.items()
    ]
    return Table(columns, rows, row_headers=True)


def _pivot_tables(table: pd.DataFrame, limits: dict[str, dict[Any, float]]) -> list[dict[str, Any]]:
    out = []
    for by, title in PIVOTS:
        if all(column in table.columns for column in by):
            pivot = wr_pivot(table, by)
            if len(by) > 1:  # many cells: one row per cell, one column per codec reads better
                pivot = pivot.T
                pivot.index = [_limit_label(key, by, limits) for key in pivot.index]
                out.append(
                    {
                        "title": f"Mean WR by {title} x codec",
                        "table": _table(pivot, " / ".join(by)),
                    }
                )
            else:
                weak = limits.get(by[0], {})
                pivot.columns = [_limit_label(c, by, limits) for c in pivot.columns]
                marked = {_limit_label(v, by, limits) for v in weak}
                out.append(
                    {
                        "title": f"Mean WR by codec x {title}",
                        "table": _table(pivot, "codec", weak=marked.__contains__),
                    }
                )
    return out


READER_MARK = " (reader cannot read this)"


def _limit_label(key: Any, by: list[str], limits: dict[str, dict[Any, float]]) -> str:
    """A pivot label, marked when one of its values is beyond the reader."""
    values = key if isinstance(key, tuple) else (key,)
    pairs = zip(by, values, strict=True)
    weak = any(_plain(value) in limits.get(attribute, {}) for attribute, value in pairs)
    return _label(key) + (READER_MARK if weak else "")


def _limit_notes(limits: dict[str, dict[Any, float]]) -> list[str]:
    names = {"font_size": "font size", "char_class": "character class", "background": "background"}
    notes = []
    for attribute, weak in limits.items():
        for value, ceiling in weak.items():
            shown = f"{value} px" if attribute == "font_size" else str(value)
            notes.append(
                f"{names.get(attribute, attribute)} {shown}: the reader's own ceiling (WR on the "
                f"original images) is {ceiling:.1f}% < {READER_FLOOR:g}%: the reader cannot read "
                "this, so low WR there is the reader's limit, not codec loss."
            )
    return notes


def _notes(table: pd.DataFrame, notes: list[str] | None) -> list[str]:
    notes = list(notes or [])
    if len(table) and (table["truth_source"] == "ocr_original").any():
        share = (table["truth_source"] == "ocr_original").mean() * 100
        notes.append(
            f"{share:.0f}% of rows have no ground truth: the original image's OCR is the "
            "reference, so the OCR ceiling is 100% by construction there and WR measures "
            "agreement with it."
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
        "timing": _run_facts(out).get("timing", ""),
        "notes": _notes(table, notes),
        "summary": None,
        "thresholds": None,
        "ratio": f"{SURVIVAL_RATIO:.0%}",
        "plot": "",
        "pivots": [],
        "pairs": [],
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
        summary=_table(summary_table(table), "codec"),
        thresholds=_thresholds_table(thresholds, first_size_below(table)) if thresholds else None,
        plot="wr_vs_font_size.png"
        if plot_wr_vs_font_size(table, folder / "wr_vs_font_size.png")
        else "",
        pivots=_pivot_tables(table, limits),
        pairs=_pairs(table, out),
    )
    return context


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
    """Write ``out/report/index.html`` (+ PNG) from the results table; returns the HTML path."""
    from bench import templates
    from bench.io import atomic_open

    folder = out / "report"
    folder.mkdir(parents=True, exist_ok=True)
    page = templates.render("vae_report.html.j2", **page_context(table, out, folder, notes))
    with atomic_open(folder / "index.html", "w", encoding="utf-8") as handle:
        handle.write(page)
    return folder / "index.html"
