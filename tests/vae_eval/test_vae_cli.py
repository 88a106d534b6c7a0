"""``glyphbench vae-eval`` end to end with real EasyOCR (2 small images, identity + JPEG)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from glyphbench.cli.root import app
from glyphbench.vae_eval.runner import RESULTS_NAME


def test_help_works_and_loads_no_heavy_modules() -> None:
    code = (
        "import sys; from typer.testing import CliRunner; from glyphbench.cli.root import app\n"
        "for args in (['vae-eval', '--help'], ['vae-eval', 'download', '--help']):\n"
        "    r = CliRunner().invoke(app, args); assert r.exit_code == 0, r.output\n"
        "heavy = [m for m in ('torch', 'diffusers', 'easyocr', 'scipy') if m in sys.modules]\n"
        "assert not heavy, heavy\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_user_errors_are_one_line(tmp_path: Path) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["vae-eval", "--out", str(tmp_path)])
    assert isinstance(result.exception, Exception) and "--vae" in str(result.exception)
    result = runner.invoke(app, ["vae-eval", "--vae", "jpg?quality=3", "--out", str(tmp_path)])
    assert "unknown codec 'jpg'" in str(result.exception)


@pytest.mark.slow
def test_cli_end_to_end_and_resume(tmp_path: Path) -> None:
    out = tmp_path / "out"
    args = [
        "vae-eval",
        "--vae",
        "identity",
        "--vae",
        "jpeg?quality=50",
        "--images",
        "default?size=192",
        "--limit",
        "2",
        "--ocr",
        "easyocr?gpu=0",
        "--out",
        str(out),
    ]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "4 rows (0 failed)" in result.output
    table = pd.read_parquet(out / RESULTS_NAME)
    assert list(table["vae"]) == ["identity"] * 2 + ["jpeg?quality=50"] * 2
    assert set(table["font_size"]) == {48, 32}  # limit 2 < 5 sizes: one of each largest size
    assert set(table["char_class"]) == {"lower", "upper"}
    assert table["wr_original"].notna().all() and table["wr"].notna().all()
    assert (table["ssim"] <= 1.0).all()
    report = out / "report" / "index.html"
    html = report.read_text(encoding="utf-8")
    assert "jpeg?quality=50" in html and "wr_vs_font_size.png" in html
    assert (out / "report" / "wr_vs_font_size.png").is_file()
    for path in table["original_path"].tolist() + table["reconstruction_path"].tolist():
        assert (out / path).is_file()

    parts_before = sorted(p.name for p in (out / "parts").rglob("*.parquet"))
    again = CliRunner().invoke(app, args)  # resume: nothing left to do
    assert again.exit_code == 0, again.output
    assert sorted(p.name for p in (out / "parts").rglob("*.parquet")) == parts_before
    pd.testing.assert_frame_equal(pd.read_parquet(out / RESULTS_NAME), table)
