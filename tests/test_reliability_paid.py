"""Paid work is never lost to a path (issue 25): a long `api:http` label (a URL in
its options) and a 300-character prompt id make bounded file names, so the run
that was paid for writes its rows (docs/reliability.md)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml
from api_fake_server import FakeApi

pytest.importorskip("httpx")

HELPER = Path(__file__).with_name("runner_helper.py")
KEY = "sk-paid-test-4f1e9a0b77"


def test_long_labels_and_prompt_ids_make_bounded_paths(tmp_path: Path) -> None:
    long_id = "p-" + "x" * 298
    csv = tmp_path / "prompts.csv"
    pd.DataFrame(
        {"prompt_id": [long_id, "short"], "prompt": ["a sign 'OPEN'", "a sign 'EXIT'"],
         "text": ["OPEN", "EXIT"]}
    ).to_csv(csv, index=False)  # fmt: skip
    with FakeApi(KEY) as api:
        url = f"{api.url}/generic/generate?route=" + "r" * 300  # a label over 255 characters
        model = {
            "spec": "api:http/seedream-4",
            "options": {
                "url": url,
                "headers": {"Authorization": "Bearer {env:GLYPH_PAID_KEY}"},
                "body": {"prompt": "{prompt}", "seed": "{seed}"},
                "image_field": "output.image",
            },
        }
        out = tmp_path / "run"
        config = {
            "models": [model], "prompts": f"csv:{csv}", "seeds": [0], "ocr": "pixelocr",
            "out": str(out), "api": {"prices": {}},
        }  # fmt: skip
        path = tmp_path / "run.yaml"
        path.write_text(yaml.safe_dump(config), encoding="utf-8")
        env = dict(
            os.environ,
            GLYPH_PAID_KEY=KEY,
            PYTHONPATH=os.pathsep.join([str(HELPER.parent), str(HELPER.parent.parent)]),
        )
        command = [sys.executable, str(HELPER), "run", "--config", str(path), "--no-progress"]
        dry = subprocess.run([*command, "--dry-run"], env=env, capture_output=True, text=True)
        assert dry.returncode == 0, dry.stderr[-2000:]
        assert not api.log  # a dry run asks nothing
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr[-2000:]
        assert len(api.paid()) == 2
    rows = pd.read_parquet(out / "results.parquet")
    assert len(rows) == 2 and (rows["error"] == "").all()
    longest = max(len(p.name) for p in out.rglob("*"))
    assert longest <= 200
