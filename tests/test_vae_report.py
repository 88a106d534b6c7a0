"""vae_eval.report on hand-made result tables (no OCR, no models)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from vae_eval.report import (
    first_size_below,
    page_context,
    reader_calibration,
    reader_limits,
    summary_table,
    survival_threshold,
    wr_pivot,
    write_report,
)


def _rows(
    vae: str, wr_by_size: dict[int, float], ceiling: float = 100.0
) -> list[dict[str, object]]:
    return [
        {
            "vae": vae,
            "image_id": f"img{size}",
            "image_index": index,
            "font_size": size,
            "char_class": "lower" if index % 2 else "upper",
            "truth": "a b",
            "truth_source": "metadata",
            "ocr_original": "a b",
            "ocr_reconstruction": "a",
            "wr_original": ceiling,
            "pa_original": ceiling,
            "wr": wr,
            "pa": wr,
            "wr_loss": ceiling - wr,
            "pa_loss": ceiling - wr,
            "psnr": 30.0,
            "ssim": 0.9,
            "original_path": "",
            "reconstruction_path": "",
            "ocr_engine": "easyocr",
            "ocr_version": "test",
            "error": "",
        }
        for index, (size, wr) in enumerate(wr_by_size.items())
    ]


def test_survival_threshold_worked_example() -> None:
    # The docstring's example: 48 and 32 pass, 20 fails, so 10 passing again does not count.
    table = pd.DataFrame(
        _rows("vae", {48: 100.0, 32: 95.0, 20: 60.0, 10: 90.0})
        + _rows("good", {48: 100.0, 32: 100.0, 20: 100.0, 10: 95.0})
        + _rows("bad", {48: 50.0, 32: 0.0, 20: 0.0, 10: 0.0})
    )
    assert survival_threshold(table) == {"vae": 32.0, "good": 10.0, "bad": None}


def test_survival_threshold_is_relative_to_the_ceiling() -> None:
    # WR 50 where the OCR itself only reaches 50 is full survival
    table = pd.DataFrame(_rows("vae", {48: 50.0, 20: 50.0}, ceiling=50.0))
    assert survival_threshold(table) == {"vae": 20.0}


def test_summary_skips_failed_rows_and_counts_them() -> None:
    rows = _rows("vae", {48: 100.0, 32: 50.0})
    rows[1].update(error="codec: blank (constant) reconstruction", wr=math.nan, pa=math.nan)
    summary = summary_table(pd.DataFrame(rows))
    assert summary.loc["vae", "failed"] == 1
    assert summary.loc["vae", "images"] == 2
    assert summary.loc["vae", "WR"] == pytest.approx(100.0)


def test_pivot_has_ceiling_row_and_sizes_in_numeric_order() -> None:
    # issue 15: font sizes run smallest first, as numbers (9 before 10 before 100)
    table = pd.DataFrame(
        _rows("a", {10: 20.0, 100: 95.0, 9: 5.0, 48: 90.0}) + _rows("b", {10: 0.0, 48: 40.0})
    )
    pivot = wr_pivot(table, ["font_size"])
    assert list(pivot.index) == ["OCR ceiling (original)", "a", "b"]
    assert list(pivot.columns) == [9, 10, 48, 100]
    assert pivot.loc["b", 48] == pytest.approx(40.0)


def test_write_report_files(tmp_path: Path) -> None:
    rows = _rows("jpeg?quality=5", {48: 100.0, 14: 20.0})
    rows[0]["truth_source"] = "ocr_original"
    page = write_report(pd.DataFrame(rows), tmp_path, notes=["a note & more"])
    text = page.read_text(encoding="utf-8")
    assert (tmp_path / "report" / "wr_vs_font_size.png").stat().st_size > 1000
    assert "jpeg?quality=5" in text and "a note &amp; more" in text
    assert "no ground truth" in text  # the report says when OCR of the original is the reference
    assert "Text-survival threshold" in text


def test_page_shows_a_hostile_codec_name_and_note_as_text(tmp_path: Path) -> None:
    hostile = '<script>alert("x")</script>'
    rows = _rows(hostile, {48: 100.0, 14: 20.0})
    rows[0]["ocr_reconstruction"] = hostile
    page = write_report(pd.DataFrame(rows), tmp_path, notes=[hostile]).read_text()
    assert "<script" not in page  # the page has no scripts: any would be injected
    escaped = "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;"
    # summary, threshold and pivot rows, the note, a pair's heading and caption
    assert page.count(escaped) >= 6


def _class_rows() -> list[dict[str, object]]:
    """Two classes: the reader reads 'lower' (ceiling 100) but not 'accented' (ceiling 0)."""
    rows = []
    for index, (char_class, ceiling, wr) in enumerate(
        [("lower", 100.0, 80.0), ("accented", 0.0, 0.0)]
    ):
        row = _rows("taef2", {48: wr}, ceiling=ceiling)[0]
        row.update(image_id=f"i{index}", image_index=index, char_class=char_class)
        rows.append(row)
    return rows


def test_reader_limits_are_marked_not_counted_as_codec_loss(tmp_path: Path) -> None:
    table = pd.DataFrame(_class_rows())
    assert reader_limits(table) == {"char_class": {"accented": 0.0}}
    page = write_report(table, tmp_path).read_text(encoding="utf-8")
    assert "accented (reader cannot read this)" in page  # the pivot's column header
    assert "character class accented: the reader&#39;s own ceiling" in page
    assert "lower (reader cannot read this)" not in page


def test_reader_name_version_and_calibration_slot(tmp_path: Path) -> None:
    table = pd.DataFrame(_class_rows())
    assert reader_calibration(table) is None  # the slot the readers' calibration fills
    context = page_context(table, tmp_path, tmp_path)
    assert context["reader"] == {"name": "easyocr", "version": "test"}
    assert context["reader_calibration"] is None
    page = write_report(table, tmp_path).read_text(encoding="utf-8")
    assert "read with <b>easyocr</b> (test)" in page
    assert "Reader calibration: not available yet." in page


def test_text_region_figures_are_shown_or_na(tmp_path: Path) -> None:
    with_boxes = _rows("taef2", {48: 90.0, 20: 50.0})
    for row in with_boxes:
        row.update(psnr_text=21.5, ssim_text=0.8125)
    summary = summary_table(pd.DataFrame(with_boxes))
    assert summary.loc["taef2", "PSNR text"] == pytest.approx(21.5)
    page = write_report(pd.DataFrame(with_boxes), tmp_path / "a").read_text(encoding="utf-8")
    assert "PSNR text" in page and "21.5" in page and "0.812" in page
    without = _rows("jpeg", {48: 90.0})  # a folder set without boxes: the columns are NaN
    without[0].update(psnr_text=math.nan, ssim_text=math.nan)
    page = write_report(pd.DataFrame(without), tmp_path / "b").read_text(encoding="utf-8")
    assert page.count('<td class="na">n/a</td>') == 2


def test_first_size_below_the_floor() -> None:
    table = pd.DataFrame(
        _rows("taef2", {48: 79.2, 32: 77.8, 20: 70.8, 14: 59.7, 10: 8.3})
        + _rows("identity", {48: 80.0, 10: 60.0})
    )
    assert first_size_below(table) == {"taef2": 10.0, "identity": None}
