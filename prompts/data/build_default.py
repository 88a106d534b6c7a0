"""Build glyphbench's default prompt set data from its hand-written sources and word lists.

Run from the repository root::

    .venv/bin/python prompts/data/build_default.py

It (re)writes ``prompts/data/default/texts.csv``, ``real_world.csv`` and ``zh_texts.csv``,
then ``lexicon.csv`` (every text's word-list attributes, so loading the set needs no word list).
``templates.csv`` and ``zh_templates.csv`` are hand-written and only checked here. The build is
deterministic: the same package versions (wordfreq, cefrpy) give byte-identical
files, so re-running it after editing a source shows the change as a clean diff.

Where each kind of text comes from:

* ``word``: English words from cefrpy's lexicon, stratified over CEFR level
  (A1..C1, as :func:`glyphbench.prompts.attributes.word_cefr` reports it) and wordfreq
  Zipf band (2.5-3, 3-4, 4-5, >= 5), sampled with a fixed seed. Proper nouns
  (any ``NNP`` tag), abbreviations, roman numerals, unpronounceable tokens and
  a deny list of offensive words are dropped.
* ``rare``: a hand-picked list of real but rare English words, kept only if
  wordfreq knows them with Zipf < 2.5 (so the attributes module calls them rare).
* ``phrase`` / ``sentence``: hand-written in ``default/sources/phrases.txt``;
  a line is a ``sentence`` when :func:`glyphbench.prompts.attributes.is_sentence` says so.
* ``gibberish``: seeded pseudo-random letter strings in several shapes, each
  token unknown to wordfreq (Zipf 0) and to cefrpy.
* ``numeric``: seeded fills of hand-written patterns (prices, dates, codes, ...).

The Chinese part: ``zh_texts.csv`` holds the hand-written texts of
``default/sources/zh_texts.txt`` (``kind|text`` lines: word, rare, phrase, sentence,
numeric) and seeded gibberish (3-5 common characters whose neighbouring pairs are
no word in wordfreq's Chinese list); ``zh_templates.csv`` is hand-written Chinese
templates holding “{text}”.

Real-world prompts come from ``default/sources/real_world.txt`` (format in
:func:`parse_real_world`): each item (text + subject) is paired with one of its
subgroup's scenes and one of its group's style sentences, round-robin.
"""

from __future__ import annotations

import csv
import random
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypedDict

from glyphbench.prompts import attributes as attr
from glyphbench.prompts import freq
from glyphbench.prompts.default import write_lexicon

HERE = Path(__file__).resolve().parent
OUT_DIR = HERE / "default"
SOURCES = OUT_DIR / "sources"
#: The word lists the word kinds are filtered and drawn with (kept out of the wheel).
WORD_LISTS = HERE / "word_lists"

SEED = 20240611
LEVELS = ("A1", "A2", "B1", "B2", "C1")
#: Zipf bands for single words: (label, low inclusive, high exclusive).
BANDS = (("2.5-3", 2.5, 3.0), ("3-4", 3.0, 4.0), ("4-5", 4.0, 5.0), (">=5", 5.0, 99.0))
WORDS_PER_LEVEL = 640  # 5 levels x 640 = 3,200 words


