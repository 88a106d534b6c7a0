"""Score many (expected, OCR) pairs at once into a DataFrame."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

import numpy as np
import pandas as pd
from rapidfuzz.distance import LCSseq, Levenshtein

from bench.scoring.metrics import (
    _algorithm1_words,
    _prf_from_matched,
    lom_len,
    remove_common_words,
)
from bench.scoring.normalize import Normalization
from bench.scoring.reference import REFERENCE_COLUMNS, reference_scores

#: Columns of :func:`score_pairs` in paper mode, in order.
SCORE_COLUMNS = (
    "algorithm1",
    "edit_distance",
    "lcs_len",
    "lom_len",
    "ned",
    "anls",
    "exact_match",
    "word_precision",
    "word_recall",
    "word_f1",
    "cer",
    "wer",
)

#: Direction of each score: True where higher is better.
HIGHER_IS_BETTER = {
    "algorithm1": False,
    "edit_distance": False,
    "lcs_len": True,
    "lom_len": True,
    "ned": True,
    "anls": True,
    "exact_match": True,
    "word_precision": True,
    "word_recall": True,
    "word_f1": True,
    "cer": False,
    "wer": False,
}


def _clean(value: object) -> str:
    """Missing values (None, NaN) become empty strings, never the text 'nan'."""
    if value is None:
        return ""
    if isinstance(value, float) and value != value:
        return ""
    return str(value)


def score_one(expected: str, ocr: str, norm: Normalization = Normalization()) -> tuple:
    """All paper-mode scores of one pair, in the order of :data:`SCORE_COLUMNS`.

    Normalises once and shares the word splits between metrics; the values are
    the same as calling each function in :mod:`bench.scoring.metrics`.
    """
    e = norm(expected)
    o = norm(ocr)
    e_words, o_words = e.split(), o.split()
    n_e, n_o = len(e_words), len(o_words)
    rest = remove_common_words(e_words, o_words)
    d = Levenshtein.distance(e, o)
    longest = max(len(e), len(o))
    nl = d / longest if longest else 0.0
    p, r, f1 = _prf_from_matched(n_e - len(rest[0]), n_e, n_o)
    if n_e:
        word_err = Levenshtein.distance(e_words, o_words) / n_e
    else:
        word_err = 0.0 if not n_o else 1.0
    return (
        _algorithm1_words(e, o, e_words, o_words, rest),
        d,
        LCSseq.similarity(e, o),
        lom_len(e, o),
        1.0 - nl,
        (1.0 - nl) if nl < 0.5 else 0.0,
        e == o,
        p,
        r,
        f1,
        (d / len(e)) if e else (0.0 if not o else 1.0),
        word_err,
    )


def score_pairs(
    expected: Iterable[object],
    ocr: Iterable[object],
    *,
    compat: Literal["reference"] | None = None,
    keep_case: bool = False,
    strip_punct: bool = False,
) -> pd.DataFrame:
    """Score each (expected, OCR) pair; one row per pair.

    Paper mode (``compat=None``) returns :data:`SCORE_COLUMNS`; the normalisation
    options are those of :func:`bench.scoring.normalize.normalize`.
    ``compat="reference"`` returns the four columns of TextInVision's ``score.py``
    (:data:`bench.scoring.reference.REFERENCE_COLUMNS`) and ignores normalisation,
    as that script does.

    Missing values (None/NaN) are treated as empty strings.

    >>> row = score_pairs(["Hello"], ["HELL0"]).iloc[0]
    >>> int(row.algorithm1), float(row.ned), bool(row.exact_match)
    (1, 0.8, False)
    """
    exp_list = [_clean(v) for v in expected]
    ocr_list = [_clean(v) for v in ocr]
    if len(exp_list) != len(ocr_list):
        raise ValueError(f"expected has {len(exp_list)} items but ocr has {len(ocr_list)}")
    if compat == "reference":
        ref_rows = [reference_scores(e, o) for e, o in zip(exp_list, ocr_list)]
        return pd.DataFrame(ref_rows, columns=list(REFERENCE_COLUMNS)).astype("int64")
    if compat is not None:
        raise ValueError(f"unknown compat mode {compat!r}; use None or 'reference'")
    norm = Normalization(keep_case=keep_case, strip_punct=strip_punct)
    # Identical pairs are common in real runs (empty OCR, the same text across
    # seeds); scoring each distinct pair once is the same function, computed once.
    cache: dict[tuple[str, str], tuple] = {}
    rows: list[tuple] = []
    for pair in zip(exp_list, ocr_list):
        row = cache.get(pair)
        if row is None:
            row = cache[pair] = score_one(pair[0], pair[1], norm)
        rows.append(row)
    # Column-wise construction is several times faster than a frame from row tuples.
    columns = list(zip(*rows)) if rows else [() for _ in SCORE_COLUMNS]
    dtypes = (
        "int64",
        "int64",
        "int64",
        "int64",
        "float64",
        "float64",
        "bool",
        "float64",
        "float64",
        "float64",
        "float64",
        "float64",
    )
    return pd.DataFrame(
        {
            name: np.asarray(values, dtype=dtype)
            for name, values, dtype in zip(SCORE_COLUMNS, columns, dtypes)
        }
    )
