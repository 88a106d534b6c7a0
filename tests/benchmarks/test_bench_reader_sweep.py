"""benchmarks/bench_reader_sweep.py: its reading cache reads each image once per reader
version, reader code and engine versions, and again after any of them changes."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from PIL import Image

from tests.helpers.paths import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "benchmarks"))

import bench_reader_sweep


@dataclass
class CountingReader:
    """A reader that names each image by its size and counts the images it read."""

    version: str = "v1"
    name: str = "counting"
    calls: list[tuple[int, int]] = field(default_factory=list)

    def read(self, images: list[Image.Image]) -> list[Any]:
        self.calls += [image.size for image in images]
        return [type("Reading", (), {"text": f"{i.width}x{i.height}"})() for i in images]


@pytest.fixture
def frame(tmp_path: Path) -> pd.DataFrame:
    paths = []
    for width in (8, 9, 10):
        path = tmp_path / f"img{width}.png"
        Image.new("RGB", (width, 4), "white").save(path)
        paths.append(str(path))
    return pd.DataFrame({"path": paths})


def _read(
    monkeypatch: pytest.MonkeyPatch,
    reader: CountingReader,
    code: str,
    frame: pd.DataFrame,
    cache: Path,
) -> tuple[list[str], int]:
    monkeypatch.setattr(bench_reader_sweep, "get_reader", lambda spec: reader)
    monkeypatch.setattr(bench_reader_sweep, "reader_code", lambda: code)
    texts, _, fresh = bench_reader_sweep.cached_readings("counting", frame, cache)
    return texts, fresh


def test_a_cached_reading_is_used_only_by_the_same_reader_version_and_code(
    monkeypatch: pytest.MonkeyPatch, frame: pd.DataFrame, tmp_path: Path
) -> None:
    cache = tmp_path / "cache"
    reader = CountingReader()
    texts, fresh = _read(monkeypatch, reader, "code-a", frame, cache)
    assert texts == ["8x4", "9x4", "10x4"] and fresh == 3
    assert _read(monkeypatch, reader, "code-a", frame, cache) == (texts, 0)
    # the reader code changed (a constant of the block order, say): everything is read again
    assert _read(monkeypatch, reader, "code-b", frame, cache) == (texts, 3)
    # another version of the reader (another option) is kept apart too
    assert _read(monkeypatch, CountingReader(version="v2"), "code-b", frame, cache)[1] == 3
    assert len(reader.calls) == 6


def test_a_cached_reading_is_used_only_under_the_same_engine_versions(
    monkeypatch: pytest.MonkeyPatch, frame: pd.DataFrame, tmp_path: Path
) -> None:
    """A new onnxruntime may read a line differently: the stored readings are then not used."""
    cache, reader = tmp_path / "cache", CountingReader()
    monkeypatch.setattr(bench_reader_sweep, "engine_versions", lambda name: "engine==1")
    texts, fresh = _read(monkeypatch, reader, "code-a", frame, cache)
    assert fresh == 3 and _read(monkeypatch, reader, "code-a", frame, cache) == (texts, 0)
    monkeypatch.setattr(bench_reader_sweep, "engine_versions", lambda name: "engine==2")
    assert _read(monkeypatch, reader, "code-a", frame, cache) == (texts, 3)
    stored = [json.loads(path.read_text("utf-8")) for path in sorted(cache.glob("*.json"))]
    assert sorted(record["engines"] for record in stored) == ["engine==1", "engine==2"]


def test_the_engines_of_a_reader_are_named_by_version() -> None:
    from importlib import metadata

    versions = bench_reader_sweep.engine_versions("rapidocr")
    assert versions.startswith("onnxruntime==") and "rapidocr-onnxruntime" in versions
    assert f"onnxruntime=={metadata.version('onnxruntime')}" in versions
    assert bench_reader_sweep.engine_versions("no-such-reader") == ""


def test_the_reader_code_fingerprint_follows_every_file_of_the_readers_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import glyphbench.readers

    real = bench_reader_sweep.reader_code()
    assert real == bench_reader_sweep.reader_code() and len(real) == 16
    package = tmp_path / "readers"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "order.py").write_text("BLOCK_GAP = 1.0\n")
    monkeypatch.setattr(glyphbench.readers, "__file__", str(package / "__init__.py"))
    before = bench_reader_sweep.reader_code()
    (package / "order.py").write_text("BLOCK_GAP = 1.2\n")
    changed = bench_reader_sweep.reader_code()
    (package / "notes.txt").write_text("not code")
    assert len({real, before, changed}) == 3
    assert bench_reader_sweep.reader_code() == changed
