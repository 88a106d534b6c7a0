"""The OCR engine interface: one class that turns images into text.

Engines are ``readers`` plug-ins of :data:`glyphbench.core.registry.PLUGINS` (one module of
this package each), created from a spec string (``easyocr``, ``rapidocr``,
``tesseract``, optionally with options such as ``easyocr?gpu=0``). Heavy imports
happen inside the engine's constructor.

Reading order (the order words are joined into ``Reading.text``): detected
boxes are grouped into lines, lines are read top to bottom and the boxes of a
line left to right (:func:`glyphbench.readers.order.reading_order`), or, where a reader
reads block by block (``rapidocr``'s default ``order=blocks``), cards, panels and columns
one after another (:func:`glyphbench.readers.order.block_order`). ``Reading.raw``
keeps each detection's text as the engine gave it, in the engine's own order.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import Image

Point = tuple[float, float]


@dataclass
class Reading:
    """What an engine read in one image, in reading order."""

    text: str  # the detected pieces joined with single spaces, in reading order
    pieces: list[str] = field(default_factory=list)  # text of each box
    boxes: list[list[Point]] = field(default_factory=list)  # 4 corner points per box, pixels
    confidences: list[float] = field(default_factory=list)  # one per box, 0..1
    #: The text of every detection as the engine step returned it, in the engine's own order:
    #: end and double spaces kept, blank detections included. A benchmark adapter
    #: uses it where the benchmark's reader would have given the same (LeX-Bench's PaddleOCR
    #: boxes); glyphbench's own metrics read ``text``. Empty: not kept (readings made before).
    raw: list[str] = field(default_factory=list)


class Reader(ABC):
    """Turns a batch of RGB PIL images into one :class:`Reading` per image."""

    #: Registry name, e.g. "easyocr"; recorded in every results row.
    name: str = ""

    @property
    @abstractmethod
    def version(self) -> str:
        """Engine/package version and model identity, recorded in every results row."""

    @abstractmethod
    def read(self, images: Sequence[Image.Image]) -> list[Reading]:
        """OCR each image; the list has one result per input image, in order."""
