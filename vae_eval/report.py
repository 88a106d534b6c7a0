"""A small HTML report of ``vae_results.parquet``: a pure function of that table.

``OUT/report/index.html`` holds

* a summary per codec: images, failures, mean WR / PA next to the OCR ceiling
  (the same metrics on the original image), the loss, PSNR and SSIM;
* the *text-survival threshold* per codec: the smallest font size from which
  upward the codec keeps at least :data:`SURVIVAL_RATIO` of the ceiling's WR at
  every size (see :func:`survival_threshold`);
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

import html
import math
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

#: Share of the OCR ceiling's WR a codec must keep at a font size to "preserve" it.
SURVIVAL_RATIO = 0.9
PAIRS_PER_CODEC = 6


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
    rows = table[table["error"] == ""]
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
    return html.escape(str(value))


def _label(key: object) -> str:
    return " / ".join(map(str, key)) if isinstance(key, tuple) else str(key)


def _table(frame: pd.DataFrame, index_name: str = "") -> str:
    head = "".join(f"<th>{html.escape(_label(c))}</th>" for c in frame.columns)
    digits = [3 if str(c) == "SSIM" else 1 for c in frame.columns]
    body = []
    for index, row in frame.astype(object).iterrows():  # object dtype keeps ints as ints
        cells = "".join(f"<td>{_fmt(v, d)}</td>" for v, d in zip(row.tolist(), digits, strict=True))
        body.append(f"<tr><th>{html.escape(_label(index))}</th>{cells}</tr>")
    return f"<table><tr><th>{html.escape(index_name)}</th>{head}</tr>{''.join(body)}</table>"


def summary_table(table: pd.DataFrame) -> pd.DataFrame:
    """Per codec (in table order): counts and mean metrics of the successful rows."""
    import pandas as pd

    records = []
    for vae, group in table.groupby("vae", sort=False):
        ok = group[group["error"] == ""]
        records.append(
            {
                "vae": vae,
                "images": len(group),
                "failed": int((group["error"] != "").sum()),
                "WR": ok["wr"].mean(),
                "WR ceiling": ok["wr_original"].mean(),
                "WR loss": ok["wr_loss"].mean(),
                "PA": ok["pa"].mean(),
                "PA ceiling": ok["pa_original"].mean(),
                "PSNR": ok["psnr"].mean(),  # +inf when any reconstruction is pixel-identical
                "SSIM": ok["ssim"].mean(),
            }
        )
    return pd.DataFrame(records).set_index("vae")


def wr_pivot(table: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Mean WR with codecs as rows and ``by`` as columns; first row is the OCR ceiling."""
    import pandas as pd

    ok = table[table["error"] == ""]
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

    ok = table[table["error"] == ""]
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


def _pairs_html(table: pd.DataFrame, out: Path) -> str:
    parts = []
    for vae, group in table.groupby("vae", sort=False):
        if "font_size" in group.columns:
            picks = group.sort_values("image_index").drop_duplicates("font_size")
        else:
            picks = group.sort_values("image_index")
        cells = []
        for row in picks.head(PAIRS_PER_CODEC).itertuples():
            before = (
                f"../{row.original_path}"
                if row.original_path and (out / str(row.original_path)).exists()
                else ""
            )
            after = f"../{row.reconstruction_path}" if row.reconstruction_path else ""
            caption = (
                f"<b>{html.escape(str(row.image_id))}</b><br>truth: {html.escape(str(row.truth))}<br>"
                f"before: {html.escape(str(row.ocr_original))}<br>after: {html.escape(str(row.ocr_reconstruction))}"
                f"<br>WR {_fmt(float(row.wr))} (ceiling {_fmt(float(row.wr_original))})"
            )
            if row.error:
                caption += f"<br><span class=err>{html.escape(str(row.error))}</span>"
            images = "".join(
                f'<a href="{html.escape(src)}"><img src="{html.escape(src)}" loading="lazy"></a>'
                for src in (before, after)
                if src
            )
            cells.append(f"<figure>{images}<figcaption>{caption}</figcaption></figure>")
        parts.append(f"<h3>{html.escape(str(vae))}</h3><div class=pairs>{''.join(cells)}</div>")
    return "".join(parts)


STYLE = """
body{font-family:sans-serif;margin:2em;max-width:1200px}
table{border-collapse:collapse;margin:1em 0;font-size:90%}
td,th{border:1px solid #ccc;padding:3px 8px;text-align:right}
.pairs{display:flex;flex-wrap:wrap;gap:12px}
figure{margin:0 0 1em 0;font-size:85%}
figure img{max-width:49%;image-rendering:pixelated;margin-right:4px;border:1px solid #ddd}
.err{color:#b00}.note{background:#ffd;padding:.5em}
"""


def write_report(table: pd.DataFrame, out: Path, *, notes: list[str] | None = None) -> Path:
    """Write ``out/report/index.html`` (+ PNG) from the results table; returns the HTML path."""
    from bench.io import atomic_open

    folder = out / "report"
    folder.mkdir(parents=True, exist_ok=True)
    notes = list(notes or [])
    if len(table) and (table["truth_source"] == "ocr_original").any():
        share = (table["truth_source"] == "ocr_original").mean() * 100
        notes.append(
            f"{share:.0f}% of rows have no ground truth: the original image's OCR is the reference, "
            "so the OCR ceiling is 100% by construction there and WR measures agreement with it."
        )
    body = [
        f"<h1>VAE text survival</h1><p>{len(table)} rows, {table['vae'].nunique() if len(table) else 0} codecs."
    ]
    if len(table):
        body.append(
            f" OCR: {html.escape(str(table['ocr_engine'].iloc[0]))} ({html.escape(str(table['ocr_version'].iloc[0]))}).</p>"
        )
    body.extend(f"<p class=note>{html.escape(note)}</p>" for note in notes)
    if len(table):
        body.append("<h2>Summary</h2>" + _table(summary_table(table), "codec"))
        thresholds = survival_threshold(table)
        if thresholds:
            lines = "".join(
                f"<tr><th>{html.escape(vae)}</th><td>{'none' if t is None else f'{t:g} px'}</td></tr>"
                for vae, t in thresholds.items()
            )
            body.append(
                f"<h2>Text-survival threshold</h2><p>Smallest font size from which upward the codec keeps "
                f"&ge; {SURVIVAL_RATIO:.0%} of the OCR ceiling's WR at every size.</p><table>{lines}</table>"
            )
        if plot_wr_vs_font_size(table, folder / "wr_vs_font_size.png"):
            body.append(
                '<h2>WR vs font size</h2><img src="wr_vs_font_size.png" alt="WR vs font size">'
            )
        tables = (
            (["font_size"], "font size"),
            (["char_class"], "character class"),
            (["background"], "background"),
            (["font_size", "char_class"], "font size x character class"),
        )
        for by, title in tables:
            if all(column in table.columns for column in by):
                pivot = wr_pivot(table, by)
                if len(by) > 1:  # many cells: one row per cell, one column per codec reads better
                    body.append(
                        f"<h2>Mean WR by {title} x codec</h2>" + _table(pivot.T, " / ".join(by))
                    )
                else:
                    body.append(f"<h2>Mean WR by codec x {title}</h2>" + _table(pivot, "codec"))
        body.append("<h2>Before / after</h2>" + _pairs_html(table, out))
    page = f"<!doctype html><html><head><meta charset=utf-8><title>VAE text survival</title><style>{STYLE}</style></head><body>{''.join(body)}</body></html>"
    with atomic_open(folder / "index.html", "w", encoding="utf-8") as handle:
        handle.write(page)
    return folder / "index.html"
