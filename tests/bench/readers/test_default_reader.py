"""One default reader, named once (glyphbench.readers.DEFAULT_READER), used by `run`, `demo`,
`vae-eval`, `readers calibrate` and get_reader() without a spec."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from glyphbench.cli.readers import calibrate_command
from glyphbench.cli.vae import evaluate_command
from glyphbench.readers import DEFAULT_READER, get_reader
from glyphbench.run.config import ReadSettings, RunConfig
from glyphbench.vae_eval.config import VaeConfig
from glyphbench.vae_eval.runner import RunOptions
from tests.helpers.paths import REPO_ROOT

ROOT = REPO_ROOT


def test_every_command_reads_with_the_one_default_reader(tmp_path: Path) -> None:
    from glyphbench.cli.demo import demo_config

    assert ReadSettings.model_fields["reader"].default == DEFAULT_READER
    assert RunConfig.model_validate({"models": ["control:blank"]}).read.reader == DEFAULT_READER
    assert VaeConfig.model_fields["ocr"].default == DEFAULT_READER
    assert RunOptions(codecs=["identity"]).ocr == DEFAULT_READER
    assert demo_config(tmp_path, tmp_path)["ocr"] == DEFAULT_READER
    for command in (calibrate_command, evaluate_command):
        option = next(
            p.default
            for p in inspect.signature(command).parameters.values()
            if getattr(p.default, "param_decls", None) and p.name in ("reader", "ocr")
        )
        assert option.default == DEFAULT_READER, command.__name__
    assert get_reader.__defaults__ == (DEFAULT_READER,)


def test_the_default_reader_is_named_in_one_place() -> None:
    """No other module of the package spells a reader as a default of its own (a suite's
    protocol reader is its benchmark's, not a default; docstring examples do not count)."""
    pattern = re.compile(r"""(ocr|reader)\s*(:\s*\w+\s*)?=\s*["'](easyocr|rapidocr)["']""")
    found = [
        f"{path.relative_to(ROOT)}: {line.strip()}"
        for folder in ("bench", "vae_eval", "human_eval", "prompts")
        for path in (ROOT / folder).rglob("*.py")
        if "suites" not in path.parts
        for line in path.read_text(encoding="utf-8").splitlines()
        if pattern.search(line) and not line.lstrip().startswith((">>>", "..."))
    ]
    assert found == [], found
