"""The ICDAR 2015 loader on a fixture in the exact format (photo-like images drawn by us)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from bench.errors import InputError
from bench.readers.icdar import calibrate_on_photos, load_icdar2015, parse_gt_line, words_found

FIXTURE = Path(__file__).parent / "data" / "icdar2015_mini"


def test_fixture_loads_with_do_not_care_regions() -> None:
    items = load_icdar2015(FIXTURE)
    assert [item.image_path.name for item in items] == ["img_1.jpg", "img_2.jpg", "img_3.jpg"]
    assert items[1].cared_words == ["Coffee", "OPEN"]
    assert [word.cared for word in items[1].words] == [True, True, False]
    assert items[1].words[1].points[0] == (186, 136)  # a rotated word keeps its 4 corners


def test_bad_lines_and_unmatched_files_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="8 coordinates"):
        parse_gt_line("1,2,3,EXIT")
    with pytest.raises(InputError, match="numbers"):
        parse_gt_line("a,2,3,4,5,6,7,8,EXIT")
    shutil.copy(FIXTURE / "img_1.jpg", tmp_path / "img_1.jpg")
    with pytest.raises(InputError, match="no matching label file"):
        load_icdar2015(tmp_path)


def test_words_found_counts_cared_words_among_tokens() -> None:
    assert words_found(["Coffee", "OPEN"], "COFFEE shop open") == 2
    assert words_found(["Coffee", "OPEN"], "Cofee") == 0


@pytest.mark.slow
def test_rapidocr_reads_the_fixture_photos() -> None:
    from bench.readers import get_reader

    result = calibrate_on_photos(get_reader("rapidocr"), load_icdar2015(FIXTURE))
    assert result["images"] == 3 and result["words"] == 6
    assert result["word_recall"] >= 0.5
