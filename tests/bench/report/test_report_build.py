"""The whole report: files written, numbers consistent, CLI, several runs, real browser."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from glyphbench.core.errors import InputError
from glyphbench.report import load_runs, write_report
from glyphbench.report.stats import summarize
from tests.helpers.browser import chromium_driver, needs_chromium
from tests.helpers.report_fixtures import build_run


@pytest.fixture(scope="module")
def report_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_run(tmp_path_factory.mktemp("build") / "run_a", n_prompts=24)


@pytest.fixture(scope="module")
def built_report(report_run: Path) -> Path:
    return write_report([report_run], n_boot=300, seed=0)


@pytest.mark.slow
def test_report_writes_page_tables_figures_and_gallery(
    report_run: Path, built_report: Path
) -> None:
    out = built_report.parent
    assert built_report == report_run / "report" / "index.html"
    meta = json.loads((out / "report.json").read_text())
    assert (meta["n_boot"], meta["seed"]) == (300, 0)
    assert meta["by"] == ["prompt_type", "group", "cefr", "char_length", "word_count", "laion_freq"]
    assert meta["control_sanity_passed"] is not None
    assert (
        meta["control_sanity_overall_passed"] is True
    )  # the fixture's controls are well ordered overall
    for name in (
        "summary",
        "ranking",
        "comparisons",
        "controls",
        "ocr_ceiling",
        "peer_anytext",
        "peer_mario",
        "by_prompt_type",
        "by_char_length",
    ):
        for suffix in ("csv", "md", "tex"):
            assert (out / "tables" / f"{name}.{suffix}").stat().st_size > 0, (name, suffix)
    # The heatmap's column: group unless its groups are too small, here cefr's.
    heatmaps = [p.stem for p in (out / "figures").glob("heatmap_*.png")]
    assert len(heatmaps) == 1
    for stem in ("by_prompt_type", "by_group", "score_vs_length", *heatmaps, "distributions"):
        for suffix in ("png", "svg"):
            assert (out / "figures" / f"{stem}.{suffix}").stat().st_size > 1000, (stem, suffix)
    thumbs = list((out / "gallery").glob("*.jpg"))
    # 6 models x 3 prompt types x (2 best + 2 worst); every row has an image.
    assert len(thumbs) == 6 * 3 * 4
    html = built_report.read_text(encoding="utf-8")
    for model in (
        "toy-good",
        "toy-bad",
        "control:render",
        "control:blank",
        "control:typo?rate=0.1",
    ):
        assert model in html
    assert "http://" not in html and "https://" not in html  # nothing fetched from the internet
    assert "\\begin{tabular}" in (out / "tables" / "summary.tex").read_text()
    assert (out / "tables" / "summary.md").read_text().startswith("| Model | Control | n |")


def test_report_numbers_are_the_slice_statistics(report_run: Path, built_report: Path) -> None:
    written = pd.read_csv(built_report.parent / "tables" / "by_prompt_type.csv")
    expected = summarize(load_runs([report_run]), ["prompt_type"], n_boot=300, seed=0)
    merged = written.merge(
        expected.astype({"prompt_type": str}), on=["model", "prompt_type"], suffixes=("", "_x")
    )
    assert len(merged) == len(expected) == 18
    for column in ("n", "n_errors", "ned", "ned_lo", "ned_hi", "algorithm1", "exact_match_hi"):
        assert merged[column].to_numpy() == pytest.approx(merged[f"{column}_x"].to_numpy()), column
    summary = pd.read_csv(built_report.parent / "tables" / "summary.csv").set_index("model")
    assert summary.loc["toy-bad", "n_errors"] == 3
    raw = pd.read_parquet(report_run / "results.parquet")
    ok = raw[(raw["model"] == "toy-bad") & (raw["error"] == "")]
    assert summary.loc["toy-bad", "ned"] == pytest.approx(ok["ned"].mean())


@pytest.mark.slow
def test_report_of_two_runs_compares_across_runs(tmp_path: Path) -> None:
    a = build_run(
        tmp_path / "run_a", n_prompts=12, models={"m": 0.05, "control:render": 0.0}, seed=0
    )
    b = build_run(tmp_path / "run_b", n_prompts=12, models={"m": 0.4}, seed=1)
    index = write_report([a, b], tmp_path / "both", by=["prompt_type"], n_boot=200)
    assert index == tmp_path / "both" / "index.html"
    comparisons = pd.read_csv(tmp_path / "both" / "tables" / "comparisons.csv")
    pair = comparisons[comparisons["metric"] == "ned"].iloc[0]
    assert {pair["model_a"], pair["model_b"]} == {"m [run_a]", "m [run_b]"}
    assert pair["n_prompts"] == 12
    html = index.read_text(encoding="utf-8")
    assert "run_a" in html and "run_b" in html
    summary = pd.read_csv(tmp_path / "both" / "tables" / "summary.csv")
    assert set(summary["model"]) == {"m [run_a]", "m [run_b]", "control:render [run_a]"}
    ceiling = pd.read_csv(tmp_path / "both" / "tables" / "ocr_ceiling.csv").set_index("model")
    render_ned = summary.set_index("model").loc["control:render [run_a]", "ned"]
    assert ceiling.loc["m [run_a]", "ceiling"] == pytest.approx(render_ned)


@pytest.mark.slow
def test_cli_writes_the_report_and_prints_its_path(tmp_path: Path) -> None:
    from glyphbench.cli.root import app

    run = build_run(
        tmp_path / "tiny", n_prompts=6, models={"m": 0.1, "control:render": 0.0}, with_images=False
    )
    runner = CliRunner()
    out = tmp_path / "cli_report"
    result = runner.invoke(
        app,
        [
            "report",
            str(run),
            "--out",
            str(out),
            "--by",
            "prompt_type,cefr",
            "--n-boot",
            "100",
            "--seed",
            "3",
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.strip().splitlines()[-1] == str(out / "index.html")
    meta = json.loads((out / "report.json").read_text())
    assert (meta["by"], meta["n_boot"], meta["seed"]) == (["prompt_type", "cefr"], 100, 3)
    bad = runner.invoke(app, ["report", str(run), "--out", str(out), "--by", "nope"])
    assert isinstance(bad.exception, InputError) and "nope" in str(bad.exception)


@pytest.mark.slow
@needs_chromium
def test_report_renders_in_headless_chromium(built_report: Path, tmp_path: Path) -> None:
    """Open the page in a real browser: every table has rows, every image decodes."""
    with chromium_driver(tmp_path / "profile") as driver:
        driver.set_page_load_timeout(60)
        driver.get(built_report.as_uri())
        driver.execute_script("document.querySelectorAll('details').forEach(d => d.open = true)")
        driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "Promise.all([...document.images].map(i => i.decode().catch(() => null)))"
            ".then(() => done(true));"
        )
        images = driver.execute_script(
            "return [...document.images]"
            ".map(i => [i.getAttribute('src'), i.complete, i.naturalWidth]);"
        )
        assert len(images) >= 6 + 3 + 6 * 3 * 4  # slice figures, other figures, gallery
        broken = [src for src, complete, width in images if not complete or width == 0]
        assert not broken, f"images that did not render: {broken[:5]}"
        rows = driver.execute_script(
            "return [...document.querySelectorAll('table')].map(t => t.tBodies[0].rows.length);"
        )
        assert rows and min(rows) > 0, rows
        summary_text = driver.execute_script(
            "return document.getElementById('summary-table').innerText;"
        )
        assert "toy-good" in summary_text and "control:render" in summary_text
        height = driver.execute_script("return document.body.scrollHeight;")
        driver.set_window_size(1400, min(int(height), 12000))
        shot = tmp_path / "report.png"
        driver.save_screenshot(str(shot))
        assert shot.stat().st_size > 10_000
