"""Gallery: the best and worst images per model and slice, with OCR boxes drawn on.

Images are never modified: boxes are drawn on a copy, which is shrunk to a
thumbnail and saved as JPEG under ``report/gallery/``.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from glyphbench.core.images import shrunk_copy
from glyphbench.core.io import atomic_path
from glyphbench.core.paths import inside
from glyphbench.core.schema import failed_mask
from glyphbench.report.slices import slice_labels
from glyphbench.run.reading_store import images_folder

THUMB_SIDE = 320
BOX_COLOUR = (213, 94, 0)  # Okabe-Ito vermillion: visible on light and dark images


def select_examples(
    frame: pd.DataFrame,
    column: str | None,
    k: int = 2,
    metric: str = "ned",
    *,
    labels: pd.Series | None = None,
) -> pd.DataFrame:
    """The ``k`` best and ``k`` worst successful rows per (model, slice of ``column``).

    ``labels`` are the slice labels of ``column`` for every row of ``frame``
    (see :class:`glyphbench.report.slices.Slicing`; computed when not given).
    Rows are ranked by ``metric`` (higher is better), ties broken by fewer
    Algorithm 1 edits and then by prompt_id, so the choice is deterministic.
    Groups with fewer than ``2k`` rows fill "best" first; no row appears twice.
    Adds columns ``slice`` and ``kind`` ("best"/"worst", relabelled by :func:`label_ties`).
    """
    succeeded = ~failed_mask(frame)
    if not succeeded.any():
        ok = frame[succeeded].copy()
        return ok.assign(slice=pd.Series(dtype=object), kind=pd.Series(dtype=object))
    # Rank a small table of keys, then take only the picked rows of the full table
    # (sorting every column of a million rows was most of the cost).
    keys = _ranking_keys(frame, succeeded, column, metric, labels)
    keys = keys.sort_values(
        ["model", "_slice_order", "_score", "_edits", "prompt_id"],
        ascending=[True, True, False, True, True],
        kind="stable",
    )
    group = keys.groupby(["model", "_slice_order"], sort=False).ngroup().to_numpy()
    rank = keys.groupby(group).cumcount().to_numpy()
    size = np.bincount(group)[group]
    n_best = np.minimum(k, size)
    n_worst = np.minimum(k, size - n_best)
    best, worst = rank < n_best, rank >= size - n_worst
    chosen = best | worst
    # Per group: the best in rank order, then the worst from the very worst up.
    order = np.lexsort((np.where(best, rank, -rank)[chosen], worst[chosen], group[chosen]))
    picked = keys[chosen].iloc[order]
    out = frame.iloc[picked["_position"].to_numpy()].copy()
    out["slice"] = picked["slice"].to_numpy()
    out["kind"] = np.where(worst[chosen][order], "worst", "best")
    return label_ties(out.reset_index(drop=True), metric)


def _ranking_keys(
    frame: pd.DataFrame,
    succeeded: np.ndarray,
    column: str | None,
    metric: str,
    labels: pd.Series | None,
) -> pd.DataFrame:
    """The successful rows' model, slice, score, edits and prompt_id, with their positions."""
    ok = frame[["model", "prompt_id", metric, "algorithm1"]][succeeded]
    keys = pd.DataFrame(
        {
            "_position": np.flatnonzero(succeeded),
            "model": _sort_codes(ok["model"]),
            "_score": pd.to_numeric(ok[metric].astype(object), errors="coerce").astype(float),
            "_edits": pd.to_numeric(ok["algorithm1"].astype(object), errors="coerce").astype(float),
            "prompt_id": _sort_codes(ok["prompt_id"]),
        },
        index=ok.index,
    )
    if column:
        labels = slice_labels(frame[succeeded], column) if labels is None else labels[succeeded]
        keys["slice"] = labels.astype(str).to_numpy()
        keys["_slice_order"] = labels.cat.codes.to_numpy()
    else:
        keys["slice"], keys["_slice_order"] = "all", 0
    return keys


def _sort_codes(column: pd.Series) -> np.ndarray:
    """Each value's rank among the distinct values (missing last): sorts as the values do.

    >>> _sort_codes(pd.Series(["b", None, "a", "b"])).tolist()
    [1, 2, 0, 1]
    """
    codes, uniques = pd.factorize(column, sort=True)
    return np.where(codes < 0, len(uniques), codes)


def parse_boxes(raw: Any) -> list[list[tuple[float, float]]]:
    """OCR boxes from their JSON string; malformed or missing boxes give an empty list.

    >>> parse_boxes("[[[0, 0], [4, 0], [4, 2], [0, 2]]]")
    [[(0.0, 0.0), (4.0, 0.0), (4.0, 2.0), (0.0, 2.0)]]
    >>> parse_boxes("not json"), parse_boxes(None)
    ([], [])
    """
    if raw is None or (isinstance(raw, float) and np.isnan(raw)):
        return []
    try:
        data = json.loads(raw) if isinstance(raw, str) else raw
        return [[(float(x), float(y)) for x, y in box] for box in data if len(box) >= 3]
    except (TypeError, ValueError):
        return []


