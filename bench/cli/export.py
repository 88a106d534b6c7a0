"""``glyphbench export RUN --hf-dataset DIR``: a run's per-image results as a Hugging Face dataset.

The folder ``datasets`` reads back as it is::

    DIR/README.md              dataset card: the run, its models and its protocol card
    DIR/protocol.json          the protocol card as run.json records it
    DIR/metadata.parquet       one row per image: file_name + every results column
    DIR/images/<model>/...png  the images, as the run wrote them

``datasets.load_dataset("imagefolder", data_dir=DIR)`` gives the images with every
column; ``load_dataset("parquet", data_files=DIR/metadata.parquet)`` the table alone.
Rows without an image (failed generations) are left out and counted in the card.
``--push REPO`` uploads the folder to the hub where one is reachable. Without
huggingface_hub, or with ``HF_HUB_OFFLINE`` set, it is refused before the export (exit 2);
an upload that fails (no network, no token) is one line, exit 1, the export kept whole.
Running the same command again replaces that export (a folder holding metadata.parquet
and only what an export writes) and pushes it.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple

import typer

from glyphbench.cli.common import interruptible, print_error
from glyphbench.core.errors import InputError
from glyphbench.core.io import locate_run, read_run_json, read_table, write_json
from glyphbench.core.markdown import markdown_text
from glyphbench.core.paths import Contained
from glyphbench.core.schema import failed_mask
from glyphbench.core.staging import check_replaceable, output_folder, staged_folder
from glyphbench.scoring.table import METRICS

if TYPE_CHECKING:
    import pandas as pd

    from glyphbench.scoring.table import Metric

METADATA = "metadata.parquet"
#: What marks a folder as an earlier export (replaced whole by the next).
EXPORT_MARKERS = (METADATA,)


def export_command(
    run_dir: Annotated[Path, typer.Argument(help="The run folder (holding results.parquet).")],
    hf_dataset: Annotated[
        Path, typer.Option("--hf-dataset", help="Write a datasets-loadable folder here.")
    ],
    push: Annotated[
        str | None, typer.Option("--push", help="Also upload it to this hub dataset repo.")
    ] = None,
    license_id: Annotated[
        str,
        typer.Option(
            "--license",
            help="The card's licence id (e.g. cc-by-4.0); default 'other': each model's "
            "licence governs its images, and the card says so.",
        ),
    ] = "other",
) -> None:
    """Export per-image results (images, scores, OCR) with a dataset card from the protocol card.

    Example: glyphbench export runs/lt --hf-dataset exports/lt --push me/longtext-results
    """
    api = hub_api(push) if push else None  # no package, or an offline hub: refused first
    with interruptible(then=f"nothing written to {hf_dataset}"):
        folder, warnings = export_run(run_dir, hf_dataset, license_id=license_id)
    for warning in warnings:  # the card says them too
        typer.echo(f"warning: {warning}", err=True)
    typer.echo(f"dataset -> {folder}")
    if push:
        problem = push_folder(api, folder, push)
        if problem:  # not the user's error: the export is whole, the same command retries
            print_error(
                f"--push {push}: {problem}; the export in {folder} is whole: run the same "
                "command again to push it"
            )
            raise typer.Exit(1)
        typer.echo(f"pushed -> https://huggingface.co/datasets/{push}")


class Exported(NamedTuple):
    folder: Path
    #: What the card warns of first (:func:`run_warnings`), for the terminal to say too.
    warnings: list[str]


def export_run(run_dir: Path, out: Path, *, license_id: str = "other") -> Exported:
    """Write ``out`` (see the module docstring) from the run in ``run_dir``.

    All or nothing: the folder is written beside ``out`` and renamed into place when whole,
    so an error, Ctrl-C or SIGTERM part-way leaves no half-copied dataset.
    """
    check_license_id(license_id)  # before anything is read or written
    run_dir = locate_run(run_dir)
    results = run_dir / "results.parquet"
    if out.exists() and not out.is_dir():
        raise InputError(out, "exists and is not a folder; choose another --hf-dataset")
    # Empty, new, or an earlier export (replaced whole, so the same command can be re-run);
    # never a folder of other files, nor one holding the run.
    check_replaceable(output_folder(out), EXPORT_MARKERS, "dataset export", [run_dir])
    rows = read_table(results)  # checksums checked
    meta = read_run_json(run_dir)
    has_image = rows["image_path"].notna() & ~failed_mask(rows)
    named = rows.loc[has_image, "image_path"]
    # every path the table names stays inside the run, and its copy inside ``out``
    sources = Contained(run_dir, source=results).cells(named)
    Contained(out, source=results).cells(named)  # refused before anything is written
    kept = rows[has_image].reset_index(drop=True)
    missing = [str(name) for name, path in zip(named, sources, strict=True) if not path.is_file()]
    if missing:
        raise InputError(run_dir / missing[0], "image listed in results.parquet is missing")
    damaged = damaged_images(sources, kept)
    if damaged:
        raise InputError(
            run_dir / damaged[0],
            f"image does not match its image_sha256 in results.parquet (damaged or replaced; "
            f"{len(damaged)} of {len(kept)} images differ); nothing was exported",
        )
    table = kept.assign(file_name=kept["image_path"].astype(str))
    table = table[["file_name", *[c for c in table.columns if c != "file_name"]]]
    owned = (*EXPORT_MARKERS, "README.md", "protocol.json", *_top_names(named))
    with staged_folder(out, EXPORT_MARKERS, "dataset export", [run_dir], owned) as staged:
        for source, name in zip(sources, named, strict=True):
            copy = staged / str(name)  # inside ``staged`` as it is inside ``out`` (checked)
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, copy)
        table.to_parquet(staged / METADATA, index=False)
        write_json(staged / "protocol.json", meta.get("protocol") or {})
        (staged / "README.md").write_text(
            dataset_card(meta, table, dropped=int((~has_image).sum()), license_id=license_id),
            encoding="utf-8",
        )
    from glyphbench.report.analyse import run_warnings  # the report's stack: loaded here

    return Exported(out, run_warnings(meta))


def _top_names(paths: pd.Series) -> tuple[str, ...]:
    """The first parts of the image paths (``images``): what an export holds besides its
    table and card."""
    return tuple(sorted({Path(str(path)).parts[0] for path in paths if str(path)}))


def damaged_images(files: Sequence[Path], rows: pd.DataFrame) -> list[str]:
    """Image paths of ``rows`` whose file (``files``) lacks the row's ``image_sha256``."""
    import hashlib

    damaged = []
    expected_sha = rows["image_sha256"] if "image_sha256" in rows else [None] * len(rows)
    paths = zip(files, rows["image_path"].astype(str), expected_sha, strict=True)
    for path, relative, expected in paths:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if isinstance(expected, str) and expected and digest != expected:
            damaged.append(relative)
    return damaged


