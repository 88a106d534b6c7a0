"""Rendering: an :class:`~glyphbench.report.analyse.Analysis` in, the report folder out.

Layout of the output folder::

    index.html              the page (figures and thumbnails are relative files)
    report.json             settings (n_boot, seed, confidence, by), runs, row counts
    tables/*.csv|md|tex     every table: raw numbers (CSV) and display text (MD, LaTeX)
    figures/*.png|svg       every figure
    gallery/*.jpg           thumbnails with OCR boxes drawn on
    browse.html, browse/    the image browser (glyphbench.report.image_browser; written by
                            write_report, which passes ``browse_page`` to link it)

Nothing here computes a statistic: every number comes from the analysis.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import pandas as pd

from glyphbench import templates
from glyphbench.core.bootstrap import MIN_UNITS
from glyphbench.core.io import atomic_open, write_json
from glyphbench.report import display, reader_aware, suites
from glyphbench.report import figures as figs
from glyphbench.report.analyse import CONTROL_METRICS, PEER_METRICS, Analysis, Stopwatch
from glyphbench.report.gallery import write_thumbnails
from glyphbench.report.latex import ABBREVIATIONS
from glyphbench.report.metric_info import metric_label
from glyphbench.report.reader_aware import headline as reader_headline
from glyphbench.report.reader_aware import report_section
from glyphbench.report.slices import bins_note
from glyphbench.report.stats import PEER_VIEWS
from glyphbench.report.suites import headline_display
from glyphbench.report.tables import display_summary, write_table_set
from glyphbench.report.verdict import headline, verdict_rows
from glyphbench.scoring.table import METRICS


@dataclass
class _Written:
    """What has been written so far: table files by name and page blocks."""

    tables_dir: Path
    files: dict[str, list[str]] = field(default_factory=dict)
    #: The width the LaTeX tables fit (None: 5.5 in).
    tex_width_pt: float | None = None

    def table(
        self, name: str, raw: pd.DataFrame, shown: pd.DataFrame, caption: str = "", **bold: Any
    ) -> pd.DataFrame:
        """Write the table set; ``bold``: ``marks``/``marked`` of the best cells (LaTeX)."""
        self.files[name] = write_table_set(
            self.tables_dir,
            name,
            raw,
            shown,
            caption=caption,
            tex_width_pt=self.tex_width_pt,
            **bold,
        )
        return shown


def render(
    analysis: Analysis,
    out_dir: Path,
    *,
    max_gallery_images: int = 400,
    stopwatch: Stopwatch | None = None,
    started: float | None = None,
    browse_page: str | None = None,
) -> Path:
    """Write the report folder for ``analysis``; return the path of ``index.html``.

    ``browse_page``: the image browser's page in the folder, which the page links to
    (:mod:`glyphbench.report.image_browser`, written by ``write_report``).
    """
    watch = stopwatch or Stopwatch()
    out_dir.mkdir(parents=True, exist_ok=True)
    written = _Written(out_dir / "tables", tex_width_pt=analysis.settings.tex_width_pt)
    page: dict[str, Any] = _tables(analysis, written)
    watch.lap("tables")
    page["figures"] = _figures(analysis, out_dir / "figures", page["attributes"])
    watch.lap("figures")
    page["gallery"] = _gallery(analysis, out_dir, max_gallery_images)
    watch.lap("gallery")
    index = out_dir / "index.html"
    with atomic_open(index, "w", encoding="utf-8") as handle:
        context = _context(analysis, page, written)
        handle.write(templates.render("report.html.j2", browse_page=browse_page, **context))
    watch.lap("html")
    write_json(
        out_dir / "report.json",
        {
            **_settings(analysis),
            "runs": shareable_runs(analysis.runs, out_dir),
            "n_rows": analysis.n_rows,
            "n_errors": analysis.n_errors,
            "n_unread": analysis.n_unread,
            "row_states": analysis.row_states.to_dict("records"),
            "models": analysis.models,
            "controls": analysis.controls,
            "control_sanity_passed": analysis.verdict.passed,
            "control_sanity_overall_passed": analysis.verdict.overall_passed,
            "tables": written.files,
            "suites": _suite_json(analysis),
            "protocol_warnings": analysis.protocol_warnings,
            "run_warnings": analysis.run_warnings,
            "reader_error": report_section(analysis.reader_aware, analysis.comparisons),
            "seconds": round(time.perf_counter() - (started or time.perf_counter()), 3),
            "stage_seconds": watch.seconds,
        },
    )
    return index


def _settings(analysis: Analysis) -> dict[str, Any]:
    settings = analysis.settings
    return {
        "n_boot": settings.n_boot,
        "seed": settings.seed,
        "confidence": settings.confidence,
        "by": list(analysis.slicing.columns),
        "by_skipped": dict(analysis.slicing.skipped),
        "gallery_slice": analysis.slicing.first,
        "primary_metric": settings.primary_metric,
    }


# --------------------------------------------------------------------------- tables


def _tables(analysis: Analysis, written: _Written) -> dict[str, Any]:
    """Summary, ranking, slice tables, comparisons, peer views and control checks."""
    primary = analysis.settings.primary_metric
    metrics = analysis.settings.metrics
    marks = display.best_marks(analysis.summary, metrics, analysis.models, analysis.comparisons)
    marked = display.best_rows(analysis.comparisons, metrics, analysis.models)
    summary = written.table(
        "summary",
        analysis.summary,
        display.summary_display(analysis.summary, metrics, analysis.controls),
        caption="Per-model scores with 95% bootstrap intervals; bold: a model significantly "
        "better than every other model (paired bootstrap, Holm).",
        marks=marks,
        marked=marked,
    )
    ranking = written.table(
        "ranking",
        analysis.ranking,
        display.ranking_display(analysis.ranking, primary),
        caption="Ranking by NED from Holm-corrected paired comparisons; '=' marks a shared rank.",
    )
    attributes = []
    for column, table in analysis.slices.items():
        shown = written.table(
            f"by_{column}",
            table,
            display_summary(table, [column], metrics),
            caption=f"Scores by {column} with 95% bootstrap intervals.",
        )
        attributes.append(
            {
                "column": column,
                "table": display.html_table(shown),
                "figure": None,
                "bins": bins_note(column),
            }
        )
    comparisons = written.table(
        "comparisons",
        analysis.comparisons,
        display.comparison_display(analysis.comparisons),
        caption="Paired differences on shared prompts (paired bootstrap, Holm over the pairs).",
    )
    peers = []
    for name, (title, mapping) in PEER_VIEWS.items():
        view = analysis.peers[name]
        shown = written.table(f"peer_{name}", view, display.peer_display(view, mapping), title)
        peers.append({"title": title, "table": display.html_table(shown)})
    headlines = None
    if analysis.suites:  # each benchmark's own headline beside glyphbench's metrics
        shown_headlines = headline_display(analysis.suites, analysis.ordered)
        headlines = display.html_table(
            written.table(
                "suite_headlines",
                shown_headlines,
                shown_headlines,
                caption="Each benchmark's headline as its own code computes it, 95% intervals.",
            )
        )
    return {
        "suite_headlines": headlines,
        "suites": _suite_blocks(analysis, written),
        "summary": display.html_table(summary, classes=marks, id="summary-table", marked=marked),
        "answer": _answer_block(analysis, written),
        "ranking": display.html_table(ranking),
        "comparisons": display.html_table(comparisons),
        "peers": peers,
        "attributes": attributes,
        "outcomes": _outcomes_block(analysis, written),
        "reader_error": _reader_block(analysis, written),
        **_control_blocks(analysis, written),
    }


def _reader_block(analysis: Analysis, written: _Written) -> dict[str, Any]:
    """The reader's error: which card widened the intervals (or why none), and the tables."""

    aware = analysis.reader_aware
    block: dict[str, Any] = {"source": aware.source, "caveats": aware.caveats, "scores": None}
    if aware.measured and len(aware.scores):
        metric = str(aware.scores["metric"].iloc[0])
        scores = reader_aware.score_display(aware.scores)
        caption = f"Scores with the reader's error ({aware.source}); 95% intervals."
        block["scores"] = display.html_table(
            written.table("reader_error", aware.scores, scores, caption=caption)
        )
        pairs = reader_aware.comparison_display(analysis.comparisons, metric)
        block["comparisons"] = display.html_table(
            written.table(
                "reader_comparisons",
                analysis.comparisons,
                pairs,
                caption="Paired differences with the reader's error, at each pair's Holm level.",
            )
        )
    return block


