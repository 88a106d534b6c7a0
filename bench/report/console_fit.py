"""Console tables that fit the terminal: wrap at spaces, split the columns, or stack the rows.

Rich shrinks a table that is wider than the console by cutting cells (``imag…``,
``-0.1…``). :func:`fit_table` never lets it: each column is given at least its longest
word (a number, an interval's bound, a name), so a cell may wrap at a space but is never
cut; when the columns do not fit side by side they are split into several tables that
repeat the row's key columns, and when even the keys and one column do not fit, each row
is printed as ``header: value`` lines (``glyphbench human stats`` at 80 columns).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import RenderableType

    from glyphbench.templates import Table

#: A piece of a line that is never broken: an interval in brackets, or a run of non-spaces.
_WORD = re.compile(r"\[[^\]]*\]|\S+")

#: Columns a rich table spends besides its cells: a border and one space of padding each side.
_PER_COLUMN = 3


def cell_lines(text: str, ci: str = "") -> str:
    """A cell as the console shows it: the value, then its interval on a line of its own.

    >>> cell_lines("0.912", "[0.850, 0.960] nominal")
    '0.912\\n[0.850, 0.960] nominal'
    >>> cell_lines("n/a: every answer is the same")
    'n/a: every answer is the same'
    """
    return f"{text}\n{ci}" if ci else text


def _words(text: str) -> list[str]:
    """The pieces a line may be broken between (an interval's bounds stay one piece).

    >>> _words("0.912\\n[-0.100, 0.300] nominal")
    ['0.912', '[-0.100, 0.300]', 'nominal']
    """
    return [word for line in text.splitlines() for word in _WORD.findall(line)]


def natural_width(text: str) -> int:
    """The widest line of ``text``: its width unwrapped."""
    return max((len(line) for line in text.splitlines()), default=0)


def least_width(text: str) -> int:
    """The longest piece of ``text`` (:func:`_words`): the narrowest width that cuts nothing."""
    return max((len(word) for word in _words(text)), default=0)


def table_width(widths: Sequence[int]) -> int:
    """How wide a rich table with columns of ``widths`` is, its borders and padding included.

    >>> table_width([5, 10])
    22
    """
    return sum(widths) + _PER_COLUMN * len(widths) + 1


def column_groups(least: Sequence[int], keys: int, width: int) -> list[list[int]] | None:
    """Split the columns after the first ``keys`` into groups that fit ``width`` beside the keys.

    ``least[i]`` is column i's narrowest width (its longest word). None when the keys and
    any one column cannot fit side by side (the rows are then stacked).

    >>> column_groups([10, 20, 20, 20], keys=1, width=90)
    [[1, 2, 3]]
    >>> column_groups([10, 20, 20, 20], keys=1, width=60)
    [[1, 2], [3]]
    >>> column_groups([10, 70], keys=1, width=80) is None
    True
    >>> column_groups([90], keys=1, width=80) is None
    True
    """
    base = sum(least[:keys]) + _PER_COLUMN * keys + 1
    if base > width:
        return None
    groups: list[list[int]] = []
    used = base
    for index in range(keys, len(least)):
        need = least[index] + _PER_COLUMN
        if base + need > width:
            return None
        if not groups or used + need > width:
            groups.append([])
            used = base
        groups[-1].append(index)
        used += need
    return groups or [[]]


def part_widths(
    least: Sequence[int], natural: Sequence[int], keys: int, width: int
) -> list[tuple[list[int], list[int]]] | None:
    """The parts of a table no wider than ``width``: each part's columns and their widths.

    Each part shows the first ``keys`` columns, then a group of :func:`column_groups`;
    every column starts at ``least[i]`` and is widened towards ``natural[i]``, left to
    right, while the part has room. None when the rows must be stacked.

    >>> part_widths([5, 10, 10], [8, 20, 12], keys=1, width=80)
    [([0, 1, 2], [8, 20, 12])]
    >>> part_widths([5, 10, 10], [8, 20, 12], keys=1, width=30)
    [([0, 1], [8, 15]), ([0, 2], [8, 12])]
    """
    groups = column_groups(least, keys, width)
    if groups is None:
        return None
    parts = []
    for group in groups:
        shown = [*range(keys), *group]
        widths = [least[i] for i in shown]
        spare = width - (sum(widths) + _PER_COLUMN * len(shown) + 1)
        for position, index in enumerate(shown):  # widen towards natural, left to right
            extra = max(0, min(spare, natural[index] - widths[position]))
            widths[position] += extra
            spare -= extra
        parts.append((shown, widths))
    return parts


def fit_table(table: Table, title: str, width: int, keys: int = 1) -> list[RenderableType]:
    """``table`` (cells with their intervals) as rich tables no wider than ``width``.

    The first ``keys`` columns name the row and are repeated in every part. Each column
    gets its natural width when there is room, else at least its longest word.
    """
    from rich.table import Table as RichTable
    from rich.text import Text

    headers = list(table.columns)
    rows = [[cell_lines(cell.text, cell.ci) for cell in row] for row in table.rows]
    columns = list(zip(headers, *rows, strict=True)) if rows else [(h,) for h in headers]
    least = [max(least_width(text) for text in column) for column in columns]
    natural = [max(natural_width(text) for text in column) for column in columns]
    keys = min(keys, len(headers))
    layout = part_widths(least, natural, keys, width)
    if layout is None:
        return [stacked(headers, rows, keys, title)]
    parts: list[RenderableType] = []
    for number, (shown, widths) in enumerate(layout, start=1):
        name = title if len(layout) == 1 else f"{title} ({number} of {len(layout)})"
        part = RichTable(title=name, title_justify="left")
        for index, column_width in zip(shown, widths, strict=True):
            right = index >= keys
            part.add_column(
                headers[index],
                width=column_width,
                justify="right" if right else "left",
                overflow="fold",
            )
        for row in rows:
            part.add_row(*(Text(row[i]) for i in shown))
        parts.append(part)
    return parts


def stacked(
    headers: Sequence[str], rows: Sequence[Sequence[str]], keys: int, title: str
) -> RenderableType:
    """One block per row: its keys, then ``header: value`` lines (the console wraps them)."""
    from rich.text import Text

    lines = [Text(title, style="italic")]
    for row in rows:
        lines.append(Text(" / ".join(row[:keys]), style="bold"))
        for header, value in zip(headers[keys:], row[keys:], strict=True):
            lines.append(Text(f"  {header}: {value.replace(chr(10), ' ')}"))
    return Text("\n").join(lines)
