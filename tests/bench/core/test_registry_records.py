"""Model families, API providers and VLM presets are records of the one registry.

Each toy below is one record registered with one call, the way a module of its
package registers it (docs/plugins.md): nothing else is edited, and the existing
lookups find it — the diffusers adapter's family detection and settings, the
``api:`` model spec and its requests, the ``vlm`` reader's ``preset`` option, and
``glyphbench list``.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image
from pydantic import Field
from typer.testing import CliRunner

from glyphbench.cli.root import app
from glyphbench.core.errors import InputError
from glyphbench.core.registry import PLUGINS
from glyphbench.models.api.core import PROVIDERS, ApiOptions, Provider, Session, add_provider
from glyphbench.models.base import ImageRequest
from glyphbench.models.families import (
    FAMILIES,
    Family,
    Quirk,
    detect_family,
    families_for_class,
    guess_family_from_id,
    register_family,
)
from glyphbench.models.memory import memory_table_markdown
from glyphbench.readers.vlm import VLMOptions
from glyphbench.readers.vlm_presets import PRESETS, Preset, register_preset
from tests.helpers.paths import REPO_ROOT

TOY_FAMILY = Family(
    "toy-glyph",
    ("ToyGlyphPipeline",),
    48,
    80,
    3,
    2.5,
    "float32",
    quirks=(Quirk("toy-suffix", "a toy suffix", suffix=", in toy letters"),),
    id_patterns=(r"toy-?glyph",),
    parameters={"transformer": 0.5},
)


class ToyApiOptions(ApiOptions):
    colour: str = Field(default="red", description="the colour of the toy image")


def _toy_connect(options: Any, key: str) -> Any:
    return {"key": key}


def _toy_request(session: Session, prompt: str, seed: int) -> bytes:
    assert session.client == {"key": "toy-secret"}
    buffer = io.BytesIO()
    Image.new("RGB", (8 + seed, 8), session.options.colour).save(buffer, format="PNG")
    return buffer.getvalue()


TOY_PROVIDER = Provider(
    name="toyapi",
    options=ToyApiOptions,
    key_env=("TOY_API_KEY",),
    connect=_toy_connect,
    request=_toy_request,
    summary="A toy image API that paints one colour.",
    default_base_url="https://toy.invalid",
    seed_honoured=lambda model, options: True,
)

TOY_PRESET = Preset("Read the toy sign.", 33, "empty", "a toy preset", batch_size=2)


@pytest.fixture(autouse=True)
def _toys() -> Iterator[None]:
    """Each test sees the toys; later test modules see the built-in records only."""
    register_family(TOY_FAMILY)
    add_provider(TOY_PROVIDER)
    register_preset("toy-preset", TOY_PRESET)
    yield
    PLUGINS.unregister("families", "toy-glyph")
    PLUGINS.unregister("providers", "toyapi")
    PLUGINS.unregister("vlm-presets", "toy-preset")


def test_a_toy_family_is_found_by_the_diffusers_adapter(tmp_path: Path) -> None:
    assert FAMILIES["toy-glyph"] is TOY_FAMILY and "toy-glyph" in FAMILIES
    assert list(FAMILIES)[-2:] == ["toy-glyph", "unknown"]  # after the package's, before unknown
    assert families_for_class("ToyGlyphPipeline") == ["toy-glyph"]
    assert detect_family({"_class_name": "ToyGlyphPipeline"}, "/models/x") == "toy-glyph"
    assert guess_family_from_id("lab/ToyGlyph-1") == "toy-glyph"  # --dry-run: the id alone
    folder = tmp_path / "toy"
    folder.mkdir()
    (folder / "model_index.json").write_text('{"_class_name": "ToyGlyphPipeline"}', "utf-8")
    model = PLUGINS.create("models", f"diffusers:{folder}?quirks=toy-suffix&steps=5")
    info = model.describe()
    assert (info["family"], info["family_source"]) == ("toy-glyph", "model_index.json")
    assert (info["settings"]["height"], info["settings"]["width"]) == (48, 80)
    assert (info["settings"]["steps"], info["settings"]["guidance"]) == (5, 2.5)
    assert info["quirks"] == {"toy-suffix": True}
    forced = PLUGINS.create("models", f"diffusers:{folder}?family=toy-glyph").describe()
    assert forced["family_source"] == "option"
    assert "| `toy-glyph` | 0.5 |" in memory_table_markdown()


def test_a_toy_family_is_gone_once_unregistered(tmp_path: Path) -> None:
    PLUGINS.unregister("families", "toy-glyph")
    assert "toy-glyph" not in FAMILIES and guess_family_from_id("lab/ToyGlyph-1") == "unknown"
    with pytest.raises(InputError, match="unknown family 'toy-glyph'"):
        PLUGINS.resolve("models", "diffusers:lab/x?family=toy-glyph")


def test_a_toy_provider_is_an_api_model(monkeypatch: pytest.MonkeyPatch) -> None:
    assert PROVIDERS["toyapi"] is TOY_PROVIDER
    resolved = PLUGINS.resolve("models", "api:toyapi/tiny?colour=blue")
    assert isinstance(resolved.options, ToyApiOptions) and resolved.options.colour == "blue"
    with pytest.raises(InputError, match=r"unknown option 'color'; known: .*colour"):
        PLUGINS.resolve("models", "api:toyapi/tiny?color=blue")
    monkeypatch.setenv("TOY_API_KEY", "toy-secret")
    model = resolved.create()
    (image,) = model.generate([ImageRequest("p1", "a sign", 3)])
    assert image.size == (11, 8) and image.getpixel((0, 0)) == (0, 0, 255)
    info = model.describe()
    assert (info["provider"], info["model"], info["endpoint"]) == (
        "toyapi",
        "tiny",
        "https://toy.invalid",
    )
    assert info["key_env"] == ["TOY_API_KEY"] and info["counts"]["requests"] == 1
    with pytest.raises(InputError, match="known: bfl, google, http, openai, toyapi"):
        PLUGINS.resolve("models", "api:nope/x")
    listed = json.loads(CliRunner().invoke(app, ["list", "models", "--json"]).output)["models"]
    (api,) = [plugin for plugin in listed if plugin["name"] == "api"]
    assert api["providers"]["toyapi"]["summary"] == "A toy image API that paints one colour."
    assert [o["name"] for o in api["targets"]["toyapi/<model>"]][-1] == "colour"
    assert "toyapi/<model> options:" in CliRunner().invoke(app, ["list", "models"]).output


def test_a_toy_preset_is_a_vlm_reader_option() -> None:
    assert PRESETS["toy-preset"] is TOY_PRESET
    options = PLUGINS.resolve("readers", "vlm?preset=toy-preset").options
    assert isinstance(options, VLMOptions)
    assert options.resolved() == ("Read the toy sign.", 33, "empty")
    assert options.batch() == 2
    with pytest.raises(InputError) as caught:
        PLUGINS.resolve("readers", "vlm?preset=nope")
    assert "Input should be 'plain', 'longtext', 'oneig' or 'toy-preset'" in str(caught.value)
    listed = json.loads(CliRunner().invoke(app, ["list", "readers", "--json"]).output)["readers"]
    (vlm,) = [plugin for plugin in listed if plugin["name"] == "vlm"]
    (preset,) = [option for option in vlm["options"] if option["name"] == "preset"]
    assert preset["type"] == "'plain' | 'longtext' | 'oneig' | 'toy-preset'"


DROPPED = {
    "glyphbench.models.families": (
        "toy_dropped.py",
        "from glyphbench.models.families import Family, register_family\n"
        "register_family(Family('toy-dropped', ('ToyDroppedPipeline',), 32, 32, 2, 1.0,\n"
        "                       'float32', id_patterns=('toy-dropped',)))\n",
    ),
    "glyphbench.models.api": (
        "toydrop_provider.py",
        "from glyphbench.models.api.core import ApiOptions, Provider, add_provider\n"
        "add_provider(Provider('toydrop', ApiOptions, ('TOYDROP_KEY',), print, print,\n"
        "                      'A dropped-in toy API.', 'https://toy.invalid',\n"
        "                      lambda model, options: True))\n",
    ),
    "glyphbench.readers.vlm_presets": (
        "toy_dropped.py",
        "from glyphbench.readers.vlm_presets import Preset, register_preset\n"
        "register_preset('toy-dropped', Preset('Read.', 9, 'keep', 'a dropped-in preset'))\n",
    ),
}

PROBE = """
import importlib, json, sys
from typer.testing import CliRunner
for package, folder in json.loads(sys.argv[1]).items():
    importlib.import_module(package).__path__.append(folder)  # as if the file were in it
