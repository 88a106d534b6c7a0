"""COCO-Text end-to-end transcription accuracy, as ``coco_evaluation.py`` scores it.

COCO-Text's ``evaluateEndToEnd`` first pairs each ground-truth box with a detected
box (IoU >= 0.5), then compares the two transcriptions of every matched pair
after its ``decode`` step:

* a line break becomes a space;
* every character outside ``A-Z a-z 0-9 ! ? @ _ - + * : & / .`` and the space is
  deleted, wherever it is (not only at word ends): ``it's`` becomes ``its``,
  ``Café`` becomes ``caf``, a tab disappears, spaces are kept as they are (two
  spaces stay two);
* the result is lower-cased.

A ground truth shorter than 3 characters after decoding is *ignored* (neither
correct nor incorrect). Otherwise the pair is correct for **exact** when the edit
distance is 0 and for **distance1** when it is at most 1. Each accuracy is pooled
over the set: correct / (correct + incorrect), ignored pairs left out.

Pair mapping: the detection stage has no counterpart; a pair is one matched box
whose ground truth is the expected cell and whose transcription is the read cell
(its lines become spaces through ``decode`` itself). Ignored pairs get NaN for
exact and distance1, so the mean over pairs (NaN skipped) is the pooled accuracy.

This is not the rule glyphbench's ``strip_punct`` normalisation applies (that one
strips punctuation from word ends only, ICDAR 2015's rule); see
``docs/scorers/cocotext.md``.

>>> cocotext_decode("It's\\n50% OFF!")
'its 50 off!'
>>> cocotext_exact("he-llo", "hello"), cocotext_distance1("he-llo", "hello")
(0.0, 1.0)
>>> cocotext_ignored("é12", "12"), cocotext_exact("é12", "12")
(1.0, nan)
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from glyphbench.scoring.primitives import edit_distance
from glyphbench.scoring.table import Metric, ReaderUnits, register_metric, register_units
from glyphbench.scoring.units import one_line

REFERENCE = "andreasveit/coco-text@24fb22355ceae49dff0ffb319d09559eb2cfdb89 coco_evaluation.py"

#: Shortest decoded ground truth that is scored.
MIN_LENGTH = 3
_DELETED = re.compile(r"[^a-zA-Z0-9!?@_\-+*:&/ .]")


def cocotext_decode(text: str) -> str:
    """COCO-Text's ``decode``: line breaks to spaces, other characters deleted, lower case.

    >>> cocotext_decode("Tab\\tSeparated  (x)")
    'tabseparated  x'
    """
    return _DELETED.sub("", text.replace("\n", " ")).lower()


@functools.lru_cache(maxsize=4096)
def cocotext_distance(expected: str, read: str) -> int | None:
    """Edit distance of the decoded texts; None when the ground truth is ignored.

    >>> cocotext_distance("Hello!", "hello"), cocotext_distance("ab", "ab")
    (1, None)
    """
    truth = cocotext_decode(expected)
    if len(truth) < MIN_LENGTH:
        return None
    return edit_distance(truth, cocotext_decode(read))


def cocotext_ignored(expected: str, read: str) -> float:
    """1.0 when the decoded expected text is shorter than 3 characters (not scored).

    >>> cocotext_ignored("a!", ""), cocotext_ignored("a!!", "")
    (1.0, 0.0)
    """
    return float(cocotext_distance(expected, read) is None)


def _within(expected: str, read: str, threshold: int) -> float:
    distance = cocotext_distance(expected, read)
    return math.nan if distance is None else float(distance <= threshold)


def cocotext_exact(expected: str, read: str) -> float:
    """1.0 when the decoded texts are equal, 0.0 when not, NaN when ignored.

    >>> cocotext_exact("CAFÉ", "caf"), cocotext_exact("a  b", "a b")
    (1.0, 0.0)
    """
    return _within(expected, read, 0)


def cocotext_distance1(expected: str, read: str) -> float:
    """1.0 when the decoded texts are at most one edit apart, 0.0 when not, NaN when ignored.

    >>> cocotext_distance1("abc", "ab"), cocotext_distance1("abc", "abcde")
    (1.0, 0.0)
    """
    return _within(expected, read, 1)


def summary(rows: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """Pooled accuracies: correct / scored pairs (ignored pairs, NaN, left out).

    >>> summary([{"cocotext_exact": 1.0, "cocotext_distance1": 1.0},
    ...          {"cocotext_exact": float("nan"), "cocotext_distance1": float("nan")},
    ...          {"cocotext_exact": 0.0, "cocotext_distance1": 1.0}])
    {'cocotext_exact': 0.5, 'cocotext_distance1': 1.0}
    """
    table = list(rows)
    result = {}
    for name in ("cocotext_exact", "cocotext_distance1"):
        scored = [row[name] for row in table if not math.isnan(row[name])]
        result[name] = sum(scored) / len(scored) if scored else math.nan
    return result


#: A detection's transcription is one string; the reader's lines become one line.
UNITS = register_units(
    ReaderUnits(
        "cocotext",
        one_line,
        rule="the reader's words on one line, single ASCII spaces between (one transcription "
        "per matched box); blank lines and end spaces vanish",
        source="coco_evaluation.py:139 and :152 (one utf8_string per box, through decode, "
        ":226-232, which deletes every character but [A-Za-z0-9!?@_-+*:&/ .])",
    )
)

_COMMON: dict[str, Any] = {"family": "cocotext", "reference": REFERENCE}

COCOTEXT = [
    register_metric(
        Metric(
            "cocotext_exact",
            lambda pair: cocotext_exact(pair.expected_raw, pair.read_raw),
            label="COCO-Text exact",
            higher_is_better=True,
            doc="Decoded texts equal (non-[A-Za-z0-9!?@_-+*:&/ .] deleted, lower case); "
            "pooled over pairs whose decoded ground truth has >= 3 characters.",
            summary=1,
            **_COMMON,
        )
    ),
    register_metric(
        Metric(
            "cocotext_distance1",
            lambda pair: cocotext_distance1(pair.expected_raw, pair.read_raw),
            label="COCO-Text distance <= 1",
            higher_is_better=True,
            doc="Decoded texts at most one edit apart; pooled over pairs whose decoded "
            "ground truth has >= 3 characters.",
            summary=2,
            **_COMMON,
        )
    ),
    register_metric(
        Metric(
            "cocotext_ignored",
            lambda pair: cocotext_ignored(pair.expected_raw, pair.read_raw),
            label="COCO-Text ignored",
            higher_is_better=False,
            doc="1 when the decoded ground truth is shorter than 3 characters and the pair "
            "is left out of the accuracies; the mean is the share left out.",
            **_COMMON,
        )
    ),
]
