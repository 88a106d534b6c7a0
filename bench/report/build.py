"""``write_report``: results tables in, ``report/`` folder out.

Layout of the output folder::

    index.html              the page (figures and thumbnails are relative files)
    report.json             settings (n_boot, seed, confidence, by), runs, row counts
    tables/*.csv|md|tex     every table: raw numbers (CSV) and display text (MD, LaTeX)
    figures/*.png|svg       every figure
    gallery/*.jpg           thumbnails with OCR boxes drawn on
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from bench.errors import InputError
from bench.io import atomic_open, write_json
from bench.report import controls as ctl
from bench.report import figures as figs
from bench.report import stats
from bench.report.gallery import build_gallery
from bench.report.load import load_runs
from bench.report.tables import display_summary, fmt_ci, fmt_number, metric_header, write_table_set

#: Slices used when ``by`` is not given (those present in the table).
DEFAULT_BY = ("prompt_type", "group", "cefr", "char_length", "word_count", "laion_freq")
#: The headline metric: figures, ranking and comparisons use it first.
PRIMARY_METRIC = "ned"
#: Longest text length drawn as its own point in the length figure; longer ones are pooled.
LENGTH_CAP = 60


def default_by(frame: pd.DataFrame) -> list[str]:
    """The :data:`DEFAULT_BY` columns that exist and hold at least one value."""
    return [c for c in DEFAULT_BY if c in frame.columns and frame[c].notna().any()]


def model_order(overall: pd.DataFrame) -> tuple[list[str], list[str]]:
    """(models best-first by the primary metric, control models in chain order)."""
    names = overall["model"].astype(str)
    is_control = names.map(lambda m: ctl.parse_control(m) is not None)
    models = overall[~is_control.to_numpy()].sort_values(
        PRIMARY_METRIC, ascending=False, kind="stable"
    )
    chain = [m for chain in ctl.control_chain(names[is_control].tolist()).values() for m in chain]
    others = [m for m in names[is_control] if m not in chain]
    return models["model"].astype(str).tolist(), chain + others


def length_curves(
    frame: pd.DataFrame, models: Sequence[str], metric: str, *, n_boot: int, seed: int
) -> pd.DataFrame:
    """Mean ``metric`` with its interval per (model, text length), lengths above the cap pooled."""
    ok = frame[~stats.failed_mask(frame)]
    lengths = (
        pd.to_numeric(ok["char_length"], errors="coerce")
        if "char_length" in ok
        else ok["text"].str.len()
    )
    values = pd.to_numeric(ok[metric].astype(object), errors="coerce").astype(float).to_numpy()
    key = pd.DataFrame(
        {
            "model": ok["model"].astype(str).to_numpy(),
            "length": lengths.clip(upper=LENGTH_CAP).to_numpy(dtype=float),
        }
    )
    rows = []
    for (model, length), idx in key.groupby(["model", "length"], sort=True).indices.items():
        if model not in models or not np.isfinite(length):
            continue
        v = values[idx]
        v = v[np.isfinite(v)]
        if not v.size:
            continue
        rng = stats.slice_rng(seed, ("length", model, length))
        lo, hi = stats.bootstrap_mean_ci(v, n_boot=n_boot, rng=rng)
        rows.append(
            {
                "model": model,
                "length": length,
                "n": v.size,
                metric: float(v.mean()),
                f"{metric}_lo": lo,
                f"{metric}_hi": hi,
            }
        )
    return pd.DataFrame(
        rows, columns=["model", "length", "n", metric, f"{metric}_lo", f"{metric}_hi"]
    )


# --------------------------------------------------------------------------- HTML helpers


def html_table(
    table: pd.DataFrame, *, classes: dict[str, Any] | None = None, caption: str = ""
) -> dict[str, Any]:
    """A display table for the template: header names and rows of (text, css class) cells.

    ``classes`` maps a column to a function of the cell value returning a CSS class.
    Booleans become ✓ / ✗ with ``pass`` / ``fail`` classes; numbers are right-aligned.
    """
    classes = classes or {}
    rows = []
    for record in table.to_dict("records"):
        cells = []
        for column, value in record.items():
            css = ""
            if isinstance(value, (bool, np.bool_)):
                text, css = ("✓ pass", "pass") if value else ("✗ fail", "fail")
            elif value is None or (isinstance(value, float) and math.isnan(value)):
                text, css = "–", "na"
            elif isinstance(value, (float, np.floating)):
                text, css = fmt_number(float(value), str(column)), "num"
            elif isinstance(value, (int, np.integer)):
                text, css = str(value), "num"
            else:
                text = str(value)
                if text[:1] in "-0123456789" and text[:1] and "[" in text:
                    css = "num"
            if column in classes:
                css = (css + " " + classes[column](value)).strip()
            cells.append({"text": text, "cls": css})
        rows.append(cells)
    return {"columns": [str(c) for c in table.columns], "rows": rows, "caption": caption}


def _best_marks(
    display: pd.DataFrame, summary: pd.DataFrame, metrics: Sequence[str], models: Sequence[str]
) -> dict:
    """CSS classes that bold the best non-control model per metric column."""
    marks: dict[str, Any] = {}
    candidates = summary[summary["model"].isin(models)]
    for metric in metrics:
        if candidates[metric].notna().any():
            higher = stats.HIGHER_IS_BETTER.get(metric, True)
            best = candidates[metric].max() if higher else candidates[metric].min()
            best_text = fmt_number(float(best), metric)
            marks[metric_header(metric)] = lambda v, b=best_text: (
                "best" if str(v).split(" ")[0] == b else ""
            )
    return marks


def _control_display(
    sanity: pd.DataFrame, by: Sequence[str], metrics: Sequence[str]
) -> pd.DataFrame:
    """Compact sanity table: slice, fewest control rows, each metric's chain of means, verdicts."""
    if sanity.empty:
        return sanity
    out = pd.DataFrame()
    if sanity["run"].astype(str).str.len().any():
        out["Run"] = sanity["run"]
    for column in by:
        out[column] = sanity[column].astype(str)
    out["Fewest rows"] = sanity["min_n"].astype(int)
    for metric in metrics:
        label = stats.METRIC_LABELS.get(metric, metric)
        out[f"{label} (blank → render)"] = [
            " < ".join(fmt_number(v, metric) for v in means) for means in sanity[f"{metric}_means"]
        ]
        out[f"{label} order"] = sanity[f"{metric}_order"]
    out["Passed"] = sanity["passed"]
    return out


