"""Which writing systems a reader reads, which ones a prompt set needs, and the check between.

Every reader declares the *scripts* it reads through its options' ``scripts()``
method (it may depend on an option: Tesseract with ``lang=chi_sim`` reads Han).
Script names are lower-case words: ``latin``, ``han`` (Chinese characters, Japanese
kanji), ``kana``, ``hangul``, ``cyrillic``, ``greek``, ``arabic``, ``hebrew``,
``devanagari``, ``thai`` (:data:`SCRIPTS`), and ``other``. The script of each
character, and the set of scripts a text is written in, come from
:mod:`glyphbench.prompts.scripts` (pure functions of the text, shared with the prompt attributes).

A prompt row needs the scripts its text is written in, character by character
(:func:`glyphbench.prompts.scripts.text_scripts`: every script with two letters or more, or
with half the letters), not a guessed language: ``科学 과학 ステップ SCIENCE``
needs ``han``, ``hangul``, ``kana`` and ``latin``. Digits, punctuation and symbols
need no script. Where the source declared the row's language, a lone letter of a
script outside that language's (:data:`LANG_SCRIPTS`; the ``ツ`` of a shrug
emoticon in an English set) does not count.

:func:`check_reader_reads` refuses, before anything is written, a run whose reader
cannot read every script the selected prompts need; the refusal names the readers
installed here that read the missing scripts (:func:`readers_for`), or says that
none does.

>>> main_script("Grand Opening"), main_script("营业中 OPEN"), main_script("2024")
('latin', 'han', 'none')
>>> sorted(needed_scripts([("en", "OPEN"), ("zh", "营业中"), (None, "서울 Seoul")]))
['han', 'hangul', 'latin']
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from glyphbench.core.errors import InputError
from glyphbench.core.registry import PLUGINS
from glyphbench.prompts.scripts import (
    GUESSED_LANG,
    MIN_SCRIPT_LETTERS,
    SCRIPT_PREFIXES,
    SCRIPTS,
    char_script,
    guess_lang,
    main_script,
    script_counts,
    text_scripts,
)

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "GUESSED_LANG",
    "LANG_SCRIPTS",
    "LATIN",
    "LATIN_HAN",
    "SCRIPTS",
    "SCRIPT_PREFIXES",
    "char_script",
    "check_reader_reads",
    "guess_lang",
    "main_script",
    "needed_scripts",
    "reader_scripts",
    "readers_for",
    "row_scripts",
    "text_scripts",
]

LATIN = frozenset({"latin"})
LATIN_HAN = frozenset({"latin", "han"})

#: Language code -> the scripts its text is written in.
LANG_SCRIPTS: dict[str, frozenset[str]] = {
    "en": LATIN,
    "zh": frozenset({"han"}),
    "ja": frozenset({"han", "kana"}),
    "ko": frozenset({"hangul"}),
}


def row_scripts(lang: object, text: object) -> frozenset[str]:
    """The scripts a row with declared language ``lang`` (or None) and ``text`` needs.

    >>> sorted(row_scripts("en", "¯\\_(ツ)_/¯")), sorted(row_scripts(None, "¯\\_(ツ)_/¯"))
    ([], ['kana'])
    >>> sorted(row_scripts("zh", "营业中 OPEN")), row_scripts(None, "2024")
    (['han', 'latin'], frozenset())
    """
    if not isinstance(text, str):
        return frozenset()
    found = text_scripts(text)
    declared = LANG_SCRIPTS.get(lang) if isinstance(lang, str) else None
    if declared is None:
        return found
    counts = script_counts(text)
    return frozenset(s for s in found if s in declared or counts[s] >= MIN_SCRIPT_LETTERS)


def needed_scripts(rows: Iterable[tuple[object, object]]) -> frozenset[str]:
    """Every script the ``(declared lang, text)`` rows need."""
    needed: set[str] = set()
    for lang, text in set(rows):
        needed |= row_scripts(lang, text)
    return frozenset(needed)


def reader_scripts(spec: str) -> frozenset[str] | None:
    """The scripts the reader ``spec`` reads, from its options (nothing is created or loaded).

    None when the reader declares nothing (a plug-in of another package, a test
    double): such a reader is not checked.

    >>> sorted(reader_scripts("rapidocr") or []), sorted(reader_scripts("tesseract?lang=eng") or [])
    (['han', 'latin'], ['latin'])
    """

    options = PLUGINS.resolve("readers", spec).options
    declare = getattr(options, "scripts", None)
    if not callable(declare):
        return None
    return frozenset(declare())


def readers_for(scripts: frozenset[str]) -> list[str]:
    """Specs of the readers installed here that read every script of ``scripts``.

    Each available reader is tried with its default options and with the variants
    its options class offers (``script_variants()``: Tesseract's installed
    traineddata languages, PaddleOCR's languages). Nothing is created or loaded.
    """

    found: list[str] = []
    for plugin in PLUGINS.entries("readers"):
        if plugin.unavailable() is not None:
            continue
        variants = getattr(plugin.options, "script_variants", None)
        specs = [plugin.name, *(variants() if callable(variants) else [])]
        for spec in specs:
            reads = reader_scripts(spec)
            if reads is not None and scripts <= reads:
                found.append(spec)
                break
    return found


def prompt_rows(frame: pd.DataFrame) -> list[tuple[Any, str]]:
    """(lang or None, text) of each prompt row.

    The ``lang`` of a prompt set is the source's, or guessed from the text where the
    source declared none (:func:`glyphbench.prompts.attributes.compute_attributes`); either way
    it only keeps a lone letter of another script from counting (:func:`row_scripts`).
    """
    texts = [str(text) for text in frame["text"].astype("string").fillna("")]
    if "lang" in frame.columns:
        langs = frame["lang"].astype("object").tolist()
    else:
        langs = [None] * len(frame)
    return [
        (lang if isinstance(lang, str) and lang else None, text)
        for lang, text in zip(langs, texts, strict=True)
    ]


def check_reader_reads(spec: str, frame: pd.DataFrame, where: str | None = None) -> None:
    """Refuse (InputError) a reader that cannot read a script the prompts of ``frame`` need.

    The message says how many prompts of which language are unreadable, which
    scripts are missing, and which installed readers read them (or that none does).
    """
    reads = reader_scripts(spec)
    if reads is None or frame.empty:
        return
    rows = prompt_rows(frame)
    unread_rows = [(lang, text) for lang, text in rows if not row_scripts(lang, text) <= reads]
    if not unread_rows:
        return
    missing = frozenset(needed_scripts(unread_rows) - reads)
    unread = Counter(lang or guess_lang(text) for lang, text in unread_rows)
    counts = ", ".join(f"{n} {lang}" for lang, n in sorted(unread.items()))
    readable = sorted({lang for lang, text in rows if lang and row_scripts(lang, text) <= reads})
    keep = (
        f"select them with --where \"lang == '{readable[0]}'\""
        if len(readable) == 1
        else "select the prompts it can read with --where"
    )
    names = ", ".join(sorted(missing))
    others = [other for other in readers_for(missing) if other != spec]
    advice = (
        f"use a reader that reads them ({', '.join(f'--ocr {o}' for o in others[:3])})"
        if others
        else f"no reader installed here reads {names} (docs/readers.md lists the readers)"
    )
    raise InputError(
        where,
        f"reader {spec!r} reads {', '.join(sorted(reads))} but {len(unread_rows)} selected "
        f"prompts ({counts}) need {names}; {advice}, or {keep}",
        key="ocr",
    )
