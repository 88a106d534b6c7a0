"""The README's human-study walkthrough, run command by command as a new user would.

The commands are read from README.md itself, so the README cannot drift from the CLI.
`human serve` (a server waiting for people) is replaced by two simulated raters who
answer through the same rating service the app calls.
"""

from __future__ import annotations

import os
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from bench.cli.root import app

README = Path(__file__).resolve().parents[1] / "README.md"


def walkthrough() -> list[list[str]]:
    """The `glyphbench ...` commands of the README block that starts the study from the demo."""
    text = README.read_text(encoding="utf-8")
    block = text.split("A study from the demo:", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = []
    for line in block.splitlines():
        command = re.sub(r"\s+#.*$", "", line).strip()
        if command.startswith("glyphbench "):
            commands.append(shlex.split(command)[1:])
    return commands


def rate_as_two_people(study: Path) -> None:
    from human_eval.service import RatingService
    from human_eval.study import load_study

    service = RatingService(load_study(study))
    for _ in range(2):
        view = service.start(True)
        for k in range(10):
            if view.screen != "item":
                break
            answers = {name: ("Yes" if k % 3 else "No") for name in service.study.criterion_names}
            view = service.submit(view.code, view.image_id, answers)


@pytest.mark.slow
def test_readme_human_walkthrough_runs_command_by_command(tmp_path: Path) -> None:
    commands = walkthrough()
    assert [c[:2] for c in commands][:2] == [["demo", "--out"], ["human", "sample"]]
    runner = CliRunner()
    here = Path.cwd()
    os.chdir(tmp_path)
    try:
        for args in commands:
            if args[:2] == ["human", "serve"]:
                rate_as_two_people(Path(args[2]))
                continue
            result = runner.invoke(app, args)
            assert result.exit_code == 0, f"glyphbench {' '.join(args)}:\n{result.output}"
    finally:
        os.chdir(here)
    assert (tmp_path / "study" / "report" / "index.html").is_file()
    assert (tmp_path / "study" / "export" / "ratings.csv").is_file()