def read_phrases(path: Path) -> list[str]:
    """Non-empty, non-comment lines of a source or word list, whitespace-trimmed, in order."""
    lines = [line.strip() for line in path.read_text(encoding="utf-8").splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


#: Substrings that mark a word as offensive wherever they occur.
OFFENSIVE_STEMS = tuple(read_phrases(WORD_LISTS / "offensive_stems.txt"))
#: Whole words dropped as offensive, crude, drug-related or slurs.
OFFENSIVE_WORDS = frozenset(read_phrases(WORD_LISTS / "offensive_words.txt"))
#: Proper nouns, demonyms and abbreviations that slip past cefrpy's tags.
NOT_COMMON_WORDS = frozenset(read_phrases(WORD_LISTS / "not_common_words.txt"))
_ROMAN = re.compile(r"^[ivxlcdm]+$")

#: Real, rare English words; each is kept only if wordfreq gives 0 < Zipf < 2.5.
RARE_CANDIDATES = read_phrases(WORD_LISTS / "rare_candidates.txt")


# ---------------------------------------------------------------- words


def zipf_band(z: float) -> str | None:
    """The label of the Zipf band ``z`` falls in, or None below 2.5."""
    for label, low, high in BANDS:
        if low <= z < high:
            return label
    return None


def is_offensive(word: str) -> bool:
    return word in OFFENSIVE_WORDS or any(stem in word for stem in OFFENSIVE_STEMS)


def word_candidates(excluded: set[str]) -> dict[tuple[str, str], list[str]]:
    """Usable single words grouped by (CEFR level, Zipf band), each list sorted."""
    analyzer = attr._cefr_analyzer()
    cells: dict[tuple[str, str], list[str]] = {}
    for word in analyzer.yield_words():
        if not (word.isascii() and word.isalpha() and word.islower() and 3 <= len(word) <= 14):
            continue
        if word in excluded or word in NOT_COMMON_WORDS or _ROMAN.match(word) or is_offensive(word):
            continue
        tags = analyzer.get_all_pos_for_word_as_str(word)
        if (
            not tags
            or any(t.startswith("NNP") for t in tags)
            or set(tags) <= {"CD", "FW", "SYM", "LS", "UH"}
        ):
            continue
        z = freq.zipf(word)
        if len(word) == 3 and z < 4.0:  # rarer three-letter tokens are mostly abbreviations
            continue
        level = attr.word_cefr(word)
        band = zipf_band(z)
        if level not in LEVELS or band is None or not attr.looks_pronounceable(word):
            continue
        cells.setdefault((level, band), []).append(word)
    return {key: sorted(words) for key, words in cells.items()}


def select_words(
    cells: dict[tuple[str, str], list[str]], rng: random.Random
) -> list[tuple[str, str, str]]:
    """Pick WORDS_PER_LEVEL words per level, as evenly over the bands as the cells allow.

    A band with too few words gives its share to the other bands of the level.
    Returns (level, band, word) sorted by level, band order, word.
    """
    chosen: list[tuple[str, str, str]] = []
    band_labels = [label for label, _, _ in BANDS]
    for level in LEVELS:
        available = {b: len(cells.get((level, b), [])) for b in band_labels}
        quota = dict.fromkeys(band_labels, 0)
        remaining = WORDS_PER_LEVEL
        open_bands = [b for b in band_labels if available[b] > 0]
        while remaining > 0 and open_bands:
            share = max(1, remaining // len(open_bands))
            for b in list(open_bands):
                take = min(share, available[b] - quota[b], remaining)
                quota[b] += take
                remaining -= take
                if quota[b] >= available[b]:
                    open_bands.remove(b)
                if remaining == 0:
                    break
        for b in band_labels:
            picked = rng.sample(cells.get((level, b), []), quota[b])
            chosen.extend((level, b, w) for w in sorted(picked))
    return chosen


def rare_words(excluded: set[str]) -> list[str]:
    """The rare candidates the attributes module agrees are real and rare, in list order."""
    return [
        w
        for w in dict.fromkeys(RARE_CANDIDATES)
        if w not in excluded
        and 0.0 < freq.zipf(w) < freq.RARE_ZIPF
        and attr.word_class(w) == "rare"
    ]


# ---------------------------------------------------------------- gibberish

_ONSETS = [
    "b",
    "bl",
    "br",
    "d",
    "dr",
    "f",
    "fl",
    "fr",
    "g",
    "gl",
    "gr",
    "k",
    "kl",
    "kr",
    "m",
    "n",
    "p",
    "pl",
    "pr",
    "s",
    "sk",
    "sl",
    "sn",
    "sp",
    "st",
    "t",
    "tr",
    "v",
    "z",
    "zw",
    "sh",
    "th",
]
_VOWELS = ["a", "e", "i", "o", "u", "oo", "ea", "ai", "ou", "ie"]
_CODAS = ["", "", "n", "r", "l", "m", "s", "x", "k", "nt", "rp", "sk", "ld"]
_CONSONANTS = "bcdfghjklmnpqrstvwxz"


def _syllable(rng: random.Random) -> str:
    return rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS)


def _pronounceable(rng: random.Random, syllables: tuple[int, int] = (1, 3)) -> str:
    return "".join(_syllable(rng) for _ in range(rng.randint(*syllables)))


def _cluster(rng: random.Random) -> str:
    """Mostly consonants: reads as a string of letters, not as a word."""
    letters = [rng.choice(_CONSONANTS) for _ in range(rng.randint(3, 9))]
    letters.insert(rng.randrange(len(letters)), rng.choice("aeiou"))
    return "".join(letters)


def _mixed_case(word: str, rng: random.Random) -> str:
    return "".join(c.upper() if rng.random() < 0.5 else c for c in word)


def gibberish_strings(count: int, rng: random.Random) -> list[str]:
    """``count`` distinct nonsense strings cycling through five shapes.

    Shapes: Capitalised pronounceable nonsense; lowercase consonant clusters;
    mIxEd-case nonsense; two-word nonsense names; ALL-CAPS nonsense. Every
    letter token is absent from wordfreq (Zipf 0) and from cefrpy's lexicon.
    """
    shapes = [
        lambda: _pronounceable(rng).capitalize(),
        lambda: _cluster(rng),
        lambda: _mixed_case(_pronounceable(rng), rng),
        lambda: (
            f"{_pronounceable(rng, (1, 2)).capitalize()} {_pronounceable(rng, (1, 2)).capitalize()}"
        ),
        lambda: _pronounceable(rng, (2, 4)).upper(),
    ]
    out: list[str] = []
    seen: set[str] = set()
    i = 0
    while len(out) < count:
        text = shapes[i % len(shapes)]()
        tokens = attr.word_tokens(text)
        if (
            text.lower() not in seen
            and 4 <= len(text) <= 24
            and all(freq.zipf(t) == 0.0 and not attr._in_cefr_lexicon(t) for t in tokens)
            and attr.is_gibberish(text)
        ):
            out.append(text)
            seen.add(text.lower())
            i += 1
    return out


# ---------------------------------------------------------------- numbers and special characters

_MONTHS = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
]
_SHOPS = [
    "brightleaf",
    "northwind",
    "copperpot",
    "maplecrest",
    "bluefern",
    "sunhollow",
    "tidewater",
    "pinegrove",
]
_TAGS = [
    "SummerVibes",
    "MondayMotivation",
    "ShopLocal",
    "CleanEnergy",
    "BookLovers",
    "GameNight",
    "TacoTuesday",
    "RunClub",
]


