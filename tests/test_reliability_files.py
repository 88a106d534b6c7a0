"""Damaged files elsewhere (issue 25): export checks every image against its SHA-256,
`human sample` names a damaged image and leaves no partial study, a FIFO in an
`images:` manifest is `Unreadable:`, and `human serve` refuses impossible ports and
hosts in one line (docs/reliability.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from bench.cli_export import export_run
from bench.config import RunConfig
from bench.errors import InputError
from bench.runs import run_benchmark
from tests.runner_helper import PixelOCR, prompt_set, register

register()
REPO = Path(__file__).resolve().parent.parent


def generate(out: Path) -> pd.DataFrame:
    config = RunConfig.from_mapping(
        {"models": ["control:render?size=64"], "batch_size": 4, "seeds": [0],
         "ocr": "pixelocr", "out": str(out)}
    )  # fmt: skip
    result = run_benchmark(config, prompt_set=prompt_set(6), ocr=PixelOCR(), progress=False)
    assert result.results is not None
    return result.results


def test_export_refuses_images_that_do_not_match_their_sha256(tmp_path: Path) -> None:
    rows = generate(tmp_path / "run")
    damaged = str(rows["image_path"].iloc[2])
    path = tmp_path / "run" / damaged
    path.write_bytes(path.read_bytes()[:100])  # truncated: still a file, not the image
    with pytest.raises(InputError, match="does not match its image_sha256") as refused:
        export_run(tmp_path / "run", tmp_path / "export")
    assert damaged in str(refused.value.source) and "1 of 6" in str(refused.value)
    assert not (tmp_path / "export").exists()  # nothing half-written
