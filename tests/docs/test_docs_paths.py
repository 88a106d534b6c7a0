"""Every repository path and module that README.md and docs/ name in backticks exists.

A file moved or renamed without its docs fails here, naming the document and the reference.
Paths are relative to the repository root (``bench/engine/folder.py``, ``configs/...``);
modules are dotted names under ``glyphbench`` (``glyphbench.engine.read_batch`` may name an
attribute: its longest importable prefix must have it), and never the folders' own names.
"""

from __future__ import annotations

import importlib
import re

import pytest

from tests.helpers.paths import REPO_ROOT

REPO = REPO_ROOT
DOCS = sorted([REPO / "README.md", *(REPO / "docs").glob("*.md")])
ROOTS = ("bench", "prompts", "vae_eval", "human_eval", "benchmarks", "tests", "configs", "docs")
PATH = re.compile(rf"`((?:{'|'.join(ROOTS)})/[A-Za-z0-9_./-]*[A-Za-z0-9_/])(?:::[\w\[\]-]+)?`")
#: Paths the docs name in other repositories (cited sources), not in this one.
ELSEWHERE = {"docs/eval.jpg": "tyxsspa/AnyText's README figure (docs/suites.md cites it)"}
#: Dotted names under glyphbench's name that are not modules.
NOT_MODULES = {
    "glyphbench.plugins": "the entry-point group other packages register plug-ins in",
    "glyphbench.py": "a file: bench/scoring/glyphbench.py",
}
MODULE = re.compile(r"`(glyphbench(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`")
#: A folder's name used as an import name (``prompts.schema``), not a file (``prompts.csv``).
FOLDER_AS_MODULE = re.compile(
    r"(?<![\w./-])((?:bench|prompts|vae_eval|human_eval)\.(?!(?:csv|parquet|md|json|jsonl|txt|"
    r"yaml|html|png|py|sqlite|tex)\b)[A-Za-z_]\w*)"
)


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
    if module in NOT_MODULES:
        return  # checked for what it is by the docs that explain it
    assert resolves(module), f"{doc} names {module}, which does not import"


def test_modules_are_named_by_their_import_names() -> None:
    """``glyphbench.prompts.schema``, never ``prompts.schema``: the folders are not importable."""
    assert references(MODULE), "the docs name no module at all: the pattern is broken"
    assert references(FOLDER_AS_MODULE) == []
