"""RapidOCR: PaddleOCR's PP-OCR models run by onnxruntime on CPU.

The ONNX models (PP-OCRv4 detector and recogniser, mobile v2 angle classifier)
ship inside the ``rapidocr-onnxruntime`` wheel, so nothing is downloaded. Spec
options:

``threads``     onnxruntime intra-op threads (default: onnxruntime's choice)
``text_score``  drop detections whose recognition score is below this (default 0.5)
``det_side``    detector resize target in pixels (default 960)
``det_limit``   ``max`` (default): scale so the longer side is at most ``det_side``;
                ``min``: scale so the shorter side is at least ``det_side``

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
from typing import TYPE_CHECKING, Any

from bench.errors import InputError
from bench.readers.base import Reader, Reading
from bench.readers.common import Options, ReadError, assemble, to_rgb_image
from bench.registry import Spec

if TYPE_CHECKING:
    from PIL import Image

PACKAGE = "rapidocr-onnxruntime"
MODEL_NAMES = "ch_PP-OCRv4_det+ch_PP-OCRv4_rec+ch_ppocr_mobile_v2.0_cls"


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


class RapidOCRReader(Reader):
    """OCR with RapidOCR (PP-OCR on onnxruntime); see the module docstring."""

    name = "rapidocr"

    def __init__(self, spec: Spec | str = "rapidocr") -> None:
        spec = Spec.parse(spec) if isinstance(spec, str) else spec
        options = Options(spec, {"threads", "text_score", "det_side", "det_limit"})
        self.threads = options.integer("threads", -1, minimum=-1)
        self.text_score = options.number("text_score", 0.5)
        self.det_side = options.integer("det_side", 960, minimum=32)
        self.det_limit = options.text("det_limit", "max")
        if self.det_limit not in ("max", "min"):
            raise InputError(
                None,
                f"option det_limit={self.det_limit!r} in OCR spec {spec.text!r}: expected max or min",
            )
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
        )

    def read(self, images: Sequence[Image.Image]) -> list[Reading]:
        results = []
        for index, image in enumerate(images):
            # RapidOCR converts a PIL image from RGB to the BGR its models expect.
            rgb = to_rgb_image(image)
            try:
                detections, _ = self._ocr(rgb)
            except Exception as error:
                raise ReadError(self.name, index, error) from error
            results.append(assemble(detections or []))
        return results
