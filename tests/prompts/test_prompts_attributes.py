"""Attribute functions on hand-made examples, plus properties that must hold for any text."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glyphbench.prompts import attributes as A
from glyphbench.prompts.pool import fill_first_quoted, fill_placeholder, make_prompt_id


@pytest.mark.parametrize(
    ("text", "chars", "words"),
    [
        ("Hello, world!", 13, 2),
        (" m & m", 6, 3),
        ("7 - 4 = 3", 9, 5),
        ("", 0, 0),
        ("café au lait", 12, 3),
        ("two\tspaces  here", 16, 3),
    ],
)
def test_lengths(text: str, chars: int, words: int) -> None:
    assert A.char_length(text) == chars
    assert A.word_count(text) == words


@pytest.mark.parametrize(
    ("text", "numbers", "special"),
    [
        ("Hello world", False, False),
        ("500g", True, False),
        ("23:44", True, True),
        ("don't", False, True),
        ("6 + 5 = 11", True, True),
        ("half ½", True, False),
        ("résumé", False, False),
        ("win $500!", True, True),
        ("zero\u200bwidth", False, True),  # a format character is not a letter
        ("Ⅻ o'clock", True, True),
    ],
)
def test_character_classes(text: str, numbers: bool, special: bool) -> None:
    assert A.has_numbers(text) is numbers
    assert A.has_special_chars(text) is special


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Surround yourself with people who feel like sunshine.", True),
        ("Is not this a true autumn day? Just the still melancholy - George Eliot", True),
        ('He said "stop now!" and left', True),  # "!" then a closing quote then a space
        ("Keep calm and carry on", False),  # no sentence-ending mark
        ("Stop!", False),  # fewer than 3 words
        ("Pi is 3.14 exactly", False),  # a decimal point is not a sentence end
        ("Happy New Year…", True),
    ],
)
def test_is_sentence(text: str, expected: bool) -> None:
    assert A.is_sentence(text) is expected


@pytest.mark.parametrize(
    ("word", "expected"),
    [
        ("house", "common"),
        ("strengths", "common"),  # five consonants in a row, but frequent: never judged by letters
        ("unimaginatively", "rare"),
        ("kerfuffle", "rare"),
        ("Blopjero", "gibberish"),
        ("qezt", "gibberish"),
        ("a", "common"),  # too short to judge
    ],
)
def test_word_class(word: str, expected: str) -> None:
    assert A.word_class(word) == expected


def test_rare_and_gibberish_texts() -> None:
    assert A.is_rare("A kerfuffle at the market")
    assert not A.is_gibberish("A kerfuffle at the market")
    assert A.is_gibberish("Zuplorit Blopjero")
    assert not A.is_rare("Zuplorit Blopjero")
    # one invented brand name among ordinary words: not gibberish (needs a strict majority)
    assert not A.is_gibberish("Fresh bread from Blopjero")
    # half gibberish is not a majority
    assert not A.is_gibberish("Blopjero bakery")
    assert not A.is_gibberish("10:01 AM") and not A.is_rare("10:01 AM")


def test_pronounceable_rules() -> None:
    assert A.looks_pronounceable("window")
    assert not A.looks_pronounceable("tsktsk")  # no vowel
    assert not A.looks_pronounceable("brrrr")  # no vowel, triple letter
    assert not A.looks_pronounceable("qazi")  # q not followed by u
    assert not A.looks_pronounceable("fojxa")  # impossible pair "jx"
    assert A.looks_pronounceable("naïve")  # non-ASCII words are not judged


@pytest.mark.parametrize(
    ("text", "level"),
    [
        ("house", "A1"),
        ("HOUSE", "A1"),
        ("democracy", "B1"),
        ("a house of democracy", "B1"),  # the hardest known word
        ("Qezt 123", None),
        ("", None),
    ],
)
def test_cefr_level(text: str, level: str | None) -> None:
    assert A.cefr_level(text) == level


def test_cefr_multiword_is_max_of_words() -> None:
    words = ["house", "democracy", "run"]
    levels = [A.word_cefr(w) for w in words]
    assert all(lv is not None for lv in levels)
    expected = max(levels, key=lambda lv: A.CEFR_LEVELS.index(str(lv)))
    assert A.cefr_level(" ".join(words)) == expected


def test_compute_attributes_frame() -> None:
    frame = pd.DataFrame(
        {
            "text": ["house", "7 x 4 = 28", "house", None],
            "prompt": ['A sign "house"', 'A board "7 x 4 = 28"', 'Neon "house"', 'Empty ""'],
        }
    )
    out = A.compute_attributes(frame)
    assert out["char_length"].tolist()[:3] == [5, 10, 5]
    assert out["word_count"].tolist()[:3] == [1, 5, 1]
    assert out["has_numbers"].tolist()[:3] == [False, True, False]
    assert out["cefr"].iloc[0] == "A1"
    assert out["prompt_char_length"].tolist() == [14, 20, 12, 8]
    assert out["prompt_word_count"].tolist() == [3, 7, 2, 2]
    assert pd.isna(out["char_length"].iloc[3]) and pd.isna(out["cefr"].iloc[3])
    assert str(out["rare"].dtype) == "boolean" and str(out["char_length"].dtype) == "Int64"


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_properties_any_text(text: str) -> None:
    assert A.char_length(text) == len(text)
    assert A.word_count(text) == len(text.split())
    ascii_digit = any(c in "0123456789" for c in text)
    if ascii_digit:
        assert A.has_numbers(text)
    if A.is_sentence(text):
        assert A.word_count(text) >= 3
    level = A.cefr_level(text)
    assert level is None or level in A.CEFR_LEVELS
    # lowercase letters and spaces only: never a special character
    if all(c.isalpha() or c == " " for c in text):
        assert not A.has_special_chars(text)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=30))
def test_fill_first_quoted_inserts_text_literally(text: str) -> None:
    template = 'A board with the text "placeholder" and a "second" quote.'
    prompt = fill_first_quoted(template, text)
    assert prompt == f'A board with the text "{text}" and a "second" quote.'


def test_fill_functions_and_ids() -> None:
    # backslashes survive (re.sub with a replacement string would turn \n into a newline)
    assert fill_first_quoted('Say "x".', r"a\nb\1") == r'Say "a\nb\1".'
    assert fill_first_quoted("no quotes here", "t") == "no quotes here"
    assert fill_placeholder('Sign "{text}"', "{text}") == 'Sign "{text}"'
    assert make_prompt_id("default", "s001", "w1") == make_prompt_id("default", "s001", "w1")
    assert (
        len({make_prompt_id(k, t, x) for k in ("a", "b") for t in ("1", "2") for x in ("1", "2")})
        == 8
    )


@pytest.mark.parametrize(
    "module",
    ["attributes", "pool", "stratify", "audit", "freq", "sources", "stats", "textinvision"],
)
def test_docstring_examples(module: str) -> None:
    """The worked examples in the docstrings are true."""
    import doctest
    import importlib

    result = doctest.testmod(
        importlib.import_module(f"glyphbench.prompts.{module}"), optionflags=doctest.ELLIPSIS
    )
    assert result.failed == 0
    assert result.attempted > 0


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.text(alphabet="abAB .%-", min_size=1, max_size=5), min_size=1, max_size=6),
    st.lists(st.text(alphabet="abAB .%-_", max_size=25), max_size=8),
)
def test_corpus_counts_match_a_naive_regex(texts: list[str], captions: list[str]) -> None:
    """Token-set and automaton paths together equal a plain whole-word regex search."""
    import re

    from glyphbench.prompts.freq import count_in_corpus

    expected = []
    for text in texts:
        key = text.strip().lower()
        pattern = re.compile(rf"(?<![^\W_]){re.escape(key)}(?![^\W_])")
        expected.append(sum(1 for c in captions if key and pattern.search(c.lower())))
    assert count_in_corpus(texts, captions) == expected
