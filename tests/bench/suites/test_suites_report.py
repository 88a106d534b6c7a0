"""Suite sections of reports, protocol cards across runs, and the Hugging Face export.

The analysis is checked on constructed results (its numbers against the metric
table's aggregates); the commands end to end on real runs of the control models
over the MARIO-Eval fixture, read by Tesseract.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from glyphbench.core.bootstrap import MIN_UNITS
from glyphbench.report.suites import analyse_suites, paired_suite_difference, protocol_clashes
from glyphbench.scoring import score_pairs
from glyphbench.scoring.table import METRICS
from tests.helpers.paths import DATA

FIXTURES = DATA / "suites"
SETTINGS = {"n_boot": 400, "seed": 0, "confidence": 0.95}


def oneig_rows(model: str, reads: list[str], subset: str, texts: list[str]) -> pd.DataFrame:
    family = "oneig" if subset == "en" else "oneig-zh"
    scored = score_pairs(texts, reads, families=[family])
    frame = pd.DataFrame(
        {
            "model": model,
            "prompt_id": [f"{subset}-{i // 2}" for i in range(len(texts))],  # 2 images a prompt
            "suite": "oneig-text",
            "suite_subset": subset,
            "error": "",
            "run": "r1",
        }
    )
    return pd.concat([frame, scored], axis=1)


EN_TEXTS = ["Fresh Bread", "Fresh Bread", "Quiet Hours", "Quiet Hours", "Open", "Open",
            "Exit", "Exit", "Sale Today", "Sale Today"]  # fmt: skip
EN_GOOD = ["Fresh Bread", "Fresh Brea", "Quiet Hours", "Quiet hours", "Open", "Opem",
           "Exit", "Exlt", "Sale Today", "Sale Tod"]  # fmt: skip
EN_BAD = ["", "Fresh", "Quiet", "", "Op", "", "E", "", "Sale", ""]
ZH_TEXTS = ["每日新鲜面包", "每日新鲜面包", "安静时间", "安静时间"]
ZH_READS = ["每日新鲜面", "每日新鲜面包", "安静", "安静时间"]


@pytest.fixture(scope="module")
def results() -> pd.DataFrame:
    frame = pd.concat(
        [
            oneig_rows("good", EN_GOOD, "en", EN_TEXTS),
            oneig_rows("bad", EN_BAD, "en", EN_TEXTS),
            oneig_rows("good", ZH_READS, "zh", ZH_TEXTS),
        ],
        ignore_index=True,
    )
    frame.attrs["runs"] = {
        "r1": {
            "meta": {
                "models_requested": {
                    "good": {"resolved_spec": "diffusers:black-forest-labs/FLUX.1-dev"}
                },
                "protocol": {"reader": "x", "suite": {"spec": "oneig-text"}, "deviations": []},
            }
        }
    }
    return frame


def test_headlines_are_the_families_aggregates_with_intervals(results: pd.DataFrame) -> None:
    (section,) = analyse_suites(results, **SETTINGS)
    assert section.name == "oneig-text" and section.headline == "oneig_text_score"
    assert section.metrics == ["oneig_ed", "oneig_cr", "oneig_wac", "oneig_text_score"]
    table = section.scores.set_index(["model", "subset"])
    for (model, subset), family in {("good", "en"): "oneig", ("bad", "en"): "oneig",
                                    ("good", "zh"): "oneig-zh"}.items():  # fmt: skip
        rows = results[(results["model"] == model) & (results["suite_subset"] == subset)]
        want = METRICS.aggregate(rows, section.metrics, family)
        row = table.loc[(model, subset)]
        for metric, value in want.items():
            assert row[metric] == pytest.approx(value, abs=1e-12), (model, subset, metric)
            if row["n_prompts"] < MIN_UNITS:  # as the summary: too few prompts, no interval
                assert np.isnan(row[f"{metric}_lo"]) and np.isnan(row[f"{metric}_hi"])
                continue
            assert row[f"{metric}_lo"] <= value + 1e-12 <= row[f"{metric}_hi"] + 2e-12
    # The Chinese subset caps the edit distance at 50, not 100: its own family decides.
    zh = results[results["suite_subset"] == "zh"]
    capped_at_100 = METRICS.aggregate(zh, ["oneig_text_score"], "oneig")["oneig_text_score"]
    assert table.loc[("good", "zh"), "oneig_text_score"] != pytest.approx(capped_at_100)
    assert (
        table.loc[("good", "zh"), "n_prompts"] == 2 and table.loc[("good", "zh"), "n_images"] == 4
    )


def test_a_textinvision_section_shows_the_four_script_columns() -> None:
    """Its family had no summary metric, so the report of every TextInVision suite run
    ended in a traceback (np.column_stack of no column)."""
    texts = ["Open", "Fresh Bread", "Quiet", "Sale", "Exit", "Mind the gap"]
    reads = ["Open", "Fresh Brea", "Quiet", "", "Exlt", "Mind the gap"]
    scored = score_pairs(texts, reads, families=["textinvision"])
    frame = pd.DataFrame(
        {
            "model": "m",
            "prompt_id": [f"p{i}" for i in range(len(texts))],
            "suite": "textinvision",
            "suite_subset": "selection",
            "error": "",
            "run": "r1",
        }
    )
    [section] = analyse_suites(pd.concat([frame, scored], axis=1), **SETTINGS)
    columns = ["score_longest_match", "score_lcs", "score_levenshtein", "score_algorithm1"]
    assert section.metrics == columns
    row = section.scores.iloc[0]
    assert row["score_lcs"] == pytest.approx(scored["score_lcs"].mean())


def test_paired_differences_use_the_same_prompts_for_both_models(results: pd.DataFrame) -> None:
    (section,) = analyse_suites(results, **SETTINGS)
    pairs = section.comparisons
    assert set(pairs["subset"]) == {"en"}  # bad has no Chinese rows: nothing shared there
    score = pairs[pairs["metric"] == "oneig_text_score"].iloc[0]
    table = section.scores.set_index(["model", "subset"])
    expected = (
        table.loc[("good", "en"), "oneig_text_score"] - table.loc[("bad", "en"), "oneig_text_score"]
    )
    assert score["diff"] == pytest.approx(expected, abs=1e-12)
    assert score["lo"] <= score["diff"] <= score["hi"] and score["n_prompts"] == 5
    # below MIN_UNITS shared prompts: no interval and no verdict, as the summary's pairs
    few = results[(results["suite_subset"] == "en") & results["prompt_id"].isin(["en-0", "en-1"])]
    [tiny] = paired_suite_difference(
        few, "good", "bad", ["oneig_text_score"], ("oneig-text", "en", "oneig"), SETTINGS
    )
    assert np.isnan(tiny["lo"]) and np.isnan(tiny["hi"]) and not tiny["significant"]
    # Swapping the models flips the sign.
    swapped = paired_suite_difference(
        results[results["suite_subset"] == "en"], "bad", "good", ["oneig_text_score"],
        ("oneig-text", "en", "oneig"), SETTINGS,
    )  # fmt: skip
    assert swapped[0]["diff"] == pytest.approx(-score["diff"], abs=1e-12)


def test_published_scores_are_matched_by_spec_and_checked_against_the_interval(
    results: pd.DataFrame,
) -> None:
    (section,) = analyse_suites(results, **SETTINGS)
    published = section.published
    # FLUX.1-dev's OneIG EN text score, published twice: one row per source, never merged.
    assert published["model"].tolist() == ["good", "good"]
    assert sorted(published["published_model"]) == ["FLUX.1-dev", "Flux.1-dev"]
    assert published["source"].str.split("@").str[0].tolist() == [
        "OneIG-Bench/OneIG-Benchmark",
        "AIDC-AI/Ovis-Image",
    ]
    for row in published.to_dict("records"):
        assert row["published"] == 0.523 and row["subset"] == "en"
        assert row["inside"] == (row["lo"] <= 0.523 <= row["hi"])
        assert not row["same_protocol"]  # reader "x" is not the benchmark's VLM


def test_protocol_clashes_name_the_runs_and_the_field() -> None:
    card = {"reader": "tesseract", "seeds": [0], "images_per_prompt": 1}
    assert protocol_clashes({"a": card, "b": dict(card)}) == []
    (warning,) = protocol_clashes({"a": card, "b": {**card, "images_per_prompt": 4}})
    assert warning == "images per prompt: 1 in run a, 4 in run b"  # words, no list reprs


# --------------------------------------------------------------------------- end to end


def glyphbench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "glyphbench", *args], capture_output=True, text=True, check=False
    )


@pytest.fixture(scope="module")
def mario_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two runs of the MARIO fixture: Tesseract with its default and with another page mode."""
    root = tmp_path_factory.mktemp("mario")
    outs = []
    for name, reader in (("a", "tesseract"), ("b", "tesseract?psm=6")):
        out = root / name
        result = glyphbench(
            "run", "--suite", "mario:DrawBenchText,ChineseDrawText",
            "--data", str(FIXTURES / "mario"),
            "--models", "control:render,control:blank", "--ocr", reader,
            "--images-per-prompt", "1", "--out", str(out), "--run-id", f"mario-{name}",
            "--no-progress",
        )  # fmt: skip
        assert result.returncode == 0, result.stderr[-2000:]
        outs.append(out)
    return outs[0], outs[1]


