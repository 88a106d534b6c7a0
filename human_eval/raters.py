"""Rater quality: per rater, items, gold answers and accuracy, median seconds per item, and
an outlier flag with its reason (docs/human_eval.md, "Rater quality")."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd

#: Outlier rule: gold accuracy below this (with at least MIN_GOLD gold answers) ...
GOLD_ACCURACY_FLOOR = 0.6
MIN_GOLD = 3
#: ... or a median time per item below this fraction of the median rater's.
SPEED_FRACTION = 1 / 3


def rater_quality(ratings: pd.DataFrame, manifest: pd.DataFrame) -> pd.DataFrame:
    """Per rater: items, gold answers and accuracy, median seconds per item, outlier flag.

    ``ratings`` also needs ``seconds`` (per item; may be NaN). A rater is
    flagged when their accuracy on gold answers is below 0.6 (given at least
    3 gold answers), or their median seconds per item is below a third of the
    median over raters (clicking through without looking). ``reason`` says which.
    """
    gold = manifest[manifest["is_gold"].astype(bool)]
    expected = {
        (image_id, criterion): int(value)
        for image_id, answer in zip(gold["image_id"], gold["gold_answer"], strict=False)
        if answer
        for criterion, value in json.loads(answer).items()
    }
    rows = []
    for rater, part in ratings.groupby("rater_id", sort=True):
        keys = list(zip(part["image_id"], part["criterion"], strict=False))
        checked = [
            (int(v) == expected[k])
            for k, v in zip(keys, part["value"], strict=False)
            if k in expected
        ]
        seconds = (
            part.drop_duplicates("image_id")["seconds"]
            if "seconds" in part
            else pd.Series([], dtype=float)
        )
        rows.append(
            {
                "rater_id": rater,
                "n_items": int(part["image_id"].nunique()),
                "n_gold_answers": len(checked),
                "gold_accuracy": float(np.mean(checked)) if checked else math.nan,
                "median_seconds": float(seconds.median()) if seconds.notna().any() else math.nan,
            }
        )
    table = pd.DataFrame(
        rows, columns=["rater_id", "n_items", "n_gold_answers", "gold_accuracy", "median_seconds"]
    )
    typical = table["median_seconds"].median()
    reasons = []
    for _, row in table.iterrows():
        why = []
        if row["n_gold_answers"] >= MIN_GOLD and row["gold_accuracy"] < GOLD_ACCURACY_FLOOR:
            why.append(f"gold accuracy {row['gold_accuracy']:.2f} < {GOLD_ACCURACY_FLOOR}")
        if (
            pd.notna(typical)
            and pd.notna(row["median_seconds"])
            and row["median_seconds"] < SPEED_FRACTION * typical
        ):
            why.append(f"median {row['median_seconds']:.1f}s < 1/3 of typical {typical:.1f}s")
        reasons.append("; ".join(why))
    table["outlier"] = [bool(r) for r in reasons]
    table["reason"] = reasons
    return table
