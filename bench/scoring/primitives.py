"""String primitives: compare two strings (or word lists) exactly as given, no normalisation.

The metrics of every family are built from these; ``tests/bench/scoring/test_scoring_metrics.py``
checks them against plain dynamic programming.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from rapidfuzz.distance import LCSseq, Levenshtein


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
    n = len(a)
    best = start = 0
    # Greedy extension: at each start, grow the best length while the slice of length
    # best + 1 from there still occurs in b (any longer match from that start has it
    # as a prefix); a start with fewer than best + 1 characters left cannot win.
    while start + best < n:
        end = start + best + 1
        if a[start:end] in b:
            best += 1
            continue
        # a[start:end] is not in b, nor is any window that contains its suffix
        # a[start + skip:end] when that suffix is not in b either: the windows of
        # every start up to start + skip do. Find the longest such suffix by bisection
        # (a suffix of a string in b is in b) and jump past those starts; on long
        # texts this halves the searches, all of which run in C.
        skip, found = 0, end - start
        while found - skip > 1:
            middle = (skip + found) // 2
            if a[start + middle : end] in b:
                found = middle
            else:
                skip = middle
        start += skip + 1
    return best


def exact_mean(values: Sequence[float]) -> float:
    """The exactly rounded mean (``math.fsum``); a benchmark's numpy mean agrees to the last bits.

    >>> exact_mean([0.1] * 10)
    0.1
    """
    return math.fsum(values) / len(values)
