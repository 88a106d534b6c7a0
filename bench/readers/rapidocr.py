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
#: The wheel's own detector defaults (its ``config.yaml``: ``Det.box_thresh``,
#: ``Det.unclip_ratio``), given again with ``return_word_box``: any keyword resets them.
BOX_THRESH = 0.5
UNCLIP_RATIO = 1.6


@functools.cache
def _load(threads: int, text_score: float, det_side: int, det_limit: str) -> Any:
    """One ``RapidOCR`` per process and settings: the ONNX sessions are built once."""
    from rapidocr_onnxruntime import RapidOCR

    return RapidOCR(
        intra_op_num_threads=threads,
        text_score=text_score,
        det_limit_side_len=det_side,
        det_limit_type=det_limit,
        print_verbose=False,
    )


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
        self._ocr = _load(self.threads, self.text_score, self.det_side, self.det_limit)

    @property
    def version(self) -> str:
        try:
            package = f"{PACKAGE} {version(PACKAGE)}"
        except PackageNotFoundError:
            package = PACKAGE
        import onnxruntime

        return (
            f"{package}; models {MODEL_NAMES}; onnxruntime {onnxruntime.__version__}; "
            f"det {self.det_limit} {self.det_side}"
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
        """``(box, text, score)`` of each line, with its spaces restored when ``spaces`` is on."""
        if not self.spaces:
            detections, _ = self._ocr(rgb)
            return [(box, text, score) for box, text, score in detections or []]
        import numpy as np

        # Passing any keyword resets the engine's thresholds to these values, so all are given.
        detections, _ = self._ocr(
            rgb,
            return_word_box=True,
            text_score=self.text_score,
            box_thresh=BOX_THRESH,
            unclip_ratio=UNCLIP_RATIO,
        )
        gray = np.asarray(rgb.convert("L"))
        lines = []
        for box, text, score, char_boxes, *_ in detections or []:
            spaced = restore_spaces(gray, box, text, char_boxes or [], self.space_gap)
            lines.append((box, spaced, score))
        return lines


@register(
    "readers",
    "rapidocr",
    options=RapidOCROptions,
    summary="RapidOCR: PaddleOCR's PP-OCR models on onnxruntime, CPU; models ship in the wheel.",
    missing=lambda: missing_modules("rapidocr_onnxruntime", "onnxruntime"),
)
def create_rapidocr(spec: Spec, options: RapidOCROptions) -> RapidOCRReader:
    return RapidOCRReader(options)
