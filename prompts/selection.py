"""Selecting prompts: TextInVision filter configs, pandas queries, stratified samples.

Order of operations in :func:`select`: ``config`` -> ``where`` -> ``sample`` -> ``limit``.

* ``config`` (TextInVision's filter file, JSON with comments) selects templates
  and texts separately and pairs every selected template with every selected
  text, exactly as TextInVision's ``prompt_text_selection.py`` does; rows with
  the same final prompt collapse to one (the last, as in the reference).
  Real-world prompts are not part of a config selection.
* ``where`` is a ``DataFrame.query`` expression over the schema columns, checked first
  against :mod:`glyphbench.prompts.where`'s list (pandas would run any code it names).
* ``sample`` draws N rows with a sampler plug-in (:mod:`glyphbench.prompts.samplers`; by
  default ``stratified``), stratified by ``stratify`` columns: each stratum gets
  ``min(floor, its size)`` rows, the rest is shared in proportion to stratum
  size (largest remainder). The draw within a stratum is seeded by
  ``(seed, stratum key)``, so it does not depend on the other strata.

On a lazy pool (``default``, ``textinvision``) sampling without config/where
uses index arithmetic over templates x texts and never builds the full cross
product; ``where`` scans the pool a chunk at a time.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from glyphbench.core.errors import InputError
from glyphbench.core.io import slug
from glyphbench.core.registry import PLUGINS
from glyphbench.prompts.attributes import char_length, word_count
from glyphbench.prompts.pool import PromptPool
from glyphbench.prompts.samplers import DEFAULT_SAMPLER, Sampler
from glyphbench.prompts.schema import PROMPT_COLUMNS, PromptSet, conform
from glyphbench.prompts.sources import load_source
from glyphbench.prompts.where import check_where

# ---------------------------------------------------------------- filter config

#: Prompt filter key -> (column, comparison). ``template_*`` columns are the
#: template's own lengths (TextInVision's file lacks them: the reference crashes
#: on these keys; glyphbench computes them from the template text).
PROMPT_FILTERS: dict[str, tuple[str, str]] = {
    "prompts_type": ("prompt_type", "=="),
    "prompt_word_length_min": ("template_word_count", ">="),
    "prompt_word_length_max": ("template_word_count", "<="),
    "prompt_char_length_min": ("template_char_length", ">="),
    "prompt_char_length_max": ("template_char_length", "<="),
}

#: Text filter key -> (TextInVision stated column, glyphbench column, comparison).
TEXT_FILTERS: dict[str, tuple[str, str, str]] = {
    "oxford_category": ("stated_cefr", "cefr", "=="),
    "char_length_min": ("stated_char_length", "char_length", ">="),
    "char_length_max": ("stated_char_length", "char_length", "<="),
    "word_length_min": ("stated_word_count", "word_count", ">="),
    "word_length_max": ("stated_word_count", "word_count", "<="),
    "contains_rare": ("stated_rare", "rare", "=="),
    "contains_gibberish": ("stated_gibberish", "gibberish", "=="),
    "contains_spec_char": ("stated_has_special_chars", "has_special_chars", "=="),
    "contains_number": ("stated_has_numbers", "has_numbers", "=="),
    "contains_sentences": ("stated_is_sentence", "is_sentence", "=="),
    "LAION_freq_min": ("stated_laion_freq", "laion_freq", ">="),
    "LAION_freq_max": ("stated_laion_freq", "laion_freq", "<="),
    "CoCo_freq_min": ("stated_coco_freq", "coco_freq", ">="),
    "CoCo_freq_max": ("stated_coco_freq", "coco_freq", "<="),
}

#: Strings pandas reads as missing by default; the reference read oxford_category
#: that way, so a stated "None" never equals anything there. Kept for fidelity.
PANDAS_NA_STRINGS = frozenset(
    [
        "",
        "#N/A",
        "#N/A N/A",
        "#NA",
        "-1.#IND",
        "-1.#QNAN",
        "-NaN",
        "-nan",
        "1.#IND",
        "1.#QNAN",
        "<NA>",
        "N/A",
        "NA",
        "NULL",
        "NaN",
        "None",
        "n/a",
        "nan",
        "null",
    ]
)


def load_filter_config(path: str | Path) -> dict[str, Any]:
    """Read a TextInVision filter config (JSON5: comments allowed); one-line errors."""
    import json5

    path = Path(path)
    if not path.exists():
        raise InputError(path, "file not found")
    try:
        data: dict[str, Any] = json5.loads(path.read_text(encoding="utf-8-sig"))
    except ValueError as exc:
        match = re.search(r":(\d+) ", str(exc))
        message = re.sub(r"^<string>:\d+\s*", "", str(exc))
        raise InputError(
            path, f"malformed JSON: {message}", line=int(match.group(1)) if match else None
        ) from None
    check_filter_config(data, path)
    return data


def check_filter_config(config: Any, where: str | Path | None = None) -> None:
    """Raise InputError for unknown sections/keys or malformed filter entries."""
    if not isinstance(config, dict):
        raise InputError(where, "filter config must be a JSON object with 'prompts' and/or 'texts'")
    for section, known in (("prompts", PROMPT_FILTERS), ("texts", TEXT_FILTERS)):
        filters = config.get(section) or {}
        if not isinstance(filters, dict):
            raise InputError(where, f"'{section}' must be an object", key=section)
        for key, entry in filters.items():
            if key not in known:
                raise InputError(
                    where,
                    f"unknown {section} filter {key!r}; known: {', '.join(known)}",
                    key=f"{section}.{key}",
                )
            if not isinstance(entry, dict) or "value" not in entry:
                raise InputError(
                    where,
                    'a filter must be {"operator": "and"|"or", "value": ...}',
                    key=f"{section}.{key}",
                )
    unknown = [k for k in config if k not in ("prompts", "texts")]
    if unknown:
        raise InputError(
            where, f"unknown section {unknown[0]!r}; expected 'prompts' and 'texts'", key=unknown[0]
        )


def _compare(values: pd.Series, op: str, value: Any) -> pd.Series:
    if op == "==":
        result = values == value
    elif op == ">=":
        result = values >= value
    else:
        result = values <= value
    return pd.Series(result, index=values.index).astype("boolean").fillna(False).astype(bool)


def filter_mask(
    frame: pd.DataFrame, filters: dict[str, Any], columns: dict[str, tuple[str, str]]
) -> np.ndarray:
    """The reference's rule: in file order, skip null values; the first filter
    starts the mask; later ones join with ``|`` for operator "or" (any case), else ``&``.
    No active filter selects every row."""
    mask: pd.Series | None = None
    for key, entry in filters.items():
        value = entry.get("value")
        if value is None:
            continue
        column, op = columns[key]
        if column not in frame.columns:
            raise InputError(
                None, f"filter {key!r} needs column {column!r}, which this source lacks", key=key
            )
        values = frame[column]
        if column == "stated_cefr":
            values = values.where(~values.isin(PANDAS_NA_STRINGS))
        current = _compare(values, op, value)
        if mask is None:
            mask = current
        elif str(entry.get("operator", "and")).lower() == "or":
            mask = mask | current
        else:
            mask = mask & current
    if mask is None:
        return np.ones(len(frame), dtype=bool)
    selected: np.ndarray = mask.to_numpy(dtype=bool)
    return selected


def _text_columns(use_stated: bool) -> dict[str, tuple[str, str]]:
    return {k: ((s if use_stated else g), op) for k, (s, g, op) in TEXT_FILTERS.items()}


def _with_template_lengths(frame: pd.DataFrame, template_column: str) -> pd.DataFrame:
    if "template_char_length" in frame.columns:
        return frame
    frame = frame.copy()
    frame["template_char_length"] = frame[template_column].map(char_length)
    frame["template_word_count"] = frame[template_column].map(word_count)
    return frame


def apply_config(source: PromptPool | PromptSet, config: dict[str, Any]) -> PromptSet:
    """Select with a TextInVision filter config (see the module docstring)."""
    check_filter_config(config)
    prompt_filters = config.get("prompts") or {}
    text_filters = config.get("texts") or {}
    if isinstance(source, PromptPool):
        use_stated = source.kind == "textinvision"
        templates = _with_template_lengths(source.templates, "template")
        t_sel = np.flatnonzero(filter_mask(templates, prompt_filters, PROMPT_FILTERS))
        x_sel = np.flatnonzero(filter_mask(source.texts, text_filters, _text_columns(use_stated)))
        n_texts = len(source.texts)
        index = (t_sel[:, None] * n_texts + x_sel[None, :]).ravel()
        frame = source.rows(index)
        meta = dict(source.meta)
        src, version = source.source, source.version
    else:
        use_stated = "stated_cefr" in source.frame.columns and str(source.source).startswith(
            "textinvision"
        )
        frame = source.frame
        # a row set has no template: its prompt lengths stand in for the template's
        probe = _with_template_lengths(frame, "prompt")
        keep = filter_mask(probe, prompt_filters, PROMPT_FILTERS) & filter_mask(
            probe, text_filters, _text_columns(use_stated)
        )
        frame = frame[keep]
        meta = dict(source.meta)
        src, version = source.source, source.version
    # the reference keys its output by final prompt: duplicates collapse, the last wins
    frame = frame.drop_duplicates(subset="prompt", keep="last")
    return PromptSet(frame, source=src, version=version, meta=meta)


# ---------------------------------------------------------------- where


def apply_where(source: PromptPool | PromptSet, where: str) -> PromptSet:
    """Rows matching a pandas query; a pool is scanned a chunk at a time."""
    check_where(where)

    def query(frame: pd.DataFrame) -> pd.DataFrame:
        try:
            # empty scopes as well as the check: no '@name' can reach this module's names
            return frame.query(where, engine="python", local_dict={}, global_dict={})
        except Exception as exc:  # pandas raises many types for a bad expression
            raise InputError(
                None, f"--where {where!r}: {type(exc).__name__}: {exc}".splitlines()[0]
            ) from None

    if isinstance(source, PromptPool):
        return PromptSet(
            source.rows(_where_pool_index(source, query, where)),
            source=source.source,
            version=source.version,
            meta=dict(source.meta),
        )
    return PromptSet(
        query(source.frame), source=source.source, version=source.version, meta=dict(source.meta)
    )


def select_ids(source: str | PromptPool | PromptSet, ids: Collection[str]) -> PromptSet:
    """The prompts whose id is in ``ids``, in the source's order.

    An id is also found by its file-safe form (``slug(prompt_id, digest=8)``, as a run
    folder names image files), so ids taken from file names find ``a/b`` as ``a_b-<hash>``.
    A pool computes only the ids of its rows and builds just the rows found.

    >>> frame = pd.DataFrame({"prompt_id": ["p1", "a/b", "p3"], "prompt": ["x", "y", "z"],
    ...                       "text": ["x", "y", "z"]})
    >>> chosen = select_ids(PromptSet(frame, source="t"), {"p3", "a_b-c14cddc0", "nope"})
    >>> chosen.frame["prompt_id"].tolist()
    ['a/b', 'p3']
    """

    wanted = set(ids)
    # a changed id's slug ends in "-" and 8 hex digits: without such names, skip slugging
    slugs = any(re.search(r"-[0-9a-f]{8}$", name) for name in wanted)

    def named(prompt_id: str) -> bool:
        return prompt_id in wanted or (slugs and slug(prompt_id, digest=8) in wanted)

    loaded = load_source(source) if isinstance(source, str) else source
    if isinstance(loaded, PromptPool):
        return loaded.subset(loaded.positions_of(named))
    keep = [named(str(prompt_id)) for prompt_id in loaded.frame["prompt_id"]]
    return PromptSet(
        loaded.frame[keep], source=loaded.source, version=loaded.version, meta=dict(loaded.meta)
    )


def _missing_like(column: pd.Series, n: int) -> pd.Series:
    """n missing values typed like ``column`` (NaN for plain numbers, <NA> otherwise)."""
    if pd.api.types.is_numeric_dtype(column.dtype) and not pd.api.types.is_extension_array_dtype(
        column.dtype
    ):
        return pd.Series(np.nan, index=range(n), dtype="float64")
    try:
        return pd.Series(pd.NA, index=range(n), dtype=column.dtype)
    except (TypeError, ValueError):
        return pd.Series(pd.NA, index=range(n), dtype=object)


def _where_pool_index(
    pool: PromptPool, query: Any, where: str, chunk_rows: int = 400_000
) -> np.ndarray:
    """Pool positions whose row matches ``where``.

    The cross product is scanned in chunks of whole templates holding only the
    columns the expression names (prompt strings and ids are built only when
    named), so a million-row pool is scanned in seconds; full rows are built
    for the matches only.
    """
    names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", where))
    text_cols = [c for c in pool.texts.columns if c in names]
    by_row_name = pool.template_columns_by_row_name()
    template_cols = [c for c in by_row_name if c in names and c not in text_cols]
    need_prompt = bool(names & {"prompt", "prompt_char_length", "prompt_word_count", "prompt_id"})
    n_texts = len(pool.texts)
    matches: list[np.ndarray] = []
    per_chunk = max(1, chunk_rows // max(n_texts, 1))
    texts = pool.texts[text_cols].reset_index(drop=True)
    for start in range(0, len(pool.templates), per_chunk):
        stop = min(start + per_chunk, len(pool.templates))
        t_idx = np.repeat(np.arange(start, stop), n_texts)
        x_idx = np.tile(np.arange(n_texts), stop - start)
        if need_prompt:
            chunk = pool.cross_rows(t_idx, x_idx)
        else:
            chunk = texts.iloc[x_idx].reset_index(drop=True)
            for column in template_cols:
                chunk[column] = pool.templates[by_row_name[column]].to_numpy()[t_idx]
            for column in ("source",):
                if column in names:
                    chunk[column] = pool.source
        for column in names & set(PROMPT_COLUMNS):
            if (
                column not in chunk.columns
            ):  # a schema column this pool lacks: unknown, as in full rows
                chunk[column] = pd.Series(pd.NA, index=chunk.index, dtype=PROMPT_COLUMNS[column])
        chunk.index = pd.RangeIndex(len(chunk))
        hit = query(chunk).index.to_numpy()
        matches.append(t_idx[hit] * n_texts + x_idx[hit])
    if len(pool.singles):
        singles = conform(pool.singles)
        for column in names - set(singles.columns):
            # a cross-only column named by the expression: missing here, as in the full rows
            if column in pool.texts.columns:
                singles[column] = _missing_like(pool.texts[column], len(singles))
            elif column in by_row_name:
                singles[column] = _missing_like(pool.templates[by_row_name[column]], len(singles))
        hit = query(singles).index.to_numpy()
        matches.append(pool.n_cross + hit)
    return np.concatenate(matches) if matches else np.zeros(0, dtype=np.int64)


# ---------------------------------------------------------------- select


def select(
    source: str | PromptSet | PromptPool,
    *,
    where: str | None = None,
    config: str | Path | dict[str, Any] | None = None,
    sample: int | None = None,
    stratify: Sequence[str] | str | None = None,
    seed: int = 0,
    limit: int | None = None,
    floor: int = 1,
    sampler: str | None = None,
) -> PromptSet:
    """Select prompts from a source spec, a PromptSet or a pool (see the module docstring).

    ``glyphbench.prompts.select("default", sample=40, stratify=["prompt_type", "group"], seed=0)``
    draws 40 prompts, at least one per (type, group) stratum, without building
    the default set's full cross product. ``sampler`` names the sampler plug-in
    (e.g. ``"stratified?floor=2"``); without it ``stratified`` runs with ``floor``.
    """

    chosen: Sampler = PLUGINS.create("samplers", sampler or f"{DEFAULT_SAMPLER}?floor={floor}")
    if where:
        check_where(where)  # before any data is read: a refused filter costs nothing

    loaded: PromptSet | PromptPool = load_source(source) if isinstance(source, str) else source
    if isinstance(stratify, str):
        stratify = [c.strip() for c in stratify.split(",") if c.strip()]
    stratify = list(stratify or [])
    if sample is not None and sample < 0:
        raise InputError(None, f"--sample must be >= 0, got {sample}")
    if limit is not None and limit < 0:
        raise InputError(None, f"--limit must be >= 0, got {limit}")

    current: PromptSet | PromptPool = loaded
    if config is not None:
        cfg = config if isinstance(config, dict) else load_filter_config(config)
        current = apply_config(current, cfg)
    if where:
        current = apply_where(current, where)

    result: PromptSet
    if sample is not None and sample > len(current):  # never silently the whole pool
        raise InputError(
            None,
            f"--sample {sample} is larger than the pool: {len(current)} prompt(s) to draw from"
            + (" after the filters" if config is not None or where else ""),
        )
    if sample is not None:
        result = chosen.sample(current, sample, stratify, seed)
    elif isinstance(current, PromptPool):
        result = (
            current.subset(range(min(limit, len(current))))
            if limit is not None
            else current.to_prompt_set()
        )
    else:
        result = current
    if limit is not None and len(result) > limit:
        result = PromptSet(
            result.frame.head(limit),
            source=result.source,
            version=result.version,
            meta=dict(result.meta),
        )
    selection: dict[str, Any] = {
        "where": where,
        "config": str(config) if config is not None and not isinstance(config, dict) else config,
        "sample": sample,
        "stratify": stratify,
        "seed": seed,
        "limit": limit,
        "floor": getattr(chosen, "floor", floor),
    }
    if sampler is not None:
        selection["sampler"] = sampler
    result.meta["selection"] = selection
    return result
