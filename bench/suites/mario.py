"""MARIO-Eval (TextDiffuser): six prompt subsets, keywords in single quotes; word P, R, F, accuracy.

Files (``--data DIR``, the ``MARIOEval`` folder): ``<Subset>/<Subset>.txt`` for
LAIONEval4000, TMDBEval500, OpenLibraryEval500, DrawBenchText, DrawTextCreative and
ChineseDrawText: one prompt a line; the benchmark id is the line's 0-based index
(the scorer's ``prompt_index``). The keywords are every span between single
quotes of the stripped, lower-cased line, split on whitespace; the expected cell
joins them with single spaces. The scorer pools every image of every subset.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glyphbench.suites.base import Protocol, Subset, Suite, find_file, register_suite

SUBSETS = (
    "LAIONEval4000",
    "TMDBEval500",
    "OpenLibraryEval500",
    "DrawBenchText",
    "DrawTextCreative",
    "ChineseDrawText",
)


def load_rows(folder: Path, subset: Subset, options: Any) -> list[dict[str, Any]]:
    """One row per line of ``<Subset>/<Subset>.txt`` (blank lines keep their index)."""
    from glyphbench.scoring.mario import mario_keywords  # loads rapidfuzz: not for --help

    name = subset.files[0]
    path = find_file(folder, [name, f"MARIOEval/{name}"], "mario")
    with open(path, encoding="utf-8", newline="") as handle:
        lines = handle.readlines()  # readlines() as the scorer: \n, \r\n or \r end a line
    rows = []
    for index, line in enumerate(lines):
        prompt = line.strip()
        if not prompt:
            continue
        rows.append(
            {
                "benchmark_id": str(index),
                "prompt": prompt,
                "text": " ".join(mario_keywords(line)),
            }
        )
    return rows


MARIO = register_suite(
    Suite(
        name="mario",
        title="MARIO-Eval",
        summary="5,414 prompts in six subsets (TextDiffuser); keyword precision, recall, F "
        "(of the means) and accuracy, pooled over all images",
        subsets=tuple(Subset(name, "mario", files=(f"{name}/{name}.txt",)) for name in SUBSETS),
        protocol=Protocol(
            images_per_prompt=4,
            seeds=(0,),
            reader="masktextspotterv3",
            reader_note="MaskTextSpotterV3 (alphabet 0-9a-z); one OCR result file per image, "
            "one word per line",
            read_cell="lines",
            resolution=(512, 512),
            file_naming="generation/<method>/<Subset>/images_<k>/<idx>_<k>.jpg",
            generation="4 images per prompt in one pipeline call, 512x512 (Stable Diffusion "
            "1.5: 50 steps)",
            normalisation="lines stripped and lower-cased; multiset match with the keywords; "
            "F = 2PR/(P+R+1e-8) of mean P and R",
            seed_rule="batch",
            seed_source="microsoft/unilm@159df56 textdiffuser/eval/MARIOEval_generate.py:114 "
            "(one CUDA generator, manual_seed(0), for every prompt of the script), :29 "
            "(a prompt's 4 images in one call, num_images_per_prompt=4, 50 steps)",
        ),
        headline="mario_f",
        load_rows=load_rows,
        data_help="the MARIOEval folder holding <Subset>/<Subset>.txt",
        paper="TextDiffuser (arXiv 2305.10855)",
        scorer="microsoft/unilm@159df56 textdiffuser/eval/ocr_eval.py",
        pools_subsets=True,
    )
)
