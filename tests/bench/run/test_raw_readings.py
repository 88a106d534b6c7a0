"""Readers keep raw text: each box as the engine gave it, in the engine's order.

glyphbench's own metrics keep reading the stripped, reordered ``Reading.text``; a benchmark
adapter that needs what the benchmark's reader would have given (LeX-Bench's PaddleOCR boxes,
end and double spaces included) reads ``Reading.raw`` through the readings store and the
results' ``ocr_raw`` column. Readings stored before the column existed stay readable.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from glyphbench.core.registry import PLUGINS
from glyphbench.readers.base import Reader, Reading
from glyphbench.readers.common import assemble
from glyphbench.run.reading_store import COLUMNS, ReadingStore, readings_table, results_with_reader
from glyphbench.scoring import score_pairs
from glyphbench.suites.scores import add_suite_scores, read_cells

BOX = [(0.0, 0.0), (9.0, 0.0), (9.0, 9.0), (0.0, 9.0)]


def _box(x: float, y: float) -> list[tuple[float, float]]:
    return [(x, y), (x + 9, y), (x + 9, y + 9), (x, y + 9)]


def test_assemble_keeps_every_detection_verbatim_in_the_engines_order() -> None:
    detections = [
        (_box(0, 40), " WARMING", 0.9),
        (_box(0, 0), "HOUSE ", 0.8),
        (_box(0, 80), " ", 0.1),
    ]
    reading = assemble(detections)
    assert reading.pieces == ["HOUSE", "WARMING"]  # stripped, in reading order, blank dropped
    assert reading.text == "HOUSE WARMING"
    assert reading.raw == [" WARMING", "HOUSE ", " "]


def test_the_store_keeps_raw_text_across_processes(tmp_path: Path) -> None:
    store = ReadingStore(tmp_path, "shard-0")
    key = ("abc", "paddle|v3|")
    reading = Reading("KH LA", ["KH LA"], [BOX], [0.5], raw=["KH  LA ", " "])
    store.put(key, reading)
    store.flush()
    assert ReadingStore(tmp_path).get(key) == reading
    stored = readings_table(tmp_path)
    assert json.loads(stored["ocr_raw"].iloc[0]) == ["KH  LA ", " "]


def test_readings_stored_before_raw_text_stay_readable(tmp_path: Path) -> None:
    old = {column: ["x"] for column in COLUMNS if column != "ocr_raw"}
    old.update(
        image_sha256=["abc"],
        reader=["paddle|v3|"],
        ocr_text=["OPEN"],
        ocr_pieces=['["OPEN"]'],
        ocr_boxes=[json.dumps([BOX])],
        ocr_confidences=["[0.9]"],
    )
    folder = tmp_path / "readings"
    folder.mkdir()
    pd.DataFrame(old).to_parquet(folder / "main-00001-1-1.parquet", index=False)
    reading = ReadingStore(tmp_path).get(("abc", "paddle|v3|"))
    assert reading is not None and reading.pieces == ["OPEN"] and reading.raw == []
    assert list(folder.iterdir()) == [folder / "main-00001-1-1.parquet"]  # not set aside


class SpacedReader(Reader):
    """Reads every image as two boxes with the end spaces real PaddleOCR boxes carry."""

    name = "spaced"
    version = "spaced 1"

    def read(self, images: Sequence[Any]) -> list[Reading]:
        return [assemble([(_box(0, 0), "HOUSE ", 0.9), (_box(0, 40), " WARMING", 0.8)])] * len(
            images
        )


def test_a_run_keeps_raw_text_and_an_old_store_still_gives_its_readings(tmp_path: Path) -> None:
    from glyphbench.run.config import RunConfig
    from glyphbench.run.operations import run_benchmark
    from tests.helpers.runner_helper import prompt_set

    PLUGINS.register("readers", "spaced", summary="test double")(lambda _s, _o: SpacedReader())
    try:
        config = RunConfig.from_mapping(
            {"models": ["control:render?size=64"], "seeds": [0], "ocr": "spaced",
             "out": str(tmp_path)}
        )  # fmt: skip
        result = run_benchmark(config, prompt_set=prompt_set(2), progress=False)
        assert result.results is not None
        assert set(result.results["ocr_raw"]) == {'["HOUSE ", " WARMING"]'}
        assert set(result.results["ocr_text"]) == {"HOUSE WARMING"}  # glyphbench's own text
        for part in (tmp_path / "readings").glob("*.parquet"):  # as written before the change
            old = part.with_name(part.name.rsplit("-", 1)[0] + ".parquet")  # no SHA-256 then
            pd.read_parquet(part).drop(columns=["ocr_raw"]).to_parquet(old, index=False)
            part.unlink()
        view = results_with_reader(tmp_path, "spaced")
    finally:
        PLUGINS.unregister("readers", "spaced")
    assert view["ocr_raw"].isna().all() and set(view["ocr_text"]) == {"HOUSE WARMING"}


def test_the_lex_suite_scores_the_raw_boxes_and_falls_back_to_the_pieces() -> None:
    rows = pd.DataFrame(
        {
            "text": ["KAYAK\nSAIL"] * 3,
            "suite_subset": ["easy"] * 3,
            "ocr_text": ["KAYAK SAIL"] * 3,
            "ocr_pieces": ['["KAYAK", "SAIL"]'] * 3,
            # raw boxes with a trailing and a doubled space; none kept; a blank detection
            "ocr_raw": ['["KAYAK ", "SAIL"]', None, '["KAYAK  SAIL", "  "]'],
        }
    )
    assert read_cells(rows, "boxes").tolist() == ["KAYAK \nSAIL", "KAYAK\nSAIL", "KAYAK  SAIL\n  "]
    scored = add_suite_scores(rows, "lex", np.ones(3, dtype=bool))
    # LeX's code: "kayak " splits into "kayak" and "", one unmatched token; "kayak  sail"
    # into "kayak", "", "sail"; the blank detection is no box.
    assert scored["lex_pned"].tolist() == [1.0, 0.0, 1.0]
    direct = score_pairs(["KAYAK\nSAIL"], ["KAYAK  SAIL"], compat="lex", read_as="units")
    assert direct["lex_pned"].tolist() == [1.0]


@pytest.mark.parametrize("how", ["lines", "text"])
def test_other_read_cells_ignore_the_raw_text(how: str) -> None:
    rows = pd.DataFrame(
        {"ocr_text": ["A B"], "ocr_pieces": ['["A", "B"]'], "ocr_raw": ['["B ", " A"]']}
    )
    assert read_cells(rows, how).tolist() == (["A\nB"] if how == "lines" else ["A B"])
