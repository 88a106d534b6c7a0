"""LongText-Bench's text score, reproduced: families ``longtext`` (English) and ``longtext-zh``.

LongText-Bench (X-Omni) reads every generated image with a VLM and scores the
*recall* of the ground-truth text: how much of it appears in the answer, in any
order, pooled over all images. One contract pair is one image: ``expected`` is
the prompt's ``text`` list joined by single spaces (exactly what the original
scores) and ``read`` is the reader's raw answer. The rules:

1. **Reader answer cleaning** (done by the original's reader script). Only
   ``No text recognized.`` (with the full stop) is deleted: the cleaning loop
   rebinds its result from the untouched answer on each pass, so the first
   keyword, ``addCriterion``, survives. ``No text recognized`` without the full
   stop, the refusal the instruction asks for, is kept and scored as text.
2. **Character filter.** Everything except ASCII letters and digits, the accented
   letters ``àâäéèêëîïôöùûüç`` (and capitals), the ideographs U+4E00..U+9FA5 and
   whitespace is deleted (the same set as OneIG-Bench).
   English (``longtext``): whitespace runs become one space, the ends are
   stripped and the text is lower-cased. Chinese (``longtext-zh``): all whitespace
   is deleted and the case is kept. The language is the family's, not the text's.
3. **Per image.** English units are whitespace-separated words, Chinese units are
   characters (Latin letters and digits count one each). Matched units are the bag
   intersection of ground-truth and answer units; ``longtext_recall`` is matched
   over ground-truth units. The original raises ZeroDivisionError when the
   filtered ground truth is empty; glyphbench gives NaN and counts 0 of 0.
4. **Over the set.** ``longtext_text_score`` = matched units summed over all
   images / ground-truth units summed over all images (helper columns
   ``longtext_matched``, ``longtext_total``), not a mean of per-image recalls.

The source is ``textbench/evaluate_text_reward.py`` (cleaning) and
``textbench/summary_scores.py`` (scoring) of X-Omni-Team/X-Omni (see
:data:`REFERENCE`); ``docs/scorers/longtext.md`` gives the line of each rule.

>>> longtext_recall("FRESH BREWS, EVERY MORNING", "Fresh brews every day")
0.75
>>> longtext_recall("上海欢迎你", "海上\\n欢迎", language="zh")
0.8
>>> longtext_counts("Menu", "addCriterion\\nNo text recognized.")
(0, 1)
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, Literal

from glyphbench.scoring.oneig import delete_unkept, remove_keywords
from glyphbench.scoring.table import Metric, Ratio, ReaderUnits, register_metric, register_units
from glyphbench.scoring.units import as_answer

REFERENCE = (
    "X-Omni-Team/X-Omni@2b8237bb3789638c290eeda3e83ed81bd3652c3b "
    "textbench/summary_scores.py, textbench/evaluate_text_reward.py"
)

Language = Literal["en", "zh"]

#: The language each family scores in (summary_scores.py ``--mode``).
FAMILY_LANGUAGE: dict[str, Language] = {"longtext": "en", "longtext-zh": "zh"}

#: The one keyword the original's cleaning really deletes.
HALLUCINATION_KEYWORD = "No text recognized."


def longtext_clean_read(read: str) -> str:
    """The reader answer after X-Omni's cleaning: only ``No text recognized.`` goes.

    >>> longtext_clean_read("addCriterion Exit No text recognized.")
    'addCriterion Exit '
    """
    return remove_keywords(read, [HALLUCINATION_KEYWORD])


def longtext_normalize(text: str, language: Language = "en") -> str:
    """X-Omni's ``preprocess_string`` for ``language``.

    >>> longtext_normalize("  Café,  CRÈME! 5G技术 ")
    'café crème 5g技术'
    >>> longtext_normalize("AI 时代\\uff0c你好", "zh")
    'AI时代你好'
    """
    kept = delete_unkept(text)
    if language == "en":
        return " ".join(kept.split()).lower()
    return "".join(kept.split())


@lru_cache(maxsize=4096)
def longtext_counts(expected: str, read: str, language: Language = "en") -> tuple[int, int]:
    """(matched units, ground-truth units) for one image.

    >>> longtext_counts("the the cat", "the cat cat")
    (2, 3)
    """
    truth = longtext_normalize(expected, language)
    answer = longtext_normalize(longtext_clean_read(read), language)
    if language == "en":
        truth_units, answer_units = truth.split(), answer.split()
    else:
        truth_units, answer_units = list(truth), list(answer)
    matched = sum((Counter(truth_units) & Counter(answer_units)).values())
    return matched, len(truth_units)


def longtext_recall(expected: str, read: str, language: Language = "en") -> float:
    """Recall of one image's ground-truth units; NaN when there are none.

    >>> longtext_recall("!!!", "anything")
    nan
    """
    matched, total = longtext_counts(expected, read, language)
    return matched / total if total else math.nan


def longtext_summary(rows: Iterable[Mapping[str, float]]) -> dict[str, float]:
    """The pooled text score from rows with ``longtext_matched`` and ``longtext_total``.

    >>> longtext_summary([{"longtext_matched": 1, "longtext_total": 4},
    ...                   {"longtext_matched": 5, "longtext_total": 6}])
    {'longtext_text_score': 0.6}
    """
    rows = list(rows)
    total = sum(row["longtext_total"] for row in rows)
    matched = sum(row["longtext_matched"] for row in rows)
    return {"longtext_text_score": matched / total if total else math.nan}


def _metrics(family: str) -> tuple[Metric, ...]:
    language = FAMILY_LANGUAGE[family]
    pooled = Ratio("longtext_matched", "longtext_total")
    common: dict[str, Any] = {"family": family, "reference": REFERENCE}
    unit = "words" if language == "en" else "characters"
    return (
        Metric(
            "longtext_recall",
            lambda pair: longtext_recall(pair.expected_raw, pair.read_raw, language),
            label="LongText recall",
            higher_is_better=True,
            doc=f"Share of the ground truth's {unit} found in the answer (bag recall).",
            aggregate=pooled,
            **common,
        ),
        Metric(
            "longtext_matched",
            lambda pair: float(longtext_counts(pair.expected_raw, pair.read_raw, language)[0]),
            label="LongText matched units",
            higher_is_better=True,
            doc=f"Ground-truth {unit} found in the answer.",
            unit=unit,
            helper=True,
            **common,
        ),
        Metric(
            "longtext_total",
            lambda pair: float(longtext_counts(pair.expected_raw, pair.read_raw, language)[1]),
            label="LongText ground-truth units",
            higher_is_better=True,
            doc=f"Ground-truth {unit} after LongText-Bench's filter.",
            unit=unit,
            helper=True,
            **common,
        ),
        Metric(
            "longtext_text_score",
            None,
            label="LongText text score",
            higher_is_better=True,
            doc=f"Matched / ground-truth {unit}, pooled over all images.",
            aggregate=pooled,
            summary=True,
            **common,
        ),
    )


UNITS = [
    register_units(
        ReaderUnits(
            family,
            as_answer,
            rule="the VLM's answer for the image as it is (its filter treats every Unicode "
            "whitespace as a space in English and deletes it in Chinese)",
            source="textbench/evaluate_text_reward.py:71-75 (one answer per image), "
            "textbench/summary_scores.py:10-18 (preprocess_string)",
        )
    )
    for family in FAMILY_LANGUAGE
]

#: The records of both families (the same column names, one family per language).
FAMILY_METRICS: dict[str, tuple[Metric, ...]] = {
    family: _metrics(family) for family in FAMILY_LANGUAGE
}

for _records in FAMILY_METRICS.values():
    for _metric in _records:
        register_metric(_metric)
