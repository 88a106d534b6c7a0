"""Point 3: published numbers, one row per source, shown in the report per source.

``bench/suites/published.csv`` holds numbers copied from the benchmarks' and the
models' repositories (each row cites repository@commit, file and table column).
The values checked here are facts of those sources, read in them: where two
sources disagree both rows stay, and the report shows each with its source.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

from glyphbench.report.suites import analyse_suites, published_display
from glyphbench.scoring import score_pairs
from glyphbench.scoring.table import METRICS
from glyphbench.suites.base import resolve_suite
from glyphbench.suites.published import COLUMNS, PUBLISHED, load_published, matches

KEY = ["benchmark", "subset", "options", "model", "metric", "source"]
#: Metrics on a 0-1 scale (the others: LeX's PNED, OneIG's edit distance).
UNBOUNDED = {"lex_pned", "oneig_ed"}


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return load_published()


def test_schema_one_row_per_source_and_every_row_cites_repository_file_and_section(
    table: pd.DataFrame,
) -> None:
    raw = pd.read_csv(PUBLISHED, dtype=str, keep_default_na=False)
    assert tuple(raw.columns) == COLUMNS
    duplicated = raw[raw.duplicated(KEY, keep=False)]
    assert duplicated.empty, duplicated[KEY].to_string()
    cite = re.compile(r"^[\w.-]+/[\w.-]+@[0-9a-f]{7,40} \S+\.(md|png|json|py) \(.+\)")
    for row in table.to_dict("records"):
        assert cite.match(row["source"]), row["source"]
        assert row["model"].strip() == row["model"] and row["model"]
        assert "\u2011" not in row["model"] and "\xa0" not in row["model"]  # names as typed
        assert row["protocol"]
        if row["metric"] not in UNBOUNDED:
            assert 0.0 <= row["value"] <= 1.0, row
        pooled = row["subset"] == "all"
        selection = resolve_suite(
            row["benchmark"] if pooled else f"{row['benchmark']}:{row['subset']}"
        )
        assert not pooled or selection.suite.pools_subsets
        for family in set(selection.families.values()):
            assert row["metric"] in METRICS.summary_names([family]), row


def _rows(table: pd.DataFrame, **where: str) -> pd.DataFrame:
    mask = pd.Series(True, index=table.index)
    for column, value in where.items():
        mask &= table[column] == value
    return table[mask]


def test_the_three_model_repositories_cvtg_and_longtext_numbers(table: pd.DataFrame) -> None:
    repos = table["source"].str.split("@").str[0]
    for repo, benchmarks in {
        "AIDC-AI/Ovis-Image": {"cvtg", "longtext", "oneig-text"},
        "zai-org/GLM-Image": {"cvtg", "longtext"},
        "meituan-longcat/LongCat-Image": {"cvtg"},  # its README has no LongText table
    }.items():
        assert set(table.loc[repos == repo, "benchmark"]) == benchmarks, repo
    # Each model's own number, as its README prints it.
    own = {
        ("Ovis-Image", "cvtg", "all", "cvtg_word_accuracy"): 0.9200,
        ("Ovis-Image", "longtext", "zh", "longtext_text_score"): 0.964,
        ("GLM-Image", "cvtg", "all", "cvtg_ned"): 0.9557,
        ("GLM-Image", "longtext", "en", "longtext_text_score"): 0.952,
        ("LongCat-Image", "cvtg", "all", "cvtg_word_accuracy"): 0.8658,
    }
    for (model, bench, subset, metric), value in own.items():
        rows = _rows(table, model=model, benchmark=bench, subset=subset, metric=metric)
        assert rows["value"].tolist() == [value], (model, bench, subset, metric)


def test_sources_that_disagree_keep_one_row_each_never_an_average(table: pd.DataFrame) -> None:
    seedream = _rows(table, model="Seedream 4.0", benchmark="cvtg", metric="cvtg_word_accuracy")
    by_repo = dict(zip(seedream["source"].str.split("@").str[0], seedream["value"], strict=True))
    assert by_repo == {"zai-org/GLM-Image": 0.8451, "meituan-longcat/LongCat-Image": 0.8917}
    qwen = _rows(table, model="Qwen-Image", benchmark="cvtg", metric="cvtg_ned")
    assert sorted(qwen["value"]) == [0.9116, 0.9116, 0.9297]  # Ovis, GLM; LongCat
    # The rows the first tables left out: OneIG's BAGEL+CoT and Show-o2, LeX's other columns.
    oneig = _rows(table, benchmark="oneig-text", metric="oneig_text_score")
    paper = oneig[oneig["source"].str.startswith("OneIG-Bench/")]
    assert _rows(paper, model="BAGEL+CoT").set_index("subset")["value"].to_dict() == {
        "en": 0.020,
        "zh": 0.127,
    }
    assert _rows(paper, model="Show-o2-7B")["value"].tolist() == [0.002]
    lex = _rows(table, benchmark="lex", model="LeX-Lumina")
    assert len(lex) == 12  # 3 levels x simple/enhanced x PNED/recall
    assert _rows(lex, subset="hard", options="caption=enhanced", metric="lex_pned")[
        "value"
    ].tolist() == [9.87]


def test_model_aliases_match_whole_names_only() -> None:
    assert matches("diffusers:Qwen/Qwen-Image@abc", "Qwen-Image", "Qwen/Qwen-Image")
    assert not matches("diffusers:Qwen/Qwen-Image-2512", "Qwen-Image", "Qwen/Qwen-Image")
    assert not matches("diffusers:Tongyi-MAI/Z-Image-Turbo", "Z-Image", "Tongyi-MAI/Z-Image")
    assert matches("images:Seedream 4.0", "Seedream 4.0", "")  # a folder named as the model


def test_the_report_shows_each_sources_published_number_beside_glyphbench() -> None:
    texts = ["OPEN late", "Fresh BREAD", "sale", "Quiet hours"]
    reads = ["open late", "fresh bred", "sale", "quiet hours"]
    frame = pd.concat(
        [
            pd.DataFrame(
                {
                    "model": "Seedream 4.0",
                    "prompt_id": ["a", "b", "c", "d"],
                    "suite": "cvtg",
                    "suite_subset": ["CVTG/2", "CVTG/2", "CVTG-Style/2", "CVTG-Style/2"],
                    "error": "",
                    "run": "r1",
                }
            ),
            score_pairs(texts, reads, families=["cvtg"]),
        ],
        axis=1,
    )
    frame.attrs["runs"] = {"r1": {"meta": {"protocol": {"reader": "x", "suite": {"spec": "cvtg"}}}}}
    (section,) = analyse_suites(frame, n_boot=200, seed=0, confidence=0.95)
    shown = published_display(section)
    accuracy = shown[shown["Metric"] == "CVTG word accuracy"]
    assert accuracy["Subset"].tolist() == ["all", "all"]  # the pooled number, as published
    assert sorted(accuracy["Published (as printed)"]) == ["0.8451", "0.8917"]  # not rounded
    assert accuracy["Source"].str.split("@").str[0].tolist() == [
        "zai-org/GLM-Image",
        "meituan-longcat/LongCat-Image",
    ]
    pooled = section.scores.set_index("subset").loc["all", "cvtg_word_accuracy"]
    assert pooled == pytest.approx(
        METRICS.aggregate(frame, ["cvtg_word_accuracy"], "cvtg")["cvtg_word_accuracy"]
    )
