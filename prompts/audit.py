"""``glyphbench prompts validate``: find defects in a prompt source, row by row.

Each :class:`Finding` names the file and the line (CSV: the header is line 1)
or key (JSON: the entry's id) it is about. Kinds:

``stated_mismatch``   a stated attribute (TextInVision's char_length, word_length,
                      number, spec_char; real-world char_length, word_count) differs
                      from glyphbench's recomputed value. Only attributes with an
                      exact definition are compared; CEFR/rare/gibberish/sentence
                      are heuristics and would differ by definition.
``ambiguous_slot``    a template or prompt with more than one pair of double quotes
                      (or none), or a text not found verbatim between quotes in its prompt.
``mojibake``          text that is UTF-8 decoded as Latin-1/cp1252 (``rÃ©sumÃ©``).
``invisible_char``    zero-width/format (Unicode Cf), control (Cc) or line/paragraph
                      separator (Zl, Zp) characters.
``whitespace``        leading or trailing whitespace.
``duplicate``         a text, template, prompt or prompt_id equal (after trimming spaces) to an
                      earlier one (``run`` refuses a repeated prompt_id).
``category_spelling`` a category value spelled differently from a more frequent
                      spelling of the same value (case, spaces, plural "s"), e.g. "None" vs "none".
``text_not_found``    (caption sources) a caption in which the source's rule finds no text;
                      it is left out of the set.
``ambiguous_span``    (caption sources) a caption in which the rule finds several different
                      texts and cannot decide which one the caption means; left out, the
                      candidates listed.

A caption source (``textcaps:``, ``vizwiz:``) writes captions, not templates: its
prompts have no quotes by design, so ``ambiguous_slot`` is checked only on captions
that hold a double quote.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from glyphbench.core.errors import InputError
from glyphbench.prompts.attributes import (
    char_length,
    compute_attributes,
    has_numbers,
    has_special_chars,
    word_count,
)
from glyphbench.prompts.default import DEFAULT_DATA_DIR, read_default_tables
from glyphbench.prompts.pool import PromptPool
from glyphbench.prompts.sources import load_source, parse_source
from glyphbench.prompts.textinvision import (
    PROMPTS_FILE,
    REAL_WORLD_FILE,
    TEXTS_FILE,
    read_real_world,
    read_templates,
    read_texts,
)

FINDING_KINDS = (
    "stated_mismatch",
    "ambiguous_slot",
    "mojibake",
    "invisible_char",
    "whitespace",
    "duplicate",
    "category_spelling",
    "text_not_found",
    "ambiguous_span",
)
#: Sources whose prompts are captions as people wrote them (no quote slot by design).
CAPTION_SOURCES = ("textcaps", "vizwiz")


@dataclass(frozen=True)
class Finding:
    """One defect: what, where (file + line or key) and a one-line detail."""

    kind: str
    file: str
    line: int | None
    key: str | None
    detail: str

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
        if self.key is not None:
            where += f" [{self.key}]"
        return f"{where}: {self.kind}: {self.detail}"


# ---------------------------------------------------------------- per-string checks


def mojibake_repair(text: str) -> str | None:
    """The text as it was before UTF-8 was misread as Latin-1/cp1252, or None if it is not mojibake.

    >>> mojibake_repair("rÃ©sumÃ©")
    'résumé'
    >>> mojibake_repair("oâ€™clock")
    'o’clock'
    >>> mojibake_repair("résumé") is None
    True
    """
    if text.isascii():
        return None
    for codec in ("cp1252", "latin-1"):
        try:
            repaired = text.encode(codec).decode("utf-8")
        except (UnicodeEncodeError, UnicodeDecodeError):
            continue
        if repaired != text and len(repaired) < len(text):
            return repaired
    return None


def invisible_chars(text: str) -> list[str]:
    """Names of invisible characters in ``text`` (Unicode categories Cc, Cf, Zl, Zp).

    >>> invisible_chars("hello\\u200bworld")
    ['U+200B ZERO WIDTH SPACE']
    >>> invisible_chars("plain text")
    []
    """
    found = []
    for c in text:
        if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp"):
            found.append(f"U+{ord(c):04X} {unicodedata.name(c, 'CONTROL CHARACTER')}")
    return found


def quote_pairs(text: str) -> int:
    """Number of double-quote characters (") divided by two, rounded down.

    >>> quote_pairs('Add the text "Sale" at the top.')
    1
    """
    return text.count('"') // 2


def _category_key(value: str) -> str:
    return " ".join(w.rstrip("s") for w in value.strip().casefold().split())


# ---------------------------------------------------------------- generic checks over a column


@dataclass(frozen=True)
class Located:
    """A column of strings with where each value lives."""

    file: str
    lines: list[int | None]
    keys: list[str | None]


def check_strings(values: Iterable[str], where: Located, what: str) -> Iterator[Finding]:
    """Mojibake, invisible characters and stray spaces in a column of strings."""
    for value, line, key in zip(values, where.lines, where.keys, strict=True):
        if not isinstance(value, str):
            continue
        repaired = mojibake_repair(value)
        if repaired is not None:
            yield Finding(
                "mojibake",
                where.file,
                line,
                key,
                f"{what} {value!r} looks like mojibake of {repaired!r}",
            )
        hidden = invisible_chars(value)
        if hidden:
            yield Finding(
                "invisible_char",
                where.file,
                line,
                key,
                f"{what} {value!r} contains {', '.join(hidden)}",
            )
        if value != value.strip():
            side = (
                "leading and trailing"
                if value[:1].isspace() and value[-1:].isspace()
                else ("leading" if value[:1].isspace() else "trailing")
            )
            yield Finding(
                "whitespace", where.file, line, key, f"{what} {value!r} has {side} whitespace"
            )


def check_duplicates(values: Iterable[str], where: Located, what: str) -> Iterator[Finding]:
    """Each value equal, after trimming spaces, to an earlier one."""
    first: dict[str, tuple[int | None, str | None, str]] = {}
    for value, line, key in zip(values, where.lines, where.keys, strict=True):
        if not isinstance(value, str):
            continue
        norm = value.strip()
        if norm in first:
            first_line, first_key, first_value = first[norm]
            at = f"line {first_line}" if first_line is not None else f"key {first_key}"
            how = "" if first_value == value else " after trimming spaces"
            yield Finding("duplicate", where.file, line, key, f"{what} {value!r} repeats {at}{how}")
        else:
            first[norm] = (line, key, value)


def check_category(values: Iterable[object], where: Located, column: str) -> Iterator[Finding]:
    """Rows whose spelling of a category is not the most frequent spelling of it."""
    items = [
        (v, line, key)
        for v, line, key in zip(values, where.lines, where.keys, strict=True)
        if isinstance(v, str) and v.strip()
    ]
    counts = Counter(v for v, _, _ in items)
    by_key: dict[str, list[str]] = {}
    for spelling in counts:
        by_key.setdefault(_category_key(spelling), []).append(spelling)
    preferred = {}
    for spellings in by_key.values():
        if len(spellings) > 1:
            best = max(spellings, key=lambda s: (counts[s], s))
            for s in spellings:
                if s != best:
                    preferred[s] = best
    for value, line, key in items:
        if value in preferred:
            best = preferred[value]
            yield Finding(
                "category_spelling",
                where.file,
                line,
                key,
                f"{column} {value!r} ({counts[value]} rows) vs {best!r} ({counts[best]} rows)",
            )


def check_slots_in_templates(templates: Iterable[str], where: Located) -> Iterator[Finding]:
    """Templates whose text slot (first double-quoted span) is not unique."""
    for template, line, key in zip(templates, where.lines, where.keys, strict=True):
        pairs = quote_pairs(template)
        if template.count('"') % 2 or pairs != 1:
            yield Finding(
                "ambiguous_slot",
                where.file,
                line,
                key,
                f"template has {template.count(chr(34))} double quotes (expected one pair): "
                f"{template!r}",
            )


def check_slots_in_prompts(
    prompts: Iterable[str], texts: Iterable[str], where: Located, *, only_quoted: bool = False
) -> Iterator[Finding]:
    """Prompts with more than one pair of quotes, or whose text is not verbatim between quotes.

    ``only_quoted``: prompts without a double quote pass (captions have no slot by design).
    """
    for prompt, text, line, key in zip(prompts, texts, where.lines, where.keys, strict=True):
        if only_quoted and '"' not in prompt:
            continue
        problems = []
        n_quotes = prompt.count('"')
        if n_quotes != 2:
            problems.append(f"{n_quotes} double quotes (expected one pair)")
        if f'"{text}"' not in prompt:
            problems.append(f"text {text!r} not found verbatim between quotes")
        if problems:
            yield Finding(
                "ambiguous_slot",
                where.file,
                line,
                key,
                "; ".join(problems) + f" in prompt {_clip(prompt)!r}",
            )


def _clip(text: str, n: int = 90) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def check_stated(
    frame: pd.DataFrame, pairs: dict[str, tuple[str, str]], where: Located
) -> Iterator[Finding]:
    """stated_* columns that differ from recomputed ones. ``pairs``: stated -> (computed, label)."""
    present = {s: v for s, v in pairs.items() if s in frame.columns and v[0] in frame.columns}
    columns = {s: frame[s].tolist() for s in present}
    computed = {s: frame[c].tolist() for s, (c, _) in present.items()}
    texts = frame["text"].tolist()
    for i, (line, key) in enumerate(zip(where.lines, where.keys, strict=True)):
        diffs = []
        for stated, (_, label) in present.items():
            a, b = columns[stated][i], computed[stated][i]
            if a is None or a is pd.NA or b is None or b is pd.NA:
                continue
            if a != b:
                diffs.append(f"{label} stated {a} vs computed {b}")
        if diffs:
            yield Finding(
                "stated_mismatch",
                where.file,
                line,
                key,
                f"text {_clip(texts[i], 60)!r}: " + "; ".join(diffs),
            )


# ---------------------------------------------------------------- per source


def _located(
    file: Path | str, lines: Iterable[int | None], keys: Iterable[str | None] | None = None
) -> Located:
    line_list: list[int | None] = [None if v is None or pd.isna(v) else int(v) for v in lines]
    key_list: list[str | None] = list(keys) if keys is not None else [None] * len(line_list)
    return Located(str(file), line_list, key_list)


def audit_textinvision(folder: str | Path) -> list[Finding]:
    """All checks on the three TextInVision files."""

    folder = Path(folder)
    findings: list[Finding] = []

    texts = read_texts(folder)
    where = _located(folder / TEXTS_FILE, texts["line"])
    texts["char_length"] = texts["text"].map(char_length)
    texts["word_count"] = texts["text"].map(word_count)
    texts["has_numbers"] = texts["text"].map(has_numbers)
    texts["has_special_chars"] = texts["text"].map(has_special_chars)
    findings += check_stated(
        texts,
        {
            "stated_char_length": ("char_length", "char_length"),
            "stated_word_count": ("word_count", "word_length"),
            "stated_has_numbers": ("has_numbers", "number"),
            "stated_has_special_chars": ("has_special_chars", "spec_char"),
        },
        where,
    )
    findings += check_strings(texts["text"], where, "text")
    findings += check_duplicates(texts["text"], where, "text")
    findings += check_category(texts["stated_cefr"], where, "oxford_category")

    templates = read_templates(folder)
    where = _located(folder / PROMPTS_FILE, templates["line"], templates["template_id"])
    findings += check_slots_in_templates(templates["template"], where)
    findings += check_strings(templates["template"], where, "template")
    findings += check_duplicates(templates["template"], where, "template")
    findings += check_category(templates["prompt_type"], where, "type")

    real = read_real_world(folder)
    real["prompt_type"] = "real_world"
    real = compute_attributes(real)
    where = _located(folder / REAL_WORLD_FILE, [None] * len(real), real["stated_id"])
    findings += check_slots_in_prompts(real["prompt"], real["text"], where)
    findings += check_stated(
        real,
        {
            "stated_char_length": ("char_length", "char_length"),
            "stated_word_count": ("word_count", "word_count"),
        },
        where,
    )
    findings += check_strings(real["text"], where, "text")
    findings += check_strings(real["prompt"], where, "prompt")
    findings += check_duplicates(real["prompt"], where, "prompt")
    findings += check_category(real["stated_group"], where, "group")
    return findings


def audit_default(folder: str | Path | None = None) -> list[Finding]:
    """All checks on the default set's three CSV files (loading itself enforces the format)."""

    folder = Path(folder) if folder else DEFAULT_DATA_DIR
    templates, texts, real = read_default_tables(folder)
    findings: list[Finding] = []
    lines = range(2, len(texts) + 2)
    where = _located(folder / "texts.csv", lines, texts["text_id"])
    findings += check_strings(texts["text"], where, "text")
    findings += check_duplicates(texts["text"], where, "text")
    where = _located(
        folder / "templates.csv", range(2, len(templates) + 2), templates["template_id"]
    )
    findings += check_strings(templates["template"], where, "template")
    findings += check_duplicates(templates["template"], where, "template")
    where = _located(folder / "real_world.csv", range(2, len(real) + 2), real["prompt_id"])
    findings += check_slots_in_prompts(real["prompt"], real["text"], where)
    findings += check_strings(real["text"], where, "text")
    findings += check_strings(real["prompt"], where, "prompt")
    findings += check_duplicates(real["prompt"], where, "prompt")
    for column in ("group", "subgroup"):
        findings += check_category(real[column], where, column)
    return findings


def audit_rows(
    frame: pd.DataFrame,
    file: str,
    first_line: int | None,
    *,
    captions: bool = False,
    positions: list[str] | None = None,
) -> list[Finding]:
    """User-table checks (one row per prompt): slots, strings, duplicates, categories, stated_*.

    ``captions``: the prompts are captions (no quote slot by design): the slot check
    looks only at prompts holding a double quote. ``positions``: each row's place in its
    file as the reader named it (``data[5]``, ``annotations[7]``, ``line 3``), used
    instead of a row number.
    """
    n = len(frame)
    lines: list[int | None] = (
        [first_line + i for i in range(n)] if first_line is not None else [None] * n
    )
    keys: list[str | None] | None = (
        None if first_line is not None else [f"row {i}" for i in range(n)]
    )
    if positions is not None and len(positions) == n:
        lines = [_position_line(p) for p in positions]
        keys = [None if line is not None else p for p, line in zip(positions, lines, strict=True)]
    where = _located(file, lines, keys)
    prompts = frame["prompt"].astype(str).tolist()
    texts = frame["text"].astype(str).tolist()
    findings: list[Finding] = []
    findings += check_slots_in_prompts(prompts, texts, where, only_quoted=captions)
    findings += check_strings(texts, where, "text")
    findings += check_strings(prompts, where, "prompt")
    findings += check_duplicates(prompts, where, "prompt")
    if "prompt_id" in frame.columns:  # `run` refuses repeated ids: report them
        findings += check_duplicates(frame["prompt_id"].astype(str).tolist(), where, "prompt_id")
    for column in ("prompt_type", "group", "subgroup"):
        if column in frame.columns:
            findings += check_category(frame[column].tolist(), where, column)
    pairs = {
        f"stated_{c}": (c, c)
        for c in ("char_length", "word_count", "has_numbers", "has_special_chars")
    }
    findings += check_stated(frame, pairs, where)
    return findings


def audit(spec: str) -> list[Finding]:
    """Audit any source spec; findings ordered by file, then line (or key), then kind."""
    order = {kind: i for i, kind in enumerate(FINDING_KINDS)}
    return sorted(
        _audit(spec),
        key=lambda f: (
            f.file,
            f.line if f.line is not None else -1,
            f.key or "",
            order.get(f.kind, 99),
        ),
    )


def _audit(spec: str) -> list[Finding]:

    parsed = parse_source(spec)
    if parsed.kind == "textinvision":
        return audit_textinvision(parsed.target)
    if parsed.kind == "default":
        return audit_default(parsed.target or None)

    loaded = load_source(spec)
    assert not isinstance(loaded, PromptPool)
    frame = loaded.frame
    if frame.empty:  # `run` refuses an empty selection: so does the check that stands for it
        raise InputError(spec, "no prompts in this source (a header and no rows?)")
    first_line = {"csv": 2, "jsonl": 1}.get(parsed.kind)
    file = parsed.target if parsed.kind != "hf" else spec
    captions = parsed.kind in CAPTION_SOURCES
    positions = loaded.meta.get("caption_positions")
    lines = loaded.meta.get("line_numbers")
    if positions is None and isinstance(lines, list):  # JSONL: blank lines counted
        positions = [f"line {line}" for line in lines]
    rows = audit_rows(
        frame,
        file,
        first_line,
        captions=captions,
        positions=positions if isinstance(positions, list) else None,
    )
    return rows + captions_left_out(loaded.meta, file)


def _position_line(position: str) -> int | None:
    """The line a caption's position names (``line 3``), or None (``data[5]``)."""
    return int(position.removeprefix("line ")) if position.startswith("line ") else None


def captions_left_out(meta: dict[str, object], file: str) -> list[Finding]:
    """A caption source's captions left out of the set: no text found, or several candidates."""
    left_out = meta.get("captions_left_out")
    if not isinstance(left_out, list):
        return []
    return [_left_out_finding(item, file) for item in left_out]


def _left_out_finding(item: dict[str, Any], file: str) -> Finding:
    position = str(item["position"])
    line = _position_line(position)
    key = None if line is not None else position
    caption = f"caption {item['caption_id']} {_clip(item['caption'])!r}"
    candidates = item["candidates"]
    if not candidates:
        return Finding("text_not_found", file, line, key, f"{caption}: no text to render found")
    listed = ", ".join(repr(c) for c in candidates)
    return Finding(
        "ambiguous_span",
        file,
        line,
        key,
        f"{caption}: {len(candidates)} different texts ({listed}); left out, which one is "
        "meant is not decided",
    )


def summarize(findings: Iterable[Finding]) -> dict[str, int]:
    """Counts per kind, every kind listed (zeros included), in FINDING_KINDS order."""
    counts = Counter(f.kind for f in findings)
    return {kind: counts.get(kind, 0) for kind in FINDING_KINDS}
