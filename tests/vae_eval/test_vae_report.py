"""glyphbench.vae_eval.report on hand-made result tables (no OCR, no models)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pandas as pd
import pytest

from glyphbench.vae_eval.analyse import (
    CEILING_LABEL,
    MIN_IMAGES_PER_SIZE,
    first_size_below,
    reader_limits,
    size_evidence,
    summary_bounds,
    summary_table,
    survival_threshold,
    too_thin,
    wr_pivot,
)
from glyphbench.vae_eval.report import page_context, reader_calibration, write_report
from tests.helpers.vae_report_fixtures import vae_rows


def test_survival_threshold_worked_example() -> None:
    # The docstring's example: 48 and 32 pass, 20 fails, so 10 passing again does not count.
    table = pd.DataFrame(
        vae_rows("vae", {48: 100.0, 32: 95.0, 20: 60.0, 10: 90.0})
        + vae_rows("good", {48: 100.0, 32: 100.0, 20: 100.0, 10: 95.0})
        + vae_rows("bad", {48: 50.0, 32: 0.0, 20: 0.0, 10: 0.0})
    )
    assert survival_threshold(table) == {"vae": 32.0, "good": 10.0, "bad": None}


def test_survival_threshold_is_relative_to_the_ceiling() -> None:
    # WR 50 where the OCR itself only reaches 50 is full survival
    table = pd.DataFrame(vae_rows("vae", {48: 50.0, 20: 50.0}, ceiling=50.0))
    assert survival_threshold(table) == {"vae": 20.0}


def test_summary_skips_failed_rows_and_counts_them() -> None:
    rows = vae_rows("vae", {48: 100.0, 32: 50.0})
    rows[1].update(error="codec: blank (constant) reconstruction", wr=math.nan, pa=math.nan)
    summary = summary_table(pd.DataFrame(rows))
    assert summary.loc["vae", "failed"] == 1
    assert summary.loc["vae", "images"] == 2
    assert summary.loc["vae", "WR"] == pytest.approx(100.0)


def test_pivot_has_ceiling_row_and_sizes_in_numeric_order() -> None:
    # font sizes run smallest first, as numbers (9 before 10 before 100)
    table = pd.DataFrame(
        vae_rows("a", {10: 20.0, 100: 95.0, 9: 5.0, 48: 90.0}) + vae_rows("b", {10: 0.0, 48: 40.0})
    )
    pivot = wr_pivot(table, ["font_size"])
    assert list(pivot.index) == ["OCR ceiling (original)", "a", "b"]
    assert list(pivot.columns) == [9, 10, 48, 100]
    assert pivot.loc["b", 48] == pytest.approx(40.0)


def test_write_report_files(tmp_path: Path) -> None:
    rows = vae_rows("jpeg?quality=5", {48: 100.0, 14: 20.0})
    rows[0]["truth_source"] = "ocr_original"
    page = write_report(pd.DataFrame(rows), tmp_path, notes=["a note & more"])
    text = page.read_text(encoding="utf-8")
    assert (tmp_path / "report" / "wr_vs_font_size.png").stat().st_size > 1000
    assert "jpeg?quality=5" in text and "a note &amp; more" in text
    assert "no ground truth" in text  # the report says when OCR of the original is the reference
    assert "Text-survival threshold" in text


def test_page_shows_a_hostile_codec_name_and_note_as_text(tmp_path: Path) -> None:
    hostile = '<script>alert("x")</script>'
    rows = vae_rows(hostile, {48: 100.0, 14: 20.0})
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
        row = vae_rows("taef2", {48: wr}, ceiling=ceiling)[0]
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


@pytest.mark.slow
def test_reader_name_version_and_calibration(tmp_path: Path) -> None:
    table = pd.DataFrame(_class_rows())
    calibration = reader_calibration(table)
    assert calibration is not None
    ceiling = summary_table(table).iloc[0]["WR"]
    assert calibration["words read on the original images (WR ceiling)"] == f"{ceiling:.1f}"
    assert "readers calibrate --reader easyocr" in calibration["full card"]
    context = page_context(table, tmp_path, tmp_path)
    assert context["reader"] == {"name": "easyocr", "version": "test"}
    assert context["reader_calibration"] == calibration
    page = write_report(table, tmp_path).read_text(encoding="utf-8")
    assert "read with <b>easyocr</b> (test)" in page
    assert "not available yet" not in page and "WR ceiling" in page


@pytest.mark.slow
def test_text_region_figures_are_shown_or_na(tmp_path: Path) -> None:
    with_boxes = vae_rows("taef2", {48: 90.0, 20: 50.0})
    for row in with_boxes:
        row.update(psnr_text=21.5, ssim_text=0.8125)
    summary = summary_table(pd.DataFrame(with_boxes))
    assert summary.loc["taef2", "PSNR text"] == pytest.approx(21.5)
    page = write_report(pd.DataFrame(with_boxes), tmp_path / "a").read_text(encoding="utf-8")
    assert "PSNR text" in page and "21.5" in page and "0.812" in page
    without = vae_rows("jpeg", {48: 90.0})  # a folder set without boxes: the columns are NaN
    without[0].update(psnr_text=math.nan, ssim_text=math.nan)
    page = write_report(pd.DataFrame(without), tmp_path / "b").read_text(encoding="utf-8")
    jpeg_row = re.search(r"<th scope=\"row\">jpeg</th>.*?</tr>", page, re.S)
    assert jpeg_row is not None and jpeg_row.group(0).count('<td class="na">n/a</td>') == 2


def test_first_size_below_the_floor() -> None:
    table = pd.DataFrame(
        vae_rows("taef2", {48: 79.2, 32: 77.8, 20: 70.8, 14: 59.7, 10: 8.3})
        + vae_rows("identity", {48: 80.0, 10: 60.0})
    )
    assert first_size_below(table) == {"taef2": 10.0, "identity": None}


# ---------------------------------------------------------------------------


def _per_size(vae: str, per_size: int, wr: dict[int, list[float]]) -> list[dict[str, object]]:
    """``per_size`` images at each size, WR cycling through ``wr[size]``; the same image ids
    for every codec (as a real run: every codec reads the same images)."""
    rows: list[dict[str, object]] = []
    for size, values in wr.items():
        for k in range(per_size):
            (row,) = vae_rows(vae, {size: values[k % len(values)]})
            row.update(image_id=f"s{size}-{k}", image_index=len(rows))
            rows.append(row)
    return rows


@pytest.mark.slow
def test_the_ceiling_is_computed_and_shown_once(tmp_path: Path) -> None:
    sizes = {48: [100.0, 90.0], 20: [80.0, 60.0]}
    table = pd.DataFrame(
        _per_size("identity", 6, sizes)
        + _per_size("taef2", 6, {48: [90.0, 80.0], 20: [50.0, 40.0]})
        + _per_size("resize x8", 6, {48: [0.0], 20: [0.0]})
    )
    table["wr_original"] = [50.0 + (i % 7) * 5 for i in range(len(table) // 3)] * 3
    summary = summary_table(table)
    assert list(summary.index) == [CEILING_LABEL, "identity", "taef2", "resize x8"]
    assert "WR ceiling" not in summary.columns and "PA ceiling" not in summary.columns
    distinct = table.drop_duplicates("image_id")
    assert summary.loc[CEILING_LABEL, "WR"] == pytest.approx(distinct["wr_original"].mean())
    assert summary.loc[CEILING_LABEL, "images"] == 12
    lower, upper = summary_bounds(table, summary)
    assert lower.loc[CEILING_LABEL, "WR"] < summary.loc[CEILING_LABEL, "WR"]
    assert upper.loc[CEILING_LABEL, "WR"] > summary.loc[CEILING_LABEL, "WR"]
    page = write_report(table, tmp_path).read_text(encoding="utf-8")
    summary_html = re.search(r'<section id="summary">.*?</section>', page, re.S)
    assert summary_html is not None
    assert summary_html.group(0).count(CEILING_LABEL) == 1


@pytest.mark.slow
def test_threshold_is_stated_with_n_and_interval_or_too_thin(tmp_path: Path) -> None:
    sizes = {48: [100.0, 90.0, 95.0], 32: [90.0, 100.0], 20: [40.0, 60.0]}
    enough = pd.DataFrame(_per_size("taef2", MIN_IMAGES_PER_SIZE, sizes))
    evidence = size_evidence(enough)["taef2"]
    assert [e.size for e in evidence] == [48, 32, 20]
    assert {e.n for e in evidence} == {MIN_IMAGES_PER_SIZE} and too_thin(evidence) is None
    at_32 = evidence[1]
    assert at_32.lo < at_32.wr < at_32.hi  # an interval per size and codec
    page = write_report(enough, tmp_path / "enough").read_text(encoding="utf-8")
    section = re.search(r'<section id="threshold">.*?</section>', page, re.S)
    assert section is not None
    text = section.group(0)
    assert "<td>32 px</td>" in text  # the threshold, stated
    assert f"32 px: {at_32.wr:.1f} [{at_32.lo:.1f}, {at_32.hi:.1f}], n = 5" in text
    assert "evidence too thin:" not in text
    thin = pd.DataFrame(_per_size("taef2", MIN_IMAGES_PER_SIZE - 1, sizes))
    page = write_report(thin, tmp_path / "thin").read_text(encoding="utf-8")
    section = re.search(r'<section id="threshold">.*?</section>', page, re.S)
    assert section is not None
    text = section.group(0)
    assert "evidence too thin: n = 4 per font size (48, 32, 20 px), fewer than 5" in text
    assert "<td>32 px</td>" not in text and "n = 4" in text


def test_summary_columns_and_aggregates_come_from_the_metric_table() -> None:
    """A record's short label names its column, its aggregate computes the value."""
    from dataclasses import replace

    from glyphbench.scoring.table import METRICS, Derived

    table = pd.DataFrame(vae_rows("vae", {48: 100.0, 32: 50.0}))
    before = summary_table(table)
    assert list(before.columns[2:-2]) == [
        "WR",
        "WR loss",
        "PA",
        "PSNR",
        "SSIM",
        "PSNR text",
        "SSIM text",
    ]
    assert before.loc["vae", "PA"] == 75.0  # the mean of the per-image PA
    pa = METRICS.get("pa", "vae")
    halved = Derived(("wr",), lambda wr: wr / 2)
    METRICS.add(replace(pa, short="Partial", aggregate=halved), replace=True)
    try:
        after = summary_table(table)
    finally:
        METRICS.add(pa, replace=True, place="glyphbench.scoring.vae")
    assert "PA" not in after.columns and after.loc["vae", "Partial"] == 37.5
    assert summary_table(table).loc["vae", "PA"] == 75.0


