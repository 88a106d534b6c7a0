"""The ``default`` source: glyphbench's own prompt set, shipped as package data.

Three UTF-8 CSV files in ``prompts/data/default/`` (or any folder with the same
files, for tests):

* ``templates.csv`` — ``template_id,prompt_type,template``; prompt_type is
  ``simple`` or ``complex``; the template holds ``"{text}"`` exactly once.
* ``texts.csv`` — ``text_id,text,kind``; kind is one of :data:`TEXT_KINDS`.
* ``real_world.csv`` — ``prompt_id,group,subgroup,prompt,text``; the prompt holds
  ``"text"`` verbatim; group is one of :data:`REAL_WORLD_GROUPS`.

Every template is paired with every text (lazily, see :mod:`glyphbench.prompts.pool`);
real-world prompts are whole rows. All of these are English (``lang`` ``en``).

The Chinese part (``lang`` ``zh``; optional in a folder of this format):

* ``zh_templates.csv`` — ``template_id,prompt_type,template``, Chinese templates
  holding “{text}” (Chinese quotation marks) exactly once;
* ``zh_texts.csv`` — ``text_id,text,kind``, Chinese texts.

``lexicon.csv`` — ``text`` and the attributes that need word lists
(:data:`glyphbench.prompts.attributes.LEXICON_ATTRIBUTES`) of every text of the files above,
as derived with the ``prompts`` extra installed; written by
``prompts/data/build_default.py`` (:func:`write_lexicon`). A text found there is not
derived again, so ``run --prompts default`` needs neither wordfreq nor cefrpy; a
text missing from it (an edited file) is derived. Optional.

Every Chinese template is paired with every Chinese text (a few thousand rows,
built when the pool is loaded and kept after the real-world rows), never with an
English one. Select it with ``--where "lang == 'zh'"`` (and the English part with
``lang == 'en'``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd

from glyphbench.core.errors import InputError
from glyphbench.core.io import read_table, write_table
from glyphbench.prompts.attributes import (
    LEXICON_ATTRIBUTES,
    Stored,
    compute_attributes,
    stored_lexicon,
)
from glyphbench.prompts.pool import PromptPool, fill_placeholder, make_prompt_id, real_world_rows
from glyphbench.prompts.schema import REAL_WORLD_GROUPS

#: Bump when the shipped data changes meaningfully; the file digest is appended anyway.
DATA_VERSION = "1"

DEFAULT_DATA_DIR = Path(__file__).resolve().parent / "data" / "default"

TEMPLATE_TYPES = ("simple", "complex")
TEXT_KINDS = ("word", "rare", "phrase", "sentence", "gibberish", "numeric")

_FILES = {
    "templates.csv": ("template_id", "prompt_type", "template"),
    "texts.csv": ("text_id", "text", "kind"),
    "real_world.csv": ("prompt_id", "group", "subgroup", "prompt", "text"),
}
#: The Chinese part's files (both present, or neither).
_ZH_FILES = {
    "zh_templates.csv": ("template_id", "prompt_type", "template"),
    "zh_texts.csv": ("text_id", "text", "kind"),
}


def _read(folder: Path, name: str) -> pd.DataFrame:
    path = folder / name
    if not path.exists():
        raise InputError(path, f"default prompt data missing: expected {name} in {folder}")
    frame = read_table(path, text_columns=True)
    missing = [c for c in {**_FILES, **_ZH_FILES}[name] if c not in frame.columns]
    if missing:
        found = ", ".join(map(str, frame.columns)) or "none"
        raise InputError(path, f"missing column(s) {missing} (columns: {found})", line=1)
    return frame


def _check_values(path: Path, frame: pd.DataFrame, column: str, allowed: tuple[str, ...]) -> None:
    bad = ~frame[column].isin(allowed)
    if bad.any():
        row = int(bad.to_numpy().argmax())
        raise InputError(
            path,
            f"{column} {frame[column].iloc[row]!r} is not one of {', '.join(allowed)}",
            line=row + 2,
        )


def _check_unique(path: Path, frame: pd.DataFrame, column: str) -> None:
    dup = frame[column].duplicated()
    if dup.any():
        row = int(dup.to_numpy().argmax())
        raise InputError(path, f"duplicate {column} {frame[column].iloc[row]!r}", line=row + 2)


def _check_nonempty(path: Path, frame: pd.DataFrame, column: str) -> None:
    empty = frame[column].str.strip() == ""
    if empty.any():
        raise InputError(path, f"empty {column}", line=int(empty.to_numpy().argmax()) + 2)


def read_default_tables(
    folder: Path = DEFAULT_DATA_DIR,
) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Read and check the three files; errors name the file and line (header = line 1)."""
    folder = Path(folder)
    templates = _read(folder, "templates.csv")
    texts = _read(folder, "texts.csv")
    real = _read(folder, "real_world.csv")

    path = folder / "templates.csv"
    for column in ("template_id", "template"):
        _check_nonempty(path, templates, column)
    _check_unique(path, templates, "template_id")
    _check_values(path, templates, "prompt_type", TEMPLATE_TYPES)
    for row, template in enumerate(templates["template"]):
        if template.count("{text}") != 1 or template.count('"{text}"') != 1:
            raise InputError(
                path, 'template must hold "{text}" (in double quotes) exactly once', line=row + 2
            )

    path = folder / "texts.csv"
    for column in ("text_id", "text"):
        _check_nonempty(path, texts, column)
    _check_unique(path, texts, "text_id")
    _check_values(path, texts, "kind", TEXT_KINDS)

    path = folder / "real_world.csv"
    for column in ("prompt_id", "prompt", "text"):
        _check_nonempty(path, real, column)
    _check_unique(path, real, "prompt_id")
    _check_values(path, real, "group", REAL_WORLD_GROUPS)
    for row, (prompt, text) in enumerate(zip(real["prompt"], real["text"], strict=True)):
        if f'"{text}"' not in prompt:
            raise InputError(
                path, f"text {text!r} is not in double quotes in its prompt", line=row + 2
            )
    return templates, texts, real


