"""HISTORICAL_COLUMNS, assert_historical_contract: what several test modules share.

Here rather than in one of them: a test module never imports another.
"""

from __future__ import annotations

from glyphbench.scoring import (
    HIGHER_IS_BETTER,
    METRICS,
    REFERENCE_COLUMNS,
    SCORE_COLUMNS,
)

#: The glyphbench family's columns as results.parquet has always had them, in order.
HISTORICAL_COLUMNS = (
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


def assert_historical_contract() -> None:
    """The columns results.parquet has always had come first, in order, with their
    directions; a metric added to the ``glyphbench`` family comes after them (read from
    the table now: :data:`SCORE_COLUMNS` is read once)."""
    columns = tuple(METRICS.columns(["glyphbench"], inputs="text"))
    assert columns[: len(HISTORICAL_COLUMNS)] == HISTORICAL_COLUMNS
    assert SCORE_COLUMNS[: len(HISTORICAL_COLUMNS)] == HISTORICAL_COLUMNS
    lower = {"algorithm1", "edit_distance", "cer", "wer"}
    assert {c: HIGHER_IS_BETTER[c] for c in HISTORICAL_COLUMNS} == {
        c: c not in lower for c in HISTORICAL_COLUMNS
    }
    assert REFERENCE_COLUMNS == (
        "score_longest_match",
        "score_lcs",
        "score_levenshtein",
        "score_algorithm1",
    )
    assert [n for n in METRICS.summary_names() if n in HISTORICAL_COLUMNS] == [
        "algorithm1",
        "exact_match",
        "ned",
        "anls",
        "word_f1",
    ]
    assert METRICS.compat_family("reference") == "textinvision"
    assert METRICS.columns(["vae"], inputs="text") == ["wr", "pa"]
    # A later version added PSNR and SSIM inside the rendered text boxes.
    assert METRICS.columns(["vae"]) == ["wr", "pa", "psnr", "ssim", "psnr_text", "ssim_text"]
