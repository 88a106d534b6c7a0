"""The one bootstrap kernel (glyphbench.core.bootstrap).

Clusters, shared draws, aggregates, coverage.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from glyphbench.core.bootstrap import (
    Estimands,
    Grouping,
    cluster_codes,
    grouped_bootstrap,
    index_blocks,
    mean_interval,
    percentile_interval,
    resampled_means,
    share_bootstrap,
)
from glyphbench.report.stats import summarize
from glyphbench.scoring.table import METRICS, Derived, Metric, Ratio


def one_image_per_prompt(n_prompts: int = 60, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        {
            "model": "m",
            "prompt_id": [f"p{i:03d}" for i in range(n_prompts)],
            "seed": 0,
            "prompt_type": np.array(["simple", "complex", "real_world"])[np.arange(n_prompts) % 3],
            "ned": rng.uniform(0, 1, n_prompts).round(3),
            "exact_match": (rng.random(n_prompts) < 0.4).astype(float),
        }
    )


def test_a_prompt_drawn_twice_over_counts_as_one_prompt() -> None:
    """Every image duplicated (two identical seeds): the same prompts, so the same intervals."""
    single = one_image_per_prompt()
    doubled = pd.concat([single, single.assign(seed=1)], ignore_index=True)
    metrics = ["ned", "exact_match"]
    a = summarize(single, ["prompt_type"], metrics=metrics, n_boot=500, seed=3)
    b = summarize(doubled, ["prompt_type"], metrics=metrics, n_boot=500, seed=3)
    assert (b["n"] == 2 * a["n"]).all()
    for metric in metrics:
        assert b[metric].to_numpy() == pytest.approx(a[metric].to_numpy())
        # Same draws over the same prompts; each prompt's sums and counts are doubled.
        assert b[f"{metric}_lo"].tolist() == a[f"{metric}_lo"].tolist()
        assert b[f"{metric}_hi"].tolist() == a[f"{metric}_hi"].tolist()
    # Counting each image as independent evidence would claim narrower intervals.
    naive = summarize(
        doubled.assign(prompt_id=[f"q{i}" for i in range(len(doubled))]),
        ["prompt_type"],
        metrics=["ned"],
        n_boot=500,
        seed=3,
    )
    assert ((naive["ned_hi"] - naive["ned_lo"]) < (a["ned_hi"] - a["ned_lo"])).all()


@pytest.mark.slow
def test_prompt_clusters_cover_the_true_mean_where_images_alone_do_not() -> None:
    """Two seeds per prompt share the prompt's difficulty: resampling prompts keeps coverage."""
    rng = np.random.default_rng(5)
    trials, n_prompts, truth = 150, 40, 0.6
    hits = {"prompts": 0, "images": 0}
    for t in range(trials):
        difficulty = rng.normal(0, 0.2, n_prompts)
        ned = truth + np.repeat(difficulty, 2) + rng.normal(0, 0.05, 2 * n_prompts)
        frame = pd.DataFrame(
            {"model": "m", "prompt_id": np.repeat(np.arange(n_prompts), 2).astype(str), "ned": ned}
        )
        for name, table in (
            ("prompts", frame),
            ("images", frame.assign(prompt_id=np.arange(2 * n_prompts).astype(str))),
        ):
            row = summarize(table, metrics=["ned"], n_boot=300, seed=t).iloc[0]
            hits[name] += row.ned_lo <= truth <= row.ned_hi
    assert 0.89 <= hits["prompts"] / trials <= 0.99, hits
    assert hits["images"] / trials < 0.89, hits  # too narrow: about 84% expected


def test_groupings_share_one_draw() -> None:
    rng_values = np.random.default_rng(1).uniform(size=(50, 2))
    clusters = cluster_codes(np.repeat(np.arange(25), 2), 50)
    estimands = Estimands(["a", "b"])
    overall = Grouping(np.zeros(50, dtype=np.int64), 1)
    halves = Grouping(np.arange(50) % 2, 2)
    together = grouped_bootstrap(
        rng_values,
        [overall, halves],
        estimands=estimands,
        n_boot=300,
        rng=np.random.default_rng(9),
        clusters=clusters,
    )
    alone = grouped_bootstrap(
        rng_values,
        [overall],
        estimands=estimands,
        n_boot=300,
        rng=np.random.default_rng(9),
        clusters=clusters,
    )
    np.testing.assert_array_equal(together[0], alone[0])
    assert together[1].shape == (300, 2, 2)
    # A cluster holds one row of each half: both halves are drawn in every resample.
    assert not np.isnan(together[1]).any()


