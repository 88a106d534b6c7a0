"""Helpers shared by the engines: input conversion, result assembly, errors.

Kept free of heavy imports (numpy and PIL only) so ``import glyphbench.readers`` stays light.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from typing import Any

# Re-exported: readers have long imported the image conversions from here.
from glyphbench.core.images import to_rgb_array as to_rgb_array
from glyphbench.core.images import to_rgb_image as to_rgb_image
from glyphbench.prompts.scripts import script_counts
from glyphbench.readers.base import Point, Reader, Reading
from glyphbench.readers.order import Order, block_order, reading_order

#: Greek and Cyrillic letters a recogniser trained on Chinese and English returns for Latin ones
#: of the same shape (``VECTR\u039b``: a crossbar-less A read as Lambda); see :func:`fold_latin`.
#: Written as escapes so that no reader of this file mistakes one for the other.
LATIN_LOOKALIKES = str.maketrans(
    "\u0391\u0392\u0395\u0396\u0397\u0399\u039a\u039c\u039d\u039f\u03a1\u03a4\u03a5\u03a7"
    "\u039b\u03b1\u03b9\u03bf\u03bd\u03c1\u03c5"  # Greek
    "\u0410\u0412\u0415\u041a\u041c\u041d\u041e\u0420\u0421\u0422\u0423\u0425\u0405\u0406"
    "\u0408\u0430\u0435\u043e\u0440\u0441\u0443\u0445\u0456\u0458\u0455",  # Cyrillic
    "ABEZHIKMNOPTYXAaiovpuABEKMHOPCTYXSIJaeopcyxijs",
)
#: CJK punctuation with a Latin twin that NFKC leaves alone (full stop, comma, corner quotes).
CJK_PUNCTUATION = str.maketrans(
    {"\u3002": ".", "\u3001": ",", "\u300c": '"', "\u300d": '"', "\u300e": '"', "\u300f": '"'}
)


class ReadError(RuntimeError):
    """OCR failed on one image of a batch; ``index`` is its position in the batch.

    Engines raise this instead of returning a partial or empty result, so a failure
    is never mistaken for "no text found". The runner catches it, records an error
    row for that image and may re-run the rest of the batch.
    """

    def __init__(self, engine: str, index: int, cause: BaseException) -> None:
        self.engine = engine
        self.index = index
        self.cause = cause
        super().__init__(
            f"{engine} failed on image {index} of the batch: {type(cause).__name__}: {cause}"
        )


def read_or_errors(reader: Reader, images: Sequence[Any]) -> list[Reading | Exception]:
    """Read a batch; item ``i`` is the :class:`Reading` of image ``i`` or the exception it raised.

    One ``reader.read`` call when the batch reads; when it fails, the images are read
    one at a time so that only the failing ones fail. The run engine's reading step,
    :func:`glyphbench.engine.read_batch`, is this plus a cache of readings.
    """
    images = list(images)
    if not images:
        return []
    try:
        readings = list(reader.read(images))
        if len(readings) != len(images):
            raise RuntimeError(
                f"{reader.name} returned {len(readings)} results for {len(images)} images"
            )
        return list(readings)
    except Exception as error:
        if len(images) == 1:
            return [error]
    outcomes: list[Reading | Exception] = []
    for image in images:  # read one by one so that only the failing images fail
        try:
            outcomes.append(reader.read([image])[0])
        except Exception as error:
            outcomes.append(error)
    return outcomes


def glyph_count(text: str) -> int:
    """The letters and digits in ``text``, the measure of how much a piece says: spaces,
    punctuation and symbols carry no word of their own.

    >>> glyph_count("Sale 50%!"), glyph_count("--"), glyph_count("価格2")
    (6, 0, 3)
    """
    return sum(ch.isalnum() for ch in text)


def drop_debris(
    detections: Sequence[tuple[Sequence[Sequence[float]], str, float]], fraction: float
) -> list[tuple[Sequence[Sequence[float]], str, float]]:
    """The detections without debris: pieces of at most two letters or digits whose box is
    less than ``fraction`` of the image's median box height (``fraction`` 0 keeps all).

    A generated poster's ornaments, a texture's specks and a logo's mark come back from a
    detector as short, small "words" (``6``, ``W``, a lone ``米`` beside an English title);
    a person reads none of them. Real short words (``by``, ``of``, ``B``) are set at the
    size of the text around them, so they stay. A glyphbench rule, no source prescribes it.

    >>> box = lambda h: [(0, 0), (9, 0), (9, h), (0, h)]
    >>> found = [(box(40), "Sale", 0.9), (box(12), "W", 0.6), (box(38), "of", 0.9)]
    >>> [text for _, text, _ in drop_debris(found, 0.5)]
    ['Sale', 'of']
    >>> len(drop_debris(found, 0.0))
    3
    """
    if fraction <= 0 or not detections:
        return list(detections)
    heights = [max(p[1] for p in box) - min(p[1] for p in box) for box, _, _ in detections]
    floor = fraction * sorted(heights)[len(heights) // 2]
    return [
        detection
        for detection, height in zip(detections, heights, strict=True)
        if height >= floor or glyph_count(detection[1]) > 2
    ]


def fold_latin(pieces: Sequence[str]) -> list[str]:
    """The pieces of one image's reading as a person reads them, where the reading is Latin
    writing with no Han, kana or Hangul: fullwidth and compatibility forms as their plain
    characters (NFKC: U+FF1A -> ``:``, ``℃`` -> ``°C``), CJK full stops, commas and corner
    quotes as Latin ones, and, where Latin letters outnumber Greek and Cyrillic ones, those
    as the Latin letters they look like (:data:`LATIN_LOOKALIKES`).

    PP-OCR's recognisers read from one dictionary of Chinese and Latin characters, so a colon
    in an English line may come back as the fullwidth one and a stylised A as a Lambda; a
    person reads the image's own script. The whole reading decides, so that a piece of
    punctuation and digits is folded with the words around it. A reading with CJK letters,
    or without Latin ones, is returned unchanged. A glyphbench rule, no source prescribes it.

    >>> fold_latin(["Released", "\\uff1a2025", "92℃", "VECTR\\u039b"])
    ['Released', ':2025', '92°C', 'VECTRA']
    >>> chinese = ["价格\\uff1a25元", "\\uff1a25"]
    >>> fold_latin(chinese) == chinese, fold_latin(["ΛΦΩ"]), fold_latin(["Done\\u3002"])
    (True, ['ΛΦΩ'], ['Done.'])
    """
    folded = [unicodedata.normalize("NFKC", piece) for piece in pieces]
    counts = script_counts(" ".join(folded))
    if counts["latin"] == 0 or counts["han"] + counts["kana"] + counts["hangul"]:
        return list(pieces)
    folded = [piece.translate(CJK_PUNCTUATION) for piece in folded]
    if counts["latin"] > counts["greek"] + counts["cyrillic"]:
        folded = [piece.translate(LATIN_LOOKALIKES) for piece in folded]
    return folded


def assemble(
    detections: Iterable[tuple[Sequence[Sequence[float]], str, float]], order: Order = "lines"
) -> Reading:
    """Build an :class:`Reading` from ``(points, text, confidence)`` detections.

    Pieces whose text is blank are dropped (they carry nothing to score and would
    leave double spaces); the rest are stripped and put in :func:`reading_order`
    (``order="lines"``) or :func:`block_order` (``order="blocks"``).
    ``raw`` keeps every detection's text as it came, in the order it came.

    >>> r = assemble([([(50, 0), (90, 0), (90, 10), (50, 10)], "world", 0.9),
    ...               ([(0, 0), (40, 0), (40, 10), (0, 10)], "hello", 0.8),
    ...               ([(0, 30), (9, 30), (9, 40), (0, 40)], " ", 0.1)])
    >>> r.text, r.confidences, r.raw
    ('hello world', [0.8, 0.9], ['world', 'hello', ' '])
    """
    kept: list[tuple[list[Point], str, float]] = []
    raw: list[str] = []
    for points, text, confidence in detections:
        raw.append(str(text))
        piece = str(text).strip()
        if not piece:
            continue
        box = [(float(p[0]), float(p[1])) for p in points]
        kept.append((box, piece, float(confidence)))
    arrange = block_order if order == "blocks" else reading_order
    ordered = [kept[i] for i in arrange([box for box, _, _ in kept])]
    return Reading(
        text=" ".join(piece for _, piece, _ in ordered),
        pieces=[piece for _, piece, _ in ordered],
        boxes=[box for box, _, _ in ordered],
        confidences=[confidence for _, _, confidence in ordered],
        raw=raw,
    )


def rect_points(left: float, top: float, width: float, height: float) -> list[Point]:
    """The 4 corners (clockwise from top-left) of an axis-aligned rectangle."""
    right, bottom = left + width, top + height
    return [(left, top), (right, top), (right, bottom), (left, bottom)]
