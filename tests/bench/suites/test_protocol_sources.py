"""Point 2: protocol defaults as the benchmarks' and model cards' sources state them.

Each test pins one fact read from a source (cited in docs/suites.md and docs/models.md):
OneIG's token limit rule, the readers and versions the benchmarks pin, each benchmark's
seeds under ``--seed-policy``, OneIG's image path and the model families' defaults.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from PIL import Image, ImageDraw

from glyphbench.core.errors import InputError
from glyphbench.core.seeds import image_seed
from glyphbench.models.families import FAMILIES, detect_family, guess_family_from_id
from glyphbench.run.config import RunConfig
from glyphbench.run.image_jobs import model_jobs
from glyphbench.suites.base import ReaderPin, resolve_suite
from glyphbench.suites.oneig import oneig_image_path, split_grid, tile_grid
from glyphbench.suites.protocol import pin_problems, protocol_card
from glyphbench.suites.scores import add_suite_scores, read_cells
from tests.helpers.paths import DATA

FIXTURES = DATA / "suites"
CVTG_DRY_RUN = [
    "run",
    *("--models", "control:blank", "--suite", "cvtg:2", "--data", str(FIXTURES / "cvtg")),
    *("--ocr", "tesseract", "--dry-run", "--json"),
]


def _config(suite: str, **extra: Any) -> RunConfig:
    return RunConfig.from_mapping(
        {"models": ["control:blank"], "suite": suite, "ocr": "tesseract", **extra}
    )


# ------------------------------------------------------------------ OneIG's token limit


def test_oneig_rows_carry_the_raw_cells_word_count() -> None:
    frame = resolve_suite("oneig-text").load_prompts(FIXTURES / "oneig").frame
    raw = pd.read_csv(FIXTURES / "oneig" / "scripts" / "text" / "text_content.csv", dtype=str)
    en = frame[frame["suite_subset"] == "en"]
    # text_score.py l. 51: len(text_gt.split()) on the raw text_content cell.
    assert en["benchmark_words"].tolist() == [len(c.split()) for c in raw["text_content"]]


def test_the_longer_answer_is_read_only_past_60_words_and_only_from_the_vlm() -> None:
    rows = pd.DataFrame(
        {
            "ocr_text": ["short", "short", "short", "boxes"],
            "ocr_pieces": [
                json.dumps(["short", "short and long"]),
                json.dumps(["short", "short and long"]),
                json.dumps(["short"]),
                json.dumps(["boxes", "more"]),
            ],
            "ocr_engine": ["vlm", "vlm", "vlm", "paddleocr"],
            "benchmark_words": [61, 60, 99, 99],
        }
    )
    cells = read_cells(rows, "text", 60).tolist()
    assert cells == ["short and long", "short", "short", "boxes"]
    assert read_cells(rows, "text").tolist() == ["short", "short", "short", "boxes"]


def test_oneig_scores_a_long_truth_against_the_256_token_answer() -> None:
    truth = " ".join(f"w{i}" for i in range(61))
    rows = pd.DataFrame(
        {
            "text": [truth, truth],
            "ocr_text": ["w0 w1", "w0 w1"],
            "ocr_pieces": [json.dumps(["w0 w1", truth])] * 2,
            "ocr_engine": ["vlm", "vlm"],
            "benchmark_words": [61, 60],
            "suite_subset": ["en", "en"],
        }
    )
    scored = add_suite_scores(rows, "oneig-text", pd.Series([True, True]).to_numpy())
    assert scored["oneig_ed"].tolist()[0] == 0.0  # the 256-token answer is the whole truth
    assert scored["oneig_ed"].tolist()[1] > 0.0  # 60 words: the 128-token answer


def test_vlm_presets_fix_the_benchmarks_token_limits_and_batching() -> None:
    pytest.importorskip("pydantic")
    from glyphbench.readers.vlm import VLMOptions

    oneig = VLMOptions(preset="oneig")
    assert oneig.resolved()[1] == 128 and oneig.long_answer() == 256
    assert VLMOptions(preset="oneig", max_new_tokens=200).long_answer() is None
    assert VLMOptions(preset="longtext").batch() == 1  # X-Omni: one image per call
    assert VLMOptions(preset="longtext", batch_size=3).batch() == 3
    assert VLMOptions().batch() == 4 and VLMOptions().long_answer() is None


@pytest.mark.slow  # ~50 s on a shared 2-core CPU: 256 greedy tokens of a tiny random VLM
def test_the_oneig_preset_keeps_both_answers_of_one_greedy_generation(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    pytest.importorskip("transformers")
    from glyphbench.readers import get_reader
    from glyphbench.readers.tiny_vlm import build_tiny_qwen_vl

    folder = build_tiny_qwen_vl(tmp_path_factory.mktemp("tiny-vlm"))
    sign = Image.new("RGB", (96, 64), "white")
    ImageDraw.Draw(sign).text((8, 20), "OPEN", fill="black")
    (both,) = get_reader(f"vlm:{folder}?preset=oneig").read([sign])
    (short,) = get_reader(f"vlm:{folder}?preset=oneig&max_new_tokens=128").read([sign])
    (long,) = get_reader(f"vlm:{folder}?preset=oneig&max_new_tokens=256").read([sign])
    assert both.pieces == [short.pieces[0], long.pieces[0]]
    assert both.text == short.text


# ------------------------------------------------------------------ readers as pinned


def _engine_rows(version: str, engine: str = "paddleocr") -> pd.DataFrame:
    return pd.DataFrame(
        {"ocr_engine": [engine], "ocr_version": [version], "width": [1024], "height": [1024]}
    )


def test_cvtg_flags_a_paddleocr_release_other_than_2_10() -> None:
    config = RunConfig.from_mapping(
        {"models": ["control:blank"], "suite": "cvtg:2", "ocr": "paddleocr"}
    )
    good = protocol_card(config, rows=_engine_rows("paddleocr 2.10.0; lang en; package default"))
    assert not [d for d in good["deviations"] if "pins" in d]
    card = protocol_card(config, rows=_engine_rows("paddleocr 3.0.3; lang en; package default"))
    assert any("paddleocr 3.0.3 where the benchmark pins 2.10" in d for d in card["deviations"])
    assert card["reader"] == good["reader"]  # the spec alone would not tell them apart


def test_lex_flags_a_recogniser_other_than_pp_ocrv3() -> None:
    assert resolve_suite("lex").suite.protocol.reader == "paddleocr?ocr_version=PP-OCRv3"
    config = RunConfig.from_mapping(
        {"models": ["control:blank"], "suite": "lex:easy", "ocr": "paddleocr?ocr_version=PP-OCRv3"}
    )
    v3 = protocol_card(config, rows=_engine_rows("paddleocr 2.10.0; lang en; PP-OCRv3"))
    assert not [d for d in v3["deviations"] if "reader model" in d]
    v5 = protocol_card(config, rows=_engine_rows("paddleocr 3.0.3; lang en; PP-OCRv5"))
    assert any("reads with PP-OCRv3" in d for d in v5["deviations"])


def test_anytext_names_modelscopes_recogniser_and_flags_paddleocr() -> None:
    protocol = resolve_suite("anytext").suite.protocol
    assert "damo/cv_convnextTiny_ocr-recognition-general_damo" in protocol.reader_note
    assert "PP-OCR supplies only the dictionary" in protocol.reader_note
    config = RunConfig.from_mapping(
        {"models": ["control:blank"], "suite": "anytext", "ocr": "paddleocr"}
    )
    card = protocol_card(config, rows=_engine_rows("paddleocr 2.10.0; lang en; PP-OCRv4"))
    assert any("damo/cv_convnextTiny" in d for d in card["deviations"])


def test_vlm_suites_record_the_transformers_pin_and_flag_another_release() -> None:
    pins = resolve_suite("longtext").suite.protocol.reader_pins
    assert [(p.package, p.version) for p in pins if p.version] == [("transformers", "4.52.0")]
    oneig = resolve_suite("oneig-text").suite.protocol.reader_pins
    assert [(p.package, p.version) for p in oneig if p.version] == [("transformers", "4.50.0")]
    engine = "vlm Qwen/Qwen2.5-VL-7B-Instruct; transformers 4.57.1; bfloat16; cuda"
    problems = pin_problems(pins, [f"vlm {engine}"], "vlm")
    assert problems == [
        f"reader transformers 4.57.1 where the benchmark pins 4.52.0 ({pins[1].source})"
    ]
    assert pin_problems(pins, [engine.replace("4.57.1", "4.52.0")], "vlm") == []
    other_model = engine.replace("Qwen2.5-VL-7B", "Qwen2.5-VL-3B").replace("4.57.1", "4.52.0")
    assert "reader model" in pin_problems(pins, [other_model], "vlm")[0]


def test_without_readings_the_card_compares_the_installed_package(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from glyphbench.suites import protocol

    pin = ReaderPin("transformers", "4.52.0", source="README.md:91")
    monkeypatch.setattr(protocol, "installed_version", lambda package: "4.57.1")
    assert pin_problems([pin], [], "vlm") == [
        "installed: transformers 4.57.1 where the benchmark pins 4.52.0 (README.md:91)"
    ]
    monkeypatch.setattr(protocol, "installed_version", lambda package: "4.52.0")
    assert pin_problems([pin], [], "vlm") == []
    monkeypatch.setattr(protocol, "installed_version", lambda package: None)
    assert pin_problems([pin], [], "vlm") == []  # not installed: nothing to compare


def test_the_card_lists_the_pins_with_their_sources() -> None:
    config = RunConfig.from_mapping(
        {"models": ["control:blank"], "suite": "cvtg:2", "ocr": "paddleocr"}
    )
    (pin,) = protocol_card(config)["reader_pins"]
    assert pin["package"] == "paddleocr" and pin["version"] == "2.10"
    assert "install_paddle_deps.sh" in pin["source"] and "installed" in pin


# ------------------------------------------------------------------ seeds


@pytest.mark.parametrize(
    ("suite", "seeds", "rule"),
    [
        ("cvtg:2", [0], "fixed"),
        ("lex:easy", [0], "fixed"),
        ("anytext:laion_word", [100], "batch"),
        ("longtext:en", [0], "model"),
        ("oneig-text:en", [0], "model"),
        ("mario:DrawBenchText", [0], "batch"),
    ],
)
def test_each_suite_seeds_as_its_benchmark(suite: str, seeds: list[int], rule: str) -> None:
    config = _config(suite)
    assert config.generate.seed_policy == "benchmark" and config.generate.seeds == seeds
    assert resolve_suite(suite).suite.protocol.seed_rule == rule
    frame = pd.DataFrame({"prompt_id": ["p-1", "p-2"]})
    jobs = model_jobs(config.models[0], frame, config.generate, config.suite)
    expected = [
        job.seed
        if rule == "fixed" and job.sample_index == 0
        else image_seed(job.seed, job.prompt_id, job.sample_index)
        for job in jobs
    ]
    assert len(jobs) == 2 * resolve_suite(suite).suite.protocol.images_per_prompt
    assert [job.image_seed for job in jobs] == expected


def test_glyphbench_policy_derives_each_seed_and_the_card_says_so() -> None:
    config = _config("cvtg:2", seed_policy="glyphbench")
    frame = pd.DataFrame({"prompt_id": ["p-1"]})
    (job,) = model_jobs(config.models[0], frame, config.generate, config.suite)
    assert job.image_seed == image_seed(0, "p-1", 0) != 0
    card = protocol_card(config)
    assert card["seed_policy"]["policy"] == "glyphbench"
    assert any("--seed-policy glyphbench" in d for d in card["deviations"])
    default = protocol_card(_config("cvtg:2"))
    assert not any("seed-policy" in d for d in default["deviations"])
    assert "eval.py:26" in default["seed_policy"]["source"]


def test_anytexts_one_batch_draw_is_always_a_recorded_deviation() -> None:
    card = protocol_card(_config("anytext:laion_word"))
    assert any("one batch" in d and "anytext_singleGPU.py:31" in d for d in card["deviations"])


def test_seed_policy_is_validated_and_needs_a_suite_for_benchmark() -> None:
    with pytest.raises(InputError, match="seed_policy"):
        _config("cvtg:2", seed_policy="paper")
    with pytest.raises(InputError, match="needs a suite"):
        RunConfig.from_mapping({"models": ["control:blank"], "seed_policy": "benchmark"})
    plain = RunConfig.from_mapping({"models": ["control:blank"], "seed_policy": "glyphbench"})
    assert plain.generate.seed_policy == "glyphbench"
    unset = RunConfig.from_mapping({"models": ["control:blank"]})
    assert "seed_policy" not in unset.model_dump()  # older configs keep their hash
    yaml_config = RunConfig.from_yaml_text(
        "models: [control:blank]\nsuite: cvtg:2\nocr: tesseract\nseed_policy: glyphbench\n",
        Path("run.yaml"),
    )
    assert yaml_config.generate.seed_policy == "glyphbench"


def test_the_cli_flag_reaches_the_config_and_a_bad_value_is_one_line() -> None:
    from typer.testing import CliRunner

    from glyphbench.cli.root import app

    runner = CliRunner()
    bad = runner.invoke(app, ["run", "--models", "control:blank", "--seed-policy", "paper"])
    assert isinstance(bad.exception, InputError)  # the console script prints it and exits 2
    assert "--seed-policy must be benchmark or glyphbench, got 'paper'" in str(bad.exception)
    run_ids = {}
    for policy in ("benchmark", "glyphbench"):
        plan = runner.invoke(
            app,
            [*CVTG_DRY_RUN, "--seed-policy", policy],
        )
        assert plan.exit_code == 0, plan.output
        run_ids[policy] = json.loads(plan.output)["run_id"]
    # The policy decides the images, so it is part of the run's identity.
    assert run_ids["benchmark"] != run_ids["glyphbench"]


# ------------------------------------------------------------------ OneIG's image path


def _noise(seed: int, size: tuple[int, int] = (48, 32)) -> Image.Image:
    image = Image.effect_noise(size, 30 + seed).convert("RGB")
    ImageDraw.Draw(image).text((2, 8), f"T{seed}", fill=(255, 255, 0))
    return image


def test_oneig_image_path_goes_through_webp_then_jpeg_75() -> None:
    images = [_noise(i) for i in range(4)]
    cells = oneig_image_path(images)
    # The same path built by hand with the defaults spelled out (WebP 80, JPEG 75).
    grid = io.BytesIO()
    tile_grid(images).save(grid, format="WEBP", quality=80)
    expected = []
    for cell in split_grid(Image.open(grid).convert("RGB")):
        jpeg = io.BytesIO()
        cell.save(jpeg, format="JPEG", quality=75)
        expected.append(Image.open(jpeg).convert("RGB"))
    assert [c.size for c in cells] == [(48, 32)] * 4
    assert [c.tobytes() for c in cells] == [e.tobytes() for e in expected]
    assert cells[0].tobytes() != images[0].tobytes()  # lossy: not the image as generated
    assert all(cell.format == "JPEG" for cell in cells)


def test_oneig_image_path_drops_the_black_padding_of_a_short_grid() -> None:
    cells = oneig_image_path([_noise(i) for i in range(3)])
    assert len(cells) in (3, 4)  # lossy WebP may lift a black cell off exact zero
    black = Image.new("RGB", (32, 32))
    assert split_grid(tile_grid([black, _noise(1, (32, 32))]), 2, 2)[0].size == (32, 32)


# ------------------------------------------------------------------ model families


def test_families_follow_their_cards() -> None:
    assert (FAMILIES["qwen-image-2.1"].height, FAMILIES["qwen-image-2.1"].width) == (2048, 2048)
    longcat = FAMILIES["longcat-image"]
    assert longcat.guidance == 4.0 and (longcat.height, longcat.width) == (768, 1344)
    (rewrite,) = longcat.quirks
    assert rewrite.name == "rewrite" and rewrite.default is True
    assert rewrite.call_kwargs(True) == {"enable_prompt_rewrite": True}
    assert FAMILIES["hunyuanimage-2.1"].scheduler_shift == 5.0
    assert FAMILIES["hunyuanimage-2.1-distilled"].scheduler_shift == 4.0


def test_qwen_image_2512_has_its_own_negative_prompt() -> None:
    q2512, qwen = FAMILIES["qwen-image-2512"], FAMILIES["qwen-image"]
    assert q2512.negative_prompt != qwen.negative_prompt == " "
    assert q2512.negative_prompt and q2512.negative_prompt.startswith("低分辨率")
    assert q2512.negative_prompt.endswith("文字模糊，扭曲。")  # noqa: RUF001
    assert not q2512.quirks  # the 2512 example appends no "positive magic"
    assert (q2512.height, q2512.steps, q2512.guidance) == (1328, 50, 4.0)
    assert guess_family_from_id("Qwen/Qwen-Image-2512") == "qwen-image-2512"
    assert detect_family("QwenImagePipeline", "Qwen/Qwen-Image-2512") == "qwen-image-2512"
    assert detect_family("QwenImagePipeline", "Qwen/Qwen-Image") == "qwen-image"


def test_hidream_uses_its_inference_scripts_schedulers() -> None:
    full, dev, fast = (FAMILIES[f"hidream-i1-{v}"] for v in ("full", "dev", "fast"))
    assert full.scheduler == "UniPCMultistepScheduler" and full.scheduler_shift == 3.0
    assert full.scheduler_config["use_flow_sigmas"] is True
    for family, shift in ((dev, 6.0), (fast, 3.0)):
        assert family.scheduler == "FlowMatchEulerDiscreteScheduler"
        assert family.scheduler_config["stochastic_sampling"] is True
        assert family.scheduler_shift == shift


@pytest.mark.slow
def test_the_scheduler_swap_keeps_the_shipped_config_and_takes_the_shift() -> None:
    pytest.importorskip("diffusers")
    from types import SimpleNamespace

    from diffusers import FlowMatchEulerDiscreteScheduler

    from glyphbench.models.diffusers_loading import set_scheduler, set_scheduler_shift

    for name in ("full", "dev"):
        family = FAMILIES[f"hidream-i1-{name}"]
        pipe = SimpleNamespace(scheduler=FlowMatchEulerDiscreteScheduler(shift=1.0))  # type: ignore[no-untyped-call]
        assert family.scheduler is not None and family.scheduler_shift is not None
        set_scheduler(pipe, family.scheduler, family.scheduler_config)
        set_scheduler_shift(pipe, family.scheduler_shift)
        assert type(pipe.scheduler).__name__ == family.scheduler
        config = pipe.scheduler.config
        key = "flow_shift" if name == "full" else "shift"
        assert config[key] == family.scheduler_shift
        assert all(config[k] == v for k, v in family.scheduler_config.items())


def test_z_image_turbo_steps_follow_the_installed_pipeline(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    import importlib.util
    from types import SimpleNamespace

    from glyphbench.models.families import zimage

    folder = tmp_path / "diffusers" / "pipelines" / "z_image"
    folder.mkdir(parents=True)
    source = folder / "pipeline_z_image.py"
    fake = SimpleNamespace(origin=str(tmp_path / "diffusers" / "__init__.py"))
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: fake)
    source.write_text("        self.scheduler.sigma_min = 0.0\n")  # diffusers 0.36-0.38
    assert zimage.turbo_steps() == 9
    source.write_text("def get_default_z_image_sigmas(num_inference_steps):\n")  # 0.39+
    assert zimage.turbo_steps() == 8
    source.unlink()
    import importlib.metadata

    monkeypatch.setattr(importlib.metadata, "version", lambda name: "0.38.0")
    assert zimage.turbo_steps() == 9
    monkeypatch.setattr(importlib.metadata, "version", lambda name: "0.39.1")
    assert zimage.turbo_steps() == 8


@pytest.mark.slow
def test_z_image_turbo_default_matches_this_diffusers() -> None:
    pytest.importorskip("diffusers")
    from diffusers.pipelines.z_image import pipeline_z_image

    new = hasattr(pipeline_z_image, "get_default_z_image_sigmas")
    assert FAMILIES["z-image-turbo"].steps == (8 if new else 9)
