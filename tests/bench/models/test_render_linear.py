"""The render controls: line breaking linear in the text's length, the same images as
before on the demo's prompts and real texts, and a text over the limit refused before a
run writes anything (docs/reliability.md, "Render controls").

Work is counted, never timed: every width the controls measure goes through
``glyphbench.models.controls._text_width``, and its cost grows with the text measured.
The time itself is ``benchmarks/bench_render.py``'s.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from glyphbench.models import controls
from tests.helpers.cli_runs import run_cli
from tests.helpers.render_reference import (
    DIGESTS,
    all_digests,
    demo_requests,
    drawing_setup,
    real_requests,
    synthetic_requests,
)
from tests.helpers.runner_helper import register

register()

LATIN = "abcdefghijklmnopqrstuvwxyz"
CHINESE = "营业中欢迎光临咖啡店出口入口停车场禁止吸烟"


class Budget(Exception):
    """More text measured than a linear renderer needs."""


def measured(text: str, monkeypatch: pytest.MonkeyPatch, budget: int) -> tuple[int, int]:
    """(calls, characters) the render control measures to draw ``text`` (seed 1, 512 px);
    :class:`Budget` as soon as more than ``budget`` characters were measured."""
    counts = [0, 0]
    width = controls._text_width

    def counting(font, part: str) -> float:  # type: ignore[no-untyped-def]
        counts[0] += 1
        counts[1] += len(part)
        if counts[1] > budget:
            raise Budget(f"{counts[1]:,} characters measured for {len(text):,}")
        return width(font, part)

    monkeypatch.setattr(controls, "_text_width", counting)
    controls.render_text(text, seed=1)
    monkeypatch.setattr(controls, "_text_width", width)
    return counts[0], counts[1]


@pytest.mark.parametrize(
    "alphabet",
    [LATIN, CHINESE, LATIN[:10] + " "],
    ids=["latin-without-spaces", "chinese", "latin-words"],
)
def test_the_work_grows_linearly_with_the_texts_length(
    alphabet: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Characters measured per character of text stay flat from 250 to 4,000 characters
    (the quadratic renderer measured about n/2 per character, ~1,000 at 2,000)."""
    from glyphbench.core.fonts import cjk_fonts

    if alphabet == CHINESE and not cjk_fonts():
        pytest.skip("no CJK font installed (apt-get install fonts-noto-cjk)")
    rng = random.Random(7)
    per_char = {}
    for length in (250, 500, 1000, 2000, 4000):
        text = "".join(rng.choice(alphabet) for _ in range(length))
        calls, chars = measured(text, monkeypatch, budget=400 * length)
        per_char[length] = (calls / length, chars / length)
    calls_250, chars_250 = per_char[250]
    for calls, chars in per_char.values():
        assert calls <= 2 * calls_250 + 5 and chars <= 2 * chars_250 + 50, per_char
    assert per_char[4000][1] < 150, per_char  # a bounded multiple of the text, not its square


@pytest.mark.timeout(120)
def test_a_text_of_the_limit_is_drawn_and_one_longer_is_refused() -> None:
    from glyphbench.core.errors import InputError

    image = controls.render_text("x" * controls.MAX_RENDER_CHARS, seed=0)
    assert image.size == (512, 512)
    with pytest.raises(InputError, match="5,000 characters; the render controls draw at most"):
        controls.render_text("x" * 5000, seed=0)


def long_prompts(path: Path) -> Path:
    rows = [
        {"prompt_id": "short", "prompt": 'A sign "OPEN"', "text": "OPEN"},
        {"prompt_id": "essay", "prompt": "A wall of text", "text": "w" * 4001},
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


@pytest.mark.timeout(120)
@pytest.mark.parametrize("model", ["control:render", "control:typo?rate=0.1"])
@pytest.mark.parametrize("dry_run", [True, False])
def test_a_run_with_a_text_over_the_limit_is_refused_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], model: str, dry_run: bool
) -> None:
    prompts = long_prompts(tmp_path / "long.jsonl")
    out = tmp_path / "run"
    args = ["run", "--models", model, "--prompts", f"jsonl:{prompts}", "--ocr", "pixelocr"]
    code, err = run_cli([*args, "--out", str(out), *(["--dry-run"] if dry_run else [])], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert "prompt 'essay': its text has 4,001 characters" in err
    assert not out.exists()


def test_blank_takes_any_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prompts = long_prompts(tmp_path / "long.jsonl")
    args = ["run", "--models", "control:blank", "--prompts", f"jsonl:{prompts}", "--dry-run"]
    code, err = run_cli([*args, "--ocr", "pixelocr", "--out", str(tmp_path / "run")], capsys)
    assert code == 0, err


def reference() -> dict:
    data = json.loads(DIGESTS.read_text(encoding="utf-8"))
    if data["setup"] != drawing_setup():
        pytest.skip(
            f"the digests were drawn with other fonts or text libraries ({data['setup']}); "
            "make them here with the renderer before the change: python "
            "tests/helpers/render_reference.py"
        )
    return data


def test_the_demos_control_images_are_unchanged() -> None:
    expected = reference()["demo"]
    assert all_digests(demo_requests()) == expected


@pytest.mark.slow
def test_real_and_synthetic_texts_draw_the_same_pixels_as_before() -> None:
    data = reference()
    if not any(True for _ in real_requests()):
        pytest.skip("LongText-Bench is not in ../shared/longtext-bench")
    assert all_digests(real_requests()) == data["longtext"]
    assert all_digests(synthetic_requests()) == data["synthetic"]
