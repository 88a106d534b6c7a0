"""Reading a run through a benchmark's own image path (OneIG's ``?image_path=oneig``).

OneIG-Bench never shows its reader the images a model made: its generation script
pastes a prompt's 4 images into a 2x2 grid saved as WebP (quality 80), and its
scorer cuts that grid into cells saved as JPEG (quality 75) before the VLM reads
them (:func:`glyphbench.suites.oneig.oneig_cells`, with the source lines). With
``--suite "oneig-text?image_path=oneig"`` a run reads those cells instead of the
stored PNGs, which stay as they were made:

* the rows are grouped by (model, prompt, seed): a prompt's samples, in sample
  order, make one grid; missing samples (a failed generation) are OneIG's black
  padding after the images made (text2image.py:60-70), and a cell OneIG drops
  (all black) gives its row an ``OCR:`` error, as OneIG reads nothing there;
* every problem that makes the grid impossible (not 4 images per prompt, images of
  different sizes, images that are not square: OneIG's gallery swaps width and
  height, text2image.py:8, so their cells are not the images) is one
  :class:`~glyphbench.core.errors.InputError` before anything is read or written;
* readings are kept in the run's reading store under a key of their own
  (``oneig-grid:`` + the SHA-256 of the four files and the cell's position), never
  under a stored PNG's SHA-256, so a reading of a cell is never taken for a reading
  of the image as generated, nor the other way round.

``glyphbench run`` (the images first, then this reading), ``glyphbench read`` and
``glyphbench rescore`` read such a run this way; the protocol card records the path
(``image_path``), and two runs that read through different paths are not comparable.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from glyphbench.core.errors import InputError
from glyphbench.core.schema import failed_mask, generated_mask
from glyphbench.engine import RunFolder
from glyphbench.run.reading_store import ReadingStore
from glyphbench.run.stages import Chunk, read_chunks, read_timed, reading_columns
from glyphbench.suites.oneig import oneig_cells
from glyphbench.suites.protocol import image_path, selection_of

if TYPE_CHECKING:
    from PIL import Image
    from rich.console import Console

    from glyphbench.engine import ReadingCache
    from glyphbench.readers.base import Reader
    from glyphbench.run.config import SuiteEntry

#: The error a row gets when OneIG's scorer drops its cell (all black after the WebP grid).
DROPPED = "OCR: DroppedCell: all black in OneIG's grid (utils.py:48-49 reads no such cell)"
_GROUP = ["model", "prompt_id", "seed"]


def image_path_of(suite: SuiteEntry | None) -> str | None:
    """The run's benchmark image path (``oneig``), or None: each PNG read as generated."""

    return image_path(selection_of(suite))


def grid_of(suite: SuiteEntry | None) -> tuple[int, int]:
    """(columns, rows) of the run's suite grid (OneIG: 2x2)."""

    selection = selection_of(suite)
    grid = selection.suite.protocol.grid if selection is not None else None
    return grid or (2, 2)


def grid_rereader(folder: RunFolder, rows: pd.DataFrame, suite: SuiteEntry | None) -> Any:
    """The rescore's reading step for a run read through a benchmark's grid, or None.

    Refuses (one line) rows that cannot make the grid, before the rescore writes.
    """
    from functools import partial

    if image_path_of(suite) is None:
        return None
    grid = grid_of(suite)
    check_groups(folder, rows, grid)
    return partial(grid_reread, grid=grid, checked=True)


def check_groups(folder: RunFolder, rows: pd.DataFrame, grid: tuple[int, int]) -> None:
    """Refuse, in one line, rows whose prompts cannot make the benchmark's grid.

    Reads the image headers (sizes) and hashes each file against its recorded
    SHA-256; nothing is written.
    """
    from PIL import Image

    cells = grid[0] * grid[1]
    made = rows[generated_mask(rows)]
    for key, group in made.groupby(_GROUP, sort=False):
        samples = group["sample_index"].astype(int)
        if samples.max() >= cells or samples.duplicated().any():
            raise InputError(
                folder.root,
                f"image_path=oneig: prompt {key[1]!r} (model {key[0]}, seed {key[2]}) has "
                f"samples {sorted(samples)}; OneIG's {grid[0]}x{grid[1]} grid holds {cells} "
                f"images per prompt (--images-per-prompt {cells})",
            )
        sizes = {}
        digests = group["image_sha256"] if "image_sha256" in group else [None] * len(group)
        for path, digest in zip(group["image_path"].astype(str), digests, strict=True):
            _check_file(folder.root / path, digest)
            with Image.open(folder.root / path) as image:
                sizes[path] = image.size
        first, size = next(iter(sizes.items()))
        for path, other in sizes.items():
            if other != size:
                raise InputError(
                    folder.root / path,
                    f"image_path=oneig: {other[0]}x{other[1]} where {first} of the same "
                    f"prompt is {size[0]}x{size[1]}; OneIG's grid needs one size per prompt",
                )
        if size[0] != size[1]:
            raise InputError(
                folder.root / first,
                f"image_path=oneig: {size[0]}x{size[1]} is not square; OneIG's gallery "
                "swaps width and height (text2image.py:8), so its cells would not be the "
                "images: read this run as generated",
            )


