"""Prompt sources: the ``sources`` plug-ins of :data:`glyphbench.core.registry.PLUGINS`.

``default``                     glyphbench's own set (package data, lazy pool)
``default:DIR``                 a folder in the default set's three-file format
``textinvision:DIR``            the public TextInVision files (lazy pool)
``csv:PATH``, ``jsonl:PATH``,   a user's table; ``?schema_column=their_column&...`` maps
``parquet:PATH``                columns, e.g. ``csv:mine.csv?text=caption_text&prompt=instruction``
``hf:REPO_ID[:SPLIT]``          a Hugging Face dataset (split ``train`` by default), same mapping
``textcaps:PATH[?ocr=OCR]``     TextCaps captions, the text found by the image's OCR tokens
``vizwiz:PATH``                 VizWiz-Captions captions flagged as showing text
                                (both: ``?max_mb=`` the largest file read, 512 by default)
``PATH.csv`` etc.               a bare path with a table suffix is read as that format

User tables need a text column; the prompt comes from a mapped column, or from
``?template=...`` holding ``{text}`` (e.g. ``template=A sign that says "{text}"``).
``prompt_type`` may map to a column or be a constant (``?prompt_type=simple``).
The mapping is typed by :class:`TableOptions` (one field per schema column, plus
``template``), so a misspelt schema column fails when the config loads.
A column that already has a schema name is used as it is. Attribute columns
the table brings (e.g. its own ``char_length``) are kept as ``stated_*``;
glyphbench computes its own (a table glyphbench wrote keeps its word-list attributes,
see :func:`map_columns`). A table without ``prompt_id`` gets
ids hashed from (source kind, prompt, text).

Importing this module is cheap (pandas and the loaders load inside the factories),
so listing and validating sources costs nothing.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from glyphbench.core.errors import InputError
from glyphbench.core.io import LINE_NUMBERS, read_table
from glyphbench.core.registry import PLUGINS, NoOptions, Options, Spec, missing_modules, register
from glyphbench.prompts.captions import (
    MAX_CAPTION_FILE_MB,
    caption_frame,
    left_out,
    read_textcaps,
    read_vizwiz,
)
from glyphbench.prompts.schema import PROMPT_COLUMNS, PROMPT_TYPES, PromptSet

if TYPE_CHECKING:
    import pandas as pd

    from glyphbench.prompts.captions import CaptionSet
    from glyphbench.prompts.pool import PromptPool
    from glyphbench.prompts.schema import PromptSet

#: Table plug-in -> the file suffixes it reads (a bare path with one names that plug-in).
TABLE_SUFFIXES = {
    "csv": (".csv", ".tsv"),
    "jsonl": (".jsonl", ".ndjson"),
    "parquet": (".parquet",),
}
#: The line of a table's first data row (None: the format has no lines).
_FIRST_LINE = {"csv": 2, "jsonl": 1, "parquet": None}


def _column(meaning: str) -> Any:
    return Field(default=None, description=f"your column holding {meaning}")


class TableOptions(Options):
    """Column mapping of a user table (``csv``, ``jsonl``, ``parquet``, ``hf``).

    Each field is a schema column (:data:`glyphbench.prompts.schema.PROMPT_COLUMNS`) and its
    value the table's column to read it from; ``template`` builds the prompt from
    the text instead, and ``prompt_type`` may also be a constant type.
    """

    prompt_id: str | None = _column("a stable prompt id (default: hashed)")
    prompt: str | None = _column("the instruction sent to the model")
    text: str | None = _column("the text that must appear in the image")
    prompt_type: str | None = Field(
        default=None,
        description="your column of types, or one of simple, complex, real_world for all",
    )
    group: str | None = _column("the real-world category")
    subgroup: str | None = _column("the real-world subcategory")
    template_id: str | None = _column("the template id")
    text_id: str | None = _column("the text id")
    source: str | None = _column("the source (replaced by the spec)")
    char_length: str | None = _column("a stated character length (kept as stated_*)")
    word_count: str | None = _column("a stated word count")
    cefr: str | None = _column("a stated CEFR level")
    rare: str | None = _column("a stated rare flag")
    gibberish: str | None = _column("a stated gibberish flag")
    has_special_chars: str | None = _column("a stated special-characters flag")
    has_numbers: str | None = _column("a stated has-numbers flag")
    is_sentence: str | None = _column("a stated is-sentence flag")
    script: str | None = _column("a stated script (latin, han, ...)")
    lang: str | None = _column("the language (en, zh, ...; default: guessed from the script)")
    char_band: str | None = _column("a stated Chinese character frequency band")
    hsk_level: str | None = _column("a stated HSK level")
    laion_freq: str | None = _column("a LAION frequency")
    coco_freq: str | None = _column("a COCO frequency")
    prompt_char_length: str | None = _column("a stated prompt length")
    prompt_word_count: str | None = _column("a stated prompt word count")
    template: str | None = Field(
        default=None, description='build the prompt from the text, e.g. A sign that says "{text}"'
    )

    @field_validator("template")
    @classmethod
    def _template_has_slot(cls, value: str | None) -> str | None:
        if value is not None and "{text}" not in value:
            raise ValueError("template= must contain {text}")
        return value

    def mapping(self) -> dict[str, str]:
        """Schema column -> the table's column, for every mapped column."""
        return {
            key: value
            for key, value in self.model_dump(exclude_none=True).items()
            if key != "template"
        }