from glyphbench.cli.root import app
from glyphbench.models.families import detect_family, guess_family_from_id
listed = json.loads(CliRunner().invoke(app, ["list", "--json"]).output)
diffusers, = [p for p in listed["models"] if p["name"] == "diffusers"]
api, = [p for p in listed["models"] if p["name"] == "api"]
vlm, = [p for p in listed["readers"] if p["name"] == "vlm"]
print(json.dumps({
    "detected": detect_family("ToyDroppedPipeline", "/m/x"),
    "guessed": guess_family_from_id("lab/toy-dropped-1"),
    "summary": diffusers["summary"],
    "providers": sorted(api["providers"]),
    "preset": next(o["type"] for o in vlm["options"] if o["name"] == "preset"),
}))
"""


@pytest.mark.slow
def test_a_module_dropped_into_each_package_is_found_with_nothing_else_edited(
    tmp_path: Path,
) -> None:
    """The recipe itself: one module in the package, found by the registry on first use.

    A fresh interpreter adds a temporary folder to each package's search path (as if
    the module had been saved in it); nothing imports the module by name.
    """
    folders = {}
    for package, (name, code) in DROPPED.items():
        folder = tmp_path / package.replace(".", "_")
        folder.mkdir()
        (folder / name).write_text(code, encoding="utf-8")
        folders[package] = str(folder)
    done = subprocess.run(
        [sys.executable, "-c", PROBE, json.dumps(folders)],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["detected"] == seen["guessed"] == "toy-dropped"
    assert "toy-dropped" in seen["summary"]  # `glyphbench list models`
    assert seen["providers"] == ["bfl", "google", "http", "openai", "toydrop"]
    assert seen["preset"] == "'plain' | 'longtext' | 'oneig' | 'toy-dropped'"
