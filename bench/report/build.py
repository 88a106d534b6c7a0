"""``write_report``: results tables in, ``report/`` folder out.

The report is two steps: :func:`glyphbench.report.analyse.analyse` computes every
table from the results (a pure function), :func:`glyphbench.report.render.render`
writes the tables, figures, gallery, ``index.html`` and ``report.json``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from glyphbench.calibration.reader_error import load_reader_error, shipped_reader_error
from glyphbench.core.errors import InputError
from glyphbench.core.io import FORMULA_START, atomic_path, write_json
from glyphbench.core.progress import LineProgress
from glyphbench.core.schema import unread_mask
from glyphbench.core.staging import check_replaceable, staged_folder
from glyphbench.report.analyse import PEER_METRICS, Analysis, Settings, Stopwatch, analyse
from glyphbench.report.answer import answer_of_analysis
from glyphbench.report.image_browser import write_browser
from glyphbench.report.latex import tex_width_pt
from glyphbench.report.load import REPORT_UNUSED_COLUMNS, load_runs
from glyphbench.report.render import render
from glyphbench.report.slices import Slicing
from glyphbench.report.stats import requested_families, summary_metrics

if TYPE_CHECKING:
    import pandas as pd

#: Stages the progress bar counts (analysis, then rendering).
STAGES = (
    "summaries",
    "comparisons",
    "controls",
    "curves and gallery picks",
    "image browser",
    "tables",
    "figures",
    "gallery",
    "html",
)


#: What makes an existing folder a report that may be replaced.
REPORT_MARKERS = ("report.json",)  # glyphbench's own: any site has an index.html
#: Everything a report writes at its top level; a report folder holding anything else is
#: not replaced (a test checks a built report holds nothing more).
REPORT_FILES = (
    "answer.json",
    "browse",
    "browse.html",
    "figures",
    "gallery",
    "index.html",
    "report.json",
    "tables",
)
#: The report's answer for the terminal and scripts (:mod:`glyphbench.report.answer`).
ANSWER = "answer.json"

#: One row per read image beside results.parquet, for a spreadsheet.
PER_IMAGE = "per_image.csv"
#: Its columns, in this order, where the results have them (then the summary metrics).
PER_IMAGE_KEYS = ("run", "model", "prompt_id", "seed", "sample_index", "text", "ocr_text")


def write_per_image(frame: pd.DataFrame, path: Path, settings: Settings) -> None:
    """``tables/per_image.csv``: each read row's keys, texts, metrics, error and image path.

    Rows not read yet are left out, as in every table; a text cell a spreadsheet would run
    as a formula gets a leading ``'`` (the rule of :func:`glyphbench.core.io.spreadsheet_safe`,
    here on Arrow columns: a million rows in about a second, where pandas' writer took
    half a minute).
    """
    import re

    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.csv as pacsv

    metrics = [*settings.metrics, *(m for m in PEER_METRICS if m not in settings.metrics)]
    wanted = (*PER_IMAGE_KEYS, *metrics, "error", "image_path")
    columns = [c for c in wanted if c in frame.columns]
    table = pa.Table.from_pandas(frame.loc[~unread_mask(frame), columns], preserve_index=False)
    formula = "^[" + "".join(re.escape(ch) for ch in FORMULA_START) + "]"
    for i, field in enumerate(table.schema):
        if pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
            cells = table.column(i)
            inert = pc.if_else(
                pc.match_substring_regex(cells, formula),
                pc.binary_join_element_wise(
                    pa.scalar("'", field.type), cells, pa.scalar("", field.type)
                ),
                cells,
            )
            table = table.set_column(i, field.name, inert)
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp:
        pacsv.write_csv(table, tmp)


def _write_browser(
    frame: pd.DataFrame, slicing: Slicing, analysis: Analysis, staged: Path, out_dir: Path
) -> Path:
    """The image browser of the read rows (those of ``per_image.csv``), beside the page."""

    unread = unread_mask(frame)
    labels = slicing.labels
    if unread.any():  # else no copy: the browser takes the columns it needs, in its order
        frame = frame.loc[~unread]
        labels = {column: label[~unread] for column, label in labels.items()}
    primary = analysis.settings.primary_metric
    return write_browser(
        frame,
        staged,
        models=analysis.ordered,
        metrics=[primary, *(m for m in analysis.settings.metrics if m != primary)],
        report_slices=labels,
        report_dir=out_dir,
        title=", ".join(analysis.runs),  # each run by its one name, its run id
    )


#: The most bootstrap resamples a report draws: 100 times the default (1,000); the Monte
#: Carlo error of an interval's ends is then far below the three decimals shown, and more
#: only fills memory (10 million on the 200-row demo filled 24 GiB and were killed).
MAX_RESAMPLES = 100_000


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
    tex_width: str | float | None = None,
    reader_card: str | Path | None = None,
) -> Path:
    """Build the full report for one or more run folders; return the path of ``index.html``.

    ``out`` defaults to ``RUN/report`` of the first run. ``by`` lists the slicing
    columns (default :data:`glyphbench.report.slices.DEFAULT_BY` where present); the
    gallery is sliced by the first of them. ``n_boot`` resamples per interval,
    all seeded by ``seed``. ``tex_width``: the text width the LaTeX tables fit, a
    template's name or a length (:func:`glyphbench.report.latex.tex_width_pt`; default 5.5 in).
    ``reader_card`` (a calibration card's folder or ``card.json``) adds reader-aware
    intervals (:mod:`glyphbench.report.reader_aware`); without it, the card glyphbench
    ships for the default reader does, for rows read by exactly that reader.
    """
    started = time.perf_counter()
    dirs = [Path(d) for d in run_dirs]
    if not 1 <= n_boot <= MAX_RESAMPLES:
        raise InputError(
            "--n-boot", f"must be from 1 to {MAX_RESAMPLES:,} resamples, got {n_boot:,}"
        )
    if seed < 0:  # numpy's generators take no negative seed
        raise InputError("--seed", f"must be 0 or more, got {seed}")
    out_dir = Path(out) if out is not None else dirs[0] / "report"
    width_pt = tex_width_pt(tex_width)  # a bad width is one line before any work
    # before any work: a folder that is not a report, or that holds a run, is refused
    inputs = [Path(d) for d in dirs]
    check_replaceable(out_dir, REPORT_MARKERS, "report", inputs, REPORT_FILES)
    card = shipped_reader_error() if reader_card is None else load_reader_error(reader_card)
    frame = load_runs(dirs, skip=REPORT_UNUSED_COLUMNS)
    slicing = Slicing.resolve(frame, by)
    if progress and slicing.skipped:  # say why a default slice is missing
        left_out = "; ".join(f"{c} ({why})" for c, why in slicing.skipped.items())
        print(f"default slices left out: {left_out}", file=sys.stderr, flush=True)
    settings = Settings(
        n_boot=n_boot,
        seed=seed,
        confidence=confidence,
        gallery_k=gallery_k,
        metrics=summary_metrics(
            list(frame.columns), requested_families(frame.attrs.get("runs", {}))
        ),
        tex_width_pt=width_pt,
        reader_card=card,
    )

    with LineProgress(disable=not progress) as bar:
        task = bar.add_task("report", total=len(STAGES))

        def advance(stage: str) -> None:
            bar.update(task, description=f"report: {stage}")
            bar.advance(task)

        watch = Stopwatch(advance)
        analysis = analyse(frame, slicing, settings, watch)
        if progress and analysis.n_unread:  # said in the console too
            print(
                f"warning: {analysis.n_unread} rows not read yet are left out "
                "(n counts read rows only; read them with `glyphbench read RUN`)",
                file=sys.stderr,
                flush=True,
            )
        # the old report stays whole until then
        with staged_folder(out_dir, REPORT_MARKERS, "report", inputs, REPORT_FILES) as staged:
            write_per_image(frame, staged / "tables" / PER_IMAGE, analysis.settings)
            browse = _write_browser(frame, slicing, analysis, staged, out_dir)
            watch.lap("image browser")
            write_json(staged / ANSWER, answer_of_analysis(frame, analysis))
            index = render(
                analysis,
                staged,
                max_gallery_images=max_gallery_images,
                stopwatch=watch,
                started=started,
                browse_page=browse.name,
            )
        return out_dir / index.name
