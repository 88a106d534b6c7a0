"""The suite's own scores on a run's rows: each subset scored by its benchmark's family.

A row's *expected* cell is its prompt's ``text`` (the benchmark's ground truth,
built by the suite's loader); its *read* cell is the reader's output as the
benchmark's scorer receives it (:func:`read_cells`): a VLM's answer as it is, an
OCR reader's pieces one per line, in reading order, or its raw boxes one per line,
as the engine gave them. Rows that failed or have no reading get NaN, as
glyphbench's own scores do.

>>> import pandas as pd
>>> rows = pd.DataFrame({"ocr_text": ["OPEN 24", None], "ocr_pieces": ['["OPEN", "24"]', None]})
>>> read_cells(rows, "lines").tolist(), read_cells(rows, "text").tolist()
(['OPEN\\n24', ''], ['OPEN 24', ''])
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from glyphbench.scoring.table import METRICS
from glyphbench.suites.base import resolve_suite

if TYPE_CHECKING:
    import numpy as np
    import pandas as pd

    from glyphbench.suites.base import ReadCell, SuiteSelection


def suite_columns(selection: SuiteSelection) -> list[str]:
    """The per-image text columns of every family the selection scores with (in table order).

    >>> from glyphbench.suites.base import resolve_suite
    >>> suite_columns(resolve_suite("longtext"))
    ['longtext_recall', 'longtext_matched', 'longtext_total']
    """

    columns: dict[str, None] = {}
    for family in dict.fromkeys(selection.families.values()):
        columns.update(dict.fromkeys(METRICS.columns([family], inputs="text")))
    return list(columns)


def read_cells(rows: pd.DataFrame, how: ReadCell, long_words: int | None = None) -> pd.Series:
    """Each row's read cell: ``ocr_text`` (``"text"``) or its pieces joined by newlines.

    ``"boxes"``: the raw detection texts (``ocr_raw``) joined by newlines, spaces kept, in
    the engine's order; a row whose reading kept no raw text (made by an older glyphbench, or a
    reader that returns none) falls back to its pieces.

    With ``long_words`` (OneIG's rule, :attr:`Protocol.long_answer_words`), a VLM
    row whose benchmark truth cell has more than ``long_words`` words
    (``benchmark_words``) reads the reader's longer answer, its second piece.

    >>> import pandas as pd
    >>> rows = pd.DataFrame({"ocr_text": ["A B", "C"], "ocr_engine": ["vlm", "vlm"],
    ...     "ocr_pieces": ['["A B", "A B C D"]', '["C", "C D"]'], "benchmark_words": [61, 60]})
    >>> read_cells(rows, "text", 60).tolist()
    ['A B C D', 'C']
    >>> rows = pd.DataFrame({"ocr_text": ["HOUSE WARMING", "OPEN"],
    ...     "ocr_pieces": ['["HOUSE", "WARMING"]', '["OPEN"]'],
    ...     "ocr_raw": ['["HOUSE", " WARMING"]', None]})
    >>> read_cells(rows, "boxes").tolist()
    ['HOUSE\\n WARMING', 'OPEN']
    """
    import pandas as pd

    texts = rows["ocr_text"].astype(object).where(rows["ocr_text"].notna(), "")
    if how == "text" and long_words is not None and _has_long(rows):
        longer = [
            _second_piece(pieces, text) if engine == "vlm" and words > long_words else text
            for pieces, text, engine, words in zip(
                rows["ocr_pieces"].astype(object),
                texts.astype(str),
                rows["ocr_engine"].astype(object),
                pd.to_numeric(rows["benchmark_words"], errors="coerce").fillna(0),
                strict=True,
            )
        ]
        return pd.Series(longer, index=rows.index, dtype=object)
    if how == "text" or "ocr_pieces" not in rows:
        return texts.astype(str)
    pieces_cells = rows["ocr_pieces"].astype(object)
    if how == "boxes" and "ocr_raw" in rows:  # raw where kept, else the pieces
        raw = rows["ocr_raw"].astype(object)
        pieces_cells = raw.where(raw.map(_has_raw), pieces_cells)
    lines = [
        _pieces_or_text(pieces, str(text)) for pieces, text in zip(pieces_cells, texts, strict=True)
    ]
    return pd.Series(lines, index=rows.index, dtype=object)


def _has_long(rows: pd.DataFrame) -> bool:
    return all(c in rows for c in ("ocr_pieces", "ocr_engine", "benchmark_words"))


def _has_raw(cell: object) -> bool:
    """Whether a stored ``ocr_raw`` cell holds at least one detection's text."""
    return isinstance(cell, str) and cell not in ("", "[]")


def _second_piece(pieces: object, text: str) -> str:
    """A VLM reading's longer answer (its second piece); the text when it has none."""
    parts = json.loads(pieces) if isinstance(pieces, str) and pieces else []
    return str(parts[1]) if len(parts) >= 2 else text


def _pieces_or_text(pieces: object, text: str) -> str:
    """The pieces one per line; the text itself when the reader gave no pieces.

    >>> _pieces_or_text('["OPEN", "24"]', "OPEN 24"), _pieces_or_text("[]", "image 32x32")
    ('OPEN\\n24', 'image 32x32')
    """
    parts = json.loads(pieces) if isinstance(pieces, str) and pieces else []
    return "\n".join(parts) if parts else text


def add_suite_scores(rows: pd.DataFrame, spec: str, scorable: np.ndarray) -> pd.DataFrame:
    """``rows`` with the suite's score columns (replaced if present; NaN where not ``scorable``)."""
    import numpy as np
    import pandas as pd

    from glyphbench.scoring import (
        score_pairs,  # glyphbench.scoring.frame loads pandas; --help loads this
    )

    selection = resolve_suite(spec)
    columns = suite_columns(selection)
    rows = rows.drop(columns=[c for c in columns if c in rows.columns])
    scores = pd.DataFrame(np.nan, index=rows.index, columns=columns)
    protocol = selection.suite.protocol
    read = read_cells(rows, protocol.read_cell, protocol.long_answer_words)
    families = selection.families
    if "suite_subset" in rows:
        subsets = rows["suite_subset"].astype(str).to_numpy()
    else:  # rows from elsewhere: the selection's first subset scores them all
        first = next(iter(families))
        families, subsets = {first: families[first]}, np.full(len(rows), first)
    for subset, family in families.items():
        mask = np.asarray(scorable, dtype=bool) & (subsets == subset)
        if not mask.any():
            continue
        scored = score_pairs(
            rows.loc[mask, "text"].fillna("").astype(str).tolist(),
            read[mask].tolist(),
            families=[family],
        )
        scored.index = rows.index[mask]
        for column in scored.columns:
            scores.loc[mask, column] = scored[column].astype(float)
    return pd.concat([rows, scores], axis=1)
