"""One rule for ranks and comparisons (point 4).

Ranks come from the Holm-corrected paired comparisons, so a pair the comparison
table calls significantly different never shares a rank; slices below
``MIN_UNITS`` prompts carry no interval and no control verdict; the control chain
prints how equal values compare.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from glyphbench.core.bootstrap import MIN_UNITS
from glyphbench.core.io import write_checksum
from glyphbench.core.paired import holm_intervals
from glyphbench.report.analyse import Settings, analyse
from glyphbench.report.build import write_report
from glyphbench.report.compare import compare_models, rank_models
from glyphbench.report.display import control_display
from glyphbench.report.load import load_runs
from glyphbench.report.metric_info import metric_label
from glyphbench.report.slices import Slicing
from glyphbench.report.stats import summarize
from glyphbench.report.tables import display_summary
from tests.helpers.report_fixtures import build_run


def _paired_close_models(run: Path, n_prompts: int, gap: float) -> None:
    """Rewrite the run's NED so that ``a`` beats ``b`` by ``gap`` on every prompt (plus noise)
    while prompt difficulty spreads both means' intervals wide: the issue's situation."""
    path = run / "results.parquet"
    rows = pd.read_parquet(path)
    rng = np.random.default_rng(7)
    difficulty = dict(
        zip(sorted(rows["prompt_id"].unique()), rng.uniform(0.2, 0.9, n_prompts), strict=True)
    )
    base = rows["prompt_id"].map(difficulty).to_numpy()
    noise = rng.normal(0, 0.01, len(rows))
    shift = np.where(rows["model"] == "a", gap, 0.0)
    rows["ned"] = np.where(rows["error"] == "", np.clip(base + shift + noise, 0, 1), np.nan)
    rows.to_parquet(path)
    write_checksum(path)  # the table's sidecar follows the edit


@pytest.mark.slow
def test_a_pair_whose_paired_interval_excludes_zero_is_never_ranked_equal(tmp_path: Path) -> None:
    run = build_run(tmp_path / "run", n_prompts=40, models={"a": 0.1, "b": 0.1}, n_errors=0)
    _paired_close_models(run, 40, gap=0.034)
    write_report([run], tmp_path / "report", by=["prompt_type"], n_boot=1000)
    tables = tmp_path / "report" / "tables"
    summary = pd.read_csv(tables / "summary.csv").set_index("model")
    # The old rule's premise: the two means' own intervals overlap ...
    assert summary.loc["a", "ned_lo"] < summary.loc["b", "ned_hi"]
    pair = pd.read_csv(tables / "comparisons.csv").query("metric == 'ned'").iloc[0]
    # ... while the paired interval excludes zero: a is significantly better.
    assert pair["lo"] > 0 and pair["better"] == "a"
    ranking = pd.read_csv(tables / "ranking.csv").set_index("model")
    assert ranking.loc["a", "rank"] == 1 and ranking.loc["b", "rank"] == 2
    assert not ranking["tie"].any()
    shown = (tables / "ranking.md").read_text(encoding="utf-8")
    assert "1=" not in shown and "| 2 | b |" in shown


def _random_table(models: int, prompts: int, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    quality = rng.uniform(0.4, 0.6, models)
    difficulty = rng.uniform(-0.3, 0.3, prompts)
    frames = [
        pd.DataFrame(
            {
                "model": f"m{k}",
                "prompt_id": [f"p{i:02d}" for i in range(prompts)],
                "ned": np.clip(quality[k] + difficulty + rng.normal(0, 0.08, prompts), 0, 1),
                "exact_match": 0.0,
            }
        )
        for k in range(models)
    ]
    return pd.concat(frames, ignore_index=True)


@pytest.mark.parametrize("seed", range(6))
def test_ranks_never_contradict_the_comparisons(seed: int) -> None:
    frame = _random_table(models=5, prompts=30, seed=seed)
    models = sorted(frame["model"].unique())
    comparisons = compare_models(frame, models, ["ned"], n_boot=400, seed=seed)
    ranking = rank_models(summarize(frame, metrics=["ned"], n_boot=200), comparisons, "ned")
    rank = ranking.set_index("model")["rank"]
    for row in comparisons.itertuples():
        if row.significant:
            winner, loser = row.better, row.model_b if row.better == row.model_a else row.model_a
            assert rank[winner] < rank[loser], (winner, loser)
            # and the interval shown beside the verdict excludes zero
            assert row.holm_lo > 0 or row.holm_hi < 0
        else:
            assert row.holm_lo <= 0 <= row.holm_hi or math.isnan(row.holm_lo)


def test_holm_is_stricter_than_one_interval_per_pair() -> None:
    """Ten pairs with the same modest advantage: each alone excludes zero at 95%,
    the Holm family does not declare all ten."""
    rng = np.random.default_rng(3)
    boot = rng.normal(0.1, 0.045, (4000, 10))  # one-pair p about 0.026
    holm = holm_intervals(boot)
    assert (np.quantile(boot, 0.025, axis=0) > 0).all()
    assert not holm.significant.all()
    assert holm.confidence.max() == pytest.approx(1 - 0.05 / 10)


def test_pairs_with_too_few_shared_prompts_get_no_interval_and_no_verdict() -> None:
    frame = _random_table(models=2, prompts=MIN_UNITS - 1, seed=0)
    frame.loc[frame["model"] == "m0", "ned"] += 0.5  # a huge gap, on too few prompts
    row = compare_models(frame, ["m0", "m1"], ["ned"], n_boot=200).iloc[0]
    assert row["n_prompts"] == MIN_UNITS - 1
    assert math.isnan(row["lo"]) and not row["significant"] and row["better"] is None


def _sliced_run(tmp_path: Path) -> tuple[pd.DataFrame, Slicing]:
    """A run with controls, sliced by a column where one prompt is alone in its slice,
    and that prompt's controls out of order (render read as nothing)."""
    models = {
        "m": 0.1,
        "control:render": 0.0,
        "control:typo?rate=0.3": 0.3,
        "control:blank": 1.0,
    }
    run = build_run(tmp_path / "run", n_prompts=12, models=models, n_errors=0, with_images=False)
    frame = load_runs([run])
    lonely = sorted(frame["prompt_id"].unique())[0]
    frame["odd"] = np.where(frame["prompt_id"] == lonely, "alone", "crowd")
    broken = (frame["prompt_id"] == lonely) & (frame["model"] == "control:render")
    frame.loc[broken, ["ned", "exact_match"]] = 0.0
    return frame, Slicing.resolve(frame, ["odd"])


