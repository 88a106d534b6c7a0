"""Registering a name that is taken fails, naming both places; replace=True overrides."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from glyphbench.core.registry import PLUGINS, DuplicateName, NoOptions, Spec
from glyphbench.scoring.table import METRICS, Metric, register_metric


def _reader_a(spec: Spec, options: NoOptions) -> str:
    return "a"


def _reader_b(spec: Spec, options: NoOptions) -> str:
    return "b"


def test_a_taken_plugin_name_is_an_error_naming_both_places() -> None:
    PLUGINS.register("readers", "dup-toy")(_reader_a)
    try:
        with pytest.raises(DuplicateName) as caught:
            PLUGINS.register("readers", "dup-toy")(_reader_b)
        message = str(caught.value)
        assert f"{__name__}._reader_a" in message and f"{__name__}._reader_b" in message
        assert "replace=True" in message
        assert PLUGINS.create("readers", "dup-toy") == "a"  # the first one stays
        PLUGINS.register("readers", "dup-toy")(_reader_a)  # the same place again: no conflict
        PLUGINS.register("readers", "dup-toy", replace=True)(_reader_b)
        assert PLUGINS.create("readers", "dup-toy") == "b"
    finally:
        PLUGINS.unregister("readers", "dup-toy")


def test_a_plugin_cannot_shadow_a_built_in_by_accident() -> None:
    PLUGINS.load("readers")
    built_in = PLUGINS.get("readers", "easyocr")
    with pytest.raises(DuplicateName, match=built_in.module):
        PLUGINS.register("readers", "easyocr")(_reader_b)
    assert PLUGINS.get("readers", "easyocr") is built_in


def test_a_taken_metric_name_is_an_error_naming_both_modules() -> None:
    toy = Metric(
        name="dup_toy_score",
        function=lambda pair: 1.0,
        label="toy",
        higher_is_better=True,
        doc="a toy",
        family="dup-toy",
    )
    register_metric(toy)
    try:
        register_metric(toy)  # the same module again: no conflict
        with pytest.raises(DuplicateName, match=r"dup_toy_score.*elsewhere\.module.*replace=True"):
            METRICS.add(toy, place="elsewhere.module")
        METRICS.add(toy, place="elsewhere.module", replace=True)
    finally:
        METRICS.remove("dup_toy_score", "dup-toy")


# ------------------------------------------------- records: families, API providers, VLM presets


def test_a_taken_model_family_name_is_an_error_naming_both_modules() -> None:
    from glyphbench.models.families import FAMILIES, Family, detect_family, register_family

    built_in = FAMILIES["sdxl"]
    shadow = Family("sdxl", ("StableDiffusionXLPipeline",), 64, 64, 1, 0.0, "float32")
    with pytest.raises(DuplicateName) as caught:
        register_family(shadow)
    message = str(caught.value)
    assert "model family 'sdxl'" in message
    assert "glyphbench.models.families.classic" in message and __name__ in message
    assert FAMILIES["sdxl"] is built_in
    try:
        register_family(shadow, replace=True)
        assert FAMILIES["sdxl"] is shadow and detect_family("StableDiffusionXLPipeline") == "sdxl"
    finally:
        PLUGINS.add_record(
            "families", "sdxl", built_in, module="glyphbench.models.families.classic", replace=True
        )
    assert FAMILIES["sdxl"] is built_in
    toy = Family("dup-toy-family", (), None, None, None, None, "float32")
    with pytest.raises(
        DuplicateName, match=f"{__name__} registers model family 'dup-toy-family' twice"
    ):
        register_family(toy, toy)
    assert "dup-toy-family" not in FAMILIES


def test_a_taken_api_provider_name_is_an_error_naming_both_modules() -> None:
    from dataclasses import replace

    from glyphbench.models.api.core import PROVIDERS, add_provider

    built_in = PROVIDERS["openai"]
    shadow = replace(built_in, summary="a shadow of the OpenAI provider")
    with pytest.raises(DuplicateName) as caught:
        add_provider(shadow)
    message = str(caught.value)
    assert "api provider 'openai'" in message
    assert "glyphbench.models.api.openai_provider" in message and __name__ in message
    assert PROVIDERS["openai"] is built_in
    try:
        add_provider(shadow, replace=True)
        assert PROVIDERS["openai"] is shadow
        assert PLUGINS.resolve("models", "api:openai/gpt-image-1").create().provider is shadow
    finally:
        PLUGINS.add_record(
            "providers",
            "openai",
            built_in,
            module="glyphbench.models.api.openai_provider",
            replace=True,
        )
    assert PROVIDERS["openai"] is built_in


def test_a_taken_vlm_preset_name_is_an_error_naming_both_modules() -> None:
    from glyphbench.readers.vlm import VLMOptions
    from glyphbench.readers.vlm_presets import PRESETS, Preset, register_preset

    built_in = PRESETS["oneig"]
    shadow = Preset("Read it.", 7, "keep", "a shadow of OneIG's preset")
    with pytest.raises(DuplicateName) as caught:
        register_preset("oneig", shadow)
    message = str(caught.value)
    assert "vlm preset 'oneig'" in message
    assert "glyphbench.readers.vlm_presets" in message and __name__ in message
    assert PRESETS["oneig"] is built_in
    try:
        register_preset("oneig", shadow, replace=True)
        assert VLMOptions(preset="oneig").resolved() == ("Read it.", 7, "keep")
    finally:
        PLUGINS.add_record(
            "vlm-presets", "oneig", built_in, module="glyphbench.readers.vlm_presets", replace=True
        )
    assert VLMOptions(preset="oneig").resolved()[1] == 128


def test_a_second_thread_waits_for_a_kind_being_loaded_and_sees_it_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A thread that looks a kind up while another thread imports its package waits."""
    import threading

    from glyphbench.core.registry import PluginRegistry

    package = tmp_path / "toy_kind_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "gate.py").write_text(
        "import threading\nREGISTRY = None\n"
        "HALF_WAY = threading.Event()\nGO_ON = threading.Event()\n"
    )
    (package / "m_first.py").write_text(
        "from toy_kind_pkg import gate\n"
        "gate.REGISTRY.register('toys', 'first')(lambda spec, options: 1)\n"
        "gate.HALF_WAY.set()\n"
        "assert gate.GO_ON.wait(60)\n"
    )
    (package / "m_second.py").write_text(
        "from toy_kind_pkg import gate\n"
        "gate.REGISTRY.register('toys', 'second')(lambda spec, options: 2)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    import toy_kind_pkg.gate as gate  # type: ignore[import-not-found]

    registry = PluginRegistry({"toys": "toy_kind_pkg"})
    gate.REGISTRY = registry
    loader = threading.Thread(target=registry.load, args=("toys",))
    loader.start()
    assert gate.HALF_WAY.wait(60), "the loading thread never reached the first module"
    seen: list[list[str]] = []
    looker = threading.Thread(target=lambda: seen.append(registry.names("toys")))
    looker.start()
    looker.join(timeout=0.5)
    assert looker.is_alive(), "the second thread did not wait for the kind to be loaded"
    gate.GO_ON.set()
    loader.join(timeout=60)
    looker.join(timeout=60)
    assert seen == [["first", "second"]]
    for name in [m for m in sys.modules if m.startswith("toy_kind_pkg")]:
        del sys.modules[name]
