"""Real captions of text-bearing scenes as prompts: TextCaps and VizWiz-Captions.

Both datasets caption real photos; a caption is a prompt a person might write. What
a caption does not say is *which of its words are the text to render*. Each source
has a documented rule (docs/prompts.md, "Real-world caption sets"):

**TextCaps** (``textcaps:PATH``): a caption word is text when it equals one of the
image's OCR tokens (both compared lower-cased, punctuation trimmed from their ends;
``TextCaps_0.1_*.json`` carries no tokens, so they come from the TextVQA Rosetta OCR
file given as ``?ocr=PATH``, or from the row itself in a hub export that has
``ocr_tokens``). Contiguous matched words stay together as one span, as written in
the caption (case and inner punctuation kept); function words (:data:`FUNCTION_WORDS`)
are trimmed from a span's ends, so an OCR token ``a`` or ``the`` alone is no text.
The text is the spans in caption order, joined by one space.

**VizWiz-Captions** (``vizwiz:PATH``): captions of photos taken by blind users;
only captions flagged ``text_detected`` (the caption's own flag, else its image's)
that are neither pre-canned nor rejected are candidates. VizWiz has no OCR tokens,
so a caption's text is (1) its quoted spans (``"..."``, ``“...”``, ``'...'``), or
else (2) its name-like runs (words capitalised inside the sentence, in capitals, or
with digits) that another caption of the same image also contains; two such runs one
``and``, ``&``, ``plus`` or ``'n'`` apart are one name ("Barnes and Noble"). The canned
caption of an unrecognisable photo (:data:`PRECANNED`) is skipped even where a release
has no ``is_precanned`` flag.

A caption whose text cannot be found is left out of the set; ``glyphbench prompts
validate`` lists each one (kind ``text_not_found``). Source ids are kept as
``source_image_id`` and ``source_caption_id``.

>>> textcaps_spans("A bottle of Coca-Cola sits next to a sign for the CITY MARKET.",
...                ["coca-cola", "city", "market", "a"])
['Coca-Cola', 'CITY MARKET']
>>> vizwiz_spans('A box of cereal labeled "Honey Nut Cheerios".', [])
['Honey Nut Cheerios']
>>> vizwiz_spans("A can of Diet Coke on a desk.", ["a red diet coke can"])
['Diet Coke']
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glyphbench.core.errors import InputError
from glyphbench.core.io import jsonl_records, read_json

if TYPE_CHECKING:
    import pandas as pd

#: English function words that are never text on their own at a span's ends.
FUNCTION_WORDS = frozenset(
    (  # noqa: SIM905 (a word list reads better as words)
        "a an the of on in at to for from by with and or but is are was were be it its this "
        "that these those there here as has have had which who what while into onto over under "
        "up down out off some any one"
    ).split()
)

#: Characters trimmed from a word's ends before comparing (ASCII punctuation and quotes).
_END_PUNCT = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~“”‘’«»"  # noqa: RUF001
_WORD = re.compile(r"\S+")
#: One word that joins two names into one (``Barnes and Noble``, ``Sides plus Veggies``).
_CONNECTOR = r"\s+(?:and|&|\+|plus|n|'n'|’n’)\s+"
#: The caption VizWiz-Captions gives an unrecognisable photo; early releases
#: (``VizWiz Captions 1.0`` of 2019-10-03) carry it without an ``is_precanned`` flag.
PRECANNED = "Quality issues are too severe to recognize visual content."
_QUOTED = re.compile(r"\"([^\"]+)\"|“([^”]+)”|(?<![\w])'([^']+?)'(?![\w])")


@dataclass
class Caption:
    """One caption and the text found in it (empty: not found)."""

    image_id: str
    caption_id: str
    caption: str
    spans: list[str]
    position: str  # where in the file: "data[12]" or "line 7"


@dataclass
class CaptionSet:
    """The captions of one file, found and not found."""

    found: list[Caption] = field(default_factory=list)
    not_found: list[Caption] = field(default_factory=list)


def _core(token: str) -> tuple[int, int]:
    """Start and end of a token without the punctuation at its ends."""
    start, end = 0, len(token)
    while start < end and token[start] in _END_PUNCT:
        start += 1
    while end > start and token[end - 1] in _END_PUNCT:
        end -= 1
    return start, end


def _key(token: str) -> str:
    start, end = _core(token)
    return token[start:end].lower()


def _trimmed_runs(caption: str, matched: Sequence[tuple[int, int, int]]) -> list[str]:
    """Runs of consecutive matched words as caption substrings, function words trimmed off the ends.

    ``matched`` holds (start, end, word number) of each matched word, in order.
    """
    runs: list[list[tuple[int, int, int]]] = []
    for word in matched:
        if runs and word[2] == runs[-1][-1][2] + 1:
            runs[-1].append(word)
        else:
            runs.append([word])
    spans: list[str] = []
    for run in runs:
        while run and caption[run[0][0] : run[0][1]].lower() in FUNCTION_WORDS:
            run.pop(0)
        while run and caption[run[-1][0] : run[-1][1]].lower() in FUNCTION_WORDS:
            run.pop()
        if run and caption[run[0][0] : run[-1][1]] not in spans:
            spans.append(caption[run[0][0] : run[-1][1]])
    return spans


def _words(caption: str) -> Iterator[tuple[int, int, int]]:
    """(core start, core end, word number) of each word with any non-punctuation character."""
    for number, match in enumerate(_WORD.finditer(caption)):
        start, end = _core(match.group())
        if end > start:
            yield match.start() + start, match.start() + end, number


def textcaps_spans(caption: str, ocr_tokens: Iterable[str]) -> list[str]:
    """The caption's words equal to an OCR token, contiguous ones kept together.

    >>> textcaps_spans("the sign says STOP here", ["stop", "the"])
    ['STOP']
    >>> textcaps_spans("a shirt reading i love ny", ["I", "LOVE", "NY"])
    ['i love ny']
    """
    vocabulary = {_key(token) for token in ocr_tokens} - {""}
    matched = [word for word in _words(caption) if caption[word[0] : word[1]].lower() in vocabulary]
    return _trimmed_runs(caption, matched)


def _name_like(word: str, first: bool) -> bool:
    letters = [c for c in word if c.isalpha()]
    if any(c.isdigit() for c in word):
        return True
    if len(letters) >= 2 and all(c.isupper() for c in letters):
        return True
    return bool(letters) and word[0].isupper() and not first


def vizwiz_spans(caption: str, other_captions: Iterable[str]) -> list[str]:
    """Quoted spans, else name-like runs that another caption of the image also contains.

    >>> vizwiz_spans("A shirt that says 'Go Team' on it", [])
    ['Go Team']
    >>> vizwiz_spans("A white box of Tylenol 500 mg.", ["tylenol 500 mg tablets"])
    ['Tylenol 500']
    """
    quoted = [next(g for g in match.groups() if g) for match in _QUOTED.finditer(caption)]
    quoted = [span.strip() for span in quoted if span.strip()]
    if quoted:
        return list(dict.fromkeys(quoted))
    others = [" " + " ".join(_key(w) for w in other.split()) + " " for other in other_captions]
    matched = [
        word for word in _words(caption) if _name_like(caption[word[0] : word[1]], word[2] == 0)
    ]
    shared = [
        span
        for span in _trimmed_runs(caption, matched)
        if any(f" {' '.join(_key(w) for w in span.split())} " in other for other in others)
    ]
    spans: list[str] = []
    for span in shared:  # "Barnes and Noble": shared runs one connector apart are one name
        joined = (
            re.search(re.escape(spans[-1]) + _CONNECTOR + re.escape(span), caption)
            if spans
            else None
        )
        if joined:
            spans[-1] = joined.group()
        else:
            spans.append(span)
    return spans


# ---------------------------------------------------------------- files


def _read_json(path: Path) -> Any:
    if not path.is_file():
        raise InputError(path, "file not found")
    return read_json(path)


def _records(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """(position, record) of a TextCaps file: ``{"data": [...]}`` JSON, or JSONL rows."""
    if path.suffix.lower() in (".jsonl", ".ndjson"):
        if not path.is_file():
            raise InputError(path, "file not found")
        with path.open(encoding="utf-8") as handle:
            return [(f"line {line}", record) for line, record in jsonl_records(handle, path)]
    content = _read_json(path)
    data = content.get("data")
    if not isinstance(data, list):
        raise InputError(path, 'not a TextCaps file: no "data" list (TextCaps_0.1_*.json)')
    return [(f"data[{i}]", record) for i, record in enumerate(data)]


def load_ocr_tokens(path: Path) -> dict[str, list[str]]:
    """image_id -> OCR tokens of a TextVQA OCR file (``{"data": [{image_id, ocr_tokens}]}``)."""
    content = _read_json(path)
    data = content.get("data")
    if not isinstance(data, list):
        raise InputError(path, 'not an OCR file: no "data" list (TextVQA_Rosetta_OCR_*.json)')
    tokens: dict[str, list[str]] = {}
    for i, record in enumerate(data):
        if not isinstance(record, dict) or "image_id" not in record:
            raise InputError(path, "a record without image_id", key=f"data[{i}]")
        words = record.get("ocr_tokens")
        if words is None:
            words = [item.get("word", "") for item in record.get("ocr_info", [])]
        tokens[str(record["image_id"])] = [str(word) for word in words]
    return tokens


def read_textcaps(path: Path, ocr: Path | None) -> CaptionSet:
    """Every caption of a TextCaps file with its text spans (see the module docstring)."""
    records = _records(path)
    tokens = load_ocr_tokens(ocr) if ocr is not None else {}
    result = CaptionSet()
    for position, record in records:
        if not isinstance(record, dict) or "image_id" not in record:
            raise InputError(path, "a record without image_id", key=position)
        image_id = str(record["image_id"])
        words = record.get("ocr_tokens", tokens.get(image_id))
        if words is None:
            raise InputError(
                path,
                f"no OCR tokens for image {image_id!r}: give the TextVQA OCR file as ?ocr=PATH",
                key=position,
            )
        if "caption_str" in record:
            captions = [(str(record.get("caption_id", position)), str(record["caption_str"]))]
        else:  # a hub export: one row per image, its captions in reference_strs
            references = record.get("reference_strs") or []
            captions = [(f"{image_id}-{k}", str(c)) for k, c in enumerate(references)]
        for caption_id, caption in captions:
            found = Caption(image_id, caption_id, caption, textcaps_spans(caption, words), position)
            (result.found if found.spans else result.not_found).append(found)
    return result


def read_vizwiz(path: Path) -> CaptionSet:
    """The usable text captions of a VizWiz-Captions annotation file with their spans."""
    content = _read_json(path)
    if not isinstance(content.get("annotations"), list):
        raise InputError(path, 'not a VizWiz-Captions file: no "annotations" list')
    images = {
        str(image.get("id")): image
        for image in content.get("images", [])
        if isinstance(image, dict)
    }
    usable: list[tuple[int, dict[str, Any]]] = []
    for i, note in enumerate(content["annotations"]):
        if not isinstance(note, dict) or "caption" not in note or "image_id" not in note:
            raise InputError(
                path, "an annotation without caption or image_id", key=f"annotations[{i}]"
            )
        if note.get("is_precanned") or note.get("is_rejected"):
            continue
        if str(note["caption"]).strip() == PRECANNED:  # a release without the flag
            continue
        flag = note.get("text_detected")
        if flag is None:
            flag = images.get(str(note["image_id"]), {}).get("text_detected")
        if flag:
            usable.append((i, note))
    by_image: dict[str, list[str]] = {}
    for _, note in usable:
        by_image.setdefault(str(note["image_id"]), []).append(str(note["caption"]))
    result = CaptionSet()
    for i, note in usable:
        image_id, caption = str(note["image_id"]), str(note["caption"])
        others = list(by_image[image_id])
        others.remove(caption)
        found = Caption(
            image_id,
            str(note.get("id", i)),
            caption,
            vizwiz_spans(caption, others),
            f"annotations[{i}]",
        )
        (result.found if found.spans else result.not_found).append(found)
    return result


def caption_frame(captions: CaptionSet, source: str) -> pd.DataFrame:
    """The found captions as a prompt table (prompt = caption, text = its spans)."""
    import pandas as pd

    from glyphbench.prompts.pool import make_prompt_id

    return pd.DataFrame(
        {
            "prompt_id": [make_prompt_id(source, c.caption_id, c.caption) for c in captions.found],
            "prompt": [c.caption for c in captions.found],
            "text": [" ".join(c.spans) for c in captions.found],
            "prompt_type": "real_world",
            "group": source,
            "source_image_id": [c.image_id for c in captions.found],
            "source_caption_id": [c.caption_id for c in captions.found],
        }
    )
