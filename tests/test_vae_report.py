"""vae_eval.report on hand-made result tables (no OCR, no models)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from vae_eval.report import summary_table, survival_threshold, wr_pivot, write_report


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


def test_pivot_has_ceiling_row_and_sizes_descending() -> None:
    table = pd.DataFrame(_rows("a", {10: 20.0, 48: 90.0}) + _rows("b", {10: 0.0, 48: 40.0}))
    pivot = wr_pivot(table, ["font_size"])
    assert list(pivot.index) == ["OCR ceiling (original)", "a", "b"]
    assert list(pivot.columns) == [48, 10]
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
