"""File helpers shared by every stage: atomic, durable writes and friendly table reading.

Atomic writes go to a hidden temporary file in the same folder, are flushed to disk
(``fsync``), renamed into place, and the folder is flushed too, so neither a crash,
a Ctrl-C nor a power cut leaves a half-written image or table behind. Files are
created with the process umask (``0644`` under the usual ``022``), never the
``0600`` of :func:`tempfile.mkstemp`, so teammates on shared storage can read
results. A failed write (disk full, read-only folder, a file where a folder should
be) is an :class:`~glyphbench.core.errors.InputError` naming the file.

Temporary files are named ``.<name>.<host>-<pid>-<random>.tmp`` so that
:func:`remove_stale_temp_files` can tell a dead process's leftovers from a file
another process is writing right now.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import secrets
import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from glyphbench.core.durable import HOST_TAG, settle, stale, sync_file, sync_folder
from glyphbench.core.errors import InputError

if TYPE_CHECKING:
    # pandas loads inside the table readers and writers: the CLI's help texts read the
    # suites, which import this module, and `glyphbench --help` stays free of pandas.
    import pandas as pd

_TEMP_NAME = re.compile(
    r"^\.(?P<name>.+)\.(?:(?P<host>[0-9a-f]{6})-(?P<pid>\d+)-[0-9a-f]{6}|[a-z0-9_]{8})\.tmp$"
)


def os_problem(exc: OSError) -> str:
    """The reason an OS call failed, in words (``strerror``, else the message).

    >>> os_problem(OSError(28, "No space left on device"))
    'No space left on device'
    """
    return exc.strerror or str(exc) or type(exc).__name__


def ensure_folder(folder: str | Path) -> Path:
    """Create ``folder`` and its parents; each new folder's entry is flushed to disk.

    A file in the way, a read-only parent or a full disk raise :class:`InputError`.
    """
    folder = Path(folder)
    missing: list[Path] = []
    probe = folder
    while not probe.is_dir():
        # Checked again: another thread or process may have just created the folder.
        if (probe.exists() or probe.is_symlink()) and not probe.is_dir():
            raise InputError(probe, "exists and is not a folder")
        missing.append(probe)
        if probe.parent == probe:
            break
        probe = probe.parent
    for new in reversed(missing):
        try:
            new.mkdir(exist_ok=True)
        except FileExistsError:  # a file in the way (a folder would be accepted above)
            raise InputError(new, "exists and is not a folder") from None
        except OSError as exc:
            raise InputError(new, f"cannot create folder: {os_problem(exc)}") from None
        sync_folder(new.parent)
    return folder


def _new_temp(path: Path) -> Path:
    """An empty temporary file next to ``path``, created with the process umask."""
    tmp, fd = _open_temp(path)
    os.close(fd)
    return tmp


def _open_temp(path: Path) -> tuple[Path, int]:
    """A new temporary file next to ``path`` (process umask) and its descriptor, for writing."""
    tmp, fd = _open_temp_name(os.fspath(path))
    return Path(tmp), fd


def _open_temp_name(path: str) -> tuple[str, int]:
    """:func:`_open_temp` on names (no ``Path`` built: the run writes every image this way)."""
    folder, name = os.path.split(path)
    while True:
        tmp = os.path.join(folder, f".{name}.{HOST_TAG}-{os.getpid()}-{secrets.token_hex(3)}.tmp")
        try:
            return tmp, os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except FileExistsError:
            continue


def write_bytes_atomic(path: str | Path, data: bytes, *, durable: bool = True) -> None:
    """Write ``data`` to ``path`` as :func:`atomic_path` does, through one file descriptor.

    The same guarantees (a temporary file, flushed when ``durable``, renamed into place,
    the folder flushed; an OS error is an :class:`InputError` naming ``path``) for about
    half the system calls: the run writes every image this way.
    """
    target = os.fspath(path)
    try:  # the folder is made (and flushed) only when the file cannot be made in it
        tmp, fd = _open_temp_name(target)
    except OSError:
        ensure_folder(os.path.dirname(target) or ".")
        try:
            tmp, fd = _open_temp_name(target)
        except OSError as exc:
            raise InputError(target, f"cannot write: {os_problem(exc)}") from None
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, target)
    except BaseException as exc:
        with suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError):
            raise InputError(target, f"cannot write: {os_problem(exc)}") from None
        raise
    if durable:
        sync_folder(os.path.dirname(target) or ".")


@contextmanager
def atomic_path(path: str | Path, *, durable: bool = True) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success flush it and rename it onto ``path``.

    The file is flushed to disk before the rename and the folder after it, so a
    crash leaves either the old file or the new one, never a torn one. An OS error
    inside the block or while renaming becomes an :class:`InputError` naming ``path``.
    ``durable=False``: renamed without flushing (a killed process still leaves the old
    file or the new one; the caller flushes later, e.g. once per batch).
    """
    path = Path(path)
    ensure_folder(path.parent)
    try:
        tmp = _new_temp(path)
    except OSError as exc:
        raise InputError(path, f"cannot write: {os_problem(exc)}") from None
    try:
        yield tmp
        if durable:
            sync_file(tmp)
        os.replace(tmp, path)
        if durable:
            sync_folder(path.parent)
    except OSError as exc:
        raise InputError(path, f"cannot write: {os_problem(exc)}") from None
    finally:
        with suppress(OSError):
            tmp.unlink()


