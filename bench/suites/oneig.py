"""OneIG-Bench, text dimension (English and Chinese): a VLM reads each cell of a 2x2 grid.

Files (``--data DIR``, a clone of OneIG-Bench/OneIG-Benchmark or a folder holding the
two files): ``scripts/text/text_content.csv`` (English: columns ``""`` (row number),
``id`` ("000".."199"), ``prompt_en``, ``text_content``) and ``text_content_zh.csv``
(``prompt_cn`` instead of ``prompt_en``). ``text_content`` is a Python list literal;
it is parsed as OneIG's ground truth is compared, after doubling its backslashes
(the only parse under which every row's spans survive), and the expected cell is
the spans joined by single spaces.

Grid: OneIG pastes a prompt's 4 images (seeds) row by row into one 2x2 image and
its scorer cuts it back into cells, dropping all-black cells (its padding for a
missing image). By default glyphbench reads each stored image on its own, the cells
being the prompt's images in sample order; ``?image_path=oneig`` reads what OneIG's
scorer reads instead (:func:`oneig_cells`: the grid through WebP, each cell through
JPEG), the stored PNGs unchanged. :func:`tile_grid` and :func:`split_grid` build and
cut OneIG's grid for anyone exporting to its layout.

>>> from PIL import Image
>>> cells = [Image.new("RGB", (8, 8), c) for c in ("red", "green", "blue")]
>>> grid = tile_grid(cells, columns=2, rows=2)
>>> grid.size, [cell.getpixel((0, 0)) for cell in split_grid(grid, columns=2, rows=2)]
((16, 16), [(255, 0, 0), (0, 128, 0), (0, 0, 255)])
"""

from __future__ import annotations

import ast
import csv
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field

from glyphbench.core.errors import InputError
from glyphbench.core.registry import Options
from glyphbench.models.layout import ImageLayout
from glyphbench.suites.base import (
    Protocol,
    ReaderPin,
    Subset,
    Suite,
    find_file,
    register_suite,
)
from glyphbench.suites.longtext import VLM_INSTRUCTION

if TYPE_CHECKING:
    from PIL import Image

_FILES = {"en": "text_content.csv", "zh": "text_content_zh.csv"}
_AT = "OneIG-Bench/OneIG-Benchmark@41b4983"
_SCORE = "scripts/text/text_score.py"
_PROMPT_COLUMN = {"en": "prompt_en", "zh": "prompt_cn"}


def parse_text_content(cell: str) -> list[str]:
    """OneIG's ``text_content`` cell as its list of spans (backslashes doubled first).

    >>> parse_text_content("['Open', 'Daily 9\\\\5']")
    ['Open', 'Daily 9\\\\5']
    """
    value = ast.literal_eval(cell.replace("\\", "\\\\"))
    if not isinstance(value, list):
        raise ValueError("text_content is not a list")
    return [str(item) for item in value]


def load_rows(folder: Path, subset: Subset, options: Any) -> list[dict[str, Any]]:
    """One row per line of the subset's CSV (see the module docstring)."""
    name = subset.files[0]
    path = find_file(folder, [name, f"scripts/text/{name}"], "oneig-text")
    prompt_column = _PROMPT_COLUMN[subset.name]
    with open(path, encoding="utf-8", newline="") as handle:
        reader = csv.DictReader(handle)
        missing = {"id", prompt_column, "text_content"} - set(reader.fieldnames or [])
        if missing:
            raise InputError(path, f"missing columns {sorted(missing)}", line=1)
        rows = []
        for record in reader:
            try:
                spans = parse_text_content(record["text_content"])
            except (ValueError, SyntaxError) as exc:
                problem = f"text_content is not a Python list literal ({exc})".splitlines()[0]
                raise InputError(path, problem, line=reader.line_num) from None
            rows.append(
                {
                    "benchmark_id": record["id"],
                    "prompt": record[prompt_column],
                    "text": " ".join(spans),
                    # text_score.py l. 51-55 counts the raw cell's words for its token limit
                    "benchmark_words": len(record["text_content"].split()),
                }
            )
    return rows


