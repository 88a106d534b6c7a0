"""Reading for the VAE evaluation, timed so that the time does not depend on what ran before.

Three things made the old ``ocr_seconds`` column mislead:

* **contention**: the engine round-trips the next batch in the main thread while the
  worker reads the previous one. On a CPU both are torch programs using every core,
  so a reading timed during a VAE's decode was measured slowed down by it (and the
  VAE's ``codec_seconds`` by the reading). Here codec work and reading take turns on
  one lock (:attr:`TimedReader.turn`) unless ``overlap`` is asked for: each is then
  timed alone. On a GPU, overlapping saves time; ``RunOptions(overlap=True)`` allows
  it, and the report says the times then include contention;
* **warm-up**: a reader's first call pays for lazy initialisation (model loading,
  kernel selection; EasyOCR's first call took 12-24 s here against 3-8 s for later
  ones). :meth:`TimedReader.warm_up` reads one small image, untimed, before the first
  timed reading;
* **the cache**: a reconstruction identical to an image read before (``identity``)
  is not read again, so it used to show 0 s. Now every row carries the time of the
  reading that produced its text, and ``ocr_cached`` says whether it was reused.

Method: wall-clock time (``time.perf_counter``) of one ``reader.read`` call over the
images of a batch not yet read, divided by their number, taken while no codec runs.
"""

from __future__ import annotations

import contextlib
import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from glyphbench import engine

if TYPE_CHECKING:
    from PIL import Image

    from glyphbench.readers.base import Reader, Reading

#: What run.json and the report say about ``ocr_seconds`` and ``codec_seconds``.
TIMING_METHOD = (
    "wall-clock seconds per image; the reader is warmed up (one untimed reading) first; "
    "codec and reader take turns, so neither is timed while the other runs; "
    "a reused reading (identical pixels) carries the time of the reading it reuses"
)
TIMING_METHOD_OVERLAP = (
    "wall-clock seconds per image; the reader is warmed up first; codec and reader run "
    "at the same time (overlap), so both times include their contention"
)


@dataclass(frozen=True)
class TimedReading:
    """A reading (or the exception the reader raised), its time and whether it was reused."""

    outcome: Reading | Exception
    seconds: float
    cached: bool


class TimedReader:
    """Reads images through the engine's cache and times each reading (see the module doc)."""

    def __init__(self, reader: Reader, cache: engine.ReadingCache, *, overlap: bool) -> None:
        self.reader = reader
        self.cache = cache
        self.overlap = overlap
        #: Held while a codec produces or a reading is timed (a no-op with ``overlap``).
        self.turn = Turn(overlap)
        self.warm_up_seconds: float | None = None
        self._seconds: dict[str, float] = {}

    @property
    def method(self) -> str:
        return TIMING_METHOD_OVERLAP if self.overlap else TIMING_METHOD

    def warm_up(self) -> None:
        """One untimed reading of a small rendered word (once; failures are ignored here)."""
        if self.warm_up_seconds is not None:
            return
        started = time.perf_counter()
        # A real failure shows up, with its image, in the first batch. Under the turn as
        # any reading: a codec timed meanwhile would count the warm-up's share of the CPU.
        with contextlib.suppress(Exception), self.turn:
            self.reader.read([_warm_up_image()])
        self.warm_up_seconds = time.perf_counter() - started

    def read(self, images: Sequence[Image.Image]) -> list[TimedReading]:
        """One :class:`TimedReading` per image, in order (reading failures included)."""
        if not images:
            return []
        self.warm_up()
        who = self.cache.identity(self.reader)
        digests = [engine.image_digest(image) for image in images]
        fresh = {d for d in digests if self.cache.get((d, who)) is None}
        with self.turn:  # acquired before the timer starts: waiting is not reading time
            started = time.perf_counter()
            outcomes = engine.read_batch(self.reader, images, self.cache)
            elapsed = time.perf_counter() - started
        each = elapsed / max(1, len(fresh))
        for digest in fresh:
            self._seconds[digest] = each
        return [
            TimedReading(outcome, self._seconds.get(digest, math.nan), digest not in fresh)
            for digest, outcome in zip(digests, outcomes, strict=True)
        ]


class Turn:
    """Codec work and timed reading take turns on this (a lock; a no-op with ``overlap``).

    The codec producer acquires it at the end of ``prepare`` and releases it when
    ``produce`` ends: the engine times ``produce`` only, so waiting for the reader is
    not counted as codec time (and reading waits for the codec outside its timer too).
    """

    def __init__(self, overlap: bool = False) -> None:
        self._lock = None if overlap else threading.Lock()

    def acquire(self) -> None:
        if self._lock is not None:
            self._lock.acquire()

    def release(self) -> None:
        if self._lock is not None:
            self._lock.release()

    def __enter__(self) -> Turn:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


def _warm_up_image() -> Image.Image:
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (160, 48), (255, 255, 255))
    ImageDraw.Draw(image).text((8, 16), "warm up 42", fill=(20, 20, 20))
    return image
