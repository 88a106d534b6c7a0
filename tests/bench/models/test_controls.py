"""Control models: typo statistics, legible seeded rendering, the ordering through real EasyOCR."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz.distance import Levenshtein

from glyphbench.core.errors import InputError
from glyphbench.models import ImageRequest, get_model
from glyphbench.models.controls import MARGIN, TYPO_ALPHABET, corrupt, render_text
from tests.helpers.runner_helper import prompt_set

TEXTS = [
    "OPEN",
    "Hello world",
    "The quick brown fox jumps over the lazy dog near the river",
    "42% off!",
]


@settings(deadline=None)
@given(st.text(min_size=0, max_size=60), st.integers(0, 10**6))
def test_rate_zero_keeps_text_and_spaces_survive(text: str, seed: int) -> None:
    assert corrupt(text, 0.0, random.Random(seed)) == text
    corrupted = corrupt(text, 0.7, random.Random(seed))
    assert corrupted.count(" ") == text.count(" ")
    assert corrupt(text, 0.7, random.Random(seed)) == corrupted  # seeded


@settings(deadline=None, max_examples=50)
@given(st.text(alphabet="äöüßéλ", min_size=1, max_size=40), st.integers(0, 10**6))
def test_rate_one_changes_every_character(text: str, seed: int) -> None:
    # Every character is substituted, deleted or followed by an insertion. The text
    # shares no character with TYPO_ALPHABET, so any substitution or insertion leaves
    # a character the text lacks, and deletions alone shorten it: it never survives.
    # (With an overlapping alphabet a deletion plus an insertion can rebuild the
    # text, e.g. "ab" -> "a"+"b", "" -> "ab", which made the old test flaky.)
    corrupted = corrupt(text, 1.0, random.Random(seed))
    assert corrupted != text
    kept = [c for c in corrupted if c in text]
    assert len(kept) < len(text) or any(c in TYPO_ALPHABET for c in corrupted)


@pytest.mark.parametrize("rate", [0.05, 0.2, 0.5])
def test_edit_rate_tracks_the_requested_rate(rate: float) -> None:
    letters = random.Random(1)
    text = "".join(letters.choice("abcdefghij") for _ in range(4000))
    distance = Levenshtein.distance(text, corrupt(text, rate, random.Random(2)))
    # each hit costs one edit; adjacent hits can share one, so the ratio sits at or a bit below R
    assert 0.8 * rate <= distance / len(text) <= 1.05 * rate


def _ink_mask(image) -> np.ndarray:
    pixels = np.asarray(image.convert("L"), dtype=float)
    background = np.median(pixels)
    return np.abs(pixels - background) > 60


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("text", TEXTS)
def test_render_is_legible_and_fits(seed: int, text: str) -> None:
    image = render_text(text, seed, 256)
    mask = _ink_mask(image)
    assert mask.any()
    rows, cols = np.where(mask)
    edge = int(MARGIN * 256) - 3  # antialiasing may bleed a pixel or two
    assert rows.min() >= edge and cols.min() >= edge
    assert rows.max() <= 256 - edge and cols.max() <= 256 - edge
    grey = np.asarray(image.convert("L"), dtype=float)
    assert np.percentile(grey, 99) - np.percentile(grey, 1) > 150  # strong contrast


def test_render_is_seeded_and_varies() -> None:
    a = render_text("Hello world", 1, 128)
    assert a.tobytes() == render_text("Hello world", 1, 128).tobytes()
    layouts = {render_text("Hello world", seed, 128).tobytes() for seed in range(8)}
    assert len(layouts) == 8


def test_typo_uses_render_layout_and_blank_is_plain() -> None:
    request = ImageRequest(prompt="p", text="Bakery", seed=5)
    typo0 = get_model("control:typo?rate=0&size=96").generate([request])[0]
    render = get_model("control:render?size=96").generate([request])[0]
    assert typo0.tobytes() == render.tobytes()
    blank = get_model("control:blank?size=96").generate([request, request])
    assert len(blank) == 2 and blank[0].size == (96, 96)
    assert np.asarray(blank[0]).std() == 0


def test_control_options_are_checked() -> None:
    for spec, message in [
        ("control:typo", "option 'rate' is required"),
        ("control:typo?rate=2", "'rate': Input should be less than or equal to 1"),
        ("control:render?colour=red", "unknown option 'colour'; known: size"),
        ("control:render?rate=0.2", "unknown option 'rate'; known: size"),
        ("control:render?size=ten", "'size': Input should be a valid integer"),
        ("control:render?size=16", "'size': Input should be greater than or equal to 32"),
        ("control:sparkle", "unknown control target 'sparkle'.*known: render, typo, blank"),
        ("control", "needs a target"),
    ]:
        with pytest.raises(InputError, match=message):
            get_model(spec)
    assert get_model("control:typo?rate=0.3").describe()["rate"] == 0.3
    assert get_model("control:render?size=").describe()["size"] == 512  # empty: the default
    assert get_model("control:blank").is_control


@pytest.mark.slow
def test_controls_order_through_real_easyocr(tmp_path: Path) -> None:
    """The measurement's validation: blank < typo(0.5) < typo(0.1) < render, render near perfect."""
    pytest.importorskip("easyocr")
    pytest.importorskip("easyocr_en_models")
    from glyphbench.report.console import summarize
    from glyphbench.run.config import RunConfig
    from glyphbench.run.operations import run_benchmark

    models = ["control:render", "control:typo?rate=0.1", "control:typo?rate=0.5", "control:blank"]
    config = RunConfig.from_mapping(
        {
            # 160 px keeps EasyOCR on a small CPU quick; the short texts stay legible at that size
            "models": [
                {"spec": f"{m}{'&' if '?' in m else '?'}size=160", "name": m} for m in models
            ],
            "ocr": "easyocr?gpu=0",
            "batch_size": 8,
            "out": str(tmp_path / "run"),
        }
    )
    result = run_benchmark(config, prompt_set=prompt_set(5), progress=False)
    assert result.results is not None
    rows = result.results
    assert (rows["error"] == "").all()
    assert rows["ocr_engine"].eq("easyocr").all()
    table = summarize(rows).set_index("model")
    ned = table["ned"]
    assert (
        ned["control:blank"]
        < ned["control:typo?rate=0.5"]
        < ned["control:typo?rate=0.1"]
        < ned["control:render"]
    )
    assert ned["control:render"] >= 0.9
    assert table.loc["control:render", "exact_match"] >= 0.6
    assert ned["control:blank"] == 0.0  # nothing drawn, nothing read
    algorithm1 = table["algorithm1"]
    assert (
        algorithm1["control:render"]
        < algorithm1["control:typo?rate=0.1"]
        < algorithm1["control:blank"]
    )


