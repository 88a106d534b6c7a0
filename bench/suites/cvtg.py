"""CVTG-2K (TextCrafter): 2 to 5 text regions per prompt, read by PaddleOCR, pooled word scores.

Files (``--data DIR``, the unzipped ``CVTG-2K.zip``): ``CVTG/{2,3,4,5}.json`` and
``CVTG-Style/{2,3,4,5}.json`` (the README spells the second folder ``CVTG-style``;
folder names are matched without case), each ``{"data_list": [{"index", "prompt",
"carrier_list", "sentence_list", ...}]}``. The ground truth is every span between
single quotes in the prompt (the scorer's ``re.findall(r"'(.*?)'", prompt)``);
the expected cell joins the spans with single spaces. Subsets are ``CVTG/2`` ...
``CVTG-Style/5``: ``cvtg:3`` selects both types' 3-region files, ``cvtg:CVTG`` the
four files without style attributes. Hub dataset: ``dnkdnk/CVTG-2K``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glyphbench.core.errors import InputError
from glyphbench.models.layout import ImageLayout
from glyphbench.suites.base import (
    Protocol,
    ReaderPin,
    Subset,
    Suite,
    find_file,
    quoted_spans,
    read_json,
    register_suite,
)

TYPES = ("CVTG", "CVTG-Style")
AREAS = (2, 3, 4, 5)


def load_rows(folder: Path, subset: Subset, options: Any) -> list[dict[str, Any]]:
    """One row per ``data_list`` item of the subset's JSON file."""
    kind, name = subset.name.split("/")[0], subset.files[0]
    path = find_file(folder, [name, f"CVTG-2K/{name}"], "cvtg")
    data = read_json(path, "cvtg")
    items = data.get("data_list") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise InputError(path, "expected an object with a 'data_list' list")
    rows = []
    for position, item in enumerate(items):
        if not isinstance(item, dict) or "index" not in item or "prompt" not in item:
            raise InputError(path, f"data_list[{position}] lacks 'index' or 'prompt'")
        prompt = str(item["prompt"])
        rows.append(
            {
                "benchmark_id": str(item["index"]),
                "prompt": prompt,
                "text": " ".join(quoted_spans(prompt)),
                "subgroup": kind,
            }
        )
    return rows


CVTG = register_suite(
    Suite(
        name="cvtg",
        title="CVTG-2K",
        summary="2,000 prompts with 2-5 text regions (CVTG and CVTG-Style); PaddleOCR; word "
        "accuracy and NED pooled over words",
        subsets=tuple(
            Subset(f"{kind}/{area}", "cvtg", files=(f"{kind}/{area}.json",))
            for kind in TYPES
            for area in AREAS
        ),
        # The papers' per-region columns (e.g. Ovis-Image's WA "2 regions") pool both types
        # of that region count (docs/suites.md, "Published numbers").
        report_groups=tuple(
            (str(area), tuple(f"{kind}/{area}" for kind in TYPES)) for area in AREAS
        ),
        protocol=Protocol(
            images_per_prompt=1,
            seeds=(0,),
            reader="paddleocr",
            reader_note="PaddleOCR 2.10.0, PaddleOCR(use_angle_cls=True, lang='en'), "
            "en_PP-OCRv3 detector and en_PP-OCRv4 recogniser; lines lower-cased",
            read_cell="lines",
            resolution=(1024, 1024),
            file_naming="{type}/{area}/{index}.png",
            generation="one image per prompt, 1024x1024, seed 0",
            normalisation="lower case; a word is correct when it is among the read words; NED "
            "against difflib's closest read word, 1 - d/(max len + 1e-5)",
            reader_pins=(
                ReaderPin(
                    "paddleocr",
                    "2.10",
                    model="lang en",
                    source="zlab-princeton/i1@b58a62f install_paddle_deps.sh (paddleocr 2.10.0); "
                    "unified_metrics_eval.py:44 PaddleOCR(use_angle_cls=True, lang='en')",
                ),
            ),
            seed_rule="fixed",
            seed_source="NJU-PCALab/TextCrafter@023a313 TextCrafter_Flux/eval.py:26 (seed=0, "
            "the call at l. 104 passes none), textcrafter_pipeline_flux.py:847-848 "
            "(torch_fix_seed(seed) per image)",
        ),
        headline="cvtg_word_accuracy",
        load_rows=load_rows,
        layout=ImageLayout(
            "{subset}/{id}",
            numeric_ids=True,
            source="NJU-PCALab/TextCrafter@c097681 TextCrafter_Flux/eval.py: "
            "os.path.join(f'.../{benchmark}/{area}', f'{index}.png') for benchmark in "
            "CVTG, CVTG-Style",
        ),
        data_help="the unzipped CVTG-2K folder holding CVTG/ and CVTG-Style/",
        hub="dnkdnk/CVTG-2K",
        paper="TextCrafter (arXiv 2503.23461)",
        scorer="TextCrafter unified_metrics_eval.py (zlab-princeton/i1@b58a62f copy)",
        pools_subsets=True,
    )
)
