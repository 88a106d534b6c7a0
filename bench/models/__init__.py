"""Model adapters, registered by kind in :data:`bench.models.base.MODELS`.

Public API::

    from bench.models import get_model, ImageRequest
    model = get_model("control:typo?rate=0.2")     # or "diffusers:<hub id or folder>"
    images = model.generate([ImageRequest(prompt, text, seed), ...])
    model.describe()                                 # recorded in run.json

Importing this package is cheap: adapter modules are imported when a model is
created, and heavy libraries (torch, diffusers) only inside the adapters.
"""

from __future__ import annotations

import importlib
import importlib.util

from bench.models.base import MODELS, ImageRequest, ModelAdapter
from bench.registry import Spec

#: Modules whose import registers adapters; optional ones are skipped when absent.
ADAPTER_MODULES = ("bench.models.controls", "bench.models.diffusers_adapter")

__all__ = [
    "ADAPTER_MODULES",
    "MODELS",
    "ImageRequest",
    "ModelAdapter",
    "get_model",
    "load_adapters",
]


def load_adapters() -> None:
    """Import every adapter module present, so their kinds are registered."""
    for name in ADAPTER_MODULES:
        if importlib.util.find_spec(name) is not None:
            importlib.import_module(name)


def get_model(spec: str | Spec) -> ModelAdapter:
    """Create the adapter named by ``spec``; unknown kinds raise :class:`InputError`."""
    load_adapters()
    return MODELS.create(spec)
