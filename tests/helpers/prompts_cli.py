"""run_main: what several test modules share.

Here rather than in one of them: a test module never imports another.
"""

from __future__ import annotations

import sys

import pytest

from glyphbench.cli.root import main


def run_main(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, str, str]:
    """Run the console entry point (which maps InputError to one line + exit 2)."""
    monkeypatch.setattr(sys, "argv", ["glyphbench", *args])
    with pytest.raises(SystemExit) as info:
        main()
    captured = capsys.readouterr()
    return int(info.value.code or 0), captured.out, captured.err
