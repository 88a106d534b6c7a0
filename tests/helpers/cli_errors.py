"""glyphbench, one_line: what several test modules share.

Here rather than in one of them: a test module never imports another.
"""

from __future__ import annotations

import pytest

from tests.helpers.cli_runs import invoke_cli


def glyphbench(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``glyphbench ARGS`` in this process: exit code and stderr."""
    code, _out, err = invoke_cli(args, capsys)
    return code, err


def one_line(err: str) -> str:
    lines = err.strip("\n").splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]
