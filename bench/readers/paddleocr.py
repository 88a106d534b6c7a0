"""PaddleOCR, as CVTG-2K and LeX-Bench read their images (optional extra ``paddle``).

Install with ``pip install 'glyphbench[paddle]'`` (``paddleocr`` and ``paddlepaddle``).
PaddleOCR downloads its models on first use; on a machine without network access,
give folders of already-downloaded models (``det_model_dir``, ``rec_model_dir``,
``cls_model_dir``). Both APIs are supported and picked by the installed version:

* **2.x** (what CVTG-2K pins, 2.10): ``PaddleOCR(use_angle_cls=..., lang=...,
  ocr_version=...)`` and ``ocr(image, cls=...)``, one list of ``[box, (text, score)]``
  per image. CVTG-2K's reader is ``paddleocr?lang=en&angle=1`` on 2.10 (its defaults:
  ``en_PP-OCRv3`` detector, ``en_PP-OCRv4`` recogniser); LeX-Bench's "paddle-ocr-v3"
  is ``paddleocr?ocr_version=PP-OCRv3``.
* **3.x** (PP-OCRv5 by default): ``PaddleOCR(lang=..., ocr_version=...,
  use_textline_orientation=..., use_doc_orientation_classify=False,
  use_doc_unwarping=False)`` and ``predict(image)``, one result per image holding
  ``rec_texts``, ``rec_scores`` and ``rec_polys``.

Spec options (:class:`PaddleOCROptions`): ``lang`` (``en``, ``ch``, ...), ``angle``
(text-line orientation classifier, default on as in CVTG-2K), ``ocr_version``
(``PP-OCRv3`` | ``PP-OCRv4`` | ``PP-OCRv5``; empty: the package's default), the model
folders, and ``text_score`` (drop detections scored below it; 0 keeps all, as the
benchmarks do). Scripts read follow ``lang`` (:data:`LANG_SCRIPTS`).

Nothing of PaddleOCR is imported until the reader is created; without the package
``glyphbench list readers`` says so and creating it is a one-line error.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from glyphbench.core.errors import InputError
from glyphbench.core.images import to_rgb_array
from glyphbench.core.registry import Options, Spec, missing_modules, register
from glyphbench.readers.base import Point, Reader, Reading
from glyphbench.readers.common import ReadError, assemble
from glyphbench.readers.scripts import LATIN, LATIN_HAN

if TYPE_CHECKING:
    from PIL import Image

PACKAGE = "paddleocr"
INSTALL_HINT = "pip install 'glyphbench[paddle]' (paddleocr and paddlepaddle)"

#: PaddleOCR ``lang`` -> scripts its recogniser reads; languages not listed read Latin.
LANG_SCRIPTS: dict[str, frozenset[str]] = {
    "ch": LATIN_HAN,
    "chinese_cht": LATIN_HAN,
    "japan": frozenset({"latin", "han", "kana"}),
    "korean": frozenset({"latin", "hangul"}),
    "ru": frozenset({"latin", "cyrillic"}),
    "cyrillic": frozenset({"latin", "cyrillic"}),
    "el": frozenset({"latin", "greek"}),
    "ar": frozenset({"latin", "arabic"}),
    "hi": frozenset({"latin", "devanagari"}),
    "th": frozenset({"latin", "thai"}),
}

Detection = tuple[list[Point], str, float]


class PaddleOCROptions(Options):
    """Options of the ``paddleocr`` reader."""

    lang: str = Field(default="en", description="PaddleOCR language: en, ch, japan, korean, ...")
    angle: bool = Field(default=True, description="text-line orientation classifier (180 degrees)")
    ocr_version: Literal["", "PP-OCRv3", "PP-OCRv4", "PP-OCRv5"] = Field(
        default="", description="model generation; empty: the installed package's default"
    )
    det_model_dir: str | None = Field(default=None, description="local detector model folder")
    rec_model_dir: str | None = Field(default=None, description="local recogniser model folder")
    cls_model_dir: str | None = Field(default=None, description="local orientation model folder")
    text_score: float = Field(
        default=0.0, ge=0, le=1, description="drop detections scored below this (0: keep all)"
    )

    def scripts(self) -> frozenset[str]:
        """The scripts of ``lang`` (:data:`LANG_SCRIPTS`; other languages: Latin)."""
        return LANG_SCRIPTS.get(self.lang, LATIN)

    @classmethod
    def script_variants(cls) -> list[str]:
        """Specs reading other scripts: one per language of :data:`LANG_SCRIPTS`."""
        return [f"paddleocr?lang={lang}" for lang in LANG_SCRIPTS]


def package_version() -> str:
    try:
        return version(PACKAGE)
    except PackageNotFoundError:
        return "not installed"


def major_version(text: str) -> int:
    """The major version number of a version string (0 when it has none).

    >>> major_version("2.10.0"), major_version("3.0.3"), major_version("not installed")
    (2, 3, 0)
    """
    head = text.split(".", 1)[0]
    return int(head) if head.isdigit() else 0


def parse_v2(result: Any) -> list[Detection]:
    """Detections of one image from the 2.x ``ocr()`` result for that image.

    2.x returns, per image, a list of ``[box, (text, score)]`` (None when nothing
    was found); ``box`` is four ``[x, y]`` corners.

    >>> parse_v2([[[[0, 0], [9, 0], [9, 5], [0, 5]], ("OPEN", 0.98)]])
    [([(0.0, 0.0), (9.0, 0.0), (9.0, 5.0), (0.0, 5.0)], 'OPEN', 0.98)]
    >>> parse_v2(None)
    []
    """
    detections: list[Detection] = []
    for line in result or []:
        box, (text, score) = line[0], line[1]
        detections.append(([(float(x), float(y)) for x, y in box], str(text), float(score)))
    return detections


def parse_v3(result: Any) -> list[Detection]:
    """Detections of one image from one 3.x ``predict()`` result (a mapping).

    >>> parse_v3({"rec_texts": ["营业中"], "rec_scores": [0.9],
    ...           "rec_polys": [[[0, 0], [30, 0], [30, 10], [0, 10]]]})
    [([(0.0, 0.0), (30.0, 0.0), (30.0, 10.0), (0.0, 10.0)], '营业中', 0.9)]
    """
    texts = list(result["rec_texts"])
    scores = list(result["rec_scores"])
    polys = list(result["rec_polys"])
    return [
        ([(float(x), float(y)) for x, y in poly], str(text), float(score))
        for poly, text, score in zip(polys, texts, scores, strict=True)
    ]


@functools.cache
def _load(options: PaddleOCROptions, major: int) -> Any:
    """One PaddleOCR pipeline per process and options (models are loaded once)."""
    from paddleocr import PaddleOCR

    models = {
        key: value
        for key, value in (
            ("det_model_dir", options.det_model_dir),
            ("rec_model_dir", options.rec_model_dir),
            ("cls_model_dir", options.cls_model_dir),
        )
        if value
    }
    version_arg = {"ocr_version": options.ocr_version} if options.ocr_version else {}
    if major <= 2:
        return PaddleOCR(
            use_angle_cls=options.angle, lang=options.lang, show_log=False, **version_arg, **models
        )
    renamed = {
        "det_model_dir": "text_detection_model_dir",
        "rec_model_dir": "text_recognition_model_dir",
        "cls_model_dir": "textline_orientation_model_dir",
    }
    return PaddleOCR(
        lang=options.lang,
        use_textline_orientation=options.angle,
        use_doc_orientation_classify=False,
        use_doc_unwarping=False,
        **version_arg,
        **{renamed[key]: value for key, value in models.items()},
    )


class PaddleOCRReader(Reader):
    """OCR with PaddleOCR 2.x or 3.x; see the module docstring."""

    name = "paddleocr"

    def __init__(self, options: PaddleOCROptions | None = None) -> None:
        self.options = options or PaddleOCROptions()
        why = missing_modules(PACKAGE)
        if why is not None:
            raise InputError(None, f"paddleocr reader: {why}; {INSTALL_HINT}")
        self.package_version = package_version()
        self.major = major_version(self.package_version)
        self._ocr = _load(self.options, self.major)

    @property
    def version(self) -> str:
        models = self.options.ocr_version or "package default models"
        return f"paddleocr {self.package_version}; lang {self.options.lang}; {models}"

    def _detect(self, array: Any) -> list[Detection]:
        if self.major <= 2:
            return parse_v2(self._ocr.ocr(array, cls=self.options.angle)[0])
        return parse_v3(next(iter(self._ocr.predict(array))))

    def read(self, images: Sequence[Image.Image]) -> list[Reading]:
        results = []
        for index, image in enumerate(images):
            # PaddleOCR expects OpenCV's BGR channel order for arrays.
            array = to_rgb_array(image)[:, :, ::-1].copy()
            try:
                detections = self._detect(array)
            except Exception as error:
                raise ReadError(self.name, index, error) from error
            kept = [d for d in detections if d[2] >= self.options.text_score]
            results.append(assemble(kept))
        return results


@register(
    "readers",
    "paddleocr",
    options=PaddleOCROptions,
    summary="PaddleOCR 2.x/3.x (PP-OCRv3..v5), as CVTG-2K and LeX-Bench read; extra 'paddle'.",
    missing=lambda: missing_modules(PACKAGE, "paddle"),
)
def create_paddleocr(spec: Spec, options: PaddleOCROptions) -> PaddleOCRReader:
    return PaddleOCRReader(options)