def _answer_block(analysis: Analysis, written: _Written) -> dict[str, Any]:
    """The first screen: who is best and how sure, and each model against the controls."""

    primary = analysis.settings.primary_metric
    lines = headline(analysis.ranking, analysis.verdicts, primary, controls=analysis.controls)
    lines.append(reader_headline(analysis.reader_aware, analysis.comparisons))
    table = None
    if len(analysis.verdicts):
        rows = pd.DataFrame(verdict_rows(analysis.verdicts, analysis.summary, primary))
        written.table(
            "verdicts",
            analysis.verdicts,
            rows,
            caption="Each model against its run's controls on NED: paired bootstrap "
            "differences (model minus control) on shared prompts, 95% CI.",
        )
        table = display.html_table(rows)
    return {"lines": lines, "table": table}


def _outcomes_block(analysis: Analysis, written: _Written) -> Any:
    """Refusals (rate with interval) and cost per model, when any row has either."""
    lines = analysis.outcomes
    if lines.empty:
        return None

    def rate(line: pd.Series) -> str:
        return (
            f"{line['refusal_rate']:.0%} "
            f"[{line['refusal_rate_lo']:.0%}, {line['refusal_rate_hi']:.0%}]"
        )

    shown = pd.DataFrame(
        {
            "Model": lines["model"],
            "Images": lines["images"],
            "Errors": lines["errors"],
            "Refused": lines["refused"],
            "Refusal rate [95% CI]": lines.apply(rate, axis=1),
            "Cost (USD)": lines["cost_usd"].map(lambda v: "n/a" if v != v else f"{v:.2f}"),
        }
    )
    written.table("outcomes", lines, shown)
    return display.html_table(shown)


