"""``glyphbench score --compat NAME``, end to end, against values from each benchmark's own code.

For every NAME of the issue-12 contract the pairs of ``tests/data/compat/<family>.jsonl``
are written to a CSV, scored through the CLI, and OUT.csv and SUMMARY.json are
compared with what the original code produced (``tests/data/compat/README.md``):
exactly the contract's columns and keys, and the same value for every pair and for
the headline aggregate.
"""

from __future__ import annotations

import csv
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from typer.testing import CliRunner

from glyphbench.cli.root import app
from glyphbench.cli.score import CONTRACT
from glyphbench.scoring.table import METRICS
from tests.helpers.paths import TESTS

DATA = TESTS / "data" / "compat"

#: The issue's table: NAME -> (per-pair columns, summary keys), written out once more here
#: so that a change to bench/cli/score.py's CONTRACT cannot pass unnoticed.
ISSUE_TABLE: dict[str, tuple[list[str], list[str]]] = {
    "anytext": (["anytext_sen_acc", "anytext_ned"], ["anytext_sen_acc", "anytext_ned"]),
    "anytext-zh": (["anytext_sen_acc", "anytext_ned"], ["anytext_sen_acc", "anytext_ned"]),
    "mario": (
        ["mario_precision", "mario_recall", "mario_acc"],
        ["mario_precision", "mario_recall", "mario_f", "mario_acc"],
    ),
    "cocotext": (
        ["cocotext_exact", "cocotext_distance1", "cocotext_ignored"],
        ["cocotext_exact", "cocotext_distance1"],
    ),
    "oneig": (
        ["oneig_ed", "oneig_cr", "oneig_wac"],
        ["oneig_ed", "oneig_cr", "oneig_wac", "oneig_text_score"],
    ),
    "oneig-zh": (
        ["oneig_ed", "oneig_cr", "oneig_wac"],
        ["oneig_ed", "oneig_cr", "oneig_wac", "oneig_text_score"],
    ),
    "longtext": (["longtext_recall"], ["longtext_text_score"]),
    "longtext-zh": (["longtext_recall"], ["longtext_text_score"]),
    "lex": (["lex_pned", "lex_recall"], ["lex_pned", "lex_recall"]),
    "cvtg": (
        ["cvtg_word_correct", "cvtg_word_total", "cvtg_word_ned"],
        ["cvtg_word_accuracy", "cvtg_ned"],
    ),
    "stvqa": (["stvqa_anls"], ["stvqa_anls"]),
}
REFERENCE = ["score_longest_match", "score_lcs", "score_levenshtein", "score_algorithm1"]


