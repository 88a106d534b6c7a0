"""Shared fixtures.

``textinvision_dir`` points at the public TextInVision data beside the checkout
(``../shared/textinvision``) or at ``$GLYPHBENCH_TEXTINVISION``; tests that use it
are skipped, with the reason printed, where the data is absent (e.g. a user's clone).
"""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from hypothesis import settings as hypothesis_settings

REPO_ROOT = Path(__file__).resolve().parents[1]

# A shell starts a background job (``make test &``, a CI step run so) with SIGINT ignored,
# and every process it starts inherits that: Python then leaves Ctrl-C ignored, and the
# tests that interrupt a run with SIGINT would see it finish instead. A handler (not an
# ignore) is reset to the default when a child process starts, so the runs these tests
# start take Ctrl-C as a terminal's would.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


# Hypothesis' default deadline (200 ms an example) fails a test when the machine is loaded,
# not when the code is wrong: the same example took 4 ms on a quiet machine and 264 ms on a
# busy CI host. Property tests here check results, never speed (benchmarks/ measures speed),
# so every test runs without a deadline; HYPOTHESIS_PROFILE picks another profile.
hypothesis_settings.register_profile("glyphbench", deadline=None, print_blob=True)
hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "glyphbench"))


def _textinvision_path() -> Path:
    env = os.environ.get("GLYPHBENCH_TEXTINVISION")
    return Path(env) if env else REPO_ROOT.parent / "shared" / "textinvision"


@pytest.fixture(scope="session")
def textinvision_dir() -> Path:
    path = _textinvision_path()
    if not (path / "all_texts.csv").exists():
        pytest.skip(
            f"TextInVision data not found at {path} "
            "(set GLYPHBENCH_TEXTINVISION or place it in ../shared/textinvision)"
        )
    return path


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Skip tests marked ``gpu`` when no CUDA device is present, saying why."""
    gpu_items = [item for item in items if "gpu" in item.keywords]
    if not gpu_items:
        return
    try:
        import torch

        has_gpu = torch.cuda.is_available()
    except ImportError:
        has_gpu = False
    if not has_gpu:
        marker = pytest.mark.skip(reason="needs a CUDA GPU (none found)")
        for item in gpu_items:
            item.add_marker(marker)
