"""``readers calibrate --where``: the filter is checked alone, as the user wrote it, before it
is joined to each language's condition (``lang == 'en' and (WHERE)``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from glyphbench.prompts.where import where_refusal
from tests.helpers.cli_errors import glyphbench, one_line


def _calibrate(tmp_path: Path, where: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    out = tmp_path / "card"
    code, err = glyphbench(
        ["readers", "calibrate", "--reader", "tesseract", "--out", out, "--where", where], capsys
    )
    assert not out.exists()
    return code, one_line(err)


def test_a_filter_that_would_escape_its_parentheses_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # joined, this reads "lang == 'en' and (kind == 'word') or (lang == 'zh')": Chinese
    # prompts in the English share, with no error
    where = "kind == 'word') or (lang == 'zh'"
    code, line = _calibrate(tmp_path, where, capsys)
    assert code == 2 and line.startswith("error: --where: not a filter expression"), line


def test_a_refusal_points_into_the_expression_as_given(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    where = "kind == == 'word'"
    code, line = _calibrate(tmp_path, where, capsys)
    assert code == 2 and line == f"error: --where: {where_refusal(where)}"
    assert "column 9" in line  # the second '==' of the expression given
