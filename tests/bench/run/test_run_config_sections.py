"""RunConfig in sections: the flat form still loads, and a config keeps its identity.

A run folder is resumed only when the config's ``config_hash()`` equals the one in its
run.json, and run.json's ``config`` is read back by ``read``, ``rescore``, ``merge`` and
the report. So the flat form (YAML files, run.json, the CLI's flags) must keep loading,
and every config must keep the hash and the dump it had before the config had
sections. The pinned values below were computed with the flat ``RunConfig`` of commit
b7ccd56 on the same mappings (``config_hash()[:16]`` and the first 16 hex digits of the
SHA-256 of ``json.dumps(config.model_dump(mode="json"), ensure_ascii=False)``). A change
to one of the config files named here changes its pin: recompute it on the old code, not
on this one.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from glyphbench.cli.demo import demo_config
from glyphbench.core.errors import InputError
from glyphbench.readers import DEFAULT_READER
from glyphbench.run.config import RunConfig
from tests.helpers.paths import REPO_ROOT

ROOT = REPO_ROOT

#: The run config module's YAML example, flat, as a user file holds it.
EXAMPLE = """
run_id: study-v1
out: runs/study-v1
prompts: default
sample: 40
stratify: [prompt_type, group]
sampler: stratified
limit: null
where: null
seeds: [0]
seed_policy: glyphbench
images_per_prompt: 1
batch_size: 4
read_workers: 0
read_backlog: null
ocr: rapidocr
device: auto
normalization: {keep_case: false, strip_punct: false}
models:
  - control:render
  - spec: diffusers:stabilityai/stable-diffusion-xl-base-1.0
    name: sdxl-base
    options: {steps: 30, guidance: 5.0}
api:
  max_usd: 20
  prices: {"api:openai/gpt-image-1": 0.04}
  cache_dir: null
"""

#: The same settings in sections.
EXAMPLE_IN_SECTIONS = """
models:
  - control:render
  - spec: diffusers:stabilityai/stable-diffusion-xl-base-1.0
    name: sdxl-base
    options: {steps: 30, guidance: 5.0}
