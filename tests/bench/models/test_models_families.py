"""The 2026 diffusers families: table, detection, quirks, loading options, tiny pipelines.

Every family with a ``tiny`` builder gets a tiny random pipeline built from
configs here (tokenizers included: nothing comes from a hub), saved with
``save_pretrained`` and loaded back through ``diffusers:<folder>``, the path a
hub checkpoint takes, then asked for one image with the family's own call
arguments. ``ignored_settings == []`` checks that the pipeline's ``__call__``
accepts every argument the family passes, so a diffusers release that renames
one fails here.

Two tiny builds are slow whatever their size, because their pipelines fix the
work: Kandinsky 5 always draws 1024 px (a fixed resolution list, ~13 s here) and
HiDream always an image of 128x128 latents (it rescales every size to that area,
~20 s here). Those are marked ``slow`` (SLOW_TINY). GLM-Image's autoregressive
model always samples a 16x16 preview grid first, but that takes ~5 s: default
suite. Measured on a shared 2-core CPU.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from glyphbench.core.errors import InputError
from glyphbench.core.registry import PLUGINS
from glyphbench.models import ImageRequest, get_model
from glyphbench.models.diffusers_adapter import DiffusersModel, DiffusersOptions
from glyphbench.models.diffusers_loading import QUANTIZE, quantization_plan
from glyphbench.models.families import (
    FAMILIES,
    GUIDANCE_KEYWORDS,
    UNKNOWN,
    detect_family,
    guess_family_from_id,
)
from glyphbench.models.families.hidream import TINY_LLAMA_FOLDER
from glyphbench.run.config import RunConfig
from tests.helpers.paths import REPO_ROOT

#: The families the study asks for: family -> (pipeline class, a hub id of it).
ISSUE_FAMILIES = {
    "qwen-image": ("QwenImagePipeline", "Qwen/Qwen-Image"),
    "qwen-image-2.1": ("QwenImage21Pipeline", "Qwen/Qwen-Image-2.1"),
    "flux2-dev": ("Flux2Pipeline", "black-forest-labs/FLUX.2-dev"),
    "flux2-klein": ("Flux2KleinPipeline", "black-forest-labs/FLUX.2-klein-4B"),
    "flux2-klein-base": ("Flux2KleinPipeline", "black-forest-labs/FLUX.2-klein-base-9B"),
    "z-image-turbo": ("ZImagePipeline", "Tongyi-MAI/Z-Image-Turbo"),
    "z-image": ("ZImagePipeline", "Tongyi-MAI/Z-Image"),
    "hidream-i1-full": ("HiDreamImagePipeline", "HiDream-ai/HiDream-I1-Full"),
    "hidream-i1-dev": ("HiDreamImagePipeline", "HiDream-ai/HiDream-I1-Dev"),
    "hidream-i1-fast": ("HiDreamImagePipeline", "HiDream-ai/HiDream-I1-Fast"),
    "cogview4": ("CogView4Pipeline", "zai-org/CogView4-6B"),
    "lumina2": ("Lumina2Pipeline", "Alpha-VLLM/Lumina-Image-2.0"),
    "hunyuanimage-2.1": (
        "HunyuanImagePipeline",
        "hunyuanvideo-community/HunyuanImage-2.1-Diffusers",
    ),
    "hunyuanimage-2.1-distilled": (
        "HunyuanImagePipeline",
        "hunyuanvideo-community/HunyuanImage-2.1-Distilled-Diffusers",
    ),
    "ovis-image": ("OvisImagePipeline", "AIDC-AI/Ovis-Image-7B"),
    "glm-image": ("GlmImagePipeline", "zai-org/GLM-Image"),
    "longcat-image": ("LongCatImagePipeline", "meituan-longcat/LongCat-Image"),
    "chroma": ("ChromaPipeline", "lodestones/Chroma1-HD"),
    "kolors": ("KolorsPipeline", "Kwai-Kolors/Kolors-diffusers"),
    "sana-sprint": (
        "SanaSprintPipeline",
        "Efficient-Large-Model/Sana_Sprint_1.6B_1024px_diffusers",
    ),
    "kandinsky5": ("Kandinsky5T2IPipeline", "kandinskylab/Kandinsky-5.0-T2I-Lite-sft-Diffusers"),
    "bria-fibo": ("BriaFiboPipeline", "briaai/FIBO"),
}

#: Families whose tiny pipeline takes well over 10 s on a small CPU (see module docstring).
SLOW_TINY = {"hidream-i1-full", "kandinsky5"}

#: Families sharing a builder with one of the above: tested through it.
SHARED_TINY = {"z-image", "hidream-i1-dev", "hidream-i1-fast"}

#: Families without a tiny build of their own, and why (checked below).
NO_TINY = {
    "hunyuanimage-2.1-distilled": "same pipeline class as hunyuanimage-2.1 (guidance embedding)",
}

TINY_FAMILIES = [name for name in ISSUE_FAMILIES if name not in NO_TINY and name not in SHARED_TINY]

PROMPT = 'a shop sign that says "OPEN"'  # quoted: HunyuanImage also reads it with ByT5


def _tiny_params() -> list[Any]:
    return [
        pytest.param(name, marks=pytest.mark.slow) if name in SLOW_TINY else name
        for name in TINY_FAMILIES
    ]


@pytest.fixture(scope="module")
def tiny_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("families")


def _build(root: Path, family: str) -> Path:
    """Build the family's tiny pipeline in a folder named after it (the id picks the family)."""
    builder = FAMILIES[family].tiny
    assert builder is not None
    return builder(root / family)


