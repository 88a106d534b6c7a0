"""Every repository path and module that README.md and docs/ name in backticks exists (issue 23).

A file moved or renamed without its docs fails here, naming the document and the reference.
Paths are relative to the repository root (``bench/engine/folder.py``, ``configs/...``);
modules are dotted names of the four packages (``bench.engine.read_batch`` may name an
attribute: its longest importable prefix must have it).
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md")])
ROOTS = ("bench", "prompts", "vae_eval", "human_eval", "benchmarks", "tests", "configs", "docs")
PATH = re.compile(rf"`((?:{'|'.join(ROOTS)})/[A-Za-z0-9_./-]*[A-Za-z0-9_/])(?:::[\w\[\]-]+)?`")
#: Paths the docs name in other repositories (cited sources), not in this one.
ELSEWHERE = {"docs/eval.jpg": "tyxsspa/AnyText's README figure (docs/suites.md cites it)"}
MODULE = re.compile(r"`((?:bench|prompts|vae_eval|human_eval)(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`")


def references(pattern: re.Pattern[str]) -> list[tuple[str, str]]:
    found = []
    for doc in DOCS:
        for match in pattern.finditer(doc.read_text(encoding="utf-8")):
            found.append((doc.relative_to(REPO).as_posix(), match.group(1)))
    return sorted(set(found))


def resolves(dotted: str) -> bool:
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            if not hasattr(target, name):
                return False
            target = getattr(target, name)
        return True
    return False


@pytest.mark.parametrize(("doc", "path"), references(PATH))
def test_every_path_named_in_the_docs_exists(doc: str, path: str) -> None:
    if path in ELSEWHERE:
        pytest.skip(ELSEWHERE[path])
    if "*" in path:
        assert list(REPO.glob(path)), f"{doc} names {path}, which matches nothing"
    else:
        assert (REPO / path).exists(), f"{doc} names {path}, which does not exist"


@pytest.mark.parametrize(("doc", "module"), references(MODULE))
def test_every_module_named_in_the_docs_imports(doc: str, module: str) -> None:
    assert resolves(module), f"{doc} names {module}, which does not import"
