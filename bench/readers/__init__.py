"""OCR engines, registered by name in :data:`bench.readers.base.OCR_ENGINES`.

Public API::

    from bench.readers import get_reader, available_engines, read_or_errors
    engine = get_reader("easyocr?gpu=0")      # or "rapidocr", "tesseract?psm=11"
    results = engine.read([pil_image, ...])       # one Reading per image, in order
    outcomes = read_or_errors(engine, images)     # Reading or the exception, per image
    engine.name, engine.version                   # recorded in every results row

Importing this package is cheap: engine modules (and easyocr, torch, onnxruntime)
are imported only when an engine is created. Each engine keeps its loaded model
in a per-process cache, so creating the same engine twice does not reload weights.
See ``docs/readers.md``.
"""

from __future__ import annotations

import importlib.util
import shutil

from bench.readers.base import OCR_ENGINES, Reader, Reading
from bench.readers.common import ReadError, read_or_errors
from bench.readers.order import reading_order
from bench.registry import Spec

DEFAULT_ENGINE = "easyocr"

__all__ = [
    "DEFAULT_ENGINE",
    "OCR_ENGINES",
    "ReadError",
    "Reader",
    "Reading",
    "available_engines",
    "get_reader",
    "read_or_errors",
    "reading_order",
]


@OCR_ENGINES.register("easyocr")
def _create_easyocr(spec: Spec) -> Reader:
    from bench.readers.easyocr import EasyOCRReader

    return EasyOCRReader(spec)


@OCR_ENGINES.register("rapidocr")
def _create_rapidocr(spec: Spec) -> Reader:
    from bench.readers.rapidocr import RapidOCRReader

    return RapidOCRReader(spec)


@OCR_ENGINES.register("tesseract")
def _create_tesseract(spec: Spec) -> Reader:
    from bench.readers.tesseract import TesseractReader

    return TesseractReader(spec)


def get_reader(spec: str | Spec = DEFAULT_ENGINE) -> Reader:
    """Create the engine named by ``spec`` (e.g. ``"easyocr?gpu=0&batch_size=4"``).

    Unknown names and options raise :class:`bench.errors.InputError`.
    """
    return OCR_ENGINES.create(spec)


def _missing_modules(*modules: str) -> str | None:
    for module in modules:
        if importlib.util.find_spec(module) is None:
            return f"python package {module!r} is not installed"
    return None


def available_engines() -> dict[str, bool | str]:
    """Each registered engine -> ``True`` when it can be created here, else the reason.

    Checks only that packages/binaries exist (nothing is imported or loaded).
    """
    requirements: dict[str, str | None] = {
        "easyocr": _missing_modules("easyocr", "easyocr_en_models", "torch"),
        "rapidocr": _missing_modules("rapidocr_onnxruntime", "onnxruntime"),
        "tesseract": None
        if shutil.which("tesseract")
        else "tesseract binary not found; apt-get install tesseract-ocr",  # as the engine says
    }
    return {
        name: (True if requirements.get(name) is None else str(requirements[name]))
        for name in OCR_ENGINES.names()
    }