# ---------------------------------------------------------------- plug-ins


class DefaultOptions(Options):
    """Options of the ``default`` source."""

    lang: Literal["all", "en", "zh"] = Field(
        default="all",
        description="which language part to load (a run picks what its reader reads, see "
        "docs/prompts_default.md)",
    )


@register(
    "sources",
    "default",
    options=DefaultOptions,
    target="optional",
    usage="default[:DIR][?lang=all|en|zh]",
    summary="glyphbench's own prompt set (package data), or a folder in its format.",
)
def _default(spec: Spec, options: DefaultOptions) -> PromptPool:
    # --help loads this module; the set loads when used
    from glyphbench.prompts.default import load_default_pool

    folder = spec.target or None  # "default:FOLDER" reads a folder in the default format
    return load_default_pool(Path(folder) if folder else None, source=spec.text, lang=options.lang)


@register(
    "sources",
    "textinvision",
    target="required",
    usage="textinvision:DIR",
    summary="The public TextInVision files, read as they are (lazy pool).",
)
def _textinvision(spec: Spec, options: NoOptions) -> PromptPool:
    # --help loads this module; the set loads when used
    from glyphbench.prompts.textinvision import load_textinvision_pool

    return load_textinvision_pool(spec.target, source=spec.text)


def _register_table(name: str) -> None:
    suffixes = TABLE_SUFFIXES[name]

    @register(
        "sources",
        name,
        options=TableOptions,
        target="required",
        usage=f"{name}:PATH[?schema_column=your_column&template=...]",
        suffixes=suffixes,
        summary=f"A user's {name} table ({', '.join(suffixes)}), columns mapped to the schema.",
    )
    def _table(spec: Spec, options: TableOptions) -> PromptSet:
        return _load_table(spec, options)


for _name in TABLE_SUFFIXES:
    _register_table(_name)


@register(
    "sources",
    "hf",
    options=TableOptions,
    target="required",
    usage="hf:REPO_ID[:SPLIT][?schema_column=your_column&template=...]",
    summary="A Hugging Face dataset split (train by default), columns mapped as for tables.",
    missing=lambda: missing_modules("datasets"),
)
def _hf(spec: Spec, options: TableOptions) -> PromptSet:
    return _load_hf(spec, options)


def _max_mb() -> Any:

    return Field(
        default=MAX_CAPTION_FILE_MB,
        ge=1,
        description="the largest caption or OCR file read, in MiB (a larger one is refused "
        "before it is read)",
    )


class VizWizOptions(Options):
    """Options of the ``vizwiz`` source."""

    max_mb: int = _max_mb()


class TextCapsOptions(VizWizOptions):
    """Options of the ``textcaps`` source."""

    ocr: str | None = Field(
        default=None,
        description="the TextVQA Rosetta OCR file of the same split (TextVQA_Rosetta_OCR_*.json); "
        "not needed when the rows carry ocr_tokens",
    )


