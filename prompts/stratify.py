"""Stratified drawing: ``n`` rows of a prompt set or a lazy pool, a floor per stratum.

The work behind the ``stratified`` sampler (:mod:`glyphbench.prompts.samplers`); a pool is
sampled by index arithmetic, never by building its full cross product.
"""

from __future__ import annotations

import math
import random
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from glyphbench.core.errors import InputError
from glyphbench.prompts.pool import PromptPool
from glyphbench.prompts.schema import PROMPT_COLUMNS, PromptSet, conform


def allocate(sizes: Sequence[int], n: int, floor: int = 1) -> list[int]:
    """How many rows to draw from each stratum.

    Each stratum first gets ``min(floor, size)``; the remaining ``n - sum`` is
    shared in proportion to stratum size (largest-remainder rounding; ties go to
    the larger, then the earlier stratum); a stratum never gets more than it has,
    and what a full stratum cannot take is shared again among the others. If
    ``n`` covers everything, everything is taken.

    >>> allocate([100, 300], 10)
    [3, 7]
    >>> allocate([1, 50, 49], 10, floor=2)
    [1, 5, 4]
    >>> allocate([3, 4], 100)
    [3, 4]
    """
    if n < 0 or floor < 0:
        raise ValueError("n and floor must be non-negative")
    alloc = [min(floor, s) for s in sizes]
    if sum(alloc) > n:
        raise InputError(
            None,
            f"--sample {n} is smaller than the floor of {floor} row(s) "
            f"in each of {len(sizes)} strata ({sum(alloc)} rows)",
        )
    capacity = [s - a for s, a in zip(sizes, alloc, strict=True)]
    remaining = min(n - sum(alloc), sum(capacity))
    while remaining > 0:
        active = [i for i, c in enumerate(capacity) if c > 0]
        weight = sum(sizes[i] for i in active)
        quotas = {i: remaining * sizes[i] / weight for i in active}
        give = {i: min(capacity[i], math.floor(quotas[i])) for i in active}
        leftover = remaining - sum(give.values())
        order = sorted(
            (i for i in active if capacity[i] > give[i]),
            key=lambda i: (-(quotas[i] - math.floor(quotas[i])), -sizes[i], i),
        )
        for i in order[:leftover]:
            give[i] += 1
        for i, g in give.items():
            alloc[i] += g
            capacity[i] -= g
            remaining -= g
    return alloc


def _key_value(value: Any) -> Hashable:
    if value is None or value is pd.NA or (isinstance(value, float) and math.isnan(value)):
        return None
    plain: Hashable = value.item() if hasattr(value, "item") else value
    return plain


def _row_keys(frame: pd.DataFrame, columns: Sequence[str]) -> list[tuple[Hashable, ...]]:
    """Stratum key per row; a column the frame lacks counts as missing (None)."""
    if not columns:
        return [()] * len(frame)
    data = [frame[c].tolist() if c in frame.columns else [None] * len(frame) for c in columns]
    return [tuple(_key_value(v) for v in row) for row in zip(*data, strict=True)]


def _group(keys: list[tuple[Hashable, ...]]) -> dict[tuple[Hashable, ...], list[int]]:
    groups: dict[tuple[Hashable, ...], list[int]] = {}
    for i, key in enumerate(keys):
        groups.setdefault(key, []).append(i)
    return groups


def _sort_key(key: tuple[Hashable, ...]) -> tuple[str, ...]:
    return tuple("" if v is None else f"{type(v).__name__}:{v}" for v in key)


def _draw(size: int, k: int, seed: int, key: tuple[Hashable, ...]) -> list[int]:
    """k distinct offsets in range(size), seeded by (seed, stratum key); never builds the range."""
    rng = random.Random(f"{seed}|{key!r}")
    return sorted(rng.sample(range(size), k))


def _check_columns(columns: Sequence[str], available: Sequence[str]) -> None:
    missing = [c for c in columns if c not in available]
    if missing:
        valid = ", ".join(sorted(str(c) for c in available))
        raise InputError(
            None,
            f"--stratify: unknown column(s) {missing}; valid columns: {valid}",
            key=missing[0],
        )


