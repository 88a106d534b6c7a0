"""``glyphbench readers``: calibrate a reader, list and compare the readers of a run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from glyphbench import prompts as prompt_sets
from glyphbench.calibration.calibrate_icdar import MULTIWORD, calibrate_on_photos, load_icdar2015
from glyphbench.cli.common import SOURCE_HELP
from glyphbench.core.errors import InputError
from glyphbench.core.io import json_safe, locate_run, write_table
from glyphbench.prompts.where import check_where
from glyphbench.readers import DEFAULT_READER, get_reader
from glyphbench.readers.scripts import LANG_SCRIPTS, reader_scripts
from glyphbench.run.reading_store import stored_readers

readers_app = typer.Typer(
    help="Reader calibration cards and the readings stored in a run.", no_args_is_help=True
)


@readers_app.command("calibrate")
def calibrate_command(
    reader: str = typer.Option(
        DEFAULT_READER,
        "--reader",
        help="Reader spec, e.g. rapidocr or vlm:FOLDER (default: the default reader).",
    ),
    out: Path = typer.Option(
        ..., "--out", "-o", help="Folder for card.md, card.json, readings.csv."
    ),
    prompts: str = typer.Option("default", "--prompts", help=SOURCE_HELP),
    where: str = typer.Option(None, "--where", help="Filter, e.g. \"kind == 'word'\"."),
    per_lang: int = typer.Option(
        12, "--per-lang", min=1, help="Prompts per language the reader reads (stratified by kind)."
    ),
    rates: str = typer.Option("0.05,0.1,0.2", "--rates", help="Typo rates, comma-separated."),
    size: int = typer.Option(
        256, "--size", min=32, help="Side of the control images, in pixels (32 or more)."
    ),
    batch_size: int = typer.Option(8, "--batch-size", min=1, help="Images per read call."),
    seed: int = typer.Option(0, "--seed", help="Seed of the prompt sample."),
    long_text: bool = typer.Option(
        True, "--long/--no-long", help="Add the long-text part (multi-word, 3 fonts, 3 sizes)."
    ),
    real: Path = typer.Option(
        None,
        "--real",
        help="Real-image manifest (CSV or its folder). Default: the shipped "
        "tests/data/real_t2i when present.",
    ),
    no_real: bool = typer.Option(False, "--no-real", help="Skip the real-image part."),
    real_limit: int = typer.Option(
        None, "--real-limit", min=1, help="Read only this many real images (taken across models)."
    ),
    real_part: str = typer.Option(
        None,
        "--real-part",
        help="Read only this part of the real set: tune (settings may be chosen on it) or "
        "held-out (split by repository); see docs/readers.md.",
    ),
    real_collection: str = typer.Option(
        None,
        "--real-collection",
        help="Read only these collections of the real set (its manifest's collection column, "
        "comma-separated, e.g. 4).",
    ),
) -> None:
    """Read render, typo and blank control images with READER; write its calibration card.

    The card also reads long multi-word text at several fonts and sizes (--no-long to
    skip) and a set of real text-to-image outputs that a person transcribed (--real;
    --no-real to skip), and reports how close the reader comes to the person.

    Example:

        glyphbench readers calibrate --reader rapidocr --out cards/rapidocr
    """
    from glyphbench.calibration.calibrate import calibrate
    from glyphbench.calibration.error_page import PAGE_NAME
    from glyphbench.calibration.real_set import REAL_PARTS, load_real_set, shipped_real_set

    if real_part is not None and real_part not in REAL_PARTS:
        raise typer.BadParameter(
            f"must be one of {', '.join(REAL_PARTS)}, not {real_part!r}", param_hint="--real-part"
        )
    typo_rates = _typo_rates(rates)  # before the prompts load: a typo is refused at once
    frame = calibration_prompts(prompts, where, per_lang, seed, reader_scripts(reader))
    manifest = None if no_real else (real or shipped_real_set())
    collections = (
        None
        if real_collection is None
        else [c for c in real_collection.replace(" ", "").split(",") if c]
    )
    real_set = (
        None if manifest is None else load_real_set(manifest, real_limit, real_part, collections)
    )
    engine = get_reader(reader)
    settings = {
        "prompts": prompts,
        "where": where,
        "per_lang": per_lang,
        "rates": typo_rates,
        "size": size,
        "seed": seed,
        "spec": reader,
        "long_text": long_text,
        "real": None if manifest is None else _shown(manifest),
        "real_limit": real_limit,
        "real_part": real_part,
        "real_collection": real_collection,
    }
    card = calibrate(
        engine,
        frame,
        rates=typo_rates,
        size=size,
        batch_size=batch_size,
        settings=settings,
        long_text=long_text,
        real=real_set,
    )
    path = card.write(out)
    typer.echo(card.markdown())
    typer.echo(str(path))
    if (path.parent / PAGE_NAME).exists():
        typer.echo(f"{path.parent / PAGE_NAME}  (each real image beside both readings)")


def _shown(path: Path) -> str:
    """``path`` relative to the working folder when it lies inside it (cards stay portable)."""
    try:
        return str(path.resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def calibration_prompts(
    source: str, where: str | None, per_lang: int, seed: int, scripts: frozenset[str] | None
) -> Any:  # a pandas DataFrame (pandas is imported lazily)
    """``per_lang`` prompts of each language the reader reads, stratified by text kind."""
    import pandas as pd

    if where:  # alone, as given: joined to each language's condition it would not read so
        check_where(where)
    parts = []
    for lang, needs in LANG_SCRIPTS.items():
        if scripts is not None and not needs <= scripts:
            continue
        condition = f"lang == '{lang}'" + (f" and ({where})" if where else "")
        available = prompt_sets.select(source, where=condition)
        if len(available) == 0:
            continue
        kinds = available.frame["kind"].nunique() if "kind" in available.frame else 0
        stratify = ["kind"] if 0 < kinds <= per_lang else None
        chosen = prompt_sets.select(
            available, sample=min(per_lang, len(available)), stratify=stratify, seed=seed
        )
        parts.append(chosen.frame)
    if not parts:
        raise InputError(None, f"no prompts of {source!r} in a language the reader reads")
    return pd.concat(parts, ignore_index=True)


@readers_app.command("photos")
def photos_command(
    reader: str = typer.Option(..., "--reader", help="Reader spec."),
    images: Path = typer.Option(..., "--images", help="Folder of img_N.jpg (ICDAR 2015 format)."),
    labels: Path = typer.Option(None, "--labels", help="Folder of gt_img_N.txt (default: images)."),
    multiword: str = typer.Option(
        "split",
        "--multiword",
        help="A transcription with a space: split (its words count one by one) or "
        "dontcare (ICDAR word spotting: not counted).",
    ),
    out: Path = typer.Option(
        None, "--out", help="Write the per-image table here (.csv, .parquet or .jsonl)."
    ),
    detail: bool = typer.Option(False, "--detail", help="Also print one line per image."),
) -> None:
    """Word recall of READER on labelled photos in the ICDAR 2015 format, and its speed.

    Example:

        glyphbench readers photos --reader rapidocr --images ch4_test_images \\
            --labels gt --out photos.csv
    """
    import pandas as pd

    if multiword not in MULTIWORD:
        raise InputError(None, f"--multiword must be one of {', '.join(MULTIWORD)}")
    if out is not None and out.suffix.lower() not in (".csv", ".parquet", ".jsonl"):
        raise InputError(out, "unsupported output format; use .csv, .parquet or .jsonl")
    items = load_icdar2015(images, labels)
    result = calibrate_on_photos(get_reader(reader), items, multiword=multiword)
    table = pd.DataFrame(result["per_image"])
    typer.echo(
        json.dumps(json_safe({k: v for k, v in result.items() if k != "per_image"}), indent=2)
    )
    if detail:
        for row in result["per_image"]:
            missed = f"  missed: {row['missed']}" if row["missed"] else ""
            typer.echo(f"{row['image']}\t{row['found']}/{row['words']} words{missed}")
    if out is not None:
        write_table(table, out)
        typer.echo(str(out))


@readers_app.command("list")
def list_command(run: Path = typer.Argument(..., help="Run folder.")) -> None:
    """The readers whose readings are stored in RUN (for report --reader and compare).

    Each line: the reader, how many distinct images (by SHA-256) it has read, its
    identity. Rows of identical images (a blank control's) count once here; the
    ``images`` of ``compare`` counts the rows both readers read.
    """
    table = stored_readers(locate_run(run, needs="run.json"))
    if table.empty:
        typer.echo("no stored readings")
        return
    for record in table.to_dict("records"):
        name, images, identity = record["reader_name"], record["images"], record["reader"]
        typer.echo(f"{name}\t{images} distinct images\t{identity}")


@readers_app.command("compare")
def compare_command(
    run: Path = typer.Argument(..., help="Run folder."),
    first: str = typer.Argument(..., help="A stored reader (name or identity)."),
    second: str = typer.Argument(..., help="Another stored reader."),
    metric: str = typer.Option("ned", "--metric", help="Metric whose model means are ranked."),
) -> None:
    """Per-image agreement of two readers on RUN and how often they rank models differently."""
    from glyphbench.calibration.calibrate import compare_readers
    from glyphbench.scoring.table import METRICS

    if first == second:
        raise InputError(None, f"give two different readers; got {first!r} twice")
    if metric not in METRICS:
        raise InputError("--metric", f"unknown metric {metric!r}; see glyphbench list metrics")
    run = locate_run(run, needs="run.json")
    typer.echo(
        json.dumps(json_safe(compare_readers(run, first, second, metric)), indent=2, default=str)
    )


def register(app: typer.Typer) -> None:
    app.add_typer(readers_app, name="readers")


def _typo_rates(text: str) -> list[float]:
    """``--rates``: comma-separated probabilities in (0, 1], as ``control:typo?rate=`` takes.

    >>> _typo_rates("0.05, 0.1")
    [0.05, 0.1]
    """
    try:
        rates = [float(rate) for rate in text.split(",") if rate.strip()]
    except ValueError:
        rates = []
    if not rates or not all(0 < rate <= 1 for rate in rates):
        raise InputError(
            "--rates", f"give typo rates between 0 and 1, comma-separated (0.05,0.1); got {text!r}"
        )
    return rates
