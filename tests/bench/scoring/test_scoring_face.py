"""glyphbench.scoring's package face: its lazy-name table and its TYPE_CHECKING imports agree.

The face names each public name twice: ``_HOMES`` (name -> module, what
``__getattr__`` imports on first use) and the TYPE_CHECKING imports (what mypy and a
reader see). A name added to one and not the other would be importable but untyped, or
typed but missing at run time.
"""

from __future__ import annotations

import ast
from pathlib import Path

import glyphbench.scoring as scoring

FACE = Path(scoring.__file__)


def _type_checking_imports() -> dict[str, str]:
    """Name -> module of every ``from M import N`` under ``if TYPE_CHECKING:`` in the face."""
    tree = ast.parse(FACE.read_text(encoding="utf-8"))
    block = next(
        node
        for node in tree.body
        if isinstance(node, ast.If)
        and isinstance(node.test, ast.Name)
        and node.test.id == "TYPE_CHECKING"
    )
    names: dict[str, str] = {}
    for node in block.body:
        assert isinstance(node, ast.ImportFrom) and node.module
        for alias in node.names:
            names[alias.asname or alias.name] = node.module
    return names


def test_the_lazy_table_and_the_type_checking_imports_name_the_same_homes() -> None:
    typed = _type_checking_imports()
    assert typed.pop("pairs") == "glyphbench.scoring"  # the old name of the frame module
    assert typed == scoring._HOMES


def test_every_public_name_resolves_from_its_home() -> None:
    eager = {"COCO_TEXT_PUNCT", "Normalization", "normalize"}
    assert set(scoring.__all__) == set(scoring._HOMES) | eager
    for name in scoring.__all__:
        assert getattr(scoring, name) is not None
    assert scoring.pairs.__name__ == "glyphbench.scoring.frame"