def _check_file(path: Path, digest: Any) -> None:
    """A stored image that is missing or changed since it was made: one line."""
    if not path.is_file():
        raise InputError(path, "image_path=oneig: the image is missing; nothing was read")
    if isinstance(digest, str) and hashlib.sha256(path.read_bytes()).hexdigest() != digest:
        raise InputError(
            path,
            "image_path=oneig: the image changed since it was generated (its SHA-256 "
            "differs from results.image_sha256); nothing was read",
        )


def grid_chunks(
    folder: RunFolder,
    rows: pd.DataFrame,
    reader: Reader,
    store: ReadingCache,
    wanted: pd.Series,
    grid: tuple[int, int],
) -> Iterator[Chunk]:
    """The grid path as a source of the read stage: per prompt, its wanted rows' cells read
    in one call of ``reader`` (as OneIG reads a grid); a cell OneIG drops gives its row
    the :data:`DROPPED` error here, unread."""
    identity = (reader.name, reader.version)
    for chunk in _grids(folder, rows, wanted, grid):
        readable = [(index, key, cell) for index, key, cell in chunk if cell is not None]
        for index, _, cell in chunk:
            if cell is None:
                for column, value in reading_columns(None, identity, float("nan")).items():
                    rows.at[index, column] = value
                rows.at[index, "error"] = DROPPED
        outcomes, seconds = read_timed(
            reader, [c for _, _, c in readable], store, [k for _, k, _ in readable]
        )
        yield Chunk(
            [index for index, _, _ in readable],
            outcomes,
            identity,
            seconds,
            covers=[index for index, _, _ in chunk],
        )


def grid_reread(
    folder: RunFolder,
    rows: pd.DataFrame,
    reader: Reader,
    step: int,
    progress: bool,
    console: Console | None,
    cache: ReadingCache | None = None,
    *,
    grid: tuple[int, int] = (2, 2),
    checked: bool = False,
) -> tuple[int, int, int]:
    """The rescore's reading step through OneIG's grid: every generated row of ``rows``
    read again (in place); a row read before that fails now keeps its earlier reading.

    Each prompt's cells are one reader call, so ``step`` (``--batch-size``) does not
    apply; it is taken for the rescore's signature. ``checked``: :func:`check_groups`
    has passed on ``rows`` already. Returns (cells read, failures, failed rows that
    kept their earlier reading).
    """
    if not checked:
        check_groups(folder, rows, grid)
    wanted = generated_mask(rows)
    store = cache if cache is not None else ReadingStore(folder.root, "rescore")
    totals = read_chunks(
        rows,
        grid_chunks(folder, rows, reader, store, wanted, grid),
        label="read OneIG grid cells",
        total=int(wanted.sum()),
        keep=~failed_mask(rows) & rows["ocr_text"].notna(),
        progress=progress,
        console=console,
    )
    return totals["read"], totals["errors"], totals["kept"]


def _grids(folder: RunFolder, rows: pd.DataFrame, wanted: pd.Series, grid: tuple[int, int]) -> Any:
    """Per prompt with a wanted row: (row index, store key, cell or None) of its wanted rows.

    One prompt's images are in memory at a time. OneIG reads a grid's cells in one
    batch (text_score.py:65), so each prompt's cells are one call of the reader.
    """

    made = rows[generated_mask(rows)]
    for _, group in made.groupby(_GROUP, sort=False):
        if not wanted[group.index].any():
            continue
        ordered = group.sort_values("sample_index")
        images, digests = _load(folder, ordered)
        cells = oneig_cells(images, *grid)
        base = hashlib.sha256("|".join(digests).encode())
        chunk = []
        for position, index in enumerate(ordered.index):
            if wanted[index]:
                key = base.copy()
                key.update(f"|{position}|{grid[0]}x{grid[1]}".encode())
                chunk.append((index, f"oneig-grid:{key.hexdigest()}", cells[position]))
        yield chunk


def _load(folder: RunFolder, group: pd.DataFrame) -> tuple[list[Image.Image], list[str]]:
    """A prompt's stored images in sample order, and their files' SHA-256 (as recorded;
    :func:`check_groups` checked them before anything was read)."""
    from PIL import Image

    images = []
    for path in group["image_path"].astype(str):
        with Image.open(folder.root / path) as image:
            images.append(image.convert("RGB"))
    return images, [str(d) for d in group["image_sha256"]]


def refuse_split_reading(what: str) -> None:
    """One line: a grid needs all of a prompt's images in one reader (no shares, no workers)."""
    raise InputError(
        what,
        "image_path=oneig reads each prompt's 4 images as one grid, in this process: "
        f"{what} does not go with it",
    )
