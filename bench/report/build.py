"""``write_report``: results tables in, ``report/`` folder out.

The report is two steps: :func:`bench.report.analyse.analyse` computes every
table from the results (a pure function), :func:`bench.report.render.render`
writes the tables, figures, gallery, ``index.html`` and ``report.json``.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

from bench.core.errors import InputError
from bench.report.analyse import Settings, Stopwatch, analyse
from bench.report.load import REPORT_UNUSED_COLUMNS, load_runs
from bench.report.render import render
from bench.report.slices import Slicing
from bench.report.staging import check_replaceable, staged_folder
from bench.report.stats import requested_families, summary_metrics

#: Stages the progress bar counts (analysis, then rendering).
STAGES = (
    "summaries",
    "comparisons",
    "controls",
    "curves and gallery picks",
    "tables",
    "figures",
    "gallery",
    "html",
)


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
    columns (default :data:`bench.report.slices.DEFAULT_BY` where present); the
    gallery is sliced by the first of them. ``n_boot`` resamples per interval,
    all seeded by ``seed``.
    """
    started = time.perf_counter()
    dirs = [Path(d) for d in run_dirs]
    if n_boot < 1:
        raise InputError(None, f"--n-boot must be at least 1, got {n_boot}")
    out_dir = Path(out) if out is not None else dirs[0] / "report"
    check_replaceable(out_dir)  # before any work: a folder that is not a report is refused
    frame = load_runs(dirs, skip=REPORT_UNUSED_COLUMNS)
    slicing = Slicing.resolve(frame, by)
    if progress and slicing.skipped:  # say why a default slice is missing (issue 15)
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
    )
    from bench.core.progress import LineProgress

    with LineProgress(disable=not progress) as bar:
        task = bar.add_task("report", total=len(STAGES))

        def advance(stage: str) -> None:
            bar.update(task, description=f"report: {stage}")
            bar.advance(task)

        watch = Stopwatch(advance)
        analysis = analyse(frame, slicing, settings, watch)
        if progress and analysis.n_unread:  # issue 32: said in the console too
            print(
                f"warning: {analysis.n_unread} rows not read yet are left out "
                "(n counts read rows only; read them with `glyphbench read RUN`)",
                file=sys.stderr,
                flush=True,
            )
        with staged_folder(out_dir) as staged:  # issue 32: the old report stays whole until then
            index = render(
                analysis,
                staged,
                max_gallery_images=max_gallery_images,
                stopwatch=watch,
                started=started,
            )
        return out_dir / index.name