def _spec(folder: Path, family: str, **options: Any) -> str:
    query = {"device": "cpu", **options}
    if family.startswith("hidream"):
        query.setdefault("text_encoder_4", str(folder / TINY_LLAMA_FOLDER))
    return f"diffusers:{folder}?" + "&".join(f"{k}={v}" for k, v in query.items())


# --------------------------------------------------------------------------- table


def test_every_issue_family_is_registered_with_an_installed_pipeline_class() -> None:
    import diffusers

    for name, (class_name, _hub_id) in ISSUE_FAMILIES.items():
        family = FAMILIES[name]
        assert class_name in family.pipeline_classes, name
        assert hasattr(diffusers, class_name), f"diffusers has no {class_name}"


@pytest.mark.parametrize("name", sorted(ISSUE_FAMILIES))
def test_family_records_are_complete(name: str) -> None:
    family = FAMILIES[name]
    assert family.height and family.width and family.steps
    assert family.guidance is not None and family.guidance >= 0
    assert family.dtype in ("bfloat16", "float16")
    assert family.guidance_keyword in GUIDANCE_KEYWORDS
    assert family.sources.startswith("[") and family.notes
    assert family.parameters and family.parameters_billion > 0
    assert family.id_patterns
    assert (family.tiny is not None) or name in NO_TINY


def test_published_values_spot_checks() -> None:
    qwen = FAMILIES["qwen-image"]
    assert (qwen.height, qwen.steps, qwen.guidance) == (1328, 50, 4.0)
    assert qwen.guidance_keyword == "true_cfg_scale" and qwen.negative_prompt == " "
    assert (FAMILIES["z-image-turbo"].steps, FAMILIES["z-image-turbo"].guidance) == (8, 0.0)
    assert (FAMILIES["flux2-klein"].steps, FAMILIES["flux2-klein"].guidance) == (4, 1.0)
    assert FAMILIES["hunyuanimage-2.1"].height == 2048
    assert FAMILIES["hunyuanimage-2.1"].guidance_keyword == "guider"
    assert FAMILIES["lumina2"].call_kwargs == {"cfg_trunc_ratio": 0.25, "cfg_normalization": True}
    assert FAMILIES["hidream-i1-dev"].scheduler_shift == 6.0


@pytest.mark.parametrize("name", sorted(ISSUE_FAMILIES))
def test_hub_ids_resolve_to_their_family(name: str) -> None:
    class_name, hub_id = ISSUE_FAMILIES[name]
    assert guess_family_from_id(hub_id) == name
    assert detect_family({"_class_name": class_name}, hub_id) == name


