"""MARIO-Eval's OCR scorer (family mario) against TextDiffuser's ocr_eval.py outputs.

tests/data/compat/mario*.jsonl hold values the original script computed; see
tests/data/compat/README.md.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glyphbench.scoring.mario import (
    mario_acc,
    mario_counts,
    mario_f,
    mario_keywords,
    mario_precision,
    mario_recall,
    read_lines,
    summary,
)
from glyphbench.scoring.table import METRICS, Derived, Mean
from tests.helpers.compat_data import load_rows, load_summary

PER_PAIR = {
    "mario_precision": mario_precision,
    "mario_recall": mario_recall,
    "mario_acc": mario_acc,
}


ROWS = load_rows("mario")
KEYWORDS = load_rows("mario.keywords")


def test_the_data_covers_enough_pairs() -> None:
    assert len(ROWS) >= 40
    assert {0, 1} <= {row["mario_acc"] for row in ROWS}


@pytest.mark.parametrize("row", ROWS, ids=range(len(ROWS)))
def test_pair_matches_the_original(row: dict[str, Any]) -> None:
    for name, function in PER_PAIR.items():
        assert function(row["expected"], row["read"]) == pytest.approx(row[name], abs=1e-9), name


@pytest.mark.parametrize("row", KEYWORDS, ids=range(len(KEYWORDS)))
def test_keywords_match_the_original(row: dict[str, Any]) -> None:
    assert mario_keywords(row["prompt"]) == row["keywords"]


def test_summary_matches_the_original() -> None:
    scored = [
        {name: function(row["expected"], row["read"]) for name, function in PER_PAIR.items()}
        for row in ROWS
    ]
    original = load_summary("mario")
    assert summary(scored) == pytest.approx(original, abs=1e-9)


def test_metric_records() -> None:
    assert METRICS.columns(["mario"]) == ["mario_precision", "mario_recall", "mario_acc"]
    f_record = METRICS.get("mario_f")
    assert f_record.function is None and isinstance(f_record.aggregate, Derived)
    assert f_record.aggregate.inputs == ("mario_precision", "mario_recall")
    for name in PER_PAIR:
        metric = METRICS.get(name)
        assert isinstance(metric.aggregate, Mean) and metric.function is not None
        for row in ROWS:
            pair = SimpleNamespace(expected_raw=row["expected"], read_raw=row["read"])
            assert metric.function(pair) == pytest.approx(row[name], abs=1e-9)


def test_read_lines_follow_readlines(tmp_path: Path) -> None:
    for read in ("a\r\nb\rc\n", "a\u2028b\x0cc\x85", "", "\n", "x\n\n y "):
        path = tmp_path / "ocr.txt"
        path.write_text(read, encoding="utf-8", newline="")
        with path.open(encoding="utf-8") as handle:
            expected = [line.strip().lower() for line in handle.readlines()]
        assert read_lines(read) == expected


# ------------------------------------------------------------------ properties

word = st.text(alphabet="abAB", min_size=1, max_size=3)
words = st.lists(word, max_size=6)


@settings(max_examples=200, deadline=None)
@given(words, words)
def test_values_ignore_word_order(keywords: list[str], predicted: list[str]) -> None:
    expected, read = " ".join(keywords), "\n".join(predicted)
    shuffled = "\n".join(reversed(predicted))
    for function in PER_PAIR.values():
        assert function(expected, read) == function(expected, shuffled)


@settings(max_examples=200, deadline=None)
@given(words, words)
def test_precision_and_recall_swap_with_the_roles(
    keywords: list[str], predicted: list[str]
) -> None:
    forward = mario_counts(" ".join(keywords), "\n".join(predicted))
    backward = mario_counts(" ".join(predicted), "\n".join(keywords))
    assert forward.matched == backward.matched
    assert 0 <= mario_precision(" ".join(keywords), "\n".join(predicted)) < 1
    assert mario_acc(" ".join(keywords), "\n".join(predicted)) == float(forward.accurate)
    assert forward.accurate == backward.accurate


unit = st.floats(0, 1)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(unit, unit), min_size=1, max_size=5))
def test_f_is_of_the_means(values: list[tuple[float, float]]) -> None:
    rows = [{"mario_precision": p, "mario_recall": r, "mario_acc": 0.0} for p, r in values]
    result = summary(rows)
    assert result["mario_f"] == pytest.approx(
        mario_f(result["mario_precision"], result["mario_recall"])
    )
