"""_page, _ratings: what several test modules share.

Here rather than in one of them: a test module never imports another.
"""

from __future__ import annotations

import math

import pandas as pd

from glyphbench.human_eval import stats as human_stats
from glyphbench.human_eval.report import Analysis, StudyFacts, render_page


def _ratings() -> pd.DataFrame:
    """Two raters on three images, a third rater on one: unbalanced (no Fleiss' kappa)."""
    return pd.DataFrame(
        {
            "image_id": ["a", "a", "b", "b", "c", "c", "c", "d"],
            "rater_id": ["R1", "R2", "R1", "R2", "R1", "R2", "R3", "R1"],
            "criterion": "text_accuracy",
            "value": [1, 1, 0, 1, 1, 1, 0, 1],
        }
    )


def _page(kendall: dict[str, dict[str, float]]) -> str:
    ratings = _ratings()
    agreement = human_stats.agreement(ratings, categories=[0, 1], n_boot=50)
    labels = human_stats.human_labels(ratings, "text_accuracy")
    manifest = pd.DataFrame(
        {"image_id": list("abcd"), "model": ["m1", "m1", "m2", "m2"], "ned": [1.0, 0.2, 0.9, 0.9]}
    )
    alignment = human_stats.metric_alignment(labels, manifest, metrics=["ned"], n_boot=50)
    analysis = Analysis(
        agreement=agreement,
        alignment=alignment,
        ranking=pd.DataFrame({"model": ["m1"], "n_images": [2], "human_score": [math.nan]}),
        kendall=kendall,
        raters=pd.DataFrame({"rater_id": ["R1"], "gold_accuracy": [math.nan], "reason": [""]}),
        labels=labels,
        per_image=pd.DataFrame(),
    )
    facts = StudyFacts("s", 4, 0, 3, 8, 2, "text_accuracy", "Is the text right?")
    return render_page(analysis, facts)
