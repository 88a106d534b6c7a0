"""glyphbench.vae_eval.metrics: hand-computed values, properties, and SSIM against scikit-image."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glyphbench.vae_eval.metrics import (
    luma,
    partial_accuracy,
    psnr,
    ssim,
    word_assignment,
    word_retention,
)

# --------------------------------------------------------------------------- word retention


@pytest.mark.parametrize(
    ("truth", "ocr", "expected"),
    [
        ("the cat the hat", "The hat cat", 75.0),  # multiset: "the" twice in truth, once read
        ("the cat the hat", "the the the cat hat", 100.0),  # extra OCR words cost nothing
        ("EXIT 24", "exit 2A", 50.0),  # case-folded; "24" vs "2A" is not exact
        ("a b c d", "", 0.0),
        ("café naïve", "cafe naive", 0.0),  # accents are part of the word
        ("$19.99 50%", "$19.99 50", 50.0),  # punctuation is kept
        ("line one\nline two", "line two line one", 100.0),  # order and line breaks do not matter
    ],
)
def test_word_retention_hand_values(truth: str, ocr: str, expected: float) -> None:
    assert word_retention(truth, ocr) == pytest.approx(expected)


def test_word_retention_empty_truth_is_undefined() -> None:
    assert math.isnan(word_retention("", "anything"))
    assert math.isnan(partial_accuracy("   ", "anything"))


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(["a", "A", "b", "ab", "c."]), max_size=6),
    st.lists(st.sampled_from(["a", "b", "ab", "c", "c."]), max_size=6),
)
def test_word_retention_is_100_times_word_recall(truth: list[str], ocr: list[str]) -> None:
    from collections import Counter

    from glyphbench.scoring.glyphbench import word_recall
    from glyphbench.scoring.pair import Pair

    pair = Pair(" ".join(truth), " ".join(ocr))
    wr = word_retention(" ".join(truth), " ".join(ocr))
    if not pair.expected_words:
        assert math.isnan(wr)  # where word recall says 1.0 or 0.0, WR is undefined
        return
    # The shared matched count is the multiset intersection, computed independently here.
    lowered_truth, lowered_ocr = Counter(w.lower() for w in truth), Counter(w.lower() for w in ocr)
    assert pair.matched_words == sum((lowered_truth & lowered_ocr).values())
    assert wr == pytest.approx(100 * word_recall(pair))
    assert wr == 100.0 * pair.matched_words / len(pair.expected_words)  # exact, one rounding


# --------------------------------------------------------------------------- partial accuracy


@pytest.mark.parametrize(
    ("truth", "ocr", "expected"),
    [
        # harbor~harbour d=1, exit unmatched costs 4; total length 10 -> 1 - 5/10
        ("harbor exit", "harbour", 50.0),
        # "a" left unmatched (cost 1) beats matching "zzzzz" (cost 5): 1 - 1/4
        ("cat a", "cat zzzzz", 75.0),
        # crossing order: river->river (0), stone->stome (1); total 10 -> 1 - 1/10
        ("river stone", "stome river", 90.0),
        ("abc", "", 0.0),
        ("abc", "abc", 100.0),
        # one OCR word cannot serve two truth words: "go go" vs "go" -> 1 - 2/4
        ("go go", "go", 50.0),
        # every truth word far from every OCR word: all unmatched, PA = 0 (never negative)
        ("a b", "xxxxxxx yyyyyyy", 0.0),
    ],
)
def test_partial_accuracy_hand_values(truth: str, ocr: str, expected: float) -> None:
    assert partial_accuracy(truth, ocr) == pytest.approx(expected)


def test_word_assignment_is_optimal_not_greedy() -> None:
    # Greedy in truth order would give "abc" its nearest word "abd" (cost 1) and leave
    # "abd" with nothing good (cost 3): total 4. The optimum keeps "abd" for "abd"
    # (0) and leaves "abc" unmatched (3): total 3, PA = 1 - 3/6.
    pairs = word_assignment(["abc", "abd"], ["abd", "xyz"])
    assert sum(cost for _, _, cost in pairs) == 3
    assert (1, 0, 0) in pairs
    assert partial_accuracy("abc abd", "abd xyz") == pytest.approx(50.0)


text_words = st.lists(st.text(alphabet="abcxyz$%1", min_size=1, max_size=6), min_size=1, max_size=6)


@settings(max_examples=150, deadline=None)
@given(text_words, st.lists(st.text(alphabet="abcxyz$%1", min_size=1, max_size=6), max_size=6))
def test_metrics_are_percentages(truth: list[str], ocr: list[str]) -> None:
    wr = word_retention(" ".join(truth), " ".join(ocr))
    pa = partial_accuracy(" ".join(truth), " ".join(ocr))
    assert 0.0 <= wr <= 100.0
    assert 0.0 <= pa <= 100.0
    # Every truth word read exactly can be matched at zero cost, so full retention
    # must give full partial accuracy.
    if wr == 100.0:
        assert pa == pytest.approx(100.0)


@settings(max_examples=100, deadline=None)
@given(text_words)
def test_identical_text_scores_100(truth: list[str]) -> None:
    text = " ".join(truth)
    assert word_retention(text, text) == 100.0
    assert partial_accuracy(text, text) == 100.0


@settings(max_examples=100, deadline=None)
@given(text_words, st.permutations(list(range(6))))
def test_word_order_does_not_matter(truth: list[str], order: list[int]) -> None:
    shuffled = [truth[i] for i in order if i < len(truth)]
    assert word_retention(" ".join(truth), " ".join(shuffled)) == 100.0
    assert partial_accuracy(" ".join(truth), " ".join(shuffled)) == 100.0


# --------------------------------------------------------------------------- PSNR / SSIM


def test_psnr_hand_value_and_identity() -> None:
    a = np.full((1, 1, 3), 10, np.uint8)
    b = np.array([[[13, 14, 15]]], np.uint8)
    # MSE = (9 + 16 + 25) / 3; PSNR = 10 log10(255^2 / MSE)
    assert psnr(a, b) == pytest.approx(10 * math.log10(255**2 / (50 / 3)))
    assert psnr(a, a) == math.inf
    with pytest.raises(ValueError, match="differ in size"):
        psnr(a, np.zeros((2, 1, 3), np.uint8))


def test_ssim_hand_value_constant_images() -> None:
    c1 = (0.01 * 255) ** 2
    expected = (2 * 100 * 110 + c1) / (100**2 + 110**2 + c1)  # variances and covariance are 0
    a = np.full((16, 16, 3), 100, np.uint8)
    b = np.full((16, 16, 3), 110, np.uint8)
    assert ssim(a, b) == pytest.approx(expected)
    assert ssim(a, a) == pytest.approx(1.0)


def _test_images() -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(7)
    smooth = np.kron(rng.integers(0, 256, (8, 8, 3)), np.ones((8, 8, 1))).astype(np.uint8)
    stripes = np.zeros((40, 70, 3), np.uint8)
    stripes[:, ::3] = 255
    noise = rng.integers(0, 256, (33, 47, 3), dtype=np.uint8)
    pairs = []
    for image in (smooth, stripes, noise):
        degraded = np.clip(
            image.astype(np.float64) + rng.normal(0, 25, image.shape), 0, 255
        ).astype(np.uint8)
        pairs.append((image, degraded))
    pairs.append((smooth, smooth[::-1].copy()))
    return pairs


@pytest.mark.parametrize("index", range(4))
def test_ssim_matches_scikit_image(index: int) -> None:
    from skimage.metrics import structural_similarity

    a, b = _test_images()[index]
    reference = structural_similarity(
        luma(a),
        luma(b),
        gaussian_weights=True,
        sigma=1.5,
        use_sample_covariance=False,
        data_range=255,
    )
    assert ssim(a, b) == pytest.approx(reference, abs=1e-9)
    assert -1.0 <= ssim(a, b) <= 1.0


def test_ssim_drops_as_noise_grows() -> None:
    rng = np.random.default_rng(3)
    image = np.kron(rng.integers(0, 256, (6, 6, 3)), np.ones((10, 10, 1))).astype(np.uint8)
    scores = []
    for sigma in (5, 20, 60):
        noisy = np.clip(image + rng.normal(0, sigma, image.shape), 0, 255).astype(np.uint8)
        scores.append(ssim(image, noisy))
    assert scores[0] > scores[1] > scores[2]


# --------------------------------------------------------------------------- text region


def test_text_region_metrics_look_only_inside_the_boxes() -> None:
    from glyphbench.vae_eval.metrics import image_scores

    rng = np.random.default_rng(3)
    original = rng.integers(0, 256, (40, 60, 3), dtype=np.uint8)
    damaged = original.copy()
    damaged[10:20, 5:25] = 255 - damaged[10:20, 5:25]  # only inside the first box
    boxes = [(5, 10, 25, 20), (30, 30, 50, 38)]
    scores = image_scores(original, damaged, boxes)
    mask = np.zeros((40, 60), bool)
    for left, top, right, bottom in boxes:
        mask[top:bottom, left:right] = True
    diff = original.astype(float)[mask] - damaged.astype(float)[mask]
    assert scores["psnr_text"] == pytest.approx(10 * math.log10(255**2 / np.mean(diff**2)))
    assert scores["psnr_text"] < scores["psnr"]  # the damage is concentrated where text is
    assert scores["ssim_text"] < scores["ssim"]
    # damage outside every box leaves the text region perfect
    outside = original.copy()
    outside[0:5, 0:60] = 0
    clean = image_scores(original, outside, boxes)
    assert clean["psnr_text"] == math.inf and clean["psnr"] < 40
    assert all(
        math.isnan(v) for k, v in image_scores(original, damaged, None).items() if "text" in k
    )
