"""Part files: one batch's rows each, written once, read back to resume and to merge.

A part file is ``parts/<shard>/<group>/batch-NNNNN-<host>-<pid>-<sha>.parquet``: numbered
per (shard, group), named after the process that wrote it (two writers never replace each
other's part) and after the first digits of its SHA-256 (a flipped bit anywhere in it is
found on reading). :class:`glyphbench.engine.folder.RunFolder` writes and lists them; the
rules of their bytes and names live here.

A part file that cannot be read (truncated by a full disk, damaged by a copy) is reported
in one line and renamed ``*.parquet.unreadable`` by a process holding a lock of the
folder, so its rows count as not done and are produced again (:func:`set_aside`).
"""

from __future__ import annotations

import hashlib
import io
import os
import re
from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glyphbench.core.durable import HOST_TAG
from glyphbench.core.io import READ_CHECKED, WRITE_CHECKED

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.parquet as pq

PARTS = "parts"
#: Suffix given to a part file that could not be read (it is kept for inspection).
UNREADABLE = ".unreadable"

_PART_NUMBER = re.compile(r"^batch-(\d+)")
#: Hex digits of a part file's SHA-256 in its name (``batch-N-<host>-<pid>-<sha>.parquet``).
PART_SHA_DIGITS = 16
_PART_SHA = re.compile(rf"^batch-\d+-.+-([0-9a-f]{{{PART_SHA_DIGITS}}})\.parquet$")
#: How part files are written: page checksums and snappy (``DataFrame.to_parquet``'s
#: default), without dictionary pages or column statistics. A part file holds one batch
#: (a few rows), is read whole by the merge and by its key columns on resume, never
#: filtered on statistics; both cost CPU on writing and a larger footer on every opening
#: (2.0 -> 1.2 ms to write a batch of 8 rows of 58 columns, 1.7 -> 1.4 ms to open and read
#: it back). The rows read back are the same (values, types, metadata).
PART_OPTIONS: dict[str, Any] = {
    **WRITE_CHECKED,
    "compression": "snappy",
    "use_dictionary": False,
    "write_statistics": False,
}

#: A function that turns the merged rows into the final table (order, filter, columns).
Finish = Callable[["pd.DataFrame"], "pd.DataFrame"]


def open_part(path: Path) -> pq.ParquetFile:
    """A part file opened for reading, its SHA-256 (in its name) and page checksums checked.

    Read it with ``use_threads=False``: a part file holds one batch (a few rows), and
    handing its columns to Arrow's thread pool cost more CPU than decoding them (1.4 ->
    1.0 ms to open and read a batch of 8 rows of 58 columns).

    A part file whose bytes do not match its name raises ``ValueError`` (read as
    unreadable: set aside, its rows made again); one written before names carried the
    SHA-256 is read with its page checksums only.

    >>> import tempfile
    >>> import pandas as pd
    >>> from glyphbench.engine.folder import RunFolder
    >>> folder = RunFolder(tempfile.mkdtemp())
    >>> path = folder.write_part(pd.DataFrame({"a": [1, 2]}), "s", "g")
    >>> open_part(path).read().num_rows
    2
    >>> _ = path.write_bytes(path.read_bytes()[:-9] + b"x" + path.read_bytes()[-8:])
    >>> open_part(path)
    Traceback (most recent call last):
    ValueError: SHA-256 differs from the one in its name: the file is damaged
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = path.read_bytes()
    match = _PART_SHA.match(path.name)
    if match and hashlib.sha256(data).hexdigest()[:PART_SHA_DIGITS] != match[1]:
        raise ValueError("SHA-256 differs from the one in its name: the file is damaged")
    return pq.ParquetFile(pa.BufferReader(data), **READ_CHECKED)


def unreadable_errors() -> tuple[type[Exception], ...]:
    """What reading a damaged part file raises (Arrow's errors: pyarrow loaded on call)."""
    import pyarrow as pa

    return (OSError, ValueError, KeyError, TypeError, pa.ArrowException)


def last_part_number(folder: Path) -> int:
    """The highest ``batch-NNNNN`` number in ``folder`` (0 when it holds none)."""
    names = [p.name for p in folder.glob("batch-*")]
    return max((int(m[1]) for m in map(_PART_NUMBER.match, names) if m), default=0)


def part_bytes(rows: pd.DataFrame | pa.Table) -> tuple[bytes, str]:
    """A batch's rows as part-file bytes and its name's tail (``<host>-<pid>-<sha>.parquet``).

    ``rows`` may be an Arrow table (written as ``DataFrame.to_parquet`` writes the frame
    it came from: the frame's schema and pandas metadata).
    """
    import pandas as pd
    import pyarrow.parquet as pq

    buffer = io.BytesIO()
    if isinstance(rows, pd.DataFrame):
        rows.to_parquet(buffer, index=False, **PART_OPTIONS)
    else:
        pq.write_table(rows, buffer, **PART_OPTIONS)
    data = buffer.getvalue()
    sha = hashlib.sha256(data).hexdigest()[:PART_SHA_DIGITS]
    return data, f"{HOST_TAG}-{os.getpid()}-{sha}.parquet"


def list_parts(parts: Path, groups: Collection[str] | None = None) -> list[Path]:
    """Part files under ``parts`` (of ``groups`` only, when given), oldest first:
    modification time, then path."""
    files = [
        path
        for path in parts.glob("*/*/batch-*.parquet")
        if groups is None or path.parent.name in groups
    ]
    return sorted(files, key=lambda p: (p.stat().st_mtime_ns, str(p)))


def set_aside(path: Path, exc: Exception, say: Callable[[str], None], *, holding: bool) -> None:
    """Report an unreadable part file; rename it ``*.unreadable`` when ``holding`` a lock
    of its folder (else another process may be the one writing it: skipped only)."""
    problem = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    reason = f"{type(exc).__name__}: {problem}"[:200]
    if holding:
        aside = path.with_name(path.name + UNREADABLE)
        os.replace(path, aside)
        say(
            f"warning: {path}: unreadable part file ({reason}); "
            f"set aside as {aside.name}, its rows will be made again"
        )
    else:
        say(f"warning: {path}: unreadable part file ({reason}); its rows are skipped")
