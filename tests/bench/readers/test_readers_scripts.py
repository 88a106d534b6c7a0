"""Readers declare the scripts they read; PaddleOCR without its package; Chinese with RapidOCR."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from glyphbench.cli.root import app
from glyphbench.core.errors import InputError
from glyphbench.core.registry import missing_modules
from glyphbench.readers import get_reader
from glyphbench.readers.paddleocr import parse_v2, parse_v3
from glyphbench.readers.scripts import (
    check_reader_reads,
    main_script,
    needed_scripts,
    reader_scripts,
    readers_for,
)


def test_each_reader_declares_its_scripts() -> None:
    assert reader_scripts("easyocr") == {"latin"}
    assert reader_scripts("rapidocr") == {"latin", "han"}
    assert reader_scripts("tesseract") == {"latin"}
    assert reader_scripts("tesseract?lang=eng+chi_sim") == {"latin", "han"}
    assert reader_scripts("paddleocr") == {"latin"}
    assert reader_scripts("paddleocr?lang=ch") == {"latin", "han"}
    assert reader_scripts("vlm") == {"latin", "han"}


def _prompts(langs: list[str], texts: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"text": texts, "lang": langs})


def test_a_reader_that_cannot_read_the_prompts_is_refused_with_advice() -> None:
    frame = _prompts(["en", "zh", "zh"], ["OPEN", "营业中", "欢迎"])
    with pytest.raises(InputError) as caught:
        check_reader_reads("easyocr", frame)
    problem = caught.value.problem
    assert "2 selected prompts (2 zh) need han" in problem
    assert "--ocr rapidocr" in problem and "lang == 'en'" in problem
    check_reader_reads("rapidocr", frame)  # reads both
    check_reader_reads("easyocr", frame[frame["lang"] == "en"])


def test_a_stray_symbol_does_not_change_what_an_english_row_needs() -> None:
    check_reader_reads("easyocr", _prompts(["en"], ["¯\\_(ツ)_/¯"]))
    # without a declared language the text decides: Han text needs Han
    with pytest.raises(InputError, match="need han"):
        check_reader_reads("easyocr", pd.DataFrame({"text": ["新年快乐"]}))
    assert main_script("¯\\_(ツ)_/¯") == "kana"


def test_paddleocr_without_its_package_says_so() -> None:
    if missing_modules("paddleocr") is None:
        pytest.skip("paddleocr is installed here")
    listing = CliRunner().invoke(app, ["list", "readers"])
    assert listing.exit_code == 0
    block = listing.output.split("paddleocr", 1)[1]
    assert "not available here: python package 'paddleocr' is not installed" in block
    with pytest.raises(InputError, match=r"glyphbench\[paddle\]"):
        get_reader("paddleocr")


def test_paddleocr_results_of_both_apis_become_detections() -> None:
    box = [[0, 0], [10, 0], [10, 4], [0, 4]]
    assert parse_v2([[box, ("EXIT", 0.9)], [box, ("NOW", 0.5)]])[1][1:] == ("NOW", 0.5)
    v3 = {"rec_texts": ["出口"], "rec_scores": [0.8], "rec_polys": [box]}
    assert parse_v3(v3) == [([(0.0, 0.0), (10.0, 0.0), (10.0, 4.0), (0.0, 4.0)], "出口", 0.8)]


@pytest.mark.slow
def test_rapidocr_reads_chinese_drawn_by_the_render_control() -> None:
    from glyphbench.models.controls import render_text
    from glyphbench.scoring import score_pairs

    texts = ["欢迎光临", "营业时间 9:00-21:00", "春眠不觉晓"]
    reader = get_reader("rapidocr")
    readings = reader.read([render_text(text, seed) for seed, text in enumerate(texts)])
    scores = score_pairs(texts, [reading.text for reading in readings])
    assert scores["ned"].mean() >= 0.9


@pytest.mark.slow
def test_chinese_demo_render_reads_and_blank_does_not(tmp_path: Path) -> None:
    """Chinese demo, as a user types it; scored per character."""
    out = tmp_path / "zh"
    args = ["run", "--prompts", "default", "--where", "lang == 'zh'"]
    args += ["--models", "control:render,control:blank", "--ocr", "rapidocr", "--limit", "20"]
    result = CliRunner().invoke(app, [*args, "--out", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    rows = pd.read_parquet(out / "results.parquet")
    assert set(rows["lang"]) == {"zh"} and len(rows) == 40
    ned = rows.groupby("model")["ned"].mean()
    assert ned["control:render"] >= 0.8
    assert ned["control:blank"] <= 0.05


# point 3: script sets per character, not one language guess.


def test_a_mixed_text_needs_every_script_it_is_written_in() -> None:
    from glyphbench.prompts.scripts import guess_lang, text_scripts

    assert text_scripts("科学 과학 ステップ SCIENCE") == {"han", "hangul", "kana", "latin"}
    assert guess_lang("科学 과학 ステップ SCIENCE") == "mul"  # not "ja"
    assert text_scripts("出口はこちら") == {"han", "kana"}
    assert text_scripts("東京駅") == {"han"}  # kanji alone: Han, whatever the language
    assert needed_scripts([(None, "科学 과학 ステップ SCIENCE")]) == {
        "han",
        "hangul",
        "kana",
        "latin",
    }


def test_korean_is_flagged_for_a_reader_without_hangul_even_beside_han() -> None:
    from glyphbench.prompts.attributes import compute_attributes

    for text in ["영업중", "서울 Seoul 首尔"]:
        frame = compute_attributes(pd.DataFrame({"text": [text]}))
        with pytest.raises(InputError, match="need hangul"):
            check_reader_reads("rapidocr", frame)


def test_a_japanese_sign_with_kana_is_refused_by_rapidocr_without_recommending_it() -> None:
    from glyphbench.prompts.attributes import compute_attributes

    frame = compute_attributes(
        pd.DataFrame({"text": ["出口はこちら", "科学 과학 ステップ SCIENCE"]})
    )
    with pytest.raises(InputError) as caught:
        check_reader_reads("rapidocr", frame)
    problem = caught.value.problem
    assert "need hangul, kana" in problem and "--ocr rapidocr" not in problem
    named = [part.split()[0] for part in problem.split("--ocr ")[1:]]
    for spec in named:  # any reader it names reads both missing scripts
        assert {"hangul", "kana"} <= (reader_scripts(spec) or frozenset())
    if not named:
        assert "no reader installed here reads hangul, kana" in problem


def test_the_refusal_names_installed_readers_that_read_the_missing_script() -> None:
    frame = _prompts(["zh"], ["营业中"])
    with pytest.raises(InputError) as caught:
        check_reader_reads("easyocr", frame)
    found = readers_for(frozenset({"han"}))
    assert found[0] == "rapidocr"  # installed with glyphbench
    for spec in found[:3]:
        assert f"--ocr {spec}" in caught.value.problem
        assert "han" in (reader_scripts(spec) or frozenset())
