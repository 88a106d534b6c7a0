"""The console summary of ``run`` and ``merge`` reads only its columns.

A merged table of a million rows is over a GB with every column; the summary needs
a few: the model lines', and the inputs of each shown metric's aggregate as the
metric table defines them (a mean its own column, a pooled ratio its counts, a
derived metric its inputs'), suites' headline metrics included. The summary printed
from those columns must be the summary of the whole table.
"""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console
from typer.testing import CliRunner

from glyphbench.report.answer import answer_columns
from glyphbench.report.console import (
    CONSOLE_METRICS,
    print_summary,
    suites_of,
    summarize,
    summary_columns,
)
from glyphbench.report.suites import headline_points
from glyphbench.report.tables import fmt_number
from glyphbench.run.results import RESULTS, read_results
from glyphbench.scoring import score_pairs
from glyphbench.scoring.table import METRICS
from tests.helpers.runner_helper import register, write_prompts_csv

register()

TEXTS = ["Fresh Bread", "Quiet Hours", "Open", "每日新鲜面包"]
READS = ["Fresh Brea", "", "Open", "每日新鲜面"]


def _suite_rows(suite: str, subset: str, family: str, model: str) -> pd.DataFrame:
    scored = score_pairs(TEXTS, READS, families=["glyphbench", family])
    frame = pd.DataFrame(
        {
            "model": model,
            "is_control": False,
            "prompt_id": [f"{suite}-{i}" for i in range(len(TEXTS))],
            "suite": suite,
            "suite_subset": subset,
            "error": ["", "", "OCR: RuntimeError: x", ""],
            "ocr_boxes": ["[[0, 0], [1, 1]]" * 50] * len(TEXTS),  # wide, and not summarised
        }
    )
    return pd.concat([frame, scored], axis=1)


@pytest.fixture()
def results(tmp_path: Path) -> Path:
    """Suites whose headlines are a pooled ratio (LongText, CVTG-2K), derived (MARIO-Eval,
    OneIG) or a mean, beside rows of no suite."""
    plain = _suite_rows("", "", "glyphbench", "plain").assign(suite=None, suite_subset=None)
    frame = pd.concat(
        [
            _suite_rows("longtext", "en", "longtext", "a"),
            _suite_rows("longtext", "zh", "longtext-zh", "a"),
            _suite_rows("cvtg", "CVTG/2", "cvtg", "b"),
            _suite_rows("cvtg", "CVTG/3", "cvtg", "b"),
            _suite_rows("mario", "DrawBenchText", "mario", "c"),
            _suite_rows("oneig-text", "en", "oneig", "d"),
            plain,
        ],
        ignore_index=True,
    )
    frame.loc[frame.index[-1], "cost_usd"] = 0.25
    frame = frame.loc[:, ~frame.columns.duplicated()]
    path = tmp_path / RESULTS
    frame.to_parquet(path, index=False)
    return path


def _printed(rows: pd.DataFrame) -> str:
    out = io.StringIO()
    print_summary(rows, Console(file=out, width=400, color_system=None))
    return out.getvalue()


def test_the_summary_from_its_columns_is_the_summary_of_the_table(results: Path) -> None:
    whole = pd.read_parquet(results)
    first = read_results(results, summary_columns())  # what merge reads before the suites
    suites = suites_of(first)
    assert suites == ["cvtg", "longtext", "mario", "oneig-text"]
    rows = read_results(results, summary_columns(suites))
    assert list(rows.columns) == [c for c in summary_columns(suites) if c in whole.columns]
    assert {"ocr_boxes", "prompt_id", "edit_distance"}.isdisjoint(rows.columns)
    # the pooled ratios' counts and the derived metrics' inputs come from the metric table
    assert {"longtext_matched", "longtext_total", "mario_precision", "mario_recall"} <= set(
        rows.columns
    )
    pd.testing.assert_frame_equal(summarize(rows), summarize(whole))
    headers, values = headline_points(rows)
    assert (headers, values) == headline_points(whole) and len(headers) >= 4
    assert _printed(rows) == _printed(whole)


def test_summary_columns_follow_the_metric_table() -> None:
    columns = summary_columns(["longtext"])
    for family in ("longtext", "longtext-zh"):
        assert set(METRICS.inputs(["longtext_text_score"], family)) <= set(columns)
    assert "longtext_text_score" not in columns  # a pooled ratio: no column of its own
    assert set(METRICS.inputs(["mario_f"], "mario")) <= set(summary_columns(["mario"]))


