"""run_cli: what several test modules share.

Here rather than in one of them: a test module never imports another.
"""

from __future__ import annotations

import sys

import pytest


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``glyphbench ARGS`` in this process: exit code and what went to stderr."""
    from glyphbench.cli import main

    capsys.readouterr()
    saved = sys.argv
    sys.argv = ["glyphbench", *args]
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    finally:
        sys.argv = saved
    return code, capsys.readouterr().err
