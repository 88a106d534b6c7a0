"""run_cli: what several test modules share.

Here rather than in one of them: a test module never imports another.
"""

from __future__ import annotations

import sys

import pytest


def invoke_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``glyphbench ARGS`` in this process, as the console script runs it (``main``, so its
    exit codes and one-line errors): exit code, stdout and stderr."""
    import signal

    from glyphbench.cli import main

    capsys.readouterr()
    saved, handler = sys.argv, signal.getsignal(signal.SIGINT)
    sys.argv = ["glyphbench", *map(str, args)]
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
    finally:
        sys.argv = saved
        signal.signal(signal.SIGINT, handler)  # a stopped command's quit-now handler
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``glyphbench ARGS`` in this process: exit code and what went to stderr."""
    code, _out, err = invoke_cli(args, capsys)
    return code, err