def data_digest(folder: Path = DEFAULT_DATA_DIR) -> str:
    """First 8 hex digits of SHA-256 over the three files' bytes."""
    digest = hashlib.sha256()
    names = list(_FILES) + [name for name in _ZH_FILES if (Path(folder) / name).exists()]
    for name in names:
        path = Path(folder) / name
        digest.update(name.encode())
        if path.exists():
            digest.update(path.read_bytes())
    return digest.hexdigest()[:8]


def read_chinese_tables(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame] | None:
    """The Chinese templates and texts, checked; None when the folder has neither file."""
    present = [name for name in _ZH_FILES if (folder / name).exists()]
    if not present:
        return None
    templates = _read(folder, "zh_templates.csv")
    texts = _read(folder, "zh_texts.csv")
    path = folder / "zh_templates.csv"
    for column in ("template_id", "template"):
        _check_nonempty(path, templates, column)
    _check_unique(path, templates, "template_id")
    _check_values(path, templates, "prompt_type", TEMPLATE_TYPES)
    for row, template in enumerate(templates["template"]):
        if template.count("{text}") != 1 or "\u201c{text}\u201d" not in template:
            raise InputError(path, "template must hold “{text}” exactly once", line=row + 2)
    path = folder / "zh_texts.csv"
    for column in ("text_id", "text"):
        _check_nonempty(path, texts, column)
    _check_unique(path, texts, "text_id")
    _check_values(path, texts, "kind", TEXT_KINDS)
    return templates, texts


#: The stored lexicon attributes of the set's texts (see the module docstring).
LEXICON_FILE = "lexicon.csv"


def read_lexicon(folder: Path) -> Stored:
    """The usable stored lexicon attributes of ``folder``'s texts; none without the file."""
    path = Path(folder) / LEXICON_FILE
    if not path.is_file():
        return {}
    frame = read_table(path, text_columns=True)
    missing = [c for c in ("text", *LEXICON_ATTRIBUTES) if c not in frame.columns]
    if missing:
        raise InputError(path, f"missing column(s) {missing}", line=1)
    return stored_lexicon(frame)


