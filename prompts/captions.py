"""Real captions of text-bearing scenes as prompts: TextCaps and VizWiz-Captions.

Both datasets caption real photos; a caption is a prompt a person might write. What
a caption does not say is *which of its words are the text to render*: the rules
that decide are in :mod:`glyphbench.prompts.caption_text` (docs/prompts.md, "Real-world
caption sets"). A caption gets a text when its rule finds exactly one candidate; with
none it is *not found*, with several *ambiguous*; both are left out of the set and
``glyphbench prompts validate`` lists them (``text_not_found``, ``ambiguous_span``).

**TextCaps** (``textcaps:PATH``): ``TextCaps_0.1_*.json`` (one record per caption
under ``data``) carries no OCR tokens, so they come from the TextVQA Rosetta OCR file
given as ``?ocr=PATH``, or from the rows themselves in a hub export (JSON lines, one
row per image with ``reference_strs`` and ``ocr_tokens``).

**VizWiz-Captions** (``vizwiz:PATH``): captions of photos taken by blind users; only
captions flagged ``text_detected`` (the caption's own flag, else its image's) that are
neither pre-canned nor rejected are candidates. The canned caption of an
unrecognisable photo (:data:`PRECANNED`) is skipped even where a release has no
``is_precanned`` flag.

Files are someone else's: each is checked against its published layout before use
(:class:`TextCapsFile`, :class:`OcrFile`, :class:`VizWizFile`): a file larger than
``max_mb`` (:data:`MAX_CAPTION_FILE_MB`) is refused before it is read, nesting the JSON
reader cannot follow is refused, and a value of the wrong type (a caption that is an
object, a flag that is a string, captions given as one string) is one line naming the
file and key. Source ids are kept as ``source_image_id`` and ``source_caption_id``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, StrictBool, StrictInt, StrictStr, ValidationError

from glyphbench.core.errors import InputError
from glyphbench.core.io import json_kind, jsonl_records, read_text
from glyphbench.prompts.caption_text import textcaps_spans, vizwiz_spans

if TYPE_CHECKING:
    import pandas as pd

#: The caption VizWiz-Captions gives an unrecognisable photo; early releases
#: (``VizWiz Captions 1.0``) carry it without an ``is_precanned`` flag.
PRECANNED = "Quality issues are too severe to recognize visual content."
#: The largest caption or OCR file read, in MiB (``?max_mb=`` raises it). The VizWiz-Captions
#: 1.0 val file holds 21,355 captions in 3.5 MB; TextCaps' train split (about 110,000
#: captions, each record repeating its image's five references and their tokens) is some
#: hundreds of MB. JSON takes several times its size in memory once read, so a file must
#: be refused by its size before it is read.
MAX_CAPTION_FILE_MB = 512


# ---------------------------------------------------------------- schemas

#: An id as the datasets write them: a string (TextCaps) or an integer (VizWiz).
Id = StrictStr | StrictInt
#: A yes/no flag: JSON true/false, or 0/1 as VizWiz-Captions 1.0 writes them; a string
#: such as "false" is refused rather than read as true.
Flag = StrictBool | Literal[0, 1]


class _Record(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True)


class TextCapsRecord(_Record):
    """One caption (``caption_str``) or one image with its captions (``reference_strs``)."""

    image_id: Id
    caption_id: Id | None = None
    caption_str: StrictStr | None = None
    reference_strs: list[StrictStr] | None = None
    ocr_tokens: list[StrictStr] | None = None


class TextCapsFile(_Record):
    """``TextCaps_0.1_*.json``: the caption records under ``data``."""

    data: list[TextCapsRecord]


class OcrWord(_Record):
    word: StrictStr


class OcrRecord(_Record):
    """One image's OCR: ``ocr_tokens``, else the words of ``ocr_info``."""

    image_id: Id
    ocr_tokens: list[StrictStr] | None = None
    ocr_info: list[OcrWord] | None = None


class OcrFile(_Record):
    """``TextVQA_Rosetta_OCR_*.json``: the images' OCR records under ``data``."""

    data: list[OcrRecord]


class VizWizImage(_Record):
    id: Id
    text_detected: Flag | None = None


class VizWizAnnotation(_Record):
    image_id: Id
    caption: StrictStr
    id: Id | None = None
    text_detected: Flag | None = None
    is_precanned: Flag | None = None
    is_rejected: Flag | None = None


class VizWizFile(_Record):
    """VizWiz-Captions ``annotations/*.json``: ``annotations`` and, optionally, ``images``."""

    annotations: list[VizWizAnnotation]
    images: list[VizWizImage] = []


#: What each schema error means a value should have been.
_EXPECTED = {
    "bool_type": "true/false",
    "literal_error": "0/1",
    "string_type": "a string",
    "int_type": "an integer",
    "list_type": "an array",
    "model_type": "an object",
    "model_attributes_type": "an object",
    "dict_type": "an object",
}