def test_pooled_ratios_and_derived_aggregates_per_resample() -> None:
    values = np.array([[3.0, 4.0, 0.5], [1.0, 4.0, 1.0], [0.0, 2.0, np.nan], [2.0, 2.0, 0.0]])
    aggregates = {
        "pooled": Ratio("hits", "words"),
        "product": Derived(("pooled", "ned"), lambda p, n: p * n),
    }
    estimands = Estimands(["pooled", "ned", "product"], aggregates.get)
    assert estimands.columns == ("hits", "words", "ned")
    pooled, ned, product = estimands.point(values)
    assert pooled == pytest.approx(6 / 12)  # summed, not a mean of per-row ratios (0.625)
    assert ned == pytest.approx(0.5)  # the unknown cell is skipped
    assert product == pytest.approx(pooled * ned)
    boot = resampled_means(values, n_boot=400, rng=np.random.default_rng(2), estimands=estimands)
    np.testing.assert_allclose(boot[:, 2], boot[:, 0] * boot[:, 1], equal_nan=True)
    assert np.nanmin(boot[:, 0]) >= 0 and np.nanmax(boot[:, 0]) <= 1
    with pytest.raises(ValueError, match="derived from itself"):
        Estimands(["loop"], {"loop": Derived(("loop",), lambda x: x)}.get)


def test_summaries_use_the_metric_tables_aggregate() -> None:
    """A Ratio metric in the metric table is summarised as a pooled ratio with its interval."""
    record = Metric(
        "test_pooled_hits",
        None,
        label="Pooled hits",
        higher_is_better=True,
        doc="Matched words over all words, pooled.",
        family="test-report",
        aggregate=Ratio("hits", "words"),
    )
    frame = pd.DataFrame(
        {
            "model": "m",
            "prompt_id": [f"p{i}" for i in range(40)],
            "hits": np.arange(40) % 5,
            "words": np.full(40, 4) + np.arange(40) % 3,
        }
    )
    METRICS.add(record)
    try:
        row = summarize(frame, metrics=["test_pooled_hits"], n_boot=300).iloc[0]
    finally:
        METRICS.remove(record.name)
    assert row.test_pooled_hits == pytest.approx(frame["hits"].sum() / frame["words"].sum())
    assert row.test_pooled_hits_lo < row.test_pooled_hits < row.test_pooled_hits_hi


def test_share_of_clustered_flags_resamples_clusters() -> None:
    flags = np.array([1, 0, 0, 1, 0], dtype=bool)
    doubled = np.repeat(flags, 2)
    shares = share_bootstrap(
        doubled, n_boot=500, rng=np.random.default_rng(4), clusters=np.repeat(np.arange(5), 2)
    )
    means = resampled_means(flags.astype(float), n_boot=500, rng=np.random.default_rng(4))
    np.testing.assert_array_equal(shares, means[:, 0])


def test_mean_interval_of_clusters_and_edge_cases() -> None:
    values = np.random.default_rng(3).uniform(size=30)
    single = mean_interval(values, n_boot=400, rng=np.random.default_rng(1))
    doubled = mean_interval(
        np.repeat(values, 2),
        n_boot=400,
        rng=np.random.default_rng(1),
        clusters=np.repeat(np.arange(30), 2),
    )
    assert doubled == pytest.approx(single, abs=1e-12)
    assert mean_interval(np.array([2.0, np.nan]), n_boot=10, rng=np.random.default_rng(0)) == (
        2.0,
        2.0,
    )
    lo, hi = percentile_interval(np.full((5, 2), np.nan))
    assert np.isnan(lo).all() and np.isnan(hi).all()
    with pytest.raises(ValueError, match="confidence"):
        percentile_interval(np.zeros(3), 1.5)


