"""Agreement and alignment statistics against hand-computed values and reference libraries."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glyphbench.human_eval import stats
from glyphbench.human_eval.raters import rater_quality


def long_ratings(
    table: Mapping[str, Sequence[int | None]], criterion: str = "text_accuracy"
) -> pd.DataFrame:
    """{image: [value per rater slot, None = not rated]} -> long ratings."""
    rows = [
        {"image_id": image, "rater_id": f"r{slot}", "criterion": criterion, "value": value}
        for image, values in table.items()
        for slot, value in enumerate(values)
        if value is not None
    ]
    return pd.DataFrame(rows)


# A small balanced design worked by hand (3 raters, 4 images):
#   i1: yes yes yes   i2: yes yes no   i3: no no no   i4: yes no no
HAND = {"i1": [1, 1, 1], "i2": [1, 1, 0], "i3": [0, 0, 0], "i4": [1, 0, 0]}


def test_hand_computed_balanced_design() -> None:
    row = stats.agreement(long_ratings(HAND), categories=[0, 1], n_boot=50).iloc[0]
    # Majority share per image: 1, 2/3, 1, 2/3 -> mean 5/6.
    assert row.percent_agreement == pytest.approx(5 / 6)
    # Agreeing pairs per image out of 3: 3, 1, 3, 1 -> mean 2/3.
    assert row.pairwise_agreement == pytest.approx(2 / 3)
    # 6 yes / 6 no: Pe(Fleiss) = 0.5 -> kappa = (2/3 - 1/2) / (1/2) = 1/3.
    assert row.fleiss_kappa == pytest.approx(1 / 3)
    # AC1: pi_yes = mean(1, 2/3, 0, 1/3) = 1/2 -> Pe = 2 * 1/4 / 1 = 1/2 -> 1/3 as well.
    assert row.gwet_ac1 == pytest.approx(1 / 3)
    # Alpha: n = 12, D = sum (9 - sum n^2) / 2 = (0 + 4 + 0 + 4) / 2 = 4,
    # expected = 144 - 72 = 72 -> alpha = 1 - 11 * 4 / 72.
    assert row.krippendorff_alpha == pytest.approx(1 - 44 / 72)
    assert row.n_images == 4 and row.n_ratings == 12 and bool(row.balanced)


def test_per_image_agreement_averages_to_the_study_value() -> None:
    ratings = long_ratings(HAND)
    per_image = stats.per_image_agreement(ratings).set_index("image_id")
    assert (
        per_image.loc["i2", "agreement"] == pytest.approx(2 / 3)
        and per_image.loc["i2", "majority"] == 1
    )
    assert per_image.loc["i4", "majority"] == 0 and not per_image["tie"].any()
    assert per_image["agreement"].mean() == pytest.approx(5 / 6)
    tie = stats.per_image_agreement(long_ratings({"t": [1, 0]})).iloc[0]
    assert bool(tie.tie) and tie.agreement == 0.5


def test_docstring_examples() -> None:
    import doctest

    from glyphbench.human_eval import sampling, store

    for module in (stats, sampling, store):
        result = doctest.testmod(module)
        assert result.failed == 0 and (module is store or result.attempted > 0), module.__name__


def test_gwet_ac1_differs_from_kappa_under_high_prevalence() -> None:
    # 9 images all-yes and one split 2-1: percent agreement is high, kappa low, AC1 high.
    table = {f"i{k}": [1, 1, 1] for k in range(9)} | {"i9": [1, 1, 0]}
    row = stats.agreement(long_ratings(table), categories=[0, 1], n_boot=50).iloc[0]
    assert row.percent_agreement == pytest.approx((9 + 2 / 3) / 10)
    # Pa = (9 * 1 + 1/3) / 10; p_yes = 29/30 -> Pe_fleiss = (29/30)^2 + (1/30)^2.
    pa = (9 + 1 / 3) / 10
    pe_f = (29 / 30) ** 2 + (1 / 30) ** 2
    assert row.fleiss_kappa == pytest.approx((pa - pe_f) / (1 - pe_f))
    # pi_yes = (9 + 2/3) / 10 -> Pe_gwet = 2 * pi (1 - pi).
    pi = (9 + 2 / 3) / 10
    pe_g = 2 * pi * (1 - pi)
    assert row.gwet_ac1 == pytest.approx((pa - pe_g) / (1 - pe_g))
    assert row.fleiss_kappa < 0.1 < 0.9 < row.gwet_ac1


def test_ac1_uses_the_scale_categories_not_only_those_seen() -> None:
    # Only "yes" observed: with q = 2 from the scale AC1 is defined (Pe = 0 -> AC1 = Pa = 1).
    row = stats.agreement(
        long_ratings({"a": [1, 1], "b": [1, 1]}), categories=[0, 1], n_boot=20
    ).iloc[0]
    assert row.gwet_ac1 == pytest.approx(1.0)
    assert math.isnan(row.krippendorff_alpha)
    assert "undefined" in row.note


def random_design(
    seed: int, images: int, raters: int, per_image: int | None, q: int = 2
) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    table: dict[str, list[int | None]] = {}
    for i in range(images):
        truth = int(rng.integers(q))
        k = per_image if per_image else int(rng.integers(1, raters + 1))
        who = set(rng.choice(raters, size=k, replace=False).tolist())
        table[f"i{i}"] = [
            (truth if rng.random() < 0.7 else int(rng.integers(q))) if r in who else None
            for r in range(raters)
        ]
    return long_ratings(table)


@pytest.mark.parametrize("q", [2, 3])
def test_fleiss_kappa_matches_statsmodels(q: int) -> None:
    from statsmodels.stats.inter_rater import fleiss_kappa

    ratings = random_design(seed=q, images=60, raters=9, per_image=3, q=q)
    counts, _, _ = stats.count_matrix(ratings, list(range(q)))
    ours = stats.agreement(ratings, categories=list(range(q)), n_boot=20).iloc[0].fleiss_kappa
    assert ours == pytest.approx(fleiss_kappa(counts, method="fleiss"), abs=1e-12)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_krippendorff_alpha_matches_library_on_incomplete_designs(seed: int) -> None:
    import krippendorff

    ratings = random_design(seed=seed, images=50, raters=7, per_image=None, q=2 + seed % 2)
    reliability = ratings.pivot(index="rater_id", columns="image_id", values="value").to_numpy(
        dtype=float
    )
    expected = krippendorff.alpha(reliability_data=reliability, level_of_measurement="nominal")
    row = stats.agreement(ratings, n_boot=20).iloc[0]
    assert row.krippendorff_alpha == pytest.approx(expected, abs=1e-12)
    # Unbalanced: Fleiss is refused with a note rather than silently wrong.
    assert not row.balanced and math.isnan(row.fleiss_kappa) and "Fleiss" in row.note


def test_bootstrap_intervals_bracket_the_estimate_and_are_seeded() -> None:
    ratings = random_design(seed=5, images=80, raters=6, per_image=3)
    a = stats.agreement(ratings, categories=[0, 1], n_boot=300, seed=1).iloc[0]
    b = stats.agreement(ratings, categories=[0, 1], n_boot=300, seed=1).iloc[0]
    for stat in stats.STATISTICS:
        assert a[f"{stat}_lo"] <= a[stat] <= a[f"{stat}_hi"]
        assert a[f"{stat}_lo"] == b[f"{stat}_lo"]
    assert a.percent_agreement_hi - a.percent_agreement_lo > 0


def test_bootstrap_weights_are_resamples() -> None:
    weights = stats.bootstrap_weights(7, 50, seed=3)
    assert weights.shape == (50, 7)
    assert np.all(weights.sum(axis=1) == 7)


def test_single_ratings_do_not_enter_agreement_and_duplicates_are_errors() -> None:
    ratings = long_ratings({"a": [1, 1], "b": [0, None]})
    row = stats.agreement(ratings, categories=[0, 1], n_boot=10).iloc[0]
    assert row.n_images == 1 and row.percent_agreement == 1.0
    with pytest.raises(ValueError, match="twice"):
        stats.agreement(pd.concat([ratings, ratings.iloc[:1]]), n_boot=10)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(st.lists(st.lists(st.integers(0, 1), min_size=2, max_size=5), min_size=1, max_size=12))
def test_percent_agreement_bounds_and_pairwise_relation(rows: list[list[int]]) -> None:
    ratings = long_ratings({f"i{k}": list(values) for k, values in enumerate(rows)})
    row = stats.agreement(ratings, categories=[0, 1], n_boot=5).iloc[0]
    assert 0.5 <= row.percent_agreement <= 1.0  # binary: the majority holds at least half
    assert 0.0 <= row.pairwise_agreement <= row.percent_agreement + 1e-12
    if row.percent_agreement == 1.0:
        assert row.pairwise_agreement == pytest.approx(1.0)


# -- ROC-AUC and alignment -------------------------------------------------------


def test_roc_auc_hand_values_and_brute_force() -> None:
    assert stats.roc_auc([0.9, 0.8, 0.3, 0.8], [1, 1, 0, 0]) == pytest.approx(3.5 / 4)
    assert stats.roc_auc([1, 2, 3], [0, 0, 1]) == 1.0
    assert stats.roc_auc([3, 2, 1], [0, 0, 1]) == 0.0
    assert math.isnan(stats.roc_auc([1, 2], [1, 1]))
    rng = np.random.default_rng(0)
    scores = rng.integers(0, 5, 40).astype(float)  # many ties
    labels = rng.integers(0, 2, 40)
    pos, neg = scores[labels == 1], scores[labels == 0]
    brute = np.mean([(p > n) + 0.5 * (p == n) for p in pos for n in neg])
    assert stats.roc_auc(scores, labels) == pytest.approx(brute)


def test_human_labels_majority_and_ties() -> None:
    ratings = long_ratings({"a": [1, 1, 0], "b": [0, 1], "c": [0, 0, 1]})
    labels = stats.human_labels(ratings, "text_accuracy").set_index("image_id")
    assert labels.loc["a", "human_label"] == 1 and labels.loc["c", "human_label"] == 0
    assert pd.isna(labels.loc["b", "human_label"])
    assert labels.loc["a", "human_share"] == pytest.approx(2 / 3)


def test_metric_alignment_orients_lower_is_better_and_matches_scipy() -> None:
    from scipy import stats as sps

    manifest = pd.DataFrame(
        {
            "image_id": [f"i{k}" for k in range(8)],
            "model": ["m1"] * 4 + ["m2"] * 4,
            "ned": [1.0, 0.9, 0.4, 0.2, 1.0, 0.5, 0.3, 0.95],
            "algorithm1": [0, 1, 4, 6, 0, 3, 5, 1],
            "weight": 1.0,
        }
    )
    shares = [1.0, 2 / 3, 1 / 3, 0.0, 1.0, 1 / 3, 0.0, 2 / 3]
    labels = pd.DataFrame(
        {
            "image_id": manifest["image_id"],
            "human_share": shares,
            "raters": 3,
            "human_label": pd.array([1 if s > 0.5 else 0 for s in shares], dtype="Int64"),
        }
    )
    table = stats.metric_alignment(labels, manifest).set_index(["metric", "model"])
    assert table.loc[("ned", "(all)"), "roc_auc"] == 1.0
    assert table.loc[("algorithm1", "(all)"), "roc_auc"] == 1.0  # negated: fewer errors = better
    y = [1 if s > 0.5 else 0 for s in shares]
    assert table.loc[("ned", "(all)"), "point_biserial"] == pytest.approx(
        sps.pointbiserialr(y, manifest["ned"])[0]
    )
    assert table.loc[("ned", "(all)"), "spearman"] == pytest.approx(
        sps.spearmanr(manifest["ned"], shares)[0]
    )
    assert set(table.index.get_level_values("model")) == {"(all)", "m1", "m2"}

    ranking, tau, _ = stats.model_ranking(labels, manifest, metric="ned")
    # m1: people 0.5, NED 0.625; m2: people 0.5, NED 0.6875.
    by_model = ranking.set_index("model")
    assert by_model.loc["m1", "human_score"] == pytest.approx(0.5)
    assert by_model.loc["m2", "metric_score"] == pytest.approx(0.6875)
    assert ranking.loc[ranking.model == "m2", "metric_rank"].item() == 1
    assert not math.isnan(tau)


def _alignment_data() -> tuple[pd.DataFrame, pd.DataFrame]:
    manifest = pd.DataFrame(
        {
            "image_id": [f"i{k}" for k in range(6)],
            "model": ["m1"] * 3 + ["m2"] * 3,
            "ned": [1.0, 0.9, 0.2, 0.8, 0.3, 0.1],
            "algorithm1": [0, 1, 6, 1, 4, 7],
            "weight": 1.0,
        }
    )
    shares = [1.0, 1.0, 0.0, 2 / 3, 0.0, 0.0]
    labels = pd.DataFrame(
        {
            "image_id": manifest["image_id"],
            "human_share": shares,
            "human_label": pd.array([1 if s > 0.5 else 0 for s in shares], dtype="Int64"),
        }
    )
    return labels, manifest


def test_compared_scores_and_their_directions_come_from_the_metric_table() -> None:
    """The alignment, the ranking and the report's list read the ``human`` places
    and the directions of the metric table (records replaced here, then restored)."""
    from dataclasses import replace

    from glyphbench.human_eval.report import ranking_metrics
    from glyphbench.scoring.table import METRICS, Ratio

    labels, manifest = _alignment_data()
    ned, algorithm1 = METRICS.get("ned"), METRICS.get("algorithm1")
    assert ranking_metrics() == ["ned", "algorithm1"]
    assert list(stats.metric_alignment(labels, manifest, n_boot=0)["metric"].unique()) == [
        "ned",
        "algorithm1",
    ]
    assert stats.metric_alignment(labels, manifest, n_boot=0)["roc_auc"].iloc[0] == 1.0
    place = "glyphbench.scoring.glyphbench"
    try:
        # ned compared second and read as an error (lower is better); algorithm1 first
        METRICS.add(replace(ned, human=2, higher_is_better=False), replace=True)
        METRICS.add(replace(algorithm1, human=1), replace=True)
        assert ranking_metrics() == ["algorithm1", "ned"]
        table = stats.metric_alignment(labels, manifest, n_boot=0)
        assert list(table["metric"].unique()) == ["algorithm1", "ned"]
        overall = table.set_index(["metric", "model"])["roc_auc"]
        assert overall[("ned", "(all)")] == 0.0  # negated by the table's new direction
        ranking, _, _ = stats.model_ranking(labels, manifest)  # default: the first compared
        assert ranking["metric_score"].tolist() == pytest.approx([7 / 3, 4.0])
        assert ranking.set_index("model").loc["m1", "metric_rank"] == 1  # fewer edits first
        # the ranking's weighted mean is the table's per-image mean only: a pooled one refused
        METRICS.add(replace(ned, aggregate=Ratio("ned", "algorithm1")), replace=True)
        with pytest.raises(ValueError, match="per-image mean"):
            stats.model_ranking(labels, manifest, "ned")
    finally:
        METRICS.add(ned, replace=True, place=place)
        METRICS.add(algorithm1, replace=True, place=place)
    assert ranking_metrics() == ["ned", "algorithm1"]


def test_model_ranking_uses_inclusion_weights() -> None:
    manifest = pd.DataFrame(
        {
            "image_id": ["a", "b", "c", "d"],
            "model": ["m1", "m1", "m2", "m2"],
            "ned": [1.0, 0.0, 0.6, 0.6],
            "weight": [1.0, 3.0, 1.0, 1.0],
        }
    )
    labels = pd.DataFrame({"image_id": ["a", "b", "c", "d"], "human_share": [1.0, 0.0, 0.5, 0.5]})
    ranking, tau, _ = stats.model_ranking(labels, manifest)
    m1 = ranking.set_index("model").loc["m1"]
    assert m1.human_score == pytest.approx(0.25) and m1.metric_score == pytest.approx(0.25)
    assert tau == pytest.approx(1.0)


def test_rater_quality_flags_bad_gold_and_speeders() -> None:
    manifest = pd.DataFrame(
        {
            "image_id": ["g1", "g2", "g3", "x"],
            "is_gold": [True, True, True, False],
            "gold_answer": ['{"text_accuracy": 0}'] * 3 + [""],
        }
    )
    rows = []
    for rater, answer, seconds in (
        ("good", 0, 10.0),
        ("bad", 1, 9.0),
        ("fast", 0, 1.0),
        ("ok", 0, 8.0),
    ):
        for image in ("g1", "g2", "g3", "x"):
            rows.append(
                {
                    "image_id": image,
                    "rater_id": rater,
                    "criterion": "text_accuracy",
                    "value": answer,
                    "seconds": seconds,
                }
            )
    table = rater_quality(pd.DataFrame(rows), manifest).set_index("rater_id")
    assert table.loc["good", "gold_accuracy"] == 1.0 and not table.loc["good", "outlier"]
    assert table.loc["bad", "gold_accuracy"] == 0.0 and table.loc["bad", "outlier"]
    assert table.loc["fast", "outlier"] and "median" in table.loc["fast", "reason"]
    assert table.loc["good", "n_items"] == 4 and table.loc["good", "median_seconds"] == 10.0


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_ordinal_alpha_matches_library_on_five_point_answers(seed: int) -> None:
    # the five-point scale is ordered, so its alpha is ordinal (nominal for yes/no)
    import krippendorff

    ratings = random_design(seed=seed, images=40, raters=6, per_image=None, q=5)
    ratings["value"] += 1  # the likert5 scale stores 1..5
    reliability = ratings.pivot(index="rater_id", columns="image_id", values="value").to_numpy(
        dtype=float
    )
    expected = krippendorff.alpha(reliability_data=reliability, level_of_measurement="ordinal")
    nominal = krippendorff.alpha(reliability_data=reliability, level_of_measurement="nominal")
    row = stats.agreement(
        ratings, categories=[1, 2, 3, 4, 5], n_boot=200, alpha_level=stats.ORDINAL
    ).iloc[0]
    assert row.alpha_level == "ordinal"
    assert row.krippendorff_alpha == pytest.approx(expected, abs=1e-12)
    assert abs(expected - nominal) > 1e-6  # the two levels really differ on this data
    assert row.krippendorff_alpha_lo <= row.krippendorff_alpha <= row.krippendorff_alpha_hi


def test_ordinal_alpha_equals_nominal_with_two_categories() -> None:
    ratings = random_design(seed=7, images=30, raters=5, per_image=3, q=2)
    ordinal = stats.agreement(ratings, n_boot=50, alpha_level=stats.ORDINAL).iloc[0]
    nominal = stats.agreement(ratings, n_boot=50).iloc[0]
    assert ordinal.krippendorff_alpha == pytest.approx(nominal.krippendorff_alpha, abs=1e-12)


def test_ratings_are_counted_also_on_images_rated_once() -> None:
    # `human stats` printed "ratings 0" for 14 ratings, each on its own image
    ratings = long_ratings({f"i{k}": [1, None] for k in range(14)})
    row = stats.agreement(ratings, n_boot=20).iloc[0]
    assert row.n_ratings == 14 and row.n_ratings_used == 0 and row.n_images == 0
    assert "no image has two ratings" in row.note


def test_alignment_has_bootstrap_intervals_and_matches_scipy() -> None:
    from scipy import stats as sps

    rng = np.random.default_rng(3)
    n = 60
    share = rng.random(n)
    scores = share + rng.normal(0, 0.3, n)
    label = pd.Series((share > 0.5).astype(int), dtype="Int64")
    label[:4] = pd.NA  # ties are left out of AUC and point-biserial
    row = stats._alignment_row(scores, share, label, stats.Resampling(400, 0, 0.95))
    known = label.notna().to_numpy()
    y = label[known].astype(int).to_numpy()
    assert row["roc_auc"] == pytest.approx(stats.roc_auc(scores[known], y), abs=1e-12)
    assert row["point_biserial"] == pytest.approx(sps.pointbiserialr(y, scores[known])[0])
    assert row["spearman"] == pytest.approx(sps.spearmanr(scores, share)[0])
    for stat in stats.ALIGNMENT_STATISTICS:
        assert row[f"{stat}_lo"] < row[stat] < row[f"{stat}_hi"], stat
    again = stats._alignment_row(scores, share, label, stats.Resampling(400, 0, 0.95))
    assert again == row  # seeded


def test_a_constant_score_has_no_auc_rather_than_one_half() -> None:
    labels = pd.DataFrame(
        {
            "image_id": list("abcd"),
            "human_share": [1.0, 1.0, 0.0, 0.0],
            "human_label": [1, 1, 0, 0],
            "raters": 2,
        }
    )
    manifest = pd.DataFrame({"image_id": list("abcd"), "model": "m", "ned": 0.7})
    row = stats.metric_alignment(labels, manifest, metrics=["ned"], n_boot=50).iloc[0]
    assert math.isnan(row["roc_auc"]) and math.isnan(row["roc_auc_lo"])


def _alignment_of(shares: list[float], ned: list[float], n_boot: int = 400) -> pd.DataFrame:
    """The overall alignment row (model "(all)") of one model's images."""
    manifest = pd.DataFrame(
        {"image_id": [f"i{k}" for k in range(len(ned))], "model": "m", "ned": ned}
    )
    labels = pd.DataFrame(
        {
            "image_id": manifest["image_id"],
            "human_share": shares,
            "raters": 3,
            "human_label": pd.array([1 if s > 0.5 else 0 for s in shares], dtype="Int64"),
        }
    )
    table = stats.metric_alignment(labels, manifest, metrics=["ned"], n_boot=n_boot)
    return table[table["model"] == "(all)"].reset_index(drop=True)


