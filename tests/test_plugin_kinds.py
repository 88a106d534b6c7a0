"""The registry's KINDS table names plug-in packages by string: the one place bench.core
points up. What keeps that honest (docs/architecture.md, "Plug-in kinds"; issue 34)."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path

from bench.core.registry import KINDS

ROOT = Path(__file__).resolve().parents[1]


def _layers() -> list[str]:
    spec = importlib.util.spec_from_file_location(
        "arch_metrics", ROOT / "benchmarks" / "arch_metrics.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["arch_metrics"] = module
    spec.loader.exec_module(module)
    return [room for floor in module.layers(ROOT / "pyproject.toml") for room in floor]


def test_every_plugin_package_lies_in_a_room_of_the_layers_contract() -> None:
    """So lint-imports checks each plug-in module's own imports against its room."""
    rooms = _layers()
    for kind, package in KINDS.items():
        assert any(package == room or package.startswith(room + ".") for room in rooms), kind
        assert importlib.util.find_spec(package) is not None, package


def test_the_registry_imports_nothing_above_core_by_statement() -> None:
    """The plug-in packages are imported by name at run time (importlib), never by an
    import statement: the registry stays on the bottom floor."""
    tree = ast.parse((ROOT / "bench" / "core" / "registry.py").read_text(encoding="utf-8"))
    project = ("bench", "prompts", "vae_eval", "human_eval")
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        else:
            continue
        for name in names:
            if name.split(".")[0] in project:
                assert name.startswith("bench.core"), name
