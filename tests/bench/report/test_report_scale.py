"""The summary's one shared prompt draw (order-free, model-additive, failure-safe)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from glyphbench.report.stats import summarize_many


def table(models: dict[str, float], n_prompts: int = 80, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frames = []
    for name, quality in models.items():
        frames.append(
            pd.DataFrame(
                {
                    "model": name,
                    "prompt_id": [f"p{i:03d}" for i in range(n_prompts)],
                    "prompt_type": np.array(["simple", "complex"])[np.arange(n_prompts) % 2],
                    "ned": np.clip(rng.normal(quality, 0.2, n_prompts), 0, 1),
                    "error": "",
                }
            )
        )
    return pd.concat(frames, ignore_index=True)


def summaries(frame: pd.DataFrame) -> list[pd.DataFrame]:
    return summarize_many(frame, [[], ["prompt_type"]], metrics=["ned"], n_boot=300, seed=4)


def test_intervals_do_not_depend_on_row_order_or_on_other_models_on_the_same_prompts() -> None:
    two = table({"a": 0.7, "b": 0.4})
    shuffled = two.sample(frac=1.0, random_state=1).reset_index(drop=True)
    three = pd.concat([table({"c": 0.2}, seed=9), two], ignore_index=True)
    for left, right in zip(summaries(two), summaries(shuffled), strict=True):
        pd.testing.assert_frame_equal(left, right)
    for left, right in zip(summaries(two), summaries(three), strict=True):
        kept = right[right["model"] != "c"].reset_index(drop=True)
        pd.testing.assert_frame_equal(left, kept)


def test_a_failed_row_adds_nothing_to_the_means_of_its_model() -> None:
    frame = table({"a": 0.7, "b": 0.4})
    failed = frame.copy()
    first_a = failed.index[failed["model"] == "a"][0]
    failed.loc[first_a, "error"] = "Generate: RuntimeError: boom"
    before, after = summaries(frame)[0], summaries(failed)[0]
    a_rows = frame[(frame["model"] == "a")].iloc[1:]
    row = after.set_index("model").loc["a"]
    assert row["n"] == len(a_rows) and row["n_errors"] == 1
    assert row["ned"] == pytest.approx(a_rows["ned"].mean())
    assert row["ned_lo"] < row["ned"] < row["ned_hi"]
    # The other model's interval comes from the same draw of the same prompts: unchanged.
    b_before, b_after = before.set_index("model").loc["b"], after.set_index("model").loc["b"]
    assert (b_after["ned_lo"], b_after["ned_hi"]) == (b_before["ned_lo"], b_before["ned_hi"])
