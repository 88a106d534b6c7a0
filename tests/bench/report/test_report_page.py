"""The page defines its metrics, frames blank images, and a
per-image CSV sits beside the Parquet; the VAE figure shows the ceiling under identity."""

from __future__ import annotations

import csv
from pathlib import Path

import pandas as pd
import pytest
from markupsafe import escape

from glyphbench.report.build import write_report
from glyphbench.scoring.table import METRICS
from tests.helpers.report_fixtures import build_run


@pytest.mark.slow
def test_glossary_per_image_csv_and_plain_tiles(tmp_path: Path) -> None:
    models = {"toy": 0.1, "control:render": 0.0, "control:blank": 1.0}
    run = build_run(tmp_path / "run", n_prompts=8, models=models, n_errors=0)
    index = write_report([run], tmp_path / "report", n_boot=50, by=["prompt_type"])
    html = index.read_text(encoding="utf-8")
    glossary = html[html.index('id="glossary"') : html.index('id="about"')]
    for name in ("ned", "anls", "algorithm1", "word_f1"):
        record = METRICS.get(name)
        assert record.label in glossary and str(escape(record.doc[:40])) in glossary
    with (tmp_path / "report" / "tables" / "per_image.csv").open(encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    results = pd.read_parquet(run / "results.parquet")
    assert len(rows) == len(results)
    assert {"model", "prompt_id", "text", "ocr_text", "ned", "image_path"} <= set(rows[0])
    assert 'href="tables/per_image.csv"' in html
    gallery = html[html.index('id="gallery"') :]
    assert 'class="plain"' in gallery and "nothing drawn (the blank control)" in gallery
    toy = gallery[gallery.index("<h3>toy</h3>") :]
    assert 'class="plain"' not in toy.split("<h3>")[1]  # a drawn image is not framed


def test_vae_figure_says_when_a_codec_is_the_ceiling() -> None:
    from glyphbench.vae_eval.report import wr_figure
    from tests.helpers.vae_report_fixtures import vae_rows

    sizes = {48: 100.0, 32: 90.0, 20: 70.0}
    identity = vae_rows("identity", sizes, ceiling=0.0)
    for row in identity:  # identity reads exactly what the original reads
        row["wr_original"] = row["wr"]
    lossy = vae_rows("taef2", {s: v - 20 for s, v in sizes.items()})
    for row, ref in zip(lossy, identity, strict=True):
        row["wr_original"] = ref["wr"]
    figure = wr_figure(pd.DataFrame(identity + lossy))
    labels = [text.get_text() for text in figure.axes[0].get_legend().get_texts()]
    assert labels == ["OCR ceiling (original)", "identity (= OCR ceiling)", "taef2"]
    ceiling = figure.axes[0].get_lines()[0]
    assert ceiling.get_linewidth() > 3 and ceiling.get_zorder() < 3  # a band under the codecs


def test_per_image_csv_neutralises_spreadsheet_formulas(tmp_path: Path) -> None:
    from glyphbench.report.analyse import Settings
    from glyphbench.report.build import write_per_image

    frame = pd.DataFrame(
        {
            "model": ["=cmd|' /C calc'!A0", "fine"],
            "prompt_id": ["p1", "p2"],
            "text": ["@SUM(1)", "-1 apple"],
            "ocr_text": ["ok", "+x"],
            "ned": [-0.5, 1.0],
        }
    )
    write_per_image(frame, tmp_path / "per_image.csv", Settings(metrics=("ned",)))
    back = pd.read_csv(tmp_path / "per_image.csv")
    assert back["model"].tolist() == ["'=cmd|' /C calc'!A0", "fine"]
    assert back["text"].tolist() == ["'@SUM(1)", "'-1 apple"]
    assert back["ocr_text"].tolist() == ["ok", "'+x"]
    assert back["ned"].tolist() == [-0.5, 1.0]  # numbers stay numbers


def test_slice_tables_keep_labels_a_spreadsheet_would_run_and_carriage_returns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Slice labels are categories: a label made inert ("'-neon") was no category and became
    an empty cell; a bare "\\r" in a label split the row in every CSV reader."""
    import csv

    from glyphbench.report.build import write_report
    from tests.helpers import report_fixtures

    texts = ["-neon", "+chalk", "@me", "two\rlines", "plain"]
    monkeypatch.setattr(report_fixtures, "WORDS", texts)
    run = report_fixtures.build_run(tmp_path / "run", n_prompts=10, with_images=False)
    write_report([run], tmp_path / "report", by=["text"], n_boot=20)
    with open(tmp_path / "report" / "tables" / "by_text.csv", encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    assert {row["text"] for row in rows} == {"'-neon", "'+chalk", "'@me", "two\rlines", "plain"}
    assert all(None not in row for row in rows)  # no row split into extra fields
