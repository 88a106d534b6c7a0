"""Source spec strings -> prompt sets.

``default``                     glyphbench's own set (package data, lazy pool)
``textinvision:DIR``            the public TextInVision files (lazy pool)
``csv:PATH``, ``jsonl:PATH``,   a user's table; ``?schema_column=their_column&...``
``parquet:PATH``                maps columns, e.g. ``csv:mine.csv?text=caption_text&prompt=instruction``
``hf:REPO_ID[:SPLIT]``          a Hugging Face dataset (split ``train`` by default), same mapping
``PATH.csv`` etc.               a bare path with a table suffix is read as that format

User tables need a text column; the prompt comes from a mapped column, or from
``?template=...`` holding ``{text}`` (e.g. ``template=A sign that says "{text}"``).
``prompt_type`` may map to a column or be a constant (``?prompt_type=simple``).
A column that already has a schema name is used as it is. Attribute columns
the table brings (e.g. its own ``char_length``) are kept as ``stated_*``;
glyphbench computes its own. A table without ``prompt_id`` gets
ids hashed from (source kind, prompt, text).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pandas as pd

from bench.errors import InputError
from bench.registry import Spec
from prompts.attributes import TEXT_ATTRIBUTES, compute_attributes
from prompts.pool import PromptPool, make_prompt_id
from prompts.schema import PROMPT_COLUMNS, PROMPT_TYPES, PromptSet

TABLE_KINDS = ("csv", "jsonl", "parquet")
POOL_KINDS = ("default", "textinvision")
_SUFFIX_KIND = {
    ".csv": "csv",
    ".tsv": "csv",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".parquet": "parquet",
}
_COMPUTED = (*TEXT_ATTRIBUTES, "prompt_char_length", "prompt_word_count")


def parse_source(spec: str) -> Spec:
    """Parse a source spec; a bare table path becomes ``<format>:PATH``.

    >>> parse_source("textinvision:/data/tiv").target
    '/data/tiv'
    >>> parse_source("prompts.parquet").kind
    'parquet'
    """
    head = spec.partition("?")[0]
    suffix = Path(head).suffix.lower()
    if suffix in _SUFFIX_KIND and not any(head.startswith(f"{k}:") for k in (*TABLE_KINDS, "hf")):
        spec = f"{_SUFFIX_KIND[suffix]}:{spec}"
    parsed = Spec.parse(spec)
    known = (*POOL_KINDS, *TABLE_KINDS, "hf")
    if parsed.kind not in known:
        raise InputError(
            None,
            f"unknown prompt source {spec!r}; use one of: default, textinvision:DIR, csv:PATH, jsonl:PATH, parquet:PATH, hf:REPO[:SPLIT]",
        )
    if parsed.kind != "default" and not parsed.target:
        raise InputError(None, f"prompt source {spec!r} needs a target after '{parsed.kind}:'")
    return parsed


def load_source(spec: str) -> PromptPool | PromptSet:
    """A pool (default, textinvision) or a materialised set (tables, hf)."""
    parsed = parse_source(spec)
    if parsed.kind == "default":
        from prompts.default import load_default_pool

        folder = parsed.target or None  # "default:FOLDER" reads a folder in the default format
        return load_default_pool(Path(folder) if folder else None, source=spec)
    if parsed.kind == "textinvision":
        from prompts.textinvision import load_textinvision_pool

        return load_textinvision_pool(parsed.target, source=spec)
    if parsed.kind == "hf":
        return _load_hf(parsed)
    return _load_table(parsed)


def load_prompt_set(spec: str) -> PromptSet:
    """Load any source as a PromptSet with every row materialised.

    ``default`` is a few hundred thousand rows and ``textinvision:DIR`` about 1.4
    million (seconds to tens of seconds, see docs/prompts.md); use
    :func:`prompts.select` to sample them without building every row.
    """
    source = load_source(spec)
    return source.to_prompt_set() if isinstance(source, PromptPool) else source


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()[:12]


def _load_table(parsed: Spec) -> PromptSet:
    from bench.io import read_table

    path = Path(parsed.target)
    if not path.exists():
        raise InputError(path, "file not found")
    expected = {"csv": (".csv", ".tsv"), "jsonl": (".jsonl", ".ndjson"), "parquet": (".parquet",)}[
        parsed.kind
    ]
    if path.suffix.lower() not in expected:
        raise InputError(path, f"a {parsed.kind} source needs a {'/'.join(expected)} file")
    frame = read_table(path, text_columns=True)
    first_line = {"csv": 2, "jsonl": 1, "parquet": None}[parsed.kind]
    frame = map_columns(
        frame, parsed.options, where=str(path), first_line=first_line, kind=parsed.kind
    )
    frame["source"] = parsed.text
    return PromptSet(
        frame,
        source=parsed.text,
        version=f"{parsed.kind}-{_file_digest(path)}",
        meta={"path": str(path)},
    )


def _load_hf(parsed: Spec) -> PromptSet:
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
    frame = map_columns(
        frame, parsed.options, where=f"hf:{repo}:{split}", first_line=None, kind="hf"
    )
    frame["source"] = parsed.text
    fingerprint = getattr(dataset, "_fingerprint", "") or ""
    return PromptSet(
        frame,
        source=parsed.text,
        version=f"hf-{repo}-{split}-{fingerprint[:12]}",
        meta={"repo": repo, "split": split},
    )


def map_columns(
    frame: pd.DataFrame, options: dict[str, str], *, where: str, first_line: int | None, kind: str
) -> pd.DataFrame:
    """Rename a user table's columns to the schema, build prompts, compute attributes."""
    options = dict(options)
    header_line = 1 if kind == "csv" else None
    template = options.pop("template", None)
    constant_type = None
    if "prompt_type" in options and options["prompt_type"] not in frame.columns:
        constant_type = options.pop("prompt_type")
        if constant_type not in PROMPT_TYPES:
            raise InputError(
                where,
                f"prompt_type={constant_type!r} is neither a column nor one of {PROMPT_TYPES}",
            )
    unknown = [k for k in options if k not in PROMPT_COLUMNS]
    if unknown:
        raise InputError(where, f"unknown schema column(s) in mapping: {unknown}", key=unknown[0])
    for target, column in options.items():
        if column not in frame.columns:
            found = ", ".join(map(str, frame.columns)) or "none"
            raise InputError(
                where,
                f"missing column {column!r} (mapped to {target}; columns: {found})",
                line=header_line,
            )
    # keep the table's own attribute columns apart from glyphbench's; a glyphbench
    # export (every schema column present) gets its computed columns recomputed as they were
    is_export = all(c in frame.columns for c in PROMPT_COLUMNS)
    own = [c for c in frame.columns if c in _COMPUTED and c not in options.values()]
    if is_export:
        frame = frame.drop(columns=own)
    else:
        frame = frame.rename(
            columns={c: f"stated_{c}" for c in own if f"stated_{c}" not in frame.columns}
        )
        frame = frame.drop(columns=[c for c in own if c in frame.columns])
    frame = frame.rename(columns={column: target for target, column in options.items()})
    if "text" not in frame.columns:
        found = ", ".join(map(str, frame.columns)) or "none"
        raise InputError(
            where,
            f"missing column 'text' (columns: {found}); map one with ?text=COLUMN",
            line=header_line,
        )
    frame["text"] = frame["text"].astype("string")
    if template is not None:
        if "{text}" not in template:
            raise InputError(where, "template= must contain {text}")
        frame["prompt"] = [template.replace("{text}", str(t)) for t in frame["text"]]
    elif "prompt" not in frame.columns:
        found = ", ".join(map(str, frame.columns)) or "none"
        raise InputError(
            where,
            f"missing column 'prompt' (columns: {found}); map one with ?prompt=COLUMN or give ?template=...{{text}}...",
            line=header_line,
        )
    if constant_type is not None:
        frame["prompt_type"] = constant_type
    empty = frame["text"].isna()
    if empty.any():
        row = int(empty.to_numpy().argmax())
        raise InputError(
            where,
            "empty text",
            line=None if first_line is None else first_line + row,
            key=None if first_line else f"row {row}",
        )
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
    return compute_attributes(frame)


_STATED_INTS = ("char_length", "word_count", "prompt_char_length", "prompt_word_count")
_STATED_BOOLS = ("rare", "gibberish", "has_special_chars", "has_numbers", "is_sentence")
_BOOL_WORDS = {"true": True, "1": True, "yes": True, "false": False, "0": False, "no": False}


def _type_stated_columns(frame: pd.DataFrame) -> None:
    """Give a table's stated_* attribute columns real types (CSV cells arrive as strings)."""
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