def test_render_draws_chinese_with_a_cjk_font_and_latin_as_before() -> None:
    import numpy as np

    from glyphbench.core.fonts import cjk_fonts
    from glyphbench.models.controls import needs_cjk_font, render_text

    if not cjk_fonts():
        pytest.skip("no CJK font installed (apt-get install fonts-noto-cjk)")
    assert needs_cjk_font("营业中") and not needs_cjk_font("Open ½")
    chinese = np.asarray(render_text("营业中", seed=1).convert("L"))
    tofu_free = np.asarray(render_text("营业中", seed=2).convert("L"))
    # ink is drawn (a missing glyph would still draw a box, so compare two different texts)
    other = np.asarray(render_text("欢迎光临", seed=1).convert("L"))
    assert chinese.std() > 5 and tofu_free.std() > 5 and not np.array_equal(chinese, other)


def test_typos_may_take_a_prompt_at_the_limit_past_it() -> None:
    """A 3,990-character text passed the 4,000 check, its typos made it 4,014 at the draw,
    and every row of its batch failed with "its text has 4,014 characters"."""
    from glyphbench.models.controls import MAX_RENDER_CHARS

    typo = get_model("control:typo?rate=0.5&size=64")
    text = ("longword " * 500)[: MAX_RENDER_CHARS - 10]
    requests = (ImageRequest(prompt="", text=text, seed=seed) for seed in range(200))
    request = next(r for r in requests if len(typo.typo_text(r)) > MAX_RENDER_CHARS)
    [image] = typo.generate([request])
    assert image.size == (64, 64)


def test_chinese_prompts_without_a_cjk_font_are_refused_before_the_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Without a CJK font one Chinese prompt failed every other prompt of its batch with
    "no CJK font found"; it is refused before anything is written, naming it."""
    import pandas as pd

    import glyphbench.models.controls as controls

    frame = pd.DataFrame({"prompt_id": ["a", "b", "c"], "text": ["OPEN", "营业中", "欢迎"]})
    monkeypatch.setattr(controls, "cjk_fonts", lambda: ())
    with pytest.raises(InputError, match=r"prompt 'b' \(2 such\): no CJK font found"):
        get_model("control:render").check_prompts(frame, "p.csv")
    get_model("control:blank").check_prompts(frame, "p.csv")  # draws nothing: any text goes
    get_model("control:render").check_prompts(frame.iloc[:1], "p.csv")  # Latin only
    monkeypatch.setattr(controls, "cjk_fonts", lambda: ((Path("f.ttc"), 0),))
    get_model("control:render").check_prompts(frame, "p.csv")
