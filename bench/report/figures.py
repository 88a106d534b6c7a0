"""Report figures (matplotlib, Agg backend), each saved as PNG and SVG.

Every function takes already-computed numbers (summaries from
:mod:`glyphbench.report.stats`) and a path stem; it writes ``stem.png`` and
``stem.svg`` and returns their file names. Colours follow the Okabe-Ito palette,
which stays distinguishable with the common colour-vision deficiencies; markers
differ per model too, so figures also read in greyscale.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from glyphbench.core.bootstrap import MIN_UNITS
from glyphbench.core.fonts import CJK_FACES, cjk_fonts
from glyphbench.core.io import atomic_path
from glyphbench.report.metric_info import metric_info, metric_label

#: Okabe & Ito (2008) colour-blind-safe palette (black last: it is for text).
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#F0E442", "#000000")
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*")


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    plt.rcParams.update(
        {
            "figure.dpi": 110,
            "savefig.dpi": 110,
            "font.size": 9,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.grid": True,
            "grid.alpha": 0.3,
            "svg.fonttype": "none",
            # Labels are data (model names, slice values): "$5 and $6" is text, not math,
            # and "$\\frac$" must not stop the report (matplotlib parses $...$ by default).
            "text.parse_math": False,
        }
    )
    plt.rcParams["font.family"] = font_family()
    return plt


#: The face every figure's text is set in; glyphs it lacks come from a CJK face.
LATIN_FAMILY = "DejaVu Sans"


@functools.cache
def cjk_family() -> str | None:
    """The CJK face matplotlib can fall back to for Chinese labels (model names, slices),
    registered with its font manager; None when none is installed
    (:data:`glyphbench.core.fonts.CJK_FACES`: fonts-noto-cjk, fonts-wqy-microhei)."""
    from matplotlib import font_manager

    faces = dict(reversed(CJK_FACES))  # file name -> its first listed face
    for path, _ in cjk_fonts():
        font_manager.fontManager.addfont(str(path))
        return faces[path.name]
    return None


def font_family() -> list[str]:
    """matplotlib's ``font.family`` for a figure's text: DejaVu Sans, then a CJK face glyph
    by glyph (matplotlib's font fallback) where one is installed.

    Without one, Chinese labels draw as empty boxes: :func:`quiet_missing_glyphs` keeps
    matplotlib from warning about each of them.
    """
    family = cjk_family()
    return [LATIN_FAMILY, *([family] if family else [])]


@contextlib.contextmanager
def quiet_missing_glyphs() -> Iterator[None]:
    """No "Glyph ... missing from font(s)" warning while saving (a CJK label on a machine
    without a CJK font: :func:`font_family`)."""
    import warnings

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Glyph .* missing from font", UserWarning)
        yield


def style_for(models: Sequence[str]) -> dict[str, tuple[str, str]]:
    """A stable (colour, marker) per model, in the given order."""
    return {m: (PALETTE[i % len(PALETTE)], MARKERS[i % len(MARKERS)]) for i, m in enumerate(models)}


def _save(fig: Any, stem: Path) -> list[str]:
    plt = _pyplot()
    names = []
    for fmt in ("png", "svg"):
        target = stem.with_suffix(f".{fmt}")
        with atomic_path(target) as tmp, quiet_missing_glyphs():
            fig.savefig(tmp, format=fmt, bbox_inches="tight")
        names.append(target.name)
    plt.close(fig)
    return names


def _metric_label(metric: str) -> str:
    info = metric_info(metric)
    arrow = "higher is better" if info.higher_is_better else "lower is better"
    return f"{info.label} ({arrow})"


def score_by_slice(
    summary: pd.DataFrame, column: str, metric: str, models: Sequence[str], stem: Path
) -> list[str]:
    """Mean ``metric`` per slice of ``column``, one dodged series per model, 95% CI bars.

    Each slice's label carries its number of prompts; a point resting on fewer than
    :data:`~glyphbench.core.bootstrap.MIN_UNITS` prompts has no interval and is drawn
    hollow (never a bare point under a caption promising intervals).
    """
    plt = _pyplot()
    slices = [str(c) for c in summary[column].cat.categories if (summary[column] == c).any()]
    counts = _slice_counts(summary, column)
    styles = style_for(models)
    width = max(5.0, min(12.0, 1.0 + 0.9 * len(slices) + 0.15 * len(models) * len(slices) / 2))
    fig, ax = plt.subplots(figsize=(width, 3.6))
    x = np.arange(len(slices))
    spread = 0.72
    ax.grid(False, axis="x")
    for k in range(0, len(slices), 2):  # shaded bands group each slice's points
        ax.axvspan(k - 0.5, k + 0.5, color="#eef1f5", zorder=0, linewidth=0)
    ax.set_xlim(-0.5, len(slices) - 0.5)
    offsets = np.linspace(-spread / 2, spread / 2, len(models)) if len(models) > 1 else np.zeros(1)
    for offset, model in zip(offsets, models, strict=False):
        rows = summary[summary["model"] == model].set_index(
            summary[column].astype(str)[summary["model"] == model]
        )
        rows = rows.reindex(slices)
        mean = rows[metric].to_numpy(dtype=float)
        lo = rows[f"{metric}_lo"].to_numpy(dtype=float)
        hi = rows[f"{metric}_hi"].to_numpy(dtype=float)
        colour, marker = styles[model]
        few = _too_few(rows)
        ax.errorbar(
            (x + offset)[~few],
            mean[~few],
            yerr=[np.clip(mean - lo, 0, None)[~few], np.clip(hi - mean, 0, None)[~few]],
            fmt=marker,
            color=colour,
            ecolor=colour,
            elinewidth=1.2,
            capsize=2.5,
            markersize=5,
            label=model,
            linestyle="none",
        )
        if few.any():  # no interval: a hollow marker says so
            ax.plot(
                (x + offset)[few],
                mean[few],
                marker=marker,
                markerfacecolor="none",
                color=colour,
                markersize=5,
                linestyle="none",
            )
    labels = [f"{s}\n(n={counts.get(s, 0)})" for s in slices]
    ax.set_xticks(x)
    ax.set_xticklabels(
        labels,
        rotation=30 if max(map(len, slices), default=0) > 8 else 0,
        ha="right" if max(map(len, slices), default=0) > 8 else "center",
    )
    ax.set_xlabel(f"{column} (n: prompts)")
    ax.set_ylabel(_metric_label(metric))
    ax.set_title(
        f"{metric_label(metric)} by {column} (95% bootstrap CI; "
        f"hollow: fewer than {MIN_UNITS} prompts, no interval)"
    )
    ax.legend(fontsize=7, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return _save(fig, stem)


def _slice_counts(summary: pd.DataFrame, column: str) -> dict[str, int]:
    """Prompts per slice (the most any model has there: the models share the prompts)."""
    counts = summary["n_prompts"] if "n_prompts" in summary else summary["n"]
    return {
        str(k): int(v)
        for k, v in counts.groupby(summary[column].astype(str).to_numpy()).max().items()
    }


def _too_few(rows: pd.DataFrame) -> np.ndarray:
    """Points resting on fewer than ``MIN_UNITS`` prompts (missing points are not few)."""
    counts = rows["n_prompts"] if "n_prompts" in rows else rows["n"]
    values = pd.to_numeric(counts, errors="coerce").to_numpy(dtype=float)
    return np.asarray(np.isfinite(values) & (values < MIN_UNITS), dtype=bool)


def score_vs_length(
    curves: pd.DataFrame, metric: str, models: Sequence[str], stem: Path
) -> list[str]:
    """``metric`` against text length: one line per model with a shaded 95% CI band.

    ``curves`` has columns model, length, n, ``metric``, ``metric_lo``, ``metric_hi``.
    A length with fewer than :data:`~glyphbench.core.bootstrap.MIN_UNITS` images is drawn
    hollow and its band left out.
    """
    plt = _pyplot()
    styles = style_for(models)
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    for model in models:
        rows = curves[curves["model"] == model].sort_values("length")
        if rows.empty:
            continue
        colour, marker = styles[model]
        few = _too_few(rows)
        ax.plot(
            rows["length"],
            rows[metric],
            color=colour,
            linewidth=1.3,
            label=model,
        )
        ax.plot(rows["length"][~few], rows[metric][~few], marker, color=colour, markersize=3)
        ax.plot(
            rows["length"][few],
            rows[metric][few],
            marker,
            color=colour,
            markersize=3,
            markerfacecolor="none",
        )
        ax.fill_between(
            rows["length"],
            rows[f"{metric}_lo"].where(~few),
            rows[f"{metric}_hi"].where(~few),
            color=colour,
            alpha=0.15,
            linewidth=0,
        )
    ax.set_xlabel("text length (characters; last point pools longer texts)")
    ax.set_ylabel(_metric_label(metric))
    ax.set_title(
        f"{metric_label(metric)} against text length (band: 95% CI; "
        f"hollow: fewer than {MIN_UNITS} images, no band)"
    )
    ax.legend(fontsize=7, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return _save(fig, stem)


def heatmap(
    summary: pd.DataFrame, column: str, metric: str, models: Sequence[str], stem: Path
) -> list[str]:
    """Model x slice heatmap of ``metric`` with the value and the prompts in each cell.

    Every slice with at least :data:`~glyphbench.core.bootstrap.MIN_UNITS` prompts is a
    column, the group of prompts without a value ("(none)", often the largest) included;
    slices with fewer prompts are left out and counted in the title. Nothing
    is drawn (no file names) when no slice or no model is left: an empty grid says nothing.
    """
    plt = _pyplot()
    counts = _slice_counts(summary, column)
    present = [str(c) for c in summary[column].cat.categories if (summary[column] == c).any()]
    slices = [s for s in present if counts.get(s, 0) >= MIN_UNITS]
    if not slices or not models:
        return []
    dropped = len(present) - len(slices)
    table = summary.assign(_slice=summary[column].astype(str)).pivot_table(
        index="model", columns="_slice", values=metric, aggfunc="first", observed=True
    )
    table = table.reindex(index=list(models), columns=slices)
    data = table.to_numpy(dtype=float)
    cmap = "viridis" if metric_info(metric).higher_is_better else "viridis_r"
    fig, ax = plt.subplots(
        figsize=(max(4.5, 1.1 * len(slices) + 2.5), max(2.2, 0.45 * len(models) + 1.2))
    )
    finite = data[np.isfinite(data)]
    vmin, vmax = (float(finite.min()), float(finite.max())) if finite.size else (0.0, 1.0)
    image = ax.imshow(
        data, cmap=cmap, aspect="auto", vmin=vmin, vmax=vmax if vmax > vmin else vmin + 1e-9
    )
    ax.grid(False)
    ax.set_xticks(range(len(slices)))
    ax.set_xticklabels([f"{s} (n={counts.get(s, 0)})" for s in slices], rotation=30, ha="right")
    ax.set_yticks(range(len(models)))
    ax.set_yticklabels(models)
    for i in range(data.shape[0]):
        for j in range(data.shape[1]):
            value = data[i, j]
            if np.isfinite(value):
                shade = (value - vmin) / (vmax - vmin) if vmax > vmin else 0.5
                dark = shade < 0.55 if cmap == "viridis" else shade > 0.45
                ax.text(
                    j,
                    i,
                    f"{value:.2f}",
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="white" if dark else "black",
                )
    fig.colorbar(image, ax=ax, label=metric_label(metric), shrink=0.8)
    left_out = (
        f"; {dropped} {column} value{'s' if dropped != 1 else ''} with fewer than "
        f"{MIN_UNITS} prompts left out"
        if dropped
        else ""
    )
    ax.set_title(f"{metric_label(metric)}: model x {column} (n: prompts{left_out})")
    return _save(fig, stem)


def distributions(values: dict[str, np.ndarray], metric: str, stem: Path) -> list[str]:
    """Distribution of per-image ``metric`` per model: one violin per model on shared axes.

    Each violin is a kernel density estimate of the model's per-image scores
    (capped at 20,000 evenly spaced sorted values, which keeps the shape);
    the white dot marks the median, the bar the interquartile range.
    """
    plt = _pyplot()
    models = [m for m in values if np.isfinite(values[m]).any()]
    styles = style_for(list(values))
    fig, ax = plt.subplots(figsize=(max(5.0, 0.75 * len(models) + 2.0), 3.6))
    data = []
    for model in models:
        finite = np.sort(values[model][np.isfinite(values[model])])
        if finite.size > 20_000:
            finite = finite[np.linspace(0, finite.size - 1, 20_000).astype(int)]
        data.append(finite)
    positions = np.arange(len(models))
    spread = [d.max() - d.min() if d.size else 0.0 for d in data]
    varied = [i for i, s in enumerate(spread) if s > 0 and data[i].size > 1]
    if varied:
        parts = ax.violinplot(
            [data[i] for i in varied],
            positions=positions[varied],
            widths=0.8,
            showextrema=False,
            bw_method=0.15,
        )
        for body, i in zip(parts["bodies"], varied, strict=False):
            body.set_facecolor(styles[models[i]][0])
            body.set_edgecolor("none")
            body.set_alpha(0.75)
    for i, d in enumerate(data):
        if not d.size:
            continue
        q1, med, q3 = np.percentile(d, [25, 50, 75])
        ax.vlines(i, q1, q3, color="#333333", linewidth=3)
        ax.scatter([i], [med], color="white", edgecolor="#333333", zorder=3, s=18)
        if i not in varied:  # a single value: draw it as a bar across the slot
            ax.hlines(d[0], i - 0.35, i + 0.35, color=styles[models[i]][0], linewidth=3)
    ax.set_xticks(positions)
    ax.set_xticklabels(
        [f"{m}\n(n={d.size})" for m, d in zip(models, data, strict=False)],
        rotation=30,
        ha="right",
        fontsize=7,
    )
    ax.set_ylabel(_metric_label(metric))
    ax.set_title(f"Distribution of per-image {metric_label(metric)} (dot: median, bar: IQR)")
    ax.grid(False, axis="x")
    return _save(fig, stem)