def dataset_card(
    meta: dict[str, Any], table: pd.DataFrame, *, dropped: int, license_id: str = "other"
) -> str:
    """The README.md of the exported dataset: YAML header, the run, its protocol card.

    >>> import pandas as pd
    >>> card = dataset_card({"run_id": "r1"}, pd.DataFrame({"model": ["m"], "ned": [1.0]}),
    ...                     dropped=0)
    >>> card.splitlines()[0], "# glyphbench results: r1" in card
    ('---', True)
    """
    from glyphbench.report.analyse import run_warnings

    check_license_id(license_id)
    raw_id = str(meta.get("run_id") or "run")  # run.json is a file anyone may have edited:
    run_id = markdown_text(raw_id)  # its values are text in the card, never markup
    protocol = meta.get("protocol") or {}
    suite = (protocol.get("suite") or {}).get("name")
    tags = ["glyphbench", "text-rendering", "ocr", *([str(suite)] if suite else [])]
    counts = table["model"].value_counts()
    lines = [
        "---",  # YAML: strings written as JSON strings (JSON is YAML), so none ends the header
        f"pretty_name: {json.dumps(f'glyphbench results: {raw_id}')}",
        f"license: {license_id}",
        "task_categories:",
        "- text-to-image",
        "tags:",
        *[f"- {json.dumps(tag)}" for tag in tags],
        "---",
        "",
        f"# glyphbench results: {run_id}",
        "",
        f"Per-image results of the glyphbench run {run_id}: {len(table)} images"
        + (f" ({dropped} failed rows without an image left out)" if dropped else "")
        + ", one row each with the prompt, the reader's output and every score.",
        "",
        *[f"**Warning**: {markdown_text(warning)}.\n" for warning in run_warnings(meta)],
        'Load it with `datasets.load_dataset("imagefolder", data_dir=...)` (images and '
        'columns) or `load_dataset("parquet", data_files=".../metadata.parquet")`.',
        "",
        "## Models",
        "",
        "| model | images |",
        "| --- | --- |",
        *[f"| {markdown_text(str(model))} | {int(n)} |" for model, n in counts.items()],
        "",
        "## Protocol card",
        "",
        *_card_table(protocol),
        "",
        "Two results are comparable only when their protocol cards match (reader and its "
        "version, instruction, seeds, images per prompt, normalisation, scorer).",
        "",
        "## Columns",
        "",
        *_column_lines(table),
        "",
        "## Licence",
        "",
        f"Card licence: `{license_id}`. The images were made by the models listed above, and "
        "each model's licence governs its outputs; the prompts keep the licence of their "
        "source (glyphbench's built-in set: MIT). Check both before redistributing.",
    ]
    return "\n".join(lines) + "\n"


