"""The compat tests' data: what the benchmarks' own code produced (``tests/data/compat``).

``<name>.jsonl`` holds one scored pair per line, ``<name>.summary.json`` the original's
set-level values; ``tests/data/compat/README.md`` says how each was made.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "compat"


def load_rows(name: str) -> list[dict[str, Any]]:
    with (DATA / f"{name}.jsonl").open(encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def load_summary(name: str) -> dict[str, float]:
    return dict(json.loads((DATA / f"{name}.summary.json").read_text(encoding="utf-8")))


def assert_same(got: float, want: float | None) -> None:
    """``got`` equals the original's value; ``want`` None (JSON null) means NaN."""
    if want is None:
        assert math.isnan(got)
    else:
        assert got == pytest.approx(want, abs=1e-9, rel=0)
