"""Figures show n and intervals, mark bins of fewer than 5 prompts and
keep the largest group (the heatmap once dropped "(none)", 34 of 40 prompts)."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd

from glyphbench.report import figures

GROUPS = ["Advertisements", "Posters", "Signs", "Logos", "Maps", "Scenes", "(none)"]


def summary() -> pd.DataFrame:
    rows = []
    for model, level in (("model", 0.4), ("control:render", 0.95)):
        for group in GROUPS:
            n = 34 if group == "(none)" else 1
            known = n >= 5
            rows.append(
                {
                    "model": model,
                    "group": group,
                    "n": n,
                    "n_prompts": n,
                    "ned": level,
                    "ned_lo": level - 0.05 if known else math.nan,
                    "ned_hi": level + 0.05 if known else math.nan,
                }
            )
    frame = pd.DataFrame(rows)
    frame["group"] = pd.Categorical(frame["group"], categories=GROUPS, ordered=True)
    return frame


def test_the_heatmap_keeps_the_largest_group_and_leaves_out_bins_of_one(tmp_path: Path) -> None:
    names = figures.heatmap(summary(), "group", "ned", ["model", "control:render"], tmp_path / "h")
    svg = (tmp_path / names[1]).read_text(encoding="utf-8")
    assert "(none) (n=34)" in svg
    assert "6 group values with fewer than 5 prompts left out" in svg
    assert "Posters" not in svg


def test_slice_figures_say_n_and_draw_points_without_an_interval_hollow(tmp_path: Path) -> None:
    names = figures.score_by_slice(
        summary(), "group", "ned", ["model", "control:render"], tmp_path / "s"
    )
    svg = (tmp_path / names[1]).read_text(encoding="utf-8")
    assert "(n=34)" in svg and "(n=1)" in svg
    assert "hollow: fewer than 5 prompts, no interval" in svg
    assert 'fill="none"' in svg or "fill: none" in svg  # the hollow markers


def test_the_heatmap_column_prefers_a_slicing_with_sizable_slices() -> None:
    from glyphbench.report.analyse import heat_column
    from glyphbench.report.slices import Slicing

    frame = pd.DataFrame(
        {"model": ["m"] * 12, "group": ["A"] + [None] * 11, "cefr": ["A1"] * 6 + ["B1"] * 6}
    )
    slicing = Slicing.resolve(frame, ["group", "cefr"])
    table = summary()
    cefr = pd.DataFrame(
        {"model": ["m", "m"], "cefr": ["A1", "B1"], "n": [6, 6], "n_prompts": [6, 6]}
    )
    assert heat_column(slicing, {"group": table, "cefr": cefr}) == "cefr"


def test_chinese_labels_draw_with_a_cjk_face_and_no_missing_glyph_warning(
    tmp_path: Path,
) -> None:
    """A model named in Chinese: before, matplotlib warned "Glyph 27169 missing from font(s)
    DejaVu Sans" and drew boxes; now the CJK face installed draws it (a machine without one
    draws boxes, without the warning)."""
    import warnings

    import numpy as np
    import pytest

    if figures.cjk_family() is None:
        pytest.skip("no CJK font installed (apt-get install fonts-noto-cjk)")
    values = {"模型 b": np.array([0.2, 0.5, 0.9]), "model a": np.array([0.4, 0.6, 0.7])}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a missing glyph would raise here
        names = figures.distributions(values, "ned", tmp_path / "d")
    svg = (tmp_path / names[1]).read_text(encoding="utf-8")
    assert "模型 b" in svg and figures.cjk_family() in svg  # the fallback face is named
