"""Scoring engine: compare OCR output with the expected text.

Public API::

    from bench.scoring import score_pairs, algorithm1, ned, anls, normalize

See ``docs/metrics.md`` for definitions and the reference-compatibility mode.
"""

from bench.scoring.metrics import (
    algorithm1,
    anls,
    cer,
    edit_distance,
    exact_match,
    lcs_len,
    lom_len,
    ned,
    wer,
    word_prf,
)
from bench.scoring.normalize import COCO_TEXT_PUNCT, Normalization, normalize
from bench.scoring.pairs import HIGHER_IS_BETTER, SCORE_COLUMNS, score_one, score_pairs
from bench.scoring.reference import REFERENCE_COLUMNS, reference_scores

__all__ = [
    "COCO_TEXT_PUNCT",
    "HIGHER_IS_BETTER",
    "REFERENCE_COLUMNS",
    "SCORE_COLUMNS",
    "Normalization",
    "algorithm1",
    "anls",
    "cer",
    "edit_distance",
    "exact_match",
    "lcs_len",
    "lom_len",
    "ned",
    "normalize",
    "reference_scores",
    "score_one",
    "score_pairs",
    "wer",
    "word_prf",
]