def test_new_patterns_do_not_steal_older_families() -> None:
    assert guess_family_from_id("black-forest-labs/FLUX.1-dev") == "flux-dev"
    assert guess_family_from_id("black-forest-labs/FLUX.1-schnell") == "flux-schnell"
    assert guess_family_from_id("Efficient-Large-Model/Sana_1600M_1024px_diffusers") == "sana"
    assert guess_family_from_id("kandinsky-community/kandinsky-3") == "kandinsky3"
    assert guess_family_from_id("kandinsky-community/kandinsky-2-2-decoder") == "kandinsky22"


def test_model_index_keys_tell_klein_distilled_from_base() -> None:
    index = {"_class_name": "Flux2KleinPipeline"}
    assert detect_family({**index, "is_distilled": True}, "/models/x") == "flux2-klein"
    assert detect_family({**index, "is_distilled": False}, "/models/x") == "flux2-klein-base"


@pytest.mark.slow
def test_list_models_shows_every_family() -> None:
    """``glyphbench list models`` names every family in the diffusers plug-in's summary."""
    code = (
        "from typer.testing import CliRunner\n"
        "from glyphbench.cli.root import app\n"
        "print(CliRunner().invoke(app, ['list', 'models']).stdout)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, check=True
    ).stdout
    for name in FAMILIES:
        if name != UNKNOWN:
            assert name in out, name
    summary = PLUGINS.get("models", "diffusers").summary
    assert all(name in summary for name in ISSUE_FAMILIES)


# --------------------------------------------------------------------------- tiny pipelines


@pytest.mark.slow
@pytest.mark.parametrize("name", _tiny_params())
def test_tiny_pipeline_loads_and_generates(tiny_root: Path, name: str) -> None:
    folder = _build(tiny_root, name)
    model = get_model(_spec(folder, name))
    assert isinstance(model, DiffusersModel)
    before = model.describe()
    assert before["family"] == name and before["family_source"] == "model_index.json"
    assert before["tiny_random"] is True
    (image,) = model.generate([ImageRequest(PROMPT, "OPEN", 3)])
    info = model.describe()
    assert info["pipeline_class"] == ISSUE_FAMILIES[name][0]
    # The pipeline took every argument the family passes (guidance keyword, quirks, extras).
    assert info["ignored_settings"] == []
    expected = (info["settings"]["width"], info["settings"]["height"])
    if name == "kandinsky5":
        expected = (1024, 1024)  # its pipeline snaps to a fixed list of sizes
    elif name.startswith("hidream"):
        expected = (256, 256)  # rescaled to the pipeline's fixed area (128 latents)
    assert image.size == expected
    pixels = np.asarray(image, dtype=np.float32)
    assert pixels.std() > 1.0, "a blank image: the pipeline produced NaN or constant output"
    json.dumps(info)


def test_tiny_builds_are_reused(tiny_root: Path) -> None:
    folder = _build(tiny_root, "lumina2")
    stamp = (folder / "model_index.json").stat().st_mtime_ns
    assert _build(tiny_root, "lumina2") == folder
    assert (folder / "model_index.json").stat().st_mtime_ns == stamp


def test_shared_builder_families_are_detected_by_folder_name(tiny_root: Path) -> None:
    """z-image and z-image-turbo share one builder; the folder's name picks the family."""
    turbo = get_model(_spec(_build(tiny_root, "z-image-turbo"), "z-image-turbo"))
    base_folder = FAMILIES["z-image"].tiny(tiny_root / "z-image")  # type: ignore[misc]
    base = get_model(_spec(base_folder, "z-image"))
    assert turbo.describe()["family"] == "z-image-turbo"
    assert base.describe()["family"] == "z-image"
    assert base.describe()["call_kwargs"] == {"cfg_normalization": False}
    (image,) = base.generate([ImageRequest(PROMPT, "OPEN", 1)])
    assert base.describe()["ignored_settings"] == []
    assert np.asarray(image, dtype=np.float32).std() > 1.0