@contextmanager
def atomic_open(path: str | Path, mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """``open`` for writing that only replaces ``path`` once the block succeeds."""
    with atomic_path(path) as tmp, open(tmp, mode, **kwargs) as handle:
        yield handle


def stale_temp_files(root: str | Path, *, now: float | None = None) -> list[Path]:
    """Temporary files under ``root`` that no live process will ever rename into place.

    A file of this host whose process is gone is stale at once; one of another host,
    or without a process tag (older glyphbench), once it is
    :data:`~glyphbench.core.durable.STALE_TEMP_SECONDS` old. A file of a live process on
    this host is kept (it is being written).
    """
    now = time.time() if now is None else now
    found = []
    for folder, _, files in os.walk(root):
        for name in files:
            match = _TEMP_NAME.match(name) if name.startswith(".") else None
            if match is None:
                continue
            path = Path(folder) / name
            # no process tag (an older glyphbench's): judged by age, as another host's
            if stale(match["host"] or "", int(match["pid"] or 0), path, now):
                found.append(path)
    return sorted(found)


def remove_stale_temp_files(root: str | Path) -> int:
    """Delete :func:`stale_temp_files` under ``root``; return how many were removed."""
    removed = 0
    for path in stale_temp_files(root):
        with suppress(FileNotFoundError):
            path.unlink()
            removed += 1
    return removed


def json_safe(data: Any) -> Any:
    """``data`` with every NaN or infinite float made ``None`` (JSON has no NaN).

    >>> json_safe({"a": float("nan"), "b": [1.5, float("inf")], "c": "x"})
    {'a': None, 'b': [1.5, None], 'c': 'x'}
    """
    if isinstance(data, float):
        return data if data == data and abs(data) != float("inf") else None
    if isinstance(data, dict):
        return {key: json_safe(value) for key, value in data.items()}
    if isinstance(data, list | tuple):
        return [json_safe(value) for value in data]
    return data


def write_json(path: str | Path, data: Any) -> None:
    """Write ``data`` as indented UTF-8 JSON, atomically; NaN and infinities as ``null``."""
    # A lone surrogate (a file name's non-UTF-8 byte) is written escaped, never a crash.
    with atomic_open(path, "w", encoding="utf-8", errors="backslashreplace") as handle:
        json.dump(json_safe(data), handle, indent=2, ensure_ascii=False, default=str)
        handle.write("\n")


#: A run folder's manifest: the resolved config, hashes and protocol card of its run.
RUN_JSON = "run.json"
#: Files that make a folder a run folder (the run's manifest, its merged results).
RUN_MARKERS = (RUN_JSON, "results.parquet")
#: The fix :func:`read_run_json` names for a folder without a run's manifest.
RUN_JSON_MISSING = "pass the folder `glyphbench run --out` wrote"
#: The fix :func:`read_run_json` names for a run.json it cannot use.
RUN_JSON_DAMAGED = (
    "run.json is damaged: restore it from a copy of the run folder, or run again into a new"
    " --out folder"
)


def read_run_json(run_dir: str | Path, *, required: bool = False) -> dict[str, Any]:
    """The run.json of ``run_dir``: the one way to read a run's manifest.

    A commit a killed process left (which may install run.json) is finished first
    (:func:`glyphbench.core.durable.settle`). No run.json: ``{}``, or when ``required``
    (also for an empty object) an :class:`InputError`. Damaged (not JSON, not a JSON
    object, not UTF-8, a folder): an :class:`InputError`. Each is one line naming the file,
    the line where JSON breaks, and the fix.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     empty = read_run_json(folder)
    ...     _ = (Path(folder) / RUN_JSON).write_text('["not", "an object"]')
    ...     try:
    ...         read_run_json(folder)
    ...     except InputError as exc:
    ...         print(empty, exc.problem)
    {} expected a JSON object, got array; run.json is damaged: restore it from a copy of ...
    """
    path = Path(run_dir) / RUN_JSON
    settle(path.parent)
    if not os.path.lexists(path):
        if required:
            raise InputError(path, f"not a glyphbench run folder (no run.json); {RUN_JSON_MISSING}")
        return {}
    try:
        data: dict[str, Any] = read_json(path)
    except InputError as exc:
        raise InputError(path, f"{exc.problem}; {RUN_JSON_DAMAGED}", line=exc.line) from None
    if required and not data:
        raise InputError(
            path, f"not a glyphbench run folder (run.json is an empty object); {RUN_JSON_MISSING}"
        )
    return data


def locate_run(folder: str | Path, *, needs: str = "results.parquet") -> Path:
    """The run folder ``folder`` names: itself, or the one run folder inside it.

    ``glyphbench demo --out demo_out`` writes its run to ``demo_out/run``: commands
    given ``demo_out`` take the run inside and say so on stderr. A folder holding
    several runs, or none, is an :class:`InputError` that names what to pass.
    ``needs`` is the file the command reads (checked in the folder found).
    """
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():  # results.parquet itself, say
        raise InputError(folder, f"is a file, not a run folder; give its folder, {folder.parent}")
    if not folder.is_dir():
        raise InputError(folder, "run folder not found")
    if any((folder / marker).exists() for marker in RUN_MARKERS):
        found = folder
    else:
        inside = sorted(
            child
            for child in folder.iterdir()
            if child.is_dir() and any((child / marker).exists() for marker in RUN_MARKERS)
        )
        if len(inside) > 1:
            names = ", ".join(str(child) for child in inside)
            raise InputError(folder, f"not a run folder; it holds several runs, pass one: {names}")
        if not inside:
            raise InputError(folder, f"not a run folder: no {' or '.join(RUN_MARKERS)} in it")
        found = inside[0]
        print(f"{folder}: using the run folder inside it, {found}", file=sys.stderr)
    settle(found)  # a commit a killed process left (its first table, say): finished first
    if not (found / needs).exists():
        raise InputError(found, f"no {needs} in this run folder (has the run finished?)")
    return found


#: Beside a checksummed table: ``NAME.sha256`` holds its SHA-256 (``sha256sum -c`` reads it).
CHECKSUM_SUFFIX = ".sha256"


def checksum_path(path: str | Path) -> Path:
    """The SHA-256 file beside a table.

    >>> checksum_path("run/results.parquet").name
    'results.parquet.sha256'
    """
    path = Path(path)
    return path.with_name(path.name + CHECKSUM_SUFFIX)


def file_sha256(path: str | Path) -> str:
    """The SHA-256 of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def write_checksum(path: str | Path) -> None:
    """Write ``NAME.sha256`` beside ``path`` (atomically), in ``sha256sum``'s format."""
    path = Path(path)
    with atomic_open(checksum_path(path), "w", encoding="utf-8") as handle:
        handle.write(f"{file_sha256(path)}  {path.name}\n")


def verify_checksum(path: str | Path) -> None:
    """Refuse a table whose bytes differ from its ``NAME.sha256``.

    A flipped bit anywhere (a page, its header, the footer Parquet's own page checksums
    do not cover) is an :class:`InputError` naming the file, never different data. A
    table of a run folder (run.json beside it) without its ``NAME.sha256`` is read, and
    named once on stderr as unverified (:func:`unverified_note`).
    """
    path = Path(path)
    sidecar = checksum_path(path)
    if not sidecar.is_file():
        in_run = path.is_file() and (path.parent / "run.json").is_file()
        if in_run and path not in _SAID_UNVERIFIED:
            _SAID_UNVERIFIED.add(path)
            print(f"warning: {unverified_note(path)}", file=sys.stderr, flush=True)
        return
    try:
        recorded = sidecar.read_text(encoding="utf-8").split()[0].lower()
    except (OSError, UnicodeDecodeError, IndexError):
        recorded = ""
    if recorded != file_sha256(path):
        raise InputError(
            path, f"damaged: its SHA-256 differs from {sidecar.name}{_rebuild_hint(path)}"
        )


#: Tables already named as unverified by this process (said once each).
_SAID_UNVERIFIED: set[Path] = set()


def unverified_note(path: str | Path) -> str:
    """The line naming a run's table that has no checksum beside it.

    >>> print(unverified_note("runs/a/results.parquet"))  # doctest: +NORMALIZE_WHITESPACE
    runs/a/results.parquet: no results.parquet.sha256 beside it: unverified, a damaged
    byte could read as different data (rebuild it from the run's part files: glyphbench
    merge runs/a)
    """
    path = Path(path)
    return (
        f"{path}: no {checksum_path(path).name} beside it: unverified, a damaged byte could "
        f"read as different data{_rebuild_hint(path)}"
    )


def _rebuild_hint(path: Path) -> str:
    """How to make a run's results table again (its part files are kept)."""
    if path.name != "results.parquet":
        return ""
    return f" (rebuild it from the run's part files: glyphbench merge {path.parent})"


#: Parquet written with a CRC per page and read with them checked.
WRITE_CHECKED: dict[str, Any] = {"write_page_checksum": True}
READ_CHECKED: dict[str, Any] = {"page_checksum_verification": True}


def read_parquet(
    path: str | Path, columns: list[str] | None = None, dictionary: Sequence[str] = ()
) -> pd.DataFrame:
    """A Parquet table (``columns`` only, when given), its checksums checked; one-line errors.

    ``dictionary`` columns are read dictionary-encoded (pandas categories): a long string
    repeated on every row then costs one copy, not one per row.
    """
    path = Path(path)
    settle(path.parent)  # a commit a killed process left: finished before reading
    if path.is_file() and path.stat().st_size == 0:
        raise InputError(path, f"file is empty{_rebuild_hint(path)}")
    verify_checksum(path)
    import pandas as pd
    import pyarrow as pa

    encoded = [c for c in dictionary if columns is None or c in columns]
    try:
        if encoded:
            return pd.read_parquet(path, columns=columns, read_dictionary=encoded, **READ_CHECKED)
        return pd.read_parquet(path, columns=columns, **READ_CHECKED)
    except (OSError, ValueError, KeyError, TypeError, pa.ArrowException) as exc:
        problem = f"cannot read: {exc}"
        if isinstance(exc, KeyError | TypeError):  # damaged pandas metadata ('index_columns')
            problem = f"cannot read: damaged table metadata ({type(exc).__name__}: {exc})"
        raise InputError(path, f"{problem.splitlines()[0]}{_rebuild_hint(path)}") from None


def write_table(frame: pd.DataFrame, path: str | Path) -> None:
    """Write a DataFrame atomically; the format follows the suffix (.parquet, .csv, .jsonl).

    Parquet is written with page checksums (:data:`WRITE_CHECKED`).
    """
    path = Path(path)
    suffix = path.suffix.lower()
    with atomic_path(path) as tmp:
        if suffix == ".parquet":
            frame.to_parquet(tmp, index=False, **WRITE_CHECKED)
        elif suffix == ".csv":
            write_csv(frame, tmp)
        elif suffix in (".jsonl", ".ndjson"):
            frame.to_json(tmp, orient="records", lines=True, force_ascii=False)
        else:
            raise InputError(
                path, f"unsupported output format {suffix!r}; use .parquet, .csv or .jsonl"
            )


def write_csv(frame: pd.DataFrame, target: Path | IO[str]) -> None:
    """CSV to a path or an open text handle; when a text cell holds a bare carriage return,
    every text cell is quoted.

    pandas (like Python 3.11's csv module) quotes a cell only for the characters of its
    line terminator, "\\n": a cell holding "\\r" alone would be written unquoted and
    split by every CSV reader. Quoting every text cell keeps it one cell.
    """
    import csv

    text = frame.select_dtypes(include=["object", "string", "category"])
    # column by column: DataFrame.apply on no rows gives a frame .any() cannot reduce
    bare_cr = any(
        bool(text[column].astype(str).str.contains("\r", regex=False).any())
        for column in text.columns
    )
    quoting = csv.QUOTE_NONNUMERIC if bare_cr else csv.QUOTE_MINIMAL
    frame.to_csv(target, index=False, quoting=quoting)


#: A text cell starting with one of these is a formula to a spreadsheet (OWASP "CSV injection").
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every text cell a spreadsheet would run as a formula made inert.

    A leading ``'`` is added to a text cell starting with ``= + - @``, a tab or a carriage
    return, so a CSV a person opens (ratings, admin export, report tables) cannot run
    ``=HYPERLINK(...)``; numbers are left as they are. Only for CSVs meant for people:
    data files read back by glyphbench keep their cells exactly.

    >>> import pandas as pd
    >>> frame = pd.DataFrame({"t": ["=1+2", "ok", "-x", "@me"], "n": [-1, 2, 3, 4]})
    >>> safe = spreadsheet_safe(frame)
    >>> safe["t"].tolist(), safe["n"].tolist()
    (["'=1+2", 'ok', "'-x", "'@me"], [-1, 2, 3, 4])
    >>> spreadsheet_safe(frame.astype({"t": "category"}))["t"].tolist()  # slice labels
    ["'=1+2", 'ok', "'-x", "'@me"]
    """

    def inert(value: object) -> object:
        return "'" + value if isinstance(value, str) and value.startswith(FORMULA_START) else value

    from pandas import CategoricalDtype
    from pandas.api.types import is_object_dtype, is_string_dtype

    out = frame.copy()
    for column in out.columns:
        values = out[column]
        if isinstance(values.dtype, CategoricalDtype):  # a slice's labels: "-neon" is no
            out[column] = values.astype(object).map(inert)  # category, and became NaN
        elif is_object_dtype(values) or is_string_dtype(values):
            out[column] = values.map(inert).astype(values.dtype)
    return out


def read_table(path: str | Path, *, text_columns: bool = False) -> pd.DataFrame:
    """Read a .csv, .tsv, .parquet or .jsonl table with one-line errors for bad input.

    With ``text_columns=True`` CSV cells are read as strings and empty cells stay
    empty strings (never NaN, never the text "nan").
    """
    import pandas as pd

    path = Path(path)
    if not path.exists():
        raise InputError(path, "file not found")
    if path.is_dir():
        raise InputError(path, "is a folder, expected a file")
    suffix = path.suffix.lower()
    try:
        if suffix in (".csv", ".tsv"):
            sep = "\t" if suffix == ".tsv" else ","
            text = _delimited_text(path, sep)
            options: dict[str, Any] = {"sep": sep}
            if text_columns:
                options.update(dtype=str, keep_default_na=False)
            return pd.read_csv(io.StringIO(text), **options)
        if suffix == ".parquet":
            return read_parquet(path)
        if suffix in (".jsonl", ".ndjson"):
            return _read_jsonl(path)
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    except pd.errors.EmptyDataError:
        raise InputError(path, "file is empty") from None
    except pd.errors.ParserError as exc:
        raise InputError(path, f"cannot parse as CSV: {exc}".splitlines()[0]) from None
    except (OSError, ValueError) as exc:
        raise InputError(path, f"cannot read: {exc}".splitlines()[0]) from None
    raise InputError(
        path, f"unsupported table format {suffix!r}; use .csv, .tsv, .parquet or .jsonl"
    )


def utf8_text(path: Path) -> str:
    """The file as text (a UTF-8 byte-order mark dropped); a byte that is not UTF-8 is an
    :class:`InputError` naming its line, its place in the line and the fix."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:  # the line holding the byte (file and line)
        line = data.count(b"\n", 0, exc.start) + 1
        start = data.rfind(b"\n", 0, exc.start) + 1
        raise InputError(
            path,
            f"not UTF-8 text (byte {exc.start - start + 1} of the line: {exc.reason}); "
            "save the file as UTF-8",
            line=line,
        ) from None


def _delimited_text(path: Path, sep: str) -> str:
    """The text of a CSV or TSV file whose every row has as many fields as its header.

    pandas reads a row with more fields than the header by taking the first ones as an
    index (the row's text shifts into another column, silently), fills a row with fewer
    with empty cells, and renames a repeated column ``text.1``: each is refused here,
    naming the line.

    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> _ = (folder / "a.csv").write_text('prompt,text\\nA "x",x,extra\\n')
    >>> _delimited_text(folder / "a.csv", ",")
    Traceback (most recent call last):
    glyphbench.core.errors.InputError: ...a.csv:2: 3 fields where the header has 2; quote ...
    """
    import csv

    text = utf8_text(path)
    rows = csv.reader(io.StringIO(text, newline=""), delimiter=sep)
    # The csv module refuses a field over 131,072 characters; pandas reads any: no field
    # of this file is longer than the file.
    limit = csv.field_size_limit(max(csv.field_size_limit(), len(text) + 1))
    try:
        header = next(rows, None)
        if header is None:
            return text
        repeated = sorted({name for name in header if header.count(name) > 1})
        if repeated:
            raise InputError(path, f"column {repeated[0]!r} appears twice in the header", line=1)
        line = rows.line_num + 1  # where the next record starts
        for row in rows:
            if row and len(row) != len(header):
                raise InputError(path, _ragged(len(row), len(header), sep), line=line)
            line = rows.line_num + 1
    except csv.Error as exc:
        raise InputError(path, f"cannot parse as CSV: {exc}", line=rows.line_num) from None
    finally:
        csv.field_size_limit(limit)
    return text


def _ragged(fields: int, columns: int, sep: str) -> str:
    """What is wrong with a row of ``fields`` fields under a header of ``columns``, and the fix.

    >>> _ragged(1, 2, ",")
    '1 field where the header has 2; give every column a value (an empty one as ,,)'
    """
    named = f"{fields} field{'s' if fields != 1 else ''} where the header has {columns}"
    if fields > columns:
        shown = "a tab" if sep == "\t" else repr(sep)
        return f'{named}; quote a field that holds {shown} ("a, b")'
    return f"{named}; give every column a value (an empty one as {sep}{sep})"


#: ``DataFrame.attrs`` key of a JSONL table's line numbers (one per row, blank lines skipped).
LINE_NUMBERS = "line_numbers"


def _read_jsonl(path: Path) -> pd.DataFrame:
    import pandas as pd

    text = utf8_text(path)
    numbered = list(jsonl_records(text.split("\n"), path))
    frame = pd.DataFrame.from_records([record for _, record in numbered])
    # blank lines are skipped: a row's error names its line through this, not its position
    frame.attrs[LINE_NUMBERS] = [number for number, _ in numbered]
    return frame


def jsonl_records(lines: Iterable[str], path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for each non-blank line of a JSONL file: the one JSONL reader.

    A line that is not JSON, or not a JSON object, is an :class:`InputError` naming
    ``path`` and the line.

    >>> list(jsonl_records(['{"a": 1}', "", '{"b": 2}'], "x.jsonl"))
    [(1, {'a': 1}), (3, {'b': 2})]
    >>> list(jsonl_records(["[1]"], "x.jsonl"))
    Traceback (most recent call last):
    glyphbench.core.errors.InputError: x.jsonl:1: expected a JSON object, got array
    """
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise InputError(path, f"malformed JSON: {exc.msg}", line=number) from None
        except RecursionError:  # brackets nested past the parser's depth: no traceback
            raise InputError(path, "JSON nested too deeply", line=number) from None
        if not isinstance(record, dict):
            raise InputError(
                path, f"expected a JSON object, got {json_kind(type(record))}", line=number
            )
        if "\\u" in line:  # an escape may spell a lone surrogate, which is no text
            try:
                json.dumps(record, ensure_ascii=False).encode("utf-8")
            except UnicodeEncodeError as exc:
                bad = f"\\u{ord(exc.object[exc.start]):04x}"
                raise InputError(
                    path, f"a lone surrogate ({bad}) is not text; fix the escape", line=number
                ) from None
        yield number, record


#: The largest config file read (1 MiB: configs are a few KB).
MAX_CONFIG_BYTES = 1 << 20


def config_too_large(size: int) -> str:
    """The refusal of a config file of ``size`` bytes (over :data:`MAX_CONFIG_BYTES`)."""
    return f"config file too large ({size:,} bytes; at most {MAX_CONFIG_BYTES:,})"


def read_text(path: str | Path, *, limit: int | None = None) -> str:
    """A UTF-8 text file's contents; a missing, unreadable or non-UTF-8 file is an InputError.

    ``limit``: a file of more bytes is refused before it is read (a config file:
    :data:`MAX_CONFIG_BYTES`).
    """
    path = Path(path)
    if path.is_dir():
        raise InputError(path, "is a folder, expected a file")
    if not path.exists():
        raise InputError(path, "file not found")
    if limit is not None and path.is_file() and path.stat().st_size > limit:
        raise InputError(path, config_too_large(path.stat().st_size))
    try:
        if limit is None:
            return path.read_text(encoding="utf-8")
        with path.open("rb") as handle:  # a pipe or /dev/zero has no size: read a byte more
            data = handle.read(limit + 1)
        if len(data) > limit:  # a stream: its size is unknown, only that it is over
            raise InputError(path, f"config file too large (more than {limit:,} bytes)")
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(path, f"not UTF-8 text (byte {exc.start}: {exc.reason})") from None
    except OSError as exc:
        raise InputError(path, f"cannot read: {os_problem(exc)}") from None


def read_json(path: str | Path, *, expect: type = dict) -> Any:
    """Read a JSON file holding an ``expect`` (a dict by default); one-line errors.

    >>> import tempfile
    >>> with tempfile.TemporaryDirectory() as folder:
    ...     bad = Path(folder) / "run.json"
    ...     _ = bad.write_text('{"a": 1,}')
    ...     try:
    ...         read_json(bad)
    ...     except InputError as exc:
    ...         print(exc.problem, exc.line)
    malformed JSON: Expecting property name enclosed in double quotes 1
    """
    path = Path(path)
    settle(path.parent)  # run.json of a commit a killed process left: finished first
    text = read_text(path)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(path, f"malformed JSON: {exc.msg}", line=exc.lineno) from None
    if not isinstance(data, expect):
        raise InputError(path, f"expected a JSON {json_kind(expect)}, got {json_kind(type(data))}")
    return data


def json_kind(kind: type) -> str:
    """JSON's word for a Python type.

    >>> json_kind(dict), json_kind(list), json_kind(str)
    ('object', 'array', 'string')
    """
    words = {dict: "object", list: "array", str: "string", bool: "boolean", type(None): "null"}
    return words.get(kind, "number" if kind in (int, float) else kind.__name__)


#: Characters kept in folder names by default (everything else becomes ``_``).
SAFE_CHARACTERS = "._=+-"


#: The longest folder or file-name part :func:`slug` makes: with an image's
#: ``_s<seed>_i<k>.png`` or a part file's name it stays well under the 255 bytes a file
#: name may have, however long a model label (an ``api:http`` URL) or a prompt id is.
MAX_SLUG = 160


def slug(
    name: str, *, digest: int = 0, keep: str = SAFE_CHARACTERS, limit: int | None = None
) -> str:
    """The one folder-name rule: runs of unsafe characters become ``_``, ends are trimmed.

    ``keep`` lists the punctuation allowed besides letters and digits, ``limit`` cuts
    the name, and with ``digest`` a name that had to change gets ``-`` plus that many
    hex digits of its SHA-256, so two different names never share a folder. Model
    labels use the defaults, prompt ids ``digest=8``, codec specs
    ``keep="._-", limit=60, digest=6`` (the folder names runs have always had).

    >>> slug("control:typo?rate=0.1")
    'control_typo_rate=0.1'
    >>> slug("tiny-random-sd (untrained)")
    'tiny-random-sd_untrained'
    >>> slug("p-001", digest=8), slug("a/b", digest=8)
    ('p-001', 'a_b-c14cddc0')
    >>> slug("jpeg?quality=30", keep="._-", limit=60, digest=6)
    'jpeg_quality_30-ddfcf9'
    >>> long = slug("api:http/x?url=https://example.com/" + "v" * 300)
    >>> len(long), long[-17:] != slug("api:http/x?url=https://example.com/" + "w" * 300)[-17:]
    (160, True)
    """
    unsafe = f"[^A-Za-z0-9{re.escape(keep)}]+"
    clean = re.sub(unsafe, "_", name).strip("_")[:limit] or "model"
    if digest and clean != name:
        clean += "-" + hashlib.sha256(name.encode("utf-8")).hexdigest()[:digest]
    if len(clean) > MAX_SLUG:  # a file name has at most 255 bytes: hash the tail
        tail = hashlib.sha256(name.encode("utf-8")).hexdigest()[:16]
        clean = f"{clean[: MAX_SLUG - len(tail) - 1]}-{tail}"
    return clean