def lexicon_table(folder: Path = DEFAULT_DATA_DIR) -> pd.DataFrame:
    """Every distinct text of the set's files with its lexicon attributes, derived now."""
    _, texts, real = read_default_tables(folder)
    parts = [texts["text"], real["text"]]
    chinese = read_chinese_tables(Path(folder))
    if chinese is not None:
        parts.append(chinese[1]["text"])
    unique = pd.Series(pd.concat(parts, ignore_index=True).unique(), dtype="string")
    derived = compute_attributes(pd.DataFrame({"text": unique}))
    return derived[["text", *LEXICON_ATTRIBUTES]]


def write_lexicon(folder: Path = DEFAULT_DATA_DIR) -> Path:
    """(Re)write ``folder/lexicon.csv`` from :func:`lexicon_table` (needs the prompts extra)."""

    path = Path(folder) / LEXICON_FILE
    write_table(lexicon_table(folder), path)
    return path


def chinese_rows(folder: Path, source: str, stored: Stored | None = None) -> pd.DataFrame | None:
    """Every Chinese template with every Chinese text, as finished rows (``lang`` ``zh``)."""
    tables = read_chinese_tables(folder)
    if tables is None:
        return None
    templates, texts = tables
    pairs = [
        (t, x) for t in templates.itertuples(index=False) for x in texts.itertuples(index=False)
    ]
    frame = pd.DataFrame(
        {
            "prompt_id": [make_prompt_id("default", t.template_id, x.text_id) for t, x in pairs],
            "prompt": [fill_placeholder(t.template, x.text) for t, x in pairs],
            "text": [x.text for _, x in pairs],
            "prompt_type": [t.prompt_type for t, _ in pairs],
            "template_id": [t.template_id for t, _ in pairs],
            "text_id": [x.text_id for _, x in pairs],
            "kind": [x.kind for _, x in pairs],
            "source": source,
            "lang": "zh",
        }
    )
    return compute_attributes(frame, stored)


def load_default_pool(
    folder: Path | None = None, source: str = "default", lang: str = "all"
) -> PromptPool:
    """The default set as a lazy :class:`PromptPool` (templates x texts + real-world rows).

    ``lang`` keeps one language part (``en``: the English templates x texts and
    real-world rows, exactly the set before the Chinese part existed; ``zh``: the
    Chinese rows) or both (``all``).
    """
    folder = DEFAULT_DATA_DIR if folder is None else Path(folder)
    templates, texts, real = read_default_tables(folder)
    version = f"default-v{DATA_VERSION}-{data_digest(folder)}"

    templates = templates[["template_id", "prompt_type", "template"]].copy()
    templates["group"] = pd.NA
    templates["subgroup"] = pd.NA

    texts = texts[["text_id", "text", "kind"]].copy()
    texts["lang"] = "en"
    stored = read_lexicon(folder)
    texts = compute_attributes(texts, stored)

    singles = real[["prompt_id", "group", "subgroup", "prompt", "text"]].copy()
    singles["subgroup"] = singles["subgroup"].replace("", pd.NA)
    singles["lang"] = "en"
    singles = real_world_rows(singles, "default", source, key_column="prompt_id", stored=stored)
    chinese = chinese_rows(folder, source, stored) if lang != "en" else None
    if lang == "zh":  # no English cross product: the Chinese rows alone
        templates, texts, singles = templates.iloc[:0], texts.iloc[:0], singles.iloc[:0]
    if chinese is not None:
        singles = pd.concat([singles, chinese], ignore_index=True)

    return PromptPool(
        kind="default",
        source=source,
        version=version,
        templates=templates,
        texts=texts,
        singles=singles,
        fill=fill_placeholder,
        meta={"data_dir": str(folder)},
    )
