"""What `glyphbench human ...` prints: tables that fit the terminal with every
number and name whole, one-line messages, help that fits 80 columns."""

from __future__ import annotations

import re
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from glyphbench.cli.root import app
from glyphbench.human_eval.service import RatingService
from glyphbench.human_eval.study import create_study, load_study
from glyphbench.report.console_fit import column_groups, fit_table
from glyphbench.templates import Cell, Table
from tests.helpers.human_fixtures import make_run, rate_by_truth

#: A model id as long as real ones: it must never be cut.
LONG_MODEL = "diffusers:stabilityai/stable-diffusion-xl-base-1.0"


@pytest.fixture(scope="module")
def rated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A study of three models (one with a long id) rated by nine people."""
    from tests.helpers import human_fixtures

    root = tmp_path_factory.mktemp("console")
    models = (LONG_MODEL, "diffusers:tiny/beta", "diffusers:tiny/gamma")
    rates = {**human_fixtures.ERROR_RATE, LONG_MODEL: 0.3}
    mp = pytest.MonkeyPatch()
    mp.setattr(human_fixtures, "ERROR_RATE", rates)
    try:
        run = make_run(root / "run", per_cell=4, models=models)
    finally:
        mp.undo()
    create_study(
        [run], root / "study", n=27, min_per_cell=3, raters_per_image=3, batch_size=9,
        n_gold=6, seed=1, progress=False,
    )  # fmt: skip
    study = load_study(root / "study")
    service = RatingService(study)
    for view in rate_by_truth(service, raters=9):
        service.finish(view.code)
    return root / "study"


def _numbers(frame: pd.DataFrame, columns: list[str]) -> set[str]:
    """Every finite value of ``columns`` as the console prints it (3 decimals)."""
    shown = set()
    for column in columns:
        for value in frame[column]:
            if isinstance(value, float) and value == value:
                shown.add(f"{value:.3f}")
    return shown


@pytest.mark.slow
@pytest.mark.parametrize("width", [80, 160])
def test_human_stats_fits_the_terminal_and_cuts_nothing(rated: Path, width: int) -> None:
    result = CliRunner().invoke(
        app, ["human", "stats", str(rated), "--n-boot", "100"], env={"COLUMNS": str(width)}
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert max(len(line.rstrip()) for line in lines) <= width
    assert "…" not in result.output  # rich's mark of a cut cell
    words = set(re.findall(r"[^\s│┃]+", result.output))
    agreement = pd.read_csv(rated / "analysis" / "agreement.csv")
    alignment = pd.read_csv(rated / "analysis" / "alignment.csv")
    stats = ["percent_agreement", "pairwise_agreement", "krippendorff_alpha", "gwet_ac1"]
    bounds = [f"{s}_{end}" for s in stats for end in ("lo", "hi")]
    shown = alignment[~alignment["note"].fillna("").str.startswith("too few")]
    assert len(shown)  # at least the overall rows have 5 images of each class
    for number in _numbers(agreement, stats + bounds) | _numbers(
        shown, ["roc_auc", "roc_auc_lo", "roc_auc_hi", "spearman"]
    ):  # every statistic and bound appears whole (as a word, maybe in brackets)
        assert any(number in word for word in words), number
    if len(shown) < len(alignment):  # thin rows say so instead of a number
        assert "too few" in result.output
    for name in (LONG_MODEL, "prompt following", "text accuracy", "Krippendorff's", "ROC-AUC"):
        assert any(name in line for line in lines), name  # names whole on one line
    if width == 160:  # wide enough: one agreement table, no part numbers
        assert "(1 of" not in result.output


def _table(widths: list[int], rows: int = 2) -> Table:
    return Table(
        [f"h{k}" for k in range(len(widths))],
        [[Cell("x" * w, ci="[0.100, 0.200]") for w in widths] for _ in range(rows)],
    )


@settings(max_examples=40, deadline=None)
@given(
    st.lists(st.integers(1, 60), min_size=1, max_size=9),
    st.integers(30, 200),
    st.integers(1, 2),
)
def test_fitted_tables_are_never_wider_than_asked_and_keep_every_word(
    widths: list[int], width: int, keys: int
) -> None:
    from rich.console import Console

    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    for part in fit_table(_table(widths), "t", width, keys=keys):
        console.print(part)
    text = console.export_text()
    assert max(len(line.rstrip()) for line in text.splitlines()) <= width
    stacked = column_groups([max(w, 14) for w in widths], min(keys, len(widths)), width) is None
    if not stacked:  # every cell whole on one line of a table
        for w in widths:
            assert "x" * w in text
        assert "[0.100, 0.200]" in text
    console.file.close()


def test_sample_help_fits_80_columns_and_its_message_says_what_was_written(
    tmp_path: Path,
) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["human", "sample", "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0
    assert "…" not in result.output and "--include-controls" in result.output
    run = make_run(tmp_path / "run", per_cell=2)
    result = runner.invoke(
        app, ["human", "sample", str(run), "--out", str(tmp_path / "study"), "--n", "9",
              "--min-per-cell", "1", "--gold", "2"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "study study" not in result.output
    assert f"sampled 9 images in 9 cells + 2 gold into {tmp_path / 'study'}" in result.output
