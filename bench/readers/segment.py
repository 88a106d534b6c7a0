"""Word segmentation: put back the spaces a recogniser dropped, from gaps in the ink.

PaddleOCR's recognisers (RapidOCR's ``ch_PP-OCRv4_rec``) often read a line of
English as one run without spaces (``FRESHBREWS,EVERY``): the CTC decoder can emit
a space, but rarely does. The characters it does emit come with their position
along the line (the CTC time step, which RapidOCR turns into a per-character box
with ``return_word_box=True``). This module uses those positions together with the
line's own pixels:

1. The line's box is cut out of the image and straightened (a perspective warp to
   a ``width x height`` rectangle, as the recogniser's own crop).
2. The crop is binarised with Otsu's threshold; the minority class is the ink.
   The *text height* ``H`` is the number of rows from the first to the last row
   holding ink.
3. A *gap* is a run of columns with no ink, with ink on both sides, measured in
   text heights. A gap is a word gap when it is at least the line's threshold
   (:func:`word_gap`): ``min_gap`` (default :data:`MIN_GAP` = 0.3), raised to
   twice the median gap of the line, and to :data:`SPACED_SHARE` (0.6) of the
   median gap where the reader itself put a space, where these are larger, but
   neither raise goes above :data:`MAX_GAP` = 0.5. The raises serve monospaced
   fonts, whose narrow letters (``I``, ``l``, ``r``) leave gaps of 0.3 H inside
   words while their word gaps are 0.65 H or more.
4. Each word gap goes between the two consecutive characters whose positions
   enclose its centre, and a space is inserted there unless rule 5 forbids it.
5. No space next to an existing space; none next to a Han, kana or Hangul
   character (those scripts write no spaces between words); none before
   ``. , ; : ! ? % '`` or closing brackets and quotes, none after opening ones
   or an apostrophe (``GRANDMA'S``); none after ``.`` before a lower-case letter
   or digit (``EVExpo2023.com``, ``3.5``): fonts leave wide gaps around these marks.

Only spaces are inserted; no character is changed, removed or moved. A line with
no clear gaps (texture behind the text, touching letters) keeps its reading.

Why these numbers: on the ``control:render`` images of the first 8 LongText-Bench
English prompts (DejaVu fonts) the gaps between letters of a word measured at most
0.26 H in proportional fonts (``1`` then ``9`` in ``1998``) and 0.35 H in the
monospaced one (``r`` then ``n``); the gaps between words at least 0.36 H
(proportional) and 0.5 H (monospaced), apart from one condensed bold line with
0.27 H (measured 2026-11-25, ``docs/readers/rapidocr.md``). In a typical font a
space is about 0.3 em and letter side bearings about 0.05 em each; ``H`` is
0.7 em (capitals) to 1 em (ascenders and descenders). The rules were then checked
on prompts 9 to 40, which they had not been tuned on.

Vertical lines (box height at least 1.5 times its width, where RapidOCR rotates
the crop) are left as read.
"""

from __future__ import annotations

import statistics
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: Smallest word gap, as a fraction of the line's text height.
MIN_GAP = 0.3

#: Share of the reader's own word gaps (median) a new word gap must reach.
SPACED_SHARE = 0.6

#: Largest word-gap threshold a line's own gaps can raise it to, in text heights.
MAX_GAP = 0.5

#: Characters no space is put before (closing punctuation, apostrophes).
_NO_SPACE_BEFORE = frozenset(".,;:!?%'’")

#: Characters after which no space is put before a lower-case letter or digit (``.com``, ``3.5``).
_TIGHT_BEFORE_LOWER = frozenset(".")

#: Characters no space is put after (apostrophes: ``Today's``, ``GRANDMA'S``).
_NO_SPACE_AFTER = frozenset("'’")

#: Scripts that put no spaces between words: no space is ever inserted next to them.
_UNSPACED = ("CJK", "HIRAGANA", "KATAKANA", "HANGUL")


def _unspaced(char: str) -> bool:
    return unicodedata.name(char, "").startswith(_UNSPACED)