# --------------------------------------------------------------------------- quirks


def test_magic_suffix_is_off_by_default_and_recorded_when_on(tiny_root: Path) -> None:
    folder = _build(tiny_root, "qwen-image")
    plain = get_model(_spec(folder, "qwen-image"))
    magic = get_model(_spec(folder, "qwen-image", quirks="magic"))
    assert isinstance(plain, DiffusersModel) and isinstance(magic, DiffusersModel)
    requests = [ImageRequest("a sign saying OPEN", "OPEN", 1), ImageRequest("写着开门", "开门", 2)]
    assert plain.prompts_for(requests) == ["a sign saying OPEN", "写着开门"]
    assert magic.prompts_for(requests) == [
        "a sign saying OPEN, Ultra HD, 4K, cinematic composition.",
        "写着开门, 超清，4K，电影级构图.",  # noqa: RUF001 - the card's Chinese suffix
    ]
    assert plain.describe()["quirks"] == {"magic": False}
    assert magic.describe()["quirks"] == {"magic": True}
    # Real CFG: the card's " " negative prompt reaches the pipeline as true_cfg_scale's partner.
    assert magic.describe()["settings"]["negative_prompt"] == " "
    assert magic.describe()["guidance_keyword"] == "true_cfg_scale"


def test_quirks_switch_pipeline_arguments(tiny_root: Path) -> None:
    folder = _build(tiny_root, "longcat-image")
    default = get_model(_spec(folder, "longcat-image"))
    plain = get_model(_spec(folder, "longcat-image", quirks="-rewrite"))
    assert isinstance(default, DiffusersModel) and isinstance(plain, DiffusersModel)
    default.load()
    # The card's example enables the rewrite (LongCat-Image README.md:164): on by default.
    assert default._call_kwargs(default._pipe, 1)["enable_prompt_rewrite"] is True
    assert plain._call_kwargs(default._pipe, 1)["enable_prompt_rewrite"] is False


def test_default_on_quirk_can_be_switched_off(tiny_root: Path) -> None:
    folder = _build(tiny_root, "sana-sprint")
    model = get_model(_spec(folder, "sana-sprint", quirks="-chi"))
    assert model.describe()["quirks"] == {"chi": False}
    (image,) = model.generate([ImageRequest(PROMPT, "OPEN", 1)])
    assert model.describe()["ignored_settings"] == []
    assert image.size == (32, 32)


def test_json_quirk_wraps_the_prompt() -> None:
    model = get_model("diffusers:briaai/FIBO?quirks=json")
    assert isinstance(model, DiffusersModel)
    (prompt,) = model.prompts_for([ImageRequest('a sign saying "OPEN"', "OPEN", 1)])
    assert json.loads(prompt) == {"short_description": 'a sign saying "OPEN"'}


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("diffusers:Qwen/Qwen-Image?quirks=sparkle", "unknown quirk 'sparkle'"),
        ("diffusers:Tongyi-MAI/Z-Image-Turbo?quirks=magic", "not one of family z-image-turbo"),
    ],
)
def test_bad_quirks_are_one_line_errors(spec: str, message: str) -> None:
    with pytest.raises(InputError, match=message):
        get_model(spec)


# --------------------------------------------------------------------------- loading options


def test_loading_options_are_recorded_before_loading() -> None:
    model = get_model(
        "diffusers:Qwen/Qwen-Image?offload=sequential&compile=true&compile_mode=max-autotune"
    )
    info = model.describe()
    assert info["offload"] == "sequential" and info["enable_cpu_offload"] is False
    assert info["compile"] is True and info["compile_mode"] == "max-autotune"
    assert info["quantize"] == "none" and info["quantize_components"] == []
    legacy = get_model("diffusers:Qwen/Qwen-Image?enable_cpu_offload=true").describe()
    assert legacy["offload"] == "model" and legacy["enable_cpu_offload"] is True


