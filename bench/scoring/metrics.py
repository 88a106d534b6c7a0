"""Pure text-accuracy metrics over one (expected, OCR) pair.

Two layers:

* String primitives (:func:`edit_distance`, :func:`lcs_len`, :func:`lom_len`)
  compare two strings exactly as given.
* Pair metrics (:func:`algorithm1`, :func:`ned`, :func:`anls`, ...) take the
  expected text first and the OCR text second, normalise both with
  :func:`bench.scoring.normalize.normalize` (paper mode unless told otherwise)
  and then compare. Pass ``norm=None`` when the strings are already normalised.

Every function has a worked example; ``tests/test_scoring_metrics.py`` checks
them against hand-computed values and against plain dynamic programming.
"""

from __future__ import annotations

from collections.abc import Sequence

from rapidfuzz.distance import LCSseq, Levenshtein

from bench.scoring.normalize import Normalization

PAPER = Normalization()


def _apply(norm: Normalization | None, text: str) -> str:
    return text if norm is None else norm(text)


# --------------------------------------------------------------------------- primitives


def edit_distance(a: str | Sequence[str], b: str | Sequence[str]) -> int:
    """Levenshtein distance: fewest single-item insertions, deletions and substitutions.

    Works on strings (items are characters) and on lists of words.

    >>> edit_distance("kitten", "sitting")
    3
    >>> edit_distance(["a", "cat"], ["the", "cat"])
    1
    """
    return int(Levenshtein.distance(a, b))


def lcs_len(a: str, b: str) -> int:
    """Length of the longest common subsequence (characters in order, gaps allowed).

    >>> lcs_len("dreamscapes", "draseampes")  # d,r,a,s,a,p,e,s ... see test for the DP table
    8
    """
    return int(LCSseq.similarity(a, b))


def lom_len(a: str, b: str) -> int:
    """Length of the longest ordered match: the longest common *contiguous* substring.

    >>> lom_len("digital", "dlgitoi")  # "git"
    3
    >>> lom_len("abc", "")
    0
    """
    if len(a) > len(b):
        a, b = b, a
    if a in b:  # common for OCR that reads the text plus extra words
        return len(a)
    best = 0
    n = len(a)
    # Greedy extension: at each start i, grow the best length while a[i:i+best+1]
    # still occurs in b. Any longer match starting at i has that slice as a prefix,
    # so this finds the maximum with about n + best substring searches (done in C).
    for i in range(n):
        if i + best >= n:  # no later start can beat the best
            break
        while i + best < n and a[i : i + best + 1] in b:
            best += 1
    return best


# --------------------------------------------------------------------------- TextInVision


def algorithm1(expected: str, ocr: str, *, norm: Normalization | None = PAPER) -> int:
    """TextInVision's Algorithm 1 score (an edit distance: 0 is perfect, lower is better).

    1. If the expected text is a substring of the OCR text: 0.
    2. If the expected text is one word: scan the OCR words in order, keeping the
       first word whose LCS length with the expected word is strictly greater than
       the best so far (the best starts as the empty string with LCS 0). Return the
       edit distance between that word and the expected word.
    3. Otherwise: for each expected word in order that is among the remaining OCR
       words, remove its first remaining occurrence from both word lists; return the
       edit distance between the two remainders joined with single spaces.

    >>> algorithm1("Hello", "the sign says HELLO there")
    0
    >>> algorithm1("hello", "hallo world")  # best word "hallo" (LCS 4)
    1
    >>> algorithm1("Digital Dreamscapes", "Dlgitoi Draseampes")  # 3 + 4 substitutions/edits
    7
    """
    e = _apply(norm, expected)
    o = _apply(norm, ocr)
    return _algorithm1_words(e, o, e.split(), o.split())


def remove_common_words(e_words: list[str], o_words: list[str]) -> tuple[list[str], list[str]]:
    """Algorithm 1's step 3: drop each expected word's first remaining match from both lists.

    The number of words removed is the multiset intersection size, which the
    word-level precision/recall also need.

    >>> remove_common_words(["the", "the", "cat"], ["the", "hat"])
    (['the', 'cat'], ['hat'])
    """
    rest_o = list(o_words)
    rest_e = []
    for word in e_words:
        if word in rest_o:
            rest_o.remove(word)
        else:
            # Matches of a word always take its earliest occurrences, so keeping the
            # unmatched ones in order equals removing "the first remaining occurrence".
            rest_e.append(word)
    return rest_e, rest_o


