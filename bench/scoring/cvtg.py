"""CVTG-2K (TextCrafter) word accuracy and NED, reproduced pair by pair.

The benchmark's scorer (``TextCrafter_Eval/unified_metrics_eval.py``) works on words:

* Ground-truth words: every quoted span of the prompt, lower-cased and split on whitespace.
  Here the expected cell already holds the spans joined by spaces, so the words are
  ``expected.lower().split()``.
* Read words: every PaddleOCR line, lower-cased and split on whitespace, i.e.
  ``read.lower().split()``; when there are none the list is ``[""]`` (one empty word).
* A ground-truth word is *correct* when it occurs among the read words (exact membership:
  nothing is consumed, so a word repeated three times in the ground truth is three times
  correct if it was read once).
* Its *similarity* ("NED" in the benchmark, higher is better) is taken against one read word,
  the one :func:`difflib.get_close_matches` ranks first: highest
  ``SequenceMatcher(None, candidate, word).ratio()``, ties to the larger string. That word is
  not always the one with the smallest edit distance. The similarity is
  ``1 - levenshtein / (max(len) + 1e-5)``: exactly 1.0 for equal words, slightly above the
  plain ``1 - d / max`` otherwise, and slightly above 0 against the empty word.
* The set's word accuracy pools words: correct words / all ground-truth words (0 when there
  are none); its NED is the mean of all words' similarities (0 when there are none).

>>> words = cvtg_words("Grand Opening Sale", "GRAND\\nSALE")
>>> words.correct, words.total
(2, 3)
>>> [round(s, 6) for s in words.similarities]
[1.0, 1e-06, 1.0]
>>> cvtg_summary([{"cvtg_word_correct": 2, "cvtg_word_total": 3, "cvtg_word_ned_sum": 2.4}])
{'cvtg_word_accuracy': 0.6666666666666666, 'cvtg_ned': 0.7999999999999999}
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from rapidfuzz.distance import Levenshtein

from glyphbench.scoring.table import (
    Aggregate,
    Mean,
    Metric,
    Ratio,
    ReaderUnits,
    on_raw,
    register_metric,
    register_units,
)
from glyphbench.scoring.units import boxes

FAMILY = "cvtg"
REFERENCE = (
    "NJU-PCALab/TextCrafter TextCrafter_Eval/unified_metrics_eval.py, as vendored unchanged in "
    "zlab-princeton/i1@b58a62f4a301370f35c5873bcb453bf7eea9f0e4 "
    "benchmark_eval/cvtg-2k/unified_metrics_eval.py"
)
#: The benchmark adds this to the longer length before dividing (unified_metrics_eval.py:129).
SMOOTHING = 1e-5


@dataclass(frozen=True)
class CvtgWords:
    """One image's word counts and per-word similarities, in ground-truth order."""

    correct: int
    total: int
    similarities: tuple[float, ...]


def smoothed_similarity(word: str, other: str) -> float:
    """``1 - levenshtein / (max(len) + 1e-5)``, the benchmark's per-word "NED".

    >>> smoothed_similarity("sale", "sale")
    1.0
    >>> round(smoothed_similarity("sale", "sole"), 9)
    0.750000625
    """
    longest = max(len(word), len(other))
    return 1 - Levenshtein.distance(word, other) / (longest + SMOOTHING)


def closest_read_word(word: str, read_words: Sequence[str]) -> str:
    """The read word difflib ranks closest to ``word`` (what ``get_close_matches(n=1)`` returns).

    The ratio is difflib's with the candidate as the first sequence and ``word`` as the
    second (the order matters); equal ratios go to the larger string.

    >>> closest_read_word("sale", ["aals", "sesx"])  # both ratio 0.5
    'sesx'
    """
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(word)
    scored = []
    for candidate in read_words:
        matcher.set_seq1(candidate)
        scored.append((matcher.ratio(), candidate))
    return max(scored)[1]


