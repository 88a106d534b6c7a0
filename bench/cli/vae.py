"""``glyphbench vae-eval``: how much text survives a VAE's encode-decode round trip.

Imports only typer/rich at top level; torch, diffusers and easyocr load inside the
command. Without a subcommand the group runs the evaluation; ``download`` fetches
the images a TextInVision-style metadata file lists.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from glyphbench.cli.common import fail_when_every_row_failed, interruptible, readers_help
from glyphbench.core.errors import InputError
from glyphbench.core.io import read_run_json
from glyphbench.core.progress import LineProgress
from glyphbench.core.registry import PLUGINS
from glyphbench.core.schema import failed_mask
from glyphbench.core.words import plural
from glyphbench.readers import DEFAULT_READER
from glyphbench.vae_eval.codecs import check_codec_files
from glyphbench.vae_eval.config import apply_config
from glyphbench.vae_eval.download import download

if TYPE_CHECKING:
    import pandas as pd
    from rich.console import Console

vae_app = typer.Typer(
    help="Measure how much text survives a VAE (or JPEG / resize) round trip.",
    invoke_without_command=True,
    no_args_is_help=False,
    add_completion=False,
)


@vae_app.callback(invoke_without_command=True)
def evaluate_command(
    ctx: typer.Context,
    vae: list[str] = typer.Option(
        None,
        "--vae",
        help="Codec spec, repeatable: identity, jpeg?quality=Q, resize?factor=F, "
        "diffusers:<hub id or path>[:subfolder], taesd:<folder>, python:module:Object.",
    ),
    images: str = typer.Option(
        "default",
        "--images",
        help="'default' (synthetic, options ?size=512&seed=0), a folder, "
        "or a metadata .json/.jsonl.",
    ),
    limit: int = typer.Option(
        None,
        "--limit",
        min=1,
        metavar="N",
        help="Evaluate at most N images ('default': N // 5 at each of the 5 font sizes).",
    ),
    ocr: str = typer.Option(
        DEFAULT_READER,
        "--ocr",
        help=readers_help(f"Reader (OCR engine) spec, default {DEFAULT_READER}"),
    ),
    out: Path = typer.Option(None, "--out", "-o", help="Output folder (resumable)."),
    batch_size: int = typer.Option(
        4, "--batch-size", min=1, metavar="N", help="Images per codec/OCR batch and part file."
    ),
    retry_errors: bool = typer.Option(
        False, "--retry-errors", help="Recompute batches that hold error rows."
    ),
    no_save_images: bool = typer.Option(
        False, "--no-save-images", help="Keep no PNG of the originals and reconstructions."
    ),
    config: Path = typer.Option(
        None,
        "--config",
        help="YAML listing the VAEs (vaes:) and optionally images, ocr, limit, batch_size, out; "
        "flags typed on the command line win (configs/vaes-2026.yaml: the field's VAEs).",
    ),
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Resolve codecs, image set and reader offline; load nothing."
    ),
) -> None:
    """Encode-decode images with each codec, OCR before and after, score WR/PA/PSNR/SSIM.

    Writes OUT/vae_results.parquet and OUT/report/index.html. Rerunning with the same
    OUT skips (image, codec) pairs already done. Example:

        glyphbench vae-eval --vae identity --vae "jpeg?quality=30" --limit 30 --out vae-out
    """
    if ctx.invoked_subcommand is not None:
        return

    flags = {"vae": vae, "images": images, "ocr": ocr, "limit": limit, "batch_size": batch_size}
    settings = apply_config(ctx, config, dry_run, {**flags, "out": out})
    if settings is None:  # --dry-run printed its plan
        return
    vae, images, ocr, limit = (
        settings["vae"],
        settings["images"],
        settings["ocr"],
        settings["limit"],
    )
    batch_size, out = settings["batch_size"], settings["out"]

    if not vae:
        raise InputError(
            None, "give at least one --vae (e.g. --vae identity --vae 'jpeg?quality=30')"
        )
    if out is None:
        raise InputError(None, "--out is required")
    _check_specs(vae, ocr)

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    from glyphbench.vae_eval.report import write_report
    from glyphbench.vae_eval.runner import RESULTS_NAME, RunOptions, evaluate

    options = RunOptions(
        codecs=list(vae),
        images=images,
        ocr=ocr,
        limit=limit,
        batch_size=batch_size,
        save_images=not no_save_images,
        retry_errors=retry_errors,
    )
    console = Console(stderr=True)
    bar = LineProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    )
    tasks: dict[str, object] = {}

    def progress(stage: str, done: int, total: int) -> None:
        if not tasks:
            bar.start()  # at the first batch: a refused input prints only its error line
        if stage not in tasks:
            tasks[stage] = bar.add_task(stage, total=total)
        bar.update(tasks[stage], completed=done)  # type: ignore[arg-type]

    try:
        with interruptible():  # Ctrl-C 130, SIGTERM 143: one line saying how to resume
            table = evaluate(options, out, progress=progress)
    finally:
        if tasks:
            bar.stop()
    notes = read_run_json(out, required=True).get("notes", [])
    report = write_report(table, out, notes=notes)
    print_summary(table, Console())
    failed = int(failed_mask(table).sum()) if len(table) else 0
    typer.echo(
        f"{plural(len(table), 'row')} ({failed} failed) -> {out / RESULTS_NAME}; report {report}"
    )
    fail_when_every_row_failed(table, "the evaluation")


def _check_specs(codecs: list[str], reader: str) -> None:
    """Resolve every codec spec and the reader spec before anything is written or loaded."""
    for flag, kind, specs in (("--vae", "codecs", codecs), ("--ocr", "readers", [reader])):
        for spec in specs:
            _, _, query = spec.partition("?")
            stray = [part for part in query.split("&") if part and not part.partition("=")[0]]
            stray += [part for part in query.split("&") if part and "=" not in part]
            if stray:
                raise InputError(flag, f"{spec}: malformed option {stray[0]!r}; use ?key=value")
            try:
                PLUGINS.resolve(kind, spec)
            except InputError as exc:
                raise InputError(flag, exc.problem) from None
            if kind == "codecs":
                check_codec_files(spec, read=False)  # a missing taesd: folder names the folder


@vae_app.command("download")
def download_command(
    metadata: Path = typer.Argument(
        ..., help="vae_images_metadata.json (file name -> {image_url, ...})."
    ),
    out: Path = typer.Option(
        ..., "--out", "-o", help="Folder for the images (and a copy of the metadata)."
    ),
    limit: int = typer.Option(None, "--limit", min=1, help="Only the first N entries."),
    timeout: float = typer.Option(30.0, "--timeout", help="Seconds per request."),
) -> None:
    """Fetch the images a metadata file lists (needs internet; resumable; never used by tests).

    Afterwards evaluate them with: glyphbench vae-eval --images OUT --vae ... --out RESULTS
    """
    summary = download(metadata, out, limit=limit, timeout=timeout)
    for name, reason in summary.failed.items():
        typer.echo(f"failed {name}: {reason}", err=True)
    typer.echo(
        f"fetched {len(summary.fetched)}, already present {len(summary.skipped)}, "
        f"failed {len(summary.failed)} -> {out}"
    )
    if summary.failed and not summary.fetched and not summary.skipped:
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.add_typer(vae_app, name="vae-eval")


def print_summary(table: pd.DataFrame, console: Console) -> None:
    """The report's summary table in the console: the ceiling, then each codec."""
    from rich.table import Table

    from glyphbench.vae_eval.analyse import codec_labels, summary_table

    if not len(table):
        return
    labels = codec_labels(table["vae"].astype(str))
    summary = summary_table(table.assign(vae=table["vae"].astype(str).map(labels)))
    shown = Table(title="VAE text survival (WR, PA in %)")
    columns = ["images", "failed", "WR", "WR loss", "PA", "PSNR", "SSIM"]
    for column in ["codec", *columns]:
        shown.add_column(column, justify="left" if column == "codec" else "right")
    for label, row in summary.iterrows():
        shown.add_row(str(label), *(_console_number(row.get(c)) for c in columns))
    console.print(shown)


def _console_number(value: Any) -> str:
    if value is None or (isinstance(value, float) and value != value):
        return "–"
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 1 or value == 0 else f"{value:.3f}"
    return str(value)