def sample_frame(
    frame: pd.DataFrame, n: int, stratify: Sequence[str], seed: int, floor: int
) -> pd.DataFrame:
    """Stratified sample of a materialised frame; independent of row order (rows are
    ordered by prompt_id, then prompt, within each stratum before drawing)."""
    _check_columns(stratify, list(frame.columns))
    frame = frame.reset_index(drop=True)
    order = frame.sort_values(["prompt_id", "prompt"], kind="stable").index.to_numpy()
    ordered = frame.loc[order]
    groups = _group(_row_keys(ordered, stratify))
    keys = sorted(groups, key=_sort_key)
    counts = allocate([len(groups[k]) for k in keys], n, floor)
    picked: list[int] = []
    for key, count in zip(keys, counts, strict=True):
        members = groups[key]
        picked.extend(int(order[members[j]]) for j in _draw(len(members), count, seed, key))
    return frame.loc[sorted(picked)]


def sample_pool(
    pool: PromptPool, n: int, stratify: Sequence[str], seed: int, floor: int
) -> PromptSet | None:
    """Stratified sample of a pool by index arithmetic; None when a stratify column
    is not a template or text column (the caller then materialises)."""
    by_row_name = pool.template_columns_by_row_name()
    known = {*by_row_name, *pool.texts.columns, *pool.singles.columns, *PROMPT_COLUMNS}
    _check_columns(stratify, sorted(known))
    text_cols = [c for c in stratify if c in pool.texts.columns]
    template_cols = [c for c in stratify if c in by_row_name and c not in text_cols]
    if len(template_cols) + len(text_cols) != len(stratify):
        return None

    # a stratum is a list of blocks:
    # ("cross", template indices, text indices) or ("single", row indices)
    blocks: dict[tuple[Hashable, ...], list[tuple[str, np.ndarray, np.ndarray]]] = {}
    t_groups = _group(_row_keys(pool.templates, [by_row_name[c] for c in template_cols]))
    x_groups = _group(_row_keys(pool.texts, text_cols))
    position = {c: i for i, c in enumerate(stratify)}
    for t_key, t_members in t_groups.items():
        for x_key, x_members in x_groups.items():
            merged: list[Hashable] = [None] * len(stratify)
            for c, v in zip(template_cols, t_key, strict=True):
                merged[position[c]] = v
            for c, v in zip(text_cols, x_key, strict=True):
                merged[position[c]] = v
            blocks.setdefault(tuple(merged), []).append(
                ("cross", np.asarray(t_members), np.asarray(x_members))
            )
    singles = conform(pool.singles) if len(pool.singles) else pool.singles
    for key, members in _group(_row_keys(singles, stratify)).items():
        blocks.setdefault(key, []).append(("single", np.asarray(members), np.asarray([])))

    keys = sorted(blocks, key=_sort_key)
    sizes = [sum(_block_size(b) for b in blocks[k]) for k in keys]
    counts = allocate(sizes, n, floor)
    index = [
        _pool_position(pool, blocks[key], offset)
        for key, size, count in zip(keys, sizes, counts, strict=True)
        for offset in _draw(size, count, seed, key)
    ]
    return pool.subset(sorted(index))


_Block = tuple[str, np.ndarray, np.ndarray]


def _block_size(block: _Block) -> int:
    kind, a, b = block
    return len(a) * len(b) if kind == "cross" else len(a)


def _pool_position(pool: PromptPool, blocks: list[_Block], offset: int) -> int:
    """The pool row at ``offset`` within a stratum made of ``blocks`` (in order)."""
    for kind, a, b in blocks:
        width = _block_size((kind, a, b))
        if offset < width:
            if kind == "cross":
                t, x = a[offset // len(b)], b[offset % len(b)]
                return int(t) * len(pool.texts) + int(x)
            return pool.n_cross + int(a[offset])
        offset -= width
    raise IndexError(f"offset {offset} beyond the stratum")  # _draw never goes past its size
