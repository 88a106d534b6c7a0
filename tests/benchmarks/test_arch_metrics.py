"""benchmarks/arch_metrics.py reads the real tree; its figures hold the layer contract's shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.arch_metrics import ROOT, load


@pytest.mark.slow
def test_figures_of_the_tree_follow_the_layers_contract() -> None:
    metrics = load()
    figures = metrics.measure(ROOT)
    floors = metrics.layers(ROOT / "pyproject.toml")
    assert figures["floors"] == len(floors)
    assert figures["rooms"] == sum(len(floor) for floor in floors)
    assert figures["arrows_back_up"] == 0  # lint-imports keeps the layers
    assert figures["room_cycles"] == []
    chain = figures["longest_chain_modules"]
    assert len(chain) == figures["longest_chain"] >= 2
    assert chain[0].startswith("glyphbench.cli")  # the top floor starts the longest chain
    assert 0 < figures["inside_functions"] < figures["cross_room_imports"]


def test_an_import_inside_a_function_is_counted_as_such(tmp_path: Path) -> None:
    metrics = load()
    (tmp_path / "pyproject.toml").write_text(
        '[[tool.importlinter.contracts]]\ntype = "layers"\nlayers = ["pkg.top", "pkg.low"]\n'
    )
    for name in ("pkg", "pkg/top", "pkg/low"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
    (tmp_path / "pkg/low/base.py").write_text("X = 1\n")
    (tmp_path / "pkg/top/use.py").write_text(
        "from typing import TYPE_CHECKING\nfrom pkg.low.base import X\n"
        "if TYPE_CHECKING:\n    from pkg.low import base\n"
        "def f():\n    from pkg.low.base import X\n    return X\n"
    )
    (tmp_path / "pkg/low/back.py").write_text("def g():\n    import pkg.top.use\n")
    figures = metrics.measure(tmp_path)
    assert figures["cross_room_imports"] == 4
    assert figures["inside_functions"] == 2
    assert figures["inside_functions_repeating"] == 1  # f's import repeats the header's
    assert figures["arrows_back_up"] == 1  # pkg.low.back -> pkg.top.use
    assert figures["longest_chain_modules"] == ["pkg.low.back", "pkg.top.use", "pkg.low.base"]
