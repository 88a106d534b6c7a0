"""``--where`` and a run config's ``where:``: pandas would run any code an expression names,
so only the listed forms pass (:mod:`glyphbench.prompts.where`), and a refused one runs nothing.
"""

from __future__ import annotations

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


def test_prompts_select_refuses_the_reported_expression_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = tmp_path / "ok.csv"
    _frame()[["prompt", "text"]].to_csv(csv, index=False)
    marker = tmp_path / "PWNED"
    where = f"@pd.io.common.os.system('touch {marker}') == 0"
    out = tmp_path / "o.csv"
    code, err = glyphbench(
        ["prompts", "select", f"csv:{csv}", "--out", out, "--where", where], capsys
    )
    assert code == 2
    assert one_line(err).startswith("error: --where: '@' (a reference to a Python variable)")
    assert not marker.exists() and not out.exists()
