"""Report statistics against hand-computed values, plus interval coverage."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glyphbench.core.bootstrap import MIN_UNITS, bootstrap_ci, mean_interval, resampled_means
from glyphbench.core.errors import InputError
from glyphbench.core.io import write_checksum
from glyphbench.report.compare import compare_models, paired_difference, rank_models
from glyphbench.report.controls import control_chain, control_sanity, ocr_ceiling, parse_control
from glyphbench.report.load import load_runs
from glyphbench.report.slices import (
    CHAR_LENGTH_BINS,
    FREQUENCY_BINS,
    WORD_COUNT_BINS,
    bin_numeric,
    slice_labels,
)
from glyphbench.report.stats import peer_views, summarize
from tests.helpers.report_fixtures import build_run


@pytest.fixture(scope="module")
def report_run(tmp_path_factory: pytest.TempPathFactory):
    return build_run(tmp_path_factory.mktemp("stats") / "run_a", n_prompts=24, with_images=False)


def small_table() -> pd.DataFrame:
    """Two models, two prompt types, one failed row; every number checkable by hand."""
    return pd.DataFrame(
        {
            "model": ["a", "a", "a", "a", "a", "b", "b", "b"],
            "prompt_id": ["p1", "p2", "p3", "p4", "p5", "p1", "p2", "p3"],
            "prompt_type": [
                "simple",
                "simple",
                "complex",
                "complex",
                "complex",
                "simple",
                "simple",
                "complex",
            ],
            "ned": [1.0, 0.5, 0.25, 0.75, None, 0.5, 0.5, 0.0],
            "exact_match": [1.0, 0.0, 0.0, 0.0, None, 0.0, 0.0, 0.0],
            "algorithm1": [0.0, 2.0, 3.0, 1.0, None, 2.0, 2.0, 5.0],
            "anls": [1.0, 0.5, 0.0, 0.75, None, 0.5, 0.5, 0.0],
            "word_f1": [1.0, 0.0, 0.0, 1.0, None, 0.0, 0.0, 0.0],
            "error": ["", "", "", "", "Generate: RuntimeError: boom", "", "", ""],
        }
    )


# --------------------------------------------------------------------------- slices


def test_summarize_matches_hand_computed_values() -> None:
    s = summarize(small_table(), ["prompt_type"], n_boot=2000, seed=1)
    got = {(r.model, r.prompt_type): r for r in s.itertuples()}
    a_simple = got[("a", "simple")]
    assert (a_simple.n, a_simple.n_errors) == (2, 0)
    assert a_simple.ned == pytest.approx(0.75)  # (1.0 + 0.5) / 2
    assert a_simple.exact_match == pytest.approx(0.5)
    assert a_simple.algorithm1 == pytest.approx(1.0)
    # Two prompts are fewer than MIN_UNITS: the mean stands, with no interval.
    assert a_simple.n_prompts == 2 < MIN_UNITS
    assert math.isnan(a_simple.ned_lo) and math.isnan(a_simple.ned_hi)
    a_complex = got[("a", "complex")]
    assert (a_complex.n, a_complex.n_errors) == (2, 1)  # the failed row is counted, not averaged
    assert a_complex.error_rate == pytest.approx(1 / 3)
    assert a_complex.ned == pytest.approx(0.5)  # (0.25 + 0.75) / 2, the failed row excluded
    assert a_complex.word_f1 == pytest.approx(0.5)
    b_simple = got[("b", "simple")]
    assert (b_simple.ned, b_simple.n_prompts) == (0.5, 2)
    b_complex = got[("b", "complex")]
    # A one-row slice: its mean, and no interval (not the old "0.000 [0.000, 0.000]").
    assert (b_complex.n, b_complex.n_prompts, b_complex.ned) == (1, 1, 0.0)
    assert math.isnan(b_complex.ned_lo) and math.isnan(b_complex.error_rate_lo)
    assert s.attrs == {"n_boot": 2000, "seed": 1, "confidence": 0.95}
    assert list(s["prompt_type"].astype(str)) == ["simple", "complex", "simple", "complex"]


def test_summarize_overall_and_seeded(monkeypatch) -> None:
    import glyphbench.report.stats as stats_module

    monkeypatch.setattr(stats_module, "MIN_UNITS", 2)  # intervals even for this tiny table
    table = small_table()
    first = summarize(table, n_boot=500, seed=3)
    again = summarize(table, n_boot=500, seed=3)
    pd.testing.assert_frame_equal(first, again)
    a = first.set_index("model").loc["a"]
    assert a["n"] == 4 and a["n_errors"] == 1
    assert a["ned"] == pytest.approx((1.0 + 0.5 + 0.25 + 0.75) / 4)
    assert a["ned_lo"] <= a["ned"] <= a["ned_hi"]
    # An interval does not depend on which other metrics are summarised alongside.
    only_ned = summarize(table, n_boot=500, seed=3, metrics=["ned"]).set_index("model").loc["a"]
    assert only_ned["ned_lo"] == a["ned_lo"]


def test_documented_bins() -> None:
    lengths = pd.Series([1, 5, 6, 10, 11, 20, 21, 50, 51, 400, None])
    assert bin_numeric(lengths, CHAR_LENGTH_BINS).tolist() == [
        "1-5",
        "1-5",
        "6-10",
        "6-10",
        "11-20",
        "11-20",
        "21-50",
        "21-50",
        "51+",
        "51+",
        "unknown",
    ]
    words = pd.Series([1, 2, 3, 4, 10, 11])
    assert bin_numeric(words, WORD_COUNT_BINS).tolist() == [
        "1",
        "2-3",
        "2-3",
        "4-10",
        "4-10",
        "11+",
    ]
    freq = pd.Series([0, 1, 9, 10, 99, 100, 999, 1_000, 9_999, 10_000, 100_000, 5_000_000])
    assert bin_numeric(freq, FREQUENCY_BINS).tolist() == [
        "0",
        "1-9",
        "1-9",
        "10-99",
        "10-99",
        "100-999",
        "100-999",
        "1k-9.9k",
        "1k-9.9k",
        "10k-99k",
        "100k+",
        "100k+",
    ]
    assert bin_numeric(pd.Series([0]), CHAR_LENGTH_BINS).tolist() == ["<1"]


def test_slice_labels_orders_and_missing_values() -> None:
    frame = pd.DataFrame(
        {
            "cefr": pd.Series(["C1", None, "A1", "B2"], dtype="string"),
            "rare": pd.Series([True, False, None, True], dtype="boolean"),
            "prompt_type": ["real_world", "simple", "complex", "simple"],
        }
    )
    cefr = slice_labels(frame, "cefr")
    assert list(cefr.cat.categories) == ["A1", "B2", "C1", "(none)"]
    assert slice_labels(frame, "rare").tolist() == ["yes", "no", "(none)", "yes"]
    assert list(slice_labels(frame, "prompt_type").cat.categories) == [
        "simple",
        "complex",
        "real_world",
    ]


# --------------------------------------------------------------------------- bootstrap


@pytest.mark.slow
def test_bootstrap_intervals_cover_the_true_mean_at_about_the_nominal_rate() -> None:
    rng = np.random.default_rng(2024)
    trials, n, true_mean = 400, 40, 3.0
    hits_ci = hits_matrix = 0
    for t in range(trials):
        sample = rng.normal(true_mean, 2.0, n)
        lo, hi = bootstrap_ci(sample, n_boot=400, seed=t)
        hits_ci += lo <= true_mean <= hi
        boot = resampled_means(sample[:, None], n_boot=400, rng=np.random.default_rng(t))
        lo2, hi2 = np.quantile(boot[:, 0], [0.025, 0.975])
        hits_matrix += lo2 <= true_mean <= hi2
    # Percentile intervals at n=40 run slightly below 95%; 400 trials give sd ~1.1 points.
    assert 0.90 <= hits_ci / trials <= 0.985
    assert 0.90 <= hits_matrix / trials <= 0.985


@pytest.mark.slow
def test_slice_intervals_of_summarize_cover_the_true_means() -> None:
    """The shared-resample path: slices of random size within each resample of a model."""
    rng = np.random.default_rng(11)
    trials, hits = 150, {"small": 0, "large": 0}
    truth = {"small": 0.6, "large": 0.8}
    for t in range(trials):
        sizes = {"small": 40, "large": 160}
        frame = pd.DataFrame(
            {
                "model": "m",
                "prompt_type": np.repeat(list(sizes), list(sizes.values())),
                "ned": np.concatenate([rng.normal(truth[s], 0.2, n) for s, n in sizes.items()]),
            }
        )
        table = summarize(frame, ["prompt_type"], metrics=["ned"], n_boot=300, seed=t)
        for row in table.itertuples():
            hits[row.prompt_type] += row.ned_lo <= truth[row.prompt_type] <= row.ned_hi
    for name, count in hits.items():
        assert 0.89 <= count / trials <= 0.99, (name, count / trials)


def test_slicings_with_very_many_slices_fall_back_to_one_bootstrap_per_slice(monkeypatch) -> None:
    import glyphbench.report.stats as stats_module

    monkeypatch.setattr(stats_module, "MIN_UNITS", 1)  # intervals even for one-row slices
    shared = summarize(small_table(), ["prompt_type"], n_boot=300)
    monkeypatch.setattr(stats_module, "_MAX_SLICE_MATRIX", 0)
    alone = summarize(small_table(), ["prompt_type"], n_boot=300)
    columns = ["model", "n", "n_errors", "error_rate", "ned", "algorithm1", "exact_match"]
    pd.testing.assert_frame_equal(shared[columns], alone[columns])
    assert (alone["ned_lo"] <= alone["ned"]).all() and (alone["ned"] <= alone["ned_hi"]).all()


def test_multinomial_shortcut_covers_a_proportion_at_about_the_nominal_rate() -> None:
    rng = np.random.default_rng(7)
    trials, n, p = 400, 200, 0.3
    hits = 0
    for _ in range(trials):
        sample = (rng.random(n) < p).astype(float)  # 2 distinct values: the multinomial path
        lo, hi = mean_interval(sample, n_boot=400, rng=rng)
        hits += lo <= p <= hi
    assert 0.90 <= hits / trials <= 0.985


def test_bootstrap_ci_edge_cases_and_custom_stat() -> None:
    assert bootstrap_ci([], n_boot=10) == (math.nan, math.nan) or all(
        math.isnan(v) for v in bootstrap_ci([])
    )
    assert bootstrap_ci([2.0, float("nan")], n_boot=10) == (2.0, 2.0)
    lo, hi = bootstrap_ci([1, 2, 3, 100], n_boot=2000, seed=0, stat=np.median)
    assert 1 <= lo <= hi <= 100
    assert bootstrap_ci([1.0, 2.0, 5.0], n_boot=300, seed=5) == bootstrap_ci(
        [1.0, 2.0, 5.0], n_boot=300, seed=5
    )


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.floats(-1e3, 1e3, allow_nan=False), min_size=2, max_size=30), st.integers(0, 1000)
)
def test_bootstrap_interval_lies_within_the_data(values: list[float], seed: int) -> None:
    lo, hi = bootstrap_ci(values, n_boot=200, seed=seed)
    assert min(values) - 1e-9 <= lo <= hi <= max(values) + 1e-9
    boot = resampled_means(np.array(values)[:, None], n_boot=200, rng=np.random.default_rng(seed))
    assert boot.min() >= min(values) - 1e-6 and boot.max() <= max(values) + 1e-6


# --------------------------------------------------------------------------- comparisons


def test_paired_difference_uses_only_shared_prompts() -> None:
    table = small_table()
    d = paired_difference(table, "a", "b", "ned", n_boot=1000)
    # Shared prompts with a score for both: p1, p2, p3 (a's p5 failed, b never saw p4).
    assert d["n_prompts"] == 3
    assert d["diff"] == pytest.approx(((1.0 - 0.5) + (0.5 - 0.5) + (0.25 - 0.0)) / 3)
    assert d["mean_a"] == pytest.approx((1.0 + 0.5 + 0.25) / 3)
    # Three shared prompts are fewer than MIN_UNITS: no interval, no verdict.
    assert math.isnan(d["lo"]) and math.isnan(d["hi"]) and not d["significant"]
    # algorithm1: lower is better, so a positive difference favours b.
    edits = paired_difference(
        pd.DataFrame(
            {
                "model": ["a"] * 5 + ["b"] * 5,
                "prompt_id": ["p1", "p2", "p3", "p4", "p5"] * 2,
                "algorithm1": [5.0, 6.0, 5.0, 7.0, 4.0, 0.0, 1.0, 0.0, 1.0, 0.0],
            }
        ),
        "a",
        "b",
        "algorithm1",
        n_boot=500,
    )
    assert edits["diff"] == pytest.approx(5.0) and edits["significant"] and edits["better"] == "b"


def test_compare_models_agrees_with_paired_difference(report_run) -> None:
    frame = load_runs([report_run])
    table = compare_models(frame, ["toy-good", "toy-bad", "control:render"], ["ned"], n_boot=400)
    assert len(table) == 3
    for row in table.itertuples():
        single = paired_difference(frame, row.model_a, row.model_b, "ned", n_boot=400)
        assert row.n_prompts == single["n_prompts"]
        assert row.diff == pytest.approx(single["diff"])
        assert row.lo == pytest.approx(single["lo"], abs=0.03) and row.hi == pytest.approx(
            single["hi"], abs=0.03
        )
    good_vs_bad = table[(table.model_a == "toy-good") & (table.model_b == "toy-bad")].iloc[0]
    assert good_vs_bad["better"] == "toy-good"


def test_rank_models_follows_the_paired_verdicts_and_direction() -> None:
    summary = pd.DataFrame(
        {
            "model": ["x", "y", "z"],
            "ned": [0.70, 0.90, 0.88],
            "ned_lo": [0.65, 0.85, 0.80],
            "ned_hi": [0.75, 0.95, 0.91],
            "algorithm1": [3.0, 1.0, 1.2],
            "algorithm1_lo": [2.5, 0.8, 1.1],
            "algorithm1_hi": [3.5, 1.05, 1.3],
        }
    )
    comparisons = pd.DataFrame(
        {
            "model_a": ["y", "y", "z"] * 2,
            "model_b": ["z", "x", "x"] * 2,
            "metric": ["ned"] * 3 + ["algorithm1"] * 3,
            "better": [None, "y", "z", "y", "y", "z"],
        }
    )
    ned = rank_models(summary, comparisons, "ned")
    assert ned["model"].tolist() == ["y", "z", "x"]
    assert ned["rank"].tolist() == [1, 1, 2]
    assert ned["tie"].tolist() == [True, True, False]
    assert ned["not_different_from"].tolist() == ["z", "y", ""]
    # The same summary, but y beats z: y's interval overlaps z's, yet they rank apart.
    edits = rank_models(summary, comparisons, "algorithm1")
    assert edits["model"].tolist() == ["y", "z", "x"]  # fewer edits first
    assert edits["rank"].tolist() == [1, 2, 3] and not edits["tie"].any()


def test_rank_models_never_ties_a_significant_pair_through_a_third_model() -> None:
    """x beats a, a beats b, x and b undecided: counting "models better" would rank a and b
    both 2nd; the chain rule ranks b below a."""
    summary = pd.DataFrame(
        {"model": ["x", "a", "b"], "ned": [0.9, 0.8, 0.7], "ned_lo": 0.0, "ned_hi": 1.0}
    )
    comparisons = pd.DataFrame(
        {
            "model_a": ["x", "x", "a"],
            "model_b": ["a", "b", "b"],
            "metric": "ned",
            "better": ["x", None, "a"],
        }
    )
    ranked = rank_models(summary, comparisons, "ned").set_index("model")
    assert ranked["rank"].to_dict() == {"x": 1, "a": 2, "b": 3}
    assert ranked.loc["b", "not_different_from"] == "x"


def test_peer_views_rename_to_peer_benchmark_columns() -> None:
    table = small_table().assign(
        word_precision=[1.0, 0.0, 0.0, 1.0, None, 0.0, 0.0, 0.0],
        word_recall=[1.0, 0.5, 0.0, 1.0, None, 0.0, 0.0, 0.0],
    )
    views = peer_views(table, n_boot=200)
    anytext = views["anytext"].set_index("model")
    assert anytext.loc["a", "sentence_acc"] == pytest.approx(0.25)
    assert anytext.loc["a", "ned"] == pytest.approx(0.625)
    mario = views["mario"].set_index("model")
    assert mario.loc["a", "recall"] == pytest.approx((1.0 + 0.5 + 0.0 + 1.0) / 4)
    assert {"precision", "recall", "f1", "f1_lo", "f1_hi"} <= set(mario.columns)


# --------------------------------------------------------------------------- controls


def test_control_chain_and_parsing() -> None:
    assert parse_control("control:typo?rate=0.05 [run-b]") == ("typo", 0.05, "run-b")
    chains = control_chain(
        [
            "control:render [r2]",
            "control:blank [r2]",
            "control:typo?rate=0.5 [r2]",
            "control:typo?rate=0.1",
            "control:render",
            "model",
        ]
    )
    assert chains == {
        "": ["control:typo?rate=0.1", "control:render"],
        "r2": ["control:blank [r2]", "control:typo?rate=0.5 [r2]", "control:render [r2]"],
    }


def _control_summary(ned_render: float) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "model": [
                "control:blank",
                "control:typo?rate=0.3",
                "control:typo?rate=0.1",
                "control:render",
                "m",
            ]
            * 2,
            "prompt_type": ["simple"] * 5 + ["complex"] * 5,
            "n": [10] * 10,
            "ned": [0.0, 0.6, 0.8, 0.95, 0.7, 0.0, 0.6, 0.8, ned_render, 0.5],
            "exact_match": [0.0, 0.0, 0.2, 0.9, 0.3, 0.0, 0.0, 0.1, 0.8, 0.1],
        }
    )


def test_control_sanity_passes_and_fails_per_slice() -> None:
    ok = control_sanity(_control_summary(0.9), ["prompt_type"])
    assert ok["passed"].tolist() == [
        True,
        True,
    ]  # exact match may tie at 0 between blank and typo 0.3
    broken = control_sanity(_control_summary(0.7), ["prompt_type"]).set_index("prompt_type")
    assert bool(broken.loc["simple", "passed"]) and not bool(broken.loc["complex", "passed"])
    assert broken.loc["complex", "ned_order"] is not None and not bool(
        broken.loc["complex", "ned_order"]
    )
    assert broken.loc["complex", "min_n"] == 10


def test_ocr_ceiling_per_slice() -> None:
    ceiling = ocr_ceiling(_control_summary(0.9), ["prompt_type"]).set_index("prompt_type")
    assert ceiling.loc["simple", "ceiling"] == pytest.approx(0.95)
    assert ceiling.loc["simple", "gap"] == pytest.approx(0.25)
    assert ceiling.loc["simple", "ocr_share"] == pytest.approx(0.05 / 0.3)
    assert ceiling.loc["complex", "ocr_share"] == pytest.approx(0.1 / 0.5)


def test_controls_hold_on_the_fixture_run(report_run) -> None:
    frame = load_runs([report_run])
    sanity = control_sanity(summarize(frame, n_boot=100))
    assert sanity["passed"].tolist() == [True]


# --------------------------------------------------------------------------- loading


def test_load_runs_combines_runs_and_rejects_disjoint_ones(tmp_path) -> None:
    a = build_run(
        tmp_path / "a", n_prompts=6, models={"m": 0.1, "control:render": 0.0}, with_images=False
    )
    b = build_run(tmp_path / "b", n_prompts=6, models={"m": 0.3}, with_images=False, seed=1)
    frame = load_runs([a, b])
    assert set(frame["run"]) == {"a", "b"}
    assert set(frame["model"]) == {"m [a]", "m [b]", "control:render [a]"}  # controls: per run
    assert frame.attrs["runs"]["a"]["meta"]["run_id"] == "a"
    other = tmp_path / "c"
    build_run(other, n_prompts=3, models={"m": 0.1}, with_images=False)
    results = pd.read_parquet(other / "results.parquet")
    results["prompt_id"] = "q" + results["prompt_id"].astype(str)
    results.to_parquet(other / "results.parquet")
    write_checksum(other / "results.parquet")  # the table's sidecar follows the edit
    with pytest.raises(InputError, match="share no prompts"):
        load_runs([a, other])
    with pytest.raises(InputError, match=r"no results\.parquet"):
        load_runs([tmp_path])
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "results.parquet").write_bytes(b"not parquet")
    with pytest.raises(InputError, match="cannot read"):
        load_runs([tmp_path / "bad"])
