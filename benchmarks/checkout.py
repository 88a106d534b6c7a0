"""Import ``glyphbench`` from a given checkout, to measure one engine against another.

The installed (editable) glyphbench is the checkout it was installed from. A benchmark that
compares engines (``bench_gpu_proxy.py --engine``, ``bench_report.py``'s ``code``) mounts
another checkout's folders under the same names instead, before anything of glyphbench is
imported. A checkout from before the one import namespace (bare ``bench``, ``prompts``, ...)
is served under the new names too: ``glyphbench.engine.folder`` is then its
``bench.engine.folder``, one module object under both names, so patching either patches
what the engine runs.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

#: Import name -> the folder of a checkout that holds it (pyproject's package-dir).
MOUNTS = {
    "glyphbench": "bench",
    "glyphbench.prompts": "prompts",
    "glyphbench.vae_eval": "vae_eval",
    "glyphbench.human_eval": "human_eval",
}


def namespaced(root: Path) -> bool:
    """Whether the checkout at ``root`` installs its folders under ``glyphbench``."""
    return (root / "bench" / "__main__.py").exists()


class _Mounted(importlib.abc.MetaPathFinder):
    """The checkout's folders as ``glyphbench`` and its mounted subpackages."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname not in MOUNTS:
            return None  # submodules come from the package's __path__, as usual
        folder = self.root / MOUNTS[fullname]
        return importlib.util.spec_from_file_location(
            fullname, folder / "__init__.py", submodule_search_locations=[str(folder)]
        )


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """``glyphbench.x`` as an old checkout's ``bench.x`` (``glyphbench.prompts`` as ``prompts``)."""

    @staticmethod
    def old_name(fullname: str) -> str | None:
        for new, folder in sorted(MOUNTS.items(), key=lambda item: -len(item[0])):
            if fullname == new or fullname.startswith(new + "."):
                return folder + fullname[len(new) :]
        return None

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        old = self.old_name(fullname)
        if old is None or importlib.util.find_spec(old) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, self, is_package=True)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        old = self.old_name(spec.name)
        assert old is not None
        return importlib.import_module(old)

    def exec_module(self, module: ModuleType) -> None:
        """The old module ran when it was imported under its own name."""


def mount(root: Path) -> None:
    """Serve ``glyphbench`` from the checkout at ``root`` in this process."""
    root = root.resolve()
    if "glyphbench" in sys.modules:
        raise RuntimeError("mount a checkout before anything imports glyphbench")
    if namespaced(root):
        sys.meta_path.insert(0, _Mounted(root))
    else:
        sys.path.insert(0, str(root))
        sys.meta_path.insert(0, _Alias())


def prelude(root: Path) -> str:
    """Python source a child process (``python -c``) starts with to :func:`mount` ``root``."""
    here = str(Path(__file__).resolve().parent)
    return (
        f"import sys; sys.path.insert(0, {here!r}); import checkout\n"
        f"checkout.mount(checkout.Path({str(root)!r}))\n"
    )
