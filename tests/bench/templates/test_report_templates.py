"""The one template environment: every page escapes what it shows (names, texts, notes)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from glyphbench.core.io import write_checksum
from glyphbench.human_eval import stats as human_stats
from glyphbench.human_eval.report import Analysis, StudyFacts, render_page
from glyphbench.report import write_report
from glyphbench.templates import Cell, Table, render, render_string
from tests.helpers.report_fixtures import build_run

HOSTILE = '<script>alert("x")</script>'
ESCAPED = "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt;"


def assert_shown_as_text(page: str) -> None:
    assert ESCAPED in page
    assert "<script" not in page  # no page has scripts: any would be injected


def test_every_template_escapes_and_tables_render_their_cells() -> None:
    assert render_string("{{ x }}", x=HOSTILE) == ESCAPED
    table = Table(["a", HOSTILE], [[Cell(HOSTILE, ci="[0, 1]", cls="num"), Cell("2")]])
    page = render_string('{% from "macros.html.j2" import table %}{{ table(t) }}', t=table)
    assert_shown_as_text(page)
    assert '<td class="num">' in page and '<span class="ci">[0, 1]</span>' in page
    assert render("base.html.j2", title=HOSTILE).count(ESCAPED) == 2  # <title> and <h1>


@pytest.mark.slow
def test_benchmark_report_shows_a_hostile_model_name_as_text(tmp_path: Path) -> None:
    run = build_run(
        tmp_path / "run",
        n_prompts=6,
        models={"m": 0.1, "n": 0.3, "control:render": 0.0},
        with_images=False,
    )
    results = pd.read_parquet(run / "results.parquet")
    results["model"] = results["model"].replace({"m": HOSTILE})
    results.loc[0, "ocr_text"] = HOSTILE
    results.to_parquet(run / "results.parquet", index=False)
    write_checksum(run / "results.parquet")  # the table's sidecar follows the edit
    index = write_report([run], tmp_path / "report", by=["prompt_type"], n_boot=50)
    page = index.read_text(encoding="utf-8")
    assert_shown_as_text(page)
    summary = pd.read_csv(tmp_path / "report" / "tables" / "summary.csv")
    assert HOSTILE in set(summary["model"])  # the tables keep the name as it is
    assert json.loads((tmp_path / "report" / "report.json").read_text())["models"].count(HOSTILE)


def test_human_report_shows_hostile_names_as_text() -> None:
    ratings = pd.DataFrame(
        {
            "image_id": ["a", "a", "b", "b"],
            "rater_id": ["R1", "R2", "R1", "R2"],
            "criterion": "text_accuracy",
            "value": [1, 1, 0, 1],
        }
    )
    agreement = human_stats.agreement(ratings, categories=[0, 1], n_boot=20)
    ranking = pd.DataFrame(
        {"model": [HOSTILE], "n_images": [2], "human_score": [0.75], "metric_score": [0.5]}
    )
    analysis = Analysis(
        agreement=agreement,
        alignment=pd.DataFrame({"metric": ["ned"], "model": [HOSTILE], "roc_auc": [0.5]}),
        ranking=ranking,
        kendall={"ned": {"tau": float("nan"), "p": float("nan")}},
        raters=pd.DataFrame({"rater_id": ["R1"], "reason": [HOSTILE]}),
        labels=pd.DataFrame(),
        per_image=pd.DataFrame(),
        notes=[HOSTILE],
    )
    facts = StudyFacts(HOSTILE, 2, 0, 2, 4, 2, "text_accuracy", HOSTILE)
    page = render_page(analysis, facts)
    assert_shown_as_text(page)
    assert "0.750" in page and "Krippendorff&#39;s alpha" in page