def test_one_row_slices_carry_no_badge_and_no_interval(tmp_path: Path) -> None:
    frame, slicing = _sliced_run(tmp_path)
    analysis = analyse(
        frame, slicing, Settings(n_boot=200, metrics=("algorithm1", "exact_match", "ned"))
    )
    table = analysis.slices["odd"]
    alone = table[table["odd"].astype(str) == "alone"]
    assert (alone["n"] == 1).all() and alone["ned_lo"].isna().all()
    assert alone["algorithm1_hi"].isna().all() and alone["error_rate_lo"].isna().all()
    shown = display_summary(alone, ["odd"], ["algorithm1"])
    cell = shown.iloc[0, -1]
    assert cell.endswith("(n = 1: too few)") and "[" not in cell
    check = next(c for c in analysis.control_checks if c.column == "odd")
    sanity = check.sanity.set_index("odd")
    assert sanity.loc["alone", "passed"] is None and sanity.loc["alone", "too_few"]
    assert sanity.loc["crowd", "passed"] is True
    assert analysis.verdict.n_failed == 0 and analysis.verdict.passed is True
    passed = control_display(check.sanity, ["odd"], ["ned"]).set_index("odd")["Passed"]
    assert passed["alone"] == "n = 1: too few"


@pytest.mark.slow
def test_the_page_shows_no_broken_badge_for_a_one_row_slice(tmp_path: Path) -> None:
    frame, _ = _sliced_run(tmp_path)
    run = tmp_path / "run"
    rows = pd.read_parquet(run / "results.parquet")
    rows = rows.merge(frame[["model", "prompt_id", "odd"]], on=["model", "prompt_id"])
    rows.loc[:, ["ned", "exact_match"]] = (
        frame.set_index(["model", "prompt_id"])
        .loc[list(zip(rows["model"], rows["prompt_id"], strict=True)), ["ned", "exact_match"]]
        .to_numpy()
    )
    rows.to_parquet(run / "results.parquet")
    write_checksum(run / "results.parquet")  # the table's sidecar follows the edit
    index = write_report([run], tmp_path / "report", by=["odd"], n_boot=200)
    html = index.read_text(encoding="utf-8")
    assert "broken in" not in html and "n = 1: too few" in html
    shown = (tmp_path / "report" / "tables" / "by_odd.md").read_text(encoding="utf-8")
    alone = [line for line in shown.splitlines() if "| alone |" in line]
    assert alone and all("[" not in line and "too few" in line for line in alone)


def test_equal_control_means_print_equals_or_at_most() -> None:
    sanity = pd.DataFrame(
        {
            "run": [""],
            "min_n": [12],
            "ned_means": [(0.0, 0.0, 0.0004, 0.9)],
            "ned_order": [True],
            "passed": [True],
        }
    )
    shown = control_display(sanity, [], ["ned"]).iloc[0]
    chain = shown[f"{metric_label('ned')} (blank → render)"]
    assert chain == "0.000 = 0.000 ≤ 0.000 < 0.900"
    assert "0.000 < 0.000" not in chain
