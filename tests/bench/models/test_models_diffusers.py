"""The diffusers adapter, family table and tiny pipelines.

Tiny random SD and SDXL pipelines are built from config into a session tmp dir,
saved with ``save_pretrained`` and loaded back through ``diffusers:<path>``:
the same code path a real hub model takes.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from glyphbench.core.accelerator import is_oom
from glyphbench.core.errors import InputError
from glyphbench.core.registry import PLUGINS, parse_options
from glyphbench.models import ImageRequest, get_model
from glyphbench.models.diffusers_adapter import (
    DiffusersModel,
    DiffusersOptions,
    split_target,
)
from glyphbench.models.families import (
    FAMILIES,
    UNKNOWN,
    detect_family,
    families_for_class,
    guess_family_from_id,
)
from glyphbench.tiny.pipelines import TINY_MARKER, build_tiny_if, build_tiny_sd, build_tiny_sdxl
from tests.helpers.paths import REPO_ROOT

# --------------------------------------------------------------------------- fixtures


@pytest.fixture(scope="session")
def tiny_sd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_sd(tmp_path_factory.mktemp("tiny") / "sd")


@pytest.fixture(scope="session")
def tiny_sdxl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_sdxl(tmp_path_factory.mktemp("tiny") / "sdxl")


@pytest.fixture(scope="session")
def sd_model(tiny_sd: Path) -> DiffusersModel:
    model = get_model(f"diffusers:{tiny_sd}")
    assert isinstance(model, DiffusersModel)
    return model


def _pixels(image) -> np.ndarray:
    return np.asarray(image, dtype=np.int16)


def _requests(seeds: list[int]) -> list[ImageRequest]:
    prompts = ['a sign that says "OPEN"', "a mug with the word cafe", "a poster reading 42"]
    return [ImageRequest(prompts[i % 3], "x", seed) for i, seed in enumerate(seeds)]


# --------------------------------------------------------------------------- generation


def test_tiny_sd_generates_batch(sd_model: DiffusersModel) -> None:
    images = sd_model.generate(_requests([1, 2, 3, 4]))
    assert len(images) == 4
    for image in images:
        assert image.size == (64, 64)
        assert image.mode == "RGB"
    assert sd_model.generate([]) == []


@pytest.mark.slow
def test_image_alone_equals_image_in_batch(sd_model: DiffusersModel) -> None:
    batch = sd_model.generate(_requests([101, 202, 303]))
    for index, request in enumerate(_requests([101, 202, 303])):
        alone = sd_model.generate([request])[0]
        # CPU batched kernels may round differently; allow at most 1/255 per pixel.
        assert np.abs(_pixels(alone) - _pixels(batch[index])).max() <= 1


def test_same_seed_same_image_different_seed_different(sd_model: DiffusersModel) -> None:
    request = _requests([7])[0]
    first = sd_model.generate([request])[0]
    again = sd_model.generate([request])[0]
    other = sd_model.generate([ImageRequest(request.prompt, request.text, 8)])[0]
    assert np.array_equal(_pixels(first), _pixels(again))
    assert np.abs(_pixels(first) - _pixels(other)).mean() > 1.0


def test_describe_reports_resolved_settings(sd_model: DiffusersModel, tiny_sd: Path) -> None:
    sd_model.generate(_requests([5]))  # make sure it is loaded
    info = sd_model.describe()
    assert info["kind"] == "diffusers"
    assert info["is_control"] is False
    assert info["source"] == "local"
    assert info["revision"] == "local"
    assert info["family"] == "sd1"
    assert info["family_source"] == "model_index.json"
    assert info["pipeline_class"] == "StableDiffusionPipeline"
    assert info["tiny_random"] is True
    assert info["loaded"] is True
    assert info["device"] == "cpu"
    assert info["dtype"] == "float32"
    assert info["settings"]["height"] == 64 and info["settings"]["steps"] == 2
    assert len(info["model_index_sha256"]) == 12
    assert info["safety_checker"] == "absent"
    json.dumps(info)  # goes into run.json as is


def test_options_override_defaults_and_change_output(tiny_sd: Path) -> None:
    model = get_model(f"diffusers:{tiny_sd}?height=32&width=48&steps=1&guidance=1.0")
    info = model.describe()
    assert info["settings"]["height"] == 32
    assert info["settings"]["width"] == 48
    assert info["settings"]["steps"] == 1
    assert info["settings"]["guidance"] == 1.0
    (image,) = model.generate(_requests([3]))
    assert image.size == (48, 32)


def test_config_options_mapping_and_negative_prompt(tiny_sd: Path) -> None:
    plain = DiffusersModel(str(tiny_sd), {"steps": 2})
    negative = DiffusersModel(str(tiny_sd), {"steps": 2, "negative_prompt": "blurry text"})
    assert negative.describe()["settings"]["negative_prompt"] == "blurry text"
    request = _requests([9])
    a, b = plain.generate(request)[0], negative.generate(request)[0]
    assert not np.array_equal(_pixels(a), _pixels(b))


def test_tiny_sdxl_loads_and_is_deterministic(tiny_sdxl: Path) -> None:
    model = get_model(f"diffusers:{tiny_sdxl}")
    batch = model.generate(_requests([11, 12, 13]))
    alone = model.generate(_requests([11, 12, 13])[1:2])[0]
    assert [image.size for image in batch] == [(64, 64)] * 3
    assert np.abs(_pixels(alone) - _pixels(batch[1])).max() <= 1
    info = model.describe()
    assert info["family"] == "sdxl"
    assert info["pipeline_class"] == "StableDiffusionXLPipeline"


def test_tiny_build_is_idempotent_and_marked(tiny_sd: Path) -> None:
    marker = json.loads((tiny_sd / TINY_MARKER).read_text())
    assert marker["tiny_random"] is True
    before = (tiny_sd / "model_index.json").stat().st_mtime_ns
    assert build_tiny_sd(tiny_sd) == tiny_sd
    assert (tiny_sd / "model_index.json").stat().st_mtime_ns == before


@pytest.mark.slow
def test_tiny_deepfloyd_if_cascade(tmp_path_factory: pytest.TempPathFactory) -> None:
    stage1, stage2 = build_tiny_if(tmp_path_factory.mktemp("tiny") / "if")
    model = get_model(f"diffusers:{stage1}?stage2={stage2}")
    info = model.describe()
    assert info["family"] == "deepfloyd-if"
    assert info["stages"] == [str(stage2)]
    assert info["settings"]["stage2_steps"] == 2  # the tiny marker's, not the family's 50
    requests = _requests([21, 22])
    batch = model.generate(requests)
    assert [image.size for image in batch] == [(32, 32)] * 2  # 16 px stage I, upsampled
    alone = model.generate(requests[1:])[0]
    # Both stages draw from the image's own generator: alone == in batch.
    assert np.abs(_pixels(alone) - _pixels(batch[1])).max() <= 1
    assert np.abs(_pixels(batch[0]) - _pixels(batch[1])).mean() > 1.0
    # Stage I alone (stage II turned off) returns its 16 px images.
    (small,) = get_model(f"diffusers:{stage1}?stage2=none").generate(requests[:1])
    assert small.size == (16, 16)


# --------------------------------------------------------------------------- errors


def test_unknown_option_is_a_clear_error(tiny_sd: Path) -> None:
    with pytest.raises(InputError, match="unknown option 'stpes'; known: height, width, steps"):
        get_model(f"diffusers:{tiny_sd}?stpes=4")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"steps": "many"}, "'steps': Input should be a valid integer"),
        ({"steps": "2.5"}, "'steps': Input should be a valid integer"),
        ({"height": 0}, "'height': Input should be greater than 0"),
        ({"dtype": "int8"}, "dtype 'int8' is not one of float32"),
        ({"family": "sd9"}, "unknown family 'sd9'"),
        ({"enable_cpu_offload": "maybe"}, "'enable_cpu_offload': Input should be a valid boolean"),
    ],
)
def test_bad_option_values(options: dict, message: str) -> None:
    with pytest.raises(InputError, match=message):
        parse_options(DiffusersOptions, options, "diffusers:x")
    query = "&".join(f"{key}={value}" for key, value in options.items())
    with pytest.raises(InputError, match=message):  # the same check when a config loads
        PLUGINS.resolve("models", f"diffusers:x?{query}")


def test_options_are_typed_and_blank_means_unset() -> None:
    options = parse_options(
        DiffusersOptions,
        {"steps": "4", "guidance": 2, "enable_cpu_offload": "true", "dtype": "fp16", "device": ""},
        "diffusers:x",
    )
    assert options.settings() == {
        "steps": 4,
        "guidance": 2.0,
        "enable_cpu_offload": True,
        "dtype": "float16",
    }


def test_missing_local_path_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="folder not found"):
        get_model(f"diffusers:{tmp_path / 'nowhere'}")
    with pytest.raises(InputError, match=r"no model_index\.json"):
        get_model(f"diffusers:{tmp_path}")
    with pytest.raises(InputError, match="hub id or folder"):
        get_model("diffusers:")


# --------------------------------------------------------------------------- hub specs (no weights)


def test_hub_spec_resolves_without_loading() -> None:
    model = get_model("diffusers:black-forest-labs/FLUX.1-schnell@abc123?steps=2")
    info = model.describe()
    assert info["source"] == "hub"
    assert info["target"] == "black-forest-labs/FLUX.1-schnell"
    assert info["requested_revision"] == "abc123"
    assert info["family"] == "flux-schnell"
    assert info["family_source"] == "id pattern"
    assert info["settings"]["steps"] == 2  # option beats the family's 4
    assert info["settings"]["guidance"] == 0.0
    assert info["settings"]["max_sequence_length"] == 256
    assert info["pipeline_class"] == "FluxPipeline"
    assert info["loaded"] is False


def test_unknown_hub_model_keeps_pipeline_defaults() -> None:
    info = get_model("diffusers:someone/some-model").describe()
    assert info["family"] == UNKNOWN
    assert info["settings"]["steps"] is None and info["settings"]["height"] is None


def test_split_target() -> None:
    assert split_target("a/b@v1.0") == ("a/b", "v1.0")
    assert split_target("a/b") == ("a/b", None)


# --------------------------------------------------------------------------- families (pure)

CLASS_CASES = [
    ("StableDiffusionPipeline", "stable-diffusion-v1-5/stable-diffusion-v1-5", "sd1"),
    ("StableDiffusionPipeline", "stabilityai/stable-diffusion-2-1", "sd2"),
    ("StableDiffusionPipeline", "stabilityai/stable-diffusion-2-1-base", "sd2-base"),
    ("StableDiffusionXLPipeline", "stabilityai/stable-diffusion-xl-base-1.0", "sdxl"),
    ("StableDiffusion3Pipeline", "stabilityai/stable-diffusion-3-medium-diffusers", "sd3"),
    ("StableDiffusion3Pipeline", "stabilityai/stable-diffusion-3.5-large", "sd35-large"),
    ("StableDiffusion3Pipeline", "stabilityai/stable-diffusion-3.5-medium", "sd35-medium"),
    (
        "StableDiffusion3Pipeline",
        "stabilityai/stable-diffusion-3.5-large-turbo",
        "sd35-large-turbo",
    ),
    ("FluxPipeline", "black-forest-labs/FLUX.1-dev", "flux-dev"),
    ("FluxPipeline", "black-forest-labs/FLUX.1-schnell", "flux-schnell"),
    ("PixArtAlphaPipeline", "PixArt-alpha/PixArt-XL-2-1024-MS", "pixart-alpha"),
    ("PixArtSigmaPipeline", "PixArt-alpha/PixArt-Sigma-XL-2-1024-MS", "pixart-sigma"),
    ("SanaPipeline", "Efficient-Large-Model/Sana_1600M_1024px_BF16_diffusers", "sana"),
    ("KandinskyV22Pipeline", "kandinsky-community/kandinsky-2-2-decoder", "kandinsky22"),
    ("Kandinsky3Pipeline", "kandinsky-community/kandinsky-3", "kandinsky3"),
    ("IFPipeline", "DeepFloyd/IF-I-XL-v1.0", "deepfloyd-if"),
]


@pytest.mark.parametrize(("class_name", "model_id", "family"), CLASS_CASES)
def test_detect_family_from_model_index(class_name: str, model_id: str, family: str) -> None:
    assert detect_family({"_class_name": class_name}, model_id) == family
    # The id alone (dry-run of a hub model) gives the same answer ...
    assert guess_family_from_id(model_id) == family
    # ... and a local folder with an unhelpful name falls back to the class's first family.
    assert (
        detect_family({"_class_name": class_name}, "/models/ckpt")
        == families_for_class(class_name)[0]
    )


def test_class_beats_misleading_id() -> None:
    # The class is authoritative: an SDXL finetune whose name mentions "sd1" is still SDXL.
    assert detect_family({"_class_name": "StableDiffusionXLPipeline"}, "me/sd1-style") == "sdxl"
    assert detect_family(None, "me/unknown") == UNKNOWN


def test_family_table_is_sane() -> None:
    for family in FAMILIES.values():
        if family.name == UNKNOWN:
            continue
        assert family.pipeline_classes
        assert family.dtype in ("float16", "bfloat16", "float32")
        assert family.height and family.width and family.steps
        assert family.guidance is not None and family.guidance >= 0
    # A few published values (see docs/models.md for sources).
    assert (FAMILIES["sd1"].height, FAMILIES["sd1"].steps, FAMILIES["sd1"].guidance) == (
        512,
        50,
        7.5,
    )
    assert FAMILIES["flux-schnell"].steps == 4 and FAMILIES["flux-schnell"].guidance == 0.0
    assert FAMILIES["pixart-sigma"].max_sequence_length == 300
    assert FAMILIES["deepfloyd-if"].height == 64 and FAMILIES["deepfloyd-if"].stages


# --------------------------------------------------------------------------- helpers


def test_is_oom() -> None:
    import torch

    assert is_oom(torch.cuda.OutOfMemoryError("CUDA out of memory"))
    assert is_oom(RuntimeError("CUDA error: out of memory"))
    wrapped = ValueError("batch failed")
    wrapped.__cause__ = RuntimeError("CUDA out of memory. Tried to allocate 20 MiB")
    assert is_oom(wrapped)
    assert not is_oom(RuntimeError("shape mismatch"))
    assert not is_oom(KeyError("x"))


def test_import_and_dry_run_describe_do_not_import_torch(tmp_path: Path) -> None:
    code = (
        "import sys, json\n"
        "import glyphbench.models.diffusers_adapter as d\n"
        "from glyphbench.models import get_model\n"
        "get_model('diffusers:stabilityai/stable-diffusion-xl-base-1.0').describe()\n"
        "heavy = [m for m in ('torch', 'diffusers', 'transformers') if m in sys.modules]\n"
        "print(json.dumps(heavy))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, check=True
    )
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []


def test_missing_variant_is_a_clear_error(tiny_sd: Path) -> None:
    model = get_model(f"diffusers:{tiny_sd}?variant=fp16")
    with pytest.raises(InputError, match="variant 'fp16'"):
        model.generate(_requests([1]))


@pytest.mark.slow
def test_study_config_resolves_without_weights() -> None:
    code = (
        "import sys, json\n"
        "from glyphbench.run.config import RunConfig\n"
        "from glyphbench.models import get_model\n"
        "cfg = RunConfig.from_yaml('configs/study.yaml')\n"
        "infos = [get_model(e.to_spec()).describe() for e in cfg.models]\n"
        "heavy = [m for m in ('torch', 'diffusers', 'transformers') if m in sys.modules]\n"
        "print(json.dumps({'infos': infos, 'heavy': heavy}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO_ROOT, check=True
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result["heavy"] == []
    real = [info for info in result["infos"] if not info["is_control"]]
    families = {info["family"] for info in real}
    # Every family the issue names is in the study, and no real model is left unknown.
    for family in ("sd1", "sd2", "sdxl", "sd35-large", "flux-dev", "flux-schnell"):
        assert family in families
    for family in ("pixart-sigma", "sana", "kandinsky3", "deepfloyd-if"):
        assert family in families
    assert UNKNOWN not in families
    assert all(info["source"] == "hub" and not info["loaded"] for info in real)
    assert any(info["is_control"] for info in result["infos"])


@pytest.mark.slow
def test_prompts_over_the_token_limit_are_counted_and_warned_once(
    tiny_sd: Path, caplog: pytest.LogCaptureFixture
) -> None:
    model = get_model(f"diffusers:{tiny_sd}")
    long_prompt = "a sign that says hello " * 20  # far beyond the tiny tokenizer's 32 tokens
    with caplog.at_level("WARNING", logger="glyphbench.models.diffusers_adapter"):
        model.generate(
            [ImageRequest(long_prompt, "hello", seed=1), ImageRequest("a cat", "cat", seed=2)]
        )
        model.generate([ImageRequest(long_prompt, "hello", seed=3)])
    info = model.describe()
    assert info["tokenizer_max_length"] == 32
    assert info["prompts_over_token_limit"] == 2
    warnings = [r for r in caplog.records if "truncated" in r.getMessage()]
    assert len(warnings) == 1


def test_an_uncached_hub_id_offline_fails_at_once_with_the_reason() -> None:
    """The pipeline loader asks the hub once (glyphbench.core.hub) instead of retrying for ~25 s."""
    from glyphbench.core.hub import hub_reachable

    model = get_model("diffusers:nobody-here/no-such-model?device=cpu")
    with pytest.raises(InputError, match="cannot load diffusers pipeline") as failure:
        model.load()
    if hub_reachable():
        pytest.skip("the hub is reachable here: the offline reason is not given")
    assert "is unreachable" in str(failure.value)
    assert "not in the local cache" in str(failure.value)
