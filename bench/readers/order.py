"""Reading order: the order in which detected text boxes are joined into text.

Every engine returns its boxes in this order, so ``Reading.text`` means the same
thing whichever engine produced it (an engine's own order — EasyOCR's detection
order, Tesseract's block/paragraph order — is discarded).

The rule, in full:

1. Each box is reduced to its vertical centre ``cy`` (mean of the smallest and
   largest y of its points), its height (largest y minus smallest y) and its left
   edge (smallest x).
2. The tolerance is half the median box height over all boxes of the image.
3. Boxes are visited top to bottom (by ``cy``, then left edge, then the points
   themselves, then input index).
   A box joins the existing line whose centre (mean ``cy`` of its boxes so far) is
   nearest to its own ``cy``, when that distance is at most the tolerance;
   otherwise it starts a new line.
4. Lines are read top to bottom (by their centre), the boxes of a line left to
   right (by left edge, then the points, then input index).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence

Point = tuple[float, float]


def _points(box: Sequence[Sequence[float]]) -> tuple[tuple[float, float], ...]:
    return tuple((float(p[0]), float(p[1])) for p in box)


def _geometry(box: Sequence[Sequence[float]]) -> tuple[float, float, float]:
    """(vertical centre, height, left edge) of a polygon given as points."""
    if len(box) == 0:
        raise ValueError("a box needs at least one point")
    ys = [float(p[1]) for p in box]
    xs = [float(p[0]) for p in box]
    top, bottom = min(ys), max(ys)
    return (top + bottom) / 2.0, bottom - top, min(xs)


def reading_order(boxes: Sequence[Sequence[Sequence[float]]]) -> list[int]:
    """Indices of ``boxes`` in reading order: lines top to bottom, boxes left to right.

    ``boxes`` holds one polygon per detection (usually 4 ``(x, y)`` corners). See
    the module docstring for the exact rule. The result is a permutation of
    ``range(len(boxes))``.

    Two words on one line given right word first, then a word on a line below:

    >>> right = [(60, 0), (100, 0), (100, 20), (60, 20)]
    >>> left = [(0, 2), (50, 2), (50, 22), (0, 22)]     # slightly lower, same line
    >>> below = [(0, 40), (40, 40), (40, 60), (0, 60)]
    >>> reading_order([below, right, left])
    [2, 1, 0]
    >>> reading_order([])
    []
    """
    if not boxes:
        return []
    geometry = [_geometry(box) for box in boxes]
    tolerance = statistics.median(g[1] for g in geometry) / 2.0

    # The points themselves break ties before the input index, so the result does
    # not depend on the order the engine listed its boxes in.
    points = [_points(box) for box in boxes]
    visit = sorted(range(len(boxes)), key=lambda i: (geometry[i][0], geometry[i][2], points[i], i))
    lines: list[list[int]] = []
    centres: list[float] = []  # running mean of cy per line
    for i in visit:
        cy = geometry[i][0]
        best: int | None = None
        best_distance = 0.0
        for n, centre in enumerate(centres):
            distance = abs(cy - centre)
            if distance <= tolerance and (best is None or distance < best_distance):
                best, best_distance = n, distance
        if best is None:
            lines.append([i])
            centres.append(cy)
        else:
            members = lines[best]
            centres[best] = (centres[best] * len(members) + cy) / (len(members) + 1)
            members.append(i)

    line_order = sorted(range(len(lines)), key=lambda n: (centres[n], min(lines[n])))
    order: list[int] = []
    for n in line_order:
        order.extend(sorted(lines[n], key=lambda i: (geometry[i][2], points[i], i)))
    return order