@register(
    "sources",
    "textcaps",
    options=TextCapsOptions,
    target="required",
    usage="textcaps:PATH[?ocr=OCR_JSON&max_mb=512]",
    summary="TextCaps captions as prompts; the text is the one caption span the image's OCR "
    "tokens find (docs/prompts.md).",
)
def _textcaps(spec: Spec, options: TextCapsOptions) -> PromptSet:

    path = Path(spec.target)
    ocr = Path(options.ocr) if options.ocr else None
    return _caption_set(spec, path, read_textcaps(path, ocr, options.max_mb))


@register(
    "sources",
    "vizwiz",
    options=VizWizOptions,
    target="required",
    usage="vizwiz:PATH[?max_mb=512]",
    summary="VizWiz-Captions captions flagged as showing text; the text is the one quoted, "
    "cued or named span the caption gives (docs/prompts.md).",
)
def _vizwiz(spec: Spec, options: VizWizOptions) -> PromptSet:

    path = Path(spec.target)
    return _caption_set(spec, path, read_vizwiz(path, options.max_mb))


def _caption_set(spec: Spec, path: Path, captions: CaptionSet) -> PromptSet:
    """A caption source's prompt set; the captions without one text ride along in ``meta``."""

    if not captions.found:
        raise InputError(
            path,
            f"no caption with one text to render among {len(captions.not_found)} without one "
            f"and {len(captions.ambiguous)} with several (see glyphbench prompts validate)",
        )
    # each row's place in the file (data[5], annotations[7], line 3), for errors and validate
    positions = [c.position for c in captions.found]
    frame = map_columns(
        caption_frame(captions.found, spec.kind),
        TableOptions(),
        where=str(path),
        first_line=None,
        kind=spec.kind,
        positions=positions,
    )
    frame["source"] = spec.text
    return PromptSet(
        frame,
        source=spec.text,
        version=f"{spec.kind}-{_file_digest(path)}",
        meta={
            "path": str(path),
            "captions_left_out": left_out(captions),
            "caption_positions": positions,
        },
    )


# ---------------------------------------------------------------- loading


def parse_source(spec: str) -> Spec:
    """Check a source spec; a bare table path becomes ``<format>:PATH``.

    >>> parse_source("textinvision:/data/tiv").target
    '/data/tiv'
    >>> parse_source("prompts.parquet").text
    'parquet:prompts.parquet'
    """
    return PLUGINS.resolve("sources", spec).spec


def load_source(spec: str) -> PromptPool | PromptSet:
    """A pool (default, textinvision) or a materialised set (tables, hf)."""
    loaded: PromptPool | PromptSet = PLUGINS.create("sources", spec)
    return loaded


def load_prompt_set(spec: str) -> PromptSet:
    """Load any source as a PromptSet with every row materialised.

    ``default`` is a few hundred thousand rows and ``textinvision:DIR`` about 1.4
    million (seconds to tens of seconds, see docs/prompts.md); use
    :func:`glyphbench.prompts.select` to sample them without building every row.
    """
    # --help loads this module; the pool (pandas) loads with a set
    from glyphbench.prompts.pool import PromptPool

    source = load_source(spec)
    return source.to_prompt_set() if isinstance(source, PromptPool) else source


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:12]


def _load_table(parsed: Spec, options: TableOptions) -> PromptSet:

    path = Path(parsed.target)
    if not path.exists():
        raise InputError(path, "file not found")
    expected = TABLE_SUFFIXES[parsed.kind]
    if path.suffix.lower() not in expected:
        raise InputError(path, f"a {parsed.kind} source needs a {'/'.join(expected)} file")
    frame = read_table(path, text_columns=True)
    lines = frame.attrs.get(LINE_NUMBERS)  # a JSONL row's line, blank lines counted
    frame = map_columns(
        frame, options, where=str(path), first_line=_FIRST_LINE[parsed.kind], kind=parsed.kind
    )
    frame["source"] = parsed.text
    meta: dict[str, Any] = {"path": str(path)}
    if lines is not None and len(lines) == len(frame):  # for `prompts validate`'s findings
        meta["line_numbers"] = list(lines)
    return PromptSet(
        frame,
        source=parsed.text,
        version=f"{parsed.kind}-{_file_digest(path)}",
        meta=meta,
    )


