"""File helpers shared by every stage: atomic writes and friendly table reading.

Atomic writes go to a temporary file in the same folder and are renamed into
place, so a crash or Ctrl-C never leaves a half-written image or table behind.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

import pandas as pd

from bench.errors import InputError


@contextmanager
def atomic_path(path: str | Path) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; rename it onto ``path`` on success."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.replace(tmp_path, path)
    finally:
        if tmp_path.exists():
            tmp_path.unlink()


@contextmanager
def atomic_open(path: str | Path, mode: str = "w", **kwargs: Any) -> Iterator[IO[Any]]:
    """``open`` for writing that only replaces ``path`` once the block succeeds."""
    with atomic_path(path) as tmp, open(tmp, mode, **kwargs) as handle:
        yield handle
        handle.flush()
        os.fsync(handle.fileno())


def write_json(path: str | Path, data: Any) -> None:
    """Write ``data`` as indented UTF-8 JSON, atomically."""
    with atomic_open(path, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2, ensure_ascii=False, default=str)
        handle.write("\n")


def write_table(frame: pd.DataFrame, path: str | Path) -> None:
    """Write a DataFrame atomically; the format follows the suffix (.parquet, .csv, .jsonl)."""
    path = Path(path)
    suffix = path.suffix.lower()
    with atomic_path(path) as tmp:
        if suffix == ".parquet":
            frame.to_parquet(tmp, index=False)
        elif suffix == ".csv":
            frame.to_csv(tmp, index=False)
        elif suffix in (".jsonl", ".ndjson"):
            frame.to_json(tmp, orient="records", lines=True, force_ascii=False)
        else:
            raise InputError(
                path, f"unsupported output format {suffix!r}; use .parquet, .csv or .jsonl"
            )


def read_table(path: str | Path, *, text_columns: bool = False) -> pd.DataFrame:
    """Read a .csv, .tsv, .parquet or .jsonl table with one-line errors for bad input.

    With ``text_columns=True`` CSV cells are read as strings and empty cells stay
    empty strings (never NaN, never the text "nan").
    """
    path = Path(path)
    if not path.exists():
        raise InputError(path, "file not found")
    if path.is_dir():
        raise InputError(path, "is a folder, expected a file")
    suffix = path.suffix.lower()
    try:
        if suffix in (".csv", ".tsv"):
            options: dict[str, Any] = {"sep": "\t" if suffix == ".tsv" else ","}
            if text_columns:
                options.update(dtype=str, keep_default_na=False)
            return pd.read_csv(path, encoding="utf-8-sig", **options)
        if suffix == ".parquet":
            return pd.read_parquet(path)
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


def _read_jsonl(path: Path) -> pd.DataFrame:
    records = []
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise InputError(path, f"malformed JSON: {exc.msg}", line=number) from None
    return pd.DataFrame.from_records(records)
