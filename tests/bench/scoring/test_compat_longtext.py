"""LongText-Bench text score (families longtext, longtext-zh) against the original's outputs."""

from __future__ import annotations

import json
import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glyphbench.scoring.longtext import (
    FAMILY_LANGUAGE,
    FAMILY_METRICS,
    longtext_counts,
    longtext_recall,
    longtext_summary,
)
from glyphbench.scoring.table import METRICS
from tests.helpers.compat_data import load_rows, load_summary
from tests.helpers.compat_vlm import aggregate, per_image_columns
from tests.helpers.paths import SHARED

FAMILIES = ["longtext", "longtext-zh"]
PAIR_COLUMNS = ["longtext_recall", "longtext_matched", "longtext_total"]
PROMPTS = SHARED / "longtext-bench"


def our_values(expected: str, read: str, family: str) -> dict[str, float]:
    language = FAMILY_LANGUAGE[family]
    matched, total = longtext_counts(expected, read, language)
    return {
        "longtext_recall": longtext_recall(expected, read, language),
        "longtext_matched": matched,
        "longtext_total": total,
    }


def same_value(ours: float, recorded: float | None) -> bool:
    """The original raises where the ground truth is empty; the data records None there."""
    if recorded is None:
        return math.isnan(ours)
    return ours == pytest.approx(recorded, abs=1e-9)


@pytest.mark.parametrize("family", FAMILIES)
def test_every_pair_matches_the_original(family):
    rows = load_rows(family)
    assert len(rows) >= 40
    for row in rows:
        ours = our_values(row["expected"], row["read"], family)
        for column in PAIR_COLUMNS:
            assert same_value(ours[column], row[column]), (row["note"], column)
        assert (row["longtext_recall"] is None) == ("original_error" in row)


@pytest.mark.parametrize("family", FAMILIES)
def test_summary_matches_the_original(family):
    rows = [our_values(row["expected"], row["read"], family) for row in load_rows(family)]
    assert longtext_summary(rows) == pytest.approx(load_summary(family), abs=1e-9)


@pytest.mark.parametrize("family", FAMILIES)
def test_metric_records_reproduce_columns_and_summary(family):
    metrics = FAMILY_METRICS[family]
    rows = load_rows(family)
    columns = per_image_columns(metrics, rows)
    for row, values in zip(rows, columns, strict=True):
        assert list(values) == PAIR_COLUMNS
        assert all(same_value(values[c], row[c]) for c in PAIR_COLUMNS), row["note"]
    totals = aggregate(metrics, columns)
    assert [metric.name for metric in metrics if metric.summary] == ["longtext_text_score"]
    assert totals["longtext_text_score"] == pytest.approx(
        load_summary(family)["longtext_text_score"], abs=1e-9
    )
    # Per-image recall pools the same way; its plain mean would differ on this data.
    assert totals["longtext_recall"] == totals["longtext_text_score"]


def test_the_english_family_is_in_the_shared_table():
    assert METRICS.columns(["longtext"]) == PAIR_COLUMNS
    assert all(metric.family == "longtext-zh" for metric in FAMILY_METRICS["longtext-zh"])


def test_the_family_not_the_text_decides_the_language():
    # English scoring lower-cases and splits words; Chinese keeps case and counts characters.
    assert longtext_counts("OPEN NOW", "open now", "en") == (2, 2)
    assert longtext_counts("OPEN NOW", "open now", "zh") == (0, 7)
    assert longtext_counts("你好 世界", "你好世界", "en") == (0, 2)


WORDS = st.lists(st.sampled_from(["open", "Daily", "CAFÉ", "5G", "sale", "技术"]), max_size=8)


@settings(max_examples=200, deadline=None)
@given(WORDS, WORDS, st.randoms(use_true_random=False))
def test_english_recall_ignores_order_case_and_spacing(truth, read, rng):
    expected, answer = " ".join(truth), " ".join(read)
    shuffled = read[:]
    rng.shuffle(shuffled)
    variant = "\n\t ".join(word.upper() for word in shuffled)
    assert longtext_counts(expected, variant) == longtext_counts(expected, answer)
    matched, total = longtext_counts(expected, answer)
    assert 0 <= matched <= total == len(truth)


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("上海欢迎你AIai12 \uff0c\u3002")), max_size=20))
def test_chinese_self_read_is_complete(text):
    matched, total = longtext_counts(text, text, "zh")
    assert matched == total


@pytest.mark.parametrize(
    ("name", "family"),
    [("text_prompts.jsonl", "longtext"), ("text_prompts_zh.jsonl", "longtext-zh")],
)
def test_every_real_prompt_has_units_and_a_perfect_read_scores_one(name, family):
    path = PROMPTS / name
    if not path.exists():
        pytest.skip(f"LongText-Bench prompts not found at {path}")
    with open(path, encoding="utf-8") as handle:
        prompts = [json.loads(line) for line in handle]
    assert len(prompts) == 160
    rng = random.Random(0)
    for prompt in prompts:
        expected = " ".join(prompt["text"])
        lines = prompt["text"][:]
        rng.shuffle(lines)  # a reader may list the spans in any order
        values = our_values(expected, "\n".join(lines), family)
        assert values["longtext_total"] > 0, prompt["prompt_id"]
        assert values["longtext_recall"] == 1.0, prompt["prompt_id"]
