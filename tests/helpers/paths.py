"""Where the tests find the checkout: its root, the tests' data, the shared data beside it.

Test modules sit at several depths (tests/bench/scoring/, tests/prompts/, ...), so they name
these instead of counting the parents of their own file.
"""

from __future__ import annotations

from pathlib import Path

HELPERS = Path(__file__).resolve().parent
TESTS = HELPERS.parent
REPO_ROOT = TESTS.parent
#: Small fixtures committed with the tests (each folder has a README).
DATA = TESTS / "data"
#: Third-party data beside the checkout (../shared), absent from a user's clone.
SHARED = REPO_ROOT.parent / "shared"
