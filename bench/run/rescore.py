"""Re-read and re-score a run's existing images; nothing is regenerated (``glyphbench rescore``).

:func:`rescore_run` re-reads the images still as generated (unless ``scores_only``),
keeps the previous readings in the run's reading store, scores the rows again, and
commits them as a newer part file together with the table they make, its checksum and
run.json (:func:`glyphbench.run.merge.merge_commit`): a kill at any moment leaves the
old reader's table and run.json, or the new reader's.
"""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from glyphbench.core.durable import Commit
from glyphbench.core.errors import InputError
from glyphbench.core.io import read_table
from glyphbench.core.paths import Contained
from glyphbench.core.schema import failed_mask, generated_mask
from glyphbench.engine import RunFolder, start_reader
from glyphbench.engine.lock import FolderLock
from glyphbench.readers.scripts import check_reader_reads
from glyphbench.run.config import RunConfig
from glyphbench.run.grid_path import grid_rereader
from glyphbench.run.merge import merge_commit, merge_run
from glyphbench.run.provenance import now
from glyphbench.run.reader_claim import READER_KEY, RESCORE_LOCK, probe_on_run
from glyphbench.run.reading_store import READINGS_DIR, ReadingStore, keep_results_readings
from glyphbench.run.results import PROMPTS, RESULTS, read_results
from glyphbench.run.stages import Chunk, Scoring, read_chunks, read_timed

if TYPE_CHECKING:
    from rich.console import Console

    from glyphbench.readers.base import Reader


def rescore_run(
    root: str | Path,
    *,
    reader_spec: str | None = None,
    scores_only: bool = False,
    batch_size: int | None = None,
    reader: Reader | None = None,
    progress: bool = True,
    console: Console | None = None,
) -> pd.DataFrame:
    """Re-read (unless ``scores_only``) and re-score the run's images; nothing is regenerated.

    A re-read adds the new readings to the run's reading store (``RUN/readings/``)
    and keeps the previous ones there (stored first if the store lacks them), saying
    so on the console; ``results.parquet`` then holds the new reader's. The new rows
    are written as a newer part file (so a later merge keeps them)
    and merged into ``results.parquet``; run.json records what was re-run.
    """
    if scores_only and (reader_spec or reader):
        raise InputError(None, "--scores-only keeps the OCR text; do not combine it with --ocr")
    folder = RunFolder(root)
    meta = folder.manifest(required=True)
    if not isinstance(meta.get("config"), dict):
        raise InputError(folder.manifest_path, "no 'config' mapping: not a benchmark run.json")
    config = RunConfig.from_mapping(meta["config"], folder.manifest_path)
    if reader_spec and (folder.root / PROMPTS).is_file():  # a reader that can read them
        check_reader_reads(reader_spec, read_table(folder.root / PROMPTS))
    reader_spec = reader_spec or config.read.reader
    if not scores_only and reader is None:  # before anything is written
        reader = start_reader(reader_spec)
    store = None
    if reader is not None and not scores_only:
        store = ReadingStore(folder.root, "rescore")  # read each image once per reader
        probe_on_run(reader, reader_spec, folder.root, store=store)  # before writing
    with folder.hold_shard(RESCORE_LOCK):
        busy = folder.busy_shards()
        if busy:
            raise FolderLock(folder.root, busy[0]).busy("writing")
        rows = merge_run(folder.root, folder=folder).copy()
        images = rows.loc[generated_mask(rows), "image_path"]  # each stays inside the run
        Contained(folder.root, source=folder.root / RESULTS).cells(images)
        if reader is not None and not scores_only:
            _refuse_when_every_image_is_gone(folder.root, images)
            reread = grid_rereader(folder, rows, config.suite) or _reread  # OneIG's grid
            kept = keep_results_readings(folder.root, rows)  # the old readings stay stored
            step = batch_size or config.generate.batch_size
            tried, failed, kept_old = reread(folder, rows, reader, step, progress, console, store)
            if tried and failed == tried:  # nothing read: keep the table as it is
                raise InputError(
                    "--ocr",
                    f"the reader {reader_spec!r} failed on every image ({failed} of "
                    f"{tried}); the results table and its reader were left unchanged",
                )
            _say(console, _rescore_note(folder.root, reader, kept))
            if kept_old:
                _say(
                    console,
                    f"rescore: {reader.name} failed on {kept_old} rows that were read before; "
                    f"those {kept_old} rows kept their previous reading (their ocr_engine "
                    "column names it)",
                )
        rescored = Scoring(config.score, config.suite).rows(rows)
        stamp = now().replace(":", "").replace("+0000", "Z")

        def record(meta: dict[str, Any]) -> None:
            """run.json's part of the rescore, committed with the table it describes."""
            if not scores_only:
                meta[READER_KEY] = reader_spec  # the table's reader from now on
            meta.setdefault("rescores", []).append(
                {
                    "at": now(),
                    "ocr": None if scores_only else (reader.name if reader else reader_spec),
                    "ocr_version": None if scores_only or reader is None else reader.version,
                    "scores_only": scores_only,
                    "rows": len(rescored),
                }
            )

        # The new rows, the table they make, its checksum and run.json: one commit, so a
        # kill at any moment leaves the old reader's four or the new reader's four.
        with folder.locked(), Commit(folder.root) as commit:
            part = folder.write_part(rescored, f"rescore-{stamp}", "all", commit)
            merge_commit(folder, commit, update=record, staged=[part])
        merged = read_results(folder.root / RESULTS)
    return merged


