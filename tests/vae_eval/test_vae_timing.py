"""Reading and codec times that do not depend on what ran before (glyphbench.vae_eval.reading).

A reader and a codec that sleep stand in for OCR and a VAE, and record when they ran:
by default the two take turns (no overlap, and neither time includes waiting for the
other); with ``overlap=True`` they run at once, which is what inflated reading times
right after a VAE. The reader is warmed up before its first timed reading, and a
reused reading carries the time of the reading it reuses.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
from PIL import Image

from glyphbench import engine
from glyphbench.readers.base import Reader, Reading
from glyphbench.vae_eval.codecs import Codec, CodecFailure
from glyphbench.vae_eval.imageset import ImageSet, default_set
from glyphbench.vae_eval.reading import TIMING_METHOD, TimedReader
from glyphbench.vae_eval.runner import RunOptions, evaluate

#: How long the fake reader and the fake codec take (different, so that one's time
#: showing up in the other's column would be visible).
NAPS = {"read": 0.3, "codec": 0.1}


class Clock:
    """Intervals (who, start, end) recorded by the fakes, thread-safe."""

    def __init__(self) -> None:
        self.intervals: list[tuple[str, float, float]] = []
        self.lock = threading.Lock()

    def nap(self, who: str) -> None:
        start = time.perf_counter()
        time.sleep(NAPS[who])
        with self.lock:
            self.intervals.append((who, start, time.perf_counter()))

    def overlaps(self) -> int:
        reads = [(s, e) for who, s, e in self.intervals if who == "read"]
        codecs = [(s, e) for who, s, e in self.intervals if who == "codec"]
        return sum(1 for a, b in reads for c, d in codecs if a < d and c < b)


class SleepyReader(Reader):
    name = "sleepy"

    def __init__(self, clock: Clock) -> None:
        self.clock = clock
        self.calls: list[int] = []

    @property
    def version(self) -> str:
        return "sleepy 1"

    def read(self, images: Sequence[Image.Image]) -> list[Reading]:
        self.calls.append(len(images))
        self.clock.nap("read")
        return [Reading("river") for _ in images]


class SleepyCodec(Codec):
    """Darkens every image a little (so the reader must read it again) after a nap."""

    name = "sleepy-codec"

    def __init__(self, clock: Clock) -> None:
        self.clock = clock

    def roundtrip(self, images: Sequence[Image.Image]) -> list[Image.Image | CodecFailure]:
        self.clock.nap("codec")
        return [Image.eval(image, lambda value: max(0, value - 1)) for image in images]


def _images(count: int) -> ImageSet:
    full = default_set(size=96)
    return ImageSet(full.name, full.items[:count])


@pytest.mark.slow
@pytest.mark.parametrize("overlap", [False, True])
def test_codec_and_reader_take_turns_unless_overlap(overlap: bool, tmp_path: Path) -> None:
    clock = Clock()
    reader = SleepyReader(clock)
    options = RunOptions(codecs=[SleepyCodec(clock)], batch_size=1, overlap=overlap)
    table = evaluate(options, tmp_path / "out", image_set=_images(4), ocr_engine=reader)
    assert len(table) == 4 and (table["error"] == "").all()
    if overlap:
        assert clock.overlaps() > 0  # the old way: a reading timed while the codec runs
        return
    assert clock.overlaps() == 0
    # The codec's time is its own nap: waiting for a reading (0.3 s) is not in it.
    codec, read = NAPS["codec"], NAPS["read"]
    assert table["codec_seconds"].between(codec * 0.9, read * 0.9).all(), table["codec_seconds"]
    assert table["ocr_seconds"].between(read * 0.9, read * 2).all(), table["ocr_seconds"]
    assert not table["ocr_cached"].any()
    manifest = engine.RunFolder(tmp_path / "out").manifest()
    assert manifest["timing"] == TIMING_METHOD


@pytest.mark.slow
def test_identity_rows_carry_the_time_of_the_reading_they_reuse(tmp_path: Path) -> None:
    clock = Clock()
    reader = SleepyReader(clock)
    options = RunOptions(codecs=["identity"], batch_size=2)
    table = evaluate(options, tmp_path / "out", image_set=_images(2), ocr_engine=reader)
    assert table["ocr_cached"].all()  # identical pixels: read once, as originals
    read = NAPS["read"]
    assert table["ocr_seconds"].between(read / 2 * 0.9, read).all()  # one call, two images
    assert (table["codec_seconds"] < read / 2).all()  # not the reader's time
    assert reader.calls[0] == 1  # the warm-up: one small image before any timed reading
    assert sum(reader.calls[1:]) == 2  # the two originals, once


@pytest.mark.slow
def test_warm_up_happens_once_and_failures_are_timed_apart() -> None:
    clock = Clock()
    reader = SleepyReader(clock)
    timed = TimedReader(reader, engine.ReadingCache(), overlap=False)
    image = default_set(size=96).items[0].load()
    first = timed.read([image, image])
    second = timed.read([image])
    assert reader.calls == [1, 1]  # warm-up, then one reading of the (deduplicated) image
    assert timed.warm_up_seconds is not None and timed.warm_up_seconds >= NAPS["read"] * 0.9
    assert [r.cached for r in first] == [False, False] and second[0].cached
    assert second[0].seconds == first[0].seconds
