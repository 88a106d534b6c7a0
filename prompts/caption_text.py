"""Which words of a caption are the text to render: the TextCaps and VizWiz rules.

A caption says what is written on the object somewhere among words that describe it.
Each rule lists the caption's *candidate* texts, each one contiguous span of the
caption as written, never words joined from different places. A candidate that
repeats part of a longer one ("coffee" beside "Starbucks Coffee") belongs to the longer
one. The caption gets a text only when exactly one candidate is left; with none its
text was not found, with several the rule cannot decide which one the caption means:
both kinds are left out of the set, and ``glyphbench prompts validate`` lists them
(``text_not_found``, ``ambiguous_span``) with the candidates.

**TextCaps** (:func:`textcaps_spans`): a caption word is text when its letters and
digits, in any case, are those of one or more of the image's OCR tokens one after another:
the signs the caption writes among or around them are the text's ("20%" of the token
``20``, "Coca-Cola" of ``COCA`` and ``COLA``), a possessive no token carries is cut
("King's" of ``KING``), and an end the token writes is given back ("Yahoo!" of
``YAHOO!``). Contiguous matched words are one span, joined across "&" or "+", lower-case
function words (:data:`FUNCTION_WORDS`) trimmed from its ends. The same words written
twice ("stop" and "STOP") are one text, taken where the caption writes them as the OCR
tokens do.

**VizWiz-Captions** (:func:`vizwiz_spans`): no OCR tokens, so the caption's own
signals, strongest first; the first kind that gives any candidate decides:

1. quoted spans (``"..."``, ``“...”``, ``'...'`` not inside a word);
2. what a cue of writing introduces (*says*, *reads*, *labeled*, *titled*, *called*,
   *the word(s)*, ...: :data:`CUES`, :data:`NOUN_CUES`): a name, or lower-case words up
   to punctuation or a preposition (none when they run into a verb: "reads age is one
   way ..."; the words of a caption written in capitals count as lower-case ones); and
   the name before or after *brand* ("Yoplait brand", "fanta brand", "brand hollins,");
3. names: runs of name words (below), joined by :data:`CONNECTORS` between capitalised
   words ("University of Waterloo", "Diary of a Wimpy Kid"), kept when another caption
   of the same image holds the same words (in any case) or when the run holds a coined
   word (in capitals, or capitalised and rare in wordfreq, Zipf below
   :data:`glyphbench.prompts.freq.RARE_ZIPF`: "Robitussin", "NASCAR"). One
   everyday word alone ("Body", "Tea": Zipf from :data:`EVERYDAY_ZIPF`) is no name. A
   name's possessive is decided by the other captions, else both forms are candidates
   (:meth:`_Context.possessive_forms`).

A *name word* is decided over all captions of the image: it is written with a capital
inside a sentence, in capitals, in mixed case (``iPhone``) or with digits more often
than in lower case. So ``great value`` is a name in the caption that writes it in lower
case when the others write ``Great Value``, and ``Bottle`` is none where the others
write ``bottle``. The capitalised words English gives every nationality, language,
holiday, weekday and month, and everyday abbreviations (:data:`ORDINARY_CAPITALISED`),
never are, nor are the capitals of a caption written all in capitals.

>>> textcaps_spans("A red stop sign that says STOP at a street corner.", ["STOP"])
['STOP']
>>> textcaps_spans("A coffee cup from Starbucks Coffee on a table.", ["STARBUCKS", "COFFEE"])
['Starbucks Coffee']
>>> vizwiz_spans("PlayStation 2 video game case titled NASCAR 07.", ["the PlayStation game"])
['NASCAR 07']
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache

from glyphbench.prompts.freq import RARE_ZIPF, zipf


def _wordset(words: str) -> frozenset[str]:
    return frozenset(words.split())


#: English function words: trimmed from a span's ends when written in lower case.
FUNCTION_WORDS = _wordset(
    "a an the of on in at to for from by with and or but is are was were be it its this "
    "that these those there here as has have had which who what while into onto over under "
    "up down out off some any one"
)
#: Function words that are trimmed; "off", "up", "out", "down", "one" stay ("20% off").
_TRIMMED = FUNCTION_WORDS - _wordset("off up out down one")
#: Words that join two capitalised words into one name ("University of Waterloo",
#: "Barnes & Noble", "Lite 'n Easy", "Castillo de Monseran"); an article may follow
#: the first ("Diary of a Wimpy Kid"), or stand alone ("Feed the Flock").
CONNECTORS = _wordset("of and & + 'n' 'n n' n de del la le du des von van y")
_ARTICLES = _wordset("a an the")
#: Ways of writing "and" in a name, compared as "and" ("Barnes & Noble", "Barnes and Noble").
_AND = dict.fromkeys(("&", "+", "'n'", "'n", "n'", "n", "plus"), "and")
#: Lower-case particles that begin a name ("del Monte", "van Houten").
_PARTICLES = _wordset("de del della di da du la le van von der")
#: Cues of writing: the words after them are what is written ("a sign that says open").
CUES = _wordset(
    "says say saying reads reading read labeled labelled titled entitled called named "
    "stating spelling spells"
)
#: Nouns that cue writing after "the" ("the word Star", "the text feed the flock").
NOUN_CUES = _wordset("word words text phrase wording")
#: Words between a cue and its text ("labeled as X", "brand name is X").
_AFTER_CUE = _wordset("as is name")
#: Words a cue's lower-case text may not start with (the cue introduces a description).
_NOT_A_TEXT_START = FUNCTION_WORDS | _wordset(
    "something anything nothing how where when why new various several many other "
    "different their his her your my our information instructions it's that's there's "
    "they're i'm it’s that’s there’s they’re i’m"
)
#: Where a cue's lower-case text ends well: prepositions and participles of place.
_TEXT_ENDS = _wordset(
    "on in at to for from by with into onto over under up down out off or but as next near "
    "beside sitting lying laying placed written printed across along inside outside behind "
    "below above underneath against around through"
)
#: Words that open a noun phrase after a preposition ("ON A STREET"): a place, no text.
_DETERMINERS = _ARTICLES | _wordset("this that these those his her their its my your our some")
#: Words that show a cue's lower-case words are a clause, not a text ("reads age is one
#: way to keep score"): the cue's text is then not decided.
_CLAUSE_WORDS = _wordset(
    "is are was were be been has have had it its this that these those there here which who "
    "what while can will would could should may might must some any one"
)
#: Words that describe a thing rather than name it: where a lower-case brand before
#: *brand* starts ("a red banquet brand meal" gives "banquet").
_DESCRIPTIVE = _wordset(
    "red orange yellow green blue purple pink brown black white gray grey silver gold clear "
    "small large big little new old plastic paper metal glass"
)
#: The most lower-case words taken before or after *brand* ("honey boy brand").
MAX_BRAND_WORDS = 3
#: The longest lower-case text a cue may introduce (longer: a description, not a text).
MAX_CUED_WORDS = 5
#: wordfreq Zipf from which one word alone is an everyday word, not a name, unless a cue
#: or capitals say otherwise ("Body" 5.4, "Tea" 4.7, "Bottle" 4.6; the single-word
#: brands of the tune sample of docs/prompts.md lie below: "Sharp" 4.5, "Walmart" 4.0).
EVERYDAY_ZIPF = 4.5
#: Words English capitalises that are no name on the object: nationalities, languages,
#: holidays, weekdays, months, and everyday abbreviations (a closed class, listed whole).
ORDINARY_CAPITALISED = _wordset(
    "i a american americans english british french german spanish italian chinese japanese "
    "korean indian mexican canadian russian arabic saudi asian african european caucasian "
    "dutch greek irish scottish swiss swedish polish portuguese thai vietnamese turkish "
    "hebrew hindi latin filipino brazilian australian middle eastern western northern "
    "southern christmas halloween easter thanksgiving valentine valentine's hanukkah "
    "monday tuesday wednesday thursday friday saturday sunday january february march april "
    "may june july august september october november december tv tvs cd cds dvd dvds vcd pc "
    "pcs usb lcd led id ac dc atm gps upc hd ok am pm us usa uk diy oz mg ml lb lbs"
)
#: Share of a caption's words in capitals from which the caption is written all in
#: capitals (its capitals then say nothing).
SHOUTED_SHARE = 0.6
#: What a caption puts around a text, trimmed from a word's ends: sentence punctuation,
#: quotes, brackets, dashes and ellipses (Unicode's too: "¡Hola!", „Hallo“, "STOP…").
#: Signs a text carries are kept: "$15", "20%", "5+", "#1", "<b>hello</b>",
#: "../../etc/passwd"; a bracket that closes one opened inside the word ("alert(1)"), a
#: minus before a digit ("-5"), the point of an abbreviation ("U.S.A.", "Dr.").
_LEAD_PUNCT = "\"'`([{*_,;:!?"
_TRAIL_PUNCT = "\"'`)]}*_,;:!?.-"
#: Unicode categories trimmed from either end: quotes (Pi, Pf), brackets (Ps, Pe),
#: dashes (Pd); other punctuation (Po) only where :data:`_SENTENCE_MARKS` lists it.
_TRIMMED_CATEGORIES = frozenset({"Pi", "Pf", "Ps", "Pe", "Pd"})
_SENTENCE_MARKS = "…‥¡¿。、，．！？；：·"  # noqa: RUF001
_BRACKETS = {")": "(", "]": "[", "}": "{"}
#: Abbreviations whose point is written ("Dr. Pepper", "Main St."); a name's point, not
#: the end of a sentence.
ABBREVIATIONS = _wordset("mr mrs ms dr st jr sr inc ltd corp co bros mt ft prof")
_INITIALISM = re.compile(r"(?:[^\W\d_]\.)+[^\W\d_]")  # U.S.A (its last point trimmed)
#: Punctuation after a word that ends a clause: a name never runs across it.
_CLAUSE_END = ",.;:!?()[]{}—–…‥。、，．！？；："  # noqa: RUF001
_SENTENCE_END = ".!?。！？"  # noqa: RUF001
#: A caption's chunks: split at spaces, and after a dash or an ellipsis written between
#: words without spaces ("labeled—Pepsi—on"); a dash alone is a chunk (no word joins
#: across it).
_WORD = re.compile(r"[^\s—–…]+[—–…]*|[—–…]+")
_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”|(?<![\w])'([^']+?)'(?![\w])")


@dataclass(frozen=True)
class Word:
    """One word of a caption: where its core (ends' punctuation trimmed) lies, and how
    it is written."""

    start: int
    end: int
    number: int  # position among the caption's whitespace-separated chunks
    text: str
    initial: bool  # first of its sentence
    clause_end: bool  # punctuation after it ends a clause
    shouted: bool  # the caption is written in capitals

    @property
    def key(self) -> str:
        """As compared: lower-cased, without an abbreviation's point ("Dr." as "Dr")."""
        return self.text.lower().removesuffix(".")

    @property
    def loud(self) -> bool:
        """In capitals in a caption written in capitals: no sign of a name."""
        return self.shouted and self.text.isupper()

    @property
    def first(self) -> str:
        """The first letter or digit ("#1" gives "1"), else the first character."""
        return next((c for c in self.text if c.isalnum()), self.text[0])

    @property
    def capital(self) -> bool:
        """Written as a name: a capital or a digit first (capitals of a shouted caption
        and the words of :data:`ORDINARY_CAPITALISED` do not count)."""
        first = self.first
        if self.key in ORDINARY_CAPITALISED or not (first.isupper() or first.isdigit()):
            return False
        return first.isdigit() or not self.loud

    @property
    def shape(self) -> bool | None:
        """True: written as a name (see :func:`name_words`); False: as an ordinary word;
        None: no evidence (a sentence's first word, no letters)."""
        letters = [c for c in self.text if c.isalpha()]
        if self.key in ORDINARY_CAPITALISED:
            return False
        if any(c.isdigit() for c in self.text):
            return True
        if not letters or self.loud:
            return None
        if len(letters) >= 2 and all(c.isupper() for c in letters):
            return True
        if any(c.isupper() for c in letters[1:]) and any(c.islower() for c in letters):
            return True
        return None if self.initial else letters[0].isupper()


def _trims(char: str, lead: bool) -> bool:
    if char in (_LEAD_PUNCT if lead else _TRAIL_PUNCT) or char in _SENTENCE_MARKS:
        return True
    return unicodedata.category(char) in _TRIMMED_CATEGORIES and char != "-"


def _leads(token: str, at: int) -> bool:
    """The caption's punctuation before a word starts at ``at``: an ellipsis ("...STOP",
    not "../"), a dash but no minus ("-5")."""
    if token[at] == "-":
        return not token[at + 1 : at + 2].isdigit()
    return _trims(token[at], True) or token.startswith("...", at)


def _core(token: str) -> tuple[int, int]:
    """Start and end of a token without the caption's punctuation at its ends (see
    :data:`_LEAD_PUNCT`): what the text itself carries stays.

    >>> [token[slice(*_core(token))] for token in ("¡Hola!", "„Hallo“", "(alert(1))", "U.S.A.")]
    ['Hola', 'Hallo', 'alert(1)', 'U.S.A.']
    """
    start, end = 0, len(token)
    while start < end and _leads(token, start):
        start = len(token) - len(token[start:].lstrip(".")) if token[start] == "." else start + 1
    while end > start and _trims(token[end - 1], False):
        end -= 1
    for close, open_ in _BRACKETS.items():  # give back the brackets the word closes
        while token.count(open_, start, end) > token.count(close, start, end):
            at = token.find(close, end)
            if at < 0:
                break
            end = at + 1
    core = token[start:end]
    if token[end : end + 1] == "." and (
        _INITIALISM.fullmatch(core) or (core.lower() in ABBREVIATIONS and core[:1].isupper())
    ):
        end += 1
    return start, end


def token_key(token: str) -> str:
    """A token as compared: punctuation trimmed from its ends, lower-cased.

    >>> token_key("“Coca-Cola.”")
    'coca-cola'
    """
    start, end = _core(token)
    return token[start:end].lower()


def _shouted(chunks: Sequence[str]) -> bool:
    lettered = [c for c in chunks if sum(ch.isalpha() for ch in c) >= 2]
    loud = [c for c in lettered if c.isupper()]
    return len(loud) >= 3 and len(loud) >= SHOUTED_SHARE * len(lettered)


def caption_words(caption: str) -> list[Word]:
    """The caption's words with any non-punctuation character, in order.

    >>> [(w.text, w.initial, w.clause_end) for w in caption_words("Soup. A can, red")]
    [('Soup', True, True), ('A', True, False), ('can', False, True), ('red', False, False)]
    """
    return list(_caption_words(caption))


@lru_cache(maxsize=4096)  # the captions of one image are read once per caption of it
def _caption_words(caption: str) -> tuple[Word, ...]:
    matches = list(_WORD.finditer(caption))
    shouted = _shouted([m.group() for m in matches])
    words: list[Word] = []
    initial = True
    for number, match in enumerate(matches):
        chunk = match.group()
        start, end = _core(chunk)
        if end == start:
            continue
        text = chunk[start:end]
        # an initialism's point ("made in the U.S.A.") may end the sentence too; a title's not
        tail = chunk[end - 1 :] if _INITIALISM.fullmatch(text[:-1]) else chunk[end:]
        breaks = any(c in _CLAUSE_END for c in tail + chunk[:start])
        words.append(
            Word(
                match.start() + start,
                match.start() + end,
                number,
                text,
                initial,
                breaks,
                shouted,
            )
        )
        initial = any(c in _SENTENCE_END for c in tail)
    return tuple(words)


def _span(caption: str, run: Sequence[Word]) -> str:
    return caption[run[0].start : run[-1].end]


def _words_key(words: Iterable[str]) -> str:
    """Words as compared between captions: `` great value ``."""
    return " " + " ".join(words) + " "


def _trim(run: Sequence[Word]) -> list[Word]:
    """The run without function words (:data:`_TRIMMED`) written in lower case (or first
    in their sentence) at its ends."""

    def loose(word: Word) -> bool:
        return word.key in _TRIMMED and (word.text.islower() or word.initial or word.loud)

    trimmed = list(run)
    while trimmed and loose(trimmed[0]):
        trimmed.pop(0)
    while trimmed and loose(trimmed[-1]):
        trimmed.pop()
    return trimmed


def _adjacent(first: Word, then: Word) -> bool:
    return then.number == first.number + 1 and not first.clause_end


def _bridge(words: Sequence[Word], at: int, keep: Sequence[bool]) -> int:
    """How many connector words after ``words[at]`` join it to a kept capitalised word
    (0: none): one connector or article ("Feed the Flock"), or a connector and an
    article ("Diary of a Wimpy Kid")."""
    if not words[at].capital:
        return 0
    for gap in (1, 2):
        after = at + gap + 1
        if after >= len(words) or not (keep[after] and words[after].capital):
            continue
        between = words[at + 1 : after]
        if gap == 1 and between[0].key not in CONNECTORS | _ARTICLES:
            continue
        if gap == 2 and (between[0].key not in CONNECTORS or between[1].key not in _ARTICLES):
            continue
        if all(_adjacent(words[k], words[k + 1]) for k in range(at, after)):
            return gap
    return 0


def _runs(words: Sequence[Word], keep: Sequence[bool], bridge: bool) -> list[list[Word]]:
    """Runs of adjacent kept words (no clause break inside); with ``bridge``, connectors
    between two capitalised kept words join them ("Barnes and Noble", not "captcha of
    Arawak"), and a particle before a run begins it ("del Monte")."""
    runs: list[list[Word]] = []
    i = 0
    while i < len(words):
        if not keep[i]:
            i += 1
            continue
        run = [words[i]]
        if bridge and i and words[i - 1].key in _PARTICLES and _adjacent(words[i - 1], words[i]):
            run.insert(0, words[i - 1])
        while i + 1 < len(words):
            gap = _bridge(words, i, keep) if bridge else 0
            if gap:
                run += words[i + 1 : i + gap + 2]
                i += gap + 1
            elif keep[i + 1] and _adjacent(words[i], words[i + 1]):
                run.append(words[i + 1])
                i += 1
            else:
                break
        runs.append(run)
        i += 1
    return runs


def one_text(
    caption: str,
    runs: Sequence[Sequence[Word]],
    preference: Callable[[Sequence[Word]], int] | None = None,
) -> list[str]:
    """The distinct candidates among ``runs``: a run whose words lie inside a longer
    run's is dropped; of runs with the same words, the one ``preference`` scores highest
    (else the first) stands for them, as written in the caption.

    >>> words = caption_words("a stop sign that says STOP")
    >>> one_text("a stop sign that says STOP", [words[1:2], words[5:6]])
    ['stop']
    """
    keys = [_words_key(word.key for word in run) for run in runs]
    best: dict[str, Sequence[Word]] = {}
    for key, run in zip(keys, runs, strict=True):
        if any(key in other and key != other for other in keys):
            continue
        held = best.get(key)
        if held is None or (preference is not None and preference(run) > preference(held)):
            best[key] = run
    return [_span(caption, run) for run in best.values()]


# ---------------------------------------------------------------- TextCaps


_PIECE = re.compile(r"[^\W_]+")  # a run of letters or digits
_POSSESSIVE = re.compile(r"['’]s$")
#: Words whose "'s" is a verb, not a possessive ("let's", "he's"): never cut.
_CONTRACTED = FUNCTION_WORDS | _wordset("let he she who where what how when why")
#: What a caption writes after a word to go on: never given back from a token ("SALE,").
_SEPARATORS = ",;:"
#: Signs that join two OCR tokens' words into one text ("Barnes & Noble").
_JOINING_SIGNS = frozenset({"&", "+"})


def _pieces(text: str) -> tuple[str, ...]:
    return tuple(_PIECE.findall(text))


@dataclass(frozen=True)
class _Ocr:
    """An image's OCR tokens, compared with caption words by their letters and digits
    (the signs between and around them are the caption's to show: "20%" of the token
    ``20``, "Coca-Cola" of ``COCA`` and ``COLA``)."""

    forms: dict[tuple[str, ...], list[str]]  # lower-cased pieces -> the tokens
    exact: frozenset[tuple[str, ...]]  # pieces as the tokens write them
    longest: int

    @classmethod
    def of(cls, tokens: Iterable[str]) -> _Ocr:
        forms: dict[tuple[str, ...], list[str]] = {}
        exact: set[tuple[str, ...]] = set()
        for token in tokens:
            pieces = _pieces(token.strip())
            if pieces:
                forms.setdefault(_pieces(token.strip().lower()), []).append(token.strip())
                exact.add(pieces)
        return cls(forms, frozenset(exact), max(map(len, forms), default=0))

    def covers(self, pieces: Sequence[str]) -> bool:
        """The pieces are the pieces of OCR tokens one after another."""
        reach = [True] + [False] * len(pieces)
        for at in range(len(pieces)):
            for n in range(1, min(self.longest, len(pieces) - at) + 1) if reach[at] else ():
                reach[at + n] = reach[at + n] or tuple(pieces[at : at + n]) in self.forms
        return bool(pieces) and reach[-1]

    def around(self, pieces: Sequence[str], first: bool) -> Iterator[str]:
        """What the tokens that may begin (``first``) or end the pieces write before their
        first piece or after their last ("(" of "(555)", "." of "STOP.")."""
        for n in range(1, min(self.longest, len(pieces)) + 1):
            part = tuple(pieces[:n] if first else pieces[-n:])
            for token in self.forms.get(part, ()):
                found = list(_PIECE.finditer(token))
                yield token[: found[0].start()] if first else token[found[-1].end() :]


def _ocr_word(caption: str, word: Word, ocr: _Ocr) -> Word | None:
    """The word as an OCR token's text, or None: its letters and digits are the tokens',
    with the signs the caption writes among them ("20%", "$5.99"); a possessive that no
    token carries is cut ("King's" of ``KING``); an end that the token writes too is
    given back ("Yahoo!" of ``YAHOO!``)."""
    if ocr.covers(_pieces(word.text.lower())):
        return _token_ends(caption, word, ocr, True)
    if _POSSESSIVE.search(word.text) and word.key[:-2] not in _CONTRACTED:
        bare = replace(word, end=word.end - 2, text=word.text[:-2])
        if ocr.covers(_pieces(bare.text.lower())):
            return _token_ends(caption, bare, ocr, False)
    return None


def _token_ends(caption: str, word: Word, ocr: _Ocr, tail: bool) -> Word:
    """The word with what its tokens write before its first letter or digit, or after its
    last (``tail``), where the caption writes it too."""
    pieces = list(_PIECE.finditer(word.text))
    keys = [p.group().lower() for p in pieces]
    first, last = word.start + pieces[0].start(), word.start + pieces[-1].end()
    chunk_start = max(caption.rfind(c, 0, word.start) for c in " \t\n\r") + 1
    before = caption[chunk_start:first].lower()
    start, end = word.start, word.end
    for lead in ocr.around(keys, True):
        if lead and before.endswith(lead.lower()):
            start = min(start, first - len(lead))
    after = _WORD.match(caption, last)
    chunk_end = after.end() if after is not None else last
    rest = caption[last:chunk_end].lower()
    for trail in ocr.around(keys, False) if tail else ():
        if trail and trail.strip(_SEPARATORS) == trail and rest.startswith(trail.lower()):
            end = max(end, last + len(trail))
    if (start, end) == (word.start, word.end):
        return word
    outside = caption[chunk_start:start] + caption[end:chunk_end]  # "(555)" given back whole
    breaks = any(c in _CLAUSE_END for c in outside)
    return replace(word, start=start, end=end, text=caption[start:end], clause_end=breaks)


def textcaps_spans(caption: str, ocr_tokens: Iterable[str]) -> list[str]:
    """The caption's candidate texts: contiguous words that are OCR tokens' (see
    :func:`_ocr_word`), joined across "&" or "+".

    >>> textcaps_spans("a shirt reading i love ny", ["I", "LOVE", "NY"])
    ['i love ny']
    >>> textcaps_spans("Coca-Cola by a CITY MARKET sign", ["coca-cola", "city", "market"])
    ['Coca-Cola', 'CITY MARKET']
    >>> textcaps_spans("A book by Stephen King's on a shelf", ["STEPHEN", "KING"])
    ['Stephen King']
    """
    ocr = _Ocr.of(ocr_tokens)
    found = [_ocr_word(caption, word, ocr) for word in caption_words(caption)]
    keep = [word is not None for word in found]
    words = [word or plain for word, plain in zip(found, caption_words(caption), strict=True)]
    for at in range(1, len(words) - 1):
        keep[at] = keep[at] or (words[at].text in _JOINING_SIGNS and keep[at - 1] and keep[at + 1])
    runs = [_trim(run) for run in _runs(words, keep, False)]

    def agreement(run: Sequence[Word]) -> int:  # words written as the OCR tokens are
        return sum(_pieces(word.text) in ocr.exact for word in run)

    return one_text(caption, [run for run in runs if run], agreement)


# ---------------------------------------------------------------- VizWiz


def quoted_spans(caption: str) -> list[str]:
    """The caption's quoted spans, stripped, each once.

    >>> quoted_spans("A shirt that says 'Go Team' on it")
    ['Go Team']
    >>> quoted_spans("It's a can of Pepsi.")
    []
    """
    quoted = [next(g for g in match.groups() if g) for match in _QUOTED.finditer(caption)]
    return list(dict.fromkeys(span.strip() for span in quoted if span.strip()))


def name_words(captions: Iterable[str]) -> frozenset[str]:
    """Word keys the image's captions write as names more often than as ordinary words.

    >>> sorted(name_words(["a can of great value chicken", "A can of Great Value chicken.",
    ...                    "A can of Great Value brand chicken"]))
    ['great', 'value']
    """
    votes: Counter[str] = Counter()
    for caption in captions:
        votes.update(_votes(caption))
    return frozenset(key for key, vote in votes.items() if vote > 0)


@lru_cache(maxsize=4096)
def _votes(caption: str) -> Counter[str]:
    """+1 for each word the caption writes as a name, -1 as an ordinary word."""
    votes: Counter[str] = Counter()
    for word in _caption_words(caption):
        shape = word.shape
        if shape is not None:
            votes[word.key] += 1 if shape else -1
    return votes


def _coined(word: Word) -> bool:
    """A word only a name is: in mixed case ("iTunes"), in capitals (two letters or
    more), or capitalised and rare in wordfreq (a brand's coinage: "Robitussin")."""
    letters = [c for c in word.text if c.isalpha()]
    mixed = any(c.isupper() for c in letters[1:]) and any(c.islower() for c in letters)
    if mixed and word.key not in ORDINARY_CAPITALISED:
        return True
    if not word.capital or not letters:
        return False
    if len(letters) >= 2 and word.text.isupper():
        return True
    base = re.sub(r"['’]s$", "", word.key)
    return len(letters) >= 3 and zipf(base) < RARE_ZIPF


@dataclass(frozen=True)
class _Context:
    """One caption of an image, with what the image's other captions say."""

    caption: str
    words: list[Word]
    names: frozenset[str]
    siblings: list[list[Word]]  # the words of the image's other captions

    @classmethod
    def of(cls, caption: str, others: Sequence[str]) -> _Context:
        return cls(
            caption,
            caption_words(caption),
            name_words([caption, *others]),
            [caption_words(other) for other in others],
        )

    def _holders(self, run: Sequence[Word]) -> Iterator[list[Word]]:
        """Each place another caption holds the run's words (in any case; "&" for "and")."""
        keys = [_AND.get(w.key, w.key) for w in run]
        for words in self.siblings:
            for i in range(len(words) - len(keys) + 1):
                if [_AND.get(w.key, w.key) for w in words[i : i + len(keys)]] == keys:
                    yield words[i : i + len(keys)]

    def shared(self, run: Sequence[Word]) -> bool:
        """Another caption of the image holds the run's words (in any case)."""
        return next(self._holders(run), None) is not None

    def possessive_forms(self, run: list[Word]) -> list[list[Word]]:
        """The run's forms as a name when it ends in a possessive 's: without it where
        another caption of the image writes the name so ("Humanware's contact information"
        beside "a Humanware pamphlet"), with it where another writes the possessive
        ("Kellogg's"), else both, for the caption says nothing of which the object carries
        (a brand may: "Campbell's"; an owner does not: "Humanware's"), and two candidates
        leave it out."""
        last = run[-1]
        if not _POSSESSIVE.search(last.text) or last.key[:-2] in _CONTRACTED:
            return [run]
        shorter = [*run[:-1], replace(last, end=last.end - 2, text=last.text[:-2])]
        if self.shared(shorter):
            return [shorter]
        return [run] if self.shared(run) else [run, shorter]

    def cut_short(self, run: Sequence[Word]) -> bool:
        """A name goes on past the run: the caption capitalises the word right next to it
        ("NASCAR" of "NASCAR Kart Racing"), or another caption writes that word
        capitalised with it ("coca" of "coca cola" where another caption writes "Coca
        Cola"). Such a run is no text of its own."""
        at, end = self.words.index(run[0]), self.words.index(run[-1])
        before = self.words[at - 1] if at else None
        after = self.words[end + 1] if end + 1 < len(self.words) else None
        if before is not None and _adjacent(before, run[0]):
            joined = [before, *run]
            if before.shape or self._capitalised_with(joined, 0):
                return True
        if after is not None and _adjacent(run[-1], after):
            joined = [*run, after]
            if after.shape or self._capitalised_with(joined, len(run)):
                return True
            beyond = self.words[end + 2] if end + 2 < len(self.words) else None
            if after.key in CONNECTORS and beyond is not None and _adjacent(after, beyond):
                return self._capitalised_with([*joined, beyond], len(run) + 1)
        return False

    def _capitalised_with(self, phrase: Sequence[Word], at: int) -> bool:
        """Another caption holds ``phrase`` with its word ``at`` capitalised."""
        return any(_copied(held[at]) and not held[at].initial for held in self._holders(phrase))

    def is_name(self, word: Word) -> bool:
        return word.key not in ORDINARY_CAPITALISED and (word.key in self.names or _coined(word))


def _lower_text(words: Sequence[Word], limit: int, strict: bool = False) -> list[Word] | None:
    """Lower-case words that a cue introduces: up to punctuation or a preposition; None
    when they start with a function word, run into a verb or run past ``limit``. With
    ``strict`` (a caption in capitals) a preposition ends the text only before an article
    or the caption's end ("STOP ON A STREET"), else the text is undecided ("HANDLE WITH
    CARE" may be one)."""
    if not words or words[0].key in _NOT_A_TEXT_START or words[0].key.endswith("ing"):
        return None  # "-ing": a verb ("called displaying on the screen")
    taken = [words[0]]
    for at, word in enumerate(words[1:], 1):
        if not _adjacent(taken[-1], word):
            break
        if word.key in _TEXT_ENDS:
            then = words[at + 1] if at + 1 < len(words) else None
            place = then is None or not _adjacent(word, then) or then.key in _DETERMINERS
            if strict and not place:
                return None
            break
        if word.key in _CLAUSE_WORDS:
            return None
        if word.key in CUES or word.key in NOUN_CUES:
            break
        taken.append(word)
    taken = _trim(taken)
    return taken if taken and len(taken) <= limit else None


def _after_cue(context: _Context, at: int) -> list[Word] | None:
    """The text a cue at word ``at`` introduces: a capitalised name, else lower-case words
    (and so in a caption written in capitals, whose capitals say nothing: "A SIGN THAT
    SAYS STOP ON A STREET" gives "STOP")."""
    words = context.words
    i = at + 1
    while i < len(words) and words[i].key in _AFTER_CUE and _adjacent(words[i - 1], words[i]):
        i += 1
    if i >= len(words) or words[i].number != words[i - 1].number + 1:
        return None
    rest = words[i:]
    if _copied(rest[0]) and not rest[0].first.isdigit() and not rest[0].loud:
        keep = [_copied(w) or context.is_name(w) for w in rest]
        run = _trim(_runs(rest, keep, True)[0])
        return run or None
    return _lower_text(rest, MAX_CUED_WORDS, strict=rest[0].loud)


def _copied(word: Word) -> bool:
    """After a cue: written with a capital or a digit first, whatever the word ("the
    text January", "named PARIS HILTON PASSPORT IN TOKYO"), but not "A" or "I"."""
    first = word.first
    return (first.isupper() or first.isdigit()) and word.key not in ("a", "i")


def _brand_before(context: _Context, at: int) -> list[Word] | None:
    """The name just before *brand*: a name run, else lower-case words back to a function
    or describing word (at most :data:`MAX_BRAND_WORDS`)."""
    before = context.words[:at]
    if not before or not _adjacent(before[-1], context.words[at]):
        return None
    keep = [context.is_name(w) for w in before]
    if keep[-1]:
        return _trim(_runs(before, keep, True)[-1]) or None
    stops = FUNCTION_WORDS | _TEXT_ENDS | _DESCRIPTIVE | CUES | NOUN_CUES
    taken: list[Word] = []
    for word in reversed(before):
        if word.key in stops or (taken and not _adjacent(word, taken[0])):
            break
        taken.insert(0, word)
    return taken if taken and len(taken) <= MAX_BRAND_WORDS else None


def _brand_after(context: _Context, at: int) -> list[Word] | None:
    """The name just after *brand* ("brand hollins,"): a capitalised name, or lower-case
    words that end the clause."""
    text = _after_cue(context, at)
    if text is None or text[0].capital:
        return text
    last = text[-1]
    ends = last.clause_end or last is context.words[-1]
    return text if ends and len(text) <= MAX_BRAND_WORDS else None


def _is_cue(words: Sequence[Word], at: int) -> bool:
    """A cue of writing: a verb of :data:`CUES` not after an article ("a reading lamp"),
    or a noun of :data:`NOUN_CUES` after "the"."""
    word = words[at]
    before = words[at - 1].key if at else ""
    if word.key in CUES:
        return before not in _ARTICLES
    return word.key in NOUN_CUES and before == "the"


def cued_spans(caption: str, others: Sequence[str] = ()) -> list[str]:
    """Texts a cue of writing introduces, and names marked as a brand.

    >>> cued_spans("A hat with the word Star in script.")
    ['Star']
    >>> cued_spans("a small red package of banquet brand ready made food")
    ['banquet']
    >>> cued_spans("a surface that reads cheese balls with other text")
    ['cheese balls']
    >>> cued_spans("Poster that reads age is one way to keep score")
    []
    """
    return _cued(_Context.of(caption, others))


def _cued(context: _Context) -> list[str]:
    runs: list[list[Word]] = []
    for at, word in enumerate(context.words):
        run = None
        if _is_cue(context.words, at):
            run = _after_cue(context, at)
        elif word.key == "brand":
            run = _brand_before(context, at) or _brand_after(context, at)
        if run:
            runs.append(run)
    return one_text(context.caption, runs)


def _everyday_word(run: Sequence[Word]) -> bool:
    """One everyday word alone ("Body", "Tea"): a capitalised ordinary word more often
    than a brand (Zipf of at least :data:`EVERYDAY_ZIPF`, not in capitals)."""
    if len(run) != 1:
        return False
    word = run[0]
    return word.text.isalpha() and not word.text.isupper() and zipf(word.key) >= EVERYDAY_ZIPF


def name_spans(caption: str, others: Sequence[str] = ()) -> list[str]:
    """Runs of name words that another caption repeats or that hold a coined word.

    >>> name_spans("A can of Diet Coke on a desk.", ["A red Diet Coke can", "a soda can"])
    ['Diet Coke']
    >>> name_spans("A bottle of Robitussin.", [])
    ['Robitussin']
    """
    return _names(_Context.of(caption, others))


def _names(context: _Context) -> list[str]:
    keep = [context.is_name(w) for w in context.words]
    kept: list[list[Word]] = []
    for found in _runs(context.words, keep, True):
        run = _trim(found)
        if not run:
            continue
        if _everyday_word(run) or context.cut_short(run):
            continue
        for form in context.possessive_forms(run):
            if context.shared(form) or any(_coined(w) for w in form):
                kept.append(form)
    named = [run for run in kept if not _number(run)]
    return one_text(context.caption, named or kept)


def _number(run: Sequence[Word]) -> bool:
    """A run without letters ("2" of "season 2"): a count or a size beside a name, no
    name of its own."""
    return not any(c.isalpha() for w in run for c in w.text)


def vizwiz_spans(caption: str, other_captions: Iterable[str]) -> list[str]:
    """The caption's candidate texts: quoted spans, else cued ones, else names.

    >>> vizwiz_spans("A shirt that says 'Go Team' on it", [])
    ['Go Team']
    >>> vizwiz_spans("A white box of Tylenol 500 mg.", ["tylenol 500 mg tablets"])
    ['Tylenol 500']
    """
    found = quoted_spans(caption)
    if not found:
        context = _Context.of(caption, list(other_captions))
        found = _cued(context) or _names(context)
    return _distinct(found)


def _distinct(spans: Sequence[str]) -> list[str]:
    """Spans not inside a longer one (compared as lower-cased words), each once."""
    keys = [_words_key(token_key(w) for w in span.split()) for span in spans]
    kept: dict[str, str] = {}
    for key, span in zip(keys, spans, strict=True):
        if not any(key in other and key != other for other in keys):
            kept.setdefault(key, span)
    return list(kept.values())
