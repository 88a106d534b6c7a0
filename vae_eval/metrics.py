"""Text-survival and image-fidelity metrics for one (original, reconstruction) pair.

The metrics themselves are the ``vae`` family of the metric table
(:mod:`glyphbench.scoring.vae`, one implementation for ``score_pairs``, the CLI and
this module); here they are plain functions of two texts or two images:

* :func:`word_retention` (WR): 100 x word recall, the share of ground-truth words
  found exactly in the OCR, as multisets.
* :func:`partial_accuracy` (PA): one minus the character edit distance between
  ground-truth words and their optimally assigned OCR words, relative to the total
  ground-truth length.
* :func:`psnr`: peak signal-to-noise ratio over all RGB values, in dB.
* :func:`ssim`: structural similarity on the luma channel with an 11x11 Gaussian
  window (sigma 1.5), K1=0.01, K2=0.03, dynamic range 255.
* :func:`image_scores`: PSNR and SSIM on the whole image and on the text region (the
  drawn text boxes; NaN where the image set has none), the four image columns of a row.

Texts are normalised in the default ("paper") mode of :func:`glyphbench.scoring.normalize`;
WR and PA are percentages in [0, 100], or NaN when the ground truth has no words.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from glyphbench.scoring import normalize
from glyphbench.scoring import vae as family
from glyphbench.scoring.pair import ImagePair, Pair, float_rgb
from glyphbench.scoring.table import METRICS
from glyphbench.scoring.vae import (
    SSIM_K1,
    SSIM_K2,
    SSIM_SIGMA,
    SSIM_WINDOW,
    RegionPair,
    word_assignment,
)

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    from glyphbench.core.images import ImageLike

__all__ = [
    "SSIM_K1",
    "SSIM_K2",
    "SSIM_SIGMA",
    "SSIM_WINDOW",
    "image_scores",
    "luma",
    "partial_accuracy",
    "psnr",
    "ssim",
    "word_assignment",
    "word_retention",
    "words",
]


def words(text: str) -> list[str]:
    """The words metrics compare: tokens of the normalised text.

    >>> words("  Hello,\\n WORLD ")
    ['hello,', 'world']
    """
    return normalize(text).split()


def word_retention(truth: str, ocr: str) -> float:
    """WR = N_correct / N_total x 100 (see :func:`glyphbench.scoring.vae.wr`).

    >>> word_retention("the cat the hat", "The hat cat")
    75.0
    """
    return family.wr(Pair(truth, ocr))


def partial_accuracy(truth: str, ocr: str) -> float:
    """PA = (1 - sum_i d(W_i, W^_i) / sum_i L(W_i)) x 100 (see :func:`glyphbench.scoring.vae.pa`).

    >>> partial_accuracy("harbor exit", "harbour")
    50.0
    """
    return family.pa(Pair(truth, ocr))


def psnr(a: ImageLike, b: ImageLike) -> float:
    """PSNR in dB of two PIL images or uint8 arrays (see :func:`glyphbench.scoring.vae.psnr`).

    >>> import numpy as np
    >>> round(psnr(np.full((1, 1, 3), 10, np.uint8), np.array([[[13, 14, 15]]], np.uint8)), 2)
    35.91
    """
    return family.psnr(ImagePair(a, b))


def ssim(a: ImageLike, b: ImageLike) -> float:
    """Mean SSIM of the luma of two images (see :func:`glyphbench.scoring.vae.ssim`).

    >>> import numpy as np
    >>> round(ssim(np.full((16, 16, 3), 100, np.uint8), np.full((16, 16, 3), 110, np.uint8)), 5)
    0.99548
    """
    return family.ssim(ImagePair(a, b))


def luma(image: ImageLike) -> npt.NDArray[np.float64]:
    """ITU-R BT.601 luma Y = 0.299 R + 0.587 G + 0.114 B, as float64 on the 0..255 scale."""
    return family.luma_of_rgb(float_rgb(image))


def text_scores(truth: str, ocr: str | None) -> dict[str, float]:
    """Every text metric of the metric table's ``vae`` family (WR, PA, ...) on one reading.

    ``ocr`` None (nothing was read: a failed codec or reader): every metric NaN.

    >>> text_scores("harbor exit", "harbour exit")
    {'wr': 50.0, 'pa': 90.0}
    """
    metrics = [m for m in METRICS.of(["vae"]) if m.per_image and m.inputs == "text"]
    if ocr is None:
        return dict.fromkeys((m.name for m in metrics), math.nan)
    pair = Pair(truth, ocr)
    return {m.name: float(m.function(pair)) for m in metrics if m.function is not None}


def image_scores(
    original: ImageLike | None,
    reconstruction: ImageLike | None,
    boxes: Sequence[Sequence[int]] | None,
) -> dict[str, float]:
    """Every image metric of the metric table's ``vae`` family (``psnr``, ``ssim``,
    ``psnr_text``, ``ssim_text``) on a pair (all NaN when either image is None).

    >>> import numpy as np
    >>> a = np.zeros((16, 16, 3), np.uint8); b = a.copy(); b[:4, :4] = 10
    >>> {k: round(v, 2) for k, v in image_scores(a, b, [(0, 0, 4, 4)]).items()}
    {'psnr': 40.17, 'ssim': 1.0, 'psnr_text': 28.13, 'ssim_text': 0.09}
    >>> image_scores(a, b, None)["psnr_text"]
    nan
    """
    metrics = [m for m in METRICS.of(["vae"]) if m.per_image and m.inputs == "image"]
    if original is None or reconstruction is None:
        return dict.fromkeys((m.name for m in metrics), math.nan)
    pair = RegionPair(original, reconstruction, boxes)
    return {m.name: float(m.function(pair)) for m in metrics if m.function is not None}