def _numeric_patterns(rng: random.Random) -> list[Callable[[], str]]:
    r = rng.randint
    return [
        lambda: f"${r(1, 499)}.{r(0, 99):02d}",
        lambda: f"€{r(1, 99)},{rng.choice(['00', '50', '95', '99'])}",
        lambda: f"£{r(5, 900)}",
        lambda: f"{r(10, 70)}% OFF",
        lambda: f"Save {r(5, 60)}%",
        lambda: f"{r(2015, 2031)}-{r(1, 12):02d}-{r(1, 28):02d}",
        lambda: f"{r(1, 28):02d}/{r(1, 12):02d}/{r(1990, 2030)}",
        lambda: f"{rng.choice(_MONTHS)} {r(1, 28)}, {r(1950, 2030)}",
        lambda: f"{r(1, 12)}:{r(0, 59):02d} {rng.choice(['AM', 'PM'])}",
        lambda: f"{r(0, 23):02d}:{r(0, 59):02d}",
        lambda: f"Open {r(6, 11)}am–{r(5, 11)}pm",
        lambda: f"+1 555-01{r(0, 99):02d}",
        lambda: f"(555) 01{r(0, 9)}-{r(1000, 9999)}",
        lambda: f"{rng.choice('ABCDKMRSTXZ')}{rng.choice('ABCDKMRSTXZ')}-{r(100, 9999)}",
        lambda: (
            f"Model {rng.choice('ABCDKMRSTXZ')}{r(1, 99)}{rng.choice(['', 'X', 'S', 'Pro'])}"
        ).strip(),
        lambda: f"#{rng.choice(_TAGS)}{r(2019, 2030)}",
        lambda: f"#{rng.choice(_TAGS)}",
        lambda: f"hello@{rng.choice(_SHOPS)}.example",
        lambda: f"{rng.choice(['info', 'orders', 'team'])}@{rng.choice(_SHOPS)}.example",
        lambda: f"{(a := r(2, 12))} × {(b := r(2, 12))} = {a * b}",
        lambda: f"{(a := r(10, 99))} + {(b := r(10, 99))} = {a + b}",
        lambda: f"{r(1, 3)}/4 cup",
        lambda: f"{r(-20, 45)} °C",
        lambda: f"{r(100, 999)} {rng.choice(['ml', 'g', 'kg', 'km', 'mph', 'kcal'])}",
        lambda: f"Gate {rng.choice('ABCDEF')}{r(1, 40)}",
        lambda: f"Flight {rng.choice(['GB', 'NW', 'TQ'])}{r(100, 9999)}",
        lambda: f"Row {r(1, 40)}, Seat {rng.choice('ABCDEF')}",
        lambda: (
            f"{r(1, 999)} {rng.choice(['Elm', 'Oak', 'Mill', 'Harbor', 'Cedar'])} St., "
            f"Apt {r(1, 20)}{rng.choice('ABCD')}"
        ),
        lambda: f"No. {r(1, 99)}",
        lambda: f"v{r(0, 9)}.{r(0, 20)}.{r(0, 9)}",
        lambda: f"{r(0, 9)}-{r(0, 9)}",
        lambda: f"Lot #{r(10000, 99999)}",
        lambda: f"{r(1, 99)}.{r(1000, 9999)}° N, {r(1, 179)}.{r(1000, 9999)}° W",
        lambda: f"Est. {r(1890, 2020)}",
        lambda: f"Batch {r(1, 9)}{rng.choice('ABCDEFGH')}/{r(10, 99)}",
        lambda: f"{r(2, 9)} for ${r(5, 20)}",
    ]


