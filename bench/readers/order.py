"""Reading order: the order in which detected text boxes are joined into text.

Every engine returns its boxes in one of two orders, so ``Reading.text`` means the same
thing whichever engine produced it (an engine's own order — EasyOCR's detection
order, Tesseract's block/paragraph order — is discarded): :func:`reading_order`, lines
across the page, and :func:`block_order`, block by block (``rapidocr``'s default).

The line order's rule, in full:

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

import itertools
import math
import statistics
from collections.abc import Sequence
from typing import Literal

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


#: The orders a reader may join its boxes in: ``lines`` (:func:`reading_order`) and
#: ``blocks`` (:func:`block_order`).
Order = Literal["lines", "blocks"]

#: :func:`block_order`'s gaps, as multiples of the image's median box height: a horizontal
#: gap at least :data:`BLOCK_GAP` high parts blocks (cards, panels, sections), and a vertical
#: gap at least :data:`COLUMN_GAP` wide parts columns. Line spacing is about 0.2 to 0.6 of a
#: line's height, so neither is taken for a gap between the lines of one paragraph.
BLOCK_GAP = 1.0
COLUMN_GAP = 1.0

#: Columns whose lines mostly sit at the same heights (this share of the shorter column's
#: lines, and line counts at most one apart) and whose boxes are of one size (the tallest at
#: most :data:`ONE_SIZE` times the shortest) are the cells of a table's rows, read across;
#: columns with a heading taller than their text are cards, read one after another.
ROW_ALIGNED = 0.8
ONE_SIZE = 1.4

#: A page with a box tilted more than this many degrees (a stamp, a curved or rotated line)
#: has no columns to find: :func:`block_order` reads it as :func:`reading_order` does.
MAX_TILT = 10.0

Box = tuple[float, float, float, float]  # left, top, right, bottom


def _bounds(box: Sequence[Sequence[float]]) -> Box:
    if len(box) == 0:
        raise ValueError("a box needs at least one point")
    xs = [float(p[0]) for p in box]
    ys = [float(p[1]) for p in box]
    return min(xs), min(ys), max(xs), max(ys)


def _tilt(box: Sequence[Sequence[float]]) -> float:
    """Degrees from the horizontal of a box's first edge (a detector's top edge, left to
    right; an axis-aligned box given from another corner reads 0 or 90 and counts as
    level)."""
    if len(box) < 2:
        return 0.0
    (x0, y0), (x1, y1) = box[0][:2], box[1][:2]
    angle = abs(math.degrees(math.atan2(float(y1) - float(y0), float(x1) - float(x0)))) % 180.0
    angle = min(angle, 180.0 - angle)
    return 0.0 if angle > 90.0 - MAX_TILT else angle


def _gaps(spans: list[tuple[float, float, int]], least: float) -> list[tuple[float, float]]:
    """``(size, cut)`` of each gap of at least ``least`` between the union of ``spans``."""
    gaps: list[tuple[float, float]] = []
    spans = sorted(spans)
    reach = spans[0][1]
    for start, end, _ in spans[1:]:
        if start - reach >= least and start > reach:
            gaps.append((start - reach, (start + reach) / 2.0))
        reach = max(reach, end)
    return gaps


def _split(members: list[int], where: list[float], bounds: list[Box], axis: int) -> list[list[int]]:
    """``members`` parted at the cuts ``where`` by their boxes' start on ``axis`` (0: left
    edge, 1: top edge)."""
    cuts = sorted(where)
    parts: list[list[int]] = [[] for _ in range(len(cuts) + 1)]
    for i in members:
        parts[sum(bounds[i][axis] > cut for cut in cuts)].append(i)
    return [part for part in parts if part]


def _line_centres(members: list[int], bounds: list[Box], tolerance: float) -> list[float]:
    """Vertical centres of the lines of ``members`` (boxes within ``tolerance`` are a line)."""
    centres: list[float] = []
    for cy in sorted((bounds[i][1] + bounds[i][3]) / 2.0 for i in members):
        if centres and cy - centres[-1] <= tolerance:
            continue
        centres.append(cy)
    return centres


def _table_rows(columns: list[list[int]], bounds: list[Box], tolerance: float) -> bool:
    """Whether side-by-side ``columns`` are the cells of rows: their lines at the same heights,
    their boxes of one size."""
    for column in columns:
        heights = [bounds[i][3] - bounds[i][1] for i in column]
        if max(heights) > ONE_SIZE * min(heights):
            return False
    lines = [_line_centres(column, bounds, tolerance) for column in columns]
    for left, right in itertools.pairwise(lines):
        fewer, more = sorted((left, right), key=len)
        if len(more) - len(fewer) > 1:
            return False
        aligned = sum(any(abs(c - d) <= tolerance for d in more) for c in fewer)
        if aligned < ROW_ALIGNED * len(fewer):
            return False
    return True


def block_order(boxes: Sequence[Sequence[Sequence[float]]]) -> list[int]:
    """Indices of ``boxes`` read block by block: as a person reads cards, panels and columns.

    A recursive cut of the page by the empty bands between boxes (sizes in multiples of
    the image's median box height ``h``):

    1. where horizontal gaps at least :data:`BLOCK_GAP` ``h`` high cross the region, it
       is cut at each of them into blocks, read top to bottom;
    2. else, where vertical gaps at least :data:`COLUMN_GAP` ``h`` wide run down the whole
       region, it is cut into columns, read left to right, unless the columns' lines sit
       at the same heights (:data:`ROW_ALIGNED`) in boxes of one size (:data:`ONE_SIZE`):
       the cells of a table's rows, and a line the detector broke at a wide space, are
       read across, while cards (a heading over smaller text) are read one by one;
    3. else it is cut at its widest horizontal gap, if any, and each part is read in turn
       (so a column can start below a title that spans it);
    4. a region that cannot be cut is read as :func:`reading_order` reads it.

    Each block is cut again the same way. On a page of one column, or one with a box
    tilted more than :data:`MAX_TILT` degrees, it reads as :func:`reading_order` does;
    the person's rule it follows is that of the real set's readings
    (``tests/data/real_t2i/SOURCES.md``: blocks one after the other, a table row by row).
    A glyphbench convention (no source prescribes one).

    Two cards side by side, a title over three lines and a title over one, read card by
    card:

    >>> def box(x, y, w=40, h=10):
    ...     return [(x, y), (x + w, y), (x + w, y + h), (x, y + h)]
    >>> cards = [box(0, 0), box(100, 0), box(0, 14), box(100, 14), box(0, 28), box(0, 42)]
    >>> reading_order(cards), block_order(cards)
    ([0, 1, 2, 3, 4, 5], [0, 2, 4, 5, 1, 3])

    A table's rows stay rows:

    >>> table = [box(0, 0), box(100, 0), box(0, 14), box(100, 14)]
    >>> block_order(table)
    [0, 1, 2, 3]
    """
    if not boxes:
        return []
    if any(_tilt(box) > MAX_TILT for box in boxes):
        return reading_order(boxes)
    bounds = [_bounds(box) for box in boxes]
    height = statistics.median(b[3] - b[1] for b in bounds) or 1.0
    order: list[int] = []
    _read_region(list(range(len(boxes))), boxes, bounds, height, order)
    return order


def _read_region(
    members: list[int],
    boxes: Sequence[Sequence[Sequence[float]]],
    bounds: list[Box],
    height: float,
    order: list[int],
) -> None:
    """Append ``members`` to ``order`` in :func:`block_order`'s order.

    Regions wait on a stack, not in nested calls: a page of many lines is cut one gap at
    a time, and nesting that deep would exceed Python's recursion limit.
    """
    pending = [members]
    while pending:
        region = pending.pop()
        parts = _cut(region, bounds, height) if len(region) > 1 else []
        if len(parts) > 1:
            pending.extend(reversed(parts))  # the first part is read first
            continue
        local = reading_order([boxes[i] for i in region])
        order.extend(region[i] for i in local)


def _cut(members: list[int], bounds: list[Box], height: float) -> list[list[int]]:
    """The parts :func:`block_order` cuts a region of two or more boxes into (none: uncut)."""
    rows = [(bounds[i][1], bounds[i][3], i) for i in members]
    across = _gaps(rows, BLOCK_GAP * height)
    if across:
        return _split(members, [cut for _, cut in across], bounds, axis=1)
    down = _gaps([(bounds[i][0], bounds[i][2], i) for i in members], COLUMN_GAP * height)
    if down:
        columns = _split(members, [cut for _, cut in down], bounds, axis=0)
        if not _table_rows(columns, bounds, height / 2.0):
            return columns
    any_gap = _gaps(rows, 0.0)
    return _split(members, [max(any_gap)[1]], bounds, axis=1) if any_gap else []
