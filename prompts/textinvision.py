"""The ``textinvision:DIR`` source: the public TextInVision files, read as they are.

* ``all_prompts.csv`` (prompts, type): templates; the first double-quoted span
  is the slot (:func:`glyphbench.prompts.pool.fill_first_quoted`).
* ``all_texts.csv`` (words, oxford_category, char_length, ...): texts and their
  stated attributes.
* ``real_world_prompts.json`` (prompt -> {group, text, char_length, word_count, id}).

The files' own attributes are kept as ``stated_*`` columns beside glyphbench's
computed ones (``stated_cefr`` is the raw ``oxford_category`` string, so
"none" and "None" stay apart for the audit). Their LAION/COCO counts become
``stated_laion_freq``/``stated_coco_freq``; ``laion_freq``/``coco_freq`` stay
unknown until ``glyphbench prompts freq`` counts them.

Texts are read with every cell as a string (a text "None" stays "None"); the
reference selector read them with pandas defaults, which would turn such
texts into NaN. No TextInVision text is affected.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pandas as pd

from glyphbench.core.errors import InputError
from glyphbench.core.io import json_kind, read_table
from glyphbench.prompts.attributes import char_length, compute_attributes, word_count
from glyphbench.prompts.pool import FIRST_QUOTED, PromptPool, fill_first_quoted, real_world_rows
from glyphbench.prompts.schema import REAL_WORLD_GROUPS

TEXTS_FILE = "all_texts.csv"
PROMPTS_FILE = "all_prompts.csv"
REAL_WORLD_FILE = "real_world_prompts.json"
#: The types a template of all_prompts.csv may have (real-world prompts are their own file).
TEMPLATE_TYPES = ("simple", "complex")

#: TextInVision column -> glyphbench stated_* column.
STATED_TEXT_COLUMNS = {
    "oxford_category": "stated_cefr",
    "char_length": "stated_char_length",
    "word_length": "stated_word_count",
    "rare": "stated_rare",
    "gibberish": "stated_gibberish",
    "spec_char": "stated_has_special_chars",
    "number": "stated_has_numbers",
    "sentence": "stated_is_sentence",
    "LAION_freq": "stated_laion_freq",
    "CoCo_freq": "stated_coco_freq",
    "source": "stated_source",
}
_BOOL_COLUMNS = ("rare", "gibberish", "spec_char", "number", "sentence")
_INT_COLUMNS = ("char_length", "word_length", "LAION_freq", "CoCo_freq")


def _group_key(name: str) -> str:
    """Spelling-insensitive key: case-folded, each word's trailing "s" dropped."""
    return " ".join(w.rstrip("s") for w in name.casefold().split())


_GROUP_BY_KEY = {_group_key(g): g for g in REAL_WORLD_GROUPS}


def canonical_group(name: str) -> str:
    """Map a group spelling to its canonical name; unknown names are kept as they are.

    >>> canonical_group("Map and Flowchart")
    'Maps and flowcharts'
    >>> canonical_group("Objects and Scenes")
    'Objects and scenes'
    """
    return _GROUP_BY_KEY.get(_group_key(name), name)


def _parse_bool(path: Path, column: str, values: pd.Series) -> pd.Series:
    mapped = values.str.strip().str.upper().map({"TRUE": True, "FALSE": False, "": pd.NA})
    bad = mapped.isna() & (values.str.strip() != "")
    if bad.any():
        row = int(bad.to_numpy().argmax())
        raise InputError(path, f"{column}: {values.iloc[row]!r} is not TRUE/FALSE", line=row + 2)
    return mapped.astype("boolean")


def _parse_int(path: Path, column: str, values: pd.Series) -> pd.Series:
    numbers = pd.to_numeric(values.replace("", None), errors="coerce")
    bad = numbers.isna() & (values.str.strip() != "")
    if bad.any():
        row = int(bad.to_numpy().argmax())
        raise InputError(path, f"{column}: {values.iloc[row]!r} is not a number", line=row + 2)
    return numbers.astype("Int64")


def _require(path: Path, frame: pd.DataFrame, columns: tuple[str, ...]) -> None:
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        found = ", ".join(map(str, frame.columns)) or "none"
        raise InputError(path, f"missing column(s) {missing} (columns: {found})", line=1)


def read_texts(folder: Path) -> pd.DataFrame:
    """all_texts.csv as text_id, text, line, stated_* (typed); raw strings kept."""
    path = folder / TEXTS_FILE
    raw = read_table(path, text_columns=True)
    _require(path, raw, ("words", *STATED_TEXT_COLUMNS))
    texts = pd.DataFrame(
        {"text_id": [f"t{i + 1:05d}" for i in range(len(raw))], "text": raw["words"]}
    )
    texts["line"] = pd.array(range(2, len(raw) + 2), dtype="Int64")
    for column, stated in STATED_TEXT_COLUMNS.items():
        if column in _BOOL_COLUMNS:
            texts[stated] = _parse_bool(path, column, raw[column])
        elif column in _INT_COLUMNS:
            texts[stated] = _parse_int(path, column, raw[column])
        else:
            texts[stated] = raw[column].astype("string")
    return texts


