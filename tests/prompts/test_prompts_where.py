"""``--where`` and a run config's ``where:``: pandas would run any code an expression names,
so only the listed forms pass (:mod:`glyphbench.prompts.where`), and a refused one runs nothing.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import pytest

from glyphbench.core.errors import InputError
from glyphbench.prompts.schema import PromptSet
from glyphbench.prompts.selection import select
from glyphbench.prompts.where import where_problem
from tests.helpers.cli_errors import glyphbench, one_line


def _hostile(marker: Path) -> list[str]:
    """Expressions that, evaluated by pandas' query, would create ``marker`` or reach code."""
    touch = f"'touch {marker}'"
    return [
        f"@pd.io.common.os.system({touch}) == 0",
        f"text.str.len() > @pd.io.common.os.system({touch})",
        f"__pd_eval_local_pd.io.common.os.system({touch}) == 0",
        "text.__class__ == 1",
        "text.str.len.__globals__ == 1",
        "text.str.__class__.__init__.__globals__ == 1",
        "text.values == 1",
        f"pd.io.common.os.system({touch}) == 0",
        f"__import__('os').system({touch}) == 0",
        f"(lambda: __import__('os').system({touch}))() == 0",
        "[c for c in text] == 1",
        "{c: 1 for c in text} == 1",
        f"getattr(text, 'str') == {touch}",
        f"text.str.cat(sep={touch}) == 'x'",
        "text[0] == 'x'",
        "text.str.len() @ 2",
        f"`text` == {touch}",
        "text.str.contains(**{'pat': 'x'})",
        "abs(*text)",
        "word_count ** 2 ** 100 > 1",  # a power of a power would compute for ever
        "word_count ** word_count > 1",
    ]


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "prompt_id": ["a", "b", "c"],
            "prompt": ['a sign "hi"', 'a mug "Yo yo"', 'a cup "42"'],
            "text": ["hi", "Yo yo", "42"],
            "word_count": [1, 2, 1],
            "cefr": ["A1", "B2", None],
        }
    )


@pytest.mark.parametrize(
    "where, ids",
    [
        ("cefr == 'A1' and word_count <= 2", ["a"]),
        ("text.str.len() <= 2", ["a", "c"]),
        ("text.str.contains('yo', case=False) or text.str.isdigit()", ["b", "c"]),
        ("prompt_id in ['a', 'c'] and not word_count > 1", ["a", "c"]),
        ("~(word_count == 1) | (text == 'hi')", ["a", "b"]),
        (
            "abs(word_count - 3) ** 2 >= 4 and 1 <= word_count < 3 and word_count < 10**6",
            ["a", "c"],
        ),
    ],
)
def test_the_documented_forms_still_select(where: str, ids: list[str]) -> None:
    chosen = select(PromptSet(_frame(), source="t"), where=where)
    assert chosen.frame["prompt_id"].tolist() == ids


@pytest.mark.parametrize("index", range(len(_hostile(Path("x")))))
def test_a_hostile_expression_is_refused_and_runs_nothing(tmp_path: Path, index: int) -> None:
    marker = tmp_path / "PWNED"
    where = _hostile(marker)[index]
    with pytest.raises(InputError) as info:
        select(PromptSet(_frame(), source="t"), where=where)
    assert str(info.value).startswith("--where: ")
    assert "a filter may use only column names" in str(info.value)
    assert "\n" not in str(info.value)
    assert not marker.exists()


def test_the_refusal_names_the_part_that_is_not_allowed() -> None:
    assert where_problem("text.__class__ == 1") == "'text.__class__' is not allowed"
    assert where_problem("@pd.x == 1") == "'@' (a reference to a Python variable) is not allowed"
    assert where_problem("text == '@pd'") is None  # an '@' inside a string is data
    assert where_problem("len(text) > 1") == "'len(text)' is not allowed"


def _select(
    tmp_path: Path, where: str, capsys: pytest.CaptureFixture[str]
) -> tuple[int, str, Path]:
    """``prompts select`` of the frame's CSV with ``where``: exit code, stderr, its --out."""
    csv = tmp_path / "ok.csv"
    _frame()[["prompt", "text"]].to_csv(csv, index=False)
    out = tmp_path / "o.csv"
    args = ["prompts", "select", f"csv:{csv}", "--out", out, "--where", where]
    code, err = glyphbench(args, capsys)
    return code, err, out


def test_prompts_select_refuses_the_reported_expression_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "PWNED"
    where = f"@pd.io.common.os.system('touch {marker}') == 0"
    code, err, out = _select(tmp_path, where, capsys)
    assert code == 2
    assert one_line(err).startswith("error: --where: '@' (a reference to a Python variable)")
    assert not marker.exists() and not out.exists()


@pytest.mark.parametrize(
    "pattern, risk",
    [
        ("(a+)+$", "repeats a repetition"),
        (r"(\w+\s?)*!", "repeats a repetition"),
        ("(?:a+){2,100}", "repeats a repetition"),
        ("(?=a+)+b", "repeats a repetition"),
        ("(a|aa)+$", "repeats a choice of alternatives"),
        (r"(a)\1", "uses a back-reference"),
        ("x" * 201, "is longer than 200 characters"),
        ("(", "is not a regular expression"),
    ],
)
def test_a_pattern_that_backtracks_exponentially_is_refused(pattern: str, risk: str) -> None:
    where = f"text.str.contains({pattern!r})"
    with pytest.raises(InputError) as info:
        select(PromptSet(_frame(), source="t"), where=where)
    message = str(info.value)
    assert message.startswith("--where: the pattern ") and risk in message, message
    assert "\n" not in message


@pytest.mark.parametrize(
    "method",
    ["contains", "match", "fullmatch", "count"],
)
def test_every_method_that_takes_a_regular_expression_is_checked(method: str) -> None:
    assert "repeats a repetition" in (where_problem(f"text.str.{method}('(a+)+$') > 0") or "")
    assert where_problem(f"text.str.{method}('[a-z]+$') > 0") is None


@pytest.mark.parametrize(
    "where, ids",
    [
        ("text.str.contains('(a+)+', regex=False)", []),  # a plain substring: nothing to fear
        ("text.str.startswith('(a+)+')", []),  # startswith takes no pattern
        ("text.str.contains('^[A-Za-z]+ ?[a-z]{0,3}$')", ["a", "b"]),
        ("text.str.match('[0-9]{2}')", ["c"]),
        ("text.str.contains('(?:yo ?){1,3}', case=False)", ["b"]),  # bounded: polynomial
    ],
)
def test_patterns_without_those_shapes_still_select(where: str, ids: list[str]) -> None:
    chosen = select(PromptSet(_frame(), source="t"), where=where)
    assert chosen.frame["prompt_id"].tolist() == ids


@pytest.mark.skipif(sys.version_info < (3, 11), reason="possessive and atomic forms: Python 3.11+")
def test_possessive_and_atomic_repetitions_pass() -> None:
    assert where_problem("text.str.contains('(?>a+)+$')") is None
    assert where_problem("text.str.contains('(?:a++)+$')") is None


def test_a_pattern_that_is_not_a_literal_is_refused() -> None:
    problem = where_problem("text.str.contains(prompt)")
    assert problem == "the pattern of contains() must be a string literal"


def test_prompts_select_refuses_a_runaway_pattern_before_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err, out = _select(tmp_path, "text.str.match('(a+)+$')", capsys)
    assert code == 2
    line = one_line(err)
    assert line.startswith("error: --where: the pattern '(a+)+$' repeats a repetition"), line
    assert "repeat once" in line and not out.exists()