@pytest.mark.parametrize("quantize", sorted(QUANTIZE))
def test_quantize_without_its_package_fails_config_validation(quantize: str) -> None:
    package = QUANTIZE[quantize][0]
    try:
        __import__(package)
    except ImportError:
        pass
    else:  # pragma: no cover - depends on this machine
        pytest.skip(f"{package} is installed here")
    with pytest.raises(InputError, match=f"needs the python package '{package}'"):
        RunConfig.from_mapping(
            {"models": [{"spec": "diffusers:Qwen/Qwen-Image", "options": {"quantize": quantize}}]}
        )


def test_quantization_plan_picks_each_components_library() -> None:
    index = {
        "_class_name": "QwenImagePipeline",
        "transformer": ["diffusers", "QwenImageTransformer2DModel"],
        "text_encoder": ["transformers", "Qwen2_5_VLForConditionalGeneration"],
        "vae": ["diffusers", "AutoencoderKLQwenImage"],
    }
    default = quantization_plan("bnb-4bit", [], index)
    assert [(s.component, s.library, s.backend) for s in default] == [
        ("transformer", "diffusers", "bitsandbytes")
    ]
    assert default[0].kwargs["bnb_4bit_quant_type"] == "nf4"
    both = quantization_plan("torchao-int8wo", ["transformer", "text_encoder"], index)
    assert [s.library for s in both] == ["diffusers", "transformers"]
    with pytest.raises(ValueError, match="cannot quantise 'text_encoder_2'"):
        quantization_plan("bnb-8bit", ["text_encoder_2"], index)
    unet = {"unet": ["diffusers", "UNet2DConditionModel"]}
    assert quantization_plan("bnb-8bit", [], unet)[0].component == "unet"


def test_quantize_choices_match_the_options_type() -> None:
    annotation = str(DiffusersOptions.model_fields["quantize"].annotation)
    assert all(f"'{name}'" in annotation for name in QUANTIZE)