def _suite_blocks(analysis: Analysis, written: _Written) -> list[dict[str, Any]]:
    """Each suite's headline table, published scores, paired comparisons and protocol cards."""

    blocks = []
    for section in analysis.suites:
        name = section.name.replace("-", "_")
        scores = written.table(
            f"suite_{name}",
            section.scores,
            suites.scores_display(section),
            caption=f"{section.title}: the benchmark's own aggregates, 95% bootstrap intervals.",
        )
        published = written.table(
            f"suite_{name}_published", section.published, suites.published_display(section)
        )
        compared = written.table(
            f"suite_{name}_comparisons", section.comparisons, suites.comparisons_display(section)
        )
        blocks.append(
            {
                "name": section.name,
                "title": section.title,
                "headline": metric_label(section.headline),
                "scores": display.html_table(scores),
                "published": display.html_table(published) if len(published) else None,
                "comparisons": display.html_table(compared) if len(compared) else None,
                "cards": {run: suites.card_lines(card) for run, card in section.cards.items()},
                "warnings": section.warnings,
            }
        )
    return blocks


def _suite_json(analysis: Analysis) -> dict[str, Any]:
    """The suites' numbers and cards for report.json."""
    return {
        section.name: {
            "headline": section.headline,
            "scores": section.scores.to_dict("records"),
            "published": section.published.to_dict("records"),
            "comparisons": section.comparisons.to_dict("records"),
            "cards": section.cards,
            "warnings": section.warnings,
        }
        for section in analysis.suites
    }


def _control_blocks(analysis: Analysis, written: _Written) -> dict[str, Any]:
    sanity_blocks, ceiling_blocks = [], []
    for check in analysis.control_checks:
        suffix = f"_{check.column}" if check.column else ""
        shown = display.control_display(check.sanity, check.by, CONTROL_METRICS)
        written.table(f"controls{suffix}", check.sanity, shown)
        sanity_blocks.append(
            {
                "column": check.column or "overall",
                "failed": any(v is False for v in check.sanity["passed"]),
                "table": display.html_table(shown),
            }
        )
        if not check.ceiling.empty:
            primary = analysis.settings.primary_metric
            shown = display.ceiling_display(check.ceiling, check.by, primary)
            written.table(f"ocr_ceiling{suffix}", check.ceiling, shown)
            ceiling_blocks.append(
                {"column": check.column or "overall", "table": display.html_table(shown)}
            )
    return {
        "sanity": sanity_blocks,
        "ceiling": ceiling_blocks,
        "faithfulness": _faithfulness_block(analysis, written),
    }