def _load_hf(parsed: Spec, options: TableOptions) -> PromptSet:
    import pandas as pd

    repo, split = parsed.target, "train"
    head, sep, tail = parsed.target.rpartition(":")
    if sep and head and "/" not in tail and "\\" not in tail:
        repo, split = head, tail
    try:
        from datasets import load_dataset
    except ImportError:  # pragma: no cover - datasets is in the prompts extra
        raise InputError(
            None, "hf: sources need the 'datasets' package (pip install glyphbench[prompts])"
        ) from None
    try:
        dataset = load_dataset(repo, split=split)
    except Exception as exc:  # datasets raises many types; all mean "cannot load this"
        raise InputError(
            repo, f"cannot load Hugging Face dataset split {split!r}: {exc}".splitlines()[0]
        ) from None
    frame = dataset.to_pandas()
    if not isinstance(frame, pd.DataFrame):  # to_pandas may yield batches when asked to
        frame = pd.concat(list(frame), ignore_index=True)
    frame = map_columns(frame, options, where=f"hf:{repo}:{split}", first_line=None, kind="hf")
    frame["source"] = parsed.text
    fingerprint = getattr(dataset, "_fingerprint", "") or ""
    return PromptSet(
        frame,
        source=parsed.text,
        version=f"hf-{repo}-{split}-{fingerprint[:12]}",
        meta={"repo": repo, "split": split},
    )


def map_columns(
    frame: pd.DataFrame,
    mapping: TableOptions,
    *,
    where: str,
    first_line: int | None,
    kind: str,
    positions: list[str] | None = None,
) -> pd.DataFrame:
    """Rename a user table's columns to the schema, build prompts, compute attributes.

    A table glyphbench wrote (every schema column present, nothing mapped onto them)
    keeps the word-list attributes it holds where
    :func:`glyphbench.prompts.attributes.stored_lexicon`
    accepts them, so reading it back needs no word list.
    """
    # --help loads this module; attributes (pandas) load with a set
    from glyphbench.prompts.attributes import compute_attributes, stored_lexicon

    places = _Places(frame, first_line, positions)
    options = mapping.mapping()
    export = all(c in frame.columns for c in PROMPT_COLUMNS) and not options
    stored = stored_lexicon(frame) if export else None
    header_line = 1 if kind == "csv" else None
    constant_type = _constant_type(frame, options, where)
    for target, column in options.items():
        if column not in frame.columns:
            raise InputError(
                where,
                f"missing column {column!r} (mapped to {target}; columns: {_columns(frame)})",
                line=header_line,
            )
    frame = _set_stated_apart(frame, options)
    frame = frame.rename(columns={column: target for target, column in options.items()})
    if "text" not in frame.columns:
        raise InputError(
            where,
            f"missing column 'text' (columns: {_columns(frame)}); map one with ?text=COLUMN",
            line=header_line,
        )
    _check_strings(frame, where, places)
    frame["text"] = frame["text"].astype("string")
    if mapping.template is not None:
        frame["prompt"] = [mapping.template.replace("{text}", str(t)) for t in frame["text"]]
    elif "prompt" not in frame.columns:
        raise InputError(
            where,
            f"missing column 'prompt' (columns: {_columns(frame)}); "
            "map one with ?prompt=COLUMN or give ?template=...{text}...",
            line=header_line,
        )
    if constant_type is not None:
        frame["prompt_type"] = constant_type
    _check_filled(frame, "text", where, places)
    _check_filled(frame, "prompt", where, places)
    _check_lengths(frame, where, places)
    _type_columns(frame, kind)
    return compute_attributes(frame, stored)


def _columns(frame: pd.DataFrame) -> str:
    return ", ".join(map(str, frame.columns)) or "none"


def _constant_type(frame: pd.DataFrame, options: dict[str, str], where: str) -> str | None:
    """``prompt_type=simple`` naming no column: one type for all rows (popped from ``options``)."""

    if "prompt_type" not in options or options["prompt_type"] in frame.columns:
        return None
    constant = options.pop("prompt_type")
    if constant not in PROMPT_TYPES:
        raise InputError(
            where, f"prompt_type={constant!r} is neither a column nor one of {PROMPT_TYPES}"
        )
    return constant


