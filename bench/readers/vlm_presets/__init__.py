"""Presets of the ``vlm`` reader: an instruction, a token limit and what a refusal becomes.

A preset is chosen with ``vlm:...?preset=NAME``. Presets are records of the one
plug-in registry (:mod:`glyphbench.core.registry`, kind ``vlm-presets``): this module
registers the built-in ones (the benchmarks' exact settings, and glyphbench's own),
and adding one is a module in this package that calls :func:`register_preset`; the
registry imports every module here when a preset is first looked up, and the
reader's ``preset`` option then accepts the name (``glyphbench list readers`` shows
it). A name another module registered already is a
:class:`~glyphbench.core.registry.DuplicateName` error naming both (``replace=True``
overrides on purpose).

>>> PRESETS["longtext"].max_new_tokens, list(PRESETS)[:3]
(1024, ['plain', 'longtext', 'oneig'])
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Literal

from glyphbench.core.registry import PLUGINS

#: The instruction of LongText-Bench and OneIG-Bench (the same text in both).
BENCHMARK_INSTRUCTION = (
    "Recognize the text in the image, only reply with the text content, but avoid repeating "
    "previously mentioned content. If no text is recognized, please reply with "
    "'No text recognized'."
)

#: glyphbench's own instruction: transcribe, do not correct.
PLAIN_INSTRUCTION = (
    "Transcribe all the text in the image exactly as it is written, letter by letter, keeping "
    "any spelling mistakes; do not correct or complete words. Reply with the text only. If "
    "there is no text, reply with 'No text recognized'."
)


@dataclass(frozen=True)
class Preset:
    """An instruction, a token limit and what a refusal becomes (and, for a benchmark, more).

    ``long_answer`` (tokens): also keep the answer generated up to this longer limit,
    as the second piece of the reading; the suite's scorer takes it where the
    benchmark raises its limit (OneIG: truths of more than 60 words). ``batch_size``:
    images per ``generate()`` call where the benchmark fixes it (LongText: one).
    """

    instruction: str
    max_new_tokens: int
    no_text: Literal["keep", "empty"]
    note: str
    long_answer: int | None = None
    batch_size: int | None = None


#: Preset name -> record (live: the registry's ``vlm-presets`` kind).
PRESETS = PLUGINS.records("vlm-presets", Preset)


def register_preset(name: str, preset: Preset, *, replace: bool = False) -> Preset:
    """Register ``preset`` as ``name`` (call at import time of its module)."""
    module = str(sys._getframe(1).f_globals.get("__name__", ""))
    return PLUGINS.add_record(
        "vlm-presets", name, preset, summary=preset.note, module=module, replace=replace
    )


register_preset(
    "plain",
    Preset(PLAIN_INSTRUCTION, 512, "empty", "glyphbench: transcribe without correcting"),
)
# X-Omni textbench/evaluate_text_reward.py l. 44-56: one image per generate(), 1024 tokens.
register_preset(
    "longtext",
    Preset(
        BENCHMARK_INSTRUCTION,
        1024,
        "keep",
        "LongText-Bench: max_new_tokens=1024, one image a call",
        batch_size=1,
    ),
)
# OneIG scripts/text/text_score.py l. 51-55: 256 tokens where the raw truth cell has more
# than 60 whitespace-separated words, else 128; l. 65: a grid's cells in one batch.
register_preset(
    "oneig",
    Preset(
        BENCHMARK_INSTRUCTION,
        128,
        "keep",
        "OneIG-Bench: 128 tokens, and the answer at 256 kept for truths of > 60 words",
        long_answer=256,
    ),
)
