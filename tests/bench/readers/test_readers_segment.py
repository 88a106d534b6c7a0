"""Word segmentation: RapidOCR's dropped spaces come back from gaps in the ink.

The images are drawn here by the render control (bundled DejaVu fonts) and read by
the real RapidOCR; nothing is mocked.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from glyphbench.engine.reading import reader_identity
from glyphbench.models.controls import render_text
from glyphbench.readers import get_reader
from glyphbench.readers.segment import ink_gaps, insert_spaces, restore_spaces
from tests.helpers.paths import SHARED

# Multi-word texts written for this test, each drawn with seeds (fonts, sizes) for
# which RapidOCR without word segmentation merges words: found by reading the
# texts below with seeds 0-7 (2026-11-25), every merging case kept.
TEXTS = [
    "FRESH COFFEE EVERY MORNING Roasted in town since 1987 Corner of Main Street and Pine Avenue",
    "SUMMER BOOK FAIR This Saturday at the City Library Free entry for children and their parents",
    "GRAND OPENING SALE Everything half price until Sunday Bring a friend and win a prize",
    "MOUNTAIN TRAIL NORTH Bikes allowed on weekdays only Keep dogs on a short lead at all times",
    "HARBOR FISH MARKET Open every day from six in the morning Fresh catch straight from the boats",
    "CITY JAZZ NIGHT Live music in the old town square Tickets at the door or online now",
]
MERGING = [(0, 1), (0, 4), (0, 7), (1, 7), (2, 5), (2, 7), (3, 1), (3, 7), (4, 4), (5, 7)]
NOT_MERGING = [(1, 0), (5, 0)]  # drawn legibly and read with their spaces: none may be added


def test_insert_spaces_puts_a_space_only_at_wide_gaps_between_latin_letters() -> None:
    positions = [5.0, 15.0, 40.0, 50.0]
    assert insert_spaces("ABCD", positions, [(9, 11), (20, 34)], 20) == "AB CD"
    assert insert_spaces("ABCD", positions, [(9, 11), (20, 25)], 20) == "ABCD"  # 0.25 H
    assert insert_spaces("AB.c", positions, [(20, 34)], 20) == "AB.c"  # no space before "."
    assert insert_spaces("营业OP", positions, [(20, 34)], 20) == "营业OP"  # Han: no spaces
    assert insert_spaces("ABCD", positions[:3], [(20, 34)], 20) == "ABCD"  # positions mismatch


def test_ink_gaps_measures_a_drawn_line_and_restore_spaces_uses_them() -> None:
    from PIL import Image, ImageDraw, ImageFont

    from glyphbench.models.controls import control_font_paths

    font = ImageFont.truetype(str(control_font_paths()[0]), 40)
    image = Image.new("L", (400, 80), 255)
    ImageDraw.Draw(image).text((10, 15), "OPEN NOW", font=font, fill=0)
    gray = np.asarray(image)
    gaps, height = ink_gaps(gray)
    widths = sorted((end - start) / height for start, end in gaps)
    assert 0.3 <= widths[-1] <= 0.8 and widths[-2] < 0.3  # one word gap, letter gaps below
    # Character positions: the centres of the letters as drawn, the space left out.
    draw = ImageDraw.Draw(image)
    drawn = "OPEN NOW"
    centres = [
        10 + draw.textlength(drawn[:i], font=font) + draw.textlength(drawn[i], font=font) / 2
        for i in range(len(drawn))
        if drawn[i] != " "
    ]
    text = "OPENNOW"
    boxes = [[(x - 10, 15), (x + 10, 15), (x + 10, 60), (x - 10, 60)] for x in centres]
    line = [(0, 0), (400, 0), (400, 80), (0, 80)]
    assert restore_spaces(gray, line, text, boxes) == "OPEN NOW"
    assert restore_spaces(gray, line, text, boxes[:-1]) == text  # mismatch: left as read


def test_the_option_is_on_by_default_and_recorded_in_the_version() -> None:
    on, off = get_reader("rapidocr"), get_reader("rapidocr?spaces=0")
    assert reader_identity(on) != reader_identity(off)  # stored apart in the reading store
    assert "spaces from ink gaps >= 0.3 x text height" in on.version
    assert "spaces" not in off.version


@pytest.mark.slow
def test_rapidocr_keeps_the_words_of_a_merging_render() -> None:
    """Default suite: three renders on which the recogniser alone merges words."""
    images = [render_text(TEXTS[t], seed) for t, seed in MERGING[:3]]
    texts = [TEXTS[t] for t, _ in MERGING[:3]]
    spaced = get_reader("rapidocr").read(images)
    assert [len(r.text.split()) for r in spaced] == [len(t.split()) for t in texts]


@pytest.mark.slow
def test_multi_word_renders_keep_their_word_count() -> None:
    """The whole fixed set: with segmentation at most one image changes its word count
    and none gains words; without it most of the merging images lose words."""
    cases = MERGING + NOT_MERGING
    images = [render_text(TEXTS[t], seed) for t, seed in cases]
    expected = [len(TEXTS[t].split()) for t, _ in cases]
    spaced = [len(r.text.split()) for r in get_reader("rapidocr").read(images)]
    # PP-OCRv4 alone, without segmentation: the merging the segmentation undoes (v6 writes
    # its own spaces, so the default reader would not show it), with the wheel's box
    # expansion (1.6), the setting the MERGING cases were found with
    baseline = "rapidocr?models=v4&spaces=0&unclip_ratio=1.6"
    merged = [len(r.text.split()) for r in get_reader(baseline).read(images)]
    assert sum(n != e for n, e in zip(spaced, expected, strict=True)) <= 1
    assert all(n <= e for n, e in zip(spaced, expected, strict=True))
    cut = len(MERGING)
    assert sum(m < e for m, e in zip(merged[:cut], expected[:cut], strict=True)) >= 8
    assert merged[cut:] == expected[cut:]


LONGTEXT = SHARED / "longtext-bench"


@pytest.mark.slow
def test_longtext_render_control_read_by_rapidocr_scores_at_least_095(tmp_path: Path) -> None:
    """The target: LongText EN text score of control:render with --ocr rapidocr."""
    import pandas as pd
    from typer.testing import CliRunner

    from glyphbench.cli.root import app

    data = LONGTEXT
    if not (data / "text_prompts.jsonl").is_file():
        pytest.skip(f"LongText-Bench data not found at {data}")
    args = ["run", "--suite", "longtext", "--data", str(data), "--models", "control:render"]
    args += ["--limit", "8", "--ocr", "rapidocr", "--out", str(tmp_path / "run"), "--no-progress"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = pd.read_parquet(tmp_path / "run" / "results.parquet")
    score = rows["longtext_matched"].sum() / rows["longtext_total"].sum()
    assert score >= 0.95, score