#: Hand-written strings heavy in punctuation or symbols (never a double quote).
SPECIAL_STRINGS = [
    "Wait... what?!",
    "***SALE***",
    "<<OPEN>>",
    "(c) all rights reserved",
    "A+B=C",
    "E = mc²",
    "50/50",
    "100% cotton",
    "@home",
    "24/7",
    "→ EXIT →",
    "¡Hola!",
    "!!! DANGER !!!",
    "~*~ welcome ~*~",
    "[ PUSH ]",
    "{ closed }",
    "No. 9 ½",
    "¿Qué pasa?",
    "#1 FAN",
    "café & co.",
    "&&& || !!!",
    "3 ≤ x ≤ 7",
    "√81 = 9",
    "π ≈ 3.14159",
    "x² + y² = r²",
    "Q&A",
    "R&D – Lab 4",
    "A/B test",
    "$$$",
    "§ 12 (b)",
    "© 2031",
    "™ pending",
    "½ price!",
    "1st • 2nd • 3rd",
    "—— or ——",
    "(not a drill)",
    "ETA: 5 min",
    "Ctrl + Alt + Del",
    "→ 42 ←",
    "C:\\Users\\Guest",
    "a_b-c.d",
    "user_name_01",
    "!important",
    "<3 <3 <3",
    ":-)",
    "O_o",
    "¯\\_(ツ)_/¯",
    "@@@",
    "%%% 99 %%%",
]


def numeric_strings(count: int, rng: random.Random) -> list[str]:
    """Hand-written special strings first, then pattern fills until ``count`` distinct strings."""
    out: list[str] = []
    for text in SPECIAL_STRINGS:
        if text not in out:
            out.append(text)
    patterns = _numeric_patterns(rng)
    i = 0
    while len(out) < count:
        text = patterns[i % len(patterns)]()
        i += 1
        if text not in out:
            out.append(text)
    return out[:count]


# ---------------------------------------------------------------- phrases and sentences


# ---------------------------------------------------------------- real-world prompts


class RealWorldSubgroup(TypedDict):
    name: str
    scenes: list[str]
    items: list[tuple[str, str]]  # (text, subject)


class RealWorldGroup(TypedDict):
    name: str
    styles: list[str]
    subgroups: list[RealWorldSubgroup]


