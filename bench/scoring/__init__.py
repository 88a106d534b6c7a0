"""Scoring engine: compare OCR output with the expected text.

Public API::

    from bench.scoring import score_pairs, algorithm1, ned, anls, normalize
    from bench.scoring import METRICS, Metric, Pair, register_metric   # the metric table

Every metric is one record in :data:`METRICS` (:mod:`bench.scoring.table`) whose
function takes a :class:`Pair`; families live in their own modules
(:mod:`~bench.scoring.glyphbench`, :mod:`~bench.scoring.textinvision`,
:mod:`~bench.scoring.vae`, ...). See ``docs/metrics.md`` for definitions and the
reference-compatibility mode.
"""

from typing import TYPE_CHECKING, Any

from bench.scoring import frame as pairs
from bench.scoring.frame import score_one, score_pairs
from bench.scoring.normalize import COCO_TEXT_PUNCT, Normalization, normalize
from bench.scoring.pair import ImagePair, Pair
from bench.scoring.string_metrics import (
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
from bench.scoring.table import METRICS, Metric, register_metric
from bench.scoring.textinvision import REFERENCE_COLUMNS, reference_scores

if TYPE_CHECKING:
    from bench.scoring.frame import HIGHER_IS_BETTER, SCORE_COLUMNS


def __getattr__(name: str) -> Any:
    """``SCORE_COLUMNS`` and ``HIGHER_IS_BETTER`` come from the metric table on first use."""
    if name in ("SCORE_COLUMNS", "HIGHER_IS_BETTER"):
        return getattr(pairs, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "COCO_TEXT_PUNCT",
    "HIGHER_IS_BETTER",
    "METRICS",
    "REFERENCE_COLUMNS",
    "SCORE_COLUMNS",
    "ImagePair",
    "Metric",
    "Normalization",
    "Pair",
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
    "register_metric",
    "score_one",
    "score_pairs",
    "wer",
    "word_prf",
]
