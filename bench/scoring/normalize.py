"""Text normalisation applied before every metric.

The default ("paper" mode) case-folds, collapses runs of whitespace to one
space and strips the ends, which is how TextInVision compares OCR output with
the expected text. Two options change it:

* ``keep_case=True`` skips case folding.
* ``strip_punct=True`` applies the COCO-Text end-to-end rule: the characters
  ``!?.:,*"()·[]/'_`` are removed from the start and end of every word, and a
  word made only of those characters disappears.

>>> normalize("  Hello,\\n  WORLD! ")
'hello, world!'
>>> normalize("  Hello,\\n  WORLD! ", strip_punct=True)
'hello world'
>>> normalize("Hello  World", keep_case=True)
'Hello World'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

#: Characters the COCO-Text end-to-end evaluation strips from word ends.
COCO_TEXT_PUNCT = "!?.:,*\"()·[]/'_"


@dataclass(frozen=True)
class Normalization:
    """Normalisation options, hashable so they can key caches and be recorded in a run."""

    keep_case: bool = False
    strip_punct: bool = False

    def __call__(self, text: str) -> str:
        if self.strip_punct:
            return normalize(text, keep_case=self.keep_case, strip_punct=True)
        # The common case inline: scoring normalises every text it sees.
        out = " ".join(text.split())
        return out if self.keep_case else out.casefold()

    def many(self, texts: Iterable[str]) -> list[str]:
        """``[self(text) for text in texts]``, with the common cases inlined for speed.

        >>> Normalization().many(["  A  b ", "C"])
        ['a b', 'c']
        """
        if self.strip_punct:
            return [self(text) for text in texts]
        if self.keep_case:
            return [" ".join(text.split()) for text in texts]
        return [" ".join(text.split()).casefold() for text in texts]


def normalize(text: str, *, keep_case: bool = False, strip_punct: bool = False) -> str:
    """Return ``text`` normalised as described in the module docstring."""
    words = text.split()  # str.split() with no argument splits on any whitespace run
    if strip_punct:
        words = [w.strip(COCO_TEXT_PUNCT) for w in words]
        words = [w for w in words if w]
    out = " ".join(words)
    return out if keep_case else out.casefold()