def parse_real_world(path: Path) -> list[RealWorldGroup]:
    """Parse the real-world source.

    Format, one directive per line (``#`` starts a comment line)::

        @group Advertisements          starts a group
        @style Photorealistic, ...     a style sentence for every prompt of the group
        @subgroup Billboard            starts a subgroup of the current group
        @scene A billboard ... {subject} ... "{text}" ...   a scene of the subgroup
        Ride Quiet | an electric scooter                  an item: text | subject

    A scene holds ``{text}`` once, in double quotes, and may use ``{subject}``.
    """
    groups: list[RealWorldGroup] = []
    for number, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("@group "):
            groups.append({"name": line[7:].strip(), "styles": [], "subgroups": []})
        elif line.startswith("@style "):
            groups[-1]["styles"].append(line[7:].strip())
        elif line.startswith("@subgroup "):
            groups[-1]["subgroups"].append({"name": line[10:].strip(), "scenes": [], "items": []})
        elif line.startswith("@scene "):
            groups[-1]["subgroups"][-1]["scenes"].append(line[7:].strip())
        elif "|" in line:
            text, subject = (part.strip() for part in line.split("|", 1))
            groups[-1]["subgroups"][-1]["items"].append((text, subject))
        else:
            raise ValueError(f"{path}:{number}: cannot parse {line!r}")
    return groups


