"""The ICDAR 2015 loader on a fixture in the exact format (photo-like images drawn by us)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from glyphbench.calibration.calibrate_icdar import (
    calibrate_on_photos,
    load_icdar2015,
    missed_words,
    parse_gt_line,
    words_found,
)
from glyphbench.core.errors import InputError
from tests.helpers.paths import DATA

FIXTURE = DATA / "icdar2015_mini"


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
    for name in ("img_1.jpg", "img_2.jpg", "gt_img_2.txt"):
        shutil.copy(FIXTURE / name, tmp_path / name)
    with pytest.raises(InputError, match=r"img_1\.jpg: no matching label file for image number 1"):
        load_icdar2015(tmp_path)
    # --labels naming the wrong folder blames the folder, not the first image
    with pytest.raises(InputError, match="gone: label folder not found"):
        load_icdar2015(tmp_path, tmp_path / "gone")
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match=r"empty: no gt_img_N\.txt label files here"):
        load_icdar2015(tmp_path, tmp_path / "empty")


def test_words_found_counts_cared_words_among_tokens() -> None:
    assert words_found(["Coffee", "OPEN"], "COFFEE shop open") == 2
    assert words_found(["Coffee", "OPEN"], "Cofee") == 0


@pytest.mark.slow
def test_rapidocr_reads_the_fixture_photos() -> None:
    from glyphbench.readers import get_reader

    result = calibrate_on_photos(get_reader("rapidocr"), load_icdar2015(FIXTURE))
    assert result["images"] == 3 and result["words"] == 6
    assert result["word_recall"] >= 0.5


def _multiword_fixture(tmp_path: Path) -> Path:
    """img_1 of the fixture with its two words labelled as one transcription with a space."""
    tmp_path.mkdir(parents=True, exist_ok=True)
    shutil.copy(FIXTURE / "img_1.jpg", tmp_path / "img_1.jpg")
    lines = ["34,51,191,51,191,163,34,163,EXIT Parking", "300,170,309,170,309,178,300,178,###"]
    (tmp_path / "gt_img_1.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tmp_path


def test_a_multi_word_transcription_counts_as_its_words_or_as_do_not_care(tmp_path: Path) -> None:
    item = load_icdar2015(_multiword_fixture(tmp_path))[0]
    assert item.cared_words == ["EXIT", "Parking"]
    assert item.word_units("dontcare") == []
    assert parse_gt_line("0,0,9,0,9,9,0,9,Genaxis Theatre").units() == ["Genaxis", "Theatre"]


def test_missed_words_are_listed_per_image() -> None:
    assert missed_words(["Genaxis", "Theatre", "EXIT"], "genaxis exit") == ["Theatre"]


@pytest.mark.slow
def test_photos_command_writes_the_per_image_table(tmp_path: Path) -> None:
    import pandas as pd
    from typer.testing import CliRunner

    from glyphbench.cli.root import app

    images = _multiword_fixture(tmp_path / "photos")
    out = tmp_path / "per_image.csv"
    # The command's table is under test, not the reader: the wheel's box expansion reads both
    # words of this photo; the default (unclip_ratio=2.0, chosen on real text-to-image
    # outputs) reads "EIXIT Parking".
    reader = "rapidocr?unclip_ratio=1.6"
    args = ["readers", "photos", "--reader", reader, "--images", str(images)]
    result = CliRunner().invoke(app, [*args, "--out", str(out), "--detail"])
    assert result.exit_code == 0, result.output
    table = pd.read_csv(out)
    assert table.loc[0, "image"] == "img_1.jpg" and table.loc[0, "words"] == 2
    assert table.loc[0, "found"] == 2 and pd.isna(table.loc[0, "missed"])
    assert "img_1.jpg\t2/2 words" in result.output
    skipped = CliRunner().invoke(app, [*args, "--multiword", "dontcare"])
    assert skipped.exit_code == 0 and '"words": 0' in skipped.output
    bad = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "x.txt")])
    assert isinstance(bad.exception, InputError) and "use .csv" in str(bad.exception)
    assert not (tmp_path / "x.txt").exists()
