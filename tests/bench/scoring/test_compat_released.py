"""The paper's row from a benchmark's own released per-sample outputs, through the lines path.

``tests/data/compat/released.jsonl`` holds values derived from a benchmark's released
outputs (``tests/data/compat/README.md``, line "released"): the released file itself is
not committed. For LeX-Bench (the only benchmark found to release its reader's raw
per-sample output, ``docs/suites.md``) it holds, per caption kind, every image whose
PaddleOCR boxes carry an end or a double space (the boxes quoted verbatim, with the values
LeX's own code gives on them) and, for the other images, the sums of LeX's per-image PNED
and recall. glyphbench scores the quoted images from a reader's lines here; the other
images' boxes are single-spaced words, on which every lines-to-boxes rule agrees (all
1,260 pairs were scored both ways when the file was made).
"""

from __future__ import annotations

from typing import Any

import pytest

from glyphbench.scoring import score_pairs
from glyphbench.scoring.units import boxes
from tests.helpers.compat_data import assert_same, load_rows

ROWS = load_rows("released")
LEX_SETS = [row for row in ROWS if row["family"] == "lex" and row["kind"] == "set"]
LEX_IMAGES = [row for row in ROWS if row["family"] == "lex" and row["kind"] == "image"]


def lines_path(images: list[dict[str, Any]], convert: Any = None) -> Any:
    """glyphbench's LeX scores of the images, each box one line of a reader's read cell."""
    expected = ["\n".join(row["text"]) for row in images]
    read = ["\n".join(row["boxes"]) for row in images]
    if convert is None:
        return score_pairs(expected, read, compat="lex")
    return score_pairs(expected, [convert(cell) for cell in read], compat="lex", read_as="units")


def test_the_released_cases_are_the_spaced_boxes() -> None:
    assert {row["caption"] for row in LEX_SETS} == {"simple", "enhanced"}
    for summary in LEX_SETS:
        mine = [row for row in LEX_IMAGES if row["caption"] == summary["caption"]]
        assert len(mine) == summary["cases"] > 0
        for row in mine:  # each quoted image has a box LeX splits into an empty token
            assert any(box != " ".join(box.split()) for box in row["boxes"]), row["prompt_idx"]


@pytest.mark.parametrize(
    "row", LEX_IMAGES, ids=[f"{r['caption']}-{r['prompt_idx']}" for r in LEX_IMAGES]
)
def test_released_image_scores_as_lex_scores_it(row: dict[str, Any]) -> None:
    scored = lines_path([row]).iloc[0]
    assert_same(float(scored["lex_pned"]), row["lex_pned"])
    assert_same(float(scored["lex_recall"]), row["lex_recall"])


@pytest.mark.parametrize("summary", LEX_SETS, ids=[row["caption"] for row in LEX_SETS])
def test_released_outputs_give_the_papers_row(summary: dict[str, Any]) -> None:
    mine = [row for row in LEX_IMAGES if row["caption"] == summary["caption"]]
    scored = lines_path(mine)
    count = summary["images"]
    pned = (summary["pned_sum_of_other_images"] + scored["lex_pned"].sum()) / count
    recall = (summary["recall_sum_of_other_images"] + scored["lex_recall"].sum()) / count
    assert pned == pytest.approx(summary["lex_pned"], abs=1e-9)  # LeX's printed value
    assert recall == pytest.approx(summary["lex_recall"], abs=1e-9)
    assert round(pned, 2) == summary["paper"]["lex_pned"]
    assert round(recall, 2) == summary["paper"]["lex_recall"]


def test_stripping_the_boxes_would_miss_the_papers_pned() -> None:
    # The rule before the change stripped end spaces and collapsed runs: PNED 1.69, not 1.71.
    summary = next(row for row in LEX_SETS if row["caption"] == "simple")
    mine = [row for row in LEX_IMAGES if row["caption"] == "simple"]
    stripped = lines_path(mine, convert=boxes)
    pned = (summary["pned_sum_of_other_images"] + stripped["lex_pned"].sum()) / summary["images"]
    assert round(pned, 2) == 1.69 != summary["paper"]["lex_pned"]
