"""The one HTML template environment: every page glyphbench writes is rendered here.

Templates live next to this module (``*.html.j2``): ``base.html.j2`` is the
layout (head, styles, header, body), ``macros.html.j2`` holds the table macro,
and each page extends the layout: ``report.html.j2`` (``glyphbench report``),
``vae_report.html.j2`` (``glyphbench vae``) and ``human_report.html.j2``
(``glyphbench human report``). Autoescaping is on for every template, so a
model name, a note or an OCR text can never inject markup.

Tables reach templates as :class:`Table` values (header texts and rows of
:class:`Cell`), built from DataFrames with :func:`table_from_frame`.

>>> page = render_string("{{ name }}", name="<script>")
>>> page
'&lt;script&gt;'
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glyphbench.core.terminal import printable

if TYPE_CHECKING:
    import jinja2
    import pandas as pd

FOLDER = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Cell:
    """One table cell: its text, an optional interval shown smaller after it, a CSS class."""

    text: str
    ci: str = ""
    cls: str = ""


@dataclass(frozen=True)
class Table:
    """A display table: column headers and rows of cells.

    ``row_headers``: the first cell of each row is a header cell (``<th>``).
    Without columns the table has no header row.
    """

    columns: Sequence[str]
    rows: Sequence[Sequence[Cell]]
    caption: str = ""
    row_headers: bool = False
    id: str = ""

    @property
    def numeric(self) -> list[bool]:
        """Per column: its cells are numbers (or dashes), so its header is right-aligned
        over them (a number must sit under its own header).

        >>> rows = [[Cell("x"), Cell("1", cls="num")], [Cell("y"), Cell("–", cls="na")]]
        >>> Table(["a", "b"], rows).numeric
        [False, True]
        """
        kinds = [[set(c.cls.split()) for c in row] for row in self.rows]
        return [
            any("num" in row[i] for row in kinds if i < len(row))
            and all({"num", "na"} & row[i] for row in kinds if i < len(row))
            for i in range(len(self.columns))
        ]


def table_from_frame(
    frame: pd.DataFrame,
    cell: Callable[[str, Any], Cell],
    *,
    index: str | None = None,
    label: Callable[[Any], str] = str,
    caption: str = "",
    id: str = "",
) -> Table:
    """A :class:`Table` of ``frame``: ``cell(column, value)`` formats each value.

    With ``index`` (its header text), the frame's index becomes the first,
    header column (labels through ``label``).

    >>> import pandas as pd
    >>> t = table_from_frame(pd.DataFrame({"a": [1.5]}, index=["x"]),
    ...                      lambda c, v: Cell(f"{v:.2f}"), index="name")
    >>> t.columns, [[c.text for c in row] for row in t.rows]
    (['name', 'a'], [['x', '1.50']])
    """
    columns = [label(c) for c in frame.columns]
    rows = []
    names = list(frame.columns)
    # object dtype keeps ints as ints (a float column would turn them into floats)
    for key, values in zip(frame.index, frame.astype(object).itertuples(index=False), strict=True):
        cells = [cell(str(c), v) for c, v in zip(names, values, strict=True)]
        rows.append([Cell(label(key)), *cells] if index is not None else cells)
    if index is not None:
        columns = [index, *columns]
    return Table(columns, rows, caption=caption, row_headers=index is not None, id=id)


@functools.lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The one Jinja environment (autoescape on for every template)."""
    import jinja2

    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(FOLDER)),
        autoescape=True,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=_shown,
    )


def _shown(value: Any) -> Any:
    r"""Text from files as a page shows it: a bidirectional override in a model's name
    ("\u202e") would reorder the rest of its sentence, an escape or an invisible character
    make two names look alike; they are written as ``\uXXXX``, as on the terminal
    (:func:`~glyphbench.core.terminal.printable`). Markup the templates built is theirs."""
    import markupsafe

    if isinstance(value, str) and not isinstance(value, markupsafe.Markup):
        return printable(value, newlines=True)
    return value


def render(template: str, **context: Any) -> str:
    """Render the named template of this folder with ``context``."""
    return environment().get_template(template).render(**context)


def render_string(source: str, **context: Any) -> str:
    """Render a template given as text, in the same (escaping) environment."""
    return environment().from_string(source).render(**context)
