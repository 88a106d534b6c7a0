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
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from glyphbench.core.durable import Commit
from glyphbench.core.errors import InputError
from glyphbench.core.io import read_table
from glyphbench.core.paths import Contained
from glyphbench.core.progress import LineProgress
from glyphbench.core.schema import failed_mask, generated_mask
from glyphbench.engine import RunFolder, read_batch, start_reader
from glyphbench.engine.lock import FolderLock
from glyphbench.readers.scripts import check_reader_reads
from glyphbench.run.config import RunConfig
from glyphbench.run.grid_path import grid_rereader
from glyphbench.run.merge import merge_commit, merge_run
from glyphbench.run.provenance import now
from glyphbench.run.reader_claim import READER_KEY, RESCORE_LOCK, probe_on_run
from glyphbench.run.reading_store import READINGS_DIR, ReadingStore, keep_results_readings
from glyphbench.run.results import PROMPTS, RESULTS, conform_results, read_results, score_rows
from glyphbench.run.shard import reading_columns

if TYPE_CHECKING:
    from rich.console import Console

    from glyphbench.readers.base import Reader


def rescore_run(
    root: str | Path,
    *,
    ocr: str | None = None,
    scores_only: bool = False,
    batch_size: int | None = None,
    engine: Reader | None = None,
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
    if scores_only and (ocr or engine):
        raise InputError(None, "--scores-only keeps the OCR text; do not combine it with --ocr")
    folder = RunFolder(root)
    meta = folder.manifest(required=True)
    if not isinstance(meta.get("config"), dict):
        raise InputError(folder.manifest_path, "no 'config' mapping: not a benchmark run.json")
    config = RunConfig.from_mapping(meta["config"], folder.manifest_path)
    engine_spec = ocr or config.ocr
    if ocr and (folder.root / PROMPTS).is_file():  # issue 13: a reader that can read them
        check_reader_reads(ocr, read_table(folder.root / PROMPTS))
    if not scores_only and engine is None:  # before anything is written
        engine = start_reader(engine_spec)
    store = None
    if engine is not None and not scores_only:
        store = ReadingStore(folder.root, "rescore")  # issue 13: read each image once per reader
        probe_on_run(engine, engine_spec, folder.root, store=store)  # issue 32: before writing
    with folder.hold_shard(RESCORE_LOCK):
        busy = folder.busy_shards()
        if busy:
            raise FolderLock(folder.root, busy[0]).busy("writing")
        rows = merge_run(folder.root, folder=folder).copy()
        images = rows.loc[generated_mask(rows), "image_path"]  # each stays inside the run
        Contained(folder.root, source=folder.root / RESULTS).cells(images)
        if engine is not None and not scores_only:
            reread = grid_rereader(folder, rows, config) or _reread  # issue 31: OneIG's grid
            kept = keep_results_readings(folder.root, rows)  # the old readings stay stored
            step = batch_size or config.batch_size
            tried, failed, kept_old = reread(folder, rows, engine, step, progress, console, store)
            if tried and failed == tried:  # nothing read: keep the table as it is
                raise InputError(
                    "--ocr",
                    f"the OCR engine {engine_spec!r} failed on every image ({failed} of "
                    f"{tried}); the results table and its reader were left unchanged",
                )
            _say(console, _rescore_note(folder.root, engine, kept))
            if kept_old:
                _say(
                    console,
                    f"rescore: {engine.name} failed on {kept_old} rows that were read before; "
                    f"those {kept_old} rows kept their previous reading (their ocr_engine "
                    "column names it)",
                )
        rescored = conform_results(score_rows(rows, config))
        stamp = now().replace(":", "").replace("+0000", "Z")

        def record(meta: dict[str, Any]) -> None:
            """run.json's part of the rescore, committed with the table it describes."""
            if not scores_only:
                meta[READER_KEY] = engine_spec  # the table's reader from now on
            meta.setdefault("rescores", []).append(
                {
                    "at": now(),
                    "ocr": None if scores_only else (engine.name if engine else engine_spec),
                    "ocr_version": None if scores_only or engine is None else engine.version,
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


def _rescore_note(root: Path, engine: Reader, kept: Sequence[str]) -> str:
    """What a re-read did to the readings: new ones added to the store, old ones kept."""
    new = f"{engine.name} {engine.version}"
    old = [reader for reader in kept if reader != new]
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
    """Read the images of ``rows`` again (in place) through the engine's reading step.

    A row read before that the new reader fails on keeps its previous reading (issue
    32: a rescore never turns a good row into a failed one). Returns (images read,
    failures, failed rows that kept their previous reading).
    """
    from rich.console import Console

    indices = list(rows.index[generated_mask(rows)])
    was_read = ~failed_mask(rows) & rows["ocr_text"].notna()
    identity = (reader.name, reader.version)
    tried = failed = kept = 0
    if cache is None:
        cache = ReadingStore(folder.root, "rescore")  # issue 13: each image once per reader
    with LineProgress(console=console or Console(stderr=True), disable=not progress) as bar:
        task = bar.add_task("rescore OCR", total=len(indices))
        for start in range(0, len(indices), step):
            chunk = indices[start : start + step]
            images, ok = _load_unchanged(folder, rows, chunk)
            if ok:
                started = time.perf_counter()
                keys = [str(rows.at[index, "image_sha256"]) for index in ok]
                outcomes = read_batch(reader, images, cache, keys)
                seconds = (time.perf_counter() - started) / len(ok)
                for index, outcome in zip(ok, outcomes, strict=True):
                    tried += 1
                    if isinstance(outcome, Exception):
                        failed += 1
                        if was_read[index]:
                            kept += 1
                            continue
                    for column, value in reading_columns(outcome, identity, seconds).items():
                        rows.at[index, column] = value
            bar.advance(task, len(chunk))
    return tried, failed, kept


def _load_unchanged(
    folder: RunFolder, rows: pd.DataFrame, indices: Sequence[Any]
) -> tuple[list[Any], list[Any]]:
    """The images of ``indices`` still as generated; the others get a ``Rescore:`` error."""
    from PIL import Image

    images, ok = [], []
    for index in indices:
        path = folder.root / str(rows.at[index, "image_path"])
        if not path.is_file():
            rows.at[index, "error"] = "Rescore: FileNotFoundError: image missing"
            continue
        data = path.read_bytes()  # read once: hashed, then decoded
        if hashlib.sha256(data).hexdigest() != rows.at[index, "image_sha256"]:
            rows.at[index, "error"] = "Rescore: ValueError: image changed since it was generated"
            continue
        images.append(Image.open(io.BytesIO(data)).convert("RGB"))
        ok.append(index)
    return images, ok
