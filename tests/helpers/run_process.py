"""BATCHES, HELPER, MODELS, N_PROMPTS, _parts, command, comparable: what several test modules
share.

Here rather than in one of them: a test module never imports another.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

from glyphbench.run.results import TIMING_COLUMNS
from tests.helpers.paths import HELPERS

__all__ = [
    "BATCHES",
    "HELPER",
    "MODELS",
    "N_PROMPTS",
    "TIMING_COLUMNS",
    "_parts",
    "command",
    "comparable",
]


HELPER = HELPERS / "runner_helper.py"
MODELS = "slow:render?delay=0.5&size=64,control:blank?size=64"
N_PROMPTS = 8
BATCHES = 2 * N_PROMPTS // 2  # two models, batch size 2


def command(out: Path, csv: Path, *extra: str) -> list[str]:
    return [
        sys.executable, str(HELPER), "run", "--models", MODELS, "--prompts", f"csv:{csv}",
        "--seeds", "0", "--batch-size", "2", "--ocr", "pixelocr", "--out", str(out),
        "--no-progress", *extra,
    ]  # fmt: skip


def comparable(rows: pd.DataFrame) -> pd.DataFrame:
    return rows.drop(columns=list(TIMING_COLUMNS)).reset_index(drop=True)


def _parts(out: Path) -> list[Path]:
    return list((out / "parts").glob("*/*/batch-*.parquet"))
