"""The human-study report as a reader sees it: no blanks, full sentences, intervals."""

from __future__ import annotations

import math
import re

from glyphbench.human_eval.report import kendall_sentence
from tests.helpers.human_pages import _page


def _cells(page: str) -> list[str]:
    return [re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", page)]


def test_no_blank_or_nan_cell_and_missing_values_say_why() -> None:
    page = _page({"ned": {"tau": math.nan, "p": math.nan}})
    cells = _cells(page)
    assert cells and all(cells), "a blank cell"
    assert not any("nan" in c.lower() and "n/a" not in c for c in cells)
    assert "NaN" not in page
    # Fleiss' kappa on an unbalanced design: n/a with the reason
    assert "n/a: raters per image differ" in page


def test_ranking_sentence_is_complete() -> None:
    page = _page({"ned": {"tau": math.nan, "p": math.nan}})
    assert "(p = )" not in page and "p = n" not in page
    assert "NED similarity (1 = exact) n/a (needs two or more models" in page
    assert kendall_sentence({"ned": {"tau": 0.5, "p": 0.2}}) == (
        "NED similarity (1 = exact) 0.500 (p = 0.200)"
    )
    assert kendall_sentence({}).startswith("n/a")


def test_agreement_and_alignment_cells_carry_intervals() -> None:
    page = _page({"ned": {"tau": 1.0, "p": 0.33}})
    agreement = re.search(r'<table id="agreement">.*?</table>', page, re.S)
    alignment = re.search(r'<table id="alignment">.*?</table>', page, re.S)
    assert agreement and alignment
    assert agreement.group(0).count('class="ci"') >= 3  # percent, pairwise, alpha, AC1
    assert "nominal" in agreement.group(0)  # alpha names its level
    assert alignment.group(0).count('class="ci"') >= 1


def test_the_page_names_criteria_and_metrics_in_words() -> None:
    """The page shows "text accuracy" and the metric's label where the CSV files keep
    ``text_accuracy`` and ``ned``."""
    page = _page({"ned": {"tau": 0.5, "p": 0.2}})
    tables = re.findall(r"<table.*?</table>", page, flags=re.S)
    shown = re.sub(r"<[^>]+>", " ", " ".join(tables))
    assert "text accuracy" in shown and "text_accuracy" not in shown
    assert "NED similarity (1 = exact)" in " ".join(_cells(page))
    assert not re.search(r"\bned\b", shown)