def test_index_blocks_of_no_units_are_empty_resamples() -> None:
    # A human study whose two raters disagree everywhere has no labelled image: the
    # alignment bootstrap then draws resamples of zero images (it divided by zero before).
    blocks = list(index_blocks(np.random.default_rng(0), 0, 5))
    assert sum(len(picks) for _, picks in blocks) == 5
    assert all(picks.shape[1] == 0 for _, picks in blocks)


def test_tally_per_resample_matches_one_bincount(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many units are tallied resample by resample; the counts are the same."""
    from glyphbench.core import bootstrap

    indices = np.random.default_rng(3).integers(0, 5000, size=(7, 5000))
    for by_unit in (False, True):
        fast = bootstrap.tally(indices.copy(), by_unit=by_unit)
        monkeypatch.setattr(bootstrap, "_ROW_TALLY", 10**9)  # force the one-bincount path
        plain = bootstrap.tally(indices.copy(), by_unit=by_unit)
        monkeypatch.undo()
        assert fast.shape == plain.shape == ((5000, 7) if by_unit else (7, 5000))
        assert np.array_equal(fast, plain)
        assert fast.sum() == 7 * 5000


def test_known_counts_from_the_shortfall_are_the_product() -> None:
    """Known counts as full counts less the short units equal drawn.T @ known."""
    from glyphbench.core.bootstrap import _Shortfall

    rng = np.random.default_rng(4)
    known = np.full((400, 6), 2.0)
    known[rng.choice(400, 30, replace=False), rng.integers(0, 6, 30)] = 1.0
    known[5, :] = 0.0
    drawn = rng.poisson(1.0, (400, 9)).astype(float)
    short = _Shortfall.of(known)
    assert short is not None and short.rows.size <= 31
    assert np.array_equal(short.known(drawn), drawn.T @ known)
    assert _Shortfall.of(rng.integers(0, 3, (40, 2)).astype(float)) is None  # most units short


def test_grouped_bootstrap_with_many_units_and_failures_is_deterministic() -> None:
    """Many clusters (tallied per resample) and scattered unknowns: the same seed gives the
    same resamples, and every group's resampled mean stays within its values' range."""
    rng = np.random.default_rng(5)
    n = 6000
    values = rng.uniform(0, 1, (n, 2))
    values[rng.random(n) < 0.02, 0] = np.nan
    clusters = np.arange(n) % 4500
    codes = (clusters % 3).astype(np.int64)

    def run() -> np.ndarray:
        return grouped_bootstrap(
            values,
            [Grouping(codes, 3)],
            estimands=Estimands(["a", "b"]),
            n_boot=50,
            rng=np.random.default_rng(9),
            clusters=clusters,
        )[0]

    first, again = run(), run()
    assert np.array_equal(first, again)
    assert np.isfinite(first).all() and ((first >= 0) & (first <= 1)).all()
    point = np.nanmean(values[codes == 1, 0])
    assert abs(np.median(first[:, 0, 1]) - point) < 0.02


def test_pooling_one_row_clusters_equals_summing_them() -> None:
    """Clusters of one row are pooled by a scatter; the sums are bincount's
    (including -0.0 summed to 0.0 and NaN kept)."""
    from glyphbench.core.bootstrap import _pool

    rng = np.random.default_rng(6)
    columns = rng.normal(size=(500, 3))
    columns[3, 0], columns[7, 1] = -0.0, np.nan
    clusters = rng.permutation(500)
    pooled = _pool(clusters, columns)
    summed = np.column_stack(
        [np.bincount(clusters, weights=columns[:, j], minlength=500) for j in range(3)]
    )
    assert np.array_equal(pooled, summed, equal_nan=True)
    assert not np.signbit(pooled[clusters[3], 0])
    shared = clusters.copy()
    shared[0] = shared[1]  # one cluster of two rows: the summing path
    assert np.allclose(
        _pool(shared, np.nan_to_num(columns))[shared[1]].sum(), np.nan_to_num(columns[:2]).sum()
    )
