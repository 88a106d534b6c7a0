"""Scoring engine: hand-computed values, agreement with plain DP, and properties."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glyphbench.scoring import (
    METRICS,
    SCORE_COLUMNS,
    Metric,
    algorithm1,
    anls,
    cer,
    edit_distance,
    exact_match,
    lcs_len,
    lom_len,
    ned,
    normalize,
    register_metric,
    score_pairs,
    wer,
    word_prf,
)
from tests.helpers.dp_reference import (
    dp_lcs,
    dp_levenshtein,
    dp_longest_common_substring,
    dp_scores,
)
from tests.helpers.scoring_contract import HISTORICAL_COLUMNS, assert_historical_contract

# Small alphabets make collisions (shared words, substrings) likely, which is where bugs hide.
letters = st.text(alphabet="abcAB ", max_size=14)
wordy = st.lists(st.sampled_from(["a", "ab", "ba", "cab", "Ab", "b"]), max_size=6).map(" ".join)
texts = st.one_of(letters, wordy, st.text(max_size=10))


# ----------------------------------------------------------------------------- normalisation


def test_normalize_paper_mode_casefolds_and_collapses_whitespace():
    assert normalize("  Hello \t\n WORLD  ") == "hello world"
    assert normalize("Straße") == "strasse"  # case folding, not just lower()


def test_normalize_options():
    assert normalize("Hello  World", keep_case=True) == "Hello World"
    assert normalize('"(Hello)," said_ Bob. ...', strip_punct=True) == "hello said bob"
    assert normalize("don't stop", strip_punct=True) == "don't stop"  # inner apostrophe stays


@given(texts)
def test_normalize_is_idempotent(text):
    once = normalize(text)
    assert normalize(once) == once
    assert "  " not in once and once == once.strip()


# ----------------------------------------------------------------------------- primitives


@pytest.mark.parametrize(
    ("a", "b", "distance", "lcs", "lom"),
    [
        ("kitten", "sitting", 3, 4, 3),  # k->s, e->i, +g ; LCS "ittn" ; "itt"
        ("", "abc", 3, 0, 0),
        ("flaw", "lawn", 2, 3, 3),  # -f, +n ; "law"
        ("digital", "dlgitoi", 3, 4, 3),  # i->l, a->o, l->i ; LCS "dgit" ; "git"
        ("dreamscapes", "draseampes", 4, 8, 3),
    ],
)
def test_primitives_hand_computed(a, b, distance, lcs, lom):
    assert edit_distance(a, b) == distance
    assert lcs_len(a, b) == lcs
    assert lom_len(a, b) == lom


@given(letters, letters)
def test_primitives_match_plain_dynamic_programming(a, b):
    assert edit_distance(a, b) == dp_levenshtein(a, b)
    assert lcs_len(a, b) == dp_lcs(a, b)
    assert lom_len(a, b) == dp_longest_common_substring(a, b)


@given(st.text(alphabet="ab c", max_size=60), st.text(alphabet="abc ", max_size=60))
@settings(max_examples=300)
def test_longest_match_on_long_texts_matches_plain_dynamic_programming(a, b):
    # Long texts exercise the search's jump past starts that cannot win.
    assert lom_len(a, b) == dp_longest_common_substring(a, b)


@given(letters, letters)
def test_primitives_symmetric_and_bounded(a, b):
    assert edit_distance(a, b) == edit_distance(b, a)
    assert lcs_len(a, b) == lcs_len(b, a)
    assert lom_len(a, b) == lom_len(b, a)
    assert abs(len(a) - len(b)) <= edit_distance(a, b) <= max(len(a), len(b))
    assert lom_len(a, b) <= lcs_len(a, b) <= min(len(a), len(b))


@given(letters)
def test_primitives_identity(a):
    assert edit_distance(a, a) == 0
    assert lcs_len(a, a) == lom_len(a, a) == len(a)


# ----------------------------------------------------------------------------- algorithm 1


def test_algorithm1_paper_example_digital_dreamscapes():
    # Two expected words, neither read exactly, so both remainders are the whole
    # strings: d("digital dreamscapes", "dlgitoi draseampes") = 3 + 0 (space) + 4.
    assert algorithm1("Digital Dreamscapes", "Dlgitoi Draseampes") == 7


def test_algorithm1_substring_is_zero_even_with_extra_text():
    assert algorithm1("Open", "WE ARE OPEN 24 HOURS") == 0


def test_algorithm1_single_word_picks_first_best_lcs_word():
    # "hallo" and "hullo" both share 4 characters with "hello": the first one wins.
    assert algorithm1("hello", "hxllo hallo") == 1
    assert algorithm1("hello", "xyz") == 5  # no shared character: compare with ""
    assert algorithm1("hello", "") == 5


def test_algorithm1_multi_word_removes_matches_once():
    # "the" matched once on each side; the second "the" stays in the expected remainder.
    # remainders: "the cat" vs "hat" -> d = 5 ("the c" deleted... computed by DP below)
    assert algorithm1("the the cat", "the hat") == dp_levenshtein("the cat", "hat")
    assert algorithm1("red blue", "blue red") == 0 + dp_levenshtein("", "")


@given(texts, texts)
@settings(max_examples=300)
def test_algorithm1_bounded_by_whole_string_distance_plus_length(expected, ocr):
    e, o = normalize(expected), normalize(ocr)
    assert 0 <= algorithm1(expected, ocr) <= edit_distance(e, o) + len(e)


@given(texts)
def test_algorithm1_identity_is_zero(text):
    assert algorithm1(text, text) == 0


# ----------------------------------------------------------------------------- peer metrics


def test_peer_metrics_hand_computed():
    assert ned("hello", "hallo") == pytest.approx(0.8)
    assert ned("", "") == 1.0
    assert ned("abc", "") == 0.0
    assert anls("hello", "hallo") == pytest.approx(0.8)
    assert anls("hello", "help me") == 0.0  # nl = 4/7 >= 0.5
    assert anls("abcd", "abxy") == 0.0  # nl = 0.5 is not < 0.5
    assert anls(["colour", "color"], "COLOR") == 1.0
    assert exact_match("Hello  World", "hello world")
    assert not exact_match("Hello", "Hello!")
    p, r, f = word_prf("the cat the hat", "the the cat sat dog")
    assert (p, r) == (pytest.approx(3 / 5), pytest.approx(3 / 4))
    assert f == pytest.approx(2 * 0.6 * 0.75 / 1.35)
    assert word_prf("", "") == (1.0, 1.0, 1.0)
    assert word_prf("a", "") == (0.0, 0.0, 0.0)
    assert cer("hello", "hallo") == pytest.approx(0.2)
    assert cer("ab", "abcdef") == pytest.approx(2.0)  # can exceed 1
    assert cer("", "x") == 1.0 and cer("", "") == 0.0
    assert wer("the cat sat", "the bat sat down") == pytest.approx(2 / 3)


@given(texts, texts)
def test_peer_metric_bounds_and_symmetry(expected, ocr):
    assert 0.0 <= ned(expected, ocr) <= 1.0
    assert ned(expected, ocr) == pytest.approx(ned(ocr, expected))
    assert 0.0 <= anls(expected, ocr) <= 1.0
    for value in word_prf(expected, ocr):
        assert 0.0 <= value <= 1.0
    assert cer(expected, ocr) >= 0 and wer(expected, ocr) >= 0


@given(texts)
def test_peer_metrics_identity(text):
    assert ned(text, text) == 1.0
    assert anls(text, text) == 1.0
    assert exact_match(text, text)
    assert word_prf(text, text)[2] == 1.0
    assert cer(text, text) == 0.0 and wer(text, text) == 0.0


# ----------------------------------------------------------------------------- score_pairs


@pytest.mark.slow
@given(st.lists(st.tuples(texts, texts), max_size=8))
@settings(max_examples=150)
def test_score_pairs_matches_plain_dp_for_every_column(pairs):
    assert_plain_dp(pairs)


def assert_plain_dp(pairs: list[tuple[str, str]]) -> None:
    """The default columns (read from the metric table now, so a metric added to the
    ``glyphbench`` family is one of them) agree with plain DP on every column it knows;
    it knows every column of the historical contract."""
    frame = score_pairs([e for e, _ in pairs], [o for _, o in pairs])
    assert list(frame.columns) == METRICS.columns(["glyphbench"], inputs="text")
    assert len(frame) == len(pairs)
    for row, (e, o) in zip(frame.to_dict("records"), pairs, strict=True):
        oracle = dp_scores(e, o)
        assert set(HISTORICAL_COLUMNS) <= set(oracle)
        for column in frame.columns.intersection(list(oracle)):
            assert math.isclose(float(row[column]), float(oracle[column]), abs_tol=1e-12), column


def test_a_metric_added_to_the_glyphbench_family_is_one_call_and_one_test():
    """docs/metrics.md's recipe for the default family: register_metric(...) and the
    metric's own test; the contract and plain-DP tests above keep passing with it."""
    toy = register_metric(
        Metric(
            "toy_glyph_chars",
            lambda pair: len(pair.read_raw),
            label="Characters read (toy)",
            higher_is_better=True,
            doc="Characters the reader returned, untouched.",
            family="glyphbench",
            dtype="int64",
        )
    )
    try:
        pairs = [("Hello", "HELL0 there"), ("ab", ""), ("欢迎", "欢迎")]
        assert_plain_dp(pairs)
        assert_historical_contract()
        frame = score_pairs([e for e, _ in pairs], [o for _, o in pairs])
        assert list(frame.columns)[-1] == "toy_glyph_chars"
        assert frame["toy_glyph_chars"].tolist() == [11, 0, 2]
    finally:
        METRICS.remove(toy.name)
    assert "toy_glyph_chars" not in score_pairs(["a"], ["a"]).columns


