"""LeX-Bench (LeX-Art): easy, medium and hard prompts, read by PaddleOCR; PNED and recall.

Files (``--data DIR``, the hub dataset ``X-ART/LeX-Bench``): ``lex_bench_easy.json``,
``lex_bench_medium.json`` and ``lex_bench_hard.json``, each a JSON list of objects
with ``prompt_idx`` ("0000"), ``text`` (list of strings), ``text_count``,
``caption``, ``enhanced_caption`` and (easy) ``color``/``font``/``position``. The
expected cell is the ``text`` items one per line, so an item with spaces stays one
item as LeX's scorer keeps it. ``?caption=enhanced`` prompts with the
LeX-Enhancer caption (the paper's ✓ columns), scored separately from ``simple``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

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
    read_json,
    register_suite,
)

LEVELS = ("easy", "medium", "hard")
_AT = "zhaoshitian/LeX-Art@48a80d5"


class LexOptions(Options):
    """Options of the ``lex`` suite."""

    caption: Literal["simple", "enhanced"] = Field(
        default="simple",
        description="prompt with the simple caption or LeX-Enhancer's enhanced_caption",
    )


def load_rows(folder: Path, subset: Subset, options: LexOptions) -> list[dict[str, Any]]:
    """One row per object of the level's JSON list."""
    name = subset.files[0]
    path = find_file(folder, [name, f"LeX-Bench/{name}"], "lex")
    records = read_json(path, "lex")
    if not isinstance(records, list):
        raise InputError(path, "expected a JSON list of prompt objects")
    column = "caption" if options.caption == "simple" else "enhanced_caption"
    rows = []
    for position, record in enumerate(records):
        missing = [k for k in ("prompt_idx", "text", column) if k not in record]
        if missing:
            raise InputError(path, f"item {position} lacks {', '.join(map(repr, missing))}")
        items = record["text"]
        if not isinstance(items, list):
            raise InputError(path, f"item {position}: 'text' must be a list of strings")
        rows.append(
            {
                "benchmark_id": str(record["prompt_idx"]),
                "prompt": str(record[column]),
                "text": "\n".join(str(item) for item in items),
                "subgroup": options.caption,
            }
        )
    return rows


LEX = register_suite(
    Suite(
        name="lex",
        title="LeX-Bench",
        summary="1,310 prompts in three levels (easy, medium, hard); PaddleOCR; PNED (lower "
        "is better) and recall",
        subsets=tuple(Subset(level, "lex", files=(f"lex_bench_{level}.json",)) for level in LEVELS),
        protocol=Protocol(
            images_per_prompt=1,
            seeds=(0,),
            reader="paddleocr?ocr_version=PP-OCRv3",
            reader_note="PaddleOCR PP-OCRv3 (evaluation/README.md l. 14-15: 'paddle-ocr-v3'); "
            "each line lower-cased and split on single spaces",
            # LeX splits each PaddleOCR box on U+0020 and counts the empty tokens an end or
            # double space leaves: the boxes as the engine gave them.
            read_cell="boxes",
            resolution=(1024, 1024),
            file_naming="{simple_caption|enhanced_caption}/42/{prompt_idx}.png",
            generation="one image per prompt and caption kind, 1024x1024, 50 steps, guidance 3.5, "
            "max_sequence_length 512, generator torch.Generator('cpu').manual_seed(0) "
            "(LeX-Art inference/lex_flux.py l. 10-15)",
            normalisation="lower case; PNED: Hungarian matching of tokens to items plus one per "
            "unmatched; recall: greedy match within NED 0.3",
            reader_pins=(
                ReaderPin(
                    "paddleocr",
                    model="PP-OCRv3",
                    source=f"{_AT} evaluation/README.md:14-15 ('paddle-ocr-v3')",
                ),
            ),
            seed_rule="fixed",
            seed_source=f"{_AT} inference/lex_flux.py:15 (manual_seed(0)); the example "
            "results' paths hold a folder 42 "
            "(evaluation/test_file_examples/lex_bench_easy_flux_dev.json:13) that no script "
            "here explains",
        ),
        headline="lex_pned",
        layout=ImageLayout(
            "final_{subset}/{caption}_caption/42/{id}",
            source="zhaoshitian/LeX-Art@48a80d5 evaluation/test_file_examples/"
            "lex_bench_easy_flux_dev.json: simple_image_path .../final_easy/simple_caption/42/"
            "0000.png (the scorer reads the paths its JSON lists; this is the layout they show)",
        ),
        load_rows=load_rows,
        data_help="the folder holding lex_bench_easy.json, lex_bench_medium.json, "
        "lex_bench_hard.json (hub X-ART/LeX-Bench)",
        hub="X-ART/LeX-Bench",
        paper="LeX-Art (arXiv 2503.21749)",
        scorer="zhaoshitian/LeX-Art@48a80d5 evaluation/cal_pned_and_recall.py",
        options=LexOptions,
    )
)
