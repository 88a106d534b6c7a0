"""HELPER, environment, generate: what several test modules share.

Here rather than in one of them: a test module never imports another.
"""

from __future__ import annotations

import os
from pathlib import Path

from glyphbench.run.config import RunConfig
from glyphbench.run.operations import run_benchmark
from tests.helpers.paths import HELPERS, REPO_ROOT
from tests.helpers.runner_helper import (
    prompt_set,
)


def generate(out: Path, *, n: int = 6, read_later: bool = True, ocr: str = "pixelocr") -> None:
    config = RunConfig.from_mapping(
        {
            "models": ["control:render?size=64", "control:blank?size=64"],
            "batch_size": 4,
            "seeds": [0],
            "ocr": ocr,
            "out": str(out),
        }
    )
    run_benchmark(config, prompt_set=prompt_set(n), progress=False, read_later=read_later)


HELPER = HELPERS / "runner_helper.py"


def environment() -> dict[str, str]:
    path = os.pathsep.join([str(HELPER.parent), str(REPO_ROOT)])
    return dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=path)
