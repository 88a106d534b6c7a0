"""``glyphbench human ...``: sample a study, serve the rating app, compute statistics, export.

Only typer is imported at top level; pandas, gradio and scipy load inside commands.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from glyphbench.core.errors import InputError
from glyphbench.core.words import plural

if TYPE_CHECKING:
    from rich.console import Console

    from glyphbench.templates import Table

human = typer.Typer(
    name="human",
    help="Human rating study: sample images, serve the rating app, agreement statistics.",
    no_args_is_help=True,
)


@human.command("sample")
def sample_command(
    runs: list[Path] = typer.Argument(..., help="Run folders (each with results.parquet)."),
    out: Path = typer.Option(
        ..., "--out", "-o", help="New study folder to create (absent or empty)."
    ),
    n: int = typer.Option(
        None,
        "--n",
        help="Images in the sample (gold items come on top). Default 1000, or every image "
        "when the run holds fewer.",
    ),
    cells: str = typer.Option(
        "group,model", help="Comma-separated results columns that define cells."
    ),
    min_per_cell: int = typer.Option(
        None,
        help="Floor: images drawn from every cell. Default 10, or the smallest cell's size.",
    ),
    raters_per_image: int = typer.Option(
        3, "--raters-per-image", "-k", help="K: ratings each image needs."
    ),
    overlap: int = typer.Option(
        0,
        help="Pilot: images reach this many raters before new images are opened, so "
        "agreement is measurable from the first ratings (0: breadth first).",
    ),
    seed: int = typer.Option(0, help="Seed of the draw (and of the opaque image ids)."),
    gold: int = typer.Option(
        20, help="Gold items (control images with known answers) to add, at most."
    ),
    batch_size: int = typer.Option(30, help="Images per participant batch."),
    gold_per_batch: int = typer.Option(2, help="Gold items mixed into each batch."),
    scale: str = typer.Option("yesno", help="Answer scale: yesno or likert5."),
    include_controls: bool = typer.Option(
        False,
        "--include-controls",
        help="Also sample control-model images (rendered, typo'd, blank: a spread of "
        "quality people can judge; the rest stay gold items).",
    ),
) -> None:
    """Draw a stratified sample from RUNS into a self-contained study folder.

        glyphbench human sample runs/a runs/b --n 1000 --cells group,model \\
            --min-per-cell 10 --raters-per-image 3 --seed 0 --out study/
    """
    from glyphbench.human_eval.sampling import batches_to_fill
    from glyphbench.human_eval.study import create_study

    columns = [c.strip() for c in cells.split(",") if c.strip()]
    study = create_study(
        runs,
        out,
        n=n,
        cells=columns,
        min_per_cell=min_per_cell,
        raters_per_image=raters_per_image,
        overlap=overlap,
        seed=seed,
        n_gold=gold,
        batch_size=batch_size,
        gold_per_batch=gold_per_batch,
        scale=scale,
        include_controls=include_controls,
    )
    manifest = study.manifest
    regular = manifest[~manifest["is_gold"]]
    for note in study.config.get("design_notes", []):
        typer.echo(f"adapted to the run: {note}")
    batches, per_batch = batches_to_fill(len(regular), raters_per_image, batch_size)
    typer.echo(
        f"sampled {plural(len(regular), 'image')} in {plural(regular['cell'].nunique(), 'cell')}"
        f" + {int(manifest['is_gold'].sum())} gold into {out}; K={raters_per_image};"
        f" {plural(batches, 'batch', 'batches')} of {per_batch} images to fill"
    )


@human.command("serve")
def serve_command(
    study: Path = typer.Argument(..., help="Study folder."),
    host: str = typer.Option(
        "127.0.0.1", help="Interface to bind; 0.0.0.0 exposes it to the network."
    ),
    port: int = typer.Option(None, help="Port (default: Gradio's, 7860 or the next free one)."),
    auth_file: Path = typer.Option(
        None, "--auth-file", help="user:password lines for the admin panel."
    ),
    rater_auth_file: Path = typer.Option(
        None,
        "--rater-auth-file",
        help="user:password lines: raters must log in (login = participant).",
    ),
    max_claims_per_address: int = typer.Option(
        None,
        "--max-claims-per-address",
        min=1,
        help="Unrated images the raters of one client address may hold at once "
        "(default: study.json's, else a quarter of the study's ratings); browsers on this "
        "machine are not capped (a local pilot). Behind a reverse proxy, name it with "
        "--trusted-proxy so raters are told apart.",
    ),
    trusted_proxy: list[str] = typer.Option(
        [],
        "--trusted-proxy",
        help="Address or network of a reverse proxy whose X-Forwarded-For names the client "
        "(repeatable; e.g. 127.0.0.1). Without it the header is ignored: the client is the "
        "socket's peer, for logins and claims alike.",
    ),
    allowed_host: list[str] = typer.Option(
        [],
        "--allowed-host",
        help="A host name raters' browsers use for this server (repeatable), e.g. the "
        "proxy's public name; IP addresses and localhost always pass, other names are "
        "refused (DNS rebinding).",
    ),
) -> None:
    """Run the rating app for STUDY (blocks until Ctrl-C)."""
    from glyphbench.human_eval.serve import check_bind, check_port, check_proxies, launch
    from glyphbench.human_eval.study import load_study

    check_bind(host, port)
    check_proxies(trusted_proxy)
    check_port(host, port)  # one line naming --port, not Gradio's words about launch()
    launch(
        load_study(study),
        host=host,
        port=port,
        auth_file=auth_file,
        rater_auth_file=rater_auth_file,
        max_claims_per_address=max_claims_per_address,
        trusted_proxies=trusted_proxy,
        allowed_hosts=allowed_host,
    )


@human.command("stats")
def stats_command(
    study: Path = typer.Argument(..., help="Study folder."),
    out: Path = typer.Option(
        None, "--out", "-o", help="Folder for the CSV tables (default STUDY/analysis)."
    ),
    n_boot: int = typer.Option(1000, help="Bootstrap resamples for the intervals."),
    seed: int = typer.Option(0, help="Bootstrap seed."),
) -> None:
    """Print agreement, metric-human alignment, model ranking and rater quality."""
    from rich.console import Console

    from glyphbench.human_eval.report import (
        agreement_table,
        alignment_table,
        analyse,
        kendall_sentence,
        save_tables,
    )
    from glyphbench.human_eval.study import load_study

    loaded = load_study(study)
    analysis = analyse(loaded, n_boot=n_boot, seed=seed)
    console = Console()
    # The console shows the report page's own tables: the same cells, "n/a: why" included,
    # fitted to the terminal (wrapped, split or stacked; never a cut number or name).
    _print_fitted(
        console,
        agreement_table(analysis.agreement),
        "Agreement (95% intervals over images)",
        drop=("note",),  # the notes follow the table as lines of their own
    )
    for note in analysis.agreement["note"]:
        if note:
            console.print(f"note: {note}", markup=False)
    _print_fitted(
        console,
        alignment_table(analysis.alignment),
        "Automatic scores vs people",
        keys=2,
        drop=("note",),  # as the agreement's: a line each below
    )
    for row in analysis.alignment.to_dict("records"):
        if row.get("note"):
            console.print(f"note: {row['metric']}, {row['model']}: {row['note']}", markup=False)
    console.print(
        f"model ranking, people vs each metric: Kendall tau {kendall_sentence(analysis.kendall)}",
        markup=False,
    )
    flagged = analysis.raters[analysis.raters["outlier"]]
    console.print(f"raters: {len(analysis.raters)}, flagged: {len(flagged)}")
    for row in flagged.itertuples():
        console.print(f"  {row.rater_id}: {row.reason}", markup=False)
    folder = out or loaded.folder / "analysis"
    folder.mkdir(parents=True, exist_ok=True)
    save_tables(analysis, folder)
    console.print(f"tables -> {folder}", markup=False)


@human.command("export")
def export_command(
    study: Path = typer.Argument(..., help="Study folder."),
    out: Path = typer.Option(
        None, "--out", "-o", help="Output prefix (default STUDY/export/ratings)."
    ),
) -> None:
    """Write the ratings as long-format CSV and Parquet with anonymised rater ids."""
    from glyphbench.human_eval.report import NO_RATINGS, anonymised_ratings, export_ratings
    from glyphbench.human_eval.study import load_study

    loaded = load_study(study)
    ratings = anonymised_ratings(loaded)  # read once for both files
    if ratings.empty:  # as `human stats` and `human report` say; the admin page's export
        raise InputError(loaded.folder, NO_RATINGS)  # may be empty
    prefix = out or loaded.folder / "export" / "ratings"
    for suffix in (".csv", ".parquet"):
        path = export_ratings(loaded, prefix.with_suffix(suffix), ratings)
        typer.echo(f"wrote {path}")


@human.command("report")
def report_command(
    study: Path = typer.Argument(..., help="Study folder."),
    out: Path = typer.Option(None, "--out", "-o", help="Report folder (default STUDY/report)."),
    n_boot: int = typer.Option(1000, help="Bootstrap resamples for the intervals."),
) -> None:
    """Write an HTML report: agreement tables, metric-vs-human plot, ranking, raters."""
    from glyphbench.human_eval.report import write_report
    from glyphbench.human_eval.study import load_study

    loaded = load_study(study)
    path = write_report(loaded, out or loaded.folder / "report", n_boot=n_boot)
    typer.echo(f"report -> {path}")


def register(app: typer.Typer) -> None:
    app.add_typer(human, name="human")


def _print_fitted(
    console: Console, table: Table, title: str, *, keys: int = 1, drop: tuple[str, ...] = ()
) -> None:
    """Print a page table (:class:`glyphbench.templates.Table`) at the console's width."""
    from glyphbench.report.console_fit import fit_table
    from glyphbench.templates import Table

    kept = [k for k, column in enumerate(table.columns) if column not in drop]
    shown = Table([table.columns[k] for k in kept], [[row[k] for k in kept] for row in table.rows])
    for part in fit_table(shown, title, console.width, keys=keys):
        console.print(part)