def real_world_rows(groups: list[RealWorldGroup]) -> list[tuple[str, str, str, str, str]]:
    """One (prompt_id, group, subgroup, prompt, text) per item; scenes and styles round-robin.

    The item's index picks its scene; the style index is offset by the
    subgroup's index so that neighbouring subgroups do not share a pattern.
    """
    rows = []
    for group in groups:
        styles = group["styles"]
        for s_index, subgroup in enumerate(group["subgroups"]):
            scenes = subgroup["scenes"]
            for i, (text, subject) in enumerate(subgroup["items"]):
                scene = scenes[i % len(scenes)]
                style = styles[(i + 2 * s_index + i // len(scenes)) % len(styles)]
                prompt = scene.replace("{subject}", subject).replace("{text}", text)
                prompt = prompt[0].upper() + prompt[1:] + " " + style
                rows.append((group["name"], subgroup["name"], prompt, text))
    return [(f"rw{i:04d}", *row) for i, row in enumerate(rows, start=1)]


# ---------------------------------------------------------------- checks and output

_INVISIBLE = re.compile(
    r"[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202f\u2060-\u2064\ufeff]"
)


def check_text(text: str) -> None:
    if not text or text != text.strip() or '"' in text or _INVISIBLE.search(text) or "  " in text:
        raise ValueError(f"bad text {text!r}")


def write_csv(path: Path, header: Iterable[str], rows: Iterable[Iterable[object]]) -> None:
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(list(header))
        writer.writerows(rows)
    tmp.replace(path)


def build_texts() -> list[tuple[str, str, str]]:
    """All (text_id, text, kind) rows, ids numbered per kind in a fixed order."""
    rng = random.Random(SEED)
    phrases = read_phrases(SOURCES / "phrases.txt")
    rare = rare_words(set())
    words = select_words(word_candidates(set(rare)), rng)
    gibberish = gibberish_strings(130, random.Random(SEED + 1))
    numeric = numeric_strings(140, random.Random(SEED + 2))

    rows: list[tuple[str, str, str]] = []
    rows += [(f"w{i:04d}", w, "word") for i, (_, _, w) in enumerate(words, start=1)]
    rows += [(f"r{i:03d}", w, "rare") for i, w in enumerate(rare, start=1)]
    sentences = [p for p in phrases if attr.is_sentence(p)]
    plain = [p for p in phrases if not attr.is_sentence(p)]
    rows += [(f"p{i:03d}", p, "phrase") for i, p in enumerate(plain, start=1)]
    rows += [(f"t{i:03d}", p, "sentence") for i, p in enumerate(sentences, start=1)]
    rows += [(f"g{i:03d}", g, "gibberish") for i, g in enumerate(gibberish, start=1)]
    rows += [(f"n{i:03d}", n, "numeric") for i, n in enumerate(numeric, start=1)]

    seen: dict[str, str] = {}
    for text_id, text, _ in rows:
        check_text(text)
        if text in seen:
            raise ValueError(f"duplicate text {text!r} ({seen[text]} and {text_id})")
        seen[text] = text_id
    return rows


def check_templates(path: Path) -> None:
    with path.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            template = row["template"]
            if (
                template.count("{text}") != 1
                or template.count('"') != 2
                or '"{text}"' not in template
            ):
                raise ValueError(
                    f"{row['template_id']}: {{text}} must appear once, in double quotes"
                )


# ---------------------------------------------------------------- the Chinese part

#: Common characters the Chinese gibberish is drawn from (each HSK 1-2, in no order).
ZH_GIBBERISH_POOL = (
    "天地人大小山水火木日月云风花草鸟鱼马牛羊门口手足心口白红黄蓝青"
    "开关上下左右前后里外东西南北多少高长新老好"
)
ZH_KINDS = {"word": "zw", "rare": "zr", "phrase": "zp", "sentence": "zt", "numeric": "zn"}


def read_zh_texts(path: Path) -> list[tuple[str, str]]:
    """(kind, text) of each ``kind|text`` line of the Chinese source, in order."""
    rows = []
    for number, line in enumerate(read_phrases(path), start=1):
        kind, sep, text = line.partition("|")
        if not sep or kind not in ZH_KINDS:
            raise ValueError(f"{path}:{number}: expected 'kind|text' with a known kind: {line!r}")
        rows.append((kind, text.strip()))
    return rows


def zh_gibberish(count: int, rng: random.Random, taken: set[str]) -> list[str]:
    """``count`` strings of 3-5 common characters in an order that makes no word.

    A string is kept when neither it nor any two neighbouring characters of it are
    in wordfreq's Chinese list (so no accidental word hides inside).
    """
    from wordfreq import get_frequency_dict

    known = get_frequency_dict("zh")
    out: list[str] = []
    while len(out) < count:
        text = "".join(rng.choice(ZH_GIBBERISH_POOL) for _ in range(rng.randint(3, 5)))
        pairs = [text[i : i + 2] for i in range(len(text) - 1)]
        if text in taken or text in known or any(pair in known for pair in pairs):
            continue
        if len(set(text)) < len(text):
            continue
        out.append(text)
        taken.add(text)
    return out


def build_zh_texts() -> list[tuple[str, str, str]]:
    """All Chinese (text_id, text, kind) rows: the hand-written source, then gibberish."""
    written = read_zh_texts(SOURCES / "zh_texts.txt")
    counters: dict[str, int] = {}
    rows: list[tuple[str, str, str]] = []
    for kind, text in written:
        counters[kind] = counters.get(kind, 0) + 1
        rows.append((f"{ZH_KINDS[kind]}{counters[kind]:03d}", text, kind))
    taken = {text for _, text, _ in rows}
    gibberish = zh_gibberish(15, random.Random(SEED + 3), taken)
    rows += [(f"zg{i:03d}", text, "gibberish") for i, text in enumerate(gibberish, start=1)]
    seen: dict[str, str] = {}
    for text_id, text, _ in rows:
        check_text(text)
        if text in seen:
            raise ValueError(f"duplicate Chinese text {text!r} ({seen[text]} and {text_id})")
        seen[text] = text_id
    return rows


def check_zh_templates(path: Path) -> None:
    """Each Chinese template holds “{text}” (Chinese quotation marks) exactly once."""
    with path.open(encoding="utf-8", newline="") as fh:
        for row in csv.DictReader(fh):
            template = row["template"]
            if template.count("{text}") != 1 or "\u201c{text}\u201d" not in template:
                raise ValueError(f"{row['template_id']}: {{text}} must appear once, in “”")


def main() -> None:
    check_templates(OUT_DIR / "templates.csv")
    check_zh_templates(OUT_DIR / "zh_templates.csv")
    zh_texts = build_zh_texts()
    write_csv(OUT_DIR / "zh_texts.csv", ["text_id", "text", "kind"], zh_texts)
    print(f"Chinese texts: {len(zh_texts)}")
    texts = build_texts()
    write_csv(OUT_DIR / "texts.csv", ["text_id", "text", "kind"], texts)
    rows = real_world_rows(parse_real_world(SOURCES / "real_world.txt"))
    for _, _, _, prompt, text in rows:
        check_text(text)
        if prompt.count(f'"{text}"') != 1 or prompt.count('"') != 2:
            raise ValueError(f"prompt must hold its text once in quotes: {prompt!r}")
    if len({r[3] for r in rows}) != len(rows):
        raise ValueError("duplicate real-world prompts")
    write_csv(
        OUT_DIR / "real_world.csv", ["prompt_id", "group", "subgroup", "prompt", "text"], rows
    )
    kinds: dict[str, int] = {}
    for _, _, kind in texts:
        kinds[kind] = kinds.get(kind, 0) + 1
    print(f"texts: {len(texts)} {kinds}; real-world prompts: {len(rows)}")

    print(f"lexicon attributes of every text: {write_lexicon(OUT_DIR)}")


if __name__ == "__main__":
    main()
