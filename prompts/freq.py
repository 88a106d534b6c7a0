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
import re
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from functools import lru_cache
from pathlib import Path
from typing import IO, Any, cast

from glyphbench.core.errors import InputError
from glyphbench.core.io import jsonl_records

#: Zipf frequency (wordfreq, English) below which a known word counts as rare.
#: Zipf = log10(occurrences per billion words): 2.5 is about 3 per 10 million.
#: Every word of the Oxford 3000/5000 lists except a handful lies above 3.0.
RARE_ZIPF = 2.5


@lru_cache(maxsize=200_000)
def zipf(word: str) -> float:
    """wordfreq's English Zipf frequency of ``word`` (case-folded); 0.0 when unknown.

    >>> zipf("the") > 7
    True
    >>> zipf("qezt")
    0.0
    """
    from wordfreq import zipf_frequency

    return float(zipf_frequency(word, "en"))


CAPTION_COLUMNS = ("caption", "text", "TEXT", "Caption", "alt_text", "captions")


_TOKEN = re.compile(r"[^\W_]+")


def _is_word_char(c: str) -> bool:
    # the same class as _TOKEN: letters and digits (str.isalnum), not "_"
    return c.isalnum()


def count_in_corpus(
    texts: Sequence[str], captions: Iterable[str], progress: Callable[[], object] | None = None
) -> list[int]:
    """Number of captions containing each text as a whole word/phrase, case-insensitively.

    Single-token texts (letters/digits only) are looked up in each caption's set
    of tokens; every other text goes through one Aho-Corasick automaton with a
    word-boundary check. Both give the same answer; the split is for speed.
    ``progress`` is called once per caption.

    >>> count_in_corpus(
    ...     ["cat", "red car", "50% off"],
    ...     ["A cat.", "category", "the Red Car and a cat", "cats", "50% OFF!"],
    ... )
    [2, 1, 1]
    """
    tokens, phrases = _split_texts(texts)
    automaton = _phrase_automaton(phrases)
    counts = [0] * len(texts)
    for caption in captions:
        if progress is not None:
            progress()
        if not caption:
            continue
        low = caption.lower()
        _count_tokens(low, tokens, counts)
        if automaton is not None:
            _count_phrases(low, automaton, counts)
    return counts


# Lower-cased, stripped text -> the indices of the texts it stands for.
_Positions = dict[str, list[int]]


def _split_texts(texts: Sequence[str]) -> tuple[_Positions, _Positions]:
    """(single tokens, other phrases); empty texts are left out (they count 0).

    >>> _split_texts(["Cat", "red car", " cat ", ""])
    ({'cat': [0, 2]}, {'red car': [1]})
    """
    tokens: _Positions = {}
    phrases: _Positions = {}
    for i, text in enumerate(texts):
        key = str(text).strip().lower()
        if not key:
            continue
        target = tokens if _TOKEN.fullmatch(key) else phrases
        target.setdefault(key, []).append(i)
    return tokens, phrases


def _phrase_automaton(phrases: _Positions) -> Any:
    """One Aho-Corasick automaton over the phrases (None without phrases).

    Each key carries (its length, its text indices) so a match knows where it started.
    """
    import ahocorasick

    if not phrases:
        return None
    automaton = ahocorasick.Automaton()
    for key, indices in phrases.items():
        automaton.add_word(key, (len(key), indices))
    automaton.make_automaton()
    return automaton


def _count_tokens(low: str, tokens: _Positions, counts: list[int]) -> None:
    if not tokens:
        return
    for key in tokens.keys() & set(_TOKEN.findall(low)):
        for i in tokens[key]:
            counts[i] += 1


def _count_phrases(low: str, automaton: Any, counts: list[int]) -> None:
    """Count each phrase once per caption, only where it stands as whole words."""
    seen: set[int] = set()
    for end, (length, indices) in automaton.iter(low):
        start = end - length + 1
        if indices[0] in seen or not _is_whole_word(low, start, end):
            continue
        seen.add(indices[0])
        for i in indices:
            counts[i] += 1


def _is_whole_word(low: str, start: int, end: int) -> bool:
    """``low[start:end + 1]`` has no letter or digit right before or after it.

    >>> _is_whole_word("a cat.", 2, 4), _is_whole_word("category", 0, 2)
    (True, False)
    """
    if start > 0 and _is_word_char(low[start - 1]):
        return False
    return not (end + 1 < len(low) and _is_word_char(low[end + 1]))


def _open_text(path: Path) -> IO[str]:
    """The file as UTF-8 text, through gzip for ``.gz``; strict: a byte that is not UTF-8
    is an error naming the file, never a silent U+FFFD that no text matches (a Latin-1
    corpus counted "café" 0 times)."""
    return io.TextIOWrapper(_open_bytes(path), encoding="utf-8")


def _open_bytes(path: Path) -> IO[bytes]:
    if path.suffix.lower() == ".gz":
        return cast("IO[bytes]", gzip.open(path, "rb"))  # a GzipFile reads as a binary file
    return open(path, "rb")  # the caller closes it


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
    """Stream captions from a corpus file (formats in the module docstring); a file that is
    not UTF-8, or a damaged gzip, is an :class:`InputError` naming it."""
    path = Path(path)
    if not path.exists():
        raise InputError(path, "corpus file not found")
    try:
        yield from _captions(path, column)
    except UnicodeDecodeError as exc:
        raise InputError(
            path, f"not UTF-8 text ({exc.reason} at byte {exc.start} of a block); save it as UTF-8"
        ) from None
    except (EOFError, OSError, zlib.error) as exc:  # gzip.BadGzipFile is an OSError
        raise InputError(
            path, f"cannot read: {exc or type(exc).__name__} (a damaged gzip?)"
        ) from None


def _captions(path: Path, column: str | None) -> Iterator[str]:
    kind = _corpus_kind(path)
    if kind in (".jsonl", ".ndjson"):
        yield from _jsonl_captions(path, column)
    elif kind == ".parquet":
        yield from _parquet_captions(path, column)
    elif kind in (".csv", ".tsv"):
        yield from _csv_captions(path, column, sep="\t" if kind == ".tsv" else ",")
    else:  # .txt, no suffix, or any other: one caption per line
        yield from _text_captions(path)


def _corpus_kind(path: Path) -> str:
    """The lower-cased format suffix, looking through a final ``.gz``.

    >>> [_corpus_kind(Path(p)) for p in ("a.JSONL.gz", "a.gz", "a.csv", "a")]
    ['.jsonl', '.gz', '.csv', '']
    """
    suffixes = [s.lower() for s in path.suffixes]
    if len(suffixes) > 1 and suffixes[-1] == ".gz":
        return suffixes[-2]
    return suffixes[-1] if suffixes else ""


def _text_captions(path: Path) -> Iterator[str]:
    with _open_bytes(path) as handle:
        for number, raw in enumerate(handle, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"{path}:{number}", f"not UTF-8 text ({exc.reason}); save it as UTF-8"
                ) from None
            yield line.rstrip("\r\n") if number > 1 else line.lstrip("\ufeff").rstrip("\r\n")


def _jsonl_captions(path: Path, column: str | None) -> Iterator[str]:
    with _open_text(path) as handle:
        chosen: str | None = None
        for _, record in jsonl_records(handle, path):
            if chosen is None:
                chosen = _pick_column(list(record), column, path)
            value = record.get(chosen)
            if isinstance(value, str):
                yield value


def _parquet_captions(path: Path, column: str | None) -> Iterator[str]:
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


def _csv_captions(path: Path, column: str | None, sep: str) -> Iterator[str]:
    import pandas as pd

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
