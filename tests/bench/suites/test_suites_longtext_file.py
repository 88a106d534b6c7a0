"""LongText-Bench's file, damaged one field at a time: each damage is one line naming the
file and its line (``suites/longtext.py``'s ``load_rows``), never a traceback nor a value
turned into other text (the released files hold integer ids and lists of strings)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from glyphbench.core.errors import InputError
from glyphbench.suites.base import resolve_suite

GOOD = {"prompt_id": 0, "prompt": 'A sign that says "OPEN NOW"', "text": ["OPEN", "NOW"]}


def _folder(tmp_path: Path, **damage: object) -> Path:
    lines = [GOOD, {**GOOD, "prompt_id": 1, **damage}]
    (tmp_path / "text_prompts.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8"
    )
    return tmp_path


@pytest.mark.parametrize(
    "damage, said",
    [
        ({"prompt_id": "zero"}, "'prompt_id' must be an integer, not 'zero'"),
        ({"prompt_id": 1.7}, "'prompt_id' must be an integer, not 1.7"),
        ({"prompt_id": True}, "'prompt_id' must be an integer, not True"),
        ({"text": [None, "A"]}, "'text' must be a list of strings"),
        ({"text": [123, "A"]}, "'text' must be a list of strings"),
        ({"prompt": ["a", "list"]}, "'prompt' must be a string"),
    ],
)
def test_a_damaged_field_is_refused_naming_its_line(
    tmp_path: Path, damage: dict[str, object], said: str
) -> None:
    folder = _folder(tmp_path, **damage)
    with pytest.raises(InputError) as info:
        resolve_suite("longtext:en").load_prompts(folder)
    message = str(info.value)
    assert "text_prompts.jsonl" in message and ":2" in message and said in message, message


def test_a_string_of_digits_is_an_id_as_the_benchmark_reads_it(tmp_path: Path) -> None:
    frame = resolve_suite("longtext:en").load_prompts(_folder(tmp_path, prompt_id="7")).frame
    assert list(frame["benchmark_id"]) == ["0", "7"]
    assert list(frame["text"]) == ["OPEN NOW", "OPEN NOW"]


def test_an_id_given_twice_is_refused_naming_the_suite_and_both_prompts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A line pasted twice: one line naming the suite, its subset and both prompts (the run
    named the default prompt set, `default: prompt_id values repeat`)."""
    from tests.helpers.cli_errors import glyphbench, one_line

    folder = _folder(tmp_path, prompt_id=0)
    with pytest.raises(InputError, match="benchmark id '0' is given to prompts 1 and 2"):
        resolve_suite("longtext:en").load_prompts(folder)
    args = ["run", "--suite", "longtext:en", "--data", folder, "-m", "control:render"]
    code, err = glyphbench([*args, "--out", tmp_path / "run", "--dry-run"], capsys)
    line = one_line(err)
    assert code == 2 and "suite longtext:en, subset en" in line and "default" not in line
    assert not (tmp_path / "run").exists()


def test_the_other_languages_file_under_this_subsets_name_is_refused(tmp_path: Path) -> None:
    """The English score splits words at spaces, the Chinese one counts characters: a file
    scored as the other language's gives numbers that mean nothing."""
    chinese = {**GOOD, "prompt": "一个写着“欢迎光临”的招牌", "text": ["欢迎光临"]}
    (tmp_path / "text_prompts.jsonl").write_text(
        "".join(json.dumps({**chinese, "prompt_id": i}) + "\n" for i in range(3)), "utf-8"
    )
    with pytest.raises(InputError, match="3 of 3 texts are Chinese: this is the zh subset's"):
        resolve_suite("longtext:en").load_prompts(tmp_path)
    (tmp_path / "text_prompts_zh.jsonl").write_text(
        "".join(json.dumps({**GOOD, "prompt_id": i}) + "\n" for i in range(3)), "utf-8"
    )
    with pytest.raises(InputError, match="3 of 3 texts are not Chinese: this is the en subset"):
        resolve_suite("longtext:zh").load_prompts(tmp_path)
    # one Chinese text of three, as a real English file might quote: not refused
    lines = [{**GOOD, "prompt_id": 0}, {**GOOD, "prompt_id": 1}, {**chinese, "prompt_id": 2}]
    (tmp_path / "text_prompts.jsonl").write_text(
        "".join(json.dumps(line) + "\n" for line in lines), "utf-8"
    )
    assert len(resolve_suite("longtext:en").load_prompts(tmp_path).frame) == 3
