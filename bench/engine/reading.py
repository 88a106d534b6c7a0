"""The reading step: OCR a batch, fall back to one image at a time, cache readings.

:func:`read_batch` is the only place glyphbench turns images into readings. It asks
the reader for the whole batch; when that fails, it reads the images one by one so
only the failing ones get their exception, and the others are still read. Callers
turn an exception into an error row in their own words.

With a :class:`ReadingCache`, an image already read by the same reader is not read
again: readings are kept by (SHA-256 of the image's size, mode and pixels; reader
identity = name, version and options). So an unchanged reconstruction (the
``identity`` codec) or a repeated blank image costs one reading.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from bench.core.errors import InputError
from bench.readers import get_reader
from bench.readers.common import ReadError, read_or_errors

if TYPE_CHECKING:
    from PIL import Image

    from bench.readers.base import Reader, Reading


def start_reader(spec: str, flag: str = "--ocr") -> Reader:
    """Create the reader of ``spec`` now; one that cannot start is a user error naming ``flag``.

    Runs create their reader before writing anything, so a reader that cannot start
    (a missing binary, missing weights) leaves no folder behind.
    """
    from bench.engine.loop import error_text

    try:
        return get_reader(spec)
    except InputError:
        raise
    except Exception as exc:
        problem = error_text("OCR", exc).removeprefix("OCR: ")
        raise InputError(flag, f"cannot start the OCR engine {spec!r}: {problem}") from None


def image_digest(image: Image.Image) -> str:
    """SHA-256 of an image's size, mode and pixels (the cache key's image part).

    >>> from PIL import Image
    >>> image_digest(Image.new("RGB", (2, 2))) == image_digest(Image.new("RGB", (2, 2)))
    True
    >>> image_digest(Image.new("RGB", (2, 2))) == image_digest(Image.new("RGB", (2, 3)))
    False
    """
    digest = hashlib.sha256(f"{image.size}{image.mode}".encode())
    digest.update(image.tobytes())
    return digest.hexdigest()


def reader_identity(reader: Reader) -> str:
    """Name, version and options of a reader: two readers with one identity read alike."""
    options = getattr(reader, "options", None) or getattr(reader, "spec", None) or ""
    return f"{reader.name}|{reader.version}|{options}"


class ReadingCache:
    """Readings by (image digest, reader identity), kept in memory for one process."""

    def __init__(self) -> None:
        self._readings: dict[tuple[str, str], Reading] = {}
        self._identities: dict[int, tuple[Reader, str]] = {}

    def identity(self, reader: Reader) -> str:
        """:func:`reader_identity`, asked once per reader (a version may query packages)."""
        known = self._identities.get(id(reader))
        if known is None or known[0] is not reader:
            known = (reader, reader_identity(reader))
            self._identities[id(reader)] = known
        return known[1]

    def get(self, key: tuple[str, str]) -> Reading | None:
        return self._readings.get(key)

    def put(self, key: tuple[str, str], reading: Reading) -> None:
        self._readings[key] = reading

    def __len__(self) -> int:
        return len(self._readings)


def read_batch(
    reader: Reader,
    images: Sequence[Any],
    cache: ReadingCache | None = None,
    keys: Sequence[str] | None = None,
) -> list[Reading | Exception]:
    """One :class:`Reading` or the exception it raised, per image, in order.

    Without failures this costs one ``reader.read`` call for the images not in
    ``cache`` (each distinct image once); failures are never cached. ``keys``
    replaces :func:`image_digest` as the images' cache keys (a run passes the
    SHA-256 of each image file); a cache with a ``flush()`` method (the run folder's
    :class:`~bench.engine.reading_store.ReadingStore`) is flushed after the batch.
    """
    if cache is None:
        return read_or_errors(reader, list(images))
    who = cache.identity(reader)
    digests = list(keys) if keys is not None else [image_digest(image) for image in images]
    cache_keys = [(digest, who) for digest in digests]
    fresh: dict[tuple[str, str], int] = {}  # key -> position of its first image to read
    for position, key in enumerate(cache_keys):
        if cache.get(key) is None and key not in fresh:
            fresh[key] = position
    outcomes = dict(
        zip(fresh, read_or_errors(reader, [images[i] for i in fresh.values()]), strict=True)
    )
    for key, outcome in outcomes.items():
        if not isinstance(outcome, Exception):
            cache.put(key, outcome)
    flush = getattr(cache, "flush", None)
    if callable(flush):
        flush()
    return [outcomes[key] if key in outcomes else _cached(cache, key) for key in cache_keys]


def _cached(cache: ReadingCache, key: tuple[str, str]) -> Reading:
    reading = cache.get(key)
    assert reading is not None  # every key was either cached or read just now
    return reading


def failure_cause(error: BaseException) -> BaseException:
    """The exception behind a reader's :class:`~bench.readers.ReadError` (others as they are)."""
    return error.cause if isinstance(error, ReadError) else error
