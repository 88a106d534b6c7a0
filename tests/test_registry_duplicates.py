"""Registering a name that is taken fails, naming both places (issue 23); replace=True overrides."""

from __future__ import annotations

import pytest

from bench.core.registry import PLUGINS, DuplicateName, NoOptions, Spec
from bench.scoring.table import METRICS, Metric, register_metric


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
