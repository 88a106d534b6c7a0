"""``glyphbench score`` reads glyphbench's own columns, names the flag that picks others,
and counts in words that agree ("1 pair")."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from glyphbench.cli.root import app
from glyphbench.core.errors import InputError


def test_score_reads_glyphbenchs_text_and_ocr_text_columns(tmp_path: Path) -> None:
    pairs = tmp_path / "per_image.csv"  # the columns of a report's tables/per_image.csv
    pd.DataFrame({"model": ["m"], "text": ["OPEN"], "ocr_text": ["0PEN"]}).to_csv(pairs)
    out = tmp_path / "scored.csv"
    result = CliRunner().invoke(app, ["score", str(pairs), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "scored 1 pair ->" in result.output
    assert pd.read_csv(out)["ned"].iloc[0] == 0.75


def test_a_table_without_known_columns_names_the_flag(tmp_path: Path) -> None:
    pairs = tmp_path / "mine.csv"
    pd.DataFrame({"truth": ["a"], "read": ["a"]}).to_csv(pairs, index=False)
    result = CliRunner().invoke(app, ["score", str(pairs), "--out", str(tmp_path / "o.csv")])
    assert isinstance(result.exception, InputError)  # main() prints it on one line, exit 2
    message = str(result.exception)
    assert "--expected-col" in message and "truth, read" in message
    named = ["--expected-col", "truth", "--ocr-col", "read"]
    result = CliRunner().invoke(
        app, ["score", str(pairs), "--out", str(tmp_path / "o.csv"), *named]
    )
    assert result.exit_code == 0, result.output


def test_a_json_value_that_is_no_string_is_refused_naming_its_line(tmp_path: Path) -> None:
    """``["a"]`` was scored as the text "['a']" (NED 0.2) and ``true`` as "True"."""
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"expected": "a", "ocr": "a"}\n\n{"expected": ["a"], "ocr": "a"}\n')
    out = tmp_path / "o.csv"
    result = CliRunner().invoke(app, ["score", str(pairs), "--out", str(out)])
    assert isinstance(result.exception, InputError)
    assert str(result.exception).startswith(f"{pairs}:3: expected is list")
    assert not out.exists()


def test_a_csv_field_longer_than_the_csv_modules_limit_is_read(tmp_path: Path) -> None:
    """The ragged-row check read fields with the csv module, whose limit is 131,072
    characters: a 200,000-character text was refused though pandas reads it."""
    pairs = tmp_path / "big.csv"
    pairs.write_text(f"expected,ocr\n{'x' * 200_000},{'x' * 199_999}\n", encoding="utf-8")
    out = tmp_path / "o.csv"
    result = CliRunner().invoke(app, ["score", str(pairs), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert pd.read_csv(out)["exact_match"].tolist() == [False]


def test_nfkc_makes_composed_and_decomposed_accents_one_text(tmp_path: Path) -> None:
    """``café`` written with a composed é and with e + U+0301 were two texts to `score`,
    which had no flag for the normalisation a run's config has."""
    import unicodedata

    pairs = tmp_path / "pairs.csv"
    composed, decomposed = (unicodedata.normalize(form, "café") for form in ("NFC", "NFD"))
    pd.DataFrame({"expected": [composed], "ocr": [decomposed]}).to_csv(pairs, index=False)
    plain, folded = tmp_path / "plain.csv", tmp_path / "nfkc.csv"
    for out, flags in ((plain, []), (folded, ["--nfkc"])):
        result = CliRunner().invoke(app, ["score", str(pairs), "--out", str(out), *flags])
        assert result.exit_code == 0, result.output
    assert pd.read_csv(plain)["exact_match"].tolist() == [False]
    assert pd.read_csv(folded)["exact_match"].tolist() == [True]


def test_a_summary_path_that_is_a_folder_is_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`--summary DIR` failed with exit 2 after --out had been written."""
    from tests.helpers.cli_runs import run_cli

    pairs = tmp_path / "pairs.csv"
    pairs.write_text("expected,ocr\nhello,helo\n", encoding="utf-8")
    (tmp_path / "sums").mkdir()
    out = tmp_path / "scored.csv"
    code, err = run_cli(
        ["score", str(pairs), "--out", str(out), "--summary", str(tmp_path / "sums")], capsys
    )
    assert code == 2 and "--summary" in err and "is a folder" in err, err
    assert not out.exists()
