"""The VAE report as a reader sees it: intervals, order, warnings, failures, offline."""

from __future__ import annotations

import math
import re
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from glyphbench.vae_eval.analyse import (
    MIN_SIZES,
    failure_banner,
    mean_bounds,
    summary_bounds,
    summary_table,
    threshold_warnings,
)
from glyphbench.vae_eval.report import wr_figure, write_report
from tests.helpers.vae_report_fixtures import vae_rows


def _spread_rows(vae: str, sizes: list[int]) -> list[dict[str, object]]:
    """Three images per size with different WR, so every mean has a non-trivial interval."""
    rows: list[dict[str, object]] = []
    for k in range(3):
        for row in vae_rows(vae, {size: 30.0 * k + size % 7 for size in sizes}):
            row.update(image_id=f"{row['image_id']}-{k}", image_index=len(rows))
            rows.append(row)
    return rows


def test_summary_intervals_bracket_the_mean_and_come_from_images() -> None:
    table = pd.DataFrame(_spread_rows("taef2", [10, 20, 48]))
    summary = summary_table(table)
    lower, upper = summary_bounds(table, summary)
    for column in ("WR", "PA", "WR loss"):
        mean = summary.loc["taef2", column]
        assert lower.loc["taef2", column] < mean < upper.loc["taef2", column]
    assert math.isnan(lower.loc["taef2", "images"])  # counts get no interval
    # the same seed and input give the same interval
    assert mean_bounds([1.0, 5.0, 9.0], ("k",)) == mean_bounds([1.0, 5.0, 9.0], ("k",))


def test_page_shows_intervals_definitions_and_sizes_in_numeric_order(tmp_path: Path) -> None:
    table = pd.DataFrame(_spread_rows("taef2", [100, 9, 48, 10]))
    page = write_report(table, tmp_path).read_text(encoding="utf-8")
    assert page.count('<span class="ci">[') >= 2 * 4 + 5  # summary + every font-size cell
    assert "<dt>WR</dt>" in page and "<dt>PA</dt>" in page and "Word retention" in page
    header = re.search(r"Mean WR by codec x font size</h2>.*?</thead>", page, re.S)
    assert header is not None
    sizes = [int(s) for s in re.findall(r"<th scope=\"col\">(\d+)</th>", header.group(0))]
    assert sizes == [9, 10, 48, 100]
    assert "images (n)</th><td>3</td>" in page.replace("\n", "")  # a bin's sample size
    assert "NaN" not in page and "nan" not in page


def test_legend_does_not_cover_the_data() -> None:
    table = pd.DataFrame(
        vae_rows("a", {10: 0.0, 20: 50.0, 48: 100.0}) + vae_rows("b", {10: 100.0, 20: 5.0, 48: 0.0})
    )
    figure = wr_figure(table)
    figure.canvas.draw()
    renderer = figure.canvas.get_renderer()
    axes = figure.axes[0]
    legend = axes.get_legend().get_window_extent(renderer)
    assert not legend.overlaps(axes.get_window_extent(renderer))


@pytest.mark.slow
def test_threshold_on_too_few_sizes_is_warned(tmp_path: Path) -> None:
    few = pd.DataFrame(vae_rows("taef2", {48: 100.0, 32: 90.0}))
    assert MIN_SIZES == 3
    assert threshold_warnings(few) and "2 font sizes (32, 48 px)" in threshold_warnings(few)[0]
    page = write_report(few, tmp_path / "few").read_text(encoding="utf-8")
    assert "threshold-warning" in page
    enough = pd.DataFrame(vae_rows("taef2", {48: 100.0, 32: 90.0, 20: 80.0}))
    assert threshold_warnings(enough) == []
    page = write_report(enough, tmp_path / "enough").read_text(encoding="utf-8")
    assert "threshold-warning" not in page


@pytest.mark.slow
def test_failed_rows_get_a_banner_with_the_first_error(tmp_path: Path) -> None:
    rows = vae_rows("taef2", {48: 100.0, 32: 90.0, 20: 80.0})
    rows[1].update(error="codec: out of memory", wr=math.nan, pa=math.nan)
    banner = failure_banner(pd.DataFrame(rows))
    assert banner == {"failed": 1, "rows": 3, "every": False, "first": "codec: out of memory"}
    page = write_report(pd.DataFrame(rows), tmp_path / "some").read_text(encoding="utf-8")
    assert 'id="failures"' in page and "1 of 3 rows failed" in page
    assert "codec: out of memory" in page
    for row in rows:
        row.update(error="codec: hub unreachable", wr=math.nan, pa=math.nan)
    page = write_report(pd.DataFrame(rows), tmp_path / "all").read_text(encoding="utf-8")
    assert "Every row failed (3 of 3)" in page
    assert "Mean WR by" not in page  # no empty tables under the banner
    ok = write_report(pd.DataFrame(vae_rows("taef2", {48: 100.0})), tmp_path / "ok")
    assert 'id="failures"' not in ok.read_text(encoding="utf-8")


@pytest.fixture
def unreachable_hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The hub endpoint is a closed local port: connections are refused at once."""
    from huggingface_hub import constants

    from glyphbench.core import hub

    monkeypatch.setattr(constants, "ENDPOINT", "http://127.0.0.1:9")
    hub._connects.cache_clear()
    yield
    hub._connects.cache_clear()


@pytest.mark.slow  # about 10 s: imports diffusers and reads two images with tesseract
def test_unreachable_hub_fails_fast_every_row_fails_and_exit_is_not_zero(
    tmp_path: Path, unreachable_hub: None, monkeypatch: pytest.MonkeyPatch
) -> None:

    from glyphbench.cli.root import app

    out = tmp_path / "out"
    args = ["vae-eval", "--vae", "diffusers:nobody/no-such-vae", "--ocr", "tesseract"]
    args += ["--images", "default?size=96", "--limit", "2", "--out", str(out)]
    waits: list[float] = []  # every pause asked for, such as a retry's back-off
    monkeypatch.setattr(time, "sleep", waits.append)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    assert not [wait for wait in waits if wait >= 0.5], waits  # no retry against the hub
    page = (out / "report" / "index.html").read_text(encoding="utf-8")
    assert "Every row failed (2 of 2)" in page
    assert "unreachable" in page and "not in the local cache" in page


def test_codecs_get_short_labels_tables_and_an_svg(tmp_path: Path) -> None:
    """A codec was labelled by the absolute path of its weights, and the report
    wrote no CSV, LaTeX or SVG."""
    spec = "taesd:/very/long/absolute/path/to/shared/taef2"
    table = pd.DataFrame(_spread_rows(spec, [10, 20, 48]))
    page = write_report(table, tmp_path).read_text(encoding="utf-8")
    assert "<code>taesd:taef2</code> = <code>" + spec in page  # the legend of labels
    assert page.count(spec) == 1  # everywhere else, the short label
    folder = tmp_path / "report"
    assert (folder / "wr_vs_font_size.svg").read_text(encoding="utf-8").lstrip().startswith("<?xml")
    summary = pd.read_csv(folder / "tables" / "summary.csv")
    assert list(summary["vae"]) == ["OCR ceiling (original)", "taesd:taef2"]
    assert (folder / "tables" / "wr_by_font_size.tex").read_text(encoding="utf-8").count(r"\\") >= 2
    assert "not available yet" not in page and "readers calibrate --reader" in page