def _set_stated_apart(frame: pd.DataFrame, options: dict[str, str]) -> pd.DataFrame:
    """Keep the table's own attribute columns apart from glyphbench's (as ``stated_*``).

    A glyphbench export (every schema column present) gets its computed columns
    recomputed as they were.
    """
    # --help loads this module; attributes (pandas) load with a set
    from glyphbench.prompts.attributes import TEXT_ATTRIBUTES

    computed = (*TEXT_ATTRIBUTES, "prompt_char_length", "prompt_word_count")
    own = [c for c in frame.columns if c in computed and c not in options.values()]
    if all(c in frame.columns for c in PROMPT_COLUMNS):
        return frame.drop(columns=own)
    frame = frame.rename(
        columns={c: f"stated_{c}" for c in own if f"stated_{c}" not in frame.columns}
    )
    return frame.drop(columns=[c for c in own if c in frame.columns])


class _Places:
    """Where a table's row is in its file: a line (CSV, JSONL: blank lines counted), a
    position the reader gave (``annotations[5]``), else its row number."""

    def __init__(
        self, frame: pd.DataFrame, first_line: int | None, positions: list[str] | None
    ) -> None:
        lines = frame.attrs.get(LINE_NUMBERS)
        self.lines: list[int] | None = (
            list(lines) if lines is not None and len(lines) == len(frame) else None
        )
        self.first_line = first_line
        self.positions = positions if positions is not None and len(positions) else None

    def line(self, row: int) -> int | None:
        if self.lines is not None:
            return self.lines[row]
        return None if self.first_line is None else self.first_line + row

    def key(self, row: int) -> str | None:
        if self.line(row) is not None:
            return None
        return self.positions[row] if self.positions is not None else f"row {row}"

    def others(self, rows: list[int]) -> str:
        """`` (also lines 4, 9 and 2 more)`` for the rows after the first; "" for none."""
        if len(rows) < 2:
            return ""
        named = [str(self.line(r) or self.key(r)) for r in rows[1:6]]
        more = f" and {len(rows) - 6} more" if len(rows) > 6 else ""
        kind = "line" if self.line(rows[0]) is not None else "row"
        if self.positions is not None and self.line(rows[0]) is None:
            kind = "entry"
        return f" (also {kind}{'s' if len(rows) > 2 else ''} {', '.join(named)}{more})"

    def error(self, where: str, row: int, problem: str) -> InputError:
        return InputError(where, problem, line=self.line(row), key=self.key(row))


#: What each column a row must fill is, for the refusal of an empty one.
_FILLED = {
    "text": "give each prompt the text it asks to render, or remove it",
    "prompt": "give each row the instruction sent to the model, or remove it",
}


#: The longest text to render a source may hold, in characters. Far above any benchmark's
#: (LongText-Bench's longest is under 1,000; a render control refuses over 4,000), it keeps a
#: runaway cell from the word lists, which need memory many times its size: a 20-million-
#: character text was a MemoryError traceback that printed the whole text.
MAX_TEXT_CHARS = 100_000


def _check_lengths(frame: pd.DataFrame, where: str, places: _Places) -> None:
    lengths = frame["text"].fillna("").astype(str).str.len()
    over = [int(k) for k in (lengths > MAX_TEXT_CHARS).to_numpy().nonzero()[0]]
    if over:
        raise places.error(
            where,
            over[0],
            f"text of {int(lengths.iloc[over[0]]):,} characters{places.others(over)}, over the "
            f"{MAX_TEXT_CHARS:,} a text to render may have; shorten it or leave the row out",
        )


def _check_filled(frame: pd.DataFrame, column: str, where: str, places: _Places) -> None:
    """Every row needs ``column`` (text, prompt): a missing or blank cell names its row."""
    values = frame[column]
    empty = values.isna() | (values.fillna("").astype(str).str.strip() == "")
    if empty.any():
        rows = [int(k) for k in empty.to_numpy().nonzero()[0]]
        # all of them at once: not one fix and one rerun per row
        raise places.error(
            where, rows[0], f"empty {column}{places.others(rows)}; {_FILLED[column]}"
        )


def _missing(value: Any) -> bool:
    import pandas as pd

    return value is None or value is pd.NA or (isinstance(value, float) and value != value)


#: Values a string column never holds (a number in text or prompt is refused as well).
_CONTAINERS = (list, tuple, dict, set, bytes, bytearray)


