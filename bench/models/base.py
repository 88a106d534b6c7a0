"""The model adapter interface: one class that turns prompts and seeds into images.

Adapters are ``models`` plug-ins of :data:`bench.registry.PLUGINS`, created from a
spec string: ``diffusers:<hub id or local path>[@revision]`` or ``control:render``,
``control:typo?rate=0.2``, ``control:blank``. Heavy imports (torch, diffusers)
happen inside the adapter, never at module import.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from PIL import Image


@dataclass(frozen=True)
class ImageRequest:
    """One image to make. ``seed`` is the image's own seed (see bench.seeds)."""

    prompt: str
    text: str  # the text the prompt asks for; control models draw it, real models ignore it
    seed: int


class ModelAdapter(ABC):
    """Generates one image per request."""

    #: The spec string this adapter was created from, e.g. "control:render".
    spec: str = ""
    #: True for control models (render/typo/blank), labelled as controls everywhere.
    is_control: bool = False

    @abstractmethod
    def generate(self, requests: Sequence[ImageRequest]) -> list[Image.Image]:
        """Return one RGB image per request, in order. One call is one batch."""

    def describe(self) -> dict[str, Any]:
        """Facts recorded in run.json: resolved settings, revision, dtype, ..."""
        return {"spec": self.spec, "is_control": self.is_control}

    def close(self) -> None:  # noqa: B027 - optional hook
        """Free memory (GPU) before the next model loads."""