def ink_gaps(crop: npt.NDArray[np.uint8]) -> tuple[list[tuple[int, int]], int]:
    """The inner gaps ``(first empty column, end)`` of a grey line crop, and its text height.

    >>> import numpy as np
    >>> crop = np.full((10, 12), 255, dtype=np.uint8)
    >>> crop[2:8, 1:3] = 0; crop[2:8, 6:8] = 0; crop[3:6, 9:11] = 0
    >>> ink_gaps(crop)
    ([(3, 6), (8, 9)], 6)
    """
    import cv2
    import numpy as np

    if crop.size == 0:
        return [], 0
    _, binary = cv2.threshold(crop, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    ink = binary > 0
    if ink.mean() > 0.5:
        ink = ~ink
    rows = np.flatnonzero(ink.any(axis=1))
    if rows.size == 0:
        return [], 0
    height = int(rows[-1] - rows[0] + 1)
    columns = [bool(value) for value in np.asarray(ink.any(axis=0)).tolist()]
    gaps: list[tuple[int, int]] = []
    start: int | None = None
    seen_ink = False
    for x, has_ink in enumerate(columns):
        if has_ink:
            if start is not None and seen_ink:
                gaps.append((start, x))
            start = None
            seen_ink = True
        elif start is None:
            start = x
    return gaps, height


def _may_split(left: str, right: str) -> bool:
    """Whether a space may go between ``left`` and ``right`` (rule 5 of the module docstring).

    >>> _may_split("E", "."), _may_split(".", "c"), _may_split(".", "O"), _may_split(",", "a")
    (False, False, True, True)
    """
    if left.isspace() or right.isspace() or _unspaced(left) or _unspaced(right):
        return False
    if right in _NO_SPACE_BEFORE or unicodedata.category(right) in ("Pe", "Pf"):
        return False
    if left in _NO_SPACE_AFTER or unicodedata.category(left) in ("Ps", "Pi"):
        return False
    return not (left in _TIGHT_BEFORE_LOWER and (right.islower() or right.isdigit()))


def word_gap(
    gaps: Sequence[float], spaced: Sequence[float] = (), min_gap: float = MIN_GAP
) -> float:
    """The smallest word gap of a line, in text heights (rule 3 of the module docstring).

    ``gaps`` are the widths of all the line's gaps, ``spaced`` those of the gaps where
    the reader itself put a space.

    >>> word_gap([0.1, 0.15, 0.5]), word_gap([0.2, 0.3, 0.25, 0.6, 0.1])
    (0.3, 0.5)
    >>> round(word_gap([0.1, 0.15, 0.15, 0.2, 0.7, 0.8], spaced=[0.7, 0.8]), 3)
    0.45
    """
    threshold = min_gap
    if gaps:
        threshold = max(threshold, min(2.0 * statistics.median(gaps), MAX_GAP))
    if spaced:
        threshold = max(threshold, min(SPACED_SHARE * statistics.median(spaced), MAX_GAP))
    return threshold


def insert_spaces(
    text: str,
    positions: Sequence[float],
    gaps: Sequence[tuple[float, float]],
    height: float,
    min_gap: float = MIN_GAP,
) -> str:
    """``text`` with a space at each word gap (rules 3 to 5 of the module docstring).

    ``positions`` holds one position per character of ``text`` along the line, in the
    same units as ``gaps``; a text whose positions do not match is returned as it is.

    >>> insert_spaces("ABCD", [5, 15, 40, 50], [(9, 11), (20, 34)], 20)
    'AB CD'
    >>> insert_spaces("AB CD", [5, 15, 27, 40, 50], [(20, 34)], 20)
    'AB CD'
    >>> insert_spaces("营业OPEN", [5, 15, 40, 50, 60, 70], [(20, 34)], 20)
    '营业OPEN'
    """
    if len(positions) != len(text) or height <= 0 or len(text) < 2:
        return text
    placed: list[tuple[float, int]] = []  # (width in text heights, character pair)
    for start, end in gaps:
        centre = (start + end) / 2.0
        pair = next(
            (i for i in range(len(text) - 1) if positions[i] < centre < positions[i + 1]), None
        )
        if pair is not None:
            placed.append(((end - start) / height, pair))
    spaced = [width for width, i in placed if text[i].isspace() or text[i + 1].isspace()]
    threshold = word_gap([width for width, _ in placed], spaced, min_gap)
    breaks = {
        i + 1 for width, i in placed if width >= threshold and _may_split(text[i], text[i + 1])
    }
    if not breaks:
        return text
    cuts = sorted(breaks)
    return " ".join(text[a:b] for a, b in zip((0, *cuts), (*cuts, len(text)), strict=True))


def restore_spaces(
    gray: npt.NDArray[np.uint8],
    box: Sequence[Sequence[float]],
    text: str,
    char_boxes: Sequence[Sequence[Sequence[float]]],
    min_gap: float = MIN_GAP,
) -> str:
    """The line ``text`` read in ``box`` of the grey image, with its word gaps spaced.

    ``char_boxes`` holds one box per character of ``text`` (image pixels), as
    RapidOCR's ``return_word_box`` gives them; each is reduced to its centre's
    distance along the line's top edge.
    """
    import cv2
    import numpy as np

    points = np.asarray(box, dtype=np.float32)
    if points.shape != (4, 2) or len(char_boxes) != len(text):
        return text
    width = int(max(np.linalg.norm(points[0] - points[1]), np.linalg.norm(points[2] - points[3])))
    height = int(max(np.linalg.norm(points[0] - points[3]), np.linalg.norm(points[1] - points[2])))
    if width < 2 or height < 2 or height >= 1.5 * width:
        return text
    target = np.array([[0, 0], [width, 0], [width, height], [0, height]], dtype=np.float32)
    matrix = cv2.getPerspectiveTransform(points, target)
    crop = cv2.warpPerspective(gray, matrix, (width, height), borderMode=cv2.BORDER_REPLICATE)
    gaps, text_height = ink_gaps(np.asarray(crop, dtype=np.uint8))
    along = (points[1] - points[0]) / max(float(np.linalg.norm(points[1] - points[0])), 1e-6)
    positions = [
        float(np.dot(np.asarray(char, dtype=np.float32).mean(axis=0) - points[0], along))
        for char in char_boxes
    ]
    return insert_spaces(text, positions, gaps, text_height, min_gap)
