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
    """
    import sys

    try:
        from glyphbench.cli.root import main as root_main

        root_main()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
