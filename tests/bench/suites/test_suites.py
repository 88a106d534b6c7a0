"""Benchmark suites: loaders on each benchmark's file format, selection, config, scoring, cards.

LongText-Bench and TextInVision are read from their real files in ``../shared``;
the other benchmarks from small fixtures written in their exact formats
(``tests/data/suites``, see its README).
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from glyphbench.cli.root import app
from glyphbench.core.errors import InputError
from glyphbench.core.registry import PLUGINS
from glyphbench.run.config import RunConfig
from glyphbench.scoring import score_pairs
from glyphbench.scoring.table import METRICS
from glyphbench.suites.base import resolve_suite
from glyphbench.suites.oneig import parse_text_content, split_grid, tile_grid
from glyphbench.suites.protocol import comparable_part, protocol_card
from glyphbench.suites.published import load_published, matches
from glyphbench.suites.scores import add_suite_scores, read_cells, suite_columns
from tests.helpers.paths import DATA, REPO_ROOT, SHARED

FIXTURES = DATA / "suites"
#: The built-in suites; a plug-in suite may add more (the checks below run on every one).
BUILT_IN_SUITES = ["anytext", "cvtg", "lex", "longtext", "mario", "oneig-text", "textinvision"]


@pytest.fixture(scope="module")
def longtext_dir() -> Path:
    path = SHARED / "longtext-bench"
    if not (path / "text_prompts.jsonl").exists():
        pytest.skip(f"LongText-Bench prompt files not found at {path}")
    return path


def frame_of(spec: str, data: Path) -> pd.DataFrame:
    return resolve_suite(spec).load_prompts(data).frame


# ------------------------------------------------------------------ registry and CLI


def test_every_suite_is_a_registered_plugin_listed_by_the_cli() -> None:
    names = PLUGINS.names("suites")
    assert set(BUILT_IN_SUITES) <= set(names)
    listed = CliRunner().invoke(app, ["list", "suites"])
    assert listed.exit_code == 0
    assert all(name in listed.output for name in names)
    run_help = CliRunner().invoke(app, ["run", "--help"], env={"COLUMNS": "200"})
    assert all(name in run_help.output for name in names)


def test_every_suite_headline_and_family_is_in_the_metric_table() -> None:
    for name in PLUGINS.names("suites"):
        suite = resolve_suite(name).suite
        for subset in suite.subsets:
            assert subset.family in METRICS.families()
            assert suite.headline in [m.name for m in METRICS.of([subset.family])]
        assert suite.protocol.reader and suite.protocol.images_per_prompt >= 1


def test_subsets_are_chosen_by_name_alias_or_part() -> None:
    assert [s.name for s in resolve_suite("cvtg:2").subsets] == ["CVTG/2", "CVTG-Style/2"]
    assert len(resolve_suite("cvtg:CVTG-Style").subsets) == 4
    assert resolve_suite("anytext:zh").families == {"wukong_word": "anytext-zh"}
    assert resolve_suite("lex:easy,hard").families == {"easy": "lex", "hard": "lex"}
    with pytest.raises(InputError, match="unknown subset 'fr'; known: en, zh"):
        resolve_suite("longtext:fr")
    with pytest.raises(InputError, match="option 'caption'"):
        resolve_suite("lex?caption=fancy")


# ------------------------------------------------------------------ loaders


@pytest.mark.slow
def test_longtext_reads_both_real_prompt_files(longtext_dir: Path) -> None:
    frame = frame_of("longtext", longtext_dir)
    assert frame["suite_subset"].value_counts().to_dict() == {"en": 160, "zh": 160}
    first = frame.iloc[0]
    assert first.prompt_id == "en-" + first.benchmark_id and first.group == "en"
    assert first.text.startswith("FRESH BREWS, EVERY MORNING, EVERY DAY")
    assert frame["prompt_id"].is_unique
    assert frame.loc[frame["suite_subset"] == "zh", "text"].str.contains("[\u4e00-\u9fa5]").all()


def test_oneig_parses_text_content_as_its_scorer_does() -> None:
    frame = frame_of("oneig-text", FIXTURES / "oneig")
    assert frame["prompt_id"].tolist() == ["en-000", "en-001", "en-002", "zh-000", "zh-001"]
    assert frame.loc[0, "text"] == "Fresh Bread Daily Since 1987"
    # The backslash is doubled before parsing: "\n" stays a backslash and an n.
    assert frame.loc[2, "text"] == "Line one\\nLine two"
    assert parse_text_content("['a\\nb']") == ["a\\nb"]
    assert frame.loc[3, "prompt"].startswith("一家面包店")


def test_cvtg_takes_single_quoted_spans_and_folder_names_without_case() -> None:
    frame = frame_of("cvtg:2", FIXTURES / "cvtg")  # the fixture spells CVTG-style
    assert frame["prompt_id"].tolist() == ["CVTG-2-0", "CVTG-2-1", "CVTG-Style-2-0"]
    assert frame["text"].tolist() == [
        "Corner Deli Open Late",
        "Midnight Harbor Elena Brooks",
        "Visit Lakeview Summer 1962",
    ]
    with pytest.raises(InputError, match=r"none of CVTG/3\.json"):
        frame_of("cvtg:3", FIXTURES / "cvtg")


def test_lex_keeps_items_one_per_line_and_picks_the_caption_kind() -> None:
    simple = frame_of("lex", FIXTURES / "lex")
    assert simple["suite_subset"].tolist() == ["easy", "easy", "medium", "hard"]
    assert simple.loc[1, "text"] == "NEW ARTISTS"
    assert simple.loc[0, "text"] == "Communicate\nExecute"
    assert simple.loc[0, "benchmark_id"] == "0000"
    enhanced = frame_of("lex?caption=enhanced", FIXTURES / "lex")
    assert enhanced.loc[0, "prompt"].startswith("A clean poster")
    assert simple.loc[0, "prompt"] != enhanced.loc[0, "prompt"]


def test_anytext_keeps_valid_lines_cut_to_20_and_fills_the_caption() -> None:
    frame = frame_of("anytext", FIXTURES / "anytext")
    assert frame["prompt_id"].tolist() == [
        "laion_word-000000123",
        "laion_word-000000456",
        "wukong_word-wukong_000789",
    ]
    assert frame.loc[0, "text"] == "GRAND OPENING EXIT"  # the invalid line is dropped
    assert frame.loc[0, "prompt"] == (
        'a storefront sign that reads "GRAND OPENING" above a door marked "EXIT", '
        "best quality, extremely detailed"
    )
    assert frame.loc[1, "text"] == "Welcome to the annua"  # 20 characters
    assert frame.loc[2, "text"] == "欢迎光临"


def test_mario_keywords_and_line_indices() -> None:
    frame = frame_of("mario:DrawBenchText,ChineseDrawText", FIXTURES / "mario")
    assert frame["benchmark_id"].tolist() == ["0", "1", "2", "0"]
    assert frame["text"].tolist() == ["hello world", "open late", "", "happy new year"]


@pytest.mark.slow
def test_textinvision_suite_uses_its_filter_file(textinvision_dir: Path) -> None:
    frame = frame_of("textinvision", textinvision_dir)
    assert len(frame) == 105 and set(frame["prompt_type"]) == {"simple"}
    assert (frame["prompt_id"] == frame["benchmark_id"]).all()


def test_missing_data_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="needs --data DIR"):
        resolve_suite("mario").load_prompts(None)
    with pytest.raises(InputError, match="data folder not found") as missing:
        resolve_suite("mario").load_prompts(tmp_path / "nowhere")
    # where it looked (a config's relative path is the working folder's) and what to give
    assert f"looked in {(tmp_path / 'nowhere').resolve()}" in str(missing.value)
    assert "as --data DIR or the config's suite.data" in str(missing.value)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(InputError, match="hub dataset dnkdnk/CVTG-2K is unreachable") as caught:
        resolve_suite("cvtg").load_prompts(None)
    assert "\n" not in str(caught.value)


# ------------------------------------------------------------------ run config


def test_the_benchmark_reader_is_the_default_and_its_absence_fails_at_load() -> None:
    # MARIO-Eval reads with MaskTextSpotterV3, which glyphbench has no reader for.
    with pytest.raises(InputError) as caught:
        RunConfig.from_mapping({"models": ["control:blank"], "suite": "mario"})
    message = str(caught.value)
    assert "reads with the benchmark's reader 'masktextspotterv3'" in message
    assert "pass --ocr SPEC" in message and "\n" not in message
    # LongText's VLM reader is the default wherever it can run, else the same one-line error.
    try:
        longtext = RunConfig.from_mapping({"models": ["control:blank"], "suite": "longtext"})
    except InputError as exc:
        assert "vlm:Qwen/Qwen2.5-VL-7B-Instruct?preset=longtext" in exc.problem
    else:
        assert longtext.read.reader == "vlm:Qwen/Qwen2.5-VL-7B-Instruct?preset=longtext"
    config = RunConfig.from_mapping(
        {"models": ["control:blank"], "suite": "lex:easy", "ocr": "tesseract"}
    )
    # Unset seeds and images per prompt come from the benchmark's protocol.
    assert (config.generate.seeds, config.generate.images_per_prompt, config.read.reader) == (
        [0],
        1,
        "tesseract",
    )
    assert config.suite is not None and config.suite.spec == "lex:easy"


def test_a_suite_refuses_another_prompt_source_and_a_config_without_suite_keeps_its_hash() -> None:
    with pytest.raises(InputError, match="brings its own prompts"):
        RunConfig.from_mapping(
            {"models": ["control:blank"], "suite": "lex", "ocr": "easyocr", "prompts": "x.csv"}
        )
    plain = RunConfig.from_mapping({"models": ["control:blank"]})
    assert "suite" not in plain.model_dump()
    with pytest.raises(InputError, match="unknown suite 'nope'"):
        RunConfig.from_mapping({"models": ["control:blank"], "suite": "nope", "ocr": "easyocr"})


def test_run_data_without_suite_is_an_error() -> None:
    result = CliRunner().invoke(
        app, ["run", "--models", "control:blank", "--data", "x", "--dry-run"]
    )
    assert result.exit_code != 0
    assert "give --suite NAME too" in str(result.exception)


# ------------------------------------------------------------------ scoring


def test_read_cells_are_lines_for_ocr_readers_and_text_for_vlms() -> None:
    rows = pd.DataFrame({"ocr_text": ["a b", ""], "ocr_pieces": ['["a", "b"]', "[]"]})
    assert read_cells(rows, "lines").tolist() == ["a\nb", ""]
    assert read_cells(rows, "text").tolist() == ["a b", ""]


def test_each_subset_is_scored_by_its_family_and_failed_rows_stay_nan() -> None:
    rows = pd.DataFrame(
        {
            "text": ["OPEN NOW", "你好世界", "OPEN NOW"],
            "ocr_text": ["open now", "你好 世", None],
            "ocr_pieces": ['["open", "now"]', '["你好", "世"]', None],
            "suite_subset": ["en", "zh", "en"],
        }
    )
    scored = add_suite_scores(rows, "longtext", np.array([True, True, False]))
    assert suite_columns(resolve_suite("longtext")) == [
        "longtext_recall",
        "longtext_matched",
        "longtext_total",
    ]
    en = score_pairs(["OPEN NOW"], ["open now"], families=["longtext"]).iloc[0]
    zh = score_pairs(["你好世界"], ["你好 世"], families=["longtext-zh"]).iloc[0]
    assert scored.loc[0, "longtext_recall"] == en["longtext_recall"] == 1.0
    assert scored.loc[1, "longtext_recall"] == zh["longtext_recall"] == 0.75
    assert math.isnan(scored.loc[2, "longtext_recall"])


# ------------------------------------------------------------------ protocol card


def test_the_card_records_deviations_and_what_must_match() -> None:
    config = RunConfig.from_mapping(
        {"models": ["control:blank"], "suite": "cvtg:2", "ocr": "tesseract", "seeds": [1, 2]}
    )
    rows = pd.DataFrame(
        {"ocr_engine": ["tesseract"], "ocr_version": ["5.3"], "width": [512], "height": [512]}
    )
    card = protocol_card(config, prompt_count=3, benchmark_prompts=3, rows=rows)
    assert card["suite"]["name"] == "cvtg" and card["suite"]["benchmark_reader"] == "paddleocr"
    assert card["reader_engines"] == ["tesseract 5.3"]
    assert card["resolution"] == {"benchmark": "1024x1024", "images": ["512x512"]}
    text = " ".join(card["deviations"])
    assert "reader tesseract instead of the benchmark's paddleocr" in text
    assert "seeds [1, 2] instead of [0]" in text and "images of 512x512" in text
    assert "prompts" not in text  # the whole selection ran
    other = {**card, "reader_engines": ["tesseract 5.4"]}
    assert comparable_part(card) != comparable_part(other)
    assert comparable_part(card) == comparable_part({**card, "deviations": []})


def test_a_run_without_suite_has_a_plain_card() -> None:
    card = protocol_card(RunConfig.from_mapping({"models": ["control:blank"]}))
    assert card["suite"] is None and card["deviations"] == []
    assert card["scorer"]["families"] == {"glyphbench": "glyphbench"}


# ------------------------------------------------------------------ published numbers


def test_published_scores_name_real_columns_subsets_and_sources() -> None:
    table = load_published()
    assert len(table) >= 40
    for row in table.to_dict("records"):
        pooled = row["subset"] == "all"  # a pooled benchmark's number over every subset
        spec = row["benchmark"] if pooled else f"{row['benchmark']}:{row['subset']}"
        selection = resolve_suite(spec)
        assert not pooled or selection.suite.pools_subsets
        for family in set(selection.families.values()):
            assert row["metric"] in [m.name for m in METRICS.of([family])]
        assert row["source"] and row["protocol"] and "@" in row["source"]
    flux = table[(table["benchmark"] == "oneig-text") & (table["model"] == "Flux.1-dev")]
    assert flux["value"].tolist() == [0.523]
    assert matches(
        "diffusers:black-forest-labs/FLUX.1-dev", "Flux.1-dev", "black-forest-labs/FLUX.1-dev"
    )
    assert not matches("control:render", "Flux.1-dev", "black-forest-labs/FLUX.1-dev")
    assert matches("AnyText-v1.1", "AnyText-v1.1", "")


# ------------------------------------------------------------------ OneIG grid


def test_oneig_grid_round_trip_drops_black_padding() -> None:
    from PIL import Image

    cells = [Image.new("RGB", (6, 4), colour) for colour in ("red", "white", "blue")]
    grid = tile_grid(cells)  # the fourth cell is OneIG's black padding
    assert grid.size == (12, 8)
    back = split_grid(grid)
    assert [c.getpixel((0, 0)) for c in back] == [(255, 0, 0), (255, 255, 255), (0, 0, 255)]
    assert len(split_grid(tile_grid([Image.new("RGB", (4, 4))]))) == 0


# ------------------------------------------------------------------ example configs

CONFIGS = sorted((REPO_ROOT / "configs" / "suites").glob("*.yaml"))


@pytest.mark.parametrize("path", CONFIGS, ids=[p.stem for p in CONFIGS])
def test_every_example_config_loads_with_the_benchmark_reader_or_says_why_not(path: Path) -> None:
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    selection = resolve_suite(data["suite"]["spec"])
    assert selection.suite.name == path.stem
    if "ocr" not in data:
        try:
            config = RunConfig.from_yaml(path)
        except InputError as exc:  # the benchmark's reader is not registered here
            assert selection.suite.protocol.reader in exc.problem and "--ocr" in exc.problem
            config = RunConfig.from_mapping({**data, "ocr": "easyocr"}, path)
        else:
            assert config.read.reader == selection.suite.protocol.reader
    else:
        config = RunConfig.from_yaml(path)
    assert config.generate.images_per_prompt == selection.suite.protocol.images_per_prompt


def test_the_longtext_example_plans_a_run_offline(
    longtext_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import yaml

    from glyphbench.run.operations import plan_run

    # The controls draw the Chinese subset with a CJK font: one is installed, as far as the
    # plan knows (a machine without one refuses the plan, naming the package).
    monkeypatch.setattr("glyphbench.models.controls.cjk_fonts", lambda: ((tmp_path, 0),))

    data = yaml.safe_load((CONFIGS[0].parent / "longtext.yaml").read_text(encoding="utf-8"))
    data.update(ocr="easyocr", out=str(tmp_path / "run"), limit=2)
    data["suite"]["data"] = str(longtext_dir)
    data["models"] = data["models"][:2]  # the controls: no weights to resolve
    plan = plan_run(RunConfig.from_mapping(data))
    # --limit takes from every subset: 2 English and 2 Chinese prompts.
    assert plan["prompts"]["count"] == 4 and plan["prompts"]["source"] == "suite:longtext"
    assert plan["protocol"]["prompts"] == {"selected": 4, "benchmark": 320}
    assert [m["jobs"] for m in plan["models"]] == [16, 16]