@lru_cache(maxsize=4096)
def cvtg_words(expected: str, read: str) -> CvtgWords:
    """Score one image: correct and total ground-truth words, and each word's similarity."""
    truth = expected.lower().split()
    read_words = read.lower().split() or [""]
    present = set(read_words)
    correct = sum(1 for word in truth if word in present)
    similarities = tuple(
        smoothed_similarity(word, closest_read_word(word, read_words)) for word in truth
    )
    return CvtgWords(correct=correct, total=len(truth), similarities=similarities)


def cvtg_word_correct(expected: str, read: str) -> int:
    """Ground-truth words found among the read words."""
    return cvtg_words(expected, read).correct


def cvtg_word_total(expected: str, read: str) -> int:
    """Ground-truth words of the image."""
    return cvtg_words(expected, read).total


def cvtg_word_ned_sum(expected: str, read: str) -> float:
    """Sum of the image's per-word similarities (pooled by the set-level NED)."""
    return float(sum(cvtg_words(expected, read).similarities))


def cvtg_word_ned(expected: str, read: str) -> float:
    """Mean per-word similarity of the image; NaN when it has no ground-truth words."""
    words = cvtg_words(expected, read)
    return cvtg_word_ned_sum(expected, read) / words.total if words.total else math.nan


def cvtg_summary(rows: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """The benchmark's set-level numbers from per-pair rows, with its 0-when-empty rules.

    >>> cvtg_summary([])
    {'cvtg_word_accuracy': 0.0, 'cvtg_ned': 0.0}
    """
    correct = total = 0
    similarity_sum = 0.0
    for row in rows:
        correct += int(row["cvtg_word_correct"])
        total += int(row["cvtg_word_total"])
        similarity_sum += float(row["cvtg_word_ned_sum"])
    return {
        "cvtg_word_accuracy": correct / max(total, 1),
        "cvtg_ned": similarity_sum / total if total else 0.0,
    }


#: PaddleOCR boxes (the scorer splits them into words, so only words matter).
UNITS = register_units(
    ReaderUnits(
        FAMILY,
        boxes,
        rule="one PaddleOCR box per non-blank line, words joined by single spaces; the scorer "
        "splits every box on whitespace, so this changes no value",
        source="TextCrafter_Eval/unified_metrics_eval.py compute_ocr_metrics "
        "(pred_words.extend(line[1][0].lower().split()) for every box)",
    )
)

_SIMILARITY = "1 - levenshtein/(max len + 1e-5) against the read word difflib ranks closest"
_RECORDS: tuple[tuple[str, Callable[[Any], float] | None, str, str, Aggregate, bool], ...] = (
    ("cvtg_word_correct", on_raw(cvtg_word_correct), "CVTG correct words",
     "Ground-truth words (lower-cased) that occur among the read words.", Mean(), False),
    ("cvtg_word_total", on_raw(cvtg_word_total), "CVTG ground-truth words",
     "Ground-truth words of the image: the expected cell split on whitespace.", Mean(), False),
    ("cvtg_word_ned", on_raw(cvtg_word_ned), "CVTG word NED (image mean)",
     f"Mean over the image's words of {_SIMILARITY}.", Mean(), False),
    ("cvtg_word_ned_sum", on_raw(cvtg_word_ned_sum), "CVTG word NED (image sum)",
     f"Sum over the image's words of {_SIMILARITY}.", Mean(), False),
    ("cvtg_word_accuracy", None, "CVTG word accuracy",
     "Correct words / ground-truth words, pooled over all images.",
     Ratio("cvtg_word_correct", "cvtg_word_total"), True),
    ("cvtg_ned", None, "CVTG NED",
     "Mean per-word similarity over all ground-truth words of the set.",
     Ratio("cvtg_word_ned_sum", "cvtg_word_total"), True),
)  # fmt: skip

for _name, _function, _label, _doc, _aggregate, _summary in _RECORDS:
    register_metric(
        Metric(
            _name,
            _function,
            label=_label,
            higher_is_better=True,
            doc=_doc,
            family=FAMILY,
            aggregate=_aggregate,
            unit="words" if _name in ("cvtg_word_correct", "cvtg_word_total") else "",
            reference=REFERENCE,
            summary=_summary,
            # the per-image sum only feeds the pooled NED; TextCrafter writes the mean
            helper=_name == "cvtg_word_ned_sum",
        )
    )
