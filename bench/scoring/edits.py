"""Typo edits: how a reader reported the typos injected into a known text (pure text).

The reader calibration card (:mod:`glyphbench.calibration.calibrate`) and the report's reader
faithfulness (:func:`glyphbench.report.controls.reader_faithfulness`) both count a reader's
verdicts on the typo controls with :func:`classify_edits` and :func:`faithfulness`,
and warn with :func:`warning` below :data:`FAITHFULNESS_FLOOR`.
"""

from __future__ import annotations

from collections import Counter

from rapidfuzz.distance import Levenshtein

from glyphbench.scoring.normalize import normalize

#: A report warns when its reader's typo faithfulness is below this.
FAITHFULNESS_FLOOR = 0.9


def _matched_positions(reading: str, target: str) -> set[int]:
    """Positions of ``target`` that a minimal alignment with ``reading`` keeps unchanged."""
    kept: set[int] = set()
    for block in Levenshtein.opcodes(reading, target):
        if block.tag == "equal":
            kept.update(range(block.dest_start, block.dest_end))
    return kept


def classify_edits(truth: str, drawn: str, reading: str) -> Counter[str]:
    """How a reader reported each typo injected into ``truth`` to give ``drawn``.

    The injected edits are the non-equal blocks of a minimal alignment of the
    normalised truth with the normalised drawn text (case and whitespace are
    normalised away first, so an edit that only changes case is not counted).
    Each edit, covering positions ``[i1, i2)`` of the truth and ``[j1, j2)`` of the
    drawn text, is:

    * ``written``: the reading keeps the drawn side: every drawn character of the
      edit (for a deletion: the drawn neighbours of the gap) is matched in the
      alignment of the reading with the drawn text, and (for a deletion) none of
      the deleted truth characters is matched in the alignment with the truth;
    * ``corrected``: otherwise, if every truth character of the edit (for an
      insertion: its truth neighbours) is matched in the alignment of the reading
      with the truth, and none of the inserted drawn characters is matched;
    * ``misread``: neither.

    >>> classify_edits("Digital", "Dlgital", "Dlgital")
    Counter({'written': 1})
    >>> classify_edits("Digital", "Dlgital", "DIGITAL")
    Counter({'corrected': 1})
    >>> classify_edits("Digital", "Dlgital", "Dxgitl")
    Counter({'misread': 1})
    >>> classify_edits("欢迎光临", "欢k光临", "欢迎光临")
    Counter({'corrected': 1})
    """
    t, d, r = normalize(truth), normalize(drawn), normalize(reading)
    on_drawn, on_truth = _matched_positions(r, d), _matched_positions(r, t)
    verdicts: Counter[str] = Counter()
    for block in Levenshtein.opcodes(t, d):
        if block.tag == "equal":
            continue
        truth_span = range(block.src_start, block.src_end)
        drawn_span = range(block.dest_start, block.dest_end)
        verdicts[_verdict(truth_span, drawn_span, on_truth, on_drawn, len(t), len(d))] += 1
    return verdicts


def _neighbours(start: int, end: int, length: int) -> list[int]:
    return [p for p in (start - 1, end) if 0 <= p < length]


def _verdict(
    truth_span: range,
    drawn_span: range,
    on_truth: set[int],
    on_drawn: set[int],
    truth_length: int,
    drawn_length: int,
) -> str:
    drawn_side = list(drawn_span) or _neighbours(drawn_span.start, drawn_span.stop, drawn_length)
    truth_side = list(truth_span) or _neighbours(truth_span.start, truth_span.stop, truth_length)
    drawn_kept = all(p in on_drawn for p in drawn_side)
    if drawn_kept and not any(p in on_truth for p in truth_span):
        return "written"
    truth_kept = all(p in on_truth for p in truth_side)
    if truth_kept and not any(p in on_drawn for p in drawn_span):
        return "corrected"
    return "misread"


def faithfulness(verdicts: Counter[str]) -> float:
    """``written / (written + corrected)``; NaN when no typo was read either way.

    >>> faithfulness(Counter(written=9, corrected=1, misread=5))
    0.9
    """
    decided = verdicts["written"] + verdicts["corrected"]
    return verdicts["written"] / decided if decided else float("nan")


def warning(reader: str, value: float) -> str | None:
    """The note a report puts next to its headline when the reader corrects typos.


    >>> print(warning("vlm", 0.42))  # doctest: +ELLIPSIS
    Reader vlm reports only 42% of injected typos as written (< 90%): it corrects ...
    >>> warning("rapidocr", 0.97) is None
    True
    """
    if value != value or value >= FAITHFULNESS_FLOOR:
        return None
    return (
        f"Reader {reader} reports only {100 * value:.0f}% of injected typos as written "
        f"(< {100 * FAITHFULNESS_FLOOR:.0f}%): it corrects misspellings, so misspelled text "
        "can score as correct."
    )
