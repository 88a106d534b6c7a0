"""Writing systems of a text, character by character: pure functions of one string.

Script names are lower-case words: ``latin``, ``han`` (Chinese characters, Japanese
kanji), ``kana``, ``hangul``, ``cyrillic``, ``greek``, ``arabic``, ``hebrew``,
``devanagari``, ``thai`` (:data:`SCRIPTS`), and ``other`` for letters of any other
script. A character's script comes from the start of its Unicode name
(:data:`SCRIPT_PREFIXES`); digits, punctuation, symbols and spaces have none.

:func:`text_scripts` is the *set* of scripts a text is written in (what a reader
must read to read it); :func:`main_script` one script for the ``script`` column;
:func:`guess_lang` a language code for text whose source declared none.

Kept free of bench and of heavy imports: ``glyphbench.readers.scripts`` imports it.

>>> sorted(text_scripts("科学 과학 ステップ SCIENCE"))
['han', 'hangul', 'kana', 'latin']
>>> main_script("Grand Opening"), main_script("营业中 OPEN"), main_script("2024")
('latin', 'han', 'none')
"""

from __future__ import annotations

import unicodedata
from collections import Counter

#: Script name -> the prefixes of Unicode character names of its letters.
SCRIPT_PREFIXES: dict[str, tuple[str, ...]] = {
    "latin": ("LATIN",),
    "han": ("CJK UNIFIED IDEOGRAPH", "CJK COMPATIBILITY IDEOGRAPH"),
    "kana": ("HIRAGANA", "KATAKANA"),
    "hangul": ("HANGUL",),
    "cyrillic": ("CYRILLIC",),
    "greek": ("GREEK",),
    "arabic": ("ARABIC",),
    "hebrew": ("HEBREW",),
    "devanagari": ("DEVANAGARI",),
    "thai": ("THAI",),
}

SCRIPTS = tuple(SCRIPT_PREFIXES)

#: A script counts in :func:`text_scripts` with at least this many letters of it...
MIN_SCRIPT_LETTERS = 2
#: ... or when it holds at least this share of the text's letters.
MIN_SCRIPT_SHARE = 0.5

#: Script that marks a language, for :func:`guess_lang`.
MARKER_LANG = {"kana": "ja", "hangul": "ko"}

#: Main script -> the language guessed for a text no source declared a language for.
GUESSED_LANG = {"latin": "en", "none": "en", "han": "zh", "kana": "ja", "hangul": "ko"}


def char_script(char: str) -> str | None:
    """The script of one letter, ``other`` for a letter of an unlisted script, or None for
    digits, punctuation, symbols and spaces.

    The Japanese prolonged-sound mark ``ー`` (a letter named KATAKANA-HIRAGANA ...)
    is kana.

    >>> char_script("é"), char_script("字"), char_script("7"), char_script("ツ"), char_script("ー")
    ('latin', 'han', None, 'kana', 'kana')
    """
    if not unicodedata.category(char).startswith("L"):
        return None
    name = unicodedata.name(char, "")
    for script, prefixes in SCRIPT_PREFIXES.items():
        if name.startswith(prefixes):
            return script
    return "other"


def script_counts(text: str) -> Counter[str]:
    """Letters of ``text`` per script.

    >>> dict(script_counts("Café 咖啡"))
    {'latin': 4, 'han': 2}
    """
    return Counter(script for char in text if (script := char_script(char)) is not None)


def text_scripts(text: str) -> frozenset[str]:
    """The scripts ``text`` is written in: each script with at least
    :data:`MIN_SCRIPT_LETTERS` letters, or with at least :data:`MIN_SCRIPT_SHARE` of
    the letters (so a one-letter text counts). A lone letter of another script among
    many (the ``ツ`` of a shrug emoticon in an English sentence) does not count.

    >>> sorted(text_scripts("서울 Seoul 首尔")), sorted(text_scripts("문"))
    (['han', 'hangul', 'latin'], ['hangul'])
    >>> sorted(text_scripts("¯\\\\_(ツ)_/¯ whatever")), text_scripts("2024!")
    (['latin'], frozenset())
    """
    counts = script_counts(text)
    total = sum(counts.values())
    return frozenset(
        script
        for script, n in counts.items()
        if n >= MIN_SCRIPT_LETTERS or n >= MIN_SCRIPT_SHARE * total
    )


def main_script(text: str) -> str:
    """The script of ``text``: ``kana`` if it has kana, else ``han`` if it has Han, else the
    script of most of its letters (ties: the first in :data:`SCRIPTS`), or ``none``.

    Kana and Han win over more numerous Latin letters because a CJK text often
    carries a Latin brand name or unit (``iPhone 发布会``), while a Latin text
    rarely carries a Han character; kana marks Japanese, which mixes kana and Han.
    One script cannot describe a mixed text: :func:`text_scripts` gives them all.

    >>> main_script("Café 咖啡馆"), main_script("東京タワー"), main_script("Привет, Bob")
    ('han', 'kana', 'cyrillic')
    """
    if text.isascii():
        return "latin" if any(char.isalpha() for char in text) else "none"
    counts = script_counts(text)
    if not counts:
        return "none"
    for marker in ("kana", "han"):
        if counts[marker]:
            return marker
    order = {name: index for index, name in enumerate((*SCRIPTS, "other"))}
    return max(counts, key=lambda name: (counts[name], -order[name]))


def guess_lang(text: str) -> str:
    """A language code for a text whose source declared none.

    Kana marks Japanese (``ja``) and Hangul Korean (``ko``); a text holding both
    (:func:`text_scripts`) is ``mul`` (ISO 639-2: multiple languages). Otherwise the
    main script decides: Latin is taken as English (``en``), Han as Chinese
    (``zh``; Japanese written in kanji alone cannot be told apart by its script),
    any other script ``und`` (undetermined).

    >>> guess_lang("Grand Opening"), guess_lang("新年快乐"), guess_lang("Привет")
    ('en', 'zh', 'und')
    >>> guess_lang("科学 과학 ステップ SCIENCE"), guess_lang("서울 Seoul 首尔")
    ('mul', 'ko')
    """
    markers = {MARKER_LANG[s] for s in text_scripts(text) if s in MARKER_LANG}
    if len(markers) > 1:
        return "mul"
    if markers:
        return markers.pop()
    return GUESSED_LANG.get(main_script(text), "und")
