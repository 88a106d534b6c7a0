"""How a benchmark names its image files, for reading a folder it made (``images:DIR``).

The records live beside the models because the ``images`` model reads them; each suite
declares its :class:`ImageLayout`, and a suite run hands the ``images`` model a
:class:`SuiteLayout` through :class:`~glyphbench.models.base.RunContext` (the engine builds it),
so the models do not import the suites above them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ImageLayout:
    """How the benchmark's own evaluation folder names its images (``images:DIR`` reads it).

    ``pattern`` is a file's path relative to the folder, without its suffix, with the
    fields ``{id}`` (the benchmark's prompt id), ``{k}`` (the image's number, ``first``
    for a prompt's first image), ``{subset}`` (the subset's name, matched without
    case) and any suite option (``{caption}``). ``suffixes``: the file types the
    benchmark's code reads. ``grid`` (columns, rows): one file holds all of a
    prompt's images, cut row by row. ``numeric_ids``: the benchmark's code parses
    ids with ``int()``, so ``0007`` and ``7`` name one prompt. ``source`` cites the
    line of the benchmark's code or README that names the files.

    A pattern without ``{subset}`` may also be used inside a folder named as the
    subset (``en/0_1.png``); when several selected subsets share such a pattern
    (LongText's English and Chinese ids are both 0..199), only those folders are
    read, as a file at the top could belong to either.

    >>> ImageLayout("{id}_{k}", first=1, pad=4).example("7", 0, "en", {})
    '0007_1.png'
    """

    pattern: str
    first: int = 0
    suffixes: tuple[str, ...] = (".png",)
    grid: tuple[int, int] | None = None
    numeric_ids: bool = False
    #: Examples pad numeric ids with zeros to this width, as the benchmark shows them.
    pad: int = 0
    source: str = ""

    def example(
        self, benchmark_id: str, index: int, subset: str, options: Mapping[str, Any]
    ) -> str:
        """The file name this layout gives image ``index`` of one prompt."""
        shown = benchmark_id.zfill(self.pad) if benchmark_id.isdigit() else benchmark_id
        fields = {**options, "id": shown, "k": index + self.first, "subset": subset}
        return self.pattern.format(**fields) + self.suffixes[0]

    @property
    def described(self) -> str:
        """The layout in words, for errors and docs."""
        text = self.pattern + "|".join(self.suffixes)
        if self.grid is None:
            counted = f"{{k}} from {self.first}" if "{k}" in self.pattern else "one image a prompt"
            return f"{text} ({counted})"
        columns, rows = self.grid
        return f"{text}, one {columns}x{rows} grid of a prompt's images (row by row)"


@dataclass(frozen=True)
class SuiteLayout:
    """A suite run's image naming: its layout, the selected subsets and the suite options."""

    title: str
    layout: ImageLayout | None
    subsets: tuple[str, ...] = ()
    options: Mapping[str, Any] = field(default_factory=dict)
