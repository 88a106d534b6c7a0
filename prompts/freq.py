"""Corpus frequency: in how many captions of a corpus does each text occur?

``count_in_corpus(texts, captions)`` streams the captions once: single-token
texts are found through each caption's token set, all other texts through one
Aho-Corasick automaton (pyahocorasick), so the cost is one pass whatever the
number of texts.

The count of a text is the number of **captions** that contain it at least
once, case-insensitively (``str.lower``), as a whole-word match: the characters
just before and after the match must not be letters or digits (so "cat" is not
counted in "category", but is in "cat's" and "a cat."). Texts are stripped of
surrounding spaces before matching; an empty text counts 0.

Corpus formats (streamed; ``.gz`` works for text, JSONL and CSV):

* ``.txt`` — one caption per line;
* ``.csv`` / ``.tsv`` — the caption column (``--column``, else the first of
  caption, text, TEXT, Caption, alt_text, or the only column);
* ``.jsonl`` — same column rule, one JSON object per line;
* ``.parquet`` — same column rule, read in record batches.
"""

from __future__ import annotations

import gzip
import io
import json
import re
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from bench.errors import InputError

CAPTION_COLUMNS = ("caption", "text", "TEXT", "Caption", "alt_text", "captions")


_TOKEN = re.compile(r"[^\W_]+")


def _is_word_char(c: str) -> bool:
    # the same class as _TOKEN: letters and digits (str.isalnum), not "_"
    return c.isalnum()


def count_in_corpus(
    texts: Sequence[str], captions: Iterable[str], progress: Any = None
) -> list[int]:
    """Number of captions containing each text as a whole word/phrase, case-insensitively.

    Single-token texts (letters/digits only) are looked up in each caption's set
    of tokens; every other text goes through one Aho-Corasick automaton with a
    word-boundary check. Both give the same answer; the split is for speed.

    >>> count_in_corpus(["cat", "red car", "50% off"], ["A cat.", "category", "the Red Car and a cat", "cats", "50% OFF!"])
    [2, 1, 1]
    """
    import ahocorasick

    tokens: dict[str, list[int]] = {}
    phrases: dict[str, list[int]] = {}
    for i, text in enumerate(texts):
        key = str(text).strip().lower()
        if not key:
            continue
        target = tokens if _TOKEN.fullmatch(key) else phrases
        target.setdefault(key, []).append(i)
    counts = [0] * len(texts)
    automaton = None
    if phrases:
        automaton = ahocorasick.Automaton()
        for key, indices in phrases.items():
            automaton.add_word(key, (len(key), indices))
        automaton.make_automaton()
    token_keys = tokens.keys()
    for caption in captions:
        if progress is not None:
            progress()
        if not caption:
            continue
        low = caption.lower()
        if tokens:
            for key in token_keys & set(_TOKEN.findall(low)):
                for i in tokens[key]:
                    counts[i] += 1
        if automaton is None:
            continue
        seen: set[int] = set()
        for end, (length, indices) in automaton.iter(low):
            start = end - length + 1
            if start > 0 and _is_word_char(low[start - 1]):
                continue
            if end + 1 < len(low) and _is_word_char(low[end + 1]):
                continue
            if indices[0] in seen:
                continue
            seen.add(indices[0])
            for i in indices:
                counts[i] += 1
    return counts


def _open_text(path: Path) -> IO[str]:
    if path.suffix.lower() == ".gz":
        return io.TextIOWrapper(gzip.open(path, "rb"), encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def _pick_column(columns: Sequence[str], column: str | None, path: Path) -> str:
    if column is not None:
        if column not in columns:
            raise InputError(
                path, f"missing column {column!r} (columns: {', '.join(columns) or 'none'})"
            )
        return column
    for name in CAPTION_COLUMNS:
        if name in columns:
            return name
    if len(columns) == 1:
        return columns[0]
    raise InputError(
        path, f"cannot tell the caption column among {', '.join(columns)}; pass --column"
    )


def iter_captions(path: str | Path, column: str | None = None) -> Iterator[str]:
    """Stream captions from a corpus file (formats in the module docstring)."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "corpus file not found")
    suffixes = [s.lower() for s in path.suffixes]
    kind = (
        suffixes[-2]
        if suffixes and suffixes[-1] == ".gz" and len(suffixes) > 1
        else (suffixes[-1] if suffixes else "")
    )
    if kind in (".txt", "") or kind not in (".csv", ".tsv", ".jsonl", ".ndjson", ".parquet"):
        with _open_text(path) as handle:
            for line in handle:
                yield line.rstrip("\n")
        return
    if kind in (".jsonl", ".ndjson"):
        with _open_text(path) as handle:
            chosen: str | None = None
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    raise InputError(path, f"malformed JSON: {exc.msg}", line=number) from None
                if not isinstance(record, dict):
                    raise InputError(path, "each line must be a JSON object", line=number)
                if chosen is None:
                    chosen = _pick_column(list(record), column, path)
                value = record.get(chosen)
                if isinstance(value, str):
                    yield value
        return
    if kind == ".parquet":
        import pyarrow.parquet as pq

        try:
            parquet = pq.ParquetFile(path)
        except Exception as exc:  # pyarrow raises ArrowInvalid and OSError subclasses
            raise InputError(path, f"cannot read parquet: {exc}".splitlines()[0]) from None
        chosen = _pick_column(parquet.schema_arrow.names, column, path)
        for batch in parquet.iter_batches(columns=[chosen], batch_size=65_536):
            for value in batch.column(0).to_pylist():
                if isinstance(value, str):
                    yield value
        return
    import pandas as pd

    sep = "\t" if kind == ".tsv" else ","
    try:
        reader = pd.read_csv(
            path, sep=sep, dtype=str, keep_default_na=False, chunksize=100_000, encoding="utf-8-sig"
        )
        chosen = None
        for chunk in reader:
            if chosen is None:
                chosen = _pick_column([str(c) for c in chunk.columns], column, path)
            yield from chunk[chosen].tolist()
    except pd.errors.ParserError as exc:
        raise InputError(path, f"cannot parse as CSV: {exc}".splitlines()[0]) from None


def parse_corpus_option(option: str) -> tuple[str, Path]:
    """``NAME=PATH`` -> (name, path); the name becomes the ``<name>_freq`` column.

    >>> parse_corpus_option("laion=/data/laion.parquet")
    ('laion', PosixPath('/data/laion.parquet'))
    """
    name, sep, path = option.partition("=")
    name = name.strip()
    if not sep or not name or not path:
        raise InputError(None, f"--corpus expects NAME=PATH, got {option!r}")
    if not name.replace("_", "").isalnum():
        raise InputError(None, f"--corpus name {name!r} must be letters, digits or _")
    return name.lower(), Path(path)
