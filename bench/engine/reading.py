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
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glyphbench.core.errors import InputError
from glyphbench.core.io import read_parquet
from glyphbench.core.paths import Contained
from glyphbench.readers import get_reader
from glyphbench.readers.common import ReadError, read_or_errors

if TYPE_CHECKING:
    from PIL import Image

    from glyphbench.readers.base import Reader, Reading


def start_reader(spec: str, flag: str = "--ocr") -> Reader:
    """Create the reader of ``spec`` now; one that cannot start is a user error naming ``flag``.

    Runs create their reader before writing anything, so a reader that cannot start
    (a missing binary, missing weights) leaves no folder behind.
    """
    # --help loads this module; the run loop loads with a run
    from glyphbench.engine.loop import error_text

    try:
        return get_reader(spec)
    except InputError as error:
        if error.source is None:  # e.g. tesseract without the language data: name the flag
            error.source = flag
        raise
    except Exception as exc:
        problem = error_text("OCR", exc).removeprefix("OCR: ")
        raise InputError(flag, f"cannot start the OCR engine {spec!r}: {problem}") from None


def probe_reader(reader: Reader, image: Image.Image, spec: str, where: str) -> Reading:
    """Read ``image`` (one real image, named ``where``) with ``reader``; refuse one that fails.

    A reader that starts but cannot read (Tesseract without its language data, a
    broken model) would turn every row into a failed one: commands try it
    on one image before anything is written and stop with one line naming ``--ocr``.
    """
    return refuse_failed_probe(read_or_errors(reader, [image])[0], spec, where)


def refuse_failed_probe(outcome: Reading | Exception, spec: str, where: str) -> Reading:
    """A probe's reading; the one-line refusal (``--ocr``) when ``outcome`` is an exception."""
    # --help loads this module; the run loop loads with a run
    from glyphbench.engine.loop import error_text

    if isinstance(outcome, Exception):
        problem = error_text("OCR", failure_cause(outcome)).removeprefix("OCR: ")
        raise InputError(
            "--ocr", f"the OCR engine {spec!r} cannot read {where}: {problem}; nothing was written"
        )
    return outcome


def sample_image() -> Image.Image:
    """A small image of black text on white: what a run probes its reader with.

    >>> sample_image().size
    (192, 48)
    """
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (192, 48), "white")
    ImageDraw.Draw(image).text((10, 16), "OPEN 24 HOURS", fill="black")
    return image


def run_image(root: Path) -> tuple[str, Image.Image] | None:
    """One image of the run in ``root`` that opens (a good row's first), or None.

    The image a reader is probed with before it reads a run (:func:`probe_reader`).
    """
    from PIL import Image

    paths: list[str] = []
    table = root / "results.parquet"
    try:
        rows = read_parquet(table, columns=["image_path", "error"])  # checksums checked
        good = rows[rows["image_path"].notna() & (rows["error"].fillna("") == "")]
        paths = good["image_path"].astype(str).head(20).tolist()
    except (InputError, OSError, ValueError, KeyError):  # no table yet, or an unreadable one
        pass
    contained = Contained(root, source=table)  # a path the table names stays in the run
    found = [contained(path, n + 1) for n, path in enumerate(paths)]
    on_disk = [p.resolve() for p in sorted(root.glob("images/*/*.png"))[:20]]
    found += [path for path in on_disk if path.is_relative_to(contained.root)]
    for path in found:
        try:
            with Image.open(path) as image:
                return str(path.relative_to(contained.root)), image.convert("RGB")
        except Exception:  # a damaged image is not the reader's fault: try another
            continue
    return None


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
    :class:`~glyphbench.run.reading_store.ReadingStore`) is flushed after the batch.
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
    """The exception behind a reader's :class:`~glyphbench.readers.ReadError` (others as they
    are)."""
    return error.cause if isinstance(error, ReadError) else error