def _faithfulness_block(analysis: Analysis, written: _Written) -> dict[str, Any] | None:
    """The readers' faithfulness on the typo controls: a table and the warnings."""
    measured = analysis.faithfulness
    if measured.empty:
        return None
    shown = measured.drop(columns="warning").rename(
        columns={
            "reader": "Reader",
            "written": "Typos read as drawn",
            "corrected": "Typos corrected",
            "misread": "Misread",
            "faithfulness": "Faithfulness",
        }
    )
    shown["Faithfulness"] = shown["Faithfulness"].map(
        lambda v: "n/a (no typo read either way)" if v != v else f"{100 * v:.0f}%"
    )
    written.table("reader_faithfulness", measured, shown)
    return {
        "table": display.html_table(shown),
        "warnings": [w for w in measured["warning"] if isinstance(w, str)],
    }


# --------------------------------------------------------------------------- figures, gallery


def _figure(title: str, names: list[str]) -> dict[str, str]:
    return {"title": title, "png": f"figures/{names[0]}", "svg": f"figures/{names[1]}"}


def _figures(
    analysis: Analysis, folder: Path, attributes: list[dict[str, Any]]
) -> list[dict[str, str]]:
    """Draw every figure; slice figures go into their attribute block, the rest are returned."""
    primary = analysis.settings.primary_metric
    models = analysis.ordered
    for block in attributes:
        column = block["column"]
        names = figs.score_by_slice(
            analysis.slices[column], column, primary, models, folder / f"by_{column}"
        )
        block["figure"] = _figure(f"NED by {column}", names)
    items = []
    if analysis.length_curves is not None:
        names = figs.score_vs_length(
            analysis.length_curves, primary, models, folder / "score_vs_length"
        )
        items.append(_figure("Score against text length", names))
    column = analysis.heat_column
    if column:
        summary = analysis.slices[column]  # "(none)" stays: often the largest group
        names = figs.heatmap(summary, column, primary, models, folder / f"heatmap_{column}")
        if names:
            items.append(_figure(f"Model x {column}", names))
    names = figs.distributions(analysis.scores, primary, folder / "distributions")
    items.append(_figure("Score distributions", names))
    return items


def _gallery(analysis: Analysis, out_dir: Path, max_images: int) -> list[dict[str, Any]]:
    """Thumbnails of the picked examples, grouped by model (in table order) and slice."""
    items = write_thumbnails(analysis.gallery, out_dir, max_images)
    gallery = []
    for model in analysis.ordered:
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
    return gallery


# --------------------------------------------------------------------------- page


#: An absolute path in a text: a slash, then folders, then a last part.
_ABSOLUTE = re.compile(r"(?<![\w.~/])/(?:[^\s/\"'?&:]+/)+([^\s/\"'?&:]+)")


