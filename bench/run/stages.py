"""The read stage and the score stage of a benchmark run, which every command composes.

Every command that reads or scores a run's images runs the same two stages; only where
the rows come from and where the reader runs differ::

    command             rows come from                         reading runs
    run                 each generated batch (Runner)          in the run's worker thread
    run --read-workers  the part files generation writes       in reader processes
    read                the unread rows of the part files      in reader processes
    rescore             every generated row of results.parquet in this process
    OneIG grid path     rows of results.parquet, by prompt     in this process, a grid at once

    READ   a reader (a reader spec started and probed once, or reader processes)
           -> the run's reading store (RUN/readings/: each image read once per reader)
           -> the reading columns of each row (ocr_*, error)
    SCORE  score_rows (the metric table; the score section; the suite's scorer)
           -> conform_results -> a part file

One durability rule: the readings a row uses are written before the row (a kill between
the two leaves readings a resume reuses, never rows whose readings were lost); rows are
written every :data:`PART_ROWS` rows or :data:`PART_SECONDS` seconds (:class:`PartWriter`),
per batch by the engine's loop (``run``), or all at once in one commit with the table
they make (``rescore``). One error policy: a reader's exception on an image becomes that
row's ``OCR:`` error and the other images are still read; a failed re-read of a row read
before keeps the earlier reading (``keep``). One progress line per command
(:func:`read_chunks`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from glyphbench.core.progress import LineProgress
from glyphbench.engine import error_text, failure_cause, read_batch
from glyphbench.readers.base import Reading
from glyphbench.run.reading_store import ReadingStore, encoded_reading
from glyphbench.run.results import conform_results, score_rows

if TYPE_CHECKING:
    from PIL import Image
    from rich.console import Console

    from glyphbench.engine import ReadingCache, RunFolder
    from glyphbench.engine.read_pool import ReadPool
    from glyphbench.readers.base import Reader
    from glyphbench.run.config import ScoreSettings, SuiteEntry

#: Rows per part file written by a reader (fewer, larger files than one per batch) ...
PART_ROWS = 512
#: ... or fewer, when this many seconds have passed since the last: a killed reader loses
#: at most this long's readings.
PART_SECONDS = 5.0
#: The reading columns of a row with no reading.
READING_COLUMNS = ("ocr_text", "ocr_pieces", "ocr_boxes", "ocr_confidences", "ocr_raw")

#: What the read stage gives for one image: its reading, the reader's exception, or None
#: (nothing read).
Outcome = Reading | Exception | None


# ------------------------------------------------------------------------------ read stage
def reading_columns(
    outcome: Outcome, identity: tuple[str, str] | None, seconds: float
) -> dict[str, Any]:
    """The ``ocr_*`` columns and ``error`` of one row from its reading step outcome.

    ``outcome`` None: nothing was read (``identity`` None as well when no reader ran).
    """
    reading = None if outcome is None or isinstance(outcome, Exception) else outcome
    return {
        **reading_fields(reading),
        "ocr_engine": identity[0] if identity else None,
        "ocr_version": identity[1] if identity else None,
        "ocr_seconds": seconds if reading is not None else float("nan"),
        "error": error_text("OCR", failure_cause(outcome))
        if isinstance(outcome, Exception)
        else "",
    }


def reading_fields(reading: Reading | None) -> dict[str, Any]:
    """The ``ocr_*`` text columns of one row (lists as JSON strings)."""
    if reading is None:
        return dict.fromkeys(READING_COLUMNS)
    return encoded_reading(reading)


def read_timed(
    reader: Reader,
    images: Sequence[Image.Image],
    store: ReadingCache | None,
    keys: Sequence[str] | None = None,
) -> tuple[list[Outcome], float]:
    """Read ``images`` in this process: one outcome per image, and seconds per image.

    ``keys`` (each image's key in ``store``: the SHA-256 of its file) let a reading the
    store holds stand in for reading the image again.
    """
    if not images:
        return [], float("nan")
    started = time.perf_counter()
    outcomes = read_batch(reader, images, store, keys)
    return list(outcomes), (time.perf_counter() - started) / len(images)


@dataclass
class Chunk:
    """Some rows' readings: the rows (labels of the table) and one outcome each.

    ``covers``: every row the chunk stands for in the progress line and the writer (the
    rows read, and rows a source gave an error of its own: a missing file, a dropped cell).
    """

    index: list[Any]
    outcomes: Sequence[Outcome]
    identity: tuple[str, str]
    seconds: float = float("nan")
    covers: list[Any] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not self.covers:
            self.covers = list(self.index)


def apply_readings(
    rows: pd.DataFrame, chunk: Chunk, keep: pd.Series | None = None
) -> tuple[int, int, int]:
    """Write ``chunk``'s reading columns into ``rows`` (in place): the one error policy.

    A failed reading of a row that ``keep`` marks (read before) leaves that row's earlier
    reading. Returns (images read, failures, failed rows that kept their earlier reading).
    """
    failed = kept = 0
    written: list[Any] = []
    values: list[dict[str, Any]] = []
    for index, outcome in zip(chunk.index, chunk.outcomes, strict=True):
        if isinstance(outcome, Exception):
            failed += 1
            if keep is not None and keep[index]:
                kept += 1
                continue
        written.append(index)
        values.append(reading_columns(outcome, chunk.identity, chunk.seconds))
    if written:
        frame = pd.DataFrame(values, index=written)
        for column in frame.columns:
            for index, value in frame[column].items():
                rows.at[index, column] = value
    return len(chunk.index), failed, kept


def pool_chunks(
    pool: ReadPool, todo: pd.DataFrame, step: int, store: ReadingStore
) -> Iterator[Chunk]:
    """Read ``todo``'s image files in reader processes, ``step`` at a time; keep each
    reading in ``store`` (written with the rows that use it)."""
    paths = todo["image_path"].astype(str)
    size = max(1, step)
    starts = range(0, len(paths), size)
    batches = (paths.iloc[start : start + size] for start in starts)
    # the pool gives the batches back in order: each start names its rows
    for start, (_, (identity, full, outcomes)) in zip(starts, pool.read(batches), strict=True):
        store.remember(full, *identity)
        rows = todo.iloc[start : start + size]
        for digest, outcome in zip(rows["image_sha256"], outcomes, strict=True):
            if isinstance(outcome, Reading) and isinstance(digest, str) and digest:
                store.put((digest, full), outcome)
        yield Chunk(list(rows.index), outcomes, identity)


def read_chunks(
    rows: pd.DataFrame,
    chunks: Iterable[Chunk],
    *,
    label: str,
    total: int,
    keep: pd.Series | None = None,
    done: Callable[[list[Any]], None] | None = None,
    advanced: Callable[[int], None] | None = None,
    progress: bool = True,
    console: Console | None = None,
) -> dict[str, int]:
    """The read stage's loop: each chunk's readings into ``rows``, one progress line.

    ``done(labels)``: called with the rows each chunk covers, once they hold their
    readings (a :class:`PartWriter`'s ``add``); ``advanced(n)``: after each chunk.
    Returns ``{"read", "errors", "kept"}``.
    """
    from rich.console import Console

    totals = {"read": 0, "errors": 0, "kept": 0}
    with LineProgress(console=console or Console(stderr=True), disable=not progress) as bar:
        task = bar.add_task(label, total=total)
        for chunk in chunks:
            read, failed, kept = apply_readings(rows, chunk, keep)
            totals["read"] += read
            totals["errors"] += failed
            totals["kept"] += kept
            if done is not None:
                done(chunk.covers)
            bar.advance(task, len(chunk.covers))
            if advanced is not None:
                advanced(len(chunk.covers))
    return totals


# ----------------------------------------------------------------------------- score stage
@dataclass(frozen=True)
class Scoring:
    """The score stage: the run's score section and its suite's scorer."""

    score: ScoreSettings
    suite: SuiteEntry | None = None

    def rows(self, rows: pd.DataFrame) -> pd.DataFrame:
        """``rows`` scored and typed as the results table is."""
        return conform_results(score_rows(rows.reset_index(drop=True), self.score, self.suite))


class PartWriter:
    """Scored rows into part files of one shard name, under the one durability rule.

    :meth:`add` collects rows that hold their readings; every :data:`PART_ROWS` rows or
    :data:`PART_SECONDS` seconds the reading store is flushed, then the rows are scored
    and written as one part file; :meth:`close` writes what is left.
    """

    def __init__(self, folder: RunFolder, name: str, scoring: Scoring, store: ReadingStore) -> None:
        self.folder, self.name, self.scoring, self.store = folder, name, scoring, store
        self._pending: list[pd.DataFrame] = []
        self._written = time.monotonic()

    def add(self, rows: pd.DataFrame) -> None:
        self._pending.append(rows)
        due = sum(map(len, self._pending)) >= PART_ROWS
        if due or time.monotonic() - self._written >= PART_SECONDS:
            self.flush()

    def flush(self) -> None:
        # readings first: a kill between the two leaves readings a resume reuses, never
        # rows whose readings were not kept
        self.store.flush()
        if self._pending:
            rows = pd.concat(self._pending)
            self.folder.write_part(self.scoring.rows(rows), self.name, "all")
        self._pending, self._written = [], time.monotonic()

    def close(self) -> None:
        self.flush()


def read_into_parts(
    folder: RunFolder,
    todo: pd.DataFrame,
    pool: ReadPool,
    *,
    name: str,
    scoring: Scoring,
    step: int,
    progress: bool = True,
    console: Console | None = None,
    advanced: Callable[[int], None] | None = None,
) -> dict[str, int]:
    """``read`` and ``run --read-workers``: ``todo``'s images read in reader processes,
    scored and written as part files of ``name``. Returns ``{"read", "errors"}``."""
    if todo.empty:
        return {"read": 0, "errors": 0}
    store = ReadingStore(folder.root, name)  # every reading kept in RUN/readings/
    writer = PartWriter(folder, name, scoring, store)
    totals = read_chunks(
        todo,
        pool_chunks(pool, todo, step, store),
        label=f"read ({max(pool.workers, 1)} process(es))",
        total=len(todo),
        done=lambda labels: writer.add(todo.loc[labels]),
        advanced=advanced,
        progress=progress,
        console=console,
    )
    writer.close()
    return {"read": totals["read"], "errors": totals["errors"]}
