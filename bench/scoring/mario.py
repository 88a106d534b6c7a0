"""MARIO-Eval's OCR metrics (TextDiffuser): word precision, recall, F and accuracy.

TextDiffuser's ``eval/ocr_eval.py`` compares, for every generated image, the
keywords of its prompt with the lines of the OCR result file of that image:

* **Keywords** (ground truth): the prompt line is stripped and lower-cased, every
  span between two ASCII single quotes (``'...'``, shortest match) is taken and
  split on whitespace. :func:`mario_keywords` reproduces this for suite loaders.
* **Predictions**: the lines of the OCR file as ``readlines()`` returns them
  (split at ``\\n``, ``\\r\\n`` or ``\\r``; a trailing line break adds no line), each
  stripped and lower-cased. A blank line is a prediction too (an empty string
  that matches nothing).
* **Matched**: the size of the multiset intersection of predictions and keywords
  (each keyword can match one prediction).
* **Precision** = matched / (predictions + 1e-8); **recall** = matched /
  (keywords + 1e-8), so a perfect image scores just under 1 and an empty side 0.
* **Accuracy** = 1 when the predictions, sorted and concatenated *without a
  separator*, equal the keywords sorted and concatenated: word order is free,
  blank lines vanish, and ``["ab", "c"]`` equals ``["a", "bc"]``.

Over a set: the mean of each per-image value; **F** = 2PR / (P + R + 1e-8) of the
mean P and mean R (not the mean of per-image F).

Pair mapping: the expected cell holds the keywords joined by single spaces
(``" ".join(mario_keywords(prompt))``), so ``expected.split()`` gives the keyword
list back (a keyword never contains whitespace or an ASCII apostrophe); the read
cell is the OCR result file's content, one detected word (box) per line. A glyphbench
reader's lines get there through :data:`UNITS` (every word on its own line), which
:func:`glyphbench.scoring.score_pairs` applies first; the functions here take the file's content.

>>> mario_precision("hello world", "hello\\nworld\\nfoo")  # 2 of 3 predictions
0.6666666644444444
>>> mario_recall("hello world", "HELLO"), mario_acc("ab c", "a\\nbc")
(0.4999999975, 1.0)
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from glyphbench.scoring.primitives import exact_mean
from glyphbench.scoring.table import (
    Derived,
    Mean,
    Metric,
    ReaderUnits,
    register_metric,
    register_units,
)
from glyphbench.scoring.units import words_per_line

REFERENCE = "microsoft/unilm@159df56cdc3f59086b192ec0dc13043b05779ab7 textdiffuser/eval/ocr_eval.py"

_QUOTED = re.compile(r"'(.*?)'")
_EPSILON = 1e-8


def mario_keywords(prompt: str) -> list[str]:
    """The keywords MARIO-Eval scores for one prompt line (lower-cased, quoted, split).

    >>> mario_keywords("A sign that says 'Hello World' and 'OPEN'")
    ['hello', 'world', 'open']
    >>> mario_keywords("a 'don't' sign")  # the quote inside the word ends the span
    ['don']
    """
    spans = _QUOTED.findall(prompt.strip().lower())
    return [word for span in spans for word in span.split()]


def read_lines(read: str) -> list[str]:
    """The read cell's lines as ``open(...).readlines()`` would return them, stripped.

    Universal newlines: ``\\r\\n`` and ``\\r`` end a line like ``\\n``; other Unicode
    line separators (U+2028, form feed, ...) do not.

    >>> read_lines("Hello\\r\\n\\n World \\n")
    ['hello', '', 'world']
    >>> read_lines("")
    []
    """
    text = read.replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    if lines[-1] == "":  # text ends with a line break (or is empty): no further line
        lines.pop()
    return [line.strip().lower() for line in lines]


class MarioCounts(NamedTuple):
    """The counts behind one image's values."""

    matched: int
    predictions: int
    keywords: int
    accurate: bool


@functools.lru_cache(maxsize=4096)
def mario_counts(expected: str, read: str) -> MarioCounts:
    """Matched words, prediction and keyword counts, and the accuracy test of one image.

    >>> mario_counts("the the cat", "the\\ncat\\ncat")
    MarioCounts(matched=2, predictions=3, keywords=3, accurate=False)
    """
    keywords = [word.lower() for word in expected.split()]
    predictions = read_lines(read)
    matched = sum((Counter(predictions) & Counter(keywords)).values())
    accurate = "".join(sorted(predictions)) == "".join(sorted(keywords))
    return MarioCounts(matched, len(predictions), len(keywords), accurate)