def _algorithm1_words(
    e: str,
    o: str,
    e_words: list[str],
    o_words: list[str],
    rest: tuple[list[str], list[str]] | None = None,
) -> int:
    """Algorithm 1 on normalised strings and their word lists (shared by score_pairs)."""
    if e in o:
        return 0
    if len(e_words) == 1:
        best, best_lcs = "", 0
        for word in o_words:
            score = LCSseq.similarity(word, e)
            if score > best_lcs:
                best, best_lcs = word, score
        return int(Levenshtein.distance(best, e))
    rest_e, rest_o = rest if rest is not None else remove_common_words(e_words, o_words)
    return int(Levenshtein.distance(" ".join(rest_e), " ".join(rest_o)))


# --------------------------------------------------------------------------- peer metrics


def ned(expected: str, ocr: str, *, norm: Normalization | None = PAPER) -> float:
    """Normalised edit-distance similarity ``1 - d / max(len)``; 1.0 for two empty strings.

    This is AnyText's "NED" (higher is better).

    >>> ned("hello", "hallo")
    0.8
    >>> ned("", "")
    1.0
    """
    e = _apply(norm, expected)
    o = _apply(norm, ocr)
    longest = max(len(e), len(o))
    if longest == 0:
        return 1.0
    return 1.0 - Levenshtein.distance(e, o) / longest


def anls(
    expected: str | Sequence[str],
    ocr: str,
    *,
    threshold: float = 0.5,
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
    refs = [expected] if isinstance(expected, str) else list(expected)
    o = _apply(norm, ocr)
    best = 0.0
    for ref in refs:
        r = _apply(norm, ref)
        longest = max(len(r), len(o))
        nl = 0.0 if longest == 0 else Levenshtein.distance(r, o) / longest
        if nl < threshold:
            best = max(best, 1.0 - nl)
    return best


def exact_match(expected: str, ocr: str, *, norm: Normalization | None = PAPER) -> bool:
    """Whether the normalised strings are identical (AnyText's "sentence accuracy").

    >>> exact_match("Hello  World", "hello world")
    True
    """
    return _apply(norm, expected) == _apply(norm, ocr)


def word_prf(
    expected: str, ocr: str, *, norm: Normalization | None = PAPER
) -> tuple[float, float, float]:
    """Word-level precision, recall and F1 with multiset matching (MARIO-Eval style).

    ``matched`` counts words common to both, each word as often as it appears in
    both (the multiset intersection, i.e. the words Algorithm 1 removes). Precision is ``matched / #OCR words``, recall is
    ``matched / #expected words``, F1 their harmonic mean (0 when both are 0).
    An empty side scores 1.0 if the other side is empty too, else 0.0.

    >>> word_prf("the cat the hat", "the the cat sat dog")
    (0.6, 0.75, 0.6666666666666665)
    """
    e_words = _apply(norm, expected).split()
    o_words = _apply(norm, ocr).split()
    return _word_prf_words(e_words, o_words)


def _word_prf_words(e_words: list[str], o_words: list[str]) -> tuple[float, float, float]:
    rest_e, _ = remove_common_words(e_words, o_words)
    return _prf_from_matched(len(e_words) - len(rest_e), len(e_words), len(o_words))


def _prf_from_matched(matched: int, n_expected: int, n_ocr: int) -> tuple[float, float, float]:
    precision = matched / n_ocr if n_ocr else float(not n_expected)
    recall = matched / n_expected if n_expected else float(not n_ocr)
    if precision + recall == 0:
        return precision, recall, 0.0
    return precision, recall, 2 * precision * recall / (precision + recall)


def cer(expected: str, ocr: str, *, norm: Normalization | None = PAPER) -> float:
    """Character error rate ``d(expected, ocr) / len(expected)`` (can exceed 1).

    With an empty expected text: 0.0 if the OCR is empty too, else 1.0.

    >>> cer("hello", "hallo")
    0.2
    """
    e = _apply(norm, expected)
    o = _apply(norm, ocr)
    if not e:
        return 0.0 if not o else 1.0
    return Levenshtein.distance(e, o) / len(e)


def wer(expected: str, ocr: str, *, norm: Normalization | None = PAPER) -> float:
    """Word error rate: word-level edit distance over the number of expected words.

    With no expected words: 0.0 if the OCR has none either, else 1.0.

    >>> wer("the cat sat", "the bat sat down")
    0.6666666666666666
    """
    e_words = _apply(norm, expected).split()
    o_words = _apply(norm, ocr).split()
    if not e_words:
        return 0.0 if not o_words else 1.0
    return Levenshtein.distance(e_words, o_words) / len(e_words)