def test_two_accepted_images_of_twelve_give_too_few_not_an_auc_of_one() -> None:
    """12 images, people accepted 2, the score ranks them first: no AUC 1.000 [1.000, 1.000]
    but "too few", in the data and on the page."""
    from glyphbench.human_eval.report import alignment_table

    shares = [1.0, 1.0] + [0.0] * 10
    ned = [0.95, 0.9] + [0.1 * k for k in range(10)]
    table = _alignment_of(shares, ned)
    row = table.iloc[0]
    assert row["n_accepted"] == 2 and row["n_rejected"] == 10
    assert row["note"] == "too few: 2 accepted, 10 rejected (5 of each needed)"
    for stat in stats.ALIGNMENT_STATISTICS:
        assert math.isnan(row[f"{stat}_lo"]) and math.isnan(row[f"{stat}_hi"]), stat
    shown = [cell.text for cell in alignment_table(table).rows[0]]
    assert shown.count("too few") == 3 and "1.000" not in shown


def test_no_zero_width_interval_and_no_interval_ending_inside_at_its_estimate() -> None:
    """Enough of each class and a score that separates them: the stratified resamples all
    separate them too, so the AUC's interval is the Wilson bound, never [1.000, 1.000];
    the correlations' flat intervals are withheld with a note."""
    shares = [1.0] * 5 + [0.0] * 7
    ned = [0.9, 0.92, 0.95, 0.97, 0.99, 0.1, 0.2, 0.3, 0.35, 0.4, 0.45, 0.5]
    row = _alignment_of(shares, ned).iloc[0]
    assert row["roc_auc"] == 1.0
    assert row["roc_auc_lo"] == pytest.approx(0.566, abs=1e-3) and row["roc_auc_hi"] == 1.0
    assert "Wilson bound" in row["note"]
    # the resamples that lose a class are gone, and so are intervals of no width
    rng = np.random.default_rng(5)
    for _ in range(20):
        shares = list(rng.choice([0.0, 1.0], size=14, p=[0.6, 0.4]))
        if min(shares.count(1.0), shares.count(0.0)) < stats.MIN_PER_CLASS:
            continue
        scores = list(rng.random(14) + np.array(shares) * 0.4)
        row = _alignment_of(shares, scores, n_boot=200).iloc[0]
        for stat in stats.ALIGNMENT_STATISTICS:
            lo, hi, value = row[f"{stat}_lo"], row[f"{stat}_hi"], row[stat]
            if math.isnan(lo):
                assert stats.FLAT in row["note"] or "undefined" in row["note"], stat
                continue
            assert hi > lo, (stat, row)
            low, high = stats.STATISTIC_BOUNDS[stat]
            assert (lo < value or value == low) and (value < hi or value == high), (stat, row)


def test_agreement_intervals_of_no_width_are_withheld_with_a_note() -> None:
    # six images every rater answers alike: percent agreement 1.0 in every resample
    ratings = long_ratings({f"i{k}": [1, 1, 1] if k % 2 else [0, 0, 0] for k in range(6)})
    row = stats.agreement(ratings, n_boot=200).iloc[0]
    assert row["percent_agreement"] == 1.0
    assert math.isnan(row["percent_agreement_lo"]) and stats.FLAT in row["note"]
