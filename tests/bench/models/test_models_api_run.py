"""Hosted-API models in whole runs: the real CLI in a subprocess, a fake server on 127.0.0.1.

Refusals become ``Refused:`` rows and a refusal rate in the summary, rows carry
``cost_usd``, a second run makes zero requests, the spending cap stops a run
cleanly and a higher cap continues it, a run killed mid-way resumes without asking
again for any image it had received, and no key appears in any file written.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from tests.helpers.api_fake_server import FakeApi
from tests.helpers.paths import HELPERS, REPO_ROOT
from tests.helpers.polling import wait_until
from tests.helpers.runner_helper import write_prompts_csv

pytest.importorskip("httpx")

HELPER = HELPERS / "runner_helper.py"
KEY = "sk-run-test-7d2a0b9c-secret"
N_PROMPTS = 6


def environment() -> dict[str, str]:
    path = os.pathsep.join([str(HELPER.parent), str(REPO_ROOT)])
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=path)
    env.pop("WORLD_SIZE", None)
    for name in ("OPENAI_API_KEY", "BFL_API_KEY", "GEMINI_API_KEY", "GLYPH_FAKE_KEY"):
        env[name] = KEY
    return env


def write_config(path: Path, models: list[Any], csv: Path, out: Path, **api: Any) -> Path:
    config = {
        "models": models,
        "prompts": f"csv:{csv}",
        "seeds": [0],
        "batch_size": 2,
        "ocr": "pixelocr",
        "out": str(out),
        "api": {"prices": {}, **api},
    }
    path.write_text(yaml.safe_dump(config, sort_keys=False), encoding="utf-8")
    return path


def run(config: Path, *extra: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, str(HELPER), "run", "--config", str(config), "--no-progress", *extra]
    done = subprocess.run(
        command, env=environment(), capture_output=True, text=True, timeout=300, check=False
    )
    if check:
        assert done.returncode == 0, done.stderr[-3000:]
    return done


def assert_no_key_written(*roots: Path, texts: tuple[str, ...] = ()) -> None:
    secret = KEY.encode()
    files = [p for root in roots for p in root.rglob("*") if p.is_file()]
    assert files
    leaked = [str(p) for p in files if secret in p.read_bytes()]
    assert leaked == []
    assert not any(KEY in text for text in texts)


@pytest.fixture
def csv(tmp_path: Path) -> Path:
    return write_prompts_csv(tmp_path / "prompts.csv", N_PROMPTS)


@pytest.fixture
def fake() -> Any:
    with FakeApi(KEY) as server:
        yield server


def every_provider(fake: FakeApi) -> list[dict[str, Any]]:
    fast = {"backoff": 0.01, "max_backoff": 0.05, "timeout": 5}
    models: list[dict[str, Any]] = [
        {
            "spec": "api:bfl/flux-pro-1.1",
            "options": {"base_url": f"{fake.url}/bfl", "poll_interval": 0.01, **fast},
        },
        {
            "spec": "api:http/fake-gen",
            "options": {
                "url": f"{fake.url}/generic/generate",
                "headers": {"Authorization": "Bearer {env:GLYPH_FAKE_KEY}"},
                "body": {"prompt": "{prompt}", "seed": "{seed}"},
                "image_field": "output.image",
                "refusal_status": [422],
                "refusal_match": "content_policy",
                **fast,
            },
        },
    ]
    try:
        import openai  # noqa: F401

        models.append(
            {
                "spec": "api:openai/gpt-image-1",
                "options": {"base_url": f"{fake.url}/openai/v1", **fast},
            }
        )
    except ImportError:
        pass
    try:
        from google import genai  # noqa: F401

        models.append(
            {
                "spec": "api:google/gemini-2.5-flash-image",
                "options": {"base_url": f"{fake.url}/google", **fast},
            }
        )
    except ImportError:
        pass
    return models  # fmt: skip


@pytest.mark.slow
def test_a_run_records_refusals_costs_and_caches(fake: FakeApi, csv: Path, tmp_path: Path) -> None:
    models = every_provider(fake)
    labels = [m["spec"] for m in models]
    prices = dict.fromkeys(labels, 0.04)
    out = tmp_path / "run"
    config = write_config(tmp_path / "run.yaml", models, csv, out, prices=prices, max_usd=100)
    fake.retry_after = "0"
    for provider in ("openai", "bfl", "google", "http"):
        fake.plan("(#1)", ["refuse"], provider)
        fake.plan("(#2)", ["429", "500"], provider)
    done = run(config)

    rows = pd.read_parquet(out / "results.parquet")
    assert len(rows) == len(models) * N_PROMPTS
    refused = rows["error"].str.startswith("Refused:")
    assert refused.sum() == len(models)
    assert set(rows.loc[refused, "prompt_id"]) == {"p01"}
    assert rows.loc[refused, "image_path"].isna().all()
    assert rows.loc[refused, "ned"].isna().all()  # never scored as zero
    assert (rows.loc[~refused, "error"] == "").all()
    assert rows["cost_usd"].dtype == "float64"
    assert (rows.loc[refused, "cost_usd"] == 0).all()
    assert (rows.loc[~refused, "cost_usd"] == 0.04).all()
    assert "refused (rate)" in done.stdout and "1 (17%)" in done.stdout
    assert "cost USD" in done.stdout and "0.20" in done.stdout

    asked = len(fake.paid())
    assert asked == len(models) * (N_PROMPTS + 2)  # each model retried (#2) twice
    meta = json.loads((out / "run.json").read_text())
    for label in labels:  # labels are the specs with their options
        [facts] = [facts for name, facts in meta["models"].items() if name.startswith(label)]
        assert facts["counts"]["refusals"] == 1 and facts["counts"]["retries"] == 2
        assert facts["price_usd"] == 0.04

    # The same command again: everything is done, nothing is asked.
    again = run(config)
    assert len(fake.paid()) == asked
    # A new run folder sharing the cache: every answer, refusals included, from the cache.
    shared = tmp_path / "shared"
    first = write_config(
        tmp_path / "a.yaml", models, csv, tmp_path / "a", prices=prices, cache_dir=str(shared)
    )
    run(first)
    asked = len(fake.paid())
    second = write_config(
        tmp_path / "b.yaml", models, csv, tmp_path / "b", prices=prices, cache_dir=str(shared)
    )
    run(second)
    assert len(fake.paid()) == asked
    rows_a = pd.read_parquet(tmp_path / "a" / "results.parquet")
    rows_b = pd.read_parquet(tmp_path / "b" / "results.parquet")
    assert rows_a["image_sha256"].tolist() == rows_b["image_sha256"].tolist()
    assert rows_a["error"].tolist() == rows_b["error"].tolist()
    assert (rows_b["cost_usd"] == 0).all()  # another run paid for them

    outputs = (done.stdout, done.stderr, again.stdout, again.stderr)
    assert_no_key_written(tmp_path, texts=outputs)


@pytest.mark.slow
def test_the_cap_stops_the_run_and_a_higher_cap_continues(
    fake: FakeApi, csv: Path, tmp_path: Path
) -> None:
    spec = "api:bfl/flux-pro-1.1"
    options = {"base_url": f"{fake.url}/bfl", "poll_interval": 0.01, "concurrency": 1}
    out = tmp_path / "run"
    models = [{"spec": spec, "name": "flux", "options": options}, "control:blank?size=64"]
    config = write_config(tmp_path / "run.yaml", models, csv, out, prices={spec: 0.04}, max_usd=0.1)
    done = run(config)
    assert len(fake.paid()) == 2
    assert "4 images not attempted: spending cap reached: $0.08 of $0.10" in done.stderr
    parts = pd.concat(pd.read_parquet(p) for p in out.glob("parts/*/*/*.parquet"))
    api_rows = parts[parts["model"] == "flux"]
    assert len(api_rows) == 2 and api_rows["cost_usd"].sum() == pytest.approx(0.08)
    assert (parts["model"] == "control:blank?size=64").sum() == N_PROMPTS  # unpaid models go on
    meta = json.loads((out / "run.json").read_text())
    assert meta["complete"] is False and meta["rows"] == N_PROMPTS + 2
    shard = json.loads((out / "parts" / "shard-0-of-1" / "shard.json").read_text())
    assert shard["attempts"][-1]["not_attempted"] == {"flux": 4}

    # Not enough for one more image: nothing asked, still stopped.
    run(config, "--max-usd", "0.11")
    assert len(fake.paid()) == 2
    # A higher cap continues the same run (the cap is not part of its identity).
    done = run(config, "--max-usd", "1")
    assert len(fake.paid()) == N_PROMPTS
    rows = pd.read_parquet(out / "results.parquet")
    assert len(rows) == 2 * N_PROMPTS and (rows["error"] == "").all()
    assert rows["cost_usd"].sum() == pytest.approx(0.04 * N_PROMPTS)
    assert "not attempted" not in done.stderr


@pytest.mark.slow
def test_a_cap_needs_a_price_for_every_api_model(fake: FakeApi, csv: Path, tmp_path: Path) -> None:
    models = [{"spec": "api:bfl/flux-pro-1.1", "options": {"base_url": f"{fake.url}/bfl"}}]
    config = write_config(tmp_path / "run.yaml", models, csv, tmp_path / "run", max_usd=1)
    done = run(config, check=False)
    assert done.returncode == 2
    assert "api.prices has no price for api:bfl/flux-pro-1.1" in done.stderr
    assert not fake.log


@pytest.mark.slow
def test_a_killed_run_resumes_without_asking_again(
    fake: FakeApi, csv: Path, tmp_path: Path
) -> None:
    spec = "api:bfl/flux-pro-1.1"
    options = {"base_url": f"{fake.url}/bfl", "poll_interval": 0.01, "concurrency": 2}
    out = tmp_path / "run"
    config = write_config(tmp_path / "run.yaml", [{"spec": spec, "options": options}], csv, out)
    fake.delay = 0.4
    command = [sys.executable, str(HELPER), "run", "--config", str(config), "--no-progress"]
    process = subprocess.Popen(
        command, env=environment(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    answered = lambda: sum(e["answered"] for e in fake.paid()) >= 3  # noqa: E731
    wait_until(answered, "three answered requests", process=process)
    stored = lambda: len(list((out / "api-cache").glob("*/*.json"))) >= 2  # noqa: E731
    wait_until(stored, "the client storing two answers", process=process)
    process.send_signal(signal.SIGKILL)
    process.communicate(timeout=60)
    assert process.returncode == -signal.SIGKILL
    assert not (out / "results.parquet").exists()

    received = {
        (record["prompt"], record["seed"])
        for record in (json.loads(p.read_text()) for p in (out / "api-cache").glob("*/*.json"))
    }
    assert 2 <= len(received) < N_PROMPTS
    asked_before = len(fake.paid())

    fake.delay = 0.0
    run(config)
    resumed = fake.paid()[asked_before:]
    assert not {(e["prompt"], e["seed"]) for e in resumed} & received  # none asked twice
    everything = {(e["prompt"], e["seed"]) for e in fake.paid()}
    assert len(everything) == N_PROMPTS
    rows = pd.read_parquet(out / "results.parquet")
    assert len(rows) == N_PROMPTS and (rows["error"] == "").all()
    by_prompt = dict(zip(rows["prompt"], rows["image_seed"], strict=True))
    assert received <= set(by_prompt.items())  # the cached images are the rows' images
    assert_no_key_written(tmp_path)


@pytest.mark.slow
def test_dry_run_resolves_api_models_without_a_key_or_a_request(
    fake: FakeApi, csv: Path, tmp_path: Path
) -> None:
    spec = "api:bfl/flux-pro-1.1"
    models = [{"spec": spec, "options": {"base_url": f"{fake.url}/bfl"}}]
    config = write_config(tmp_path / "run.yaml", models, csv, tmp_path / "run", prices={spec: 0.05})
    env = {k: v for k, v in environment().items() if k != "BFL_API_KEY"}
    command = [sys.executable, str(HELPER), "run", "--config", str(config), "--dry-run", "--json"]
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120, check=True)
    plan = json.loads(done.stdout)
    described = plan["models"][0]["describe"]
    assert described["provider"] == "bfl" and described["seed_honoured"] is True
    assert described["key_env"] == ["BFL_API_KEY"]
    assert not fake.log and not (tmp_path / "run").exists()
