"""Reader-aware intervals (glyphbench.calibration.reader_error): coverage on readers of known
error, and the card they are read from.

The simulations draw true per-image scores (what a person's reading gives), a reader that
errs by a known rule, a calibration set read by both, and check how often each interval
holds the true value over a few hundred seeded trials (docs/metrics.md, "Reader-aware
intervals"). With a fixed seed every figure is the same on every machine.
"""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pytest

from glyphbench.calibration.reader_error import (
    BEYOND,
    WITHIN,
    ReaderBounds,
    ReaderError,
    bounded_interval,
    imbens_manski_level,
    load_reader_error,
    verdict,
    widened,
)
from glyphbench.core.bootstrap import percentile_interval, resampled_means, seeded_rng
from glyphbench.core.errors import InputError

TRIALS = 300
N_BOOT = 400
CONFIDENCE = 0.95
#: Three binomial standard deviations of a 95% coverage over TRIALS trials.
MARGIN = 3 * math.sqrt(CONFIDENCE * (1 - CONFIDENCE) / TRIALS)
#: Where the bound is reached, percentile intervals from 60 skewed calibration errors are a
#: little narrow: 1,000 trials of the two simulations below cover 93.0% and 93.5%.
SHORTFALL = 0.02


def _true_scores(rng: np.random.Generator, n: int) -> np.ndarray:
    """Per-image scores a person's reading gives: mostly high, some garbled (mean 0.75)."""
    return rng.beta(6.0, 2.0, n)


def _under_reads(rng: np.random.Generator, truth: np.ndarray) -> np.ndarray:
    """A reader that only ever reads less than the person: a third of images lose up to
    half their score (a missed word, a merged line)."""
    hit = rng.random(truth.size) < 1 / 3
    return -truth * hit * rng.uniform(0.0, 0.5, truth.size)


def _over_reads(rng: np.random.Generator, truth: np.ndarray) -> np.ndarray:
    """A reader that only ever reads more than the person (an autocorrecting one)."""
    hit = rng.random(truth.size) < 1 / 3
    return (1 - truth) * hit * rng.uniform(0.0, 0.5, truth.size)


#: True mean of :func:`_true_scores`; the mean errors below follow from it.
TRUE_MEAN = 6.0 / 8.0


