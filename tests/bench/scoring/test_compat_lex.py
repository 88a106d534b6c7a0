"""glyphbench's LeX-Bench PNED and recall against values from the benchmark's own code."""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glyphbench.scoring.lex import lex_items, lex_pned, lex_recall, lex_summary, lex_tokens
from glyphbench.scoring.table import METRICS, Mean, Ratio
from tests.helpers.compat_data import assert_same, load_rows, load_summary

ROWS = load_rows("lex")


def test_data_covers_the_rules() -> None:
    assert len(ROWS) >= 40
    assert any(row["read"] == "" for row in ROWS)
    assert any(row["expected"] == "" for row in ROWS)


@pytest.mark.slow
@pytest.mark.parametrize("row", ROWS, ids=[row["note"] for row in ROWS])
def test_pair_matches_the_original(row: dict[str, Any]) -> None:
    assert_same(lex_pned(row["expected"], row["read"]), row["lex_pned"])
    assert_same(lex_recall(row["expected"], row["read"]), row["lex_recall"])


def test_summary_matches_the_original() -> None:
    # The original cannot score images without ground truth (it divides by zero), so its
    # summary covers the rows it could score.
    want = load_summary("lex")
    scorable = [row for row in ROWS if row["lex_recall"] is not None]
    rows = [
        {
            "lex_pned": lex_pned(r["expected"], r["read"]),
            "lex_recall": lex_recall(r["expected"], r["read"]),
        }
        for r in scorable
    ]
    got = lex_summary(rows)
    assert got == pytest.approx(want, abs=1e-9, rel=0)  # same keys, each value close


def test_table_aggregate_over_every_pair_matches_the_original() -> None:
    # Pairs without ground truth are in the table (the original would stop on them); the
    # set's values leave them out as the original's numbers do.
    import pandas as pd

    from glyphbench.scoring import score_pairs

    want = load_summary("lex")
    reads = [r["read"] for r in ROWS]  # PaddleOCR's boxes, as the original got them
    scored = score_pairs([r["expected"] for r in ROWS], reads, compat="lex", read_as="units")
    got = METRICS.aggregate(pd.DataFrame(scored), ["lex_pned", "lex_recall"], "lex")
    assert got == pytest.approx(want, abs=1e-12, rel=0)
    assert scored["lex_pned"].mean() != pytest.approx(want["lex_pned"], abs=1e-3)


def test_metric_records_read_the_raw_cells() -> None:
    pair = SimpleNamespace(expected_raw="KAYAK SAIL", read_raw="KAYAK  SAIL")
    assert METRICS.get("lex_pned").function(pair) == 1.0  # type: ignore[misc]
    assert METRICS.get("lex_recall").function(pair) == 1.0  # type: ignore[misc]
    # lex_pned_scored and lex_scored are helpers of the set's PNED (images with items only).
    assert METRICS.columns(["lex"]) == ["lex_pned", "lex_recall", "lex_pned_scored", "lex_scored"]
    assert METRICS.summary_names(["lex"]) == ["lex_pned", "lex_recall"]
    assert METRICS.get("lex_pned").higher_is_better is False
    assert METRICS.get("lex_pned").aggregate == Ratio("lex_pned_scored", "lex_scored")
    assert METRICS.get("lex_recall").aggregate == Mean()
    assert "LeX-Art" in METRICS.get("lex_pned").reference


def test_expected_cell_mapping() -> None:
    assert lex_items("") == []
    assert lex_items("A  b\tC") == ["a", "b", "c"]
    assert lex_items("Big Sale\n\n 50% Off \n") == ["big sale", "50% off"]
    assert lex_tokens("A\tB  C\n") == ["a\tb", "", "c", ""]


def test_greedy_recall_can_miss_the_best_assignment() -> None:
    # The first item takes the first close token, leaving the second item without one.
    assert lex_recall("abcdefghij xbcdefghij", "abcdefghij\nabcdefg") == 0.5
    assert lex_recall("abcdefghij xbcdefghij", "abcdefg\nabcdefghij") == 1.0


items = st.lists(st.text(alphabet="abcAB", min_size=1, max_size=5), max_size=5)
lines = st.lists(st.text(alphabet="abcAB ", max_size=8), min_size=1, max_size=5)


@settings(max_examples=150, deadline=None)
@given(truth=items, read_lines=lines, data=st.data())
def test_pned_bounds_and_line_order(truth: list[str], read_lines: list[str], data: Any) -> None:
    expected, read = " ".join(truth), "\n".join(read_lines)
    token_count, item_count = len(lex_tokens(read)), len(truth)
    pned = lex_pned(expected, read)
    assert abs(token_count - item_count) <= pned <= max(token_count, item_count) + 1e-12
    # The Hungarian matching does not depend on the order of the lines.
    shuffled = data.draw(st.permutations(read_lines))
    assert lex_pned(expected, "\n".join(shuffled)) == pytest.approx(pned, abs=1e-12)
    recall = lex_recall(expected, read)
    assert math.isnan(recall) if not truth else 0.0 <= recall <= 1.0


@settings(max_examples=100, deadline=None)
@given(truth=items.filter(bool))
def test_reading_exactly_the_items_is_perfect(truth: list[str]) -> None:
    expected = " ".join(truth)
    assert lex_pned(expected, expected.upper()) == 0.0
    assert lex_recall(expected, expected.upper()) == 1.0
