"""A key echoed in pieces (7 characters between spaces, one a line, dashes or dots
between them) or a key of a well-known format never reaches a part file, run.json or
the console (docs/reliability.md, "Hostile text").

The fake API runs on 127.0.0.1 only (tests/helpers/api_fake_server.py).
"""

from __future__ import annotations

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
SPLITS = [
    "echo-split:7:space",
    "echo-split:7:newline",
    "echo-split:4:dash",
    "echo-split:3:dot",
    "echo-split:1:space",
    "echo-split:5:comma",
]
SIZE = 8  # the shortest fragment looked for, as in test_reliability_keys


def letters(text: str) -> str:
    return "".join(c for c in text.lower() if c.isascii() and c.isalnum())


def spelled_fragments(key: str) -> set[str]:
    """Fragments of the key's letters and digits: what a split key still spells."""
    forms = [letters(form) for form in encodings(key)]
    return {form[i : i + SIZE] for form in forms for i in range(len(form) - SIZE + 1)}


def spelled_leaks(text: str, key: str = KEY) -> list[str]:
    joined = letters(text)
    return sorted(f for f in spelled_fragments(key) if f in joined)


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 6, 7])
@pytest.mark.parametrize("joiner", [" ", "-", ".", "\n", ", ", "\u200b", " / "])
def test_a_key_in_pieces_is_redacted_however_it_is_split(size: int, joiner: str) -> None:
    pieces = joiner.join(KEY[i : i + size] for i in range(0, len(KEY), size))
    for message in (f"bad key {pieces}.", f'{{"error": "key {pieces} refused"}}'):
        redacted = Redactor([KEY]).redact(message)
        assert spelled_leaks(redacted) == [], (message, redacted)
        assert redacted.startswith(("bad key ***", '{"error": "key ***')), redacted


def test_words_around_a_split_key_are_kept() -> None:
    pieces = " ".join(KEY[i : i + 7] for i in range(0, len(KEY), 7))
    redacted = Redactor([KEY]).redact(f"Incorrect API key provided: {pieces}. See the docs.")
    assert redacted == "Incorrect API key provided: *** See the docs."
    harmless = "HTTP 403 for prompt p01 (seed 3): quota exceeded, 12345678 left"
    assert Redactor([KEY]).redact(harmless) == harmless


@pytest.mark.parametrize(
    "key",
    [
        "sk-proj-" + "Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5",
        "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
        "hf_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZaBcDeFgH",
        "r8_" + "Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ",
    ],
)
def test_keys_of_known_formats_are_redacted_unconfigured(key: str) -> None:
    redacted = Redactor().redact(f"error: the key {key} is not valid here")
    assert redacted == "error: the key *** is not valid here"
    assert Redactor().redact("Authorization: Bearer abcdefghij0123456789") == (
        "Authorization: Bearer ***"
    )


@pytest.mark.slow
def test_a_key_echoed_in_pieces_never_reaches_the_run_folder(tmp_path: Path) -> None:
    csv = write_prompts_csv(tmp_path / "prompts.csv", len(SPLITS) + 1)  # p00 is answered
    with FakeApi(KEY) as api:
        for number, action in enumerate(SPLITS, start=1):
            api.plan(f"(#{number})", [action])
        model: dict[str, Any] = {
            "spec": "api:http/pieces",
            "options": {
                "url": f"{api.url}/hostile/generate",
                "headers": {"X-Key": "{env:GLYPH_HOSTILE_KEY}"},
                "body": {"prompt": "{prompt}", "seed": "{seed}"},
                "image_field": "output.image",
                "retries": 0,
                "timeout": 10,
            },
        }
        out = tmp_path / "run"
        config = {
            "models": [model],
            "prompts": f"csv:{csv}",
            "seeds": [0],
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
        assert len(api.paid()) >= len(SPLITS)  # the server did echo the key, in pieces
    assert done.returncode == 0, done.stderr[-2000:]
    errors = pd.read_parquet(out / "results.parquet").set_index("prompt_id")["error"]
    assert errors["p00"] == "" and all("***" in errors[f"p{n:02d}"] for n in (1, 2, 3, 4, 5, 6))
    texts = run_folder_text(out)
    assert any("parts" in name for name in texts) and any("run.json" in n for n in texts)
    texts["console"] = done.stdout + done.stderr
    found = {name: spelled_leaks(text) for name, text in texts.items()}
    assert {name: hits for name, hits in found.items() if hits} == {}
