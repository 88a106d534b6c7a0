"""The real-image page of a calibration card (glyphbench.calibration.error_page): every image
of the shipped real set beside both readings, largest score error first, nothing executable."""

from __future__ import annotations

import base64
import html
import io
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from glyphbench.calibration.error_page import PAGE_NAME, THUMB_SIDE, error_page
from glyphbench.calibration.real_set import load_real_set, real_rows, shipped_real_set
from glyphbench.cli.root import app

HOSTILE = '<script>alert("x")</script> & <img src=x onerror=alert(1)>'


class _Page(HTMLParser):
    """The page's images, table rows (cell texts) and every tag, as a browser would parse it."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.images: list[dict[str, str | None]] = []
        self.rows: list[list[str]] = []
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        if tag == "img":
            self.images.append(dict(attrs))
        elif tag == "tr":
            self.rows.append([])
        elif tag == "td":
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._cell is not None:
            self.rows[-1].append("".join(self._cell))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


@pytest.fixture(scope="module")
def read_set() -> tuple[pd.DataFrame, pd.DataFrame]:
    manifest = shipped_real_set()
    if manifest is None:
        pytest.skip("tests/data/real_t2i is not here")
    frame = load_real_set(manifest, limit=8)
    readings = frame["human_reading"].tolist()
    readings[1] = HOSTILE  # a reading that would run if the page did not escape it
    readings[2] = ""  # the reader read nothing
    return frame, real_rows(frame, readings)


def _parsed(frame: pd.DataFrame, rows: pd.DataFrame) -> tuple[str, _Page]:
    page = error_page(rows, frame["path"].tolist(), "fixture", "fixture 1")
    parsed = _Page()
    parsed.feed(page)
    return page, parsed


def test_every_image_is_shown_once_beside_both_readings(read_set: tuple) -> None:
    frame, rows = read_set
    _, parsed = _parsed(frame, rows)
    assert len(parsed.images) == len(frame) == len(parsed.rows) - 1  # one header row
    for image in parsed.images:
        assert str(image["src"]).startswith("data:image/jpeg;base64,") and image["alt"]
    data = base64.b64decode(str(parsed.images[0]["src"]).split(",", 1)[1])
    from PIL import Image

    assert max(Image.open(io.BytesIO(data)).size) <= THUMB_SIDE
    shown = {(cells[3], cells[4]) for cells in parsed.rows[1:]}  # (person read, reader read)
    assert (frame["human_reading"][1], HOSTILE) in shown
    assert (frame["human_reading"][2], "(nothing)") in shown


def test_the_largest_score_error_comes_first(read_set: tuple) -> None:
    frame, rows = read_set
    _, parsed = _parsed(frame, rows)
    errors = [cells[5] for cells in parsed.rows[1:]]
    known = [float(e) for e in errors if e != "–"]
    assert known == sorted(known, reverse=True) and known[0] > 0
    assert errors[: len(known)] == [f"{e:.3f}" for e in known]  # images without text last
    assert len(known) == int(rows["score_error"].notna().sum())


def test_a_reading_is_text_never_markup(read_set: tuple) -> None:
    frame, rows = read_set
    page, parsed = _parsed(frame, rows)
    assert "script" not in parsed.tags and "<script" not in page
    assert len(parsed.images) == len(frame)  # the reading's <img onerror> is no image
    assert "&lt;script&gt;" in page


def test_a_wrong_number_of_image_paths_is_refused(read_set: tuple) -> None:
    frame, rows = read_set
    with pytest.raises(ValueError, match="7 image paths for 8 rows"):
        error_page(rows, frame["path"].tolist()[:7], "fixture", "fixture 1")


@pytest.mark.slow
def test_readers_calibrate_writes_the_page_beside_its_card(tmp_path: Path) -> None:
    pytest.importorskip("rapidocr_onnxruntime")
    out = tmp_path / "card"
    result = CliRunner().invoke(
        app,
        ["readers", "calibrate", "--out", str(out), "--per-lang", "1", "--rates", "0.2",
         "--size", "96", "--no-long", "--real-limit", "3"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    page = (out / PAGE_NAME).read_text(encoding="utf-8")
    real = pd.read_csv(out / "real_images.csv", keep_default_na=False)
    assert page.count("<img ") == len(real) == 3
    assert all(reading in page for reading in real["reading"].map(html.escape) if reading)
    assert f"{out / PAGE_NAME}  (each real image beside both readings)" in result.output


def test_a_missing_image_is_named_in_its_place_and_the_others_shown(
    read_set: tuple, tmp_path: Path
) -> None:
    frame, rows = read_set
    paths = frame["path"].tolist()
    paths[0] = str(tmp_path / "gone.jpg")
    (tmp_path / "broken.jpg").write_bytes(b"not a picture")
    paths[3] = str(tmp_path / "broken.jpg")
    page = error_page(rows, paths, "fixture", "fixture 1")
    parsed = _Page()
    parsed.feed(page)
    assert len(parsed.images) == len(frame) - 2
    assert page.count("(image missing or unreadable)") == 2
