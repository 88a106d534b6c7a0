# ruff: noqa: RUF002 - full-width characters are this module's subject
"""Text normalisation applied before every metric, and the tokens word metrics count.

The default ("paper" mode) case-folds, collapses runs of whitespace to one
space and strips the ends, which is how TextInVision compares OCR output with
the expected text. Options (fields of :class:`Normalization`, all off by default,
so Latin scores never change unless asked):

* ``keep_case=True`` skips case folding.
* ``strip_punct=True`` applies the COCO-Text end-to-end rule: the characters
  ``!?.:,*"()·[]/'_`` are removed from the start and end of every word, and a
  word made only of those characters disappears.
* ``nfkc=True`` applies Unicode NFKC first (compatibility characters become
  their plain forms: ``ﬁ`` -> ``fi``, ``①`` -> ``1``, full-width ``Ａ`` -> ``A``).
* ``fold_width=True`` folds only full-width and half-width forms (see
  :func:`fold_width_forms`): full-width ASCII ``Ａ１！`` -> ``A1!``, the ideographic
  space U+3000 -> a space, half-width katakana -> full-width, and nothing else.

Scripts written without spaces (Han, kana; see :data:`PER_CHARACTER`) are always
handled per character, whatever the options: whitespace next to such a character
is removed (``"你好 世界"`` and ``"你好世界"`` are the same text), and each such
character is one token of the word-level metrics (:func:`tokens`), while the rest
of the text is split into words on whitespace as before. Text without any such
character is normalised and split exactly as it always was.

>>> normalize("  Hello,\\n  WORLD! ")
'hello, world!'
>>> normalize("  Hello,\\n  WORLD! ", strip_punct=True)
'hello world'
>>> normalize("Hello  World", keep_case=True)
'Hello World'
>>> normalize("欢迎 光临  Café 24H")
'欢迎光临café 24h'
>>> tokens(normalize("欢迎 光临  Café 24H"))
['欢', '迎', '光', '临', 'café', '24h']
>>> normalize("ＳＡＬＥ　５０％", fold_width=True)
'sale 50%'
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

#: Characters the COCO-Text end-to-end evaluation strips from word ends.
COCO_TEXT_PUNCT = "!?.:,*\"()·[]/'_"

#: Scripts scored per character: CJK radicals, CJK symbols and punctuation (U+3001..303F),
#: hiragana, katakana, bopomofo, kanbun, CJK strokes, katakana extensions, CJK unified
#: ideographs (extension A, the main block, extensions B and later), compatibility
#: ideographs, CJK compatibility forms and vertical forms. Hangul is not among them:
#: Korean separates words with spaces.
PER_CHARACTER = (
    "\u2e80-\u2fdf"
    "\u3001-\u303f"
    "\u3040-\u30ff"
    "\u3100-\u312f"
    "\u3190-\u31ff"
    "\u3400-\u4dbf"
    "\u4e00-\u9fff"
    "\uf900-\ufaff"
    "\ufe10-\ufe1f"
    "\ufe30-\ufe4f"
    "\U00020000-\U0003ffff"
)

_PER_CHARACTER = re.compile(f"[{PER_CHARACTER}]")
_SPACE_BESIDE = re.compile(rf"\s+(?=[{PER_CHARACTER}])|(?<=[{PER_CHARACTER}])\s+")
_TOKEN = re.compile(rf"[{PER_CHARACTER}]|[^\s{PER_CHARACTER}]+")

#: Full-width ASCII variants U+FF01..FF5E sit at a fixed offset from ASCII U+0021..007E.
_FULL_WIDTH_OFFSET = 0xFEE0


def is_per_character(char: str) -> bool:
    """Whether ``char`` belongs to a script scored per character (:data:`PER_CHARACTER`).

    >>> [is_per_character(char) for char in "字カA한"]
    [True, True, False, False]
    """
    return _PER_CHARACTER.fullmatch(char) is not None


def has_per_character(text: str) -> bool:
    """Whether any character of ``text`` is scored per character (ASCII text never is).

    >>> has_per_character("OPEN 24H"), has_per_character("营业中 OPEN")
    (False, True)
    """
    return not text.isascii() and _PER_CHARACTER.search(text) is not None


def join_per_character(text: str) -> str:
    """``text`` without the whitespace next to per-character script (Han, kana).

    >>> join_per_character("营业 时间 9:00 - 21:00")
    '营业时间9:00 - 21:00'
    """
    return _SPACE_BESIDE.sub("", text) if has_per_character(text) else text


def tokens(text: str) -> list[str]:
    """The tokens word metrics count: whitespace-separated words, each Han/kana character alone.

    For text without such characters this is exactly ``text.split()``.

    >>> tokens("the cat")
    ['the', 'cat']
    >>> tokens("二维码scan me")
    ['二', '维', '码', 'scan', 'me']
    """
    if text.isascii() or _PER_CHARACTER.search(text) is None:
        return text.split()
    return _TOKEN.findall(text)


def join_tokens(words: Iterable[str]) -> str:
    """Tokens back into text: a space between two words, none next to a Han/kana character.

    The inverse of :func:`tokens` on normalised text.

    >>> join_tokens(["open", "now"]), join_tokens(["营", "业", "open", "now"])
    ('open now', '营业open now')
    """
    out = ""
    previous = ""
    for word in words:
        if out and not (is_per_character(previous) or is_per_character(word)):
            out += " "
        out += word
        previous = word
    return out


def fold_width_forms(text: str) -> str:
    """Full-width and half-width forms folded to their usual width; nothing else changes.

    Full-width ASCII (U+FF01..FF5E) becomes ASCII, the ideographic space U+3000 a
    space, full-width symbols U+FFE0..FFE6 (``￥`` ...) and the half-width katakana
    and Hangul of U+FF61..FFDC their NFKC forms. CJK punctuation outside the
    Halfwidth and Fullwidth Forms block (``。`` U+3002, ``、``) is kept.

    >>> fold_width_forms("ＡＢＣ　１２３！。ｶﾀｶﾅ￥")
    'ABC 123!。カタカナ¥'
    """
    if text.isascii():
        return text
    out = []
    for char in text:
        code = ord(char)
        if 0xFF01 <= code <= 0xFF5E:
            out.append(chr(code - _FULL_WIDTH_OFFSET))
        elif code == 0x3000:
            out.append(" ")
        elif 0xFF61 <= code <= 0xFFEE:
            out.append(unicodedata.normalize("NFKC", char))
        else:
            out.append(char)
    return "".join(out)


@dataclass(frozen=True)
class Normalization:
    """Normalisation options, hashable so they can key caches and be recorded in a run."""

    keep_case: bool = False
    strip_punct: bool = False
    nfkc: bool = False
    fold_width: bool = False

    def __call__(self, text: str) -> str:
        if self.strip_punct or self.nfkc or self.fold_width:
            return normalize(
                text,
                keep_case=self.keep_case,
                strip_punct=self.strip_punct,
                nfkc=self.nfkc,
                fold_width=self.fold_width,
            )
        # The common case inline: scoring normalises every text it sees.
        out = " ".join(text.split())
        if not self.keep_case:
            out = out.casefold()
        return out if out.isascii() else join_per_character(out)

    def many(self, texts: Iterable[str]) -> list[str]:
        """``[self(text) for text in texts]``, with the common cases inlined for speed.

        >>> Normalization().many(["  A  b ", "C", "中 文"])
        ['a b', 'c', '中文']
        """
        if self.strip_punct or self.nfkc or self.fold_width:
            return [self(text) for text in texts]
        if self.keep_case:
            out = [" ".join(text.split()) for text in texts]
        else:
            out = [" ".join(text.split()).casefold() for text in texts]
        return [text if text.isascii() else join_per_character(text) for text in out]


def normalize(
    text: str,
    *,
    keep_case: bool = False,
    strip_punct: bool = False,
    nfkc: bool = False,
    fold_width: bool = False,
) -> str:
    """Return ``text`` normalised as described in the module docstring.

    Order: NFKC, width folding, whitespace split, COCO-Text punctuation stripping,
    joining with single spaces, case folding, removing spaces beside Han/kana.

    >>> normalize("ﬁle №１", nfkc=True)
    'file no1'
    """
    if nfkc:
        text = unicodedata.normalize("NFKC", text)
    if fold_width:
        text = fold_width_forms(text)
    words = text.split()  # str.split() with no argument splits on any whitespace run
    if strip_punct:
        words = [w.strip(COCO_TEXT_PUNCT) for w in words]
        words = [w for w in words if w]
    out = " ".join(words)
    if not keep_case:
        out = out.casefold()
    return out if out.isascii() else join_per_character(out)
