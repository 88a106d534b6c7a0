"""OCR engines: the ``readers`` plug-ins of :data:`glyphbench.core.registry.PLUGINS`.

Public API::

    from glyphbench.readers import get_reader, available_engines, read_or_errors
    engine = get_reader("easyocr?gpu=0")      # or "rapidocr", "tesseract?psm=11"
    results = engine.read([pil_image, ...])       # one Reading per image, in order
    outcomes = read_or_errors(engine, images)     # Reading or the exception, per image
    engine.name, engine.version                   # recorded in every results row

Each engine is one module of this package that registers itself (with its typed
options: :class:`~glyphbench.readers.easyocr.EasyOCROptions`,
:class:`~glyphbench.readers.rapidocr.RapidOCROptions`,
:class:`~glyphbench.readers.tesseract.TesseractOptions`). Importing them is cheap:
easyocr, torch and onnxruntime are imported only when an engine is created. Each
engine keeps its loaded model in a per-process cache, so creating the same engine
twice does not reload weights. See ``docs/readers.md``.
"""

from __future__ import annotations

from glyphbench.core.registry import PLUGINS, Spec
from glyphbench.readers.base import Reader, Reading
from glyphbench.readers.common import ReadError, read_or_errors
from glyphbench.readers.order import reading_order

#: The default reader of ``run``, ``demo``, ``vae-eval`` and ``readers calibrate``, and of
#: :func:`get_reader` without a spec: the one reader glyphbench names as its default. Chosen
#: on the tune part of the real-image set, closest there to a person's reading
#: (docs/readers.md, "The default reader").
DEFAULT_READER = "rapidocr"

__all__ = [
    "DEFAULT_READER",
    "ReadError",
    "Reader",
    "Reading",
    "available_engines",
    "get_reader",
    "read_or_errors",
    "reading_order",
]


def get_reader(spec: str | Spec = DEFAULT_READER) -> Reader:
    """Create the engine named by ``spec`` (e.g. ``"easyocr?gpu=0&batch_size=4"``).

    Unknown names and options raise :class:`glyphbench.core.errors.InputError`.
    """
    reader: Reader = PLUGINS.create("readers", spec)
    return reader


def available_engines() -> dict[str, bool | str]:
    """Each registered engine -> ``True`` when it can be created here, else the reason.

    Checks only that packages/binaries exist (nothing is imported or loaded).
    """
    found: dict[str, bool | str] = {}
    for plugin in PLUGINS.entries("readers"):
        reason = plugin.unavailable()
        found[plugin.name] = True if reason is None else reason
    return found
