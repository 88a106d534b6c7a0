"""Reader faithfulness measured on a run's own typo controls."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from glyphbench.core.io import write_checksum
from glyphbench.models.base import ImageRequest
from glyphbench.models.controls import TypoControl
from glyphbench.report import write_report
from glyphbench.report.controls import reader_faithfulness
from tests.helpers.paths import REPO_ROOT

TEXTS = ["Digital bakery", "Open every day", "Fresh bread", "Harbour market", "Night train"]


def typo_rows(read_as: str) -> pd.DataFrame:
    """Typo-control rows read as drawn (``drawn``) or as the intended text (``text``)."""
    rows = []
    for seed, text in enumerate(TEXTS * 4):
        drawn = TypoControl(0.3).typo_text(ImageRequest(prompt="", text=text, seed=seed))
        rows.append(
            {
                "model": "control:typo?rate=0.3",
                "text": text,
                "ocr_text": drawn if read_as == "drawn" else text,
                "drawn_text": drawn,
                "image_seed": seed,
                "ocr_engine": f"reader-{read_as}",
                "error": None,
            }
        )
    return pd.DataFrame(rows)


def test_a_run_records_what_each_control_drew(tmp_path: Path) -> None:
    """The report reads the drawn text from the results; it never re-runs a control."""
    from glyphbench.run.config import RunConfig
    from glyphbench.run.operations import run_benchmark
    from tests.helpers.runner_helper import PixelOCR, prompt_set, register

    register()  # the pixelocr test reader
    models = ["control:render", "control:typo?rate=0.3", "control:blank"]
    config = RunConfig.from_mapping({"models": models, "ocr": "pixelocr", "out": str(tmp_path)})
    result = run_benchmark(config, prompt_set=prompt_set(4), reader=PixelOCR(), progress=False)
    rows = pd.read_parquet(result.out / "results.parquet").set_index("model")
    render, typo = rows.loc["control:render"], rows.loc["control:typo?rate=0.3"]
    assert (render["drawn_text"] == render["text"]).all()
    assert (rows.loc["control:blank", "drawn_text"] == "").all()
    expected = [
        TypoControl(0.3).typo_text(ImageRequest(prompt="", text=t, seed=s))
        for t, s in zip(typo["text"], typo["image_seed"], strict=True)
    ]
    assert typo["drawn_text"].tolist() == expected and expected != typo["text"].tolist()
    source = (REPO_ROOT / "bench/report/controls.py").read_text("utf-8")
    assert "TypoControl" not in source  # a pure function of the results table


def test_a_faithful_reader_scores_one_and_a_correcting_reader_zero() -> None:
    measured = reader_faithfulness(pd.concat([typo_rows("drawn"), typo_rows("text")]))
    by_reader = measured.set_index("reader")
    assert by_reader.loc["reader-drawn", "faithfulness"] == 1.0
    assert by_reader.loc["reader-drawn", "written"] > 10
    assert by_reader.loc["reader-text", "faithfulness"] == 0.0
    assert not isinstance(by_reader.loc["reader-drawn", "warning"], str)
    assert "corrects misspellings" in by_reader.loc["reader-text", "warning"]


def test_failed_rows_and_other_models_are_not_counted() -> None:
    rows = typo_rows("drawn")
    rows.loc[0, "error"] = "OCR: boom"
    others = rows.assign(model="control:render")
    measured = reader_faithfulness(pd.concat([rows, others]))
    full = reader_faithfulness(typo_rows("drawn"))
    assert measured.loc[0, "written"] < full.loc[0, "written"]


@pytest.mark.slow
def test_the_report_warns_when_the_reader_corrects(tmp_path: Path) -> None:
    from tests.helpers.report_fixtures import build_run

    run = build_run(tmp_path / "run", n_prompts=12)
    rows = pd.read_parquet(run / "results.parquet")
    typo = rows["model"].str.startswith("control:typo")
    rows.loc[typo, "ocr_text"] = rows.loc[typo, "text"]  # a reader that "fixes" every typo
    rows.to_parquet(run / "results.parquet")
    write_checksum(run / "results.parquet")  # the table's sidecar follows the edit
    write_report([run], tmp_path / "report", n_boot=50)
    html = (tmp_path / "report" / "index.html").read_text("utf-8")
    assert "Reader corrects typos" in html and "Reader faithfulness" in html
    table = pd.read_csv(tmp_path / "report" / "tables" / "reader_faithfulness.csv")
    assert table["faithfulness"].tolist() == [0.0]


@pytest.mark.slow
def test_refusals_and_cost_have_their_own_table(tmp_path: Path) -> None:
    """A refusal is reported as a rate with its interval, never as a zero score."""
    from tests.helpers.report_fixtures import build_run

    run = build_run(tmp_path / "run", n_prompts=12)
    rows = pd.read_parquet(run / "results.parquet")
    hosted = rows["model"] == "toy-good"
    refused = rows.index[hosted][:3]
    rows.loc[refused, "error"] = "Refused: openai: moderation_blocked"
    rows.loc[hosted, "cost_usd"] = 0.04
    rows.to_parquet(run / "results.parquet")
    write_checksum(run / "results.parquet")  # the table's sidecar follows the edit
    write_report([run], tmp_path / "report", n_boot=50)
    table = pd.read_csv(tmp_path / "report" / "tables" / "outcomes.csv").set_index("model")
    assert table.loc["toy-good", "refused"] == 3
    assert table.loc["toy-good", "refusal_rate"] == 3 / hosted.sum()
    assert (
        table.loc["toy-good", "refusal_rate_lo"]
        < 3 / hosted.sum()
        < table.loc["toy-good", "refusal_rate_hi"]
    )
    assert round(table.loc["toy-good", "cost_usd"], 6) == round(0.04 * hosted.sum(), 6)
    html = (tmp_path / "report" / "index.html").read_text("utf-8")
    assert "Refusals and cost" in html


@pytest.mark.slow
def test_local_models_get_no_refusal_table(tmp_path: Path) -> None:
    from tests.helpers.report_fixtures import build_run

    run = build_run(tmp_path / "run", n_prompts=8)
    write_report([run], tmp_path / "report", n_boot=50)
    assert not (tmp_path / "report" / "tables" / "outcomes.csv").exists()
    assert "Refusals and cost" not in (tmp_path / "report" / "index.html").read_text("utf-8")
