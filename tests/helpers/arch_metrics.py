"""ROOT, load: what several test modules share.

Here rather than in one of them: a test module never imports another.
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

from tests.helpers.paths import REPO_ROOT

ROOT = REPO_ROOT


def load() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "arch_metrics", ROOT / "benchmarks" / "arch_metrics.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["arch_metrics"] = module
    spec.loader.exec_module(module)
    return module
