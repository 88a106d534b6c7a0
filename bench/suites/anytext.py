"""AnyText-benchmark: laion_word (English) and wukong_word (Chinese), sentence accuracy and NED.

Files (``--data DIR``, the unzipped AnyText-benchmark): ``benchmark/laion_word/test1k.json``
and ``benchmark/wukong_word/test1k.json`` (or the two folders directly), each
``{"data_root", "data_list": [{"img_name", "caption", "annotations": [{"polygon",
"valid", "text", "pos"}]}]}``. As AnyText's generation scripts do, annotations with
an empty polygon or ``valid: false`` are dropped, the first 20 lines are kept and
each is cut to 20 characters; the expected cell joins the lines with single spaces.

The prompt: AnyText conditions its own model on glyph images and positions, and
its captions mark each line's place with ``*``. A text-to-image model has no
layout input, so the prompt is AnyText's ``fill_caption`` form: the i-th ``*``
becomes the i-th line in double quotes; then ``, best quality, extremely
detailed`` is appended (AnyText's ``a_prompt``).
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
    read_json,
    register_suite,
)

PLACE_HOLDER = "*"
_AT = "tyxsspa/AnyText@3d4a260"
#: AnyText's ``a_prompt``, appended to every caption (eval/anytext_singleGPU.py).
ADDED_PROMPT = "best quality, extremely detailed"


def annotation_lines(annotations: list[dict[str, Any]]) -> list[str]:
    """The lines AnyText generates and scores: valid, with a polygon, first 20, 20 characters.

    >>> annotation_lines([{"polygon": [[0, 0]], "valid": True, "text": "x" * 25},
    ...                   {"polygon": [], "valid": True, "text": "dropped"},
    ...                   {"polygon": [[1, 1]], "valid": False, "text": "invalid"}])
    ['xxxxxxxxxxxxxxxxxxxx']
    """
    from glyphbench.scoring.anytext import (  # loads rapidfuzz: not for --help
        MAX_LINE_CHARS,
        MAX_LINES,
    )

    kept = [a for a in annotations if len(a.get("polygon") or []) and a.get("valid") is not False]
    return [str(a.get("text", ""))[:MAX_LINE_CHARS] for a in kept[:MAX_LINES]]


def filled_prompt(caption: str, lines: list[str]) -> str:
    """The caption with each ``*`` replaced by the next line in quotes, plus AnyText's suffix.

    >>> filled_prompt('a shop sign that reads * and *', ["OPEN", "24h"])
    'a shop sign that reads "OPEN" and "24h", best quality, extremely detailed'
    """
    for line in lines:
        caption = caption.replace(PLACE_HOLDER, f'"{line}"', 1)
    return caption.replace(PLACE_HOLDER, " ") + ", " + ADDED_PROMPT


def load_rows(folder: Path, subset: Subset, options: Any) -> list[dict[str, Any]]:
    """One row per ``data_list`` item of the subset's ``test1k.json``."""
    names = [f"benchmark/{subset.files[0]}", subset.files[0]]
    path = find_file(folder, names, "anytext")
    data = read_json(path, "anytext")
    items = data.get("data_list") if isinstance(data, dict) else None
    if not isinstance(items, list):
        raise InputError(path, "expected an object with a 'data_list' list")
    rows = []
    for position, item in enumerate(items):
        if not isinstance(item, dict) or "img_name" not in item or "caption" not in item:
            raise InputError(path, f"data_list[{position}] lacks 'img_name' or 'caption'")
        lines = annotation_lines(list(item.get("annotations") or []))
        rows.append(
            {
                "benchmark_id": Path(str(item["img_name"])).stem,
                "prompt": filled_prompt(str(item["caption"]), lines),
                "text": " ".join(lines),
            }
        )
    return rows


ANYTEXT = register_suite(
    Suite(
        name="anytext",
        title="AnyText-benchmark",
        summary="1,000 laion_word (EN) and 1,000 wukong_word (ZH) images' lines; sentence "
        "accuracy and NED over the recogniser's dictionary",
        subsets=(
            Subset(
                "laion_word",
                "anytext",
                aliases=("en", "english"),
                files=("laion_word/test1k.json",),
            ),
            Subset(
                "wukong_word",
                "anytext-zh",
                aliases=("zh", "chinese"),
                files=("wukong_word/test1k.json",),
            ),
        ),
        protocol=Protocol(
            images_per_prompt=4,
            seeds=(100,),
            reader="paddleocr",
            reader_note="ModelScope's damo/cv_convnextTiny_ocr-recognition-general_damo on each "
            "annotated line's polygon crop (eval/eval_dgocr.py l. 89; PP-OCR supplies only the "
            "dictionary, l. 44-47); glyphbench reads whole images with PaddleOCR and joins the "
            "lines",
            read_cell="lines",
            resolution=(512, 512),
            file_naming="{img_name stem}_{j}.jpg, j = 0..3",
            generation="4 images per prompt, 512x512, seed 100, 20 DDIM steps, scale 9; "
            "prompt = caption + ', best quality, extremely detailed'",
            normalisation="sentence accuracy: exact, case and whitespace count; NED over "
            "dictionary ids (printable ASCII for EN, ppocr_keys_v1 for ZH)",
            reader_pins=(
                ReaderPin(
                    "modelscope",
                    model="damo/cv_convnextTiny_ocr-recognition-general_damo",
                    source=f"{_AT} eval/eval_dgocr.py:89",
                ),
            ),
            seed_rule="batch",
            seed_source=f"{_AT} eval/anytext_singleGPU.py:31 (seed = 100), :152 "
            "(seed_everything(seed)), :185 (ddim_sampler.sample(ddim_steps, num_samples, ...): "
            "the 4 samples in one batch)",
        ),
        headline="anytext_sen_acc",
        layout=ImageLayout(
            "{id}_{k}",
            suffixes=(".jpg",),
            source="tyxsspa/AnyText@edb145d eval/eval_dgocr.py: os.path.join(img_dir, "
            "img_name.split('.')[0] + f'_{j}.jpg') for j in range(4)",
        ),
        load_rows=load_rows,
        data_help="the unzipped AnyText-benchmark folder holding benchmark/laion_word and "
        "benchmark/wukong_word",
        paper="AnyText (arXiv 2311.03054)",
        scorer="tyxsspa/AnyText@3d4a260 eval/eval_dgocr.py",
    )
)
