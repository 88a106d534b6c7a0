"""OneIG-Bench's text score, reproduced: families ``oneig`` (English) and ``oneig-zh`` (Chinese).

OneIG-Bench scores the *Text Rendering* prompts by reading every generated image
with a VLM and comparing the answer with the prompt's ground truth. One contract
pair is one image (one cell of OneIG's grid): ``expected`` is the ground truth
(the prompt's text spans joined by single spaces) and ``read`` is the reader's raw
answer for that cell. The rules, in the order the original applies them:

1. **Reader answer cleaning.** Every occurrence of ``addCriterion`` and of
   ``No text recognized.`` (with the full stop) is deleted. The bare refusal the
   reader is told to give, ``No text recognized`` without a full stop, is kept and
   scored as text.
2. **Ground truth as OneIG stores it.** OneIG's CSV holds the spans as a Python
   list literal (``"['a', 'b']"``) and scores that text itself, never the parsed
   list (``text_score.py:50-56``): brackets, quotes and the ``, `` between spans are
   deleted by the filter, which is why joining the spans with one space gives the
   same result. A character is scored as the file holds it: a no-break space, a
   line break or an ideographic space typed in the file is whitespace; an escape
   typed as text (``\\xa0``, ``\\n``) loses its backslash and leaves its letters
   (``xa0``, ``n``). The expected cell holds the spans as the file types them (the
   suite's loader keeps backslashes as text), so it is filtered as it is.
3. **Character filter.** Everything except ASCII letters and digits, the accented
   letters ``àâäéèêëîïôöùûüç`` (and their capitals), the ideographs
   U+4E00..U+9FA5 and whitespace is deleted. If a Chinese ideograph is left, all
   whitespace is deleted too; otherwise whitespace runs become one space and the
   ends are stripped. Ground truth and answer are filtered independently, so an
   English answer to a Chinese text keeps its spaces and vice versa.
4. **Per image.** ``oneig_ed``: Levenshtein distance (unit costs, case-sensitive,
   not normalised, not capped) between the two filtered strings. ``oneig_cr``
   (completion rate): 1 when that distance is 0, else 0. ``oneig_wac`` (word
   accuracy): the bag intersection of ground-truth units and answer units over the
   number of ground-truth units, 0 when there are none; the units are characters
   (spaces of the answer included) when the filtered ground truth holds an
   ideograph, else whitespace-separated words.
5. **Over the set.** ``oneig_ed`` and ``oneig_cr`` are means over images;
   ``oneig_wac`` is pooled: matched units over ground-truth units, summed over all
   images (helper columns ``oneig_wac_matched``, ``oneig_wac_total``); then
   ``oneig_text_score = 1 - min(M, ED) * (1 - CR) * (1 - WAC) / M`` with
   ``M = 100`` for ``oneig`` and ``M = 50`` for ``oneig-zh``. The language only
   changes ``M``; the per-image values depend on the characters alone.

The source is ``scripts/text/text_score.py`` and ``scripts/text/text_utils.py`` of
OneIG-Bench/OneIG-Benchmark (see :data:`REFERENCE`); ``docs/scorers/oneig.md``
gives the line of each rule.

>>> oneig_ed("Grand Opening", "GRAND OPENING"), oneig_wac("Grand Opening", "Grand opening")
(10.0, 0.5)
>>> oneig_ed("Exit", "No text recognized."), oneig_ed("Exit", "No text recognized")
(4.0, 16.0)
>>> oneig_ed("Grand\\u00a0Opening", "Grand Opening"), oneig_ed("Deep\\\\nLearning", "DeepnLearning")
(0.0, 0.0)
>>> oneig_wac("城市地区 郊区", "城市\\n郊区")
0.6666666666666666
>>> round(float(oneig_text_score(30.0, 0.25, 0.5, max_distance=100)), 6)
0.8875
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import lru_cache, partial
from typing import Any, NamedTuple

import numpy as np
from rapidfuzz.distance import Levenshtein

from glyphbench.scoring.table import (
    Derived,
    Metric,
    Ratio,
    ReaderUnits,
    register_metric,
    register_units,
)
from glyphbench.scoring.units import as_answer

REFERENCE = (
    "OneIG-Bench/OneIG-Benchmark@41b49831e79e6dde5323618c164da1c4cf0f699d "
    "scripts/text/text_score.py, scripts/text/text_utils.py"
)

#: The cap ``M`` of the text score, by family (text_score.py: EN 100, ZH 50).
MAX_EDIT_DISTANCE: dict[str, int] = {"oneig": 100, "oneig-zh": 50}

#: Strings deleted from every reader answer, in this order.
HALLUCINATION_KEYWORDS = ("addCriterion", "No text recognized.")

_ACCENTED = "àâäéèêëîïôöùûüçÀÂÄÉÈÊËÎÏÔÖÙÛÜÇ"
_KEPT = f"\u4e00-\u9fa5a-zA-Z0-9{_ACCENTED}"
_OUTSIDE_KEPT_OR_SPACE = re.compile(f"[^{_KEPT}\\s]")
_IDEOGRAPH = re.compile("[\u4e00-\u9fa5]")


def delete_unkept(text: str) -> str:
    """Delete every character outside the set OneIG and LongText-Bench keep (whitespace stays).

    >>> delete_unkept("Señor Müller, 5G技术\\uff01\\t\\u3007")
    'Seor Müller 5G技术\\t'
    """
    return _OUTSIDE_KEPT_OR_SPACE.sub("", text)


def has_ideograph(text: str) -> bool:
    """True when ``text`` holds a character of U+4E00..U+9FA5.

    >>> has_ideograph("5G技术"), has_ideograph("\\u3007")
    (True, False)
    """
    return _IDEOGRAPH.search(text) is not None


def remove_keywords(answer: str, keywords: Iterable[str]) -> str:
    """Delete each keyword: every occurrence, then once more after and before a newline.

    The two newline passes only matter when deleting a keyword forms a new one.

    >>> remove_keywords("Menu\\nNo text recognized.", ["No text recognized."])
    'Menu\\n'
    """
    for keyword in keywords:
        answer = answer.replace(keyword, "").replace(f"\n{keyword}", "")
        answer = answer.replace(f"{keyword}\n", "")
    return answer


def oneig_clean_read(read: str) -> str:
    """The reader answer after OneIG's hallucination cleaning (text_utils.py:17-23).

    >>> oneig_clean_read("addCriterion\\nMenu\\nNo text recognized.")
    '\\nMenu\\n'
    """
    return remove_keywords(read, HALLUCINATION_KEYWORDS)


def oneig_normalize(text: str) -> str:
    """OneIG's ``preprocess_string``: the character filter, then whitespace rules.

    >>> oneig_normalize("  Hello,   World! "), oneig_normalize("Hello 世界")
    ('Hello World', 'Hello世界')
    """
    kept = delete_unkept(text)
    if has_ideograph(kept):
        return "".join(kept.split())
    return " ".join(kept.split())


class OneigCounts(NamedTuple):
    """Per-image quantities from which every OneIG column follows."""

    edit_distance: int
    matched: int
    total: int


@lru_cache(maxsize=4096)
def oneig_counts(expected: str, read: str) -> OneigCounts:
    """Edit distance and matched / ground-truth unit counts for one image.

    >>> oneig_counts("the the the cat", "the cat")
    OneigCounts(edit_distance=8, matched=2, total=4)
    """
    truth = oneig_normalize(expected)
    answer = oneig_normalize(oneig_clean_read(read))
    distance = Levenshtein.distance(answer, truth)
    if has_ideograph(truth):
        truth_units, answer_units = list(truth), list(answer)
    else:
        truth_units, answer_units = truth.split(), answer.split()
    matched = sum((Counter(truth_units) & Counter(answer_units)).values())
    return OneigCounts(distance, matched, len(truth_units))


def oneig_ed(expected: str, read: str) -> float:
    """Levenshtein distance between the filtered answer and ground truth (not capped)."""
    return float(oneig_counts(expected, read).edit_distance)


def oneig_cr(expected: str, read: str) -> float:
    """Completion rate of one image: 1.0 when the filtered texts are equal, else 0.0."""
    return 1.0 if oneig_counts(expected, read).edit_distance == 0 else 0.0


def oneig_wac(expected: str, read: str) -> float:
    """Word accuracy of one image: matched / ground-truth units, 0.0 when there are none."""
    counts = oneig_counts(expected, read)
    return counts.matched / counts.total if counts.total else 0.0


def oneig_text_score(ed: Any, cr: Any, wac: Any, *, max_distance: int) -> Any:
    """``1 - min(M, ED) * (1 - CR) * (1 - WAC) / M`` on set-level ED, CR and WAC.

    Works on numbers and on numpy arrays (one value per bootstrap resample).

    >>> float(oneig_text_score(250.0, 0.0, 0.0, max_distance=100))
    0.0
    """
    return 1 - np.minimum(max_distance, ed) * (1 - cr) * (1 - wac) / max_distance


def oneig_summary(rows: Iterable[Mapping[str, float]], family: str = "oneig") -> dict[str, float]:
    """The set-level numbers OneIG reports, from per-image rows.

    Each row needs ``oneig_ed``, ``oneig_cr``, ``oneig_wac_matched`` and
    ``oneig_wac_total``. An empty set (where the original divides by zero) or a set
    without ground-truth units gives NaN.

    >>> rows = [{"oneig_ed": 0, "oneig_cr": 1, "oneig_wac_matched": 2, "oneig_wac_total": 2},
    ...         {"oneig_ed": 30, "oneig_cr": 0, "oneig_wac_matched": 1, "oneig_wac_total": 6}]
    >>> oneig_summary(rows)
    {'oneig_ed': 15.0, 'oneig_cr': 0.5, 'oneig_wac': 0.375, 'oneig_text_score': 0.953125}
    """
    rows = list(rows)
    count = len(rows)
    total = sum(row["oneig_wac_total"] for row in rows)
    ed = sum(row["oneig_ed"] for row in rows) / count if count else math.nan
    cr = sum(row["oneig_cr"] for row in rows) / count if count else math.nan
    wac = sum(row["oneig_wac_matched"] for row in rows) / total if total else math.nan
    score = float(oneig_text_score(ed, cr, wac, max_distance=MAX_EDIT_DISTANCE[family]))
    return {"oneig_ed": ed, "oneig_cr": cr, "oneig_wac": wac, "oneig_text_score": score}


def _metrics(family: str) -> tuple[Metric, ...]:
    common: dict[str, Any] = {"family": family, "reference": REFERENCE}
    return (
        Metric(
            "oneig_ed",
            lambda pair: oneig_ed(pair.expected_raw, pair.read_raw),
            label="OneIG edit distance",
            higher_is_better=False,
            doc="Levenshtein distance after OneIG's filter; mean over images.",
            unit="characters",
            summary=True,
            **common,
        ),
        Metric(
            "oneig_cr",
            lambda pair: oneig_cr(pair.expected_raw, pair.read_raw),
            label="OneIG completion rate",
            higher_is_better=True,
            doc="1 when the filtered texts are equal; mean over images.",
            summary=True,
            **common,
        ),
        Metric(
            "oneig_wac",
            lambda pair: oneig_wac(pair.expected_raw, pair.read_raw),
            label="OneIG word accuracy",
            higher_is_better=True,
            doc="Matched ground-truth words (Chinese: characters); pooled over images.",
            aggregate=Ratio("oneig_wac_matched", "oneig_wac_total"),
            summary=True,
            **common,
        ),
        Metric(
            "oneig_wac_matched",
            lambda pair: float(oneig_counts(pair.expected_raw, pair.read_raw).matched),
            label="OneIG matched units",
            higher_is_better=True,
            doc="Ground-truth words (Chinese: characters) found in the answer.",
            unit="units",
            helper=True,
            **common,
        ),
        Metric(
            "oneig_wac_total",
            lambda pair: float(oneig_counts(pair.expected_raw, pair.read_raw).total),
            label="OneIG ground-truth units",
            higher_is_better=True,
            doc="Ground-truth words (Chinese: characters) after OneIG's filter.",
            unit="units",
            helper=True,
            **common,
        ),
        Metric(
            "oneig_text_score",
            None,
            label="OneIG text score",
            higher_is_better=True,
            doc=f"1 - min(M, ED)(1 - CR)(1 - WAC)/M with M = {MAX_EDIT_DISTANCE[family]}.",
            aggregate=Derived(
                ("oneig_ed", "oneig_cr", "oneig_wac"),
                partial(oneig_text_score, max_distance=MAX_EDIT_DISTANCE[family]),
            ),
            summary=True,
            **common,
        ),
    )


UNITS = [
    register_units(
        ReaderUnits(
            family,
            as_answer,
            rule="the VLM's answer for the cell as it is (its filter turns every Unicode "
            "whitespace run into one space, or deletes it when an ideograph is present)",
            source="scripts/text/text_score.py:75 (one answer per cell, each scored alone), "
            "scripts/text/text_utils.py:5-15 (preprocess_string: \\s keeps Unicode spaces, "
            "\\s+ becomes one space)",
        )
    )
    for family in MAX_EDIT_DISTANCE
]

#: The records of both families (the same column names, one family per language).
FAMILY_METRICS: dict[str, tuple[Metric, ...]] = {
    family: _metrics(family) for family in MAX_EDIT_DISTANCE
}

for _records in FAMILY_METRICS.values():
    for _metric in _records:
        register_metric(_metric)