prompts: {source: default, sample: 40, stratify: [prompt_type, group], sampler: stratified}
generate: {seeds: [0], seed_policy: glyphbench, images_per_prompt: 1, batch_size: 4}
read: {reader: rapidocr, workers: 0}
score: {normalization: {keep_case: false, strip_punct: false}}
output: {out: runs/study-v1, run_id: study-v1}
api: {max_usd: 20, prices: {"api:openai/gpt-image-1": 0.04}}
"""

#: name -> (config_hash()[:16], SHA-256[:16] of the JSON dump), as the flat RunConfig before
#: sections gives them (the demo: read by glyphbench.readers.DEFAULT_READER).
PINNED = {
    "configs/leaders-2026.yaml": ("01880e888ff222fa", "a4f8bccc850854ed"),
    "configs/study.yaml": ("9f78713bb80f2722", "84e51802b5626cf8"),
    "configs/suites/anytext.yaml": ("9c218fb21ec1be68", "6587c6f1d0a2cae3"),
    "configs/suites/cvtg.yaml": ("12714b103f1be5cb", "8add3d39a016db8f"),
    "configs/suites/lex.yaml": ("6d60e89c4b5a8cdd", "4342a6f9676ec6ec"),
    "configs/suites/longtext.yaml": ("c38cf1358008b42a", "f72cbeceb785941a"),
    "configs/suites/mario.yaml": ("933ef8d889f82b0c", "cf0d3d9bd917e143"),
    "configs/suites/oneig-text.yaml": ("f3387d91ac370474", "88c6214832067a4c"),
    "configs/suites/textinvision.yaml": ("db922d8d2776b9c5", "8478767c9219a4cc"),
    "example": ("43d1ac63ba1ba6ae", "1b16ded27e457021"),
    "demo": ("bc6f14e3162733e4", "b198bc59c0d68ad0"),
    "suite+flags": ("b60230ad067dad4b", "072bf5357ebfaf77"),
    "workers": ("062991d13f15c7c8", "0430cfb078556a62"),
    "api": ("e2f469889666f10e", "9c9a5841426063cf"),
}


def _mappings() -> dict[str, dict[str, Any]]:
    """The flat mappings pinned above. The reader is named in each (the suites' own
    readers are not installed everywhere; the default reader is another setting)."""
    found: dict[str, dict[str, Any]] = {}
    for path in sorted((ROOT / "configs").glob("*.yaml")) + sorted(
        (ROOT / "configs" / "suites").glob("*.yaml")
    ):
        name = path.relative_to(ROOT).as_posix()
        if name in PINNED:
            found[name] = {"ocr": "rapidocr", **yaml.safe_load(path.read_text())}
    for name in PINNED:
        if name.startswith("configs/suites/"):
            found[name]["ocr"] = "rapidocr"
    found["example"] = yaml.safe_load(EXAMPLE)
    found["demo"] = demo_config(Path("/runs/demo"), Path("/runs/tiny"))
    found["suite+flags"] = {
        "models": ["control:render"],
        "suite": "longtext:en",
        "ocr": "easyocr",
        "limit": 3,
        "seed_policy": "glyphbench",
    }
    found["workers"] = {
        "models": ["control:render"],
        "ocr": "easyocr",
        "sample": 5,
        "read_workers": 2,
        "read_backlog": 9,
        "metrics": ["mario"],
        "seeds": [1, 2],
    }
    found["api"] = {
        "models": ["control:render"],
        "api": {"max_usd": 2, "prices": {"control:render": 0.1}},
        "normalization": {"nfkc": True},
    }
    return found


def _fingerprint(config: RunConfig) -> tuple[str, str]:
    dump = json.dumps(config.model_dump(mode="json"), ensure_ascii=False)
    return config.config_hash()[:16], hashlib.sha256(dump.encode()).hexdigest()[:16]


@pytest.mark.parametrize("name", sorted(PINNED))
def test_a_flat_config_keeps_the_identity_and_dump_it_had(name: str) -> None:
    mappings = _mappings()
    assert name in mappings, f"{name} is no longer in configs/"
    config = RunConfig.from_mapping(mappings[name], name)
    assert _fingerprint(config) == PINNED[name]
    # run.json's config is the flat form: it loads back to the same config
    again = RunConfig.from_mapping(config.model_dump(mode="json"), "run.json")
    assert again == config and _fingerprint(again) == PINNED[name]


def test_the_same_settings_in_sections_are_the_same_run() -> None:
    flat = RunConfig.from_yaml_text(EXAMPLE, "flat.yaml")
    sections = RunConfig.from_yaml_text(EXAMPLE_IN_SECTIONS, "sections.yaml")
    assert sections == flat and _fingerprint(sections) == PINNED["example"]
    # a key given as null counts as given, in either form (as it did before sections)
    assert flat.selection_given == ["prompts", "where", "sample", "limit"]
    assert sections.selection_given == ["prompts", "sample"]
    assert (sections.read.reader, sections.generate.batch_size) == ("rapidocr", 4)
    assert sections.output.folder == Path("runs/study-v1")


def test_flat_keys_and_sections_mix_but_one_setting_is_given_once() -> None:
    mixed = RunConfig.from_mapping(
        {"models": ["control:render"], "ocr": "easyocr", "read": {"workers": 2}}
    )
    assert (mixed.read.reader, mixed.read.workers) == ("easyocr", 2)
    with pytest.raises(InputError) as caught:
        RunConfig.from_mapping(
            {"models": ["control:render"], "ocr": "easyocr", "read": {"reader": "rapidocr"}},
            "run.yaml",
        )
    assert "'ocr' and 'read.reader' are the same setting" in str(caught.value)


def test_a_problem_names_the_key_as_the_user_wrote_it() -> None:
    with pytest.raises(InputError) as flat:
        RunConfig.from_mapping({"models": ["control:render"], "ocr": 7}, "run.yaml")
    assert flat.value.key == "ocr"
    with pytest.raises(InputError) as sectioned:
        RunConfig.from_mapping({"models": ["control:render"], "read": {"reader": 7}}, "run.yaml")
    assert sectioned.value.key == "read.reader"
    with pytest.raises(InputError) as unknown:
        RunConfig.from_mapping({"models": ["control:render"], "read": {"workres": 2}})
    assert unknown.value.key == "read.workres"


def test_the_default_reader_is_one_constant_and_part_of_the_identity() -> None:
    bare = RunConfig.from_mapping({"models": ["control:render"]})
    named = RunConfig.from_mapping({"models": ["control:render"], "ocr": DEFAULT_READER})
    assert bare.read.reader == DEFAULT_READER
    assert bare.config_hash() == named.config_hash()
    assert bare.with_overrides(ocr="easyocr").config_hash() != bare.config_hash()


def test_flags_replace_flat_keys_and_keep_what_the_user_gave() -> None:
    config = RunConfig.from_yaml_text(EXAMPLE_IN_SECTIONS, "sections.yaml")
    changed = config.with_overrides(ocr="easyocr", where="lang == 'en'", read_workers=3)
    assert (changed.read.reader, changed.read.workers) == ("easyocr", 3)
    assert changed.prompts.where == "lang == 'en'"
    assert changed.selection_given == ["prompts", "where", "sample"]
    assert changed.with_reader("easyocr") is changed
    assert changed.with_reader("rapidocr").read.reader == "rapidocr"
