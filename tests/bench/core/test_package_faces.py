"""Package faces stay light: importing a package (or a light module in it) loads no pandas,
yet every public name of the face is importable."""

from __future__ import annotations

import importlib
import subprocess
import sys
import types

import pytest

#: package -> a module of it that must import without pandas and pyarrow.
LIGHT = {
    "glyphbench.engine": "glyphbench.engine.jobs",
    "glyphbench.scoring": "glyphbench.scoring.table",
}


def _loaded_after(statement: str) -> list[str]:
    code = (
        "import sys\n"
        f"{statement}\n"
        "print(','.join(m for m in ('pandas', 'pyarrow') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return [name for name in out.stdout.strip().split(",") if name]


@pytest.mark.parametrize("package", sorted(LIGHT))
def test_a_light_module_of_the_package_loads_no_pandas(package):
    assert _loaded_after(f"import {LIGHT[package]}") == []


def test_help_loads_no_pandas():
    """The run command's help lists the suites, whose modules import glyphbench.core.io."""
    statement = (
        "from typer.testing import CliRunner\n"
        "from glyphbench.cli.root import app\n"
        "assert CliRunner().invoke(app, ['--help']).exit_code == 0"
    )
    assert _loaded_after(statement) == []


@pytest.mark.parametrize("package", sorted(LIGHT))
def test_every_public_name_of_the_face_is_importable(package):
    face = importlib.import_module(package)
    for name in face.__all__:
        value = getattr(face, name)
        assert not isinstance(value, types.ModuleType), f"{package}.{name} is a module"
    with pytest.raises(AttributeError):
        face.no_such_name  # noqa: B018


def test_a_lazily_exported_name_is_the_object_of_its_home_module():
    from glyphbench.engine import RunFolder, read_batch
    from glyphbench.engine.folder import RunFolder as home_folder
    from glyphbench.engine.reading import read_batch as home_read_batch
    from glyphbench.scoring import normalize
    from glyphbench.scoring.normalize import normalize as home_normalize

    assert RunFolder is home_folder and read_batch is home_read_batch
    assert normalize is home_normalize  # a function, not the submodule of the same name