def tile_grid(images: Sequence[Image.Image], columns: int = 2, rows: int = 2) -> Image.Image:
    """OneIG's grid: images pasted row by row; missing ones are black cells of the first's size.

    (OneIG's own ``create_image_gallery`` swaps width and height, which only matters
    for images that are not square; this tiles by the true size.)
    """
    from PIL import Image

    if not images:
        raise ValueError("no images to tile")
    width, height = images[0].size
    grid = Image.new("RGB", (columns * width, rows * height))
    for index in range(columns * rows):
        cell = images[index] if index < len(images) else Image.new("RGB", (width, height))
        grid.paste(cell.convert("RGB"), ((index % columns) * width, (index // columns) * height))
    return grid


def split_grid(grid: Image.Image, columns: int = 2, rows: int = 2) -> list[Image.Image]:
    """OneIG's cells: ``width // columns`` x ``height // rows`` crops, row by row.

    All-black cells (exactly RGB 0, 0, 0: OneIG's padding for a missing image) are dropped.
    """
    width, height = grid.size[0] // columns, grid.size[1] // rows
    cells = []
    for row in range(rows):
        for column in range(columns):
            box = (column * width, row * height, (column + 1) * width, (row + 1) * height)
            cell = grid.crop(box)
            if cell.convert("RGB").getextrema() != ((0, 0), (0, 0), (0, 0)):
                cells.append(cell)
    return cells


def oneig_cells(
    images: Sequence[Image.Image], columns: int = 2, rows: int = 2
) -> list[Image.Image | None]:
    """Each grid position's cell as OneIG's VLM reads it, or None where OneIG drops it.

    OneIG's generation script saves the grid with ``image_gallery.save(f)`` to a
    ``.webp`` path (text2image.py:74-76), i.e. lossy WebP at PIL's default quality
    (80); its scorer opens that grid, crops it row by row into ``width // columns`` x
    ``height // rows`` cells, drops the all-black ones (``is_black_image``, every
    pixel RGB 0, 0, 0) and saves each kept cell as ``{i}.jpg`` with ``image.save(path)``
    (scripts/utils/utils.py:18-24, :26-57), i.e. JPEG at PIL's default quality (75),
    which the VLM then reads. This runs the same path in memory: :func:`tile_grid`,
    WebP, decode, crop, JPEG, decode; position ``i`` is the prompt's ``i``-th image
    (a missing one is OneIG's black padding, so it is None too).
    """
    import io

    from PIL import Image as PILImage

    grid = tile_grid(images, columns, rows)
    webp = io.BytesIO()
    grid.save(webp, format="WEBP")  # PIL's defaults, as OneIG's save(f) to a .webp path
    webp.seek(0)
    opened = PILImage.open(webp)
    opened.load()
    decoded = opened.convert("RGB")  # lossy WebP decodes as RGB already
    width, height = decoded.size[0] // columns, decoded.size[1] // rows
    cells: list[Image.Image | None] = []
    for row in range(rows):
        for column in range(columns):
            box = (column * width, row * height, (column + 1) * width, (row + 1) * height)
            cell = decoded.crop(box)
            if cell.getextrema() == ((0, 0), (0, 0), (0, 0)):  # utils.py:48-49: dropped
                cells.append(None)
                continue
            jpeg = io.BytesIO()
            cell.save(jpeg, format="JPEG")  # PIL's default quality 75, as OneIG's {i}.jpg
            jpeg.seek(0)
            read = PILImage.open(jpeg)
            read.load()
            cells.append(read)
    return cells


def oneig_image_path(images: Sequence[Image.Image], columns: int = 2, rows: int = 2) -> list[Any]:
    """The cells OneIG's scorer reads from a prompt's images (:func:`oneig_cells`, the
    dropped all-black ones left out), through its own file formats: WebP grid, JPEG cells.

    A run reads through this path with ``--suite "oneig-text?image_path=oneig"``
    (:mod:`glyphbench.run.grid_path`); by default glyphbench reads each stored PNG directly.
    """
    return [cell for cell in oneig_cells(images, columns, rows) if cell is not None]


#: Where the cells of ``image_path=oneig`` come from, in the protocol card's words.
IMAGE_PATH_NOTE = (
    "oneig: each prompt's 4 images pasted into a 2x2 grid saved as WebP (PIL default, "
    "quality 80; text2image.py:74-76), cut into cells, all-black cells dropped, each cell "
    "saved as JPEG (PIL default, quality 75; scripts/utils/utils.py:26-57) and read; the "
    f"stored PNGs are unchanged ({_AT})"
)


class OneigOptions(Options):
    """Options of the ``oneig-text`` suite."""

    image_path: Literal["as-generated", "oneig"] = Field(
        default="as-generated",
        description="what the reader reads: each stored PNG as generated, or (oneig) the "
        "cells of OneIG's 2x2 WebP grid re-saved as JPEG 75, as its scorer reads them",
    )

    def image_path_note(self) -> str:
        """What the reader reads, for the protocol card."""
        return IMAGE_PATH_NOTE if self.image_path == "oneig" else "each stored PNG as generated"


ONEIG = register_suite(
    Suite(
        name="oneig-text",
        title="OneIG-Bench (text)",
        summary="200 text-rendering prompts (EN, ZH), 4 seeds in a 2x2 grid read by Qwen2.5-VL; "
        "ED, CR, WAC and the text score",
        subsets=(
            Subset("en", "oneig", aliases=("english",), files=(_FILES["en"],)),
            Subset("zh", "oneig-zh", aliases=("chinese",), files=(_FILES["zh"],)),
        ),
        protocol=Protocol(
            images_per_prompt=4,
            seeds=(0,),
            reader="vlm:Qwen/Qwen2.5-VL-7B-Instruct?preset=oneig",
            reader_note="Qwen2.5-VL-7B-Instruct (transformers 4.50.0); max_new_tokens 256 when "
            "the raw text_content cell has more than 60 words, else 128; a grid's cells read in "
            "one batch, each saved as JPEG (PIL default quality 75) and read",
            instruction=VLM_INSTRUCTION,
            read_cell="text",
            file_naming="images/text/<model>/<id>.webp, one 2x2 grid of 4 seeds per prompt",
            grid=(2, 2),
            generation="4 images (different seeds) per prompt; resolution is the model's choice",
            normalisation="keep ASCII letters/digits, àâäéèêëîïôöùûüç, U+4E00-U+9FA5, whitespace; "
            "case-sensitive edit distance; max distance 100 (EN) / 50 (ZH)",
            reader_pins=(
                ReaderPin("vlm", model="Qwen/Qwen2.5-VL-7B-Instruct", source=f"{_AT} {_SCORE}:22"),
                ReaderPin("transformers", "4.50.0", source=f"{_AT} requirements.txt:3"),
            ),
            long_answer_words=60,
            seed_rule="model",
            seed_source=f"{_AT} README.md:110 ('4 images (with different seeds)'); "
            "text2image.py:55-56 calls the model's inference(prompt) without a seed",
        ),
        headline="oneig_text_score",
        load_rows=load_rows,
        layout=ImageLayout(
            "{id}",
            suffixes=(".webp", ".png", ".jpg", ".jpeg"),
            grid=(2, 2),
            source="OneIG-Bench/OneIG-Benchmark@41b4983 text2image.py: images/text/<model>/"
            "<id>.webp, a 2x2 gallery (grid = (2, 2)); scripts/text/text_score.py globs "
            "<image_dirname>/<model>/<id>* and scripts/utils/utils.py split_mxn_grid cuts it "
            "row by row; images:DIR is the <model> folder",
        ),
        data_help="a clone of OneIG-Bench/OneIG-Benchmark, or a folder holding text_content.csv "
        "and text_content_zh.csv",
        paper="OneIG-Bench (arXiv 2506.07977)",
        scorer="OneIG-Bench/OneIG-Benchmark@41b4983 scripts/text/text_score.py",
        options=OneigOptions,
    )
)
