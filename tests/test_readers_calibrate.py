"""The reader calibration card: an autocorrecting reader is caught, a faithful one is not."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from rapidfuzz.distance import Levenshtein
from typer.testing import CliRunner

from bench.cli import app
from bench.engine.reading import image_digest
from bench.readers.base import Reader, Reading
from bench.readers.calibrate import (
    calibrate,
    classify_edits,
    control_images,
    faithfulness,
    warning,
)

TEXTS = ["Digital Dreamscapes", "Fresh Bread", "Grand Opening Today", "Quiet Library", "Welcome"]


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "prompt_id": [f"p{i}" for i in range(len(TEXTS))],
            "prompt": [f'A sign that says "{text}".' for text in TEXTS],
            "text": TEXTS,
            "lang": "en",
            "kind": ["phrase", "phrase", "phrase", "phrase", "word"],
        }
    )


class Oracle(Reader):
    """Reads exactly what each control image shows (it is told, by pixel digest)."""

    name = "oracle"

    def __init__(self, drawn: dict[str, str], dictionary: Sequence[str] = ()) -> None:
        self.drawn = drawn
        self.dictionary = [word for text in dictionary for word in text.split()]

    @property
    def version(self) -> str:
        return "oracle 1"

    def word(self, word: str) -> str:
        return word

    def read(self, images: Sequence[Any]) -> list[Reading]:
        texts = [self.drawn[image_digest(image)] for image in images]
        return [Reading(" ".join(self.word(w) for w in text.split())) for text in texts]


class Autocorrector(Oracle):
    """Reads what is drawn, then replaces each word by the nearest dictionary word."""

    name = "autocorrector"

    def word(self, word: str) -> str:
        return min(self.dictionary, key=lambda known: Levenshtein.distance(known, word))


def _drawn(rates: Sequence[float]) -> dict[str, str]:
    return {image_digest(i.image): i.drawn for i in control_images(_frame(), rates, size=96)}


def test_an_autocorrecting_reader_has_faithfulness_near_zero_and_a_full_ceiling() -> None:
    rates = (0.1, 0.2)
    card = calibrate(Autocorrector(_drawn(rates), TEXTS), _frame(), rates=rates, size=96)
    overall = card.summary()["overall"]
    assert overall["render_exact"] == 1.0 and overall["render_ned"] == 1.0
    assert overall["typos_corrected"] > 5
    assert overall["typo_faithfulness"] <= 0.1
    assert overall["blank_hallucination"] == 0.0
    assert "corrects misspellings" in card.markdown()


def test_a_faithful_reader_reports_every_typo_as_written(tmp_path: Path) -> None:
    rates = (0.1, 0.2)
    card = calibrate(Oracle(_drawn(rates)), _frame(), rates=rates, size=96)
    overall = card.summary()["overall"]
    assert overall["typo_faithfulness"] == 1.0 and overall["typos_written"] > 5
    assert overall["render_exact"] == 1.0
    path = card.write(tmp_path / "card")
    assert "| en | 20 |" in path.read_text() and (tmp_path / "card" / "card.json").is_file()
    assert warning("oracle", overall["typo_faithfulness"]) is None


def test_edits_are_classified_one_by_one() -> None:
    # two typos: one read as drawn, one corrected back
    verdicts = classify_edits("fresh bread", "frXsh brexd", "frXsh bread")
    assert verdicts == Counter(written=1, corrected=1)
    assert faithfulness(verdicts) == 0.5
    # a deletion read as drawn, then an insertion corrected away
    assert classify_edits("welcome", "welome", "welome") == Counter(written=1)
    assert classify_edits("welcome", "welcomme", "welcome") == Counter(corrected=1)
    # a case-only typo is invisible after normalisation: nothing to classify
    assert classify_edits("Welcome", "WElcome", "welcome") == Counter()


def test_calibrate_command_writes_the_card_for_tesseract(tmp_path: Path) -> None:
    from bench.readers.tesseract import missing_binary

    if missing_binary():
        pytest.skip("tesseract binary not installed")
    out = tmp_path / "card"
    result = CliRunner().invoke(
        app,
        [
            "readers",
            "calibrate",
            "--reader",
            "tesseract",
            "--out",
            str(out),
            "--per-lang",
            "2",
            "--rates",
            "0.2",
            "--size",
            "128",
        ],
    )
    assert result.exit_code == 0, result.output
    text = (out / "card.md").read_text()
    assert "Reader calibration card: `tesseract`" in text and "| en |" in text
    assert "| zh |" not in text  # tesseract?lang=eng reads no Chinese: no Chinese prompts


@pytest.mark.slow
def test_calibrate_command_runs_the_tiny_vlm(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from bench.readers.tiny_vlm import build_tiny_qwen_vl

    folder = build_tiny_qwen_vl(tmp_path / "tiny-vlm")
    out = tmp_path / "card"
    result = CliRunner().invoke(
        app,
        [
            "readers",
            "calibrate",
            "--reader",
            f"vlm:{folder}?max_new_tokens=4",
            "--out",
            str(out),
            "--per-lang",
            "1",
            "--rates",
            "0.2",
            "--size",
            "64",
        ],
    )
    assert result.exit_code == 0, result.output
    card = (out / "card.md").read_text()
    assert "| en |" in card and "| zh |" in card  # the VLM reads both