def test_run_and_merge_print_the_summary_of_the_whole_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``glyphbench run`` and ``merge`` read back the summary's columns only."""
    import glyphbench.run.operations as operations
    from glyphbench.cli.root import app

    asked: list[object] = []
    merge = operations.merge_run

    def merge_run(*args: object, **kwargs: object) -> pd.DataFrame:
        asked.append(kwargs.get("read_columns"))
        return merge(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(operations, "merge_run", merge_run)
    csv = write_prompts_csv(tmp_path / "p.csv", 3)
    out = tmp_path / "run"
    cli = CliRunner()
    args = ["--models", "control:render?size=32", "--prompts", f"csv:{csv}", "--ocr", "pixelocr"]
    ran = cli.invoke(app, ["run", *args, "--out", str(out), "--no-progress"])
    assert ran.exit_code == 0, ran.output
    merged = cli.invoke(app, ["merge", str(out)])
    assert merged.exit_code == 0, merged.output
    # the summary's columns and the answer's (prompts and the report's summary metrics)
    run_columns = [*summary_columns(), *answer_columns(), "image_path", "ocr_text"]
    assert asked == [list(dict.fromkeys(run_columns)), summary_columns()]
    whole = pd.read_parquet(out / RESULTS)
    line = _printed(whole).strip().splitlines()[-2]  # the model's line, from the whole table
    cells = [cell.strip() for cell in line.split("│") if cell.strip()][1:]
    assert len(cells) == 5 and all(cell in merged.output for cell in cells)
    # the run's answer shows the same numbers to the report's decimals
    answered = [fmt_number(float(c), m) for c, m in zip(cells[2:], CONSOLE_METRICS, strict=True)]
    assert all(cell in ran.output for cell in [*cells[:2], *answered])
    assert "merged 3 rows" in merged.output


def _at(rows: pd.DataFrame, width: int) -> str:
    console = Console(width=width, record=True, file=io.StringIO(), color_system=None)
    print_summary(rows, console)
    return console.export_text()


def _numbers(printed: str) -> set[str]:
    return {token for token in printed.split() if token.replace(".", "", 1).isdigit()}


@pytest.mark.parametrize("width", [80, 100, 120, 60, 40])
def test_the_summary_fits_the_console_and_cuts_no_number_nor_header(
    results: Path, width: int
) -> None:
    """At 80 columns (and narrower or wider) no line is wider than the console,
    every number of the table is printed whole, and every header on one line where it fits
    beside the model; columns that do not fit go to parts that repeat the model."""
    rows = pd.read_parquet(results)
    rows.loc[rows["model"] == "plain", "model"] = "diffusers:some-org/a-long-model-name-v2"
    rows.loc[rows.index[0], "error"] = "Refused: openai: moderation_blocked"
    rows.loc[rows["model"] == "c", "is_control"] = True
    wide = _at(rows, 400)
    assert len(wide.splitlines()) == 5 + 5  # one table: title, 4 lines of header, 5 models
    numbers = _numbers(wide)
    assert {"0.25", "0.983", "0.167", "0.527", "0.538", "4.333", "8"} <= numbers
    printed = _at(rows, width)
    assert "…" not in printed
    assert max(len(line) for line in printed.splitlines()) <= width
    cells = {token.strip("│┃():,") for token in printed.split()}
    assert numbers <= cells, numbers - cells
    model = len("diffusers:some-org/a-long-model-name-v2")
    headers = ["Algorithm 1 distance ↓", "NED similarity (1 = exact) ↑", "refused (rate)"]
    headers += ["CVTG-2K: CVTG word accuracy ↑", "LongText-Bench zh: LongText text score ↑"]
    for header in headers:
        if model + len(header) + 7 <= width:  # the model column and this one fit side by side
            assert header in printed, (header, printed)
    parts = printed.count("Summary (")
    assert parts == 0 if width < model + 20 else parts > 1  # stacked, or split in parts
    assert printed.count("diffusers:some-org/a-long-model-name-v2") == max(parts, 1)


def test_a_summary_that_fits_is_one_table_with_its_headers_on_one_line(results: Path) -> None:
    """Wide enough for every column at its natural width: one table, as rich lays it out."""
    rows = pd.read_parquet(results)
    rows = rows[rows["suite"].isna() | rows["suite"].eq("cvtg")]  # 2 models, 2 headlines
    printed = _at(rows, 170)
    lines = printed.splitlines()
    assert "Summary (" not in printed and len(lines) == 5 + 2
    assert "CVTG-2K: CVTG word accuracy ↑" in lines[2] and "NED similarity (1 = exact)" in lines[2]
    assert max(len(line) for line in lines) < 170  # natural widths, not stretched
