"""``run --dry-run`` refuses the selections the run refuses (``check_selection``): the plan
never promises what the run will not do."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli_errors import glyphbench, one_line


@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]])
def test_an_empty_selection_is_refused_with_and_without_dry_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dry_run: list[str]
) -> None:
    csv = tmp_path / "w.csv"
    csv.write_text("prompt,text\n", encoding="utf-8")
    args = ["run", "--prompts", f"csv:{csv}", "-m", "control:render", "--out", tmp_path / "o"]
    code, err = glyphbench([*args, *dry_run], capsys)
    assert code == 2
    assert one_line(err) == f"error: csv:{csv}: the prompt selection is empty"
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]])
def test_a_repeated_prompt_id_is_refused_with_and_without_dry_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dry_run: list[str]
) -> None:
    csv = tmp_path / "d.csv"
    csv.write_text('prompt_id,prompt,text\np1,"say ""a""",a\np1,"say ""b""",b\n', encoding="utf-8")
    args = ["run", "--prompts", f"csv:{csv}", "-m", "control:render", "--out", tmp_path / "o"]
    code, err = glyphbench([*args, *dry_run], capsys)
    assert code == 2 and "p1" in one_line(err)
    assert not (tmp_path / "o").exists()
