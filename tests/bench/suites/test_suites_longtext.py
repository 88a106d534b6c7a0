"""The "done when" of LongText-Bench, end to end and offline.

``glyphbench run --suite longtext:en --data ../shared/longtext-bench --models
control:render,control:blank --limit 8 --out DIR`` with ``--ocr easyocr`` (the
benchmark's VLM reader is not available offline at full size), then ``glyphbench
report``: the LongText text score is shown with its interval, render far above blank.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import SHARED

DATA = SHARED / "longtext-bench"


def glyphbench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "glyphbench", *args], capture_output=True, text=True, check=False
    )


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (DATA / "text_prompts.jsonl").exists():
        pytest.skip(f"LongText-Bench prompt files not found at {DATA}")
    out = tmp_path_factory.mktemp("longtext") / "run"
    run = glyphbench(
        "run", "--suite", "longtext:en", "--data", str(DATA),
        "--models", "control:render,control:blank", "--limit", "5",
        "--ocr", "easyocr", "--out", str(out), "--no-progress",
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    made = glyphbench("report", str(out), "--n-boot", "500")
    assert made.returncode == 0, made.stderr[-3000:]
    return out / "report"


@pytest.mark.slow
def test_without_ocr_the_run_reads_with_the_benchmark_reader(tmp_path: Path) -> None:
    if not (DATA / "text_prompts.jsonl").exists():
        pytest.skip(f"LongText-Bench prompt files not found at {DATA}")
    result = glyphbench(
        "run", "--suite", "longtext", "--data", str(DATA), "--models", "control:blank",
        "--limit", "1", "--out", str(tmp_path / "run"), "--dry-run", "--json",
    )  # fmt: skip
    reader = "vlm:Qwen/Qwen2.5-VL-7B-Instruct?preset=longtext"
    if result.returncode == 2:  # the VLM reader is not registered or cannot run here
        assert reader in result.stderr and len(result.stderr.strip().splitlines()) == 1
        assert not (tmp_path / "run").exists()
        return
    assert result.returncode == 0, result.stderr[-2000:]
    card = json.loads(result.stdout)["protocol"]
    assert card["reader"] == reader and not any("reader" in d for d in card["deviations"])
    assert card["instruction"].startswith("Recognize the text in the image")


@pytest.mark.slow
def test_offline_the_benchmark_reader_error_says_how_to_run(tmp_path: Path) -> None:
    """The issue's command without --ocr: the VLM cannot load offline; one line says what to do."""
    if not (DATA / "text_prompts.jsonl").exists():
        pytest.skip(f"LongText-Bench prompt files not found at {DATA}")
    result = glyphbench(
        "run", "--suite", "longtext", "--data", str(DATA), "--models", "control:blank",
        "--limit", "1", "--out", str(tmp_path / "run"), "--no-progress",
    )  # fmt: skip
    if result.returncode == 0:
        pytest.skip("the benchmark's VLM reader loaded here (its weights are on disk)")
    assert result.returncode == 2, result.stderr[-2000:]
    assert len(result.stderr.strip().splitlines()) == 1
    assert "pass --ocr easyocr" in result.stderr and "different protocol" in result.stderr
    assert not (tmp_path / "run").exists()


@pytest.mark.slow
def test_the_report_shows_the_longtext_score_with_render_far_above_blank(report: Path) -> None:
    data = json.loads((report / "report.json").read_text(encoding="utf-8"))
    section = data["suites"]["longtext"]
    assert section["headline"] == "longtext_text_score"
    scores = {row["model"]: row for row in section["scores"]}
    render, blank = scores["control:render"], scores["control:blank"]
    assert render["subset"] == blank["subset"] == "en" and render["n_prompts"] == 5
    assert render["n_images"] == 20  # the benchmark's 4 images per prompt
    assert render["longtext_text_score_lo"] <= render["longtext_text_score"]
    assert render["longtext_text_score"] <= render["longtext_text_score_hi"]
    assert render["longtext_text_score_lo"] > 0.8 and blank["longtext_text_score_hi"] < 0.1
    (pair,) = section["comparisons"]
    assert pair["significant"] and pair["better"] == "control:render"
    assert any("reader easyocr instead of" in w for w in section["warnings"])
    page = (report / "index.html").read_text(encoding="utf-8")
    assert "LongText-Bench" in page and "LongText text score" in page
    shown = (report / "tables" / "suite_longtext.md").read_text(encoding="utf-8")
    assert f"{render['longtext_text_score']:.3f} [" in shown


@pytest.mark.slow
def test_the_run_records_its_protocol_card(report: Path) -> None:
    card = json.loads((report.parent / "run.json").read_text(encoding="utf-8"))["protocol"]
    assert card["suite"]["name"] == "longtext" and card["images_per_prompt"] == 4
    assert card["prompts"] == {"selected": 5, "benchmark": 160}
    assert card["reader"] == "easyocr" and card["reader_engines"][0].startswith("easyocr")
