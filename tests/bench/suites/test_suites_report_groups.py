"""CVTG-2K's per-region-count rows as report groups.

The papers' CVTG-2K tables print word accuracy per region count (Ovis-Image's "WA 2 regions"
...), each pooled over the CVTG and CVTG-Style files of that count; the report groups a run's
rows the same way and sets the published number beside glyphbench's.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from glyphbench.report.suites import analyse_suites, published_display
from glyphbench.scoring import score_pairs
from glyphbench.scoring.table import METRICS
from glyphbench.suites.base import resolve_suite


def _frame() -> pd.DataFrame:
    subsets = ["CVTG/2", "CVTG/2", "CVTG-Style/2", "CVTG-Style/2", "CVTG/3", "CVTG/3"]
    texts = ["OPEN late", "Fresh BREAD", "sale", "Quiet hours", "one two three", "a b c"]
    reads = ["open late", "fresh bred", "sale", "quiet", "one two three", "a c"]
    frame = pd.concat(
        [
            pd.DataFrame(
                {
                    "model": "Qwen-Image",
                    "prompt_id": [f"p{i}" for i in range(6)],
                    "suite": "cvtg",
                    "suite_subset": subsets,
                    "error": "",
                    "run": "r1",
                }
            ),
            score_pairs(texts, reads, families=["cvtg"]),
        ],
        axis=1,
    )
    frame.attrs["runs"] = {"r1": {"meta": {"protocol": {"reader": "x", "suite": {"spec": "cvtg"}}}}}
    return frame


def test_cvtg_declares_one_group_per_region_count() -> None:
    groups = dict(resolve_suite("cvtg").suite.report_groups)
    assert groups == {str(n): (f"CVTG/{n}", f"CVTG-Style/{n}") for n in (2, 3, 4, 5)}


def test_a_region_group_pools_both_types_and_meets_its_published_row() -> None:
    frame = _frame()
    (section,) = analyse_suites(frame, n_boot=200, seed=0, confidence=0.95)
    scores = section.scores.set_index("subset")
    # "3" is not shown: its CVTG-Style half is missing, so it is not the published group.
    assert list(scores.index) == ["CVTG/2", "CVTG/3", "CVTG-Style/2", "2", "all"]
    two = frame[frame["suite_subset"].str.endswith("/2")]
    want = METRICS.aggregate(two, ["cvtg_word_accuracy"], "cvtg")["cvtg_word_accuracy"]
    assert scores.loc["2", "cvtg_word_accuracy"] == pytest.approx(want)
    assert scores.loc["2", "cvtg_word_accuracy"] != pytest.approx(
        scores.loc["all", "cvtg_word_accuracy"]
    )
    shown = published_display(section)
    region = shown[shown["Subset"] == "2"]
    assert region["Published (as printed)"].tolist() == ["0.8370"]  # Ovis-Image's table
    assert region["Source"].str.startswith("AIDC-AI/Ovis-Image@").all()
    assert np.isin(["all"], shown["Subset"]).all()  # the pooled row is still compared
