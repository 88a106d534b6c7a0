"""LongText-Bench (X-Omni): long English and Chinese texts, read by a VLM, bag recall.

Files (``--data DIR``): ``text_prompts.jsonl`` (English) and ``text_prompts_zh.jsonl``
(Chinese) from X-Omni's ``textbench/`` folder, one JSON object a line with
``prompt_id`` (int), ``prompt``, ``text`` (list of strings), ``category``,
``length`` and ``text_length``. The expected cell is the ``text`` list joined by
single spaces, as X-Omni's scorer joins it. Hub dataset: ``X-Omni/LongText-Bench``.

>>> from glyphbench.suites.base import resolve_suite
>>> resolve_suite("longtext").families
{'en': 'longtext', 'zh': 'longtext-zh'}
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glyphbench.core.errors import InputError
from glyphbench.core.io import jsonl_records
from glyphbench.models.layout import ImageLayout
from glyphbench.suites.base import (
    Protocol,
    ReaderPin,
    Subset,
    Suite,
    find_file,
    register_suite,
    require,
)

#: The instruction X-Omni and OneIG give Qwen2.5-VL (one image per call).
VLM_INSTRUCTION = (
    "Recognize the text in the image, only reply with the text content, but avoid repeating "
    "previously mentioned content. If no text is recognized, please reply with "
    "'No text recognized'."
)

_FILES = {"en": "text_prompts.jsonl", "zh": "text_prompts_zh.jsonl"}
_AT = "X-Omni-Team/X-Omni@2b8237b"


def load_rows(folder: Path, subset: Subset, options: Any) -> list[dict[str, Any]]:
    """One row per line of the subset's JSONL file (see the module docstring)."""
    name = subset.files[0]
    path = find_file(folder, [name, f"textbench/{name}"], "longtext")
    rows = []
    with open(path, encoding="utf-8") as handle:
        for number, record in jsonl_records(handle, path):
            require(record, ("prompt_id", "prompt", "text"), path, number)
            texts = record["text"]
            if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
                raise InputError(path, "'text' must be a list of strings", line=number)
            if not isinstance(record["prompt"], str):
                raise InputError(path, "'prompt' must be a string", line=number)
            rows.append(
                {
                    "benchmark_id": _prompt_id(record["prompt_id"], path, number),
                    "prompt": record["prompt"],
                    "text": " ".join(texts),
                    "subgroup": record.get("category"),
                    "benchmark_length": record.get("length"),
                }
            )
    _check_language(rows, subset.name, path)
    return rows


def _check_language(rows: list[dict[str, Any]], subset: str, path: Path) -> None:
    """Refuse the other language's file under this subset's name (one renamed, or copied
    over the other): the English score counts words split at spaces, the Chinese one
    characters, so either file scored as the other gives numbers that mean nothing.

    The released files: every English text is in Latin letters, every Chinese one holds
    Chinese characters (9 of 160 also some Latin). A file is refused only when most of its
    texts are in the other script.
    """
    chinese = sum(any("\u4e00" <= ch <= "\u9fff" for ch in row["text"]) for row in rows)
    other, share = ("zh", chinese) if subset == "en" else ("en", len(rows) - chinese)
    if rows and share > len(rows) / 2:
        raise InputError(
            path,
            f"{share} of {len(rows)} texts are {'Chinese' if other == 'zh' else 'not Chinese'}"
            f": this is the {other} subset's file under the {subset} subset's name; give each "
            f"its own ({_FILES['en']} English, {_FILES['zh']} Chinese)",
        )


def _prompt_id(value: Any, path: Path, number: int) -> str:
    """The file's integer ``prompt_id`` (the released files' ids are 0-159) as text.

    >>> _prompt_id(7, Path("f"), 1), _prompt_id("7", Path("f"), 1)
    ('7', '7')
    """
    text = str(value).strip()
    if isinstance(value, bool) or not (isinstance(value, int) or text.isdigit()):
        raise InputError(path, f"'prompt_id' must be an integer, not {value!r}", line=number)
    return str(int(text))


LONGTEXT = register_suite(
    Suite(
        name="longtext",
        title="LongText-Bench",
        summary="long texts (EN, ZH) read by Qwen2.5-VL; pooled word (EN) or character (ZH) recall",
        subsets=(
            Subset("en", "longtext", aliases=("english",), files=(_FILES["en"],)),
            Subset("zh", "longtext-zh", aliases=("chinese",), files=(_FILES["zh"],)),
        ),
        protocol=Protocol(
            images_per_prompt=4,
            seeds=(0,),
            reader="vlm:Qwen/Qwen2.5-VL-7B-Instruct?preset=longtext",
            reader_note="Qwen2.5-VL-7B-Instruct, bf16, max_new_tokens 1024, one image per call "
            "(textbench/evaluate_text_reward.py l. 44-56); transformers 4.52.0 (README)",
            instruction=VLM_INSTRUCTION,
            read_cell="text",
            file_naming="{prompt_id}_{k}.png, k = 1..4 (the README pads ids to 4 digits; "
            "the scorer parses them with int())",
            generation="4 samples per prompt; resolution and seeds are the model's choice",
            normalisation="keep ASCII letters/digits, àâäéèêëîïôöùûüç, U+4E00-U+9FA5, whitespace; "
            "EN lower-cased word bags, ZH case-kept character bags",
            reader_pins=(
                ReaderPin(
                    "vlm",
                    model="Qwen/Qwen2.5-VL-7B-Instruct",
                    source=f"{_AT} textbench/evaluate_text_reward.py:31",
                ),
                ReaderPin(
                    "transformers",
                    "4.52.0",
                    source=f"{_AT} README.md:91 (requirements.txt:6 pins 4.51.3)",
                ),
            ),
            seed_rule="model",
            seed_source=f"{_AT} textbench/: the evaluation reads {{prompt_id}}_{{k}}.png and fixes "
            "no generation seed",
        ),
        headline="longtext_text_score",
        load_rows=load_rows,
        layout=ImageLayout(
            "{id}_{k}",
            first=1,
            numeric_ids=True,
            pad=4,
            source="X-Omni-Team/X-Omni@2b8237b README.md (LongText-Bench, 2. Sample results): "
            "'{prompt_id}_{repeat_id}.png', 0000_1.png..0199_4.png; textbench/"
            "evaluate_text_reward.py:103-106 globs *.png and takes int(fname.split('_')[0])",
        ),
        data_help="the folder holding text_prompts.jsonl and text_prompts_zh.jsonl "
        "(X-Omni textbench/)",
        hub="X-Omni/LongText-Bench",
        paper="X-Omni (arXiv 2507.22058)",
        scorer="X-Omni-Team/X-Omni@2b8237b textbench/summary_scores.py",
    )
)
