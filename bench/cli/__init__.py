"""The ``glyphbench`` command line: :mod:`bench.cli.root` builds the Typer app;
one module per command group registers its commands on it.

``main`` stays here so the console script (``bench.cli:main``) and
``python -m bench.cli`` keep working; importing this package loads nothing.
"""

from __future__ import annotations


def main() -> None:
    """The ``glyphbench`` console script (see :func:`bench.cli.root.main`)."""
    from bench.cli.root import main as root_main

    root_main()
