"""ST-VQA's ANLS (family stvqa) against the RRC evaluation script's outputs.

tests/data/compat/stvqa.jsonl holds the script's per-question scores on pairs built
to break an adapter (nl exactly 0.5, spaces that normalisation removes, ``upper()``
that lengthens, empty answers); see tests/data/compat/README.md.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from glyphbench.cli.root import app
from glyphbench.scoring.glyphbench import anls
from glyphbench.scoring.pair import Pair
from glyphbench.scoring.stvqa import stvqa_anls, stvqa_nl
from glyphbench.scoring.table import METRICS
from tests.helpers.compat_data import assert_same, load_rows, load_summary

ROWS = load_rows("stvqa")


def test_the_data_holds_the_cases_that_separate_the_script_from_the_paper() -> None:
    half = [row for row in ROWS if row["stvqa_anls"] == 0.5]
    assert len(half) >= 4  # nl exactly 0.5: the script keeps 0.5
    assert any(row["expected"] != " ".join(row["expected"].split()) for row in ROWS)
    assert any(len(row["expected"].upper()) != len(row["expected"]) for row in ROWS)
    assert len(ROWS) >= 150


@pytest.mark.parametrize("row", ROWS, ids=range(len(ROWS)))
def test_pair_matches_the_script(row: dict[str, Any]) -> None:
    assert_same(stvqa_anls(row["expected"], row["read"]), row["stvqa_anls"])


def test_summary_matches_the_script() -> None:
    scores = [stvqa_anls(row["expected"], row["read"]) for row in ROWS]
    assert_same(sum(scores) / len(scores), load_summary("stvqa")["stvqa_anls"])


def test_it_differs_from_glyphbench_anls_exactly_where_the_rules_differ() -> None:
    """glyphbench's ``anls`` (the paper's strict threshold) gives 0 where nl is exactly 0.5."""
    assert stvqa_anls("ab", "a") == 0.5
    assert anls(Pair("ab", "a")) == 0.0
    # raw lengths: the spaces normalisation removes still divide the distance
    assert stvqa_nl("ab  ", "a") == pytest.approx(1 / 4)


def test_the_family_is_a_compat_family_with_one_line_units() -> None:
    assert "stvqa" in METRICS.peer_families()
    assert METRICS.units("stvqa").convert("OPEN\n\n 24 HOURS ") == "OPEN 24 HOURS"


def test_score_compat_stvqa_equals_the_script_through_the_cli(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.csv"
    with pairs.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["expected", "ocr"])
        writer.writerows((row["expected"], row["read"]) for row in ROWS)
    out, summary = tmp_path / "out.csv", tmp_path / "summary.json"
    result = CliRunner().invoke(
        app,
        [
            "score",
            str(pairs),
            "--out",
            str(out),
            "--compat",
            "stvqa",
            "--read-as",
            "units",
            "--summary",
            str(summary),
        ],
    )
    assert result.exit_code == 0, result.output
    with out.open(encoding="utf-8", newline="") as handle:
        scored = list(csv.DictReader(handle))
    assert len(scored) == len(ROWS)
    for row, got in zip(ROWS, scored, strict=True):
        assert_same(float(got["stvqa_anls"]), row["stvqa_anls"])
    assert_same(json.loads(summary.read_text())["stvqa_anls"], load_summary("stvqa")["stvqa_anls"])