@pytest.mark.slow
def test_labels_decimals_and_captions_follow_the_metric_table(tmp_path: Path) -> None:
    """WR's label, short label and decimals, SSIM's decimals and the text-region
    short labels reach every table, caption, note and axis of the page (records replaced)."""
    from dataclasses import replace

    from glyphbench.scoring.table import METRICS
    from glyphbench.vae_eval.report import axis_label, digits, not_applicable, summary_caption

    rows = _per_size("taef2", MIN_IMAGES_PER_SIZE, {48: [100.0, 90.0], 20: [40.0, 60.0]})
    for row in rows:
        row.update(psnr_text=math.nan, ssim_text=math.nan, truth_source="ocr_original")
    table = pd.DataFrame(rows)
    wr, ssim, psnr_text = (METRICS.get(name, "vae") for name in ("wr", "ssim", "psnr_text"))
    try:
        METRICS.add(replace(wr, label="Word keeping (Kept)", short="Kept", digits=2), replace=True)
        METRICS.add(replace(ssim, digits=1), replace=True)
        METRICS.add(replace(psnr_text, short="Text PSNR"), replace=True)
        assert axis_label(METRICS.get("wr", "vae")) == "word keeping Kept (%)"
        assert summary_caption().startswith("VAE text survival per codec (Kept, PA in %")
        assert digits()["Kept loss"] == 2 and digits()["SSIM"] == 1
        assert not_applicable() == ("Text PSNR", "SSIM text")
        page = write_report(table, tmp_path).read_text(encoding="utf-8")
        caption = (tmp_path / "report" / "tables" / "wr_by_font_size.tex").read_text()
        summary = summary_table(table)
    finally:
        for record in (wr, ssim, psnr_text):
            METRICS.add(record, replace=True, place="glyphbench.scoring.vae")
    assert list(summary.columns[2:5]) == ["Kept", "Kept loss", "PA"]
    assert "Text PSNR" in summary.columns
    text = re.sub(r"<[^>]+>", " ", page)
    for shown in (
        "Mean Kept by codec x font size",
        "first size below 50% Kept",
        "Kept per size",
        "Kept vs font size",
        "words read on the original images (Kept ceiling)",
        "Kept measures agreement with it",
        "90.00",  # the ceiling's mean with WR's two decimals
        "0.9 ",  # SSIM with one decimal
    ):
        assert shown in text, shown
    assert "Mean WR" not in text and "WR per size" not in text
    assert "n/a" in text  # the renamed text-region column still reads n/a without boxes
    assert r"\caption{Kept (\%) by font\_size}" in caption
    default = write_report(table, tmp_path / "default").read_text(encoding="utf-8")
    assert "Mean WR by codec x font size" in default and "Kept" not in default
