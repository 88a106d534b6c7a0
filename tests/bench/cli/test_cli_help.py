"""Help texts a new user reads in an 80-column terminal: nothing cut ("…"), nothing
overflowing, and the prompt sources they list are the registered ones."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from glyphbench.cli.root import app
from glyphbench.core.registry import PLUGINS

#: Commands whose --help a new user reads first (and the two that were cut).
HELPS = [
    ["--help"],
    ["run", "--help"],
    ["report", "--help"],
    ["vae-eval", "--help"],
    ["score", "--help"],
    ["list", "--help"],
    ["prompts", "--help"],
    ["prompts", "select", "--help"],
    ["human", "stats", "--help"],
]


def _at_80(args: list[str]) -> str:
    result = CliRunner().invoke(app, args, env={"COLUMNS": "80", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("args", HELPS, ids=" ".join)
def test_help_fits_80_columns_and_cuts_nothing(args: list[str]) -> None:
    text = _at_80(args)
    assert "…" not in text
    assert "``" not in text  # reST markup is not rendered: it showed as typed
    assert max(len(line) for line in text.splitlines()) <= 80


@pytest.mark.parametrize("section", ["metrics", "readers", "suites", None])
def test_list_fits_80_columns(section: str | None) -> None:
    text = _at_80(["list"] if section is None else ["list", section])
    too_long = [line for line in text.splitlines() if len(line) > 80]
    assert not too_long, too_long[:3]


def test_help_texts_name_every_registered_prompt_source() -> None:
    # glyphbench's own sources: a test module's toy may be registered in this worker too
    kinds = [p.name for p in PLUGINS.entries("sources") if p.module.startswith("glyphbench.")]
    assert {"textcaps", "vizwiz", "textinvision", "default"} <= set(kinds)
    for args in (["prompts", "--help"], ["run", "--help"]):
        text = " ".join(_at_80(args).split())  # the help as one line, box drawing aside
        for kind in kinds:
            assert f"{kind}:" in text or f"{kind}[" in text, (args, kind)


def test_each_command_summary_is_one_line_of_its_docstring() -> None:
    """``glyphbench --help`` shows a docstring's first paragraph: a line break inside it
    breaks the command's one-line summary mid-sentence at 80 columns."""
    import inspect

    import typer.main

    group = typer.main.get_group(app)
    broken = []
    for name, command in group.commands.items():
        for sub_name, sub in getattr(command, "commands", {name: command}).items():
            doc = inspect.getdoc(sub.callback) if sub.callback else None
            if doc and "\n" in doc.split("\n\n")[0]:
                broken.append(f"{name} {sub_name}".strip())
    assert not broken, broken
