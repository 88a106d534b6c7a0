"""The metrics as plain functions of two strings: ``metric(expected, ocr, *, norm=...)``.

Two layers:

* String primitives (:func:`edit_distance`, :func:`lcs_len`, :func:`lom_len`, from
  :mod:`glyphbench.scoring.primitives`) compare two strings exactly as given.
* Pair metrics (:func:`algorithm1`, :func:`ned`, :func:`anls`, ...) take the
  expected text first and the OCR text second, normalise both with
  :func:`glyphbench.scoring.normalize.normalize` (paper mode unless told otherwise)
  and then compare. Pass ``norm=None`` when the strings are already normalised.

Each pair metric here is its column's function in the metric table
(:mod:`glyphbench.scoring.glyphbench`) applied to one :class:`~glyphbench.scoring.pair.Pair`,
so a single call and :func:`glyphbench.scoring.score_pairs` always agree.
"""

from __future__ import annotations

from collections.abc import Sequence

from glyphbench.scoring import glyphbench as family
from glyphbench.scoring.normalize import Normalization
from glyphbench.scoring.pair import PAPER, Pair, remove_common_words
from glyphbench.scoring.primitives import edit_distance, lcs_len, lom_len

__all__ = [
    "algorithm1",
    "anls",
    "cer",
    "edit_distance",
    "exact_match",
    "lcs_len",
    "lom_len",
    "ned",
    "remove_common_words",
    "wer",
    "word_prf",
]


def algorithm1(expected: str, ocr: str, *, norm: Normalization | None = PAPER) -> int:
    """TextInVision's Algorithm 1 score (see :func:`glyphbench.scoring.glyphbench.algorithm1`).

    >>> algorithm1("Hello", "the sign says HELLO there")
    0
    >>> algorithm1("Digital Dreamscapes", "Dlgitoi Draseampes")
    7
    """
    return family.algorithm1(Pair(expected, ocr, norm))


def ned(expected: str, ocr: str, *, norm: Normalization | None = PAPER) -> float:
    """Normalised edit-distance similarity ``1 - d / max(len)``; 1.0 for two empty strings.

    This is AnyText's "NED" (higher is better).

    >>> ned("hello", "hallo")
    0.8
    >>> ned("", "")
    1.0
    """
    return family.ned(Pair(expected, ocr, norm))


def anls(
    expected: str | Sequence[str],
    ocr: str,
    *,
    threshold: float = family.ANLS_THRESHOLD,
    norm: Normalization | None = PAPER,
) -> float:
    """ST-VQA's Average Normalised Levenshtein Similarity for one answer.

    For each reference answer ``a``: ``nl = d(a, ocr) / max(len(a), len(ocr))``;
    the similarity is ``1 - nl`` when ``nl < threshold`` and 0 otherwise. The score
    is the best over the references. Averaging over pairs gives the dataset ANLS.

    >>> anls("hello", "hallo")  # nl = 0.2
    0.8
    >>> anls("hello", "help me")  # nl = 4/7 >= 0.5
    0.0
    >>> anls(["colour", "color"], "color")
    1.0
    """
    references = [expected] if isinstance(expected, str) else list(expected)
    best = 0.0
    for reference in references:
        ratio = Pair(reference, ocr, norm).distance_ratio
        if ratio < threshold:
            best = max(best, 1.0 - ratio)
    return best


def exact_match(expected: str, ocr: str, *, norm: Normalization | None = PAPER) -> bool:
    """Whether the normalised strings are identical (AnyText's "sentence accuracy").

    >>> exact_match("Hello  World", "hello world")
    True
    """
    return family.exact_match(Pair(expected, ocr, norm))


def word_prf(
    expected: str, ocr: str, *, norm: Normalization | None = PAPER
) -> tuple[float, float, float]:
    """Word-level precision, recall and F1 with multiset matching (MARIO-Eval style).

    ``matched`` counts words common to both, each word as often as it appears in
    both (the multiset intersection, i.e. the words Algorithm 1 removes). Precision
    is ``matched / #OCR words``, recall is ``matched / #expected words``, F1 their
    harmonic mean (0 when both are 0). An empty side scores 1.0 if the other side
    is empty too, else 0.0.

    >>> word_prf("the cat the hat", "the the cat sat dog")
    (0.6, 0.75, 0.6666666666666665)
    """
    pair = Pair(expected, ocr, norm)
    return family.word_precision(pair), family.word_recall(pair), family.word_f1(pair)


def cer(expected: str, ocr: str, *, norm: Normalization | None = PAPER) -> float:
    """Character error rate ``d(expected, ocr) / len(expected)`` (can exceed 1).

    With an empty expected text: 0.0 if the OCR is empty too, else 1.0.

    >>> cer("hello", "hallo")
    0.2
    """
    return family.cer(Pair(expected, ocr, norm))


def wer(expected: str, ocr: str, *, norm: Normalization | None = PAPER) -> float:
    """Word error rate: word-level edit distance over the number of expected words.

    With no expected words: 0.0 if the OCR has none either, else 1.0.

    >>> wer("the cat sat", "the bat sat down")
    0.6666666666666666
    """
    return family.wer(Pair(expected, ocr, norm))
