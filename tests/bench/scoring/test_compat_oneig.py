"""OneIG-Bench text score (families oneig, oneig-zh) against the original scorer's outputs."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glyphbench.scoring.oneig import (
    FAMILY_METRICS,
    MAX_EDIT_DISTANCE,
    oneig_counts,
    oneig_cr,
    oneig_ed,
    oneig_normalize,
    oneig_summary,
    oneig_text_score,
    oneig_wac,
)
from glyphbench.scoring.table import METRICS
from tests.helpers.compat_data import load_rows, load_summary
from tests.helpers.compat_vlm import aggregate, per_image_columns

FAMILIES = ["oneig", "oneig-zh"]
PAIR_COLUMNS = ["oneig_ed", "oneig_cr", "oneig_wac", "oneig_wac_matched", "oneig_wac_total"]
SUMMARY_KEYS = ["oneig_ed", "oneig_cr", "oneig_wac", "oneig_text_score"]


def our_values(expected: str, read: str) -> dict[str, float]:
    counts = oneig_counts(expected, read)
    return {
        "oneig_ed": oneig_ed(expected, read),
        "oneig_cr": oneig_cr(expected, read),
        "oneig_wac": oneig_wac(expected, read),
        "oneig_wac_matched": counts.matched,
        "oneig_wac_total": counts.total,
    }


@pytest.mark.parametrize("family", FAMILIES)
def test_every_pair_matches_the_original(family):
    rows = load_rows(family)
    assert len(rows) >= 40
    for row in rows:
        ours = our_values(row["expected"], row["read"])
        for column in PAIR_COLUMNS:
            assert ours[column] == pytest.approx(row[column], abs=1e-9), (row["note"], column)


@pytest.mark.parametrize("family", FAMILIES)
def test_summary_matches_the_original(family):
    rows = [our_values(row["expected"], row["read"]) for row in load_rows(family)]
    ours = oneig_summary(rows, family)
    expected = load_summary(family)
    assert list(ours) == SUMMARY_KEYS == list(expected)
    assert ours == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("family", FAMILIES)
def test_metric_records_reproduce_columns_and_summary(family):
    metrics = FAMILY_METRICS[family]
    rows = load_rows(family)
    columns = per_image_columns(metrics, rows)
    for row, values in zip(rows, columns, strict=True):
        assert list(values) == PAIR_COLUMNS
        assert values == pytest.approx({c: row[c] for c in PAIR_COLUMNS}, abs=1e-9)
    totals = aggregate(metrics, columns)
    summary_names = [metric.name for metric in metrics if metric.summary]
    assert summary_names == SUMMARY_KEYS
    assert {name: totals[name] for name in summary_names} == pytest.approx(
        load_summary(family), abs=1e-9
    )


def test_the_english_family_is_in_the_shared_table():
    assert METRICS.columns(["oneig"]) == PAIR_COLUMNS
    assert METRICS.get("oneig_text_score").family == "oneig"
    assert all(metric.family == "oneig-zh" for metric in FAMILY_METRICS["oneig-zh"])


def test_the_cap_is_active_in_the_chinese_data_and_not_in_the_english():
    # Both branches of min(M, ED) are exercised by the recorded summaries.
    assert load_summary("oneig")["oneig_ed"] < MAX_EDIT_DISTANCE["oneig"]
    assert load_summary("oneig-zh")["oneig_ed"] > MAX_EDIT_DISTANCE["oneig-zh"]


def test_summary_of_no_images_is_nan():
    assert all(math.isnan(value) for value in oneig_summary([], "oneig").values())


SPAN = st.text(
    alphabet=st.sampled_from(list("abAB09 ,.'\"\\\n\t\u00a0\u3000\u200béÉñ技术你好\uff01")),
    max_size=12,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(SPAN, max_size=4))
def test_joined_spans_score_like_the_list_literal_oneig_stores(spans):
    # OneIG scores its CSV cell, the spans typed inside a list literal; the contract gives
    # " ".join(spans). Same filtered text, whatever the spans hold.
    literal = "[" + ", ".join(f"'{span}'" for span in spans) + "]"
    assert oneig_normalize(" ".join(spans)) == oneig_normalize(literal)


TEXT = st.text(alphabet=st.sampled_from(list("abcXYZ09 ,.!éÇ技术你好\n\t")), max_size=30)


@settings(max_examples=300, deadline=None)
@given(TEXT, TEXT)
def test_per_image_values_are_consistent(expected, read):
    counts = oneig_counts(expected, read)
    assert oneig_cr(expected, read) == float(counts.edit_distance == 0)
    assert 0 <= counts.matched <= counts.total
    assert 0.0 <= oneig_wac(expected, read) <= 1.0
    if expected.isprintable():  # repr escapes nothing: a perfect read is complete
        assert oneig_ed(expected, expected) == 0.0


def test_characters_of_the_truth_count_as_the_file_types_them():
    # OneIG filters its CSV cell as it is. A line break or a no-break space in it is
    # whitespace; only an escape typed as text ("\\n", "\\xa0") leaves its letters behind.
    assert oneig_ed("Deep\nLearning", "Deep Learning") == 0.0
    assert oneig_ed("Hello\u00a0World", "Hello World") == 0.0
    assert oneig_ed("Hello\u00a0World", "Helloxa0World") == 3.0  # space -> x, then a and 0 inserted
    assert oneig_ed("Deep\\nLearning", "DeepnLearning") == 0.0
    assert oneig_ed("Hello\\xa0World", "Helloxa0World") == 0.0


@settings(max_examples=200, deadline=None)
@given(
    st.floats(0, 1000),
    st.floats(0, 1),
    st.floats(0, 1),
    st.sampled_from(sorted(MAX_EDIT_DISTANCE.values())),
)
def test_text_score_is_capped_and_bounded(ed, cr, wac, cap):
    score = float(oneig_text_score(ed, cr, wac, max_distance=cap))
    assert 0.0 <= score <= 1.0
    capped = float(oneig_text_score(min(ed, cap), cr, wac, max_distance=cap))
    assert score == capped


def test_whitespace_runs_in_an_english_read_do_not_matter():
    assert our_values("Line one Line two", "Line one\n\n Line\ttwo ") == our_values(
        "Line one Line two", "Line one Line two"
    )