def _refuse_when_every_image_is_gone(root: Path, images: pd.Series) -> None:
    """A re-read that finds none of the run's images would turn every row into a failed one:
    refused before anything is written (the folder moved without its images, or deleted).
    Some images missing are failed rows, as in any re-read, and said so."""
    if len(images) and not any((root / str(name)).is_file() for name in images):
        raise InputError(
            root / str(images.iloc[0]),
            f"none of the {len(images)} images listed in results.parquet is in the run "
            "(moved or deleted?); the results table and its reader were left unchanged",
        )


def _rescore_note(root: Path, reader: Reader, kept: Sequence[str]) -> str:
    """What a re-read did to the readings: new ones added to the store, old ones kept."""
    new = f"{reader.name} {reader.version}"
    old = [name for name in kept if name != new]
    previous = (
        f"the previous readings ({', '.join(old)}) are kept there; "
        f"report them with `glyphbench report {root} --reader {old[0].split(' ')[0]}`"
        if old
        else "no other reader's readings were replaced"
    )
    return (
        f"rescore: readings of {new} stored in {root / READINGS_DIR} and used in "
        f"results.parquet; {previous}"
    )


def _say(console: Console | None, message: str) -> None:
    from rich.console import Console

    (console or Console(stderr=True)).print(message, highlight=False, markup=False, soft_wrap=True)


def _reread(
    folder: RunFolder,
    rows: pd.DataFrame,
    reader: Reader,
    step: int,
    progress: bool,
    console: Console | None,
    cache: ReadingStore | None = None,
) -> tuple[int, int, int]:
    """Read the images of ``rows`` again (in place), ``step`` at a time, in this process.

    A row read before that the new reader fails on keeps its previous reading (a
    rescore never turns a good row into a failed one). Returns (images read, failures,
    failed rows that kept their previous reading).
    """
    store = cache if cache is not None else ReadingStore(folder.root, "rescore")
    indices = list(rows.index[generated_mask(rows)])
    keep = ~failed_mask(rows) & rows["ocr_text"].notna()
    gone: list[Any] = []
    totals = read_chunks(
        rows,
        _file_chunks(folder, rows, indices, reader, store, step, keep, gone),
        label="rescore OCR",
        total=len(indices),
        keep=keep,
        progress=progress,
        console=console,
    )
    if gone and not totals["read"]:  # no image as generated: keep the table as it is
        raise InputError(
            folder.root / str(rows.at[gone[0], "image_path"]),
            f"none of the {len(indices)} images is as it was generated ({len(gone)} missing "
            "or changed since); the results table and its reader were left unchanged",
        )
    kept_gone = int(keep[gone].sum()) if gone else 0
    if kept_gone:
        _say(
            console,
            f"rescore: {kept_gone} images of rows read before are missing or changed since "
            f"they were generated (e.g. {rows.at[gone[0], 'image_path']}); those rows kept "
            "their previous reading",
        )
    return totals["read"], totals["errors"], totals["kept"]


def _file_chunks(
    folder: RunFolder,
    rows: pd.DataFrame,
    indices: list[Any],
    reader: Reader,
    store: ReadingStore,
    step: int,
    keep: pd.Series,
    gone: list[Any],
) -> Iterator[Chunk]:
    """The stored images of ``indices``, ``step`` at a time, read in this process. An image
    missing or changed since it was generated is not read and its row is added to
    ``gone``: a row read before (``keep``) keeps its reading, another gets a ``Rescore:``
    error."""
    identity = (reader.name, reader.version)
    for start in range(0, len(indices), step):
        chunk = indices[start : start + step]
        images, ok = _load_unchanged(folder, rows, chunk, keep, gone)
        keys = [str(rows.at[index, "image_sha256"]) for index in ok]
        outcomes, seconds = read_timed(reader, images, store, keys)
        yield Chunk(ok, outcomes, identity, seconds, covers=chunk)


def _load_unchanged(
    folder: RunFolder,
    rows: pd.DataFrame,
    indices: Sequence[Any],
    keep: pd.Series,
    gone: list[Any],
) -> tuple[list[Any], list[Any]]:
    """The images of ``indices`` still as generated. The others go to ``gone``: a row read
    before keeps its reading (a damaged file does not undo what was read from the image
    as generated), another gets a ``Rescore:`` error."""
    from PIL import Image

    images, ok = [], []
    for index in indices:
        path = folder.root / str(rows.at[index, "image_path"])
        data = path.read_bytes() if path.is_file() else None  # read once: hashed, decoded
        if data is None or hashlib.sha256(data).hexdigest() != rows.at[index, "image_sha256"]:
            gone.append(index)
            if not keep[index]:
                rows.at[index, "error"] = (
                    "Rescore: FileNotFoundError: image missing"
                    if data is None
                    else "Rescore: ValueError: image changed since it was generated"
                )
            continue
        images.append(Image.open(io.BytesIO(data)).convert("RGB"))
        ok.append(index)
    return images, ok
