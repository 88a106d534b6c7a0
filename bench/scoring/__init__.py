"""Scoring engine: compare OCR output with the expected text.

Public API::

    from glyphbench.scoring import score_pairs, algorithm1, ned, anls, normalize
    from glyphbench.scoring import METRICS, Metric, Pair, register_metric   # the metric table

Every metric is one record in :data:`METRICS` (:mod:`glyphbench.scoring.table`) whose
function takes a :class:`Pair`; families live in their own modules
(:mod:`~glyphbench.scoring.glyphbench`, :mod:`~glyphbench.scoring.textinvision`,
:mod:`~glyphbench.scoring.vae`, ...). See ``docs/metrics.md`` for definitions and the
reference-compatibility mode.
"""

import importlib
from typing import TYPE_CHECKING, Any

# Imported now, not on first use: ``normalize`` is also a submodule's name, and importing
# that submodule would otherwise leave the module, not the function, on the package.
from glyphbench.scoring.normalize import COCO_TEXT_PUNCT, Normalization, normalize

if TYPE_CHECKING:
    from glyphbench.scoring import frame as pairs  # noqa: F401 (the module, by its old name)
    from glyphbench.scoring.frame import HIGHER_IS_BETTER, SCORE_COLUMNS, score_one, score_pairs
    from glyphbench.scoring.pair import ImagePair, Pair
    from glyphbench.scoring.string_metrics import (
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
    from glyphbench.scoring.table import METRICS, Metric, register_metric
    from glyphbench.scoring.textinvision import REFERENCE_COLUMNS, reference_scores

#: Name -> the module it lives in. The package face imports nothing until a name is used,
#: so ``import glyphbench.scoring.table`` does not pull in pandas through ``frame``.
_HOMES = {
    **dict.fromkeys(
        ("HIGHER_IS_BETTER", "SCORE_COLUMNS", "score_one", "score_pairs"),
        "glyphbench.scoring.frame",
    ),
    **dict.fromkeys(("ImagePair", "Pair"), "glyphbench.scoring.pair"),
    **dict.fromkeys(
        (
            "algorithm1",
            "anls",
            "cer",
            "edit_distance",
            "exact_match",
            "lcs_len",
            "lom_len",
            "ned",
            "wer",
            "word_prf",
        ),
        "glyphbench.scoring.string_metrics",
    ),
    **dict.fromkeys(("METRICS", "Metric", "register_metric"), "glyphbench.scoring.table"),
    **dict.fromkeys(("REFERENCE_COLUMNS", "reference_scores"), "glyphbench.scoring.textinvision"),
}


def __getattr__(name: str) -> Any:
    """The public names, imported from their module on first use."""
    if name == "pairs":
        return importlib.import_module("glyphbench.scoring.frame")
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    if name not in ("SCORE_COLUMNS", "HIGHER_IS_BETTER"):  # those two follow the metric table
        globals()[name] = value
    return value


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