def shareable(value: Any, run_dir: str, report_dir: Path) -> Any:
    """``value`` (run.json, a path) with no absolute path of this machine: paths in the run
    folder become relative to the report folder, any other one ``…/`` and its last part.

    A report is sent to others and published; the machine's folders (a home, a scratch
    disk) say nothing to them, and the run folder is found from the report.

    >>> shareable({"out": "/home/a/runs/x", "spec": "diffusers:/home/a/m/tiny?device=cpu",
    ...            "argv": ["/home/a/.venv/bin/glyphbench", "run"]}, "/home/a/runs/x",
    ...           Path("/home/a/runs/x/report"))
    {'out': '..', 'spec': 'diffusers:…/tiny?device=cpu', 'argv': ['…/glyphbench', 'run']}
    """
    if isinstance(value, dict):
        return {key: shareable(item, run_dir, report_dir) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [shareable(item, run_dir, report_dir) for item in value]
    if not isinstance(value, str) or "/" not in value:
        return value
    root = str(Path(run_dir))

    def relative(match: re.Match[str]) -> str:
        path = match.group(0)
        if path == root or path.startswith(root + "/"):
            return os.path.relpath(path, report_dir.resolve())
        return "…/" + match.group(1)

    return _ABSOLUTE.sub(relative, value)


def shareable_runs(runs: dict[str, Any], report_dir: Path) -> dict[str, Any]:
    """Each run's folder and run.json as :func:`shareable` makes them (``report.json``,
    the page): named once, by the run's name (its run id), located relative to the report."""
    return {
        name: {
            "dir": os.path.relpath(str(info["dir"]), report_dir.resolve()),
            "meta": shareable(info.get("meta") or {}, str(info["dir"]), report_dir),
        }
        for name, info in runs.items()
    }


def _context(analysis: Analysis, page: dict[str, Any], written: _Written) -> dict[str, Any]:
    runs = shareable_runs(analysis.runs, written.tables_dir.parent)
    verdict = analysis.verdict
    return {
        **page,
        "title": "glyphbench report: " + ", ".join(runs) if runs else "glyphbench report",
        "generated": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "runs": [
            {
                "name": name,
                "dir": info["dir"],
                "meta": json.dumps(info["meta"], indent=2, default=str),
            }
            for name, info in runs.items()
        ],
        "n_rows": analysis.n_rows,
        "n_errors": analysis.n_errors,
        "n_unread": analysis.n_unread,
        "row_notes": row_notes(analysis.row_states),
        "models": analysis.models,
        "controls": analysis.controls,
        "settings": _settings(analysis),
        "control_summary": {
            "present": verdict.present,
            "passed": verdict.passed,
            "overall_passed": verdict.overall_passed,
            "n_checks": verdict.n_checks,
            "n_failed": verdict.n_failed,
            "chains": verdict.chains,
        },
        "gallery_column": analysis.slicing.first or "all",
        "protocol_warnings": analysis.protocol_warnings,
        "run_warnings": analysis.run_warnings,
        "faithfulness_warnings": [
            w for w in analysis.faithfulness.get("warning", []) if isinstance(w, str)
        ],
        "files": written.files,
        "min_units": MIN_UNITS,
        "glossary": glossary(
            [*analysis.settings.metrics, *(m for m in PEER_METRICS if m in analysis.summary)]
        ),
    }


def glossary(metrics: list[str]) -> list[dict[str, str]]:
    """The page's glossary: each metric shown, from its record in the metric table (label,
    abbreviation in the LaTeX tables, direction, definition, the benchmark it follows).

    >>> entry = glossary(["ned"])[0]
    >>> entry["term"], entry["abbreviation"], entry["direction"]
    ('NED similarity (1 = exact)', 'NED', 'higher is better')
    """

    entries = []
    for name in dict.fromkeys(metrics):
        if name not in METRICS:
            continue
        record = METRICS.get(name)
        entries.append(
            {
                "term": record.label,
                "abbreviation": ABBREVIATIONS.get(name, ""),
                "column": name,
                "direction": "higher is better" if record.higher_is_better else "lower is better",
                "doc": record.doc,
                "reference": record.reference,
            }
        )
    return entries


def row_notes(states: pd.DataFrame) -> list[str]:
    """One line per model with unread or failed rows (shown above the summary).

    >>> row_notes(pd.DataFrame([{"model": "m", "rows": 24, "unread": 12, "failed": 1,
    ...                          "error": "OCR: boom"}]))
    ['m: 12 of 24 rows not read yet (left out: n counts read rows only); 1 failed (OCR: boom)']
    """
    lines = []
    for line in states.to_dict("records"):
        parts = []
        if line["unread"]:
            parts.append(
                f"{line['unread']} of {line['rows']} rows not read yet "
                "(left out: n counts read rows only)"
            )
        if line["failed"]:
            more = "commonest: " if line["failed"] > 1 else ""
            parts.append(f"{line['failed']} failed ({more}{line['error']})")
        lines.append(f"{line['model']}: " + "; ".join(parts))
    return lines
