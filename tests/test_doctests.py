"""Every docstring example of glyphbench's modules, run as a test under the installed names.

pytest's own ``--doctest-modules`` names a module after its folder, so it would import
``bench/scoring/table.py`` as ``bench.scoring.table``: a second copy of a module whose
registrations already exist as ``glyphbench.scoring.table``. Here each module is imported by the
name the wheel gives it, and each of its examples is one test.
"""

from __future__ import annotations

import doctest
import importlib
import io
import pkgutil

import pytest

#: The package and the folders mounted in it (pyproject's package-dir).
MOUNTS = ("glyphbench", "glyphbench.prompts", "glyphbench.vae_eval", "glyphbench.human_eval")


def module_names() -> list[str]:
    """Every module of the package, ``__main__`` aside (importing it runs the CLI)."""
    names = set(MOUNTS)
    for mount in MOUNTS:
        package = importlib.import_module(mount)
        for info in pkgutil.walk_packages(package.__path__, f"{mount}."):
            if not info.name.endswith(".__main__"):
                names.add(info.name)
    return sorted(names)


def docstring_examples() -> list[doctest.DocTest]:
    finder = doctest.DocTestFinder()
    cases = []
    for name in module_names():
        module = importlib.import_module(name)
        cases.extend(test for test in finder.find(module, name) if test.examples)
    return sorted(cases, key=lambda test: test.name)


EXAMPLES = docstring_examples()


def test_examples_are_found() -> None:
    """The walk reaches every mounted folder (a lost mount would silently drop its examples)."""
    owners = {test.name.split(".")[1] for test in EXAMPLES}
    assert {"prompts", "vae_eval", "human_eval", "scoring", "core"} <= owners


@pytest.mark.parametrize("example", EXAMPLES, ids=[test.name for test in EXAMPLES])
def test_docstring_example(example: doctest.DocTest) -> None:
    # ELLIPSIS: pytest's default for its own doctests, which these replace.
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report = io.StringIO()
    result = runner.run(example, out=report.write)
    if result.failed:
        pytest.fail(report.getvalue(), pytrace=False)
