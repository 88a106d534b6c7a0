"""Paid work is never lost to a path: a long `api:http` label (a URL in
its options) and a 300-character prompt id make bounded file names, so the run
that was paid for writes its rows (docs/reliability.md)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
import yaml

from tests.helpers.api_fake_server import FakeApi
from tests.helpers.paths import HELPERS, REPO_ROOT
from tests.helpers.polling import wait_until

pytest.importorskip("httpx")

HELPER = HELPERS / "runner_helper.py"
KEY = "sk-paid-test-4f1e9a0b77"


def paid_run(tmp_path: Path, config: dict[str, object]) -> tuple[list[str], dict[str, str]]:
    """The ``glyphbench run`` command of ``config`` (saved as run.yaml) and its environment."""
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    env = dict(
        os.environ,
        GLYPH_PAID_KEY=KEY,
        PYTHONPATH=os.pathsep.join([str(HELPER.parent), str(REPO_ROOT)]),
    )
    return [sys.executable, str(HELPER), "run", "--config", str(path), "--no-progress"], env


@pytest.mark.slow
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
        command, env = paid_run(tmp_path, config)
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


@pytest.mark.slow
def test_the_cap_holds_under_repeated_kills_with_requests_in_flight(tmp_path: Path) -> None:
    import signal

    csv = tmp_path / "prompts.csv"
    n = 20
    pd.DataFrame(
        {"prompt_id": [f"p{k:02d}" for k in range(n)],
         "prompt": [f"a sign 'WORD{k}' (#{k})" for k in range(n)],
         "text": [f"WORD{k}" for k in range(n)]}
    ).to_csv(csv, index=False)  # fmt: skip
    spec = "api:http/capped"
    price, cap = 0.01, 0.10
    with FakeApi(KEY) as api:
        api.delay = 0.6  # requests stay in flight long enough to be killed mid-way
        model = {
            "spec": spec,
            "options": {
                "url": f"{api.url}/generic/generate",
                "headers": {"Authorization": "Bearer {env:GLYPH_PAID_KEY}"},
                "body": {"prompt": "{prompt}", "seed": "{seed}"},
                "image_field": "output.image",
                "concurrency": 4,
            },
        }
        out = tmp_path / "run"
        config = {
            "models": [model], "prompts": f"csv:{csv}", "seeds": [0], "ocr": "pixelocr",
            "batch_size": 4, "out": str(out),
            "api": {"prices": {spec: price}, "max_usd": cap},
        }  # fmt: skip
        command, env = paid_run(tmp_path, config)
        for _ in range(6):  # kill -9 while requests are in flight, six times
            asked = len(api.paid())
            process = subprocess.Popen(command, env=env, stderr=subprocess.DEVNULL)
            in_flight = lambda asked=asked: len(api.paid()) > asked and api.in_flight > 0  # noqa: E731
            with contextlib.suppress(AssertionError):  # a run that ends first is killed anyway
                wait_until(in_flight, "a request in flight", interval=0.02, process=process)
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=60)
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
        billed = len(api.paid()) * price  # the provider bills every request it received
    assert done.returncode in (0, 1), done.stderr[-2000:]
    assert billed <= cap + 1e-9, f"{len(api.paid())} requests billed, cap ${cap}"
