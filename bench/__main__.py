"""``python -m glyphbench``: the same command line as the ``glyphbench`` script."""

from glyphbench.cli import main

main()
