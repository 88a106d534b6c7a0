"""Merging part files into one table without holding it in memory.

:meth:`glyphbench.engine.folder.RunFolder.merge_stream` runs :func:`merge_stream`: pass 1
reads only the key columns of every part file and picks the winning rows (the newest of
each key) in their final order; pass 2 reads those rows back a chunk at a time and
appends them to one Parquet writer. The table and its checksum replace the old pair by one
commit under the folder's manifest lock.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from glyphbench.core.durable import Commit
from glyphbench.core.io import WRITE_CHECKED, atomic_path, write_checksum
from glyphbench.engine.parts import Finish, open_part, unreadable_errors

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd
    import pyarrow as pa


class PartFolder(Protocol):
    """What the merge needs of :class:`glyphbench.engine.folder.RunFolder` (which imports
    this module: a protocol, not an import of the folder)."""

    root: Path

    def locked(self) -> AbstractContextManager[None]: ...
    def part_files(self, groups: Collection[str] | None = None) -> list[Path]: ...
    def report_unreadable(self, path: Path, exc: Exception) -> None: ...
    def read_parts(
        self,
        key: Sequence[str],
        *,
        groups: Collection[str] | None = None,
        conform: Finish | None = None,
        files: Sequence[Path] | None = None,
    ) -> pd.DataFrame: ...
    def write_table(
        self, frame: pd.DataFrame, relpath: str, commit: Commit | None = None
    ) -> Path: ...


#: Pass 1 of :func:`merge_stream`: from (part number, key columns) of each part file,
#: oldest first, the winning rows in final order (part numbers, row numbers).
Pick = Callable[[Iterator[tuple[int, "pa.Table"]]], tuple["np.ndarray", "np.ndarray"]]


def frame_pick(key: Sequence[str], order: Finish) -> Pick:
    """The plain :data:`Pick`: every file's key columns in one frame (columns ``__part``
    and ``__row`` say where each row lies), the newest row of each ``key``, ``order``."""

    def pick(tables: Iterator[tuple[int, pa.Table]]) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np
        import pyarrow as pa

        located = [
            table.append_column(
                "__part", pa.array(np.full(table.num_rows, n, np.int32))
            ).append_column("__row", pa.array(np.arange(table.num_rows, dtype=np.int32)))
            for n, table in tables
        ]
        if not located:
            return np.zeros(0, np.int32), np.zeros(0, np.int32)
        keys = pa.concat_tables(located, promote_options="permissive").to_pandas()
        del located
        winners = order(keys.drop_duplicates(subset=list(key), keep="last"))
        return winners["__part"].to_numpy(np.int32), winners["__row"].to_numpy(np.int32)

    return pick


def _rows_of(rows: np.ndarray) -> np.ndarray:
    """``0, 1, ... len(rows) - 1``: the row numbers of a part file read whole, in order."""
    import numpy as np

    return np.arange(len(rows), dtype=rows.dtype)


class _KeyColumns:
    """Pass 1's input: the ``columns`` of each readable part file, numbered from 0;
    the files read and their distinct schemas are kept for pass 2."""

    def __init__(self, folder: PartFolder, files: Sequence[Path], columns: Sequence[str]):
        self.folder, self.files, self.columns = folder, files, columns
        self.readable: list[Path] = []
        self.schemas: list[pa.Schema] = []

    def __call__(self) -> Iterator[tuple[int, pa.Table]]:
        for path in self.files:
            try:  # one opening of the file for its schema and its key columns
                part = open_part(path)
                schema = part.schema_arrow
                wanted = [c for c in self.columns if c in schema.names]
                table = part.read(columns=wanted, use_threads=False)
            except unreadable_errors() as exc:
                self.folder.report_unreadable(path, exc)
                continue
            if not table.num_rows:
                continue
            if schema not in self.schemas:  # thousands of files share a few schemas
                self.schemas.append(schema)
            self.readable.append(path)
            yield len(self.readable) - 1, table


def merge_stream(
    folder: PartFolder,
    name: str,
    key: Sequence[str],
    order: Finish,
    *,
    conform: Finish,
    pick: Pick | None = None,
    by: Sequence[str] = (),
    groups: Collection[str] | None = None,
    observe: Callable[[pd.DataFrame], None] | None = None,
    chunk_rows: int = 10_000,
    commit: Commit | None = None,
    staged: Sequence[Path] = (),
) -> int:
    """:meth:`RunFolder.merge <glyphbench.engine.folder.RunFolder.merge>` without the table
    in memory; returns the number of rows written.

    Writes the same table as ``folder.merge(name, key, order, conform=conform)`` when
    ``order`` only filters and sorts rows by their ``key`` and ``by`` columns:

    1. ``pick`` is given the ``key`` and ``by`` columns of each readable part file
       (oldest first, numbered from 0) and returns the winning rows, in the final
       order, as part numbers and row numbers; by default (:func:`frame_pick`) the
       columns are put in one frame, the newest row of each key kept and ``order``
       applied;
    2. the winning rows are read back ``chunk_rows`` at a time in that order,
       conformed, shown to ``observe`` and appended to one Parquet writer.

    Memory grows with what ``pick`` keeps (the key columns, or integer ranks of
    them), not with the table. The file and its checksum replace the old ones by
    one commit under the manifest lock (:class:`Commit`): a crash leaves the old
    pair or the new, never a torn table. Part files whose
    column types do not combine (or a ``pick`` that raises ``ValueError``) fall
    back to the in-memory merge.

    ``commit``: the table and its checksum are staged there (applied by the caller,
    with run.json); ``staged``: part files staged in that commit, merged as the newest.
    """
    import pyarrow as pa

    if commit is None:
        with folder.locked(), Commit(folder.root) as own:
            return merge_stream(
                folder, name, key, order, conform=conform, pick=pick, by=by, groups=groups,
                observe=observe, chunk_rows=chunk_rows, commit=own, staged=staged,
            )  # fmt: skip
    with folder.locked():
        files = [*folder.part_files(groups), *staged]
        columns = _KeyColumns(folder, files, [*key, *(c for c in by if c not in key)])
        try:
            parts, rows = (pick or frame_pick(key, order))(columns())
            if columns.readable:
                schema = pa.unify_schemas(columns.schemas, promote_options="permissive")
                return _write_merged(
                    commit.path(name), columns.readable, schema, (parts, rows), conform,
                    observe, chunk_rows,
                )  # fmt: skip
        except (pa.ArrowException, ValueError, TypeError):
            pass  # types that do not combine: the in-memory merge below
        files = [*folder.part_files(groups), *staged]  # less any set aside above
        table = order(folder.read_parts(key, conform=conform, files=files))
        if observe is not None:
            observe(table)
        folder.write_table(table, name, commit)
        return len(table)


def _write_merged(
    target: Path,
    files: Sequence[Path],
    schema: pa.Schema,
    picked: tuple[Any, Any],
    conform: Finish,
    observe: Callable[[pd.DataFrame], None] | None,
    chunk_rows: int,
) -> int:
    """Pass 2 of :func:`merge_stream`: the rows ``(parts[i], rows[i])`` in order, to the
    staged ``target`` and its checksum."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    parts, rows = picked
    written = 0
    with atomic_path(target, durable=False) as tmp:  # the commit flushes it
        writer: pq.ParquetWriter | None = None
        try:
            for start in range(0, max(len(parts), 1), chunk_rows):
                chunk = slice(start, start + chunk_rows)
                together = _chunk(files, schema, parts[chunk], rows[chunk])
                frame = conform(together.to_pandas()).reset_index(drop=True)
                if observe is not None:
                    observe(frame)
                out = pa.Table.from_pandas(
                    frame, preserve_index=False, schema=writer.schema if writer else None
                )
                if writer is None:
                    writer = pq.ParquetWriter(tmp, out.schema, **WRITE_CHECKED)
                writer.write_table(out)
                written += len(frame)
        finally:
            if writer is not None:
                writer.close()
    write_checksum(target)
    return written


def _chunk(
    files: Sequence[Path], schema: pa.Schema, parts: np.ndarray, rows: np.ndarray
) -> pa.Table:
    """The rows ``(parts[i], rows[i])`` of ``files``, in that order (each file opened once)."""
    import numpy as np
    import pyarrow as pa

    pieces = [schema.empty_table()]
    placed = []
    for number in dict.fromkeys(parts.tolist()):
        where = np.flatnonzero(parts == number)
        table = open_part(files[number]).read(use_threads=False)
        wanted = rows[where]
        if len(wanted) != table.num_rows or (wanted != _rows_of(wanted)).any():
            table = table.take(pa.array(wanted))  # else: every row, in order
        pieces.append(table)
        placed.append(where)
    together = pa.concat_tables(pieces, promote_options="permissive")
    if placed:
        back = np.argsort(np.concatenate(placed), kind="stable")
        together = together.take(pa.array(back))
    return together
