"""The ``textinvision`` family: the four numbers the public TextInVision ``score.py`` writes.

Selected with ``compat="reference"`` (or ``compat="textinvision"``). Use it only to
compare with numbers published with that script. It differs from the paper's
Algorithm 1 (:func:`glyphbench.scoring.glyphbench.algorithm1`) in ways documented in
``docs/metrics.md``:

* No normalisation. LCS, longest match and the "smart" Levenshtein lower-case
  their inputs; the substring test in Algorithm 1 is case-sensitive.
* The "smart" Levenshtein first removes each word common to both texts once
  (one occurrence per distinct common word, the *last* one, since it keeps the
  first ``count - 1`` copies), then deletes every space and takes the
  Levenshtein distance of what is left (0 when both remainders are empty).
* The script's caller passes the expected text where Algorithm 1 expects the
  OCR text and vice versa. So the substring test asks whether the *OCR* text
  occurs in the expected text (an empty OCR output scores a perfect 0), and the
  single-word branch fires when the *OCR* text is one word.

The functions here take ``(expected, ocr)`` like the rest of glyphbench and
perform the swap internally, so results match the script row for row.

>>> reference_scores("Digital Dreamscapes", "Dlgitoi Draseampes")
{'score_longest_match': 3, 'score_lcs': 13, 'score_levenshtein': 7, 'score_algorithm1': 7}
>>> reference_scores("Hello", "")["score_algorithm1"]
0
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from rapidfuzz.distance import LCSseq

from glyphbench.scoring.pair import Pair
from glyphbench.scoring.primitives import edit_distance, lcs_len, lom_len
from glyphbench.scoring.table import Metric, register_metric


def remove_common_words_once(a: str, b: str) -> tuple[str, str]:
    """Drop one occurrence (the last) of each distinct word found in both texts.

    >>> remove_common_words_once("a a b", "a c")
    ('a b', 'c')
    """
    a_words, b_words = a.split(), b.split()
    a_counts, b_counts = Counter(a_words), Counter(b_words)
    for word in a_counts & b_counts:
        a_counts[word] -= 1
        b_counts[word] -= 1
    return _keep_first(a_words, a_counts), _keep_first(b_words, b_counts)


def _keep_first(words: list[str], budget: Counter[str]) -> str:
    kept = []
    budget = Counter(budget)
    for word in words:
        if budget[word] > 0:
            kept.append(word)
            budget[word] -= 1
    return " ".join(kept)


def smart_levenshtein(a: str, b: str) -> int:
    """The script's Levenshtein: lower-case, drop common words once, drop spaces.

    >>> smart_levenshtein("Big Red Dog", "big blue dog")  # "red" vs "blue"
    4
    """
    a_rest, b_rest = remove_common_words_once(a.lower(), b.lower())
    if not a_rest and not b_rest:
        return 0
    return edit_distance(a_rest.replace(" ", ""), b_rest.replace(" ", ""))


def reference_algorithm1(expected: str, ocr: str) -> int:
    """Algorithm 1 as the script runs it (with its swapped arguments)."""
    # The script's algorithm1(ocr_text, exp_text) is called as algorithm1(expected, ocr):
    # inside it, "ocr_text" is our expected text and "exp_text" is our OCR text.
    haystack, needle = expected, ocr
    if needle in haystack:
        return 0
    if len(needle.split()) == 1:
        best, best_lcs = "", 0
        for word in haystack.split():
            score = LCSseq.similarity(word.lower(), needle.lower())
            if score > best_lcs:
                best, best_lcs = word, score
        return smart_levenshtein(best, needle)
    return smart_levenshtein(haystack, needle)


def score_longest_match(pair: Pair) -> int:
    """Longest common substring of the lower-cased raw texts.

    >>> score_longest_match(Pair("Digital Dreamscapes", "DLGITOI draseampes"))
    3
    """
    return lom_len(pair.expected_raw.lower(), pair.read_raw.lower())


def score_lcs(pair: Pair) -> int:
    """Longest common subsequence of the lower-cased raw texts.

    >>> score_lcs(Pair("Digital Dreamscapes", "Dlgitoi Draseampes"))
    13
    """
    return lcs_len(pair.expected_raw.lower(), pair.read_raw.lower())


def score_levenshtein(pair: Pair) -> int:
    """:func:`smart_levenshtein` of the raw texts.

    >>> score_levenshtein(Pair("a a b", "a c"))  # "ab" vs "c"
    2
    """
    return smart_levenshtein(pair.expected_raw, pair.read_raw)


def score_algorithm1(pair: Pair) -> int:
    """:func:`reference_algorithm1` of the raw texts (an empty read scores 0).

    >>> score_algorithm1(Pair("Hello", "")), score_algorithm1(Pair("Digital Dreams", "Dlgitoi"))
    (0, 3)
    """
    return reference_algorithm1(pair.expected_raw, pair.read_raw)


def reference_scores(expected: str, ocr: str) -> dict[str, int]:
    """The four columns the script writes for one row."""
    pair = Pair(expected, ocr, None)
    return {
        "score_longest_match": score_longest_match(pair),
        "score_lcs": score_lcs(pair),
        "score_levenshtein": score_levenshtein(pair),
        "score_algorithm1": score_algorithm1(pair),
    }


SCRIPT = "TextInVision score.py (reference-compatibility mode)"

#: What the script's four columns share: integer results, selected by ``compat="reference"``.
_SCRIPT_COLUMN: dict[str, Any] = {
    "family": "textinvision",
    "reference": SCRIPT,
    "dtype": "int64",
    "compat": "reference",
}

#: The records, in the script's column order.
TEXTINVISION = [
    register_metric(
        Metric(
            "score_longest_match",
            score_longest_match,
            label="Longest match (score.py)",
            higher_is_better=True,
            doc="Longest common substring of the lower-cased texts.",
            unit="characters",
            summary=1,  # a suite report's columns, in the script's order
            **_SCRIPT_COLUMN,
        )
    ),
    register_metric(
        Metric(
            "score_lcs",
            score_lcs,
            label="LCS (score.py)",
            higher_is_better=True,
            doc="Longest common subsequence of the lower-cased texts.",
            unit="characters",
            summary=2,  # a suite report's columns, in the script's order
            **_SCRIPT_COLUMN,
        )
    ),
    register_metric(
        Metric(
            "score_levenshtein",
            score_levenshtein,
            label="Smart Levenshtein (score.py)",
            higher_is_better=False,
            doc="Lower-case, drop one occurrence of each common word, delete spaces, "
            "then the Levenshtein distance (0 when nothing is left).",
            unit="edits",
            summary=3,  # a suite report's columns, in the script's order
            **_SCRIPT_COLUMN,
        )
    ),
    register_metric(
        Metric(
            "score_algorithm1",
            score_algorithm1,
            label="Algorithm 1 (score.py)",
            higher_is_better=False,
            doc="Algorithm 1 as the script runs it: arguments swapped (the read text is "
            "searched for in the expected text), no normalisation, smart Levenshtein.",
            unit="edits",
            summary=4,  # a suite report's columns, in the script's order
            **_SCRIPT_COLUMN,
        )
    ),
]

#: The script's columns, in its order.
REFERENCE_COLUMNS = tuple(metric.name for metric in TEXTINVISION)