def thumbnail_with_boxes(
    source: Path, boxes: list[list[tuple[float, float]]], target: Path, side: int = THUMB_SIDE
) -> bool:
    """Draw ``boxes`` on a copy of ``source``, shrink it to fit ``side``, save JPEG at ``target``.

    Returns False (and writes nothing) when the image is missing or unreadable.
    """
    from PIL import ImageDraw

    shrunk = shrunk_copy(source, side)
    if shrunk is None:
        return False
    image, scale = shrunk
    draw = ImageDraw.Draw(image)
    for box in boxes:
        points = [(x * scale, y * scale) for x, y in box]
        draw.polygon(points, outline=BOX_COLOUR, width=2)
    with atomic_path(target) as tmp:
        image.save(tmp, format="JPEG", quality=88)
    return True


def write_thumbnails(
    examples: pd.DataFrame, out_dir: Path, max_images: int = 400
) -> list[dict[str, Any]]:
    """Write the thumbnails of selected examples; one dict per example for the HTML.

    Keys: model, slice, kind, prompt, text, ocr_text, ned, exact_match, algorithm1,
    image (path relative to ``out_dir``, or None when the image is missing), plain (the
    image is one flat colour: ``control:blank``'s, which the page frames and names so it
    does not look like a broken image).
    At most ``max_images`` thumbnails are written (the rest show text only).
    """
    items: list[dict[str, Any]] = []
    written = 0
    for row in examples.to_dict("records"):
        image_rel, plain = None, False
        rel = str(row.get("image_path") or "")
        if rel and written < max_images:
            run_dir = Path(str(row.get("run_dir") or "."))
            # the image stays inside its run (a reader view's: inside the run it views)
            source = inside(images_folder(run_dir), rel, source=run_dir / "results.parquet")
            name = hashlib.sha1(f"{row.get('run_dir')}|{rel}".encode()).hexdigest()[:16] + ".jpg"
            target = out_dir / "gallery" / name
            if thumbnail_with_boxes(source, parse_boxes(row.get("ocr_boxes")), target):
                image_rel = f"gallery/{name}"
                plain = is_plain(target)
                written += 1
        items.append(
            {
                "model": str(row["model"]),
                "slice": str(row["slice"]),
                "kind": row["kind"],
                "prompt": str(row.get("prompt") or ""),
                "text": str(row.get("text") or ""),
                "ocr_text": str(row.get("ocr_text") or ""),
                "ned": float(row["ned"]),
                "exact_match": bool(float(row["exact_match"]) >= 0.5),
                "algorithm1": float(row["algorithm1"]),
                "image": image_rel,
                "plain": plain,
            }
        )
    return items


def is_plain(path: Path, tolerance: int = 3) -> bool:
    """Whether the image at ``path`` is one flat colour (every channel within ``tolerance``).

    >>> import tempfile; from PIL import Image
    >>> target = Path(tempfile.mkdtemp()) / "white.jpg"
    >>> Image.new("RGB", (40, 20), "white").save(target)
    >>> is_plain(target)
    True
    """
    from PIL import Image

    with Image.open(path) as image:
        extrema: Any = image.convert("RGB").getextrema()  # one (low, high) per channel
    return all(int(high) - int(low) <= tolerance for low, high in extrema)


def label_ties(picks: pd.DataFrame, metric: str = "ned") -> pd.DataFrame:
    """Relabel as "tie" the picks no better or no worse than the other end's; "only" alone.

    Works on the picks alone: each (model, slice) group's picks hold its best and its
    worst image, so their scores span the group's. A score shared by a best and a worst
    pick, and every pick of a group whose picks all score the same (every blank image
    at NED 0, every render at 1), are ties; a "best" pick at the group's lowest score
    (a group smaller than 2k fills "best" first) is the worst; the single image of a
    group of one is "only", neither best nor worst.

    >>> picks = pd.DataFrame({"model": ["blank"] * 2 + ["m"] * 3 + ["two"] * 2,
    ...     "slice": "all", "kind": ["best", "worst", "best", "best", "worst", "best", "best"],
    ...     "ned": [0, 0, 1, 0, 0, 1, 0.5]})
    >>> label_ties(picks)["kind"].tolist()
    ['tie', 'tie', 'best', 'tie', 'tie', 'best', 'worst']
    """
    if picks.empty:
        return picks
    score = pd.to_numeric(picks[metric].astype(object), errors="coerce").astype(float)
    groups = [picks["model"], picks["slice"]]
    lowest = score.groupby(groups).transform("min")
    highest = score.groupby(groups).transform("max")
    size = score.groupby(groups).transform("size")
    best = picks["kind"].eq("best")
    keys = list(zip(picks["model"], picks["slice"], strict=True))
    scores_of: dict[tuple[Any, Any, bool], set[float]] = defaultdict(set)
    for key, value, is_best in zip(keys, score, best, strict=True):
        scores_of[(*key, bool(is_best))].add(value)
    shared = pd.Series(
        [
            value in scores_of[(*key, not is_best)]
            for key, value, is_best in zip(keys, score, best, strict=True)
        ],
        index=picks.index,
    )
    # A group smaller than 2k has only "best" picks: its lowest one is the worst image.
    kind = picks["kind"].where(~(best & (score <= lowest)), "worst")
    kind = kind.where(~(shared | (lowest == highest)), "tie").where(size > 1, "only")
    return picks.assign(kind=kind.to_numpy())