def _score_resamples(values: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    return resampled_means(values, n_boot=N_BOOT, rng=rng)[:, 0]


def _card(errors: np.ndarray) -> ReaderError:
    return ReaderError("sim", "sim 1", errors, part="held-out", manifest="simulated")


def _bounds(card: ReaderError, rng: np.random.Generator) -> np.ndarray:
    return card.bound_resamples(N_BOOT, rng)


def _contains(interval: tuple[float, float], value: float) -> bool:
    return interval[0] <= value <= interval[1]


def _model_coverage(error_of: object, calibration_error_of: object) -> tuple[float, float]:
    """Coverage of the true mean by the plain and the reader-aware interval of one model."""
    plain = aware = 0
    for trial in range(TRIALS):
        rng = seeded_rng(7, ("model", trial))
        truth = _true_scores(rng, 150)
        read = truth + error_of(rng, truth)  # type: ignore[operator]
        calibration = _true_scores(rng, 60)
        card = _card(calibration_error_of(rng, calibration))  # type: ignore[operator]
        boot = _score_resamples(read, rng)
        lo, hi = percentile_interval(boot, CONFIDENCE)
        plain += _contains((float(lo), float(hi)), TRUE_MEAN)
        aware += _contains(widened(boot, _bounds(card, rng), CONFIDENCE), TRUE_MEAN)
    return plain / TRIALS, aware / TRIALS


@pytest.mark.slow  # TRIALS seeded trials (about 4 s): make test runs it
def test_a_reader_that_always_reads_less_gets_an_interval_that_covers_at_its_rate() -> None:
    """The bound is reached (the model's images are read exactly as the calibration images):
    the widened interval covers the person's mean about 95% of the time, the plain one almost
    never (it covers the reader's mean, 0.05 below). Over 1,000 trials: 93.0%."""
    plain, aware = _model_coverage(_under_reads, _under_reads)
    assert CONFIDENCE - SHORTFALL - MARGIN <= aware <= CONFIDENCE + MARGIN, aware
    assert plain < 0.2, plain


@pytest.mark.slow  # TRIALS seeded trials (about 4 s): make test runs it
def test_a_reader_that_errs_both_ways_is_covered_at_least_at_its_rate() -> None:
    """Mixed errors partly cancel on a model's images: the bound is not reached and the
    interval is conservative (it covers more often than stated, never less)."""

    def both(rng: np.random.Generator, truth: np.ndarray) -> np.ndarray:
        half = rng.random(truth.size) < 0.5
        return np.where(half, _under_reads(rng, truth), _over_reads(rng, truth))

    plain, aware = _model_coverage(both, both)
    assert aware >= CONFIDENCE - MARGIN, aware
    assert aware >= plain


def _difference_coverage(
    error_a: object, error_b: object, calibration_error: object
) -> tuple[float, float, float]:
    """Coverage of the true difference (0: both models draw alike) by the plain and the
    reader-aware interval of A - B (image i of each paired, as prompts are); and the share
    of trials where the plain interval called the difference significant."""
    plain = aware = called = 0
    for trial in range(TRIALS):
        rng = seeded_rng(11, ("pair", trial))
        truth_a, truth_b = _true_scores(rng, 150), _true_scores(rng, 150)
        true_difference = 0.0  # both drawn from one distribution
        read_a = truth_a + error_a(rng, truth_a)  # type: ignore[operator]
        read_b = truth_b + error_b(rng, truth_b)  # type: ignore[operator]
        calibration = _true_scores(rng, 60)
        card = _card(calibration_error(rng, calibration))  # type: ignore[operator]
        boot = _score_resamples(read_a - read_b, rng)
        lo, hi = percentile_interval(boot, CONFIDENCE)
        plain += _contains((float(lo), float(hi)), true_difference)
        called += bool(lo > 0 or hi < 0)
        interval = widened(boot, _bounds(card, rng), CONFIDENCE, difference=True)
        aware += _contains(interval, true_difference)
    return plain / TRIALS, aware / TRIALS, called / TRIALS


def _half_and_half(rng: np.random.Generator, truth: np.ndarray) -> np.ndarray:
    """The calibration images: half read by the over-reading habit, half by the under-reading."""
    half = rng.random(truth.size) < 0.5
    return np.where(half, _over_reads(rng, truth), _under_reads(rng, truth))


@pytest.mark.slow  # TRIALS seeded trials (about 4 s): make test runs it
def test_a_model_dependent_reader_invents_a_difference_that_the_widened_interval_holds() -> None:
    """A reader that over-reads model A's style and under-reads model B's, each as much as it
    does on half the calibration images (so the bound is reached): the plain interval calls
    a difference that is not there; the widened one holds the true difference at about its
    rate (93.5% over 1,000 trials)."""

    def a_errors(rng: np.random.Generator, truth: np.ndarray) -> np.ndarray:
        half = rng.random(truth.size) < 0.5
        return np.where(half, _over_reads(rng, truth), 0.0)

    def b_errors(rng: np.random.Generator, truth: np.ndarray) -> np.ndarray:
        half = rng.random(truth.size) < 0.5
        return np.where(half, _under_reads(rng, truth), 0.0)

    plain, aware, called = _difference_coverage(a_errors, b_errors, _half_and_half)
    assert plain < 0.5 and called > 0.5, (plain, called)
    assert CONFIDENCE - SHORTFALL - MARGIN <= aware <= CONFIDENCE + MARGIN, aware


@pytest.mark.slow  # TRIALS seeded trials (about 4 s): make test runs it
def test_a_reader_that_errs_alike_on_both_models_keeps_their_difference() -> None:
    """The same error on both models cancels in the difference: the plain interval is right
    (about 95%), and the widened one is conservative (it assumes biases may differ)."""
    plain, aware, _ = _difference_coverage(_under_reads, _under_reads, _under_reads)
    assert abs(plain - CONFIDENCE) <= MARGIN, plain
    assert aware >= plain


def test_a_reader_without_error_leaves_the_plain_interval() -> None:
    rng = np.random.default_rng(0)
    boot = _score_resamples(_true_scores(rng, 100), rng)
    card = _card(np.zeros(40))
    lo, hi = percentile_interval(boot, CONFIDENCE)
    assert widened(boot, _bounds(card, rng), CONFIDENCE) == pytest.approx((lo, hi), abs=1e-12)


def test_an_interval_never_leaves_the_range_a_persons_ned_can_take() -> None:
    """A perfect render read by an under-reading reader: a person's NED is at most 1."""
    rng = np.random.default_rng(3)
    card = _card(np.where(np.arange(40) % 2 == 0, -0.2, 0.05))  # under 0.1, over 0.025
    bounds = ReaderBounds.draw(card, ["render", "blank"], n_boot=1000, seed=0)
    top, bottom = np.ones(1000), np.zeros(1000)
    lo, hi = bounds.score("render", top, CONFIDENCE)
    assert hi == 1.0 and 0.9 < lo < 1.0  # still widened downwards by the over-read
    lo, hi = bounds.score("blank", bottom, CONFIDENCE)
    assert lo == 0.0 and 0.0 < hi < 0.2
    lo, hi = bounds.difference("blank", "render", bottom - top + rng.normal(0, 0.01, 1000), 0.95)
    assert lo == -1.0 and -1.0 < hi < -0.8
    # a card of another metric (its range unknown here) is not cut
    other = ReaderError("sim", "sim 1", card.errors, metric="algorithm1")
    wide = ReaderBounds.draw(other, ["render"], n_boot=1000, seed=0)
    assert wide.score("render", top, CONFIDENCE)[1] > 1.0


def test_the_level_falls_from_two_sided_to_one_sided_as_the_bounds_move_apart() -> None:
    levels = [imbens_manski_level(width, 1.0, 0.95) for width in (0.0, 0.5, 1.0, 2.0, 4.0)]
    assert levels[0] == pytest.approx(0.975) and levels[-1] == pytest.approx(0.95, abs=1e-4)
    assert all(a > b for a, b in itertools.pairwise(levels))
    assert math.isnan(bounded_interval(np.array([1.0]), np.array([1.0]))[0])


def test_the_bounds_split_over_and_under_reading() -> None:
    card = ReaderError("r", "v", np.array([0.1, -0.3, 0.0, -0.2]))
    assert card.over == pytest.approx(0.025) and card.under == pytest.approx(0.125)
    draws = card.bound_resamples(500, np.random.default_rng(1))
    assert draws.shape == (500, 2) and (draws >= 0).all()
    # a difference is widened by their sum, a score by each on its side
    boot = np.full(500, 0.5)
    aware = widened(boot, np.column_stack([np.full(500, 0.025), np.full(500, 0.125)]))
    assert aware == pytest.approx((0.475, 0.625))


def test_images_of_one_repository_are_resampled_together() -> None:
    """Errors that agree within a repository carry less evidence than as many independent
    images: resampling repositories gives the wider spread."""
    errors = np.repeat([-0.2, 0.0, -0.05, -0.1], 10)
    alone = ReaderError("r", "v", errors).bound_resamples(2000, np.random.default_rng(2))
    grouped = ReaderError("r", "v", errors, np.repeat(list("abcd"), 10)).bound_resamples(
        2000, np.random.default_rng(2)
    )
    assert grouped[:, 1].std() > 2 * alone[:, 1].std()


def test_a_comparison_verdict_says_whether_it_survives_the_reader() -> None:
    assert verdict(True, 0.01, 0.3) == BEYOND and verdict(True, -0.3, -0.01) == BEYOND
    assert verdict(True, -0.01, 0.3) == WITHIN
    bounds = ReaderBounds(_card(np.array([-0.1, 0.0])), np.full((100, 2), 0.05), frozenset("ab"))
    assert math.isnan(bounds.score("c", np.zeros(100), 0.95)[0])  # not read by this reader
    assert bounds.difference("a", "b", np.full(100, 0.2), 0.95) == pytest.approx((0.1, 0.3))


def test_the_card_section_round_trips_and_a_card_without_it_is_refused(tmp_path: Path) -> None:
    card = ReaderError("r", "v 1", np.array([0.0, -0.25]), np.array(["x/a", "y/b"]), "tune", "m")
    folder = tmp_path / "card"
    folder.mkdir()
    (folder / "card.json").write_text(json.dumps({"real_images": {"reader_error": card.to_json()}}))
    back = load_reader_error(folder)
    assert back.errors.tolist() == [0.0, -0.25] and back.clusters is not None
    assert (back.reader, back.version, back.part, back.n_clusters) == ("r", "v 1", "tune", 2)
    (folder / "card.json").write_text(json.dumps({"reader": "r"}))
    with pytest.raises(InputError, match="no reader error"):
        load_reader_error(folder)
    with pytest.raises(InputError, match="no such reader card"):
        load_reader_error(tmp_path / "nowhere")
