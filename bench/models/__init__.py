"""Model adapters: the ``models`` plug-ins of :data:`glyphbench.core.registry.PLUGINS`.

Public API::

    from glyphbench.models import get_model, ImageRequest
    model = get_model("control:typo?rate=0.2")     # or "diffusers:<hub id or folder>"
    images = model.generate([ImageRequest(prompt, text, seed), ...])
    model.describe()                                 # recorded in run.json

Every module of this package may register a model kind (``control`` in
:mod:`glyphbench.models.controls`, ``diffusers`` in :mod:`glyphbench.models.diffusers_adapter`);
the registry imports them all when models are first looked up. Importing them is
cheap: heavy libraries (torch, diffusers) load only inside the adapters.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from glyphbench.core.errors import InputError
from glyphbench.core.registry import PLUGINS, Spec
from glyphbench.models.base import ImageRequest, ModelAdapter

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "ImageRequest",
    "ModelAdapter",
    "check_prompts",
    "get_model",
]


def get_model(spec: str | Spec) -> ModelAdapter:
    """Create the adapter named by ``spec``; unknown kinds and bad options raise InputError.

    >>> get_model("control:blank?size=64").describe()["size"]
    64
    """
    model: ModelAdapter = PLUGINS.create("models", spec)
    return model


def check_prompts(specs: Iterable[str | Spec], frame: pd.DataFrame, source: str) -> None:
    """Refuse prompts one of the models cannot make images of (the render controls: a text
    over their limit), before a run writes anything (:meth:`ModelAdapter.check_prompts`)."""
    for spec in specs:
        try:
            adapter = get_model(spec)
        except InputError:
            raise  # an unknown kind or a bad option: refused before anything is written
        except Exception:  # an adapter that cannot even be made fails in the run, as its
            continue  # own failed rows (the run's model-load errors), not here
        adapter.check_prompts(frame, source)
