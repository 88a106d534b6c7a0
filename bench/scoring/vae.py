"""The ``vae`` family: how much text survives a VAE round trip, and image fidelity.

Text metrics compare a ground-truth text with the text read from the
reconstruction, both normalised in the default ("paper") mode of
:func:`glyphbench.scoring.normalize`: case-folded, whitespace runs collapsed, ends
stripped; punctuation is kept, so the ``punct_symbols`` class really is measured.
Words are the whitespace-separated tokens of the normalised text.

* :func:`wr` (Word Retention): 100 x the glyphbench family's word recall (the
  same multiset word matching on the same words); NaN when the truth has no
  words, where word recall would give 1.0 or 0.0.
* :func:`pa` (Partial Accuracy): one minus the character edit distance between
  ground-truth words and their optimally assigned OCR words, relative to the total
  ground-truth length.

Both are percentages in [0, 100], or NaN when the ground truth has no words
(nothing to retain: the score is undefined, not 0 or 100).

Image metrics compare two uint8 RGB images of the same size. They are in the
metric table (``inputs="image"``) so that their labels, directions and units live
in one place, but ``score_pairs`` never computes them: ``vae_eval`` does, from an
:class:`~glyphbench.scoring.pair.ImagePair`.

* :func:`psnr`: peak signal-to-noise ratio over all RGB values, in dB.
* :func:`ssim`: structural similarity on the luma channel with an 11x11 Gaussian
  window (sigma 1.5), K1=0.01, K2=0.03, dynamic range 255.
* :func:`text_psnr`, :func:`text_ssim`: the same two on the text region only (the
  union of the drawn text boxes, a :class:`RegionPair`); NaN where the image set does
  not say where its text is. On busy backgrounds whole-image figures are dominated by
  how the background survives; these say how the glyphs did.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rapidfuzz.distance import Levenshtein

from glyphbench.scoring.pair import ImagePair, Pair, lazy
from glyphbench.scoring.table import Metric, register_metric

if TYPE_CHECKING:
    import numpy as np

#: SSIM constants (Wang et al. 2004).
SSIM_K1, SSIM_K2, SSIM_SIGMA, SSIM_WINDOW = 0.01, 0.03, 1.5, 11

# --------------------------------------------------------------------------- text


def wr(pair: Pair) -> float:
    """Word Retention: WR = N_correct / N_total x 100, i.e. 100 x word recall.

    N_total is the number of ground-truth words; N_correct is the size of the
    multiset intersection of ground-truth and OCR words (``pair.matched_words``,
    which word recall counts too): a word written twice must be read twice to count
    twice, and word order does not matter. NaN when the truth has no words.
    (Computed as ``100 * matched / total``, one rounding, as it always was.)

    Worked example: truth "the cat the hat" (4 words), OCR "The hat cat" ->
    matched the x1 (truth has 2, OCR 1), cat x1, hat x1 -> 3 / 4 = 75%.

    >>> wr(Pair("the cat the hat", "The hat cat"))
    75.0
    >>> wr(Pair("EXIT 24", "exit 2A"))
    50.0
    """
    total = len(pair.expected_words)
    if not total:
        return math.nan
    return 100.0 * pair.matched_words / total


def word_assignment(
    truth_words: list[str], ocr_words: list[str]
) -> list[tuple[int, int | None, int]]:
    """Optimal one-to-one matching of truth words to OCR words by edit distance.

    Returns ``(truth index, OCR index or None, cost)`` for every truth word. The
    assignment minimises the total cost, where a matched pair costs its Levenshtein
    distance and an unmatched truth word costs its length (as if every character were
    missing). Each OCR word is used at most once; extra OCR words cost nothing here.
    Solved with :func:`scipy.optimize.linear_sum_assignment` on the matrix
    ``[distances | diag(lengths)]`` (one private "unmatched" column per truth word).

    >>> word_assignment(["cat", "a"], ["cat", "zzzzz"])
    [(0, 0, 0), (1, None, 1)]
    """
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    n, m = len(truth_words), len(ocr_words)
    if n == 0:
        return []
    lengths = np.array([len(w) for w in truth_words], dtype=np.float64)
    # "Unmatched" columns: column m + i is free only for row i; others are forbidden.
    forbidden = float(lengths.sum() + sum(len(w) for w in ocr_words) + 1)
    cost = np.full((n, m + n), forbidden)
    for i, expected in enumerate(truth_words):
        for j, read in enumerate(ocr_words):
            cost[i, j] = Levenshtein.distance(expected, read)
        cost[i, m + i] = lengths[i]
    rows, cols = linear_sum_assignment(cost)
    out: list[tuple[int, int | None, int]] = []
    for i, j in zip(rows.tolist(), cols.tolist(), strict=True):
        out.append((i, j if j < m else None, int(cost[i, j])))
    return sorted(out)


def pa(pair: Pair) -> float:
    """Partial Accuracy: PA = (1 - sum_i d(W_i, W^_i) / sum_i L(W_i)) x 100, clamped at 0.

    W_i are the ground-truth words, W^_i the OCR word assigned to W_i by
    :func:`word_assignment` (an unmatched word costs its full length L(W_i)), d is
    the Levenshtein distance and L the number of characters. Because a word may
    always stay unmatched at cost L, the sum never exceeds sum L and PA is in [0, 100]
    already; the clamp at 0 is a guard that never binds. NaN when the truth has no words.

    Worked example: truth "harbor exit", OCR "harbour" -> "harbor"~"harbour" costs 1
    (one insertion), "exit" unmatched costs 4; total length 6 + 4 = 10;
    PA = (1 - 5/10) x 100 = 50%.

    >>> pa(Pair("harbor exit", "harbour"))
    50.0
    >>> pa(Pair("cat a", "cat zzzzz"))  # "a" is better left unmatched (1) than matched (5)
    75.0
    """
    expected = pair.expected_words
    if not expected:
        return math.nan
    total_length = sum(len(w) for w in expected)
    total_cost = sum(cost for _, _, cost in word_assignment(expected, pair.read_words))
    return max(0.0, 100.0 * (1.0 - total_cost / total_length))


# --------------------------------------------------------------------------- images


def psnr(pair: ImagePair) -> float:
    """Peak signal-to-noise ratio in dB: 10 log10(255^2 / MSE), MSE over all RGB values.

    Identical images give +inf.

    Worked example: two 1x1 images (10, 10, 10) and (13, 14, 15): squared errors
    9, 16, 25, MSE = 50/3, PSNR = 10 log10(65025 / 16.667) = 35.91 dB.

    >>> import numpy as np
    >>> pair = ImagePair(np.full((1, 1, 3), 10, np.uint8), np.array([[[13, 14, 15]]], np.uint8))
    >>> round(psnr(pair), 2)
    35.91
    """
    import numpy as np

    x, y = pair.original_rgb, pair.reconstruction_rgb
    if x.shape != y.shape:
        raise ValueError(f"images differ in size: {x.shape} vs {y.shape}")
    mse = float(np.mean((x - y) ** 2))
    return math.inf if mse == 0 else 10.0 * math.log10(255.0**2 / mse)


def luma_of_rgb(rgb: np.ndarray) -> np.ndarray:
    """ITU-R BT.601 luma Y = 0.299 R + 0.587 G + 0.114 B of a float RGB array (0..255 scale).

    >>> import numpy as np
    >>> round(float(luma_of_rgb(np.array([[[255.0, 0.0, 0.0]]]))[0, 0]), 3)
    76.245
    """
    return rgb[..., 0] * 0.299 + rgb[..., 1] * 0.587 + rgb[..., 2] * 0.114


def ssim(pair: ImagePair) -> float:
    """Mean structural similarity of the luma of two images.

    Local statistics use a Gaussian window (sigma 1.5, truncated at 11x11, i.e.
    radius 5; borders mirrored), population (co)variances, C1 = (0.01 x 255)^2,
    C2 = (0.03 x 255)^2:

        SSIM(x, y) = (2 mu_x mu_y + C1)(2 cov_xy + C2)
                     / ((mu_x^2 + mu_y^2 + C1)(var_x + var_y + C2))

    The map is averaged after cropping the 5-pixel border where the window would hang
    over the edge (the convention of scikit-image's ``structural_similarity`` with
    ``gaussian_weights=True``, which the tests compare against). Images smaller than
    11x11 are compared without the crop.

    Worked example: a constant image against itself gives 1; against a constant image
    differing only in brightness, mu_x=100, mu_y=110, variances 0, so
    SSIM = (2*100*110 + C1) / (100^2 + 110^2 + C1) = 22006.5 / 22106.5 = 0.99548.

    >>> import numpy as np
    >>> pair = ImagePair(np.full((16, 16, 3), 100, np.uint8), np.full((16, 16, 3), 110, np.uint8))
    >>> round(ssim(pair), 5)
    0.99548
    """
    index = ssim_map(pair)
    radius = SSIM_WINDOW // 2
    if min(index.shape) > 2 * radius:
        index = index[radius:-radius, radius:-radius]
    return float(index.mean())


def ssim_map(pair: ImagePair) -> np.ndarray:
    """The per-pixel SSIM index of the two lumas (see :func:`ssim`), uncropped."""
    x, y = luma_of_rgb(pair.original_rgb), luma_of_rgb(pair.reconstruction_rgb)
    if x.shape != y.shape:
        raise ValueError(f"images differ in size: {x.shape} vs {y.shape}")
    mu_x, mu_y = _blur(x), _blur(y)
    var_x = _blur(x * x) - mu_x**2
    var_y = _blur(y * y) - mu_y**2
    cov = _blur(x * y) - mu_x * mu_y
    c1, c2 = (SSIM_K1 * 255.0) ** 2, (SSIM_K2 * 255.0) ** 2
    index: np.ndarray = ((2 * mu_x * mu_y + c1) * (2 * cov + c2)) / (
        (mu_x**2 + mu_y**2 + c1) * (var_x + var_y + c2)
    )
    return index


# --------------------------------------------------------------------------- text region


class RegionPair(ImagePair):
    """An :class:`ImagePair` plus the boxes where text was drawn (None: unknown).

    Boxes are ``(left, top, right, bottom)`` pixels, right/bottom exclusive; the text
    region is their union, clipped to the image.
    """

    def __init__(
        self, original: Any, reconstruction: Any, boxes: Sequence[Sequence[int]] | None
    ) -> None:
        super().__init__(original, reconstruction)
        self.boxes = None if boxes is None else [tuple(int(v) for v in box) for box in boxes]

    @lazy
    def mask(self) -> np.ndarray | None:
        """Boolean H x W mask of the text region; None without boxes or when it is empty."""
        import numpy as np

        if not self.boxes:
            return None
        height, width = self.original_rgb.shape[:2]
        mask = np.zeros((height, width), dtype=bool)
        for left, top, right, bottom in self.boxes:
            mask[max(0, top) : max(0, bottom), max(0, left) : max(0, right)] = True
        return mask if mask.any() else None


def text_psnr(pair: RegionPair) -> float:
    """PSNR (dB) over the RGB values inside the text boxes only; NaN without boxes.

    Worked example: a 4x4 image where only the 2x2 box at the top left differs by 5 in
    every channel: MSE inside the box = 25, PSNR = 10 log10(65025 / 25) = 34.15 dB (the
    whole-image PSNR would count the 12 unchanged pixels too: 40.17 dB).

    >>> import numpy as np
    >>> a = np.zeros((4, 4, 3), np.uint8); b = a.copy(); b[:2, :2] = 5
    >>> round(text_psnr(RegionPair(a, b, [(0, 0, 2, 2)])), 2)
    34.15
    >>> text_psnr(RegionPair(a, b, None))
    nan
    """
    import numpy as np

    mask = pair.mask
    if mask is None:
        return math.nan
    diff = pair.original_rgb[mask] - pair.reconstruction_rgb[mask]
    mse = float(np.mean(diff**2))
    return math.inf if mse == 0 else 10.0 * math.log10(255.0**2 / mse)


def text_ssim(pair: RegionPair) -> float:
    """Mean of the SSIM map (see :func:`ssim`, same window) over the text boxes; NaN without.

    The map is computed on the whole image (so each box pixel sees its neighbourhood,
    mirrored only at the image border) and averaged over the box pixels.

    >>> import numpy as np
    >>> a = np.full((16, 16, 3), 100, np.uint8)
    >>> round(text_ssim(RegionPair(a, a, [(2, 2, 9, 9)])), 5)
    1.0
    """
    mask = pair.mask
    if mask is None:
        return math.nan
    return float(ssim_map(pair)[mask].mean())


def _blur(values: Any) -> np.ndarray:
    """The SSIM window: Gaussian, sigma 1.5, truncated at radius 5 (11 taps), mirrored."""
    import numpy as np
    from scipy.ndimage import gaussian_filter

    truncate = (SSIM_WINDOW // 2) / SSIM_SIGMA
    return np.asarray(gaussian_filter(values, sigma=SSIM_SIGMA, truncate=truncate, mode="reflect"))


# --------------------------------------------------------------------------- records

register_metric(
    Metric(
        "wr",
        wr,
        label="Word retention (WR)",
        short="WR",
        higher_is_better=True,
        doc="100 x word recall: share of ground-truth words read exactly (multiset); "
        "NaN when the truth has no words.",
        family="vae",
        unit="%",
        summary=1,
        digits=1,
    )
)
register_metric(
    Metric(
        "pa",
        pa,
        label="Partial accuracy (PA)",
        short="PA",
        higher_is_better=True,
        doc="100 x (1 - edit distance of optimally assigned words / ground-truth length); "
        "NaN when the truth has no words.",
        family="vae",
        unit="%",
        summary=2,
        digits=1,
    )
)
register_metric(
    Metric(
        "psnr",
        psnr,
        label="PSNR",
        higher_is_better=True,
        doc="10 log10(255^2 / MSE) over all RGB values; +inf for identical images.",
        family="vae",
        unit="dB",
        summary=3,
        inputs="image",
        digits=1,
    )
)
register_metric(
    Metric(
        "ssim",
        ssim,
        label="SSIM",
        higher_is_better=True,
        doc="Mean structural similarity of BT.601 luma, 11x11 Gaussian window (sigma 1.5), "
        "5-pixel border cropped.",
        family="vae",
        reference="Wang et al. 2004",
        summary=4,
        inputs="image",
    )
)
register_metric(
    Metric(
        "psnr_text",
        text_psnr,
        label="PSNR (text region)",
        short="PSNR text",
        higher_is_better=True,
        doc="PSNR over the RGB values inside the drawn text boxes only; NaN without boxes.",
        family="vae",
        unit="dB",
        summary=5,
        inputs="image",
        digits=1,
    )
)
register_metric(
    Metric(
        "ssim_text",
        text_ssim,
        label="SSIM (text region)",
        short="SSIM text",
        higher_is_better=True,
        doc="Mean of the SSIM map (as for SSIM) over the pixels inside the drawn text boxes; "
        "NaN without boxes.",
        family="vae",
        summary=6,
        inputs="image",
    )
)
