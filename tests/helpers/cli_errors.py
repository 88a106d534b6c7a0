"""glyphbench, one_line: what several test modules share.

Here rather than in one of them: a test module never imports another.
"""

from __future__ import annotations

import sys

import pytest


def glyphbench(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    from glyphbench.cli import main

    capsys.readouterr()
    saved = sys.argv
    sys.argv = ["glyphbench", *map(str, args)]
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    finally:
        sys.argv = saved
    return code, capsys.readouterr().err


def one_line(err: str) -> str:
    lines = err.strip("\n").splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert "Traceback" not in err
    return lines[0]