def _check_strings(frame: pd.DataFrame, where: str, places: _Places) -> None:
    """Refuse a value a string column cannot hold as it is, naming its row.

    pandas' ``astype("string")`` writes any object as its repr: a list of texts became
    the text ``"['a', 'b']"`` and was asked of the model. ``text`` and ``prompt`` must
    be strings (a number too is refused: write it as a string); the other string columns
    refuse lists, objects and bytes.
    """
    import numpy as np
    import pandas as pd

    for column, dtype in PROMPT_COLUMNS.items():
        if dtype != "string" or column not in frame.columns:
            continue
        values = frame[column]
        strict = column in _FILLED
        if not pd.api.types.is_object_dtype(values.dtype):
            if strict and not pd.api.types.is_string_dtype(values.dtype):
                bad = [int(k) for k in values.notna().to_numpy().nonzero()[0]]
                if bad:
                    kind = _value_kind(values.iloc[bad[0]])
                    problem = _not_a_string(column, kind, where, places.others(bad))
                    raise places.error(where, bad[0], problem)
            continue
        wrong = [
            row
            for row, value in enumerate(values.to_numpy())
            if not isinstance(value, str)
            and not _missing(value)
            and (strict or isinstance(value, (*_CONTAINERS, np.ndarray)))
        ]
        if wrong:
            kind = _value_kind(values.iloc[wrong[0]])
            problem = _not_a_string(column, kind, where, places.others(wrong))
            raise places.error(where, wrong[0], problem)


def _value_kind(value: Any) -> str:
    import numpy as np

    if isinstance(value, (list, tuple, np.ndarray)):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float, np.number)):
        return "a number"
    return f"a {type(value).__name__}"


def _not_a_string(column: str, kind: str, where: str, others: str) -> str:
    """The refusal of a non-string ``column`` value, with the fix for the file it is in."""
    name = Path(where).name
    if name in ("text_prompts.jsonl", "text_prompts_zh.jsonl") and column == "text":
        fix = (
            "this looks like LongText-Bench, whose text is a list of pieces: run it with its "
            "suite (glyphbench run --suite longtext --data DIR, docs/suites.md)"
        )
    elif kind == "a list":
        fix = f"give one string per row (join the pieces), or map another column with ?{column}="
    else:
        fix = f"write it as a string (in quotes), or map another column with ?{column}="
    return f"{column} is {kind}, not a string{others}; {fix}"


def _type_columns(frame: pd.DataFrame, kind: str) -> None:
    """Ids for rows without one; real types for stated, frequency and category columns."""
    import pandas as pd

    # --help loads this module; the pool (pandas) loads with a set
    from glyphbench.prompts.pool import make_prompt_id

    if "prompt_id" not in frame.columns:
        frame["prompt_id"] = [
            make_prompt_id(kind, p, t) for p, t in zip(frame["prompt"], frame["text"], strict=True)
        ]
    frame["prompt_id"] = frame["prompt_id"].astype(str)
    _type_stated_columns(frame)
    for column in frame.columns:
        if column.endswith("_freq"):  # counts read from CSV arrive as strings; "" is unknown
            frame[column] = pd.to_numeric(frame[column].replace("", None), errors="coerce").astype(
                "Int64"
            )
    for column in ("group", "subgroup", "template_id", "text_id"):
        if column in frame.columns:
            frame[column] = frame[column].replace("", None)


_STATED_INTS = ("char_length", "word_count", "prompt_char_length", "prompt_word_count")
_STATED_BOOLS = ("rare", "gibberish", "has_special_chars", "has_numbers", "is_sentence")
_BOOL_WORDS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def _type_stated_columns(frame: pd.DataFrame) -> None:
    """Give a table's stated_* attribute columns real types (CSV cells arrive as strings)."""
    import pandas as pd

    for name in _STATED_INTS:
        column = f"stated_{name}"
        if column in frame.columns:
            frame[column] = pd.to_numeric(frame[column].replace("", None), errors="coerce").astype(
                "Int64"
            )
    for name in _STATED_BOOLS:
        column = f"stated_{name}"
        if column in frame.columns:
            words = frame[column].map(
                lambda v: _BOOL_WORDS.get(str(v).strip().lower()) if isinstance(v, str) else v
            )
            frame[column] = words.astype("boolean")
