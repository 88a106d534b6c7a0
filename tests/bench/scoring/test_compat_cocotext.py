"""COCO-Text end-to-end scorer (family cocotext) against coco_evaluation.py's outputs.

tests/data/compat/cocotext.jsonl holds values computed by the original
evaluateEndToEnd (null where it ignores the ground truth); see
tests/data/compat/README.md.
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glyphbench.scoring.cocotext import (
    MIN_LENGTH,
    cocotext_decode,
    cocotext_distance1,
    cocotext_exact,
    cocotext_ignored,
    summary,
)
from glyphbench.scoring.table import METRICS, Mean
from tests.helpers.compat_data import load_rows, load_summary

PER_PAIR = {
    "cocotext_exact": cocotext_exact,
    "cocotext_distance1": cocotext_distance1,
    "cocotext_ignored": cocotext_ignored,
}


ROWS = load_rows("cocotext")


def same(value: float, original: float | None) -> bool:
    """``original`` is None (JSON null) where the original ignores the pair."""
    return math.isnan(value) if original is None else abs(value - original) <= 1e-9


def test_the_data_covers_enough_pairs() -> None:
    assert len(ROWS) >= 40
    outcomes = {(row["cocotext_exact"], row["cocotext_distance1"]) for row in ROWS}
    assert {(1, 1), (0, 1), (0, 0), (None, None)} <= outcomes


@pytest.mark.parametrize("row", ROWS, ids=range(len(ROWS)))
def test_pair_matches_the_original(row: dict[str, Any]) -> None:
    for name, function in PER_PAIR.items():
        assert same(function(row["expected"], row["read"]), row[name]), name


def test_summary_matches_the_original() -> None:
    scored = [
        {name: function(row["expected"], row["read"]) for name, function in PER_PAIR.items()}
        for row in ROWS
    ]
    original = load_summary("cocotext")
    assert summary(scored) == pytest.approx(original, abs=1e-9)


def test_summary_of_only_ignored_pairs_is_nan() -> None:
    row = {"cocotext_exact": math.nan, "cocotext_distance1": math.nan}
    assert all(math.isnan(value) for value in summary([row]).values())


def test_metric_records() -> None:
    assert METRICS.columns(["cocotext"]) == list(PER_PAIR)
    for metric in METRICS.of(["cocotext"]):
        assert isinstance(metric.aggregate, Mean) and metric.function is not None
        for row in ROWS:
            pair = SimpleNamespace(expected_raw=row["expected"], read_raw=row["read"])
            assert same(metric.function(pair), row[metric.name])


# ------------------------------------------------------------------ properties

kept = st.text(alphabet="aB3!? .-:\n", max_size=10)
deleted = st.text(alphabet="é,'\"()#%\t中😀", min_size=1, max_size=3)


@settings(max_examples=200, deadline=None)
@given(kept, kept, deleted, st.integers(0, 10))
def test_deleted_characters_do_not_count_anywhere(
    expected: str, read: str, noise: str, position: int
) -> None:
    noisy = read[:position] + noise + read[position:]
    assert cocotext_decode(noisy) == cocotext_decode(read)
    for function in PER_PAIR.values():
        clean = function(expected, read)
        assert same(function(expected, noisy), None if math.isnan(clean) else clean)


@settings(max_examples=200, deadline=None)
@given(kept, kept)
def test_exact_implies_distance1_and_ignoring_follows_length(expected: str, read: str) -> None:
    ignored = len(cocotext_decode(expected)) < MIN_LENGTH
    assert cocotext_ignored(expected, read) == float(ignored)
    if not ignored:
        assert cocotext_exact(expected, read) <= cocotext_distance1(expected, read)
        assert cocotext_exact(expected.upper(), read.lower()) == cocotext_exact(expected, read)
