"""The registry's KINDS table names plug-in packages by string: the one place glyphbench.core
points up. What keeps that honest (docs/architecture.md, "Plug-in kinds")."""

from __future__ import annotations

import ast
import importlib.util

from glyphbench.core.registry import KINDS
from tests.helpers.arch_metrics import ROOT, load


def _layers() -> list[str]:
    metrics = load()
    return [room for floor in metrics.layers(ROOT / "pyproject.toml") for room in floor]


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
                assert name.startswith("glyphbench.core"), name
