"""Which writing systems a reader reads, which ones a prompt set needs, and the check between.

Every reader declares the *scripts* it reads through its options' ``scripts()``
method (it may depend on an option: Tesseract with ``lang=chi_sim`` reads Han).
Script names are lower-case words: ``latin``, ``han`` (Chinese characters, Japanese
kanji), ``kana``, ``hangul``, ``cyrillic``, ``greek``, ``arabic``, ``hebrew``,
``devanagari``, ``thai`` (:data:`SCRIPTS`).

Prompt rows carry ``lang`` (declared by the source, else guessed from the text) and
``script`` (the script of most of the text's letters, :func:`main_script`). A row
needs the scripts of its language (:data:`LANG_SCRIPTS`: ``en`` needs ``latin``,
``zh`` needs ``han``, ``ja`` needs ``han`` and ``kana``), or, for a language not in
that table, its own ``script``. Digits, punctuation and symbols need no script, and
a stray symbol from another script (the ``ツ`` of a shrug emoticon in an English
set) does not change what an English row needs.

:func:`check_reader_reads` refuses, before anything is written, a run whose reader
cannot read every script the selected prompts need.

>>> main_script("Grand Opening"), main_script("营业中 OPEN"), main_script("2024")
('latin', 'han', 'none')
>>> sorted(needed_scripts([("en", "latin"), ("zh", "han"), ("fr", "latin")]))
['han', 'latin']
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from bench.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

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

LATIN = frozenset({"latin"})
LATIN_HAN = frozenset({"latin", "han"})

#: Language code -> the scripts its text needs.
LANG_SCRIPTS: dict[str, frozenset[str]] = {
    "en": LATIN,
    "zh": frozenset({"han"}),
    "ja": frozenset({"han", "kana"}),
    "ko": frozenset({"hangul"}),
}

#: Main script -> the language guessed for a text no source declared a language for.
GUESSED_LANG = {"latin": "en", "none": "en", "han": "zh", "kana": "ja", "hangul": "ko"}


def char_script(char: str) -> str | None:
    """The script of one letter, or None for digits, punctuation, symbols and spaces.

    >>> char_script("é"), char_script("字"), char_script("7"), char_script("ツ")
    ('latin', 'han', None, 'kana')
    """
    if not unicodedata.category(char).startswith("L"):
        return None
    name = unicodedata.name(char, "")
    for script, prefixes in SCRIPT_PREFIXES.items():
        if name.startswith(prefixes):
            return script
    return "other"


def main_script(text: str) -> str:
    """The script of ``text``: ``kana`` if it has kana, else ``han`` if it has Han, else the
    script of most of its letters (ties: the first in :data:`SCRIPTS`), or ``none``.

    Kana and Han win over more numerous Latin letters because a CJK text often
    carries a Latin brand name or unit (``iPhone 发布会``), while a Latin text
    rarely carries a Han character; kana marks Japanese, which mixes kana and Han.

    >>> main_script("Café 咖啡馆"), main_script("東京タワー"), main_script("Привет, Bob")
    ('han', 'kana', 'cyrillic')
    """
    if text.isascii():
        return "latin" if any(char.isalpha() for char in text) else "none"
    counts = Counter(script for char in text if (script := char_script(char)) is not None)
    if not counts:
        return "none"
    for marker in ("kana", "han"):
        if counts[marker]:
            return marker
    order = {name: index for index, name in enumerate((*SCRIPTS, "other"))}
    return max(counts, key=lambda name: (counts[name], -order[name]))


def guess_lang(text: str) -> str:
    """A language code for a text whose source declared none: from its main script.

    Latin text is taken as English (``en``); Han as Chinese (``zh``), kana as
    Japanese, Hangul as Korean; any other script is ``und`` (undetermined).

    >>> guess_lang("Grand Opening"), guess_lang("新年快乐"), guess_lang("Привет")
    ('en', 'zh', 'und')
    """
    return GUESSED_LANG.get(main_script(text), "und")


def row_scripts(lang: object, script: object) -> frozenset[str]:
    """The scripts a row needs: its language's (:data:`LANG_SCRIPTS`), else its main script.

    >>> sorted(row_scripts("zh", "latin")), sorted(row_scripts("fr", "latin"))
    (['han'], ['latin'])
    >>> row_scripts(None, "none")
    frozenset()
    """
    if isinstance(lang, str) and lang in LANG_SCRIPTS:
        return LANG_SCRIPTS[lang]
    if isinstance(script, str) and script not in ("none", ""):
        return frozenset({script})
    return frozenset()


def needed_scripts(rows: Iterable[tuple[object, object]]) -> frozenset[str]:
    """Every script the (lang, script) rows need."""
    needed: set[str] = set()
    for lang, script in set(rows):
        needed |= row_scripts(lang, script)
    return frozenset(needed)


def reader_scripts(spec: str) -> frozenset[str] | None:
    """The scripts the reader ``spec`` reads, from its options (nothing is created or loaded).

    None when the reader declares nothing (a plug-in of another package, a test
    double): such a reader is not checked.

    >>> sorted(reader_scripts("rapidocr") or []), sorted(reader_scripts("tesseract?lang=eng") or [])
    (['han', 'latin'], ['latin'])
    """
    from bench.registry import PLUGINS

    options = PLUGINS.resolve("readers", spec).options
    declare = getattr(options, "scripts", None)
    if not callable(declare):
        return None
    return frozenset(declare())


def prompt_rows(frame: pd.DataFrame) -> list[tuple[Any, Any]]:
    """(lang, script) of each prompt row; both computed from the text when absent."""
    texts = frame["text"].astype("string").fillna("")
    if "script" in frame.columns:
        scripts = frame["script"].astype("string").fillna("none").tolist()
    else:
        scripts = [main_script(str(text)) for text in texts]
    if "lang" in frame.columns:
        langs = frame["lang"].astype("object").tolist()
    else:
        langs = [None] * len(frame)
    langs = [
        lang if isinstance(lang, str) and lang else guess_lang(str(text))
        for lang, text in zip(langs, texts, strict=True)
    ]
    return list(zip(langs, scripts, strict=True))


def check_reader_reads(spec: str, frame: pd.DataFrame, where: str | None = None) -> None:
    """Refuse (InputError) a reader that cannot read a script the prompts of ``frame`` need.

    The message says how many prompts of which language are unreadable and what
    to do about it.
    """
    reads = reader_scripts(spec)
    if reads is None or frame.empty:
        return
    rows = prompt_rows(frame)
    unread = Counter(lang for lang, script in rows if not row_scripts(lang, script) <= reads)
    if not unread:
        return
    missing = sorted(needed_scripts(rows) - reads)
    counts = ", ".join(f"{n} {lang}" for lang, n in sorted(unread.items()))
    readable = sorted({lang for lang, script in rows if row_scripts(lang, script) <= reads})
    keep = (
        f"select them with --where \"lang == '{readable[0]}'\""
        if len(readable) == 1
        else "select the prompts it can read with --where"
    )
    raise InputError(
        where,
        f"reader {spec!r} reads {', '.join(sorted(reads))} but {sum(unread.values())} selected "
        f"prompts ({counts}) need {', '.join(missing)}; use a reader that reads them "
        f"(e.g. --ocr rapidocr for Chinese) or {keep}",
        key="ocr",
    )
