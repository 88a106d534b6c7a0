"""``glyphbench prompts show|stats|select|validate|freq|export``.

Only typer is imported at module level; pandas and the prompt machinery load
inside each command, so ``glyphbench --help`` stays instant.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from glyphbench.cli.common import SOURCE_HELP, source_kinds
from glyphbench.core.io import json_safe, write_table
from glyphbench.core.progress import LineProgress, Ticker
from glyphbench.core.terminal import printable
from glyphbench.prompts.freq import count_in_corpus, iter_captions, parse_corpus_option
from glyphbench.prompts.sources import load_prompt_set, load_source

prompts_app = typer.Typer(
    name="prompts",
    help="Prompt sets: show, stats, select, validate, freq, export. SOURCE is one of "
    f"{source_kinds()} (options: glyphbench list sources).",
    no_args_is_help=True,
)


@prompts_app.command("show")
def show_command(
    source: str = typer.Argument(..., help=SOURCE_HELP),
    n: int = typer.Option(10, "--n", "-n", help="How many rows to print."),
    sample: bool = typer.Option(
        False, help="Print a seeded random sample instead of the first rows."
    ),
    seed: int = typer.Option(0, help="Seed for --sample."),
) -> None:
    """Print the size and version of a source and a few of its rows."""
    import pandas as pd
    from rich.console import Console
    from rich.table import Table

    from glyphbench.core.errors import InputError
    from glyphbench.prompts.selection import select

    if n < 0:  # checked here: select would name its own --limit, a flag show does not have
        raise InputError(None, f"-n/--n must be >= 0, got {n}")
    loaded = load_source(source)
    # show shows at most what there is: a set of 3 with --sample shows its 3 (in seeded order)
    count = min(n, len(loaded))
    picked = select(loaded, sample=count if sample else None, seed=seed, limit=count)
    console = Console()
    console.print(
        _plain(f"{source}: {len(loaded):,} prompts, version {loaded.version}", style="bold")
    )
    table = Table(show_lines=False)
    for column in ("prompt_id", "prompt_type", "group", "text", "prompt"):
        table.add_column(column, overflow="fold")
    for row in picked.frame.itertuples(index=False):
        values = [getattr(row, c) for c in ("prompt_id", "prompt_type", "group", "text", "prompt")]
        table.add_row(
            *[
                _plain("" if v is None or v is pd.NA or (isinstance(v, float) and v != v) else v)
                for v in values
            ]
        )
    console.print(table)


def _plain(value: object, style: str = "") -> Any:
    """``value`` as Rich text shown as it is: no markup, terminal controls escaped."""
    from rich.text import Text

    return Text(printable(str(value), newlines=True), style=style)


@prompts_app.command("stats")
def stats_command(
    source: str = typer.Argument(..., help=SOURCE_HELP),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object instead of tables."),
    chart: Path = typer.Option(
        None, "--chart", help="Also write a chart of the distribution here (.png, .svg, .pdf)."
    ),
) -> None:
    """Counts by prompt type, group, CEFR level, length bins and flags."""
    from glyphbench.prompts.stats import compute_stats, write_chart

    stats = compute_stats(load_source(source))
    if chart is not None:
        write_chart(stats, chart)
    if as_json:
        typer.echo(printable(json.dumps(json_safe(stats), ensure_ascii=False)))
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(
        _plain(
            f"{stats['source']}: {stats['rows']:,} prompts, version {stats['version']}, "
            f"{stats['unique_texts']:,} distinct texts",
            style="bold",
        )
    )
    for key in ("prompt_type", "group", "cefr", "char_length", "word_count", "flags"):
        table = Table(title=key, title_justify="left")
        table.add_column("value")
        table.add_column("prompts", justify="right")
        table.add_column("share", justify="right")
        for value, count in stats[key].items():
            table.add_row(_plain(value), f"{count:,}", f"{count / max(stats['rows'], 1):.1%}")
        console.print(table)
    if chart is not None:
        console.print(_plain(f"chart -> {chart}"))


@prompts_app.command("select")
def select_command(
    source: str = typer.Argument(..., help=SOURCE_HELP),
    out: Path = typer.Option(..., "--out", "-o", help="Output table (.parquet, .jsonl or .csv)."),
    config: Path = typer.Option(
        None, "--config", help="TextInVision filter config (JSON with // comments)."
    ),
    where: str = typer.Option(
        None,
        "--where",
        help="pandas query over the columns, e.g. \"cefr == 'A1' and word_count <= 2\".",
    ),
    sample: int = typer.Option(None, "--sample", help="Draw this many prompts."),
    stratify: str = typer.Option(
        "",
        "--stratify",
        help="Comma-separated columns to stratify the sample by, e.g. prompt_type,group.",
    ),
    seed: int = typer.Option(0, "--seed", help="Sampling seed (same seed, same sample)."),
    floor: int = typer.Option(
        1, "--floor", help="At least this many prompts per stratum (fewer if it is smaller)."
    ),
    limit: int = typer.Option(None, "--limit", help="Keep at most this many rows at the end."),
) -> None:
    """Select prompts (config -> where -> sample -> limit) and write them with every column."""
    from glyphbench.prompts.selection import select

    picked = select(
        source,
        config=config,
        where=where,
        sample=sample,
        stratify=stratify,
        seed=seed,
        floor=floor,
        limit=limit,
    )
    write_table(picked.frame, out)
    typer.echo(
        f"selected {len(picked):,} prompts (version {picked.version}, "
        f"content hash {picked.content_hash[:12]}) -> {out}"
    )


@prompts_app.command("validate")
def validate_command(
    source: str = typer.Argument(..., help=SOURCE_HELP),
    as_json: bool = typer.Option(
        False, "--json", help="One JSON object per finding (kind, file, line, key, detail)."
    ),
    strict: bool = typer.Option(False, "--strict", help="Exit 1 if there is any finding."),
) -> None:
    """Audit a source: what would mislead a score (attributes, slots, encodings, duplicates).

    Stated vs recomputed attributes, ambiguous slots, mojibake, invisible characters, stray
    spaces, duplicates, inconsistent category spellings; on caption sources, captions whose
    text was not found or is ambiguous."""
    from glyphbench.prompts.audit import audit, summarize

    findings = audit(source)
    for finding in findings:
        shown = json.dumps(finding.to_dict(), ensure_ascii=False) if as_json else str(finding)
        typer.echo(printable(shown))
    if not as_json:
        counts = summarize(findings)
        typer.echo("")
        typer.echo(printable(f"{len(findings)} finding(s) in {source}:"))
        for kind, count in counts.items():
            typer.echo(f"  {kind:<18} {count}")
    if strict and findings:
        raise typer.Exit(1)


@prompts_app.command("freq")
def freq_command(
    source: str = typer.Argument(..., help=SOURCE_HELP),
    corpus: list[str] = typer.Option(
        ...,
        "--corpus",
        help="NAME=PATH of a caption corpus (.txt, .csv, .tsv, .jsonl, .parquet, .gz); "
        "repeatable. Stored as <name>_freq.",
    ),
    out: Path = typer.Option(..., "--out", "-o", help="Output table (.parquet, .jsonl or .csv)."),
    column: str = typer.Option(
        None, "--column", help="Caption column in CSV/JSONL/Parquet corpora."
    ),
    texts_only: bool = typer.Option(
        False,
        "--texts-only",
        help="Write one row per distinct text (text, <name>_freq...) instead of the whole set.",
    ),
) -> None:
    """Count in how many captions of each corpus each text occurs (whole words, any case)."""
    import pandas as pd

    from glyphbench.prompts.pool import PromptPool
    from glyphbench.prompts.schema import PromptSet

    corpora = [parse_corpus_option(c) for c in corpus]
    loaded = load_source(source)
    if isinstance(loaded, PromptPool):
        texts = pd.concat(
            [loaded.texts["text"], loaded.singles.get("text", pd.Series(dtype="string"))]
        )
    else:
        texts = loaded.frame["text"]
    unique = [str(t) for t in texts.dropna().unique()]
    counts: dict[str, dict[str, int]] = {}
    for name, path in corpora:
        with LineProgress() as bar:
            tick = Ticker(bar, bar.add_task(f"{name}: captions", total=None))
            values = count_in_corpus(unique, iter_captions(path, column), progress=tick)
            tick.close()
        counts[name] = dict(zip(unique, values, strict=True))

    if texts_only:
        table = pd.DataFrame({"text": unique})
        for name, by_text in counts.items():
            table[f"{name}_freq"] = table["text"].map(by_text).astype("Int64")
        write_table(table, out)
        typer.echo(f"counted {len(unique):,} texts in {len(corpora)} corpus(es) -> {out}")
        return
    if isinstance(loaded, PromptPool):
        for name, by_text in counts.items():
            loaded.texts[f"{name}_freq"] = loaded.texts["text"].map(by_text).astype("Int64")
            if len(loaded.singles):
                loaded.singles[f"{name}_freq"] = loaded.singles["text"].map(by_text).astype("Int64")
        result = loaded.to_prompt_set()
    else:
        frame = loaded.frame.copy()
        for name, by_text in counts.items():
            frame[f"{name}_freq"] = frame["text"].map(by_text).astype("Int64")
        result = PromptSet(frame, source=loaded.source, version=loaded.version, meta=loaded.meta)
    write_table(result.frame, out)
    typer.echo(
        f"counted {len(unique):,} texts in {len(corpora)} corpus(es); "
        f"wrote {len(result):,} prompts -> {out}"
    )


@prompts_app.command("export")
def export_command(
    source: str = typer.Argument(..., help=SOURCE_HELP),
    out: Path = typer.Option(..., "--out", "-o", help="Output table (.parquet, .jsonl or .csv)."),
) -> None:
    """Write the whole set, every column, to a table (all combinations for default/textinvision)."""
    prompt_set = load_prompt_set(source)
    write_table(prompt_set.frame, out)
    typer.echo(
        f"exported {len(prompt_set):,} prompts (version {prompt_set.version}, "
        f"content hash {prompt_set.content_hash[:12]}) -> {out}"
    )


def register(app: typer.Typer) -> None:
    """Add the ``prompts`` command group to the root CLI."""
    app.add_typer(prompts_app, name="prompts")