def test_compile_and_shift_are_applied_on_load(
    tiny_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import torch

    compiled: list[Any] = []

    def fake_compile(module: Any, **options: Any) -> Any:
        compiled.append((type(module).__name__, options))
        return module  # torch.compile needs a C compiler and minutes; the wiring is tested here

    monkeypatch.setattr(torch, "compile", fake_compile)
    folder = _build(tiny_root, "z-image-turbo")
    model = get_model(_spec(folder, "z-image-turbo", compile="true", shift=5.5))
    assert isinstance(model, DiffusersModel)
    model.generate([ImageRequest(PROMPT, "OPEN", 1)])
    assert compiled == [("ZImageTransformer2DModel", {"mode": None})]
    assert model._pipe.scheduler.config.shift == 5.5
    info = model.describe()
    assert info["compiled_component"] == "transformer" and info["settings"]["shift"] == 5.5


def test_family_scheduler_shift_is_applied(tiny_root: Path) -> None:
    folder = _build(tiny_root, "hidream-i1-full")
    dev = FAMILIES["hidream-i1-dev"].tiny(tiny_root / "hidream-i1-dev")  # type: ignore[misc]
    model = get_model(_spec(dev, "hidream-i1-dev"))
    assert isinstance(model, DiffusersModel)
    assert model.describe()["settings"]["shift"] == 6.0
    model.load()
    assert model._pipe.scheduler.config.shift == 6.0
    assert folder.is_dir()


def test_hidream_llama_comes_from_elsewhere(tiny_root: Path) -> None:
    folder = _build(tiny_root, "hidream-i1-full")
    index = json.loads((folder / "model_index.json").read_text())
    assert index["text_encoder_4"] == [None, None]  # as on the hub: not shipped
    default = get_model(f"diffusers:{folder}?device=cpu").describe()
    assert default["extra_components"] == {
        "tokenizer_4": "meta-llama/Meta-Llama-3.1-8B-Instruct",
        "text_encoder_4": "meta-llama/Meta-Llama-3.1-8B-Instruct",
    }
    local = get_model(_spec(folder, "hidream-i1-full"))
    assert isinstance(local, DiffusersModel)
    local.load()
    assert type(local._pipe.text_encoder_4).__name__ == "LlamaForCausalLM"
    assert local.describe()["extra_components"]["text_encoder_4"].endswith(TINY_LLAMA_FOLDER)


def test_missing_family_package_is_reported_then_refused(
    tiny_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import glyphbench.models.diffusers_adapter as adapter

    model = get_model("diffusers:Kwai-Kolors/Kolors-diffusers")
    assert "unavailable" not in model.describe()  # sentencepiece is installed for the tests
    monkeypatch.setattr(
        adapter,
        "missing_modules",
        lambda *names: f"python package {names[0]!r} is not installed",
    )
    info = model.describe()
    assert "sentencepiece" in info["unavailable"]
    with pytest.raises(InputError, match="sentencepiece"):
        model.generate([ImageRequest(PROMPT, "OPEN", 1)])


# --------------------------------------------------------------------------- memory


def test_memory_advice_follows_the_sizes() -> None:
    from glyphbench.models.memory import fit_advice, weights_gb

    assert weights_gb(FAMILIES["flux2-dev"]) == 112.6  # 32.22B + 24.01B + 0.08B, 2 bytes each
    assert fit_advice(FAMILIES["flux2-dev"], 80) == "offload: model"  # the 64 GB transformer fits
    assert fit_advice(FAMILIES["qwen-image"], 80) == "as is"
    assert fit_advice(FAMILIES["qwen-image"], 48) == "offload: model"
    assert fit_advice(FAMILIES["sana-sprint"], 24) == "as is"
    assert "quantize: bnb-4bit" in fit_advice(FAMILIES["flux2-dev"], 24)


def test_docs_memory_table_is_the_generated_one() -> None:
    from glyphbench.models.memory import memory_table_markdown

    text = (REPO_ROOT / "docs" / "models.md").read_text(encoding="utf-8")
    start = text.index("<!-- memory-table")
    block = text[text.index("\n", start) + 1 : text.index("<!-- /memory-table -->")]
    assert block.strip() == memory_table_markdown()


# --------------------------------------------------------------------------- leaders config


@pytest.mark.slow
def test_leaders_config_dry_run_resolves_offline(tmp_path: Path) -> None:
    """``glyphbench run --config configs/leaders-2026.yaml --dry-run``: no weights, no torch."""
    script = f"""
import json, sys
from typer.testing import CliRunner
from glyphbench.cli.root import app
result = CliRunner().invoke(
    app,
    ["run", "--config", "configs/leaders-2026.yaml", "--dry-run", "--json",
     "--out", {str(tmp_path / "o")!r}],
)
heavy = [m for m in ("torch", "diffusers", "transformers") if m in sys.modules]
print(json.dumps({{"code": result.exit_code, "out": result.stdout, "heavy": heavy}}))
"""
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=300,
        check=True,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
    )
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    # The plan is printed whole; no hub checkpoint is cached here, so the dry run says each
    # would fail and exits MODEL_FAILED (3), as a job scheduler should see it.
    assert answer["code"] == 3, answer["out"][-2000:]
    assert answer["heavy"] == []
    plan = json.loads(answer["out"])
    real = [m["describe"] for m in plan["models"] if m["spec"].startswith("diffusers:")]
    families = {info["family"] for info in real}
    assert UNKNOWN not in families
    # Every family the study names is in the study (one checkpoint each at least).
    wanted = set(ISSUE_FAMILIES) - {
        "hidream-i1-dev",
        "hidream-i1-fast",
        "hunyuanimage-2.1-distilled",
    }
    assert wanted <= families
    assert all(info["loaded"] is False and info["source"] == "hub" for info in real)
    fibo = next(info for info in real if info["family"] == "bria-fibo")
    assert fibo["quirks"] == {"json": True}
    hosted = {m["spec"].split("/")[0] for m in plan["models"] if m["spec"].startswith("api:")}
    assert hosted == {"api:openai", "api:bfl", "api:google"}
    assert not (tmp_path / "o").exists()
