"""Readings persist in the run folder: a second reader reads each image once, a repeat nothing."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from glyphbench.core.errors import InputError
from glyphbench.core.registry import PLUGINS
from glyphbench.readers.base import Reader, Reading
from glyphbench.run.config import RunConfig
from glyphbench.run.operations import rescore_run, run_benchmark
from glyphbench.run.reading_store import (
    ReadingStore,
    readings_table,
    results_with_reader,
    stored_readers,
    write_reader_view,
)
from tests.helpers.runner_helper import prompt_set

#: Images each counting reader was asked to read, by reader name.
read_counts: dict[str, int] = {}


class CountingReader(Reader):
    """Reads every image as its own name in capitals and counts the images it is given."""

    def __init__(self, name: str) -> None:
        self.name = name

    @property
    def version(self) -> str:
        return f"{self.name} 1"

    def read(self, images: Sequence[Any]) -> list[Reading]:
        read_counts[self.name] = read_counts.get(self.name, 0) + len(images)
        return [Reading(self.name.upper(), [self.name.upper()]) for _ in images]


@pytest.fixture
def counting_readers() -> Iterator[None]:
    read_counts.clear()
    for name in ("count-a", "count-b"):
        PLUGINS.register("readers", name, summary="test double")(
            lambda spec, _options, name=name: CountingReader(name)
        )
    yield
    for name in ("count-a", "count-b"):
        PLUGINS.unregister("readers", name)


def _run(tmp_path: Path) -> tuple[Path, pd.DataFrame]:
    config = RunConfig.from_mapping(
        {
            "models": ["control:render?size=64", "control:typo?rate=0.5&size=64"],
            "seeds": [0],
            "batch_size": 3,
            "ocr": "count-a",
            "out": str(tmp_path / "run"),
        }
    )
    result = run_benchmark(config, prompt_set=prompt_set(4), progress=False)
    assert result.results is not None
    return result.out, result.results


@pytest.mark.slow
def test_second_reader_reads_each_image_once_and_a_repeat_reads_nothing(
    tmp_path: Path, counting_readers: None
) -> None:
    out, results = _run(tmp_path)
    distinct = results["image_sha256"].nunique()
    # + 1: the run tries its reader on a sample image before writing anything
    assert read_counts == {"count-a": distinct + 1}
    read_counts["count-a"] -= 1
    rescored = rescore_run(
        out, reader_spec="count-b", progress=False
    )  # its probe's reading is kept
    assert read_counts == {"count-a": distinct, "count-b": distinct}
    assert (rescored["ocr_text"] == "COUNT-B").all()
    rescore_run(out, reader_spec="count-b", progress=False)  # everything already read
    back = rescore_run(out, reader_spec="count-a", progress=False)  # and the first reader's too
    assert read_counts == {"count-a": distinct, "count-b": distinct}
    assert (back["ocr_text"] == "COUNT-A").all()

    # Both readers' readings sit side by side; a report can take either.
    table = readings_table(out)
    assert sorted(stored_readers(out)["reader_name"]) == ["count-a", "count-b"]
    assert len(table) == 2 * distinct
    b_view = results_with_reader(out, "count-b")
    assert (b_view["ocr_text"] == "COUNT-B").all() and (b_view["ocr_engine"] == "count-b").all()
    assert len(b_view) == len(results) and b_view["ned"].notna().all()
    view = write_reader_view(out, "count-b")
    assert (view / "images").is_dir() and (view / "results.parquet").is_file()
    with pytest.raises(InputError, match="no stored readings"):
        results_with_reader(out, "easyocr")


def test_store_survives_a_new_process_and_keys_by_reader_identity(tmp_path: Path) -> None:
    store = ReadingStore(tmp_path, "shard-0")
    reader = CountingReader("count-x")
    key = ("abc", store.identity(reader))
    store.put(key, Reading("HELLO", ["HELLO"], [[(0, 0), (1, 0), (1, 1), (0, 1)]], [0.5]))
    store.flush()
    again = ReadingStore(tmp_path)
    assert again.get(key) == Reading("HELLO", ["HELLO"], [[(0, 0), (1, 0), (1, 1), (0, 1)]], [0.5])
    assert again.get(("abc", "count-y|count-y 1|")) is None
    assert list(readings_table(tmp_path)["reader_version"]) == ["count-x 1"]


def test_rescore_keeps_the_previous_readings_and_says_so(
    tmp_path: Path, counting_readers: None
) -> None:
    """Rescore used to replace the run's readings without a word."""
    import io
    import shutil

    from rich.console import Console

    out, results = _run(tmp_path)
    shutil.rmtree(out / "readings")  # a run made before the store: readings only in results
    said = io.StringIO()
    rescore_run(out, reader_spec="count-b", progress=False, console=Console(file=said, width=300))
    readers = stored_readers(out).set_index("reader_name")["images"].to_dict()
    distinct = results["image_sha256"].nunique()
    assert readers == {"count-a": distinct, "count-b": distinct}
    kept = results_with_reader(out, "count-a")
    assert (kept["ocr_text"] == "COUNT-A").all()  # the old readings, still reportable
    message = said.getvalue()
    assert "readings of count-b count-b 1 stored in" in message
    assert "the previous readings (count-a count-a 1) are kept there" in message
    assert f"glyphbench report {out} --reader count-a" in message
