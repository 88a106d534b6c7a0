"""glyphbench's CVTG-2K scorer against values from the benchmark's own code."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glyphbench.scoring.cvtg import (
    closest_read_word,
    cvtg_summary,
    cvtg_word_correct,
    cvtg_word_ned,
    cvtg_word_ned_sum,
    cvtg_word_total,
    cvtg_words,
)
from glyphbench.scoring.table import METRICS, Ratio
from tests.helpers.compat_data import assert_same, load_rows, load_summary

ROWS = load_rows("cvtg")
FUNCTIONS = {
    "cvtg_word_correct": cvtg_word_correct,
    "cvtg_word_total": cvtg_word_total,
    "cvtg_word_ned": cvtg_word_ned,
    "cvtg_word_ned_sum": cvtg_word_ned_sum,
}


def test_data_covers_the_rules() -> None:
    assert len(ROWS) >= 40
    assert any(row["read"] == "" for row in ROWS)
    assert any(row["expected"] == "" for row in ROWS)


@pytest.mark.parametrize("row", ROWS, ids=[row["note"] for row in ROWS])
def test_pair_matches_the_original(row: dict[str, Any]) -> None:
    for column, function in FUNCTIONS.items():
        assert_same(function(row["expected"], row["read"]), row[column])


def test_summary_matches_the_original() -> None:
    want = load_summary("cvtg")
    rows = [
        {column: function(row["expected"], row["read"]) for column, function in FUNCTIONS.items()}
        for row in ROWS
    ]
    got = cvtg_summary(rows)
    assert got == pytest.approx(want, abs=1e-9, rel=0)  # same keys, each value close


def test_metric_records_read_the_raw_cells() -> None:
    pair = SimpleNamespace(expected_raw="Go  go\tSALE!", read_raw="GO\nsale")
    assert METRICS.get("cvtg_word_correct").function(pair) == 2.0  # type: ignore[misc]
    assert METRICS.get("cvtg_word_total").function(pair) == 3.0  # type: ignore[misc]
    assert METRICS.columns(["cvtg"]) == list(FUNCTIONS)
    accuracy, ned = METRICS.get("cvtg_word_accuracy"), METRICS.get("cvtg_ned")
    assert accuracy.aggregate == Ratio("cvtg_word_correct", "cvtg_word_total")
    assert ned.aggregate == Ratio("cvtg_word_ned_sum", "cvtg_word_total")
    assert METRICS.summary_names(["cvtg"]) == ["cvtg_word_accuracy", "cvtg_ned"]
    assert "TextCrafter" in accuracy.reference


def test_closest_word_uses_difflib_orientation_and_tie_rule() -> None:
    # difflib.get_close_matches rates ratio(candidate, word): "aaabc" 0.5 beats "bbaa" 0.29,
    # though with the arguments swapped "bbaa" would win (0.29 against 0.25).
    assert closest_read_word("cac", ["bbaa", "aaabc"]) == "aaabc"
    assert closest_read_word("sale", ["aals", "sesx"]) == "sesx"  # equal ratios: larger wins
    assert closest_read_word("sale", ["lealse", "eae"]) == "lealse"  # "eae" is closer by edits


words = st.text(alphabet="abcAB", min_size=1, max_size=5)
texts = st.lists(words, max_size=6).map(" ".join)


@settings(max_examples=150, deadline=None)
@given(expected=texts, read=texts, extra=texts)
def test_counts_and_similarities_are_bounded(expected: str, read: str, extra: str) -> None:
    scored = cvtg_words(expected, read)
    assert scored.total == len(expected.split()) == len(scored.similarities)
    assert 0 <= scored.correct <= scored.total
    assert all(0 < similarity <= 1 for similarity in scored.similarities)
    # Reading more words can only find more ground-truth words.
    assert cvtg_words(expected, read + "\n" + extra).correct >= scored.correct


@settings(max_examples=150, deadline=None)
@given(expected=texts, data=st.data())
def test_reading_the_words_in_any_order_scores_perfectly(expected: str, data: Any) -> None:
    shuffled = data.draw(st.permutations(expected.upper().split()))
    scored = cvtg_words(expected, "\n".join(shuffled))
    assert scored.correct == scored.total
    assert all(similarity == 1.0 for similarity in scored.similarities)


def test_empty_sets_follow_the_original_zero_rule() -> None:
    empty = {"cvtg_word_correct": 0, "cvtg_word_total": 0, "cvtg_word_ned_sum": 0.0}
    assert cvtg_summary([empty]) == {"cvtg_word_accuracy": 0.0, "cvtg_ned": 0.0}