#: A licence id as the hub's dataset cards write them (``cc-by-4.0``, ``apache-2.0``, ``other``).
_LICENSE_ID = re.compile(r"[a-z0-9][a-z0-9.+-]{0,63}")


def check_license_id(license_id: str) -> None:
    r"""Refuse a ``--license`` that is no licence id: it is written into the card's YAML
    header as it is, where a line break would add keys of its own.

    >>> check_license_id("cc-by-4.0")
    >>> check_license_id("mit\nevil: yes")
    Traceback (most recent call last):
    glyphbench.core.errors.InputError: --license: ...
    """
    if not _LICENSE_ID.fullmatch(license_id):
        raise InputError(
            "--license",
            f"{license_id!r} is not a licence id (lower-case letters, digits, . + -; e.g. "
            "cc-by-4.0, apache-2.0, mit, other)",
        )


def _card_table(protocol: dict[str, Any]) -> list[str]:
    if not protocol:
        return ["(this run has no protocol card: it was made before glyphbench recorded one)"]
    from glyphbench.report.suites import card_lines

    rows = ["| field | value |", "| --- | --- |"]
    rows += [f"| {key} | {markdown_text(value)} |" for key, value in card_lines(protocol)]
    deviations = protocol.get("deviations") or []
    if deviations:
        rows += ["", "Deviations from the benchmark's protocol:", ""]
        rows += [f"- {markdown_text(str(deviation))}" for deviation in deviations]
    return rows


def _column_lines(table: pd.DataFrame) -> list[str]:
    lines = []
    for column in table.columns:
        if column in METRICS:
            metric = METRICS.get(str(column))
            lines.append(f"- `{column}`: {metric.label} ({_reading(metric)}). {metric.doc}")
    return lines or ["- see glyphbench's docs/metrics.md"]


def _reading(metric: Metric) -> str:
    """How to read a column: its direction, or for a count what it counts."""
    if metric.unit == "characters":  # LCS and longest-match lengths grow with the text
        return "a count of characters: larger for longer texts, compare on the same texts"
    return metric.direction + (f", in {metric.unit}" if metric.unit else "")


def hub_api(repo: str) -> Any:
    """The hub client for ``--push REPO``; a missing package or an offline hub
    (``HF_HUB_OFFLINE``) is a user error, said before anything is exported."""
    try:
        from huggingface_hub import HfApi
        from huggingface_hub.constants import HF_HUB_OFFLINE
    except ImportError:
        raise InputError("--push", "needs huggingface_hub (pip install huggingface_hub)") from None
    if HF_HUB_OFFLINE:
        raise InputError("--push", f"{repo}: the hub is offline (HF_HUB_OFFLINE is set)")
    return HfApi()


def push_folder(api: Any, folder: Path, repo: str) -> str | None:
    """Upload ``folder`` as the hub dataset ``repo`` with ``api`` (:func:`hub_api`); what went
    wrong, in one line, or None."""
    try:
        api.create_repo(repo, repo_type="dataset", exist_ok=True)
        api.upload_folder(folder_path=str(folder), repo_id=repo, repo_type="dataset")
    except Exception as exc:  # no network, no token, no rights: all one line
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:160]
        return f"cannot reach the hub ({first})"
    return None


def register(app: typer.Typer) -> None:
    app.command("export")(export_command)