def test_score_pairs_missing_values_are_empty_strings():
    frame = score_pairs(["hello", None, float("nan")], [None, "", "nan"])
    assert frame["algorithm1"].tolist() == [5, 0, 0]  # "" is a substring of anything
    assert frame["exact_match"].tolist() == [False, True, False]


def test_score_pairs_options_and_errors():
    assert score_pairs(["Hello"], ["hello"], keep_case=True)["exact_match"].item() is False
    assert score_pairs(["Hello!"], ["hello"], strip_punct=True)["exact_match"].item() is True
    with pytest.raises(ValueError, match="items"):
        score_pairs(["a", "b"], ["a"])
    with pytest.raises(TypeError, match="keepcase"):  # the options are ScoreOptions' keys
        score_pairs(["a"], ["a"], keepcase=True)  # type: ignore[call-arg]
    with pytest.raises(ValueError, match="compat"):
        score_pairs(["a"], ["a"], compat="paper")  # type: ignore[arg-type]
    empty = score_pairs([], [])
    assert list(empty.columns) == list(SCORE_COLUMNS) and empty.empty


# ----------------------------------------------------------------------------- scripts


#: Han and kana mixed with Latin words: where a per-character rule and word splitting differ.
cjk_texts = st.lists(
    st.sampled_from(["欢", "迎", "光", "临", "ア", "open", "Go", " ", "  ", "24", "。"]), max_size=8
).map("".join)


