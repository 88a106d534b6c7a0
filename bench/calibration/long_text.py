"""The calibration card's long-text part: multi-word texts drawn in three bundled fonts at
three sizes, and how much of them a reader gives back.

:func:`long_text_images` draws them; :func:`long_text_rows` scores a reader's readings
(words returned per expected word: below 1 when a reader merges words, word recall,
NED); :func:`long_text_summary` sums them up overall, per size and per font. The card
(:mod:`glyphbench.calibration.calibrate`) reads the images and renders the summary.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from glyphbench.core.fonts import bundled_fonts
from glyphbench.models.controls import wrap
from glyphbench.scoring import Pair, score_pairs
from glyphbench.scoring.table import METRICS

if TYPE_CHECKING:
    import pandas as pd
    from PIL import Image


#: Multi-word texts of the long-text part (written for glyphbench: shop signs, notices and
#: a sentence; 9 to 17 words each, with digits, punctuation and mixed case).
LONG_TEXTS = (
    "Fresh Local Produce and Farmers Market every Saturday from 8 AM to 2 PM",
    "Please keep this door closed at all times, the cat is not allowed outside",
    "Grand Opening Sale: twenty percent off all winter coats until March 31",
    "The quick brown fox jumps over the lazy dog near the quiet river bank",
)

#: Bundled fonts of the long-text part (file stems of matplotlib's DejaVu TTFs).
LONG_FONTS = ("DejaVuSans", "DejaVuSerif", "DejaVuSansMono")

#: Font sizes (pixels) of the long-text part.
LONG_SIZES = (14, 20, 28)

#: Width of a long-text image, pixels (its height follows from the wrapped lines).
LONG_WIDTH = 640


@dataclass
class LongTextImage:
    """One long-text image: ``text`` wrapped in font ``font`` at ``size`` pixels."""

    text: str
    font: str
    size: int
    image: Image.Image


def long_text_images(
    texts: Sequence[str] = LONG_TEXTS,
    fonts: Sequence[str] = LONG_FONTS,
    sizes: Sequence[int] = LONG_SIZES,
    width: int = LONG_WIDTH,
) -> list[LongTextImage]:
    """Every text in every font at every size: black on white, wrapped, left-aligned.

    >>> [(i.font, i.size) for i in long_text_images(["a b"], ["DejaVuSans"], [14, 20])]
    [('DejaVuSans', 14), ('DejaVuSans', 20)]
    """
    from PIL import Image, ImageDraw, ImageFont

    by_stem = {path.stem: path for path in bundled_fonts()}
    missing = [name for name in fonts if name not in by_stem]
    if missing:
        raise RuntimeError(f"bundled fonts not found: {', '.join(missing)}")
    out = []
    for text in texts:
        for name in fonts:
            for size in sizes:
                font = ImageFont.truetype(str(by_stem[name]), size)
                margin = max(8, size)
                lines = wrap(text, font, width - 2 * margin)
                ascent, descent = font.getmetrics()
                step = int((ascent + descent) * 1.3)
                image = Image.new("RGB", (width, 2 * margin + step * len(lines)), "white")
                draw = ImageDraw.Draw(image)
                for number, line in enumerate(lines):
                    draw.text((margin, margin + number * step), line, font=font, fill="black")
                out.append(LongTextImage(text, name, size, image))
    return out


def word_counts(expected: Sequence[str], read: Sequence[str]) -> tuple[list[int], list[int]]:
    """Words of each expected and each read text, as glyphbench's word metrics count them."""
    pairs = [Pair(e, r) for e, r in zip(expected, read, strict=True)]
    return [len(p.expected_words) for p in pairs], [len(p.read_words) for p in pairs]


def long_text_rows(images: Sequence[LongTextImage], readings: Sequence[str]) -> pd.DataFrame:
    """One row per long-text image: its reading, word counts, word recall and NED."""
    import pandas as pd

    texts = [item.text for item in images]
    expected_words, read_words = word_counts(texts, readings)
    rows = pd.DataFrame(
        {
            "font": [item.font for item in images],
            "size": [item.size for item in images],
            "text": texts,
            "reading": list(readings),
            "expected_words": expected_words,
            "read_words": read_words,
        }
    )
    scores = score_pairs(texts, list(readings))
    rows["word_recall"] = scores["word_recall"].to_numpy()
    rows["ned"] = scores["ned"].to_numpy()
    return rows


def _long_summary(rows: pd.DataFrame) -> dict[str, Any]:
    expected = int(rows["expected_words"].sum())
    return {
        "images": len(rows),
        "words_per_word": float(rows["read_words"].sum() / expected) if expected else math.nan,
        **METRICS.aggregate(rows, ["word_recall", "ned"]),
    }


def long_text_summary(rows: pd.DataFrame) -> dict[str, Any]:
    """Words returned per expected word (pooled), mean word recall and NED: all, per size, font.

    A reader that merges words returns fewer words than expected (words per word < 1)
    and loses word recall while its NED stays high (NED ignores spaces only partly).
    """
    return {
        "overall": _long_summary(rows),
        "by_size": {int(k): _long_summary(part) for k, part in rows.groupby("size", sort=True)},
        "by_font": {str(k): _long_summary(part) for k, part in rows.groupby("font", sort=True)},
    }
