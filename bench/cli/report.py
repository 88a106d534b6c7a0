"""``glyphbench report``: tables, figures and an HTML page from one or more runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from glyphbench.cli.common import every_row_failed, interruptible
from glyphbench.core.io import json_safe, locate_run
from glyphbench.core.terminal import printable
from glyphbench.run.reading_store import write_reader_view


def report_command(
    runs: list[Path] = typer.Argument(
        ..., help="Run folder(s) holding results.parquet (several: they must share prompts)."
    ),
    out: Path = typer.Option(
        None, "--out", "-o", help="Output folder (default: RUN/report of the first run)."
    ),
    by: str = typer.Option(
        None,
        "--by",
        help="Comma-separated columns to slice by, e.g. prompt_type,cefr (numeric ones are "
        "binned; default: prompt_type, group, cefr, char_length, word_count, laion_freq).",
    ),
    n_boot: int = typer.Option(1000, "--n-boot", help="Bootstrap resamples per interval."),
    seed: int = typer.Option(0, "--seed", help="Seed of every bootstrap draw."),
    reader: str = typer.Option(
        None,
        "--reader",
        help="Report the readings of this stored reader (name or identity) instead of the "
        "primary one; see `glyphbench readers list RUN`.",
    ),
    tex_width: str = typer.Option(
        None,
        "--tex-width",
        help="Text width the LaTeX tables fit: a template (neurips, iclr: 5.5in; icml 6.75in, "
        "acl 6.3in, cvpr 6.875in; icml-column, acl-column, cvpr-column: one column of those; "
        "full: 7in) or a length (6in, 14cm, 400pt). Default neurips (5.5in).",
    ),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="Print the answer (headline, intervals, ranks, verdicts) as JSON on stdout, "
        "as REPORT/answer.json holds it (docs/report.md).",
    ),
    reader_card: Path = typer.Option(
        None,
        "--reader-card",
        help="A reader's calibration card (folder or card.json of `glyphbench readers "
        "calibrate`): every interval also carries the reader's error against people.",
    ),
) -> None:
    """Write RUN/report/index.html plus tables (CSV, Markdown, LaTeX) and figures (PNG, SVG).

    Example:

        glyphbench report runs/2026-11-22 --by prompt_type,cefr,char_length
    """
    from glyphbench.report.build import ANSWER, write_report
    from glyphbench.report.console import print_answer, summary_console

    runs = [locate_run(run) for run in runs]
    columns = [c.strip() for c in by.split(",") if c.strip()] if by else None
    if reader:  # the runs seen through another stored reader
        views = [write_reader_view(run, reader) for run in runs]
        out = out or views[0] / "report"
        runs = views
    target = out or runs[0] / "report"
    # The report is written all or nothing (its temporary folder is removed on the way out).
    with interruptible(then=f"nothing written; {target} is as it was before"):
        index = write_report(
            runs,
            out,
            by=columns,
            n_boot=n_boot,
            seed=seed,
            progress=True,
            tex_width=tex_width,
            reader_card=reader_card,
        )
    answer = json.loads((index.parent / ANSWER).read_text(encoding="utf-8"))
    if as_json:
        text = json.dumps(json_safe({**answer, "report": str(index)}), indent=2, ensure_ascii=False)
        typer.echo(printable(text, newlines=True))  # still JSON: a label's controls escaped
    else:
        print_answer(answer, summary_console())
        typer.echo(str(index))
    _fail_when_nothing_was_made(answer)


def _fail_when_nothing_was_made(answer: dict[str, Any]) -> None:
    """Exit 1 (as ``run`` does) when every row of the runs failed: the report shows the
    failures, and a scheduler must not read it as a result."""
    models = answer.get("models") or []
    images = sum(int(m.get("images") or 0) for m in models)
    failed = sum(int(m.get("failed") or 0) for m in models)
    if images and failed >= images:
        every_row_failed(images, "the reported runs", "")


def register(app: typer.Typer) -> None:
    app.command("report")(report_command)
