"""TextInVision: its templates x texts, selected by its own filter file, scored by its score.py.

Files (``--data DIR``): the public TextInVision folder (``all_prompts.csv``,
``all_texts.csv``, ``real_world_prompts.json``, ``config.json``). The prompts are
TextInVision's own selection: every template x text pair its filter file
(``config.json``, or ``?config=PATH``) keeps, built as
``glyphbench prompts --config`` builds it (:func:`glyphbench.prompts.select`). Scores: the four
columns of TextInVision's ``score.py`` (family ``textinvision``, ``--compat
reference``), next to glyphbench's own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import Field

from glyphbench import prompts
from glyphbench.core.errors import InputError
from glyphbench.core.registry import Options
from glyphbench.suites.base import Protocol, Subset, Suite, register_suite


class TextInVisionOptions(Options):
    """Options of the ``textinvision`` suite."""

    config: str = Field(
        default="config.json",
        description="TextInVision filter file (JSON5), relative to the data folder or absolute",
    )


def load_rows(folder: Path, subset: Subset, options: TextInVisionOptions) -> list[dict[str, Any]]:
    """The rows TextInVision's filter file selects (glyphbench ids kept as benchmark ids)."""

    config = Path(options.config)
    config = config if config.is_absolute() else folder / config
    if not config.is_file():
        raise InputError(config, "textinvision: filter file not found (give ?config=PATH)")
    selected = prompts.select(f"textinvision:{folder}", config=config)
    frame = selected.frame.rename(columns={"prompt_id": "benchmark_id"})
    keep = ["benchmark_id", "prompt", "text", "prompt_type", "subgroup"]
    records: list[dict[str, Any]] = frame[[c for c in keep if c in frame]].to_dict("records")
    return records


TEXTINVISION = register_suite(
    Suite(
        name="textinvision",
        title="TextInVision",
        summary="TextInVision's templates x texts as its filter file selects them; its "
        "score.py columns (longest match, LCS, Levenshtein, Algorithm 1)",
        subsets=(Subset("selection", "textinvision", prefix_ids=False),),
        protocol=Protocol(
            images_per_prompt=1,
            seeds=(0,),
            reader="easyocr",
            reader_note="TextInVision's score.py compares texts only; its repository fixes no "
            "reader, so glyphbench's default (EasyOCR) is the suite's",
            read_cell="text",
            file_naming="glyphbench's images/<model>/<prompt_id>_s<seed>_i<sample>.png",
            normalisation="score.py's rules: lower case for LCS, longest match and the smart "
            "Levenshtein; Algorithm 1 case-sensitive with its arguments swapped",
            seed_rule="model",
            seed_source="TextInVision's score.py compares texts; it fixes no generation seed",
        ),
        headline="score_algorithm1",
        load_rows=load_rows,
        data_help="the TextInVision data folder (all_prompts.csv, all_texts.csv, config.json)",
        paper="TextInVision (arXiv 2503.13730)",
        scorer="TextInVision score.py (see docs/metrics.md, compat 'reference')",
        options=TextInVisionOptions,
    )
)
