"""Which images people rate: a stratified sample with known inclusion probabilities.

Pure functions over the results table (no files). The study design follows
TextInVision's: every cell (e.g. category x model) gets at least ``floor``
images, the rest of the sample is spread over cells in proportion to their size,
and each image is drawn without replacement inside its cell. Because the draw is
simple random sampling within a cell, an image in cell ``c`` is included with
probability ``n_c / N_c``; its reweighting factor is the inverse.

Gold items are control-model images whose correct answer is known without
asking anyone (a blank image never shows the text); they are added on top of
the sample to check raters.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from glyphbench.core.registry import Spec

#: Label used for a missing cell value (e.g. ``group`` of a simple prompt).
MISSING_LABEL = "(none)"


class SamplingError(ValueError):
    """The requested design cannot be drawn from these images (message says why)."""


#: Design defaults, lowered to what a run holds when not given (see :func:`adapt_design`).
DEFAULT_N = 1000
DEFAULT_FLOOR = 10


def adapt_design(
    sizes: Mapping[str, int], n: int | None, floor: int | None
) -> tuple[int, int, list[str]]:
    """The sample size and per-cell floor to use, and a note for each default adapted.

    A value given (not None) is kept as is (:func:`allocate` then says what is wrong
    with it). A default is lowered to what the cells hold: the floor to the smallest
    cell's size, ``n`` to every image, so a small run (the demo's) works without options.

    >>> adapt_design({"a": 30, "b": 1}, None, None)  # doctest: +NORMALIZE_WHITESPACE
    (31, 1, ['--min-per-cell 1 (default 10): the smallest cell, b, holds 1 image',
             '--n 31 (default 1000): every image of the 2 cells'])
    >>> adapt_design({"a": 5000, "b": 4000}, None, 3)
    (1000, 3, [])
    """
    notes = []
    total = sum(sizes.values())
    if floor is None:
        floor = DEFAULT_FLOOR
        smallest = min(sizes, key=lambda cell: (sizes[cell], cell)) if sizes else ""
        if sizes and sizes[smallest] < floor:
            floor = sizes[smallest]
            plural = "" if floor == 1 else "s"
            notes.append(
                f"--min-per-cell {floor} (default {DEFAULT_FLOOR}): the smallest cell, "
                f"{smallest}, holds {floor} image{plural}"
            )
    if n is None:
        n = max(DEFAULT_N, floor * len(sizes))
        if n > total:
            n = total
            notes.append(f"--n {n} (default {DEFAULT_N}): every image of the {len(sizes)} cells")
    return n, floor, notes


def allocate(sizes: Mapping[str, int], n: int, floor: int) -> dict[str, int]:
    """How many images to draw from each cell.

    Every cell gets ``floor``; the remaining ``n - floor * cells`` are shared in
    proportion to cell size (largest-remainder rounding, ties by cell name), and
    a cell never gets more than it holds (its overflow is re-shared).

    >>> allocate({"a": 10, "b": 30}, n=12, floor=2)
    {'a': 4, 'b': 8}

    Raises :class:`SamplingError` when ``n`` is larger than the pool, smaller
    than ``floor`` per cell, or a cell holds fewer than ``floor`` images.
    """
    if n < 0 or floor < 0:
        raise SamplingError("--n and --min-per-cell must be >= 0")
    cells = sorted(sizes)
    total = sum(sizes.values())
    if not cells:
        raise SamplingError("no images to sample from")
    short = [f"{c} ({sizes[c]})" for c in cells if sizes[c] < floor]
    if short:
        raise SamplingError(
            f"cannot give every cell {floor} images: {len(short)} cell(s) hold fewer: "
            + ", ".join(short[:8])
            + (" ..." if len(short) > 8 else "")
            + f"; pass --min-per-cell {min(sizes.values())} (or leave it out) or coarser --cells"
        )
    if n < floor * len(cells):
        raise SamplingError(
            f"--n {n} is below the floor: "
            f"{len(cells)} cells x {floor} = {floor * len(cells)} images"
        )
    if n > total:
        raise SamplingError(
            f"--n {n} is more than the {total} images available; pass --n {total} or less"
        )
    counts = {c: floor for c in cells}
    remaining = n - floor * len(cells)
    while remaining > 0:
        open_cells = [c for c in cells if counts[c] < sizes[c]]
        weight = sum(sizes[c] for c in open_cells)
        ideal = {c: remaining * sizes[c] / weight for c in open_cells}
        give = {c: min(math.floor(ideal[c]), sizes[c] - counts[c]) for c in open_cells}
        left = remaining - sum(give.values())
        by_fraction = sorted(open_cells, key=lambda c: (-(ideal[c] - math.floor(ideal[c])), c))
        for c in by_fraction:
            if left == 0:
                break
            if counts[c] + give[c] < sizes[c]:
                give[c] += 1
                left -= 1
        for c in open_cells:
            counts[c] += give[c]
        remaining = left  # only non-zero when caps bit; re-share among open cells
    return counts


def batches_to_fill(n_images: int, raters_per_image: int, batch_size: int) -> tuple[int, int]:
    """How many batches fill a study, and how many sampled images each holds.

    Each image needs ``raters_per_image`` (K) ratings, from different raters: a batch
    holds an image at most once, so it holds ``min(batch_size, n_images)`` images and
    ``n_images * K`` ratings need that many batches, rounded up (gold items come on top).

    >>> batches_to_fill(10, 3, 30)   # 10 images, K=3: three raters, one batch each
    (3, 10)
    >>> batches_to_fill(40, 3, 30)   # 120 ratings, 30 a batch
    (4, 30)
    >>> batches_to_fill(0, 3, 30)
    (0, 0)
    """
    per_batch = min(batch_size, n_images)
    if per_batch <= 0:
        return 0, 0
    return math.ceil(n_images * raters_per_image / per_batch), per_batch


def cell_labels(frame: pd.DataFrame, cells: Sequence[str]) -> pd.Series:
    """One label per row joining its ``cells`` values with " / " (missing -> "(none)")."""
    if not cells:
        return pd.Series("all", index=frame.index, dtype="object")
    parts = []
    for column in cells:
        values = frame[column].astype("object")
        parts.append(values.where(values.notna(), MISSING_LABEL).astype(str))
    label = parts[0]
    for part in parts[1:]:
        label = label + " / " + part
    return label


def stratified_sample(
    frame: pd.DataFrame,
    cells: Sequence[str],
    n: int,
    floor: int,
    seed: int,
) -> pd.DataFrame:
    """Draw ``n`` rows of ``frame``, at least ``floor`` per cell, without replacement.

    Returns the drawn rows (original index kept) with added columns ``cell``,
    ``cell_size`` (N_c), ``cell_sampled`` (n_c), ``inclusion_prob`` (n_c / N_c)
    and ``weight`` (its inverse). The draw depends only on ``seed`` and the set of
    rows, not their order (rows are sorted by their index first).

    >>> f = pd.DataFrame({"model": ["a"] * 4 + ["b"] * 2})
    >>> s = stratified_sample(f, ["model"], n=4, floor=1, seed=0)
    >>> s.groupby("cell")["inclusion_prob"].first().to_dict()
    {'a': 0.5, 'b': 1.0}
    """
    frame = frame.sort_index()
    labels = cell_labels(frame, cells)
    sizes = labels.value_counts().to_dict()
    counts = allocate({str(k): int(v) for k, v in sizes.items()}, n, floor)
    rng = np.random.default_rng(seed)
    chosen: list[pd.DataFrame] = []
    for cell in sorted(counts):
        members = frame.index[labels == cell]
        take = counts[cell]
        picked = rng.choice(len(members), size=take, replace=False)
        part = frame.loc[members[np.sort(picked)]].copy()
        part["cell"] = cell
        part["cell_size"] = len(members)
        part["cell_sampled"] = take
        part["inclusion_prob"] = take / len(members)
        part["weight"] = len(members) / take if take else math.inf
        chosen.append(part)
    return pd.concat(chosen) if chosen else frame.iloc[:0].assign(cell=[])


def gold_answer(model: str, exact_match: object = None) -> dict[str, int] | None:
    """The known answers for a control-model image, or None when unknown.

    * ``control:blank`` draws nothing: the text is not there and the prompt is
      not followed (both answers "no" = 0).
    * ``control:render`` draws the exact text on a plain canvas: the text is
      correct (1); whether that "follows the prompt" is a judgement, so not gold.
    * ``control:typo?rate=R`` (R > 0) draws a corrupted text: text accuracy is
      "no" (0), but only where OCR also saw a mismatch (``exact_match`` False);
      a low rate can leave a short text unchanged.

    >>> gold_answer("control:blank")
    {'text_accuracy': 0, 'prompt_following': 0}
    >>> gold_answer("control:typo?rate=0.3", exact_match=True) is None
    True
    """
    spec = Spec.parse(model)
    if spec.kind != "control":
        return None
    if spec.target == "blank":
        return {"text_accuracy": 0, "prompt_following": 0}
    if spec.target == "render":
        return {"text_accuracy": 1}
    if spec.target == "typo":
        try:
            rate = float(spec.options.get("rate", "0"))
        except ValueError:
            return None
        known = exact_match is not None and not (
            isinstance(exact_match, float) and math.isnan(exact_match)
        )
        if rate > 0 and known and not bool(exact_match):
            return {"text_accuracy": 0}
    return None


def select_gold(frame: pd.DataFrame, n_gold: int, seed: int) -> pd.DataFrame:
    """Pick up to ``n_gold`` control rows with known answers, spread over control models.

    Adds ``gold_answer`` (a JSON string). Rows are dealt round-robin over the
    control models (each model's rows in a seeded random order), so a study with
    render, typo and blank controls checks raters on all three kinds.
    """
    if n_gold <= 0 or frame.empty:
        return frame.iloc[:0].assign(gold_answer=[])
    frame = frame.sort_index()
    exact = (
        frame["exact_match"]
        if "exact_match" in frame.columns
        else pd.Series(None, index=frame.index)
    )
    answers = [gold_answer(str(m), e) for m, e in zip(frame["model"], exact, strict=False)]
    known = frame.assign(gold_answer=[json.dumps(a, sort_keys=True) if a else "" for a in answers])
    known = known[known["gold_answer"] != ""]
    rng = np.random.default_rng(seed + 1)  # distinct stream from the main sample
    queues = {
        model: list(rng.permutation(group.index.to_numpy()))
        for model, group in sorted(known.groupby("model"), key=lambda kv: str(kv[0]))
    }
    picked: list[object] = []
    while len(picked) < n_gold and any(queues.values()):
        for queue in queues.values():
            if queue and len(picked) < n_gold:
                picked.append(queue.pop(0))
    return known.loc[picked]


def opaque_id(seed: int, key: str) -> str:
    """A random-looking, stable id for an image: reveals neither model nor prompt.

    >>> len(opaque_id(0, "run/model/prompt/0/0"))
    12
    """
    return hashlib.sha256(f"glyphbench-human|{seed}|{key}".encode()).hexdigest()[:12]
