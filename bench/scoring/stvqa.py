"""ST-VQA's ANLS as the Robust Reading Competition's evaluation script computes it.

ST-VQA (Biten et al., ICCV 2019) defines the Average Normalized Levenshtein
Similarity: ``nl = d(a, o) / max(|a|, |o|)`` and a score of ``1 - nl`` when
``nl < 0.5``, else 0. glyphbench's own ``anls`` follows that text. The RRC's
evaluation script, which scores the leaderboard, differs in two places:

* **the threshold is inclusive**: the script zeroes a result only when
  ``1 - nl < 0.5``, so ``nl`` exactly 0.5 scores 0.5 (the paper's rule gives 0);
* **the lengths are raw**: the distance is taken between the answers after
  ``' '.join(s.strip().lower().split())`` (ends stripped, lower case, every run of
  white space one space), but ``nl`` divides it by ``max(len(a.upper()),
  len(o.upper()))`` of the texts *as given*: spaces that normalisation removed
  still count in the length, and ``upper()`` can lengthen a text (``ß`` -> ``SS``).

Both texts empty give ``nl = 0`` (score 1). Several reference answers take the best
score; a glyphbench pair has one. The set's ANLS is the mean over questions.

Pair mapping: the expected cell is the reference answer, the read cell the
method's answer (one string; a reader's lines become one line, see ``UNITS``).

>>> stvqa_anls("ab", "a")        # nl = 0.5 exactly: kept (the paper's rule gives 0)
0.5
>>> stvqa_anls("  hello  ", "hello")  # distance 0
1.0
>>> stvqa_anls("ab  ", "a")      # distance 1 over the raw length 4
0.75
"""

from __future__ import annotations

from glyphbench.scoring.primitives import edit_distance
from glyphbench.scoring.table import Mean, Metric, ReaderUnits, register_metric, register_units
from glyphbench.scoring.units import one_line

FAMILY = "stvqa"
REFERENCE = (
    "RRC ANLS evaluation script (rrc.cvc.uab.es, ST-VQA task 11; the same scoring loop ships "
    "as the InfographicVQA/DocVQA evaluate_method): per answer dist / max(len(gt.upper()), "
    "len(det.upper())), result zeroed when 1 - min(...) < threshold 0.5"
)

#: The script's default ``--anls_threshold``.
THRESHOLD = 0.5


def _normalised(text: str) -> str:
    """The script's preprocessing of both answers before the distance."""
    return " ".join(text.strip().lower().split())


def stvqa_nl(expected: str, read: str) -> float:
    """The script's normalised distance: normalised texts' distance over raw upper-cased lengths.

    >>> stvqa_nl("Straße", "strasse")  # distance 2 ("ß" vs "ss"), length len("STRASSE") = 7
    0.2857142857142857
    >>> stvqa_nl("", "")
    0.0
    """
    length = max(len(expected.upper()), len(read.upper()))
    if length == 0:
        return 0.0
    return edit_distance(_normalised(expected), _normalised(read)) / length


def stvqa_anls(expected: str, read: str) -> float:
    """``1 - nl``, or 0 when that is below 0.5 (inclusive threshold, as the script does).

    >>> stvqa_anls("hello", "help me")  # nl = 4/7
    0.0
    >>> stvqa_anls("HELLO", "hello")
    1.0
    """
    result = 1.0 - stvqa_nl(expected, read)
    return 0.0 if result < THRESHOLD else result


#: The method's answer is one string; glyphbench's lines become one line.
UNITS = register_units(
    ReaderUnits(
        FAMILY,
        one_line,
        rule="the reader's words on one line, single ASCII spaces between (one answer string)",
        source="the script's validate_data refuses an answer that is not a single string; how a "
        "reader's lines become that answer it does not say (an ST-VQA method answers a question, "
        "it is no OCR): glyphbench joins them as one line",
    )
)

STVQA = [
    register_metric(
        Metric(
            "stvqa_anls",
            lambda pair: stvqa_anls(pair.expected_raw, pair.read_raw),
            label="ST-VQA ANLS (RRC script)",
            higher_is_better=True,
            doc="1 - nl when 1 - nl >= 0.5 (inclusive), else 0; nl = distance of the "
            "stripped, lower-cased, space-collapsed answers over the longer raw upper-cased "
            "length. The set's value is the mean over questions.",
            family=FAMILY,
            aggregate=Mean(),
            reference=REFERENCE,
            summary=1,
        )
    ),
]