def _ceiling_display(ceiling: pd.DataFrame, by: Sequence[str]) -> pd.DataFrame:
    out = pd.DataFrame({"Model": ceiling["model"]})
    for column in by:
        out[column] = ceiling[column].astype(str)
    out["Model NED"] = ceiling[PRIMARY_METRIC]
    out["OCR ceiling (render NED)"] = ceiling["ceiling"]
    out["Gap to ceiling"] = ceiling["gap"]
    out["Share of error that is OCR's"] = [
        "–" if math.isnan(v) else f"{100 * v:.0f}%" for v in ceiling["ocr_share"].astype(float)
    ]
    return out


# --------------------------------------------------------------------------- main entry


def write_report(
    run_dirs: Sequence[str | Path],
    out: str | Path | None = None,
    *,
    by: Sequence[str] | None = None,
    n_boot: int = 1000,
    seed: int = 0,
    confidence: float = 0.95,
    gallery_k: int = 2,
    max_gallery_images: int = 400,
    progress: bool = False,
) -> Path:
    """Build the full report for one or more run folders; return the path of ``index.html``.

    ``out`` defaults to ``RUN/report`` of the first run. ``by`` lists the slicing
    columns (default :data:`DEFAULT_BY` where present); the gallery is sliced by
    the first of them. ``n_boot`` resamples per interval, all seeded by ``seed``.
    """
    started = time.perf_counter()
    dirs = [Path(d) for d in run_dirs]
    if n_boot < 1:
        raise InputError(None, f"--n-boot must be at least 1, got {n_boot}")
    frame = load_runs(dirs)
    out_dir = Path(out) if out is not None else dirs[0] / "report"
    by = default_by(frame) if by is None else list(by)
    if "model" in by:
        raise InputError(None, "--by cannot include 'model': every table is already per model")
    unknown = [c for c in by if c not in frame.columns]
    if unknown:
        raise InputError(
            None, f"--by names unknown columns {unknown}; results have {sorted(frame.columns)[:40]}"
        )
    out_dir.mkdir(parents=True, exist_ok=True)
    tables_dir, figures_dir = out_dir / "tables", out_dir / "figures"
    metrics = list(stats.SUMMARY_METRICS)
    opts: dict[str, Any] = {"n_boot": n_boot, "seed": seed, "confidence": confidence}

    steps = ["summary", "slices", "comparisons", "controls", "figures", "gallery", "html"]
    from tqdm import tqdm

    bar = tqdm(total=len(steps), desc="report", disable=not progress, unit="step")

    stage_seconds: dict[str, float] = {}
    last = [time.perf_counter()]

    def step(name: str) -> None:
        now = time.perf_counter()
        stage_seconds[name] = round(now - last[0], 3)
        last[0] = now
        bar.set_postfix_str(name)
        bar.update(1)

    # ---- summary and ranking
    peer_metrics = [m for m in ("word_precision", "word_recall") if m in frame.columns]
    # One shared resample per model serves the overall table and every slicing.
    summaries = stats.summarize_many(
        frame, [[], *([c] for c in by)], metrics=metrics + peer_metrics, **opts
    )
    overall = summaries[0]
    models, controls = model_order(overall)
    ordered = models + controls
    overall["_order"] = overall["model"].map({m: i for i, m in enumerate(ordered)})
    overall = overall.sort_values("_order").drop(columns="_order").reset_index(drop=True)
    files: dict[str, list[str]] = {}
    summary_display = display_summary(overall, [], metrics)
    summary_display.insert(1, "Control", ["yes" if m in controls else "" for m in overall["model"]])
    files["summary"] = write_table_set(
        tables_dir,
        "summary",
        overall,
        summary_display,
        caption="Per-model scores with 95% bootstrap intervals.",
    )
    ranked = stats.rank_models(overall[overall["model"].isin(models)], PRIMARY_METRIC)
    ranking_display = pd.DataFrame(
        {
            "Rank": [f"{r}=" if t else str(r) for r, t in zip(ranked["rank"], ranked["tie"])],
            "Model": ranked["model"],
            metric_header(PRIMARY_METRIC): [
                fmt_ci(m, lo, hi, PRIMARY_METRIC)
                for m, lo, hi in ranked[
                    [PRIMARY_METRIC, f"{PRIMARY_METRIC}_lo", f"{PRIMARY_METRIC}_hi"]
                ].to_numpy()
            ],
            "Tied with (overlapping CI)": ranked["tied_with"].replace("", "–"),
        }
    )
    files["ranking"] = write_table_set(
        tables_dir,
        "ranking",
        ranked,
        ranking_display,
        caption="Ranking by NED; '=' marks ties (overlapping intervals).",
    )
    step("summary")

    # ---- per-attribute slices
    by_attr: dict[str, pd.DataFrame] = {}
    attr_tables: list[dict[str, Any]] = []
    for column, summary in zip(by, summaries[1:]):
        summary = summary[summary["model"].isin(ordered)]
        summary["_order"] = summary["model"].map({m: i for i, m in enumerate(ordered)})
        summary = (
            summary.sort_values(["_order", column], kind="stable")
            .drop(columns="_order")
            .reset_index(drop=True)
        )
        by_attr[column] = summary
        display = display_summary(summary, [column], metrics)
        files[f"by_{column}"] = write_table_set(
            tables_dir,
            f"by_{column}",
            summary,
            display,
            caption=f"Scores by {column} with 95% bootstrap intervals.",
        )
        attr_tables.append(
            {
                "column": column,
                "table": html_table(display),
                "figure": None,
                "bins": _bins_note(column),
            }
        )
    step("slices")

    # ---- paired comparisons and peer views
    comparisons = stats.compare_models(frame, models, (PRIMARY_METRIC, "exact_match"), **opts)
    comparison_display = pd.DataFrame(
        {
            "Model A": comparisons["model_a"],
            "Model B": comparisons["model_b"],
            "Metric": comparisons["metric"].map(lambda m: stats.METRIC_LABELS.get(m, m)),
            "Shared prompts": comparisons["n_prompts"],
            "A − B [95% CI]": [
                fmt_ci(d, lo, hi, "ned")
                for d, lo, hi in comparisons[["diff", "lo", "hi"]].to_numpy()
            ],
            "Significantly better": comparisons["better"].fillna("– (no clear difference)"),
        }
    )
    files["comparisons"] = write_table_set(
        tables_dir,
        "comparisons",
        comparisons,
        comparison_display,
        caption="Paired differences on shared prompts (paired bootstrap).",
    )
    peers = stats.peer_views(frame, n_boot=n_boot, seed=seed, summary=overall)
    peer_tables = []
    for name, title, mapping in (
        ("anytext", "AnyText-style: sentence accuracy and NED", stats.ANYTEXT_COLUMNS),
        (
            "mario",
            "MARIO-Eval-style: word precision, recall, F1 (per-image means)",
            stats.MARIO_COLUMNS,
        ),
    ):
        view = peers[name]
        view = view.assign(_o=view["model"].map({m: i for i, m in enumerate(ordered)})).sort_values(
            "_o"
        )
        view = view.drop(columns="_o").reset_index(drop=True)
        display = pd.DataFrame({"Model": view["model"], "n": view["n"]})
        for metric, new in mapping.items():
            display[new] = [
                fmt_ci(m, lo, hi, metric)
                for m, lo, hi in view[[new, f"{new}_lo", f"{new}_hi"]].to_numpy()
            ]
        files[f"peer_{name}"] = write_table_set(
            tables_dir, f"peer_{name}", view, display, caption=title
        )
        peer_tables.append({"title": title, "table": html_table(display)})
    step("comparisons")

    # ---- controls
    sanity_blocks = []
    ceiling_blocks = []
    control_summary: dict[str, Any] = {
        "present": bool(controls),
        "passed": None,
        "overall_passed": None,
    }
    if controls:
        verdicts: list[bool] = []
        model_runs = frame.groupby("model")["run"].first().astype(str).to_dict()
        chains: dict[str, None] = {}
        for column, summary in [("", overall), *by_attr.items()]:
            slice_by = [column] if column else []
            sanity = ctl.control_sanity(summary, slice_by)
            ceiling = ctl.ocr_ceiling(summary, slice_by, model_runs=model_runs)
            if sanity.empty:
                continue
            name = f"controls_{column}" if column else "controls"
            files[name] = write_table_set(
                tables_dir, name, sanity, _control_display(sanity, slice_by, ("ned", "exact_match"))
            )
            verdicts += [bool(v) for v in sanity["passed"] if v is not None]
            if not column:
                known = [bool(v) for v in sanity["passed"] if v is not None]
                control_summary["overall_passed"] = all(known) if known else None
            chains.update(dict.fromkeys(sanity["chain"].astype(str)))
            sanity_blocks.append(
                {
                    "column": column or "overall",
                    "failed": any(v is False for v in sanity["passed"]),
                    "table": html_table(_control_display(sanity, slice_by, ("ned", "exact_match"))),
                }
            )
            if not ceiling.empty:
                cname = f"ocr_ceiling_{column}" if column else "ocr_ceiling"
                files[cname] = write_table_set(
                    tables_dir, cname, ceiling, _ceiling_display(ceiling, slice_by)
                )
                ceiling_blocks.append(
                    {
                        "column": column or "overall",
                        "table": html_table(_ceiling_display(ceiling, slice_by)),
                    }
                )
        control_summary.update(
            passed=all(verdicts) if verdicts else None,
            n_checks=len(verdicts),
            chains=list(chains),
            n_failed=sum(not v for v in verdicts),
        )
    step("controls")

    # ---- figures
    figure_items: list[dict[str, str]] = []
    plot_models = ordered
    for item in attr_tables:
        column = item["column"]
        names = figs.score_by_slice(
            by_attr[column], column, PRIMARY_METRIC, plot_models, figures_dir / f"by_{column}"
        )
        item["figure"] = f"figures/{names[0]}"
        item["figure_svg"] = f"figures/{names[1]}"
    if "char_length" in frame.columns or "text" in frame.columns:
        curves = length_curves(frame, plot_models, PRIMARY_METRIC, n_boot=n_boot, seed=seed)
        names = figs.score_vs_length(
            curves, PRIMARY_METRIC, plot_models, figures_dir / "score_vs_length"
        )
        figure_items.append(
            {
                "title": "Score against text length",
                "png": f"figures/{names[0]}",
                "svg": f"figures/{names[1]}",
            }
        )
    heat_column = (
        "group"
        if "group" in by_attr and _has_real_slices(by_attr["group"], "group")
        else (by[0] if by else None)
    )
    if heat_column:
        summary = by_attr[heat_column]
        summary = summary[summary[heat_column].astype(str) != stats.MISSING_LABEL]
        names = figs.heatmap(
            summary,
            heat_column,
            PRIMARY_METRIC,
            plot_models,
            figures_dir / f"heatmap_{heat_column}",
        )
        figure_items.append(
            {
                "title": f"Model x {heat_column}",
                "png": f"figures/{names[0]}",
                "svg": f"figures/{names[1]}",
            }
        )
    ok = frame[~stats.failed_mask(frame)]
    dist_values = {
        m: pd.to_numeric(ok.loc[ok["model"] == m, PRIMARY_METRIC].astype(object), errors="coerce")
        .astype(float)
        .to_numpy()
        for m in plot_models
    }
    names = figs.distributions(dist_values, PRIMARY_METRIC, figures_dir / "distributions")
    figure_items.append(
        {"title": "Score distributions", "png": f"figures/{names[0]}", "svg": f"figures/{names[1]}"}
    )
    step("figures")

    # ---- gallery
    gallery_column = by[0] if by else None
    items = build_gallery(
        frame, out_dir, gallery_column, k=gallery_k, max_images=max_gallery_images
    )
    gallery: list[dict[str, Any]] = []
    for model in ordered:
        mine = [i for i in items if i["model"] == model]
        if not mine:
            continue
        slices = list(dict.fromkeys(i["slice"] for i in mine))
        gallery.append(
            {
                "model": model,
                "slices": [
                    {"slice": s, "examples": [i for i in mine if i["slice"] == s]} for s in slices
                ],
            }
        )
    step("gallery")

    # ---- page
    runs_meta = frame.attrs.get("runs", {})
    settings = {
        "n_boot": n_boot,
        "seed": seed,
        "confidence": confidence,
        "by": by,
        "gallery_slice": gallery_column,
        "primary_metric": PRIMARY_METRIC,
    }
    context = {
        "title": "glyphbench report: " + ", ".join(runs_meta) if runs_meta else "glyphbench report",
        "generated": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "runs": [
            {
                "name": name,
                "dir": info["dir"],
                "meta": json.dumps(info["meta"], indent=2, default=str),
                "config": info["meta"].get("config"),
            }
            for name, info in runs_meta.items()
        ],
        "n_rows": len(frame),
        "n_errors": int(stats.failed_mask(frame).sum()),
        "models": models,
        "controls": controls,
        "settings": settings,
        "summary": html_table(
            summary_display, classes=_best_marks(summary_display, overall, metrics, models)
        ),
        "ranking": html_table(ranking_display),
        "comparisons": html_table(comparison_display),
        "attributes": attr_tables,
        "sanity": sanity_blocks,
        "ceiling": ceiling_blocks,
        "control_summary": control_summary,
        "peers": peer_tables,
        "figures": figure_items,
        "gallery": gallery,
        "gallery_column": gallery_column or "all",
        "files": files,
    }
    index = out_dir / "index.html"
    with atomic_open(index, "w", encoding="utf-8") as handle:
        handle.write(render_html(context))
    step("html")
    write_json(
        out_dir / "report.json",
        {
            **settings,
            "runs": runs_meta,
            "n_rows": len(frame),
            "n_errors": context["n_errors"],
            "models": models,
            "controls": controls,
            "control_sanity_passed": control_summary["passed"],
            "control_sanity_overall_passed": control_summary["overall_passed"],
            "tables": files,
            "seconds": round(time.perf_counter() - started, 3),
            "stage_seconds": stage_seconds,
        },
    )
    bar.close()
    return index


def _has_real_slices(summary: pd.DataFrame, column: str) -> bool:
    return bool((summary[column].astype(str) != stats.MISSING_LABEL).any())


def _bins_note(column: str) -> str:
    bins = stats.NUMERIC_BINS.get(column)
    if not bins:
        return ""
    return "Bins: " + ", ".join(label for _, label in bins) + " (missing values: unknown)."


def render_html(context: dict[str, Any]) -> str:
    """Render the page template (package data ``templates/report.html.j2``)."""
    from jinja2 import Environment, PackageLoader, select_autoescape

    env = Environment(
        loader=PackageLoader("bench.report", "templates"),
        autoescape=select_autoescape(["html", "j2"]),
        trim_blocks=True,
        lstrip_blocks=True,
    )
    return env.get_template("report.html.j2").render(**context)