def mario_precision(expected: str, read: str) -> float:
    """Matched / (predictions + 1e-8).

    >>> mario_precision("hello", ""), mario_precision("hello", "hello\\n\\n")
    (0.0, 0.4999999975)
    """
    counts = mario_counts(expected, read)
    return counts.matched / (counts.predictions + _EPSILON)


def mario_recall(expected: str, read: str) -> float:
    """Matched / (keywords + 1e-8).

    >>> mario_recall("", "")
    0.0
    """
    counts = mario_counts(expected, read)
    return counts.matched / (counts.keywords + _EPSILON)


def mario_acc(expected: str, read: str) -> float:
    """1.0 when the sorted predictions and keywords concatenate to the same string.

    >>> mario_acc("", ""), mario_acc("b ab", "a\\nbb")
    (1.0, 1.0)
    """
    return float(mario_counts(expected, read).accurate)


def mario_f(precision: Any, recall: Any) -> Any:
    """F of the set's mean precision and mean recall (works on numbers and arrays).

    >>> round(mario_f(0.5, 1.0), 9)
    0.666666662
    """
    return 2 * precision * recall / (precision + recall + _EPSILON)


def summary(rows: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """Mean precision, recall and accuracy over the images, and F of the two means.

    >>> summary([{"mario_precision": 1.0, "mario_recall": 0.5, "mario_acc": 0.0},
    ...          {"mario_precision": 0.0, "mario_recall": 0.5, "mario_acc": 1.0}])
    {'mario_precision': 0.5, 'mario_recall': 0.5, 'mario_f': 0.4999999950000001, 'mario_acc': 0.5}
    """
    table = list(rows)
    means = {
        name: exact_mean([row[name] for row in table]) if table else float("nan")
        for name in ("mario_precision", "mario_recall", "mario_acc")
    }
    return {
        "mario_precision": means["mario_precision"],
        "mario_recall": means["mario_recall"],
        "mario_f": float(mario_f(means["mario_precision"], means["mario_recall"])),
        "mario_acc": means["mario_acc"],
    }


def _record(name: str, function: Any, label: str, doc: str, summary: int) -> Metric:
    return Metric(
        name,
        lambda pair: function(pair.expected_raw, pair.read_raw),
        label=label,
        higher_is_better=True,
        doc=doc,
        family="mario",
        reference=REFERENCE,
        aggregate=Mean(),
        summary=summary,
    )


#: MaskTextSpotterV3 returns one word per detected instance; the OCR file holds one per line.
UNITS = register_units(
    ReaderUnits(
        "mario",
        words_per_line,
        rule="every whitespace-separated word of the reader's lines on its own line (one "
        "MaskTextSpotterV3 detection per word); blank lines and end spaces vanish",
        source="MhLiao/MaskTextSpotterV3@ce2ef11 tools/demo.py compute_prediction (one "
        "result_words entry per detected box, alphabet 0-9a-z without a space); "
        "textdiffuser/eval/ocr_eval.py:84 (readlines of the result file), :52 and :61-64 "
        "(each line stripped, lower-cased and matched whole against the keywords)",
    )
)

MARIO = [
    register_metric(m)
    for m in (
        _record(
            "mario_precision",
            mario_precision,
            "MARIO precision",
            "Keywords matched (multiset) / (OCR lines + 1e-8), lines stripped and lower-cased; "
            "mean over images.",
            1,
        ),
        _record(
            "mario_recall",
            mario_recall,
            "MARIO recall",
            "Keywords matched (multiset) / (keywords + 1e-8); mean over images.",
            2,
        ),
        Metric(
            "mario_f",
            None,
            label="MARIO F",
            higher_is_better=True,
            doc="2PR / (P + R + 1e-8) of the mean precision P and mean recall R.",
            family="mario",
            reference=REFERENCE,
            aggregate=Derived(("mario_precision", "mario_recall"), mario_f),
            summary=3,
        ),
        _record(
            "mario_acc",
            mario_acc,
            "MARIO accuracy",
            "1 when the sorted OCR lines and sorted keywords concatenate (no separator) to "
            "the same string; mean over images.",
            4,
        ),
    )
]