def read_templates(folder: Path) -> pd.DataFrame:
    """all_prompts.csv as template_id, prompt_type, template, line."""
    path = folder / PROMPTS_FILE
    raw = read_table(path, text_columns=True)
    _require(path, raw, ("prompts", "type"))
    types = raw["type"].str.strip()
    for row, (template, kind) in enumerate(zip(raw["prompts"], types, strict=True)):
        # a template is crossed with every text: one with no slot made thousands of prompts
        # that never ask for their text, and an unknown type slipped past every type filter
        if kind not in TEMPLATE_TYPES:
            raise InputError(
                path,
                f"type {kind!r} is not one of {', '.join(TEMPLATE_TYPES)}",
                line=row + 2,
            )
        if not FIRST_QUOTED.search(template):
            raise InputError(
                path,
                'template has no slot for the text: put a placeholder in double quotes, '
                'e.g. A sign that says "text"',
                line=row + 2,
            )
    return pd.DataFrame(
        {
            "template_id": [f"p{i + 1:03d}" for i in range(len(raw))],
            "prompt_type": types,
            "template": raw["prompts"],
            "line": pd.array(range(2, len(raw) + 2), dtype="Int64"),
        }
    )


def read_real_world(folder: Path) -> pd.DataFrame:
    """real_world_prompts.json as one row per prompt, stated fields kept."""
    path = folder / REAL_WORLD_FILE
    if not path.exists():
        raise InputError(path, "file not found")
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except json.JSONDecodeError as exc:
        raise InputError(path, f"malformed JSON: {exc.msg}", line=exc.lineno) from None
    if not isinstance(data, dict):
        raise InputError(path, "expected a JSON object: prompt -> {group, text, ...}")
    rows = []
    for prompt, fields in data.items():
        if not isinstance(fields, dict) or "text" not in fields or "group" not in fields:
            raise InputError(path, "entry needs 'text' and 'group'", key=prompt[:60])
        for name in ("text", "group"):
            # str() made a null text the text "None", asked of the model
            value = fields[name]
            if not isinstance(value, str) or not value.strip():
                kind = "empty" if isinstance(value, str) else json_kind(type(value))
                shown = kind if kind in ("empty", "null") else f"a JSON {kind}"
                raise InputError(
                    path,
                    f"'{name}' is {shown}; give the entry its {name} as a non-empty string "
                    "(in quotes), or remove it",
                    key=prompt[:60],
                )
        rows.append(
            {
                "prompt": prompt,
                "text": fields["text"],
                "stated_group": fields["group"],
                "stated_char_length": fields.get("char_length"),
                "stated_word_count": fields.get("word_count"),
                "stated_id": str(fields.get("id", "")),
            }
        )
    frame = pd.DataFrame(
        rows,
        columns=[
            "prompt",
            "text",
            "stated_group",
            "stated_char_length",
            "stated_word_count",
            "stated_id",
        ],
    )
    frame["group"] = frame["stated_group"].map(canonical_group)
    for column in ("stated_char_length", "stated_word_count"):
        frame[column] = pd.to_numeric(frame[column], errors="coerce").astype("Int64")
    return frame


def files_digest(folder: Path) -> str:
    """First 12 hex digits of SHA-256 over the three files' bytes: the set's version."""
    digest = hashlib.sha256()
    for name in (PROMPTS_FILE, TEXTS_FILE, REAL_WORLD_FILE):
        digest.update(name.encode())
        digest.update((folder / name).read_bytes())
    return digest.hexdigest()[:12]


def load_textinvision_pool(folder: str | Path, source: str | None = None) -> PromptPool:
    """TextInVision files as a lazy pool: 205 templates x 6,805 texts + 1,981 real-world prompts."""
    folder = Path(folder)
    if not folder.is_dir():
        raise InputError(folder, "TextInVision folder not found")
    source = source or f"textinvision:{folder}"
    templates = read_templates(folder)
    templates["group"] = pd.NA
    templates["subgroup"] = pd.NA
    # The reference's prompt_word/char_length filters name columns the file lacks;
    # glyphbench computes them from the template as written.
    templates["template_char_length"] = templates["template"].map(char_length).astype("Int64")
    templates["template_word_count"] = templates["template"].map(word_count).astype("Int64")

    texts = read_texts(folder)
    texts = compute_attributes(texts)

    real = real_world_rows(read_real_world(folder), "textinvision", source, key_column="stated_id")

    return PromptPool(
        kind="textinvision",
        source=source,
        version=f"textinvision-{files_digest(folder)}",
        templates=templates,
        texts=texts,
        singles=real,
        fill=fill_first_quoted,
        meta={"folder": str(folder)},
    )