@pytest.mark.slow
def test_a_suite_run_scores_with_both_families_and_records_its_card(
    mario_runs: tuple[Path, Path],
) -> None:
    run, _ = mario_runs
    rows = pd.read_parquet(run / "results.parquet")
    assert {"ned", "mario_precision", "mario_recall", "mario_acc"} <= set(rows.columns)
    assert set(rows["benchmark_id"]) == {"0", "1", "2"} and set(rows["suite"]) == {"mario"}
    card = json.loads((run / "run.json").read_text())["protocol"]
    assert card["suite"]["name"] == "mario" and card["reader"] == "tesseract"
    assert card["reader_engines"] and card["reader_engines"][0].startswith("tesseract")
    assert any("masktextspotterv3" in d for d in card["deviations"])
    render = rows[rows["model"] == "control:render"]
    scored = score_pairs(render["text"].fillna(""), render["ocr_pieces"].map(
        lambda p: "\n".join(json.loads(p))), families=["mario"])  # fmt: skip
    assert np.allclose(render["mario_recall"].to_numpy(), scored["mario_recall"].to_numpy())


@pytest.mark.slow
def test_report_of_two_runs_warns_that_their_protocols_differ(
    mario_runs: tuple[Path, Path], tmp_path: Path
) -> None:
    result = glyphbench("report", *map(str, mario_runs), "--out", str(tmp_path), "--n-boot", "200")
    assert result.returncode == 0, result.stderr[-2000:]
    report = json.loads((tmp_path / "report.json").read_text())
    warnings = report["protocol_warnings"]
    assert any("tesseract in run mario-a, tesseract?psm=6 in run mario-b" in w for w in warnings)
    suite = report["suites"]["mario"]
    assert suite["headline"] == "mario_f"
    scores = {(s["model"], s["subset"]): s for s in suite["scores"]}
    # labels say what differs between the runs' protocols: here the reader
    render = scores[("control:render [reader tesseract]", "all")]
    blank = scores[("control:blank [reader tesseract]", "all")]
    assert blank["mario_f"] == 0.0
    if render["n_prompts"] >= 5:
        assert render["mario_f_lo"] <= render["mario_f"] <= render["mario_f_hi"]
    else:  # too few prompts for an interval (None in JSON)
        assert render["mario_f_lo"] is None and render["mario_f_hi"] is None
    page = (tmp_path / "index.html").read_text(encoding="utf-8")
    assert "Benchmark suites" in page and "MARIO-Eval" in page and "Protocols differ" in page
    assert (tmp_path / "tables" / "suite_mario.csv").is_file()


