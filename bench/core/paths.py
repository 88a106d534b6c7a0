"""Paths named by a file someone else wrote stay inside the folder they belong to.

A results table's ``image_path``, a study manifest's ``file``, an ``images:`` manifest's
``path``, an image set's metadata ``file``: each names a file relative to a folder (the
run, the study, the manifest's folder). Anyone who sends a run folder can write those
cells (and rewrite the table's checksum to match), so before a command reads, copies,
links or deletes what a cell names, :class:`Contained` resolves it (``..`` and symbolic
links included) and refuses one that leads outside its folder: one line naming the file,
the row and the cell, an :class:`~glyphbench.core.errors.InputError` (exit 2), raised
before anything is written.

>>> import tempfile
>>> run = Path(tempfile.mkdtemp())
>>> _ = (run / "images").mkdir(), (run / "images" / "a.png").write_bytes(b"")
>>> inside(run, "images/a.png", source="results.parquet", row=1) == (run / "images/a.png").resolve()
True
>>> try:
...     inside(run, "../planted.png", source="results.parquet", row=3)
... except InputError as exc:
...     print(str(exc).replace(str(run), "RUN")[:88], "...")
results.parquet [row 3]: image_path '../planted.png' leads outside RUN (a path must stay ...
"""

from __future__ import annotations

import os
from numbers import Integral
from pathlib import Path, PurePath
from typing import TYPE_CHECKING, NoReturn

from glyphbench.core.errors import InputError

if TYPE_CHECKING:
    import pandas as pd


def inside(
    folder: str | Path,
    name: object,
    *,
    source: str | Path | None,
    row: object = None,
    column: str = "image_path",
) -> Path:
    """The real path of ``name`` under ``folder``; an :class:`InputError` when it leads outside.

    One check; :class:`Contained` checks the cells of a whole column (parent folders
    resolved once).
    """
    return Contained(folder, source=source, column=column)(name, row)


class Contained:
    """Checks the cells of one column: each must name a file inside ``folder``.

    ``files=False``: the last part of each name is not looked at on disk (a merge, which
    opens no image: ``..`` and linked folders are still caught; a linked file is caught
    by the command that opens it). Names may be absolute when they lie inside.
    """

    def __init__(
        self,
        folder: str | Path,
        *,
        source: str | Path | None,
        column: str = "image_path",
        files: bool = True,
    ) -> None:
        self.folder = Path(folder)
        self.root = self.folder.resolve()
        self.source = source
        self.column = column
        self.files = files
        self._parents: dict[PurePath, Path] = {}

    def __call__(self, name: object, row: object = None) -> Path:
        """The real path ``name`` stands for, checked.

        ``row`` names the row in the error: a number (``row 3``) or words (``line 3``).
        """
        text = name if isinstance(name, str) else None
        if not text or "\0" in text:
            self._refuse(name, row, "is not a file name")
        try:
            real = self._real(PurePath(text))
        except (OSError, RuntimeError, ValueError):  # a loop of links, a name too long
            self._refuse(name, row, "cannot be resolved")
        if real == self.root or not real.is_relative_to(self.root):
            self._refuse(name, row, f"leads outside {self.folder}")
        return real

    def cells(self, cells: pd.Series) -> list[Path]:
        """The real path of each cell of a table's column, checked in order.

        A row is named by its index label plus one (a table read whole: its row number).
        """
        return [self(name, _row_number(label)) for label, name in cells.items()]

    def _real(self, pure: PurePath) -> Path:
        if pure.is_absolute() or ".." in pure.parts or len(pure.parts) < 2:
            return (self.folder / pure).resolve()
        parent = self._parents.get(pure.parent)
        if parent is None:  # a run's images share a few folders: each resolved once
            parent = self._parents[pure.parent] = (self.folder / pure.parent).resolve()
        path = parent / pure.name
        if self.files and os.path.islink(path):
            return path.resolve()
        return path

    def _refuse(self, name: object, row: object, problem: str) -> NoReturn:
        where = row if isinstance(row, str) or row is None else f"row {row}"
        raise InputError(
            self.source,
            f"{self.column} {name!r} {problem} (a path must stay inside its folder)",
            key=where,
        )


def _row_number(label: object) -> object:
    """A row as people count them: an integer index label plus one."""
    return int(label) + 1 if isinstance(label, Integral) else label