def _schema_error(exc: ValidationError, path: Path, line: int | None = None) -> InputError:
    """The first schema problem as one line: ``file [data[3].caption_str]: expected ...``.

    The members of a type union fail together (``text_detected``: neither true/false
    nor 0/1): their key is the field's, and the line lists what each member expects.
    """
    errors = exc.errors()
    first = errors[0]
    loc = first["loc"]
    together = [e for e in errors if e["loc"][:-1] == loc[:-1] and len(e["loc"]) == len(loc)]
    if len(together) > 1 and isinstance(loc[-1], str) and first["type"] != "missing":
        loc = loc[:-1]  # the last part names the union member ("bool"), not a key
    key = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc)
    if first["type"] == "missing":
        return InputError(path, "missing", line=line, key=key.lstrip("."))
    wanted = dict.fromkeys(_EXPECTED.get(e["type"], e["msg"]) for e in together)
    given = first.get("input")
    shown = f" {_clip(repr(given))}" if isinstance(given, (str, int, float, bool)) else ""
    problem = f"expected {' or '.join(wanted)}, got {json_kind(type(given))}{shown}"
    return InputError(path, problem, line=line, key=key.lstrip(".") or None)


def _clip(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _check_size(path: Path, max_mb: int) -> None:
    if not path.is_file():
        problem = "is a folder, expected a file" if path.is_dir() else "file not found"
        raise InputError(path, problem)
    size = path.stat().st_size
    if size > max_mb << 20:
        raise InputError(
            path,
            f"file too large ({size:,} bytes; at most {max_mb} MiB): give ?max_mb=N to read it",
        )


def _parse(text: str, path: Path, line: int | None = None) -> Any:
    """JSON ``text``; malformed or too deeply nested JSON is one line naming ``path``."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        at = exc.lineno if line is None else line
        raise InputError(path, f"malformed JSON: {exc.msg}", line=at) from None
    except RecursionError:
        raise InputError(
            path,
            f"JSON nested too deeply (more than about {sys.getrecursionlimit()} levels)",
            line=line,
        ) from None


_Schema = TypeVar("_Schema", bound=_Record)


def load_caption_json(path: Path, schema: type[_Schema], max_mb: int) -> _Schema:
    """A caption or OCR JSON file checked against ``schema`` (size first, then types)."""
    _check_size(path, max_mb)
    # a byte-order mark is accepted, as the CSV and JSONL readers accept it (json refuses it)
    content = _parse(read_text(path).removeprefix("\ufeff"), path)
    if not isinstance(content, dict):
        raise InputError(path, f"expected a JSON object, got {json_kind(type(content))}")
    try:
        return schema.model_validate(content)
    except ValidationError as exc:
        raise _schema_error(exc, path) from None


# ---------------------------------------------------------------- captions


@dataclass
class Caption:
    """One caption and its candidate texts (one: its text; none: not found; more: ambiguous)."""

    image_id: str
    caption_id: str
    caption: str
    candidates: list[str]
    position: str  # where in the file: "data[12]" or "line 7"

    @property
    def text(self) -> str | None:
        return self.candidates[0] if len(self.candidates) == 1 else None


@dataclass
class CaptionSet:
    """The captions of one file: with a text, without one, and with several candidates."""

    found: list[Caption] = field(default_factory=list)
    not_found: list[Caption] = field(default_factory=list)
    ambiguous: list[Caption] = field(default_factory=list)

    #: caption id -> the position it was first seen at (a repeated id is refused).
    seen: dict[str, str] = field(default_factory=dict)

    def add(self, caption: Caption, path: Path) -> None:
        """Add ``caption``; a caption id seen before is refused naming both positions (the
        two rows would get one prompt id, which ``run`` refuses with no position)."""
        first = self.seen.setdefault(caption.caption_id, caption.position)
        if first != caption.position:
            raise InputError(
                path,
                f"caption id {caption.caption_id!r} repeats the one at {first}; "
                "remove the repeated record or give it its own id",
                key=caption.position,
            )
        if caption.text is not None:
            self.found.append(caption)
        elif caption.candidates:
            self.ambiguous.append(caption)
        else:
            self.not_found.append(caption)


def _textcaps_records(path: Path, max_mb: int) -> list[tuple[str, TextCapsRecord]]:
    """(position, record) of a TextCaps file: ``{"data": [...]}`` JSON, or JSONL rows."""
    if path.suffix.lower() not in (".jsonl", ".ndjson"):
        data = load_caption_json(path, TextCapsFile, max_mb).data
        return [(f"data[{i}]", record) for i, record in enumerate(data)]
    _check_size(path, max_mb)
    records: list[tuple[str, TextCapsRecord]] = []
    with path.open(encoding="utf-8-sig") as handle:  # a byte-order mark, as for JSON
        for line, row in jsonl_records(handle, path):
            try:
                records.append((f"line {line}", TextCapsRecord.model_validate(row)))
            except ValidationError as exc:
                raise _schema_error(exc, path, line) from None
    return records


def load_ocr_tokens(path: Path, max_mb: int = MAX_CAPTION_FILE_MB) -> dict[str, list[str]]:
    """image_id -> OCR tokens of a TextVQA OCR file (``{"data": [{image_id, ocr_tokens}]}``)."""
    tokens: dict[str, list[str]] = {}
    first: dict[str, tuple[int, Any]] = {}
    for i, record in enumerate(load_caption_json(path, OcrFile, max_mb).data):
        image_id = str(record.image_id)
        if image_id in first:
            # the later record silently replaced the earlier: which is right is not ours to say
            at, earlier = first[image_id]
            if earlier == record:
                continue
            raise InputError(
                path,
                f"image_id {image_id!r} repeats the one at data[{at}] with other OCR; "
                "keep one of the two records",
                key=f"data[{i}]",
            )
        first[image_id] = (i, record)
        words = record.ocr_tokens
        if words is None:
            words = [item.word for item in record.ocr_info or []]
        tokens[image_id] = words
    return tokens


def read_textcaps(path: Path, ocr: Path | None, max_mb: int = MAX_CAPTION_FILE_MB) -> CaptionSet:
    """Every caption of a TextCaps file with its candidate texts."""
    records = _textcaps_records(path, max_mb)
    tokens = load_ocr_tokens(ocr, max_mb) if ocr is not None else {}
    result = CaptionSet()
    for position, record in records:
        image_id = str(record.image_id)
        words = record.ocr_tokens if record.ocr_tokens is not None else tokens.get(image_id)
        if words is None:
            problem = (
                f"image {image_id!r} has no record in the OCR file {ocr}: give the OCR file of "
                "the same split"
                if ocr is not None
                else f"no OCR tokens for image {image_id!r}: give the TextVQA OCR file as ?ocr=PATH"
            )
            raise InputError(path, problem, key=position)
        if record.caption_str is not None:
            caption_id = position if record.caption_id is None else str(record.caption_id)
            captions = [(caption_id, record.caption_str)]
        elif record.reference_strs is not None:  # a hub export: one row per image
            captions = [(f"{image_id}-{k}", c) for k, c in enumerate(record.reference_strs)]
        else:
            raise InputError(path, "neither caption_str nor reference_strs", key=position)
        for caption_id, caption in captions:
            spans = textcaps_spans(caption, words)
            result.add(Caption(image_id, caption_id, caption, spans, position), path)
    return result


def _usable(note: VizWizAnnotation, images: dict[str, VizWizImage]) -> bool:
    """A caption of text: flagged text_detected (its own flag, else its image's), not canned."""
    if note.is_precanned or note.is_rejected or note.caption.strip() == PRECANNED:
        return False  # the canned caption: also recognised by its text (1.0 has no flag)
    flag = note.text_detected
    if flag is None:
        image = images.get(str(note.image_id))
        flag = image.text_detected if image is not None else None
    return bool(flag)


def read_vizwiz(path: Path, max_mb: int = MAX_CAPTION_FILE_MB) -> CaptionSet:
    """The usable text captions of a VizWiz-Captions annotation file with their candidates."""
    content = load_caption_json(path, VizWizFile, max_mb)
    images = {str(image.id): image for image in content.images}
    usable = [(i, n) for i, n in enumerate(content.annotations) if _usable(n, images)]
    by_image: dict[str, list[str]] = {}
    for _, note in usable:
        by_image.setdefault(str(note.image_id), []).append(note.caption)
    result = CaptionSet()
    for i, note in usable:
        image_id = str(note.image_id)
        others = list(by_image[image_id])
        others.remove(note.caption)
        caption_id = str(i if note.id is None else note.id)
        spans = vizwiz_spans(note.caption, others)
        result.add(Caption(image_id, caption_id, note.caption, spans, f"annotations[{i}]"), path)
    return result


def caption_frame(captions: Sequence[Caption], source: str) -> pd.DataFrame:
    """Captions with a text as a prompt table (prompt = the caption, text = its one span)."""
    import pandas as pd

    # --help loads this module; the pool (pandas) loads with a table
    from glyphbench.prompts.pool import make_prompt_id

    return pd.DataFrame(
        {
            "prompt_id": [make_prompt_id(source, c.caption_id, c.caption) for c in captions],
            "prompt": [c.caption for c in captions],
            "text": [c.text for c in captions],
            "prompt_type": "real_world",
            "group": source,
            "source_image_id": [c.image_id for c in captions],
            "source_caption_id": [c.caption_id for c in captions],
        }
    )


def left_out(captions: CaptionSet) -> list[dict[str, object]]:
    """The captions without one text, JSON-safe (a prompt set's ``meta`` may be written)."""
    return [
        {
            "position": c.position,
            "caption_id": c.caption_id,
            "caption": c.caption,
            "candidates": list(c.candidates),
        }
        for c in captions.not_found + captions.ambiguous
    ]
