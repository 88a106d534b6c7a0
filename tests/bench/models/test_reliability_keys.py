"""Keys never leak: hostile echoes of the key through a local fake API (127.0.0.1 only).

A server that repeats the key JSON-escaped, ``\\uXXXX``-escaped, URL-encoded, as
base64 of the header value, after 290 characters of text (a message cut at 300
used to keep its start), in part, in a refusal or in a malformed answer, and a
server that redirects to another host: no fragment of the key, in any of those
encodings, reaches any file of the run folder or the console (docs/reliability.md).
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
import yaml

from glyphbench.models.api.transport import Redactor
from tests.helpers.api_fake_server import FakeApi
from tests.helpers.api_keys import KEY, encodings, run_folder_text
from tests.helpers.paths import HELPERS, REPO_ROOT
from tests.helpers.runner_helper import write_prompts_csv

pytest.importorskip("httpx")

HELPER = HELPERS / "runner_helper.py"
ECHOES = [
    "echo-json",
    "echo-unicode",
    "echo-url",
    "echo-base64",
    "echo-long",
    "echo-half",
    "echo-refuse",
    "echo-malformed",
    "redirect",
]
SIZE = 8  # the shortest fragment looked for


def fragments(key: str) -> set[str]:
    return {
        text[i : i + SIZE].lower() for text in encodings(key) for i in range(len(text) - SIZE + 1)
    }


def leaks(text: str, key: str = KEY) -> list[str]:
    lowered = text.lower()
    return sorted(f for f in fragments(key) if f in lowered)


@pytest.mark.slow
@pytest.mark.parametrize(
    "header",
    [{"X-Key": "{env:GLYPH_HOSTILE_KEY}"}, {"Authorization": "Bearer {env:GLYPH_HOSTILE_KEY}"}],
)
def test_hostile_echoes_leave_no_fragment_of_the_key_anywhere(
    tmp_path: Path, header: dict[str, str]
) -> None:
    csv = write_prompts_csv(tmp_path / "prompts.csv", len(ECHOES) + 1)
    route = "/hostile/generate" if "X-Key" in header else "/generic/generate"
    with FakeApi(KEY) as api, FakeApi(KEY) as elsewhere:
        elsewhere_port = elsewhere.server.server_address[1]
        api.redirect_to = f"http://localhost:{elsewhere_port}{route}"
        for number, action in enumerate(ECHOES, start=1):
            api.plan(f"(#{number})", [action])
        model: dict[str, Any] = {
            "spec": "api:http/hostile",
            "options": {
                "url": f"{api.url}{route}",
                "headers": header,
                "body": {"prompt": "{prompt}", "seed": "{seed}"},
                "image_field": "output.image",
                "refusal_status": [422],
                "refusal_match": "content_policy",
                "retries": 0,
                "timeout": 10,
            },
        }
        out = tmp_path / "run"
        config = {
            "models": [model],
            "prompts": f"csv:{csv}",
            "seeds": [0],
            "batch_size": 4,
            "ocr": "pixelocr",
            "out": str(out),
            "api": {"prices": {}},
        }
        config_path = tmp_path / "run.yaml"
        config_path.write_text(yaml.safe_dump(config), encoding="utf-8")
        env = dict(
            os.environ,
            GLYPH_HOSTILE_KEY=KEY,
            OMP_NUM_THREADS="1",
            PYTHONPATH=os.pathsep.join([str(HELPER.parent), str(REPO_ROOT)]),
        )
        command = [sys.executable, str(HELPER), "run", "--config", str(config_path)]
        done = subprocess.run(
            [*command, "--no-progress"], env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-2000:]
        # The server did echo the key: the test is hostile for real.
        assert len(api.paid()) == len(ECHOES) + 1
        # Nothing reached the other host (a redirect there is refused, not followed).
        assert all(KEY not in json.dumps(entry) for entry in elsewhere.log)
        assert elsewhere.log == []

    rows = pd.read_parquet(out / "results.parquet")
    errors = dict(zip(rows["prompt_id"], rows["error"], strict=True))
    assert "redirected to another host (localhost)" in errors["p09"]
    assert errors["p07"].startswith("Refused: http:")
    assert errors["p00"] == ""
    assert all("***" in errors[f"p{n:02d}"] for n in (1, 2, 3, 4, 6, 7, 8))

    texts = run_folder_text(out)
    texts["console"] = done.stdout + done.stderr
    found = {name: leaks(text) for name, text in texts.items()}
    assert {name: hits for name, hits in found.items() if hits} == {}


def test_the_redactor_removes_every_encoding_and_redacts_before_cutting() -> None:
    from glyphbench.models.api.transport import one_line, remember_secrets

    redactor = Redactor([KEY])
    for text in encodings(KEY):
        for wrapped in (text, f"bad key {text}.", json.dumps({"m": text})):
            assert leaks(redactor.redact(wrapped)) == [], wrapped
    assert leaks(redactor.redact(base64.b64encode(f"x-key: {KEY}".encode()).decode())) == []
    assert redactor.redact("a harmless message, 12345678") == "a harmless message, 12345678"
    # A message cut at 300 characters must not keep the start of a key that begins at 295.
    remember_secrets([KEY])
    assert leaks(one_line("x" * 294 + " " + KEY, 300)) == []