@pytest.mark.slow
def test_export_is_a_dataset_that_datasets_loads_back(
    mario_runs: tuple[Path, Path], tmp_path: Path
) -> None:
    datasets = pytest.importorskip("datasets")
    run, _ = mario_runs
    out = tmp_path / "export"
    result = glyphbench("export", str(run), "--hf-dataset", str(out))
    assert result.returncode == 0, result.stderr[-2000:]
    card = (out / "README.md").read_text(encoding="utf-8")
    assert card.startswith("---\n") and "## Protocol card" in card and "masktextspotterv3" in card
    cache = str(tmp_path / "cache")
    images = datasets.load_dataset("imagefolder", data_dir=str(out), split="train", cache_dir=cache)
    table = datasets.load_dataset(
        "parquet", data_files=str(out / "metadata.parquet"), split="train", cache_dir=cache
    )
    rows = pd.read_parquet(run / "results.parquet")
    assert len(images) == len(table) == len(rows)
    assert images[0]["image"].size == (int(rows["width"][0]), int(rows["height"][0]))
    assert sorted(images["prompt_id"]) == sorted(rows["prompt_id"].astype(str))
    keys = ["model", "prompt_id", "mario_recall"]
    loaded = table.to_pandas()[keys].sort_values(keys[:2]).reset_index(drop=True)
    original = rows[keys].astype({"model": str, "prompt_id": str}).sort_values(keys[:2])
    pd.testing.assert_frame_equal(loaded, original.reset_index(drop=True), check_dtype=False)


@pytest.mark.slow
def test_export_push_offline_is_one_line_exit_2(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    pd.DataFrame(
        {"model": ["m"], "prompt_id": ["p"], "image_path": [None], "error": ["Generate: X"]}
    ).to_parquet(run / "results.parquet")
    result = subprocess.run(
        [sys.executable, "-m", "glyphbench", "export", str(run), "--hf-dataset",
         str(tmp_path / "out"), "--push", "someone/results"],
        capture_output=True, text=True, env={**__import__("os").environ, "HF_HUB_OFFLINE": "1"},
    )  # fmt: skip
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "offline" in result.stderr
    assert not (tmp_path / "out").exists()  # refused before the export: nothing written


@pytest.mark.slow
def test_rescoring_recomputes_the_suite_columns(
    mario_runs: tuple[Path, Path], tmp_path: Path
) -> None:
    import shutil

    from glyphbench.run.operations import rescore_run

    run = tmp_path / "copy"
    shutil.copytree(mario_runs[0], run)
    before = pd.read_parquet(run / "results.parquet")
    after = rescore_run(run, scores_only=True, progress=False)
    columns = ["mario_precision", "mario_recall", "mario_acc", "ned"]
    pd.testing.assert_frame_equal(
        after[columns].reset_index(drop=True), before[columns].reset_index(drop=True)
    )
    card = json.loads((run / "run.json").read_text())["protocol"]
    assert card["suite"]["name"] == "mario" and card["reader_engines"]
