"""The ``glyphbench`` command line: :mod:`glyphbench.cli.root` builds the Typer app;
one module per command group registers its commands on it.

``main`` stays here so the console script (``glyphbench.cli:main``) and
``python -m glyphbench`` keep working; importing this package loads nothing.
"""

from __future__ import annotations


def main() -> None:
    """The ``glyphbench`` console script (see :func:`glyphbench.cli.root.main`).

    Ctrl-C while the command line is still importing (a second or two on a cold disk)
    is one line and exit 130, as it is once a command runs, not an import traceback.
    Once a command has stopped on Ctrl-C or SIGTERM, Python still shuts down (joining the
    threads of reader pools): a Ctrl-C then says it is stopping, and a second one ends the
    process at once with the same code, instead of a traceback from the exit handlers.
    """
    import sys

    from glyphbench.cli.exit_codes import INTERRUPTED, TERMINATED  # constants only

    try:
        from glyphbench.cli.root import main as root_main

        root_main()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        _quit_on_next_interrupt(INTERRUPTED)
        sys.exit(INTERRUPTED)
    except SystemExit as stop:
        if stop.code in (INTERRUPTED, TERMINATED):
            _quit_on_next_interrupt(int(stop.code))
        raise


def _quit_on_next_interrupt(code: int) -> None:
    import contextlib
    import os
    import signal
    import sys

    pressed: list[int] = []

    def quit_now(signum: int, frame: object) -> None:
        if not pressed:  # the shutdown is short: let it end cleanly unless asked twice
            pressed.append(signum)
            print("stopping (Ctrl-C again quits at once)", file=sys.stderr, flush=True)
            return
        sys.stderr.flush()
        os._exit(code)

    with contextlib.suppress(ValueError):  # not the main thread (a test calling main)
        signal.signal(signal.SIGINT, quit_now)
