"""``glyphbench read RUN``: read the images of a generation, in worker processes.

A run made with ``glyphbench run --read-later`` writes its images and rows but
reads nothing, so generation never waits for OCR. ``read_run`` then reads the
rows that have an image and no reading yet, in ``workers`` processes
(:class:`glyphbench.engine.read_pool.ReadPool`) fed with the image files, scores them
and writes them as new part files; the newest row of each key wins the merge.
``shard="I/N"`` reads a stable share of the images (by a hash of the image
path), so N machines (a job array) can read one generation together; the last
reader to finish merges ``results.parquet``.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from glyphbench.core.errors import InputError
from glyphbench.core.paths import Contained
from glyphbench.core.registry import PLUGINS
from glyphbench.core.schema import ROW_KEY, generated_mask, unread_mask
from glyphbench.engine import RunFolder, Shard
from glyphbench.engine.parts import open_part
from glyphbench.engine.read_pool import ReadPool, UnreadableImage, resolve_workers
from glyphbench.engine.reading import (
    probe_reader,
    refuse_failed_probe,
    run_image,
    sample_image,
    start_reader,
)
from glyphbench.run.config import RunConfig
from glyphbench.run.grid_path import (
    check_groups,
    grid_chunks,
    grid_of,
    image_path_of,
    refuse_split_reading,
)
from glyphbench.run.merge import merge_run, row_labels
from glyphbench.run.reader_claim import claim_reader, refuse_during_rescore, table_reader
from glyphbench.run.reading_store import ReadingStore
from glyphbench.run.results import RESULTS, conform_results
from glyphbench.run.stages import PartWriter, Scoring, read_chunks, read_into_parts

if TYPE_CHECKING:
    from rich.console import Console

    from glyphbench.readers.base import Reader

#: Seconds between looks for new rows while following a running generation.
FOLLOW_POLL_S = 0.1
#: Seconds ``read --follow`` waits for the generation to start writing (run.json and its
#: shard lock), so a reader launched with ``run --read-later`` never finishes before it.
FOLLOW_WAIT_S = 300.0


def unread(rows: pd.DataFrame, *, again: bool = False) -> pd.Series:
    """Rows with an image still to read: no reading yet (or every one made, ``again``)."""
    if again:
        return generated_mask(rows)
    return pd.Series(unread_mask(rows), index=rows.index)


def in_shard(paths: pd.Series, shard: Shard) -> pd.Series:
    """Which image paths belong to ``shard`` (a stable hash: every reader agrees)."""
    return paths.map(lambda path: zlib.crc32(str(path).encode()) % shard.count == shard.index)


def read_run(
    root: str | Path,
    *,
    reader_spec: str | None = None,
    workers: int | None = None,
    shard: str | None = None,
    again: bool = False,
    follow: bool = False,
    batch_size: int | None = None,
    progress: bool = True,
    console: Console | None = None,
) -> dict[str, Any]:
    """Read this shard's unread images of the run in ``root``; merge when no one else writes.

    ``follow``: keep reading the rows the generation writes while it runs (a
    ``run --read-later`` holding a shard of the folder), until it has finished.
    Returns ``{"read": images read, "errors": OCR errors, "merged": rows or None,
    "unfinished": True when the followed run stopped before recording its end}``.
    """

    folder = RunFolder(root)
    if follow:
        wait_for_generation(folder, FOLLOW_WAIT_S)
    meta = folder.manifest(required=True)
    if not isinstance(meta.get("config"), dict):
        raise InputError(folder.manifest_path, "no 'config' mapping: not a benchmark run.json")
    config = RunConfig.from_mapping(meta["config"], folder.manifest_path)
    part = Shard.parse(shard) if shard else Shard()
    if reader_spec is not None:  # a misspelt --ocr is unknown, not "another reader"
        try:
            PLUGINS.resolve("readers", reader_spec)
        except InputError as exc:
            raise InputError("--ocr", exc.problem) from None
    # one reader per results table
    reader_spec = reader_spec or table_reader(meta) or config.read.reader
    if image_path_of(config.suite) is not None:  # OneIG's grid, read in this process
        if shard or follow:
            refuse_split_reading("--shard" if shard else "--follow")
        done = read_grid_run(
            folder.root, _grid_reader(reader_spec), reader_spec, progress=progress, console=console
        )
        return {**done, "unfinished": False}
    n_workers = resolve_workers(workers)
    name = f"read-{part.index}-of-{part.count}"  # the shard lock: one reader per share
    with folder.hold_shard(name):
        refuse_during_rescore(folder)
        claim_reader(folder, reader_spec, "`read`", write=False)  # refused before the pool starts
        with ReadPool(reader_spec, folder.root, n_workers) as pool:
            _probe(pool, reader_spec, folder.root)  # one image read before writing
            totals = read_passes(
                folder,
                pool,
                Scoring(config.score, config.suite),
                name,
                part=part,
                again=again,
                step=batch_size or config.generate.batch_size,
                generating=lambda: follow and _generating(folder),
                progress=progress,
                console=console,
                claim=lambda: claim_reader(folder, reader_spec, "`read`"),
            )
    merged = None
    if not folder.busy_shards():
        merged = merge_run(folder.root, folder=folder)
    # a followed run that ended without recording its end died part-way
    unfinished = follow and not _generating(folder) and not _generated(folder)
    return {**totals, "merged": None if merged is None else len(merged), "unfinished": unfinished}


def _grid_reader(reader_spec: str) -> Any:
    """The reader of a grid-path read, started and tried on a sample image (as a run's).

    Not on a stored image: the reader of a grid-path run reads no stored PNG.
    """

    reader = start_reader(reader_spec)
    probe_reader(reader, sample_image(), reader_spec, "a sample image of text")
    return reader


def _probe(pool: ReadPool, reader_spec: str, root: Path) -> None:
    """Refuse a reader that fails on one of the run's images (its own error, exit 2)."""

    found = run_image(root)
    if found is None:  # no image yet (`--follow` of a run just started)
        return
    outcome = pool.probe(found[0])
    if not isinstance(outcome, UnreadableImage):  # a damaged file is not the reader's fault
        refuse_failed_probe(outcome, reader_spec, found[0])


def read_passes(
    folder: RunFolder,
    pool: ReadPool,
    scoring: Scoring,
    name: str,
    *,
    generating: Callable[[], bool],
    step: int,
    part: Shard | None = None,
    again: bool = False,
    progress: bool = True,
    console: Console | None = None,
    found: Callable[[int], None] | None = None,
    read: Callable[[int], None] | None = None,
    idle: Callable[[float], object] = time.sleep,
    claim: Callable[[], None] | None = None,
) -> dict[str, int]:
    """Read the unread images of the folder, pass after pass while ``generating()``.

    The loop of ``glyphbench read`` (and of the readers ``run --read-workers`` starts):
    the first pass reads every unread row, later passes the rows of generation part
    files not seen yet; a pass that starts once ``generating()`` is false is the last.
    ``found(n)``: called after each pass's look with the ``n`` unread images it found
    (the first call: the first pass); ``read(n)``: after each chunk of ``n`` images
    read; ``idle(s)``: waits between empty passes; ``claim()``: called once, before the
    first row is written (``read`` records the table's reader then).
    Every image path read is checked to stay inside the run folder first (a part file
    names it, and anyone sending the folder may write one): one that leads outside is
    refused in one line before anything is written. Scored rows are written as part
    files of ``name`` (a killed reader loses at most
    :data:`glyphbench.run.stages.PART_SECONDS` of readings).
    """
    part = part or Shard()
    totals = {"read": 0, "errors": 0}
    seen: set[Path] = set()
    while True:
        still = generating()
        rows = _rows(folder, seen, every=again)
        todo = rows[unread(rows, again=again) & in_shard(rows["image_path"], part)]
        if found is not None:
            found(len(todo))
        if len(todo):
            named = todo["image_path"].set_axis(row_labels(todo))
            Contained(folder.root, source=folder.parts).cells(named)
            if claim is not None:
                claim()
                claim = None
        again = False  # a second pass reads only what is new
        outcome = read_into_parts(
            folder,
            todo,
            pool,
            name=name,
            scoring=scoring,
            step=step,
            progress=progress,
            console=console,
            advanced=read,
        )
        totals = {key: totals[key] + outcome[key] for key in totals}
        if not still:  # this pass started after the generation ended: all read
            return totals
        if not outcome["read"]:
            idle(FOLLOW_POLL_S)


#: The columns that say whether a row waits to be read (what a first look reads of every file).
LOOK_COLUMNS = (*ROW_KEY, "image_path", "error", "ocr_text")


def _rows(folder: RunFolder, seen: set[Path], *, every: bool = False) -> pd.DataFrame:
    """The unread rows (``every``: every row) of the first pass, then only the rows of
    generation part files not seen yet.

    Following a long run, a pass then costs the new part files, not the whole folder.
    """
    if not seen:
        files = folder.part_files()
        seen.update(files)
        if every:
            return folder.read_parts(ROW_KEY, conform=conform_results, files=files)
        return _unread_rows(folder, files)
    # Listed without a stat per file: only the new ones are put in order (a long run
    # has thousands of part files, and a pass comes after every batch).
    listed = folder.parts.glob("*/*/batch-*.parquet")
    new = [f for f in listed if f not in seen and not f.parent.parent.name.startswith("read-")]
    seen.update(new)
    new.sort(key=lambda path: (path.stat().st_mtime_ns, str(path)))
    return folder.read_parts(ROW_KEY, conform=conform_results, files=new)


def _unread_rows(folder: RunFolder, files: list[Path]) -> pd.DataFrame:
    """The newest row of each key that waits to be read, from ``files`` (oldest first).

    Reads :data:`LOOK_COLUMNS` of every file, then whole only the files that hold such a
    row: a first look at a resumed run of a million rows, mostly read, does not hold the
    whole table. Files whose columns do not combine are read whole, as before.
    """
    import pyarrow as pa

    tables, whole = [], []
    for number, path in enumerate(files):
        try:
            part = open_part(path)  # its checksums checked
            names = [c for c in LOOK_COLUMNS if c in part.schema_arrow.names]
            table = part.read(columns=names)
        except (OSError, ValueError, pa.ArrowException):
            whole.append(number)  # read_parts reports it and sets it aside
            continue
        tables.append(table.append_column("_file", pa.array([number] * table.num_rows)))
    try:
        look = pa.concat_tables(tables, promote_options="permissive").to_pandas()
    except (pa.ArrowException, ValueError, TypeError, KeyError):  # KeyError: pandas metadata
        return folder.read_parts(ROW_KEY, conform=conform_results, files=files)
    for column in LOOK_COLUMNS:
        if column not in look.columns:
            look[column] = None
    look = look.drop_duplicates(subset=list(ROW_KEY), keep="last")
    waiting = look[unread(look)]
    needed = sorted({*map(int, waiting["_file"]), *whole})
    if not needed:
        return conform_results(pd.DataFrame())
    rows = folder.read_parts(ROW_KEY, conform=conform_results, files=[files[i] for i in needed])
    keys = set(waiting[list(ROW_KEY)].itertuples(index=False, name=None))
    newest = [key in keys for key in rows[list(ROW_KEY)].itertuples(index=False, name=None)]
    return rows[newest].reset_index(drop=True)


def read_grid_run(
    root: str | Path,
    reader: Reader,
    reader_spec: str,
    *,
    progress: bool = True,
    console: Console | None = None,
) -> dict[str, Any]:
    """Read the run's unread rows through OneIG's grid; score, write and merge them.

    The read stage fed by the merged table's unread rows, a prompt's grid at a time, in
    this process; the score stage writes part files as ``read``'s do.

    What ``glyphbench run`` does after making the images of an ``image_path=oneig`` run
    (:mod:`glyphbench.run.grid_path`), and ``glyphbench read`` on such a run. Returns
    ``{"read", "errors", "merged"}`` as :func:`read_run` does.
    """

    folder = RunFolder(root)
    meta = folder.manifest(required=True)
    config = RunConfig.from_mapping(meta["config"], folder.manifest_path)
    name = "read-grid"
    with folder.hold_shard(name):
        refuse_during_rescore(folder)
        rows = merge_run(folder.root, folder=folder).copy()
        todo = unread(rows) if len(rows) else pd.Series(dtype=bool)
        if not todo.any():
            return {"read": 0, "errors": 0, "merged": len(rows)}
        grid = grid_of(config.suite)
        Contained(folder.root, source=folder.root / RESULTS).cells(rows.loc[todo, "image_path"])
        check_groups(folder, rows, grid)  # before anything is written
        claim_reader(folder, reader_spec, "`read`")
        store = ReadingStore(folder.root, name)
        writer = PartWriter(folder, name, Scoring(config.score, config.suite), store)
        wanted = todo & generated_mask(rows)
        totals = read_chunks(
            rows,
            grid_chunks(folder, rows, reader, store, wanted, grid),
            label="read OneIG grid cells",
            total=int(wanted.sum()),
            done=lambda labels: writer.add(rows.loc[labels]),
            progress=progress,
            console=console,
        )
        writer.close()
    merged = merge_run(folder.root, folder=folder) if not folder.busy_shards() else None
    read, errors = totals["read"], totals["errors"]
    return {"read": read, "errors": errors, "merged": None if merged is None else len(merged)}


def wait_for_generation(folder: RunFolder, wait_s: float) -> None:
    """Wait (at most ``wait_s``) until the generation writes the folder or has finished.

    ``read --follow`` and ``run --read-later`` are started together: the reader must not
    see a folder without run.json (an error) or one whose run has not yet taken its
    shard lock (nothing to follow) and stop before the first image. Past the deadline a
    missing run.json is an error; an existing one is read as it is.
    """
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        if folder.manifest_path.is_file() and (_generating(folder) or _generated(folder)):
            return
        time.sleep(FOLLOW_POLL_S)
    if not folder.manifest_path.is_file():
        raise InputError(
            folder.manifest_path,
            f"no run started writing here within {wait_s:g} s (read --follow waits for a "
            "`run --read-later` on this folder)",
        )


def _generated(folder: RunFolder) -> bool:
    """True when every shard of the generation has recorded its end (shard.json)."""
    shards = {name: info for name, info in folder.shards().items() if name.startswith("shard-")}
    if not shards:
        return False
    try:
        count = int(next(iter(shards)).rsplit("-of-", 1)[1])
    except (IndexError, ValueError):
        return False
    return len(shards) >= count and all(info.get("finished") for info in shards.values())


def _generating(folder: RunFolder) -> bool:
    """True while a process that is not a reader holds a shard of the folder."""
    return any(not name.startswith("read-") for name in folder.busy_shards())