def load_rows(family: str) -> list[dict[str, Any]]:
    with open(DATA / f"{family}.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def write_pairs(rows: list[dict[str, Any]], path: Path) -> Path:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["expected", "ocr"])
        writer.writerows([row["expected"], row["read"]] for row in rows)
    return path


def score(tmp_path: Path, rows: list[dict[str, Any]], name: str) -> tuple[pd.DataFrame, dict]:
    pairs = write_pairs(rows, tmp_path / "pairs.csv")
    out, summary = tmp_path / "out.csv", tmp_path / "summary.json"
    args = ["score", str(pairs), "--compat", name, "--out", str(out), "--summary", str(summary)]
    # The rows hold what each benchmark's own reader returns (tests/data/compat/README.md).
    args += ["--read-as", "units"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    # The csv module keeps a bare carriage return inside a quoted cell as text.
    with open(out, encoding="utf-8", newline="") as handle:
        records = list(csv.reader(handle))
    scored = pd.DataFrame(records[1:], columns=records[0])
    for column in scored.columns[2:]:
        scored[column] = pd.to_numeric(scored[column].replace("", None)).astype(float)
    return scored, json.loads(summary.read_text(encoding="utf-8"))


def same(got: Any, want: Any) -> bool:
    if want is None:
        return got is None or (isinstance(got, float) and math.isnan(got))
    return bool(float(got) == pytest.approx(float(want), abs=1e-12, rel=1e-12))


def test_the_contract_is_the_issue_table() -> None:
    wanted = {name: (tuple(a), tuple(b)) for name, (a, b) in ISSUE_TABLE.items()}
    wanted["textinvision"] = (tuple(REFERENCE), tuple(REFERENCE))
    assert wanted == CONTRACT
    for family, (columns, keys) in CONTRACT.items():
        # Every contract column is a per-image column of the family; every key a summary metric.
        assert set(columns) <= set(METRICS.columns([family]))
        assert list(keys) == (METRICS.summary_names([family]) or list(columns))


@pytest.mark.parametrize("name", sorted(ISSUE_TABLE))
def test_compat_cli_equals_the_original_pair_by_pair_and_in_the_summary(
    tmp_path: Path, name: str
) -> None:
    rows = load_rows(name)
    columns, keys = ISSUE_TABLE[name]
    scored, summary = score(tmp_path, rows, name)
    assert list(scored.columns) == ["expected", "ocr", *columns]
    for index, row in enumerate(rows):
        for column in columns:
            assert same(scored.at[index, column], row[column]), (name, index, column)
    want = json.loads((DATA / f"{name}.summary.json").read_text(encoding="utf-8"))
    assert list(summary) == keys
    assert list(want) == keys
    for key in keys:
        assert same(summary[key], want[key]), (name, key, summary[key], want[key])


@pytest.mark.parametrize("name", ["reference", "textinvision"])
def test_reference_alias_writes_the_four_columns_and_their_means(tmp_path: Path, name: str) -> None:
    from tests.helpers.scoring_oracle import oracle

    rows = [
        {"expected": "Digital Dreamscapes", "read": "DIGITAL dreams"},
        {"expected": "Hello World", "read": "World"},
        {"expected": "Open", "read": ""},
        {"expected": "Cafe au lait", "read": "cafe\nau lait"},
    ]
    scored, summary = score(tmp_path, rows, name)
    assert list(scored.columns) == ["expected", "ocr", *REFERENCE]
    for index, row in enumerate(rows):
        want = oracle(row["expected"], row["read"])
        assert {c: int(scored.at[index, c]) for c in REFERENCE} == want
    assert list(summary) == REFERENCE
    for column in REFERENCE:
        assert summary[column] == pytest.approx(scored[column].mean(), abs=1e-12)


@pytest.mark.slow
def test_unknown_compat_name_is_one_line_exit_2(tmp_path: Path) -> None:
    pairs = write_pairs([{"expected": "a", "read": "a"}], tmp_path / "pairs.csv")
    command = [sys.executable, "-m", "glyphbench", "score", str(pairs), "--compat", "nope"]
    result = subprocess.run([*command, "--out", str(tmp_path / "o.csv")], capture_output=True)
    assert result.returncode == 2
    assert b"--compat must be one of" in result.stderr
    assert b"oneig-zh" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_compat_help_names_every_compat_family_and_no_other() -> None:
    """``--compat``'s help lists the families by hand: deriving it from the metric table
    would load every scorer for ``glyphbench --help`` (seconds); this keeps the list true."""
    import re

    from glyphbench.cli.score import COMPAT_HELP

    names = COMPAT_HELP.split(":", 1)[1].split("See")[0]
    listed = set(re.findall(r"[a-z][a-z0-9-]*", names)) - {"alias", "or"}
    assert listed == set(METRICS.compat_names()) - {"glyphbench"}  # glyphbench: the default


def test_the_readme_names_every_compat_name_and_no_other() -> None:
    """The README's ``score --compat NAME (...)`` list, as ``--help``'s: each name a user can
    give, none it would refuse."""
    import re

    from tests.helpers.paths import REPO_ROOT

    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"`score --compat NAME` \((.*?)\)\s*equals", readme, flags=re.S)
    assert found, "the README no longer lists score --compat's names"
    names = re.sub(r"`vae` gives WR and PA", "vae", found.group(1))
    listed = set(re.findall(r"[a-z][a-z0-9-]*", names)) - {"alias"}
    assert listed == set(METRICS.compat_names()) - {"glyphbench"}
