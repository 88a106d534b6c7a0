"""``python -m bench.cli``."""

from bench.cli import main

main()
