"""LeX-Bench PNED and recall (LeX-Art ``evaluation/cal_pned_and_recall.py``), pair by pair.

The benchmark compares a list of ground-truth text items with the OCR lines:

* Items: LeX's ``text`` list, lower-cased, each item kept whole. The expected cell maps onto
  it as follows (see :func:`lex_items`): one item per non-blank line when the cell contains a
  newline (so items with spaces survive), else one item per whitespace-separated word.
* Tokens: every OCR line lower-cased and split on the single space character ``" "`` only;
  tabs stay inside a token and runs of spaces yield empty tokens, which count. An image with
  no OCR line has one empty line. Here the lines are the read cell's ``"\\n"``-separated lines
  (a reader's lines become PaddleOCR's boxes first, spaces kept: :data:`UNITS`, applied by
  ``score_pairs``).
* NED of two strings: Levenshtein distance / the longer length (0 for two empty strings).
* PNED (lower is better, not bounded by 1): the minimum total NED over a one-to-one matching
  of tokens to items (Hungarian algorithm) plus one per token or item left unmatched.
* Recall: items taken in order, each matched to the first unused token (in reading order)
  whose NED is at most 0.3; matched items / all items. Greedy, so it can miss a better
  assignment. The original divides by zero when there are no items; here that is NaN.
* The set's PNED and recall are plain means over the images that have items: the original
  stops with ZeroDivisionError on an image without items, so its numbers only ever cover
  images with ground truth. Such an image keeps its per-image PNED (tokens + 0 items) but is
  left out of the set's PNED, through the helper columns ``lex_pned_scored`` (the PNED of an
  image with items, else 0) and ``lex_scored`` (1 for an image with items, else 0).

>>> lex_pned("COFFEE TEA", "COFFEE\\nTEA SHOP")
1.0
>>> lex_recall("COFFEE TEA", "COFEE\\nTEA SHOP")
1.0
>>> lex_summary([{"lex_pned": 1.0, "lex_recall": 1.0}, {"lex_pned": 2.0, "lex_recall": 0.5}])
{'lex_pned': 1.5, 'lex_recall': 0.75}
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any

from rapidfuzz.distance import Levenshtein

from glyphbench.scoring.table import (
    Mean,
    Metric,
    Ratio,
    ReaderUnits,
    on_raw,
    register_metric,
    register_units,
)
from glyphbench.scoring.units import verbatim_boxes

FAMILY = "lex"
REFERENCE = (
    "zhaoshitian/LeX-Art@48a80d51b1535f6ce49b5cc1d114d5cf0b0960ed evaluation/cal_pned_and_recall.py"
)
#: A token counts for recall when its NED to the item is at most this (line 30 of the original).
RECALL_THRESHOLD = 0.3


def lex_items(expected: str) -> list[str]:
    """The ground-truth items of an expected cell, lower-cased.

    >>> lex_items("Communicate  Execute")
    ['communicate', 'execute']
    >>> lex_items("NEW ARTISTS\\nARTI 2021\\n")
    ['new artists', 'arti 2021']
    """
    if "\n" in expected:
        return [line.strip().lower() for line in expected.split("\n") if line.strip()]
    return expected.lower().split()


def lex_tokens(read: str) -> list[str]:
    """The OCR tokens of a read cell: lines lower-cased and split on single spaces.

    >>> lex_tokens("KAYAK  SAIL ")
    ['kayak', '', 'sail', '']
    >>> lex_tokens("")
    ['']
    """
    return [token for line in read.lower().split("\n") for token in line.split(" ")]


def normalized_edit_distance(first: str, second: str) -> float:
    """Levenshtein distance over the longer length; 0.0 for two empty strings.

    >>> normalized_edit_distance("abcdefghij", "abcdefg")
    0.3
    """
    longest = max(len(first), len(second))
    return Levenshtein.distance(first, second) / longest if longest else 0.0


@lru_cache(maxsize=4096)
def _scores(expected: str, read: str) -> tuple[float, float]:
    items, tokens = lex_items(expected), lex_tokens(read)
    distances = [[normalized_edit_distance(token, item) for item in items] for token in tokens]
    return _pned(distances, len(tokens), len(items)), _greedy_recall(distances, len(items))


def _pned(distances: list[list[float]], token_count: int, item_count: int) -> float:
    unmatched = abs(token_count - item_count)
    if not item_count:
        return float(unmatched)
    import numpy as np
    from scipy.optimize import linear_sum_assignment

    cost = np.array(distances, dtype=np.float64)
    rows, columns = linear_sum_assignment(cost)
    return float(cost[rows, columns].sum() + unmatched)


def _greedy_recall(distances: list[list[float]], item_count: int) -> float:
    if not item_count:
        return math.nan
    used_tokens: set[int] = set()
    found = 0
    for item_index in range(item_count):
        for token_index, row in enumerate(distances):
            if token_index not in used_tokens and row[item_index] <= RECALL_THRESHOLD:
                used_tokens.add(token_index)
                found += 1
                break
    return found / item_count


def lex_pned(expected: str, read: str) -> float:
    """Matched NED sum plus one per unmatched token or item (lower is better)."""
    return _scores(expected, read)[0]


def lex_recall(expected: str, read: str) -> float:
    """Share of items greedily matched by a token within NED 0.3; NaN without items."""
    return _scores(expected, read)[1]


def lex_scored(expected: str) -> float:
    """1.0 when the image has ground-truth items (the original can score it), else 0.0.

    >>> lex_scored("SALE"), lex_scored("  ")
    (1.0, 0.0)
    """
    return float(bool(lex_items(expected)))


def lex_pned_scored(expected: str, read: str) -> float:
    """The PNED of an image with items, 0.0 for one without (the set's PNED skips it).

    >>> lex_pned_scored("", "SOMETHING"), lex_pned("", "SOMETHING")
    (0.0, 1.0)
    """
    return lex_pned(expected, read) if lex_items(expected) else 0.0


def lex_summary(rows: Iterable[Mapping[str, Any]]) -> dict[str, float]:
    """Means of PNED and recall over images with items (those without have no recall).

    >>> lex_summary([{"lex_pned": 2.0, "lex_recall": float("nan")},
    ...              {"lex_pned": 0.5, "lex_recall": 1.0}])
    {'lex_pned': 0.5, 'lex_recall': 1.0}
    """
    pneds: list[float] = []
    recalls: list[float] = []
    for row in rows:
        recall = float(row["lex_recall"])
        if not math.isnan(recall):  # NaN exactly when the image has no items
            pneds.append(float(row["lex_pned"]))
            recalls.append(recall)
    return {
        "lex_pned": sum(pneds) / len(pneds) if pneds else math.nan,
        "lex_recall": sum(recalls) / len(recalls) if recalls else math.nan,
    }


#: PaddleOCR boxes: one per line that holds text, as the reader returned it (spaces kept).
UNITS = register_units(
    ReaderUnits(
        FAMILY,
        verbatim_boxes,
        rule="one PaddleOCR box per line that holds text, kept verbatim: end and double spaces "
        "stay (each costs an empty token); lines of whitespace only are no box; any other "
        "Unicode space becomes one U+0020",
        source="evaluation/cal_pned_and_recall.py:103 (each box text only lower-cased, no box: "
        '[""]) and :42, :67 (tokens split on U+0020 only); the released example outputs '
        "(evaluation/test_file_examples/lex_bench_easy_flux_dev.json) hold 12 PaddleOCR boxes "
        "with end spaces and 2 with double spaces among 3,696, and no blank box",
    )
)

_SKIPS_IMAGES_WITHOUT_ITEMS = Ratio("lex_pned_scored", "lex_scored")

for _name, _function, _label, _better, _doc, _aggregate, _summary in (
    ("lex_pned", lex_pned, "LeX PNED", False,
     "Hungarian-matched NED sum between OCR tokens and text items, plus one per unmatched "
     "token or item; the set's value averages images with items only.",
     _SKIPS_IMAGES_WITHOUT_ITEMS, 1),
    ("lex_recall", lex_recall, "LeX recall", True,
     "Share of text items greedily matched by an OCR token within NED 0.3.", Mean(), 2),
    ("lex_pned_scored", lex_pned_scored, "LeX PNED (images with items)", False,
     "The image's PNED when it has text items, else 0 (numerator of the set's PNED).",
     Mean(), 0),
    ("lex_scored", lambda expected, _read: lex_scored(expected), "LeX images with items", True,
     "1 when the image has text items, else 0 (denominator of the set's PNED).", Mean(), 0),
):  # fmt: skip
    register_metric(
        Metric(
            _name,
            on_raw(_function),
            label=_label,
            higher_is_better=_better,
            doc=_doc,
            family=FAMILY,
            aggregate=_aggregate,
            reference=REFERENCE,
            summary=_summary,
            # numerator and denominator of the set's PNED; LeX-Bench's code has no such column
            helper=_name in ("lex_pned_scored", "lex_scored"),
        )
    )
