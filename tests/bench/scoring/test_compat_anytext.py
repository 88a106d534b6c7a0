"""AnyText-benchmark's scorer (families anytext and anytext-zh) against its original outputs.

tests/data/compat/anytext*.jsonl hold values computed by AnyText's own comparison
code (eval/eval_dgocr.py, cldm/recognizer.py); see tests/data/compat/README.md.
"""

from __future__ import annotations

import hashlib
import math
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glyphbench.scoring.anytext import (
    MAX_LINE_CHARS,
    anytext_ned,
    anytext_sen_acc,
    anytext_zh_ned,
    dictionary_view,
    known_characters,
    summary,
)
from glyphbench.scoring.table import METRICS, Mean
from tests.helpers.compat_data import load_rows, load_summary

EN_ROWS = load_rows("anytext")
ZH_ROWS = load_rows("anytext-zh")


def test_the_data_covers_enough_pairs() -> None:
    assert len(EN_ROWS) >= 40 and len(ZH_ROWS) >= 40
    assert {0, 1} <= {row["anytext_sen_acc"] for row in EN_ROWS}


@pytest.mark.parametrize("row", EN_ROWS, ids=range(len(EN_ROWS)))
def test_laion_word_pair_matches_the_original(row: dict[str, Any]) -> None:
    assert anytext_sen_acc(row["expected"], row["read"]) == row["anytext_sen_acc"]
    assert anytext_ned(row["expected"], row["read"]) == pytest.approx(row["anytext_ned"], abs=1e-9)


@pytest.mark.parametrize("row", ZH_ROWS, ids=range(len(ZH_ROWS)))
def test_wukong_word_pair_matches_the_original(row: dict[str, Any]) -> None:
    assert anytext_sen_acc(row["expected"], row["read"]) == row["anytext_sen_acc"]
    ned = anytext_zh_ned(row["expected"], row["read"])
    assert ned == pytest.approx(row["anytext_ned"], abs=1e-9)


def _scored(rows: list[dict[str, Any]], dictionary: Any) -> list[dict[str, float]]:
    return [
        {
            "anytext_sen_acc": anytext_sen_acc(row["expected"], row["read"]),
            "anytext_ned": anytext_ned(row["expected"], row["read"], dictionary),
        }
        for row in rows
    ]


def test_summaries_match_the_original() -> None:
    en = summary(_scored(EN_ROWS, "en"))
    zh = summary(_scored(ZH_ROWS, "zh"))
    assert en == pytest.approx(load_summary("anytext"), abs=1e-9)
    assert zh == pytest.approx(load_summary("anytext-zh"), abs=1e-9)


def test_summary_of_nothing_is_nan() -> None:
    assert all(math.isnan(value) for value in summary([]).values())


def test_metric_records_score_raw_pairs() -> None:
    assert METRICS.columns(["anytext"]) == ["anytext_sen_acc", "anytext_ned"]
    assert METRICS.summary_names(["anytext-zh"]) == ["anytext_sen_acc", "anytext_ned"]
    # The two subsets share their column names; the family decides the dictionary.
    assert METRICS.columns(["anytext-zh"]) == ["anytext_sen_acc", "anytext_ned"]
    for family, rows in (("anytext", EN_ROWS), ("anytext-zh", ZH_ROWS)):
        for metric in METRICS.of([family]):
            assert isinstance(metric.aggregate, Mean) and metric.reference
            assert metric.function is not None
            for row in rows:
                pair = SimpleNamespace(expected_raw=row["expected"], read_raw=row["read"])
                assert metric.function(pair) == pytest.approx(row[metric.name], abs=1e-9)


def test_dictionaries() -> None:
    printable = {chr(code) for code in range(0x21, 0x7F)}
    assert known_characters("en") == printable
    zh = known_characters("zh")
    assert len(zh) == 6623 and printable <= zh
    assert "\u3000" in zh and " " not in zh and "北" in zh
    # The set read from the installed recogniser is AnyText's ppocr_keys_v1.txt (its SHA-256,
    # sorted, one character a line, as the dictionary file glyphbench used to ship).
    listing = "\n".join(sorted(zh)).encode("utf-8")
    assert hashlib.sha256(listing).hexdigest() == (
        "c3a45fefe79c66f897381f931bb1809b77fe33140457e2ae767d6177f029bd3e"
    )
    assert MAX_LINE_CHARS == 20


# ------------------------------------------------------------------ properties

text = st.text(alphabet=st.sampled_from("aAb1 !é中\u3000\t"), max_size=12)
outside = st.sampled_from("é€\t\u00a0😀")


@settings(max_examples=200, deadline=None)
@given(text, text)
def test_ned_is_a_symmetric_similarity_in_0_1(expected: str, read: str) -> None:
    ned = anytext_ned(expected, read)
    assert 0 < ned <= 1
    assert ned == anytext_ned(read, expected)
    assert (ned == 1) == (dictionary_view(expected, "en") == dictionary_view(read, "en"))


@settings(max_examples=200, deadline=None)
@given(text, text)
def test_sentence_accuracy_implies_perfect_ned(expected: str, read: str) -> None:
    if anytext_sen_acc(expected, read):
        assert anytext_ned(expected, read) == 1 and anytext_zh_ned(expected, read) == 1
    assert anytext_sen_acc(expected, expected) == 1


@settings(max_examples=200, deadline=None)
@given(text, outside, outside)
def test_characters_outside_the_dictionary_are_interchangeable(
    expected: str, first: str, second: str
) -> None:
    read = expected + "x"
    assert anytext_ned(expected + first, read) == anytext_ned(expected + second, read)
    assert anytext_ned(expected + first, read) == anytext_ned(expected + " ", read)