def test_chinese_worked_example_of_docs_metrics_md():
    row = score_pairs(["欢迎光临"], ["欢迎 光顾本店"]).iloc[0]
    expected = {
        "algorithm1": 3,
        "edit_distance": 3,
        "lcs_len": 3,
        "lom_len": 3,
        "ned": 0.5,
        "anls": 0.0,
        "exact_match": False,
        "word_precision": 0.5,
        "word_recall": 0.75,
        "word_f1": 0.6,
        "cer": 0.75,
        "wer": 0.75,
    }
    assert {column: row[column] for column in expected} == pytest.approx(expected)


def test_chinese_is_scored_per_character_and_spaces_beside_han_do_not_count():
    # A reader that splits a line into boxes inserts spaces the text never had.
    row = score_pairs(["你好世界"], ["你好 世界"]).iloc[0]
    assert bool(row.exact_match) and row.ned == 1.0 and row.wer == 0.0
    # One wrong character of four: a quarter of the tokens, not the whole "word".
    row = score_pairs(["你好世界"], ["你好世介"]).iloc[0]
    assert row.word_recall == pytest.approx(0.75) and row.wer == pytest.approx(0.25)
    # Mixed scripts: Latin words stay words, each Han character is a token.
    row = score_pairs(["扫码 scan me"], ["扫码scan mi"]).iloc[0]
    assert row.word_recall == pytest.approx(3 / 4) and row.edit_distance == 1


def test_latin_scores_do_not_change_with_the_script_rule():
    # Same numbers as before the per-character rule (pinned by the hand-computed tests above).
    row = score_pairs(["Digital Dreamscapes"], ["Dlgitoi Draseampes"]).iloc[0]
    assert (row.algorithm1, row.edit_distance, row.lcs_len, row.wer) == (7, 7, 13, 1.0)


def test_nfkc_and_width_folding_are_options():
    full_width = "\uff33\uff21\uff2c\uff25\u3000\uff15\uff10\uff05"  # full-width "SALE 50%"
    assert not score_pairs(["SALE 50%"], [full_width])["exact_match"].item()
    assert score_pairs(["SALE 50%"], [full_width], fold_width=True)["exact_match"].item()
    assert score_pairs(["SALE 50%"], [full_width], nfkc=True)["exact_match"].item()
    # NFKC also unpacks ligatures and circled digits; width folding does not.
    assert score_pairs(["file 1"], ["ﬁle ①"], nfkc=True)["exact_match"].item()
    assert not score_pairs(["file 1"], ["ﬁle ①"], fold_width=True)["exact_match"].item()
    # Width folding keeps CJK punctuation: 。 is not a full-width full stop.
    assert normalize("好。", fold_width=True) == "好。"


@pytest.mark.slow
@given(st.lists(st.tuples(cjk_texts, cjk_texts), max_size=6))
@settings(max_examples=150)
def test_mixed_script_scores_match_plain_dp(pairs):
    assert_plain_dp(pairs)
