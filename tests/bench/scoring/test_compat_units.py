"""Reader units: a glyphbench reader's lines scored as each benchmark's reader's units.

Every row of ``tests/data/compat/units.jsonl`` holds a reader's ``lines``, the ``units``
the benchmark's own reader returns for that image, and the values the benchmark's own
code gives on them (``tests/data/compat/README.md``, line "units"). glyphbench, given
the lines, must convert them to those units and score them to those values, through
``score_pairs``, through ``glyphbench score --compat`` and through a suite.
"""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from glyphbench.cli.root import app
from glyphbench.cli.score import CONTRACT
from glyphbench.scoring import score_pairs
from glyphbench.scoring.table import METRICS
from tests.helpers.compat_data import assert_same, load_rows
from tests.helpers.paths import REPO_ROOT

ROWS = load_rows("units")
VALUE_KEYS = {"family", "expected", "lines", "units", "note", "text_content"}


def values(row: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in row.items() if key not in VALUE_KEYS}


def test_every_compat_family_has_cases_and_a_documented_conversion() -> None:
    families = {row["family"] for row in ROWS}
    assert families == set(CONTRACT) - {"textinvision"}
    for family in families:
        units = METRICS.units(family)
        assert units is not None and units.rule and units.source, family
        doc = REPO_ROOT / "docs" / "scorers" / f"{family.split('-')[0]}.md"
        assert "## Reader units" in doc.read_text(encoding="utf-8"), doc


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['family']}-{r['note']}" for r in ROWS])
def test_lines_become_the_benchmark_readers_units(row: dict[str, Any]) -> None:
    units = METRICS.units(row["family"])
    assert units is not None
    assert units.convert("\n".join(row["lines"])) == row["units"]


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['family']}-{r['note']}" for r in ROWS])
def test_lines_score_as_the_benchmark_scores_its_units(row: dict[str, Any]) -> None:
    read = "\n".join(row["lines"])
    scored = score_pairs([row["expected"]], [read], compat=row["family"]).iloc[0]
    as_units = score_pairs([row["expected"]], [row["units"]], compat=row["family"], read_as="units")
    for name, want in values(row).items():
        assert_same(float(scored[name]), want)
        assert_same(float(as_units.iloc[0][name]), want)


def test_the_issue_examples() -> None:
    # MARIO-Eval: a perfect read of one two-word line, and word order, score P = R = 1.
    scored = score_pairs(
        ["Hello World", "Think Different"], ["HELLO WORLD", "Different Think"], compat="mario"
    )
    assert scored["mario_precision"].round(6).tolist() == [1.0, 1.0]
    assert scored["mario_recall"].round(6).tolist() == [1.0, 1.0]
    # As the benchmark's OCR file (one line, two words) the same cell matches nothing.
    raw = score_pairs(["Hello World"], ["HELLO WORLD"], compat="mario", read_as="units")
    assert raw["mario_recall"].tolist() == [0.0]
    # LeX: a blank line is no box; a box's trailing space is kept, an empty token LeX counts.
    lex = score_pairs(["KAYAK SAIL"] * 2, ["KAYAK\n\nSAIL\n", "KAYAK\nSAIL "], compat="lex")
    assert lex["lex_pned"].tolist() == [0.0, 1.0]
    # OneIG: a no-break space in the expected cell is a space, not the letters "xa0".
    oneig = score_pairs(["Grand\u00a0Opening"], ["Grand Opening"], compat="oneig")
    assert oneig["oneig_ed"].tolist() == [0.0]
    # AnyText: "Hello\nWorld" is the one string of a crop reading "Hello World".
    anytext = score_pairs(["Hello World"], ["Hello\nWorld"], compat="anytext")
    assert anytext["anytext_sen_acc"].tolist() == [1.0]


def test_several_families_each_get_their_own_units() -> None:
    read = "HELLO WORLD\n\n"
    together = score_pairs(["Hello World"], [read], families=["glyphbench", "mario", "lex"])
    for family in ("glyphbench", "mario", "lex"):
        alone = score_pairs(["Hello World"], [read], families=[family])
        for column in alone.columns:
            assert together.at[0, column] == alone.at[0, column], column
    assert list(together.columns) == [
        m.name for m in METRICS.of(["glyphbench", "mario", "lex"]) if m.per_image
    ]
    with pytest.raises(ValueError, match="read_as"):
        score_pairs(["a"], ["a"], compat="mario", read_as="boxes")  # type: ignore[arg-type]


@pytest.mark.parametrize("family", ["mario", "lex", "oneig", "anytext", "cocotext"])
def test_the_cli_converts_by_default_and_not_with_read_as_units(
    tmp_path: Path, family: str
) -> None:
    rows = [row for row in ROWS if row["family"] == family]
    pairs = tmp_path / "pairs.csv"
    with open(pairs, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["expected", "ocr", "units"])
        writer.writerows([r["expected"], "\n".join(r["lines"]), r["units"]] for r in rows)
    for column, read_as in (("ocr", "lines"), ("units", "units")):
        out = tmp_path / f"{read_as}.csv"
        args = ["score", str(pairs), "--compat", family, "--out", str(out)]
        args += ["--ocr-col", column, "--read-as", read_as]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        scored = pd.read_csv(out, keep_default_na=False)
        for index, row in enumerate(rows):
            for name in CONTRACT[family][0]:
                got = scored.at[index, name]
                assert_same(float("nan") if got == "" else float(got), row[name])


@pytest.mark.slow
def test_the_cli_rejects_an_unknown_read_as(tmp_path: Path) -> None:
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("expected,ocr\na,a\n", encoding="utf-8")
    command = [sys.executable, "-m", "glyphbench", "score", str(pairs), "--compat", "mario"]
    command += ["--out", str(tmp_path / "o.csv"), "--read-as", "words"]
    result = subprocess.run(command, capture_output=True)
    assert result.returncode == 2
    assert b"--read-as must be 'lines' or 'units'" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "o.csv").exists()


def test_suites_score_reader_pieces_in_the_benchmarks_units() -> None:
    from glyphbench.suites.scores import add_suite_scores

    cases = [row for row in ROWS if row["family"] == "mario"]
    rows = pd.DataFrame(
        {
            "text": [row["expected"] for row in cases],
            "ocr_text": [" ".join(row["lines"]) for row in cases],
            "ocr_pieces": [json.dumps(row["lines"]) for row in cases],
        }
    )
    scored = add_suite_scores(rows, "mario", np.ones(len(rows), dtype=bool))
    for index, row in enumerate(cases):
        if not row["lines"] or not any(line.strip() for line in row["lines"]):
            continue  # no pieces: the suite reads the text column instead
        for name in ("mario_precision", "mario_recall", "mario_acc"):
            assert_same(float(scored.at[index, name]), row[name])
