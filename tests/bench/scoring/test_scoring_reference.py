"""compat="reference": pair-by-pair agreement with an independent implementation.

The oracle below is written from the documented facts about TextInVision's
``score.py`` (docs/metrics.md), with plain dynamic programming:

1. LCS, longest match and the "smart" Levenshtein lower-case their inputs.
2. The smart Levenshtein removes one occurrence of each distinct word common to
   both texts (the script keeps the first count-1 copies), deletes all spaces,
   then takes the Levenshtein distance; two empty remainders give 0.
3. Algorithm 1 receives its arguments swapped: the OCR text is searched for in
   the expected text (case-sensitive), and the single-word branch looks at the OCR.
"""

from __future__ import annotations

import csv
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glyphbench.scoring import REFERENCE_COLUMNS, score_pairs
from tests.helpers.scoring_oracle import oracle


def corrupt(text: str, rng: random.Random) -> str:
    """OCR-like damage: case flips, substitutions, drops, split/merged words, noise."""
    choice = rng.random()
    if choice < 0.1:
        return ""
    if choice < 0.2:
        return text
    chars = list(text)
    out = []
    for ch in chars:
        r = rng.random()
        if r < 0.08:
            continue
        if r < 0.16:
            out.append(rng.choice("aeilo01 "))
        elif r < 0.24:
            out.append(ch.swapcase())
        else:
            out.append(ch)
        if rng.random() < 0.03:
            out.append(" ")
    noisy = "".join(out)
    if rng.random() < 0.3:
        noisy = f"{noisy} {rng.choice(['SALE', 'the', 'open', 'x'])}"
    return noisy


def test_reference_mode_hand_values():
    frame = score_pairs(["Digital Dreamscapes"], ["Dlgitoi Draseampes"], compat="reference")
    assert list(frame.columns) == list(REFERENCE_COLUMNS)
    assert frame.iloc[0].to_dict() == {
        "score_longest_match": 3,  # "git" (or " dr")
        "score_lcs": 13,
        "score_levenshtein": 7,  # "digitaldreamscapes" vs "dlgitoidraseampes"
        "score_algorithm1": 7,  # OCR has two words -> smart Levenshtein of the whole texts
    }
    # Empty OCR is "in" any expected text: a perfect 0 (the swapped-arguments quirk).
    assert score_pairs(["Hello"], [""], compat="reference")["score_algorithm1"].item() == 0
    # Case-sensitive substring test: "HELLO" is not in "Hello", but the lower-cased
    # smart Levenshtein of the best word is 0.
    assert score_pairs(["Hello"], ["HELLO"], compat="reference")["score_algorithm1"].item() == 0
    # Repeated common words lose one copy each: "a a b" vs "a c" -> "ab" vs "c" = 2.
    assert score_pairs(["a a b"], ["a c"], compat="reference")["score_levenshtein"].item() == 2


def test_reference_mode_matches_oracle_on_textinvision_texts(textinvision_dir):
    with open(textinvision_dir / "all_texts.csv", encoding="utf-8-sig", newline="") as handle:
        texts = [row["words"] for row in csv.DictReader(handle)]
    rng = random.Random(7)
    sample = rng.sample(texts, 600)
    ocr = [corrupt(t, rng) for t in sample]
    frame = score_pairs(sample, ocr, compat="reference")
    for row, e, o in zip(frame.to_dict("records"), sample, ocr, strict=True):
        assert row == oracle(e, o), (e, o)


alphabet_text = st.lists(st.sampled_from(["a", "A", "ab", "Ba", "b", "cab"]), max_size=5).map(
    " ".join
)


@pytest.mark.slow
@given(alphabet_text, alphabet_text)
@settings(max_examples=300)
def test_reference_mode_matches_oracle_on_generated_pairs(expected, ocr):
    frame = score_pairs([expected], [ocr], compat="reference")
    assert frame.iloc[0].to_dict() == oracle(expected, ocr)


def test_reference_mode_differs_from_paper_mode_where_documented():
    # Paper mode: an empty OCR output is as wrong as the expected text is long.
    paper = score_pairs(["Hello"], [""])
    ref = score_pairs(["Hello"], [""], compat="reference")
    assert paper["algorithm1"].item() == 5
    assert ref["score_algorithm1"].item() == 0


@pytest.mark.parametrize("bad", ["paper", "REFERENCE"])
def test_unknown_compat_mode_is_rejected(bad):
    with pytest.raises(ValueError):
        score_pairs(["a"], ["a"], compat=bad)  # type: ignore[arg-type]
