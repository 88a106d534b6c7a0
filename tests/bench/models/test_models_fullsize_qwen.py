"""The full-size random Qwen-Image-architecture pipeline (benchmarks.fullsize_qwen).

The default tests build every component on the meta device (no memory) and
write only the light parts. Building the real thing needs ~42 GB of memory and
~58 GB of disk: the slow test runs only where GLYPHBENCH_BIG_BUILD=1 says the
machine has them.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from benchmarks.fullsize import parameter_count
from benchmarks.fullsize_qwen import (
    PARAMETER_COUNTS,
    bfloat16_gigabytes,
    build_qwen_image_architecture,
    marker_info,
    meta_components,
    save_light_parts,
    scheduler_config,
    text_encoder_config,
    transformer_config,
    vae_config,
)
from glyphbench.models import get_model
from glyphbench.tiny.pipelines import TINY_MARKER

# Published sizes, written out here independently of the module: the hub lists
# Qwen/Qwen-Image's transformer folder at 40.9 GB (bfloat16, 2 bytes a parameter)
# and Qwen2.5-VL-7B-Instruct at 8.29B parameters.
TRANSFORMER_GB = 40.9
TEXT_ENCODER_BILLIONS = 8.29


@pytest.fixture(scope="module")
def meta() -> dict[str, object]:
    return meta_components()


@pytest.mark.slow
def test_meta_components_cost_no_memory(meta: dict[str, object]) -> None:
    import torch

    assert set(meta) == {"transformer", "text_encoder", "vae"}
    for module in meta.values():
        assert isinstance(module, torch.nn.Module)
        assert {p.device.type for p in module.parameters()} == {"meta"}


def test_parameter_counts_match_published_sizes(meta: dict[str, object]) -> None:
    counts = {name: parameter_count(module) for name, module in meta.items()}
    assert counts == PARAMETER_COUNTS
    assert round(2 * counts["transformer"] / 1e9, 1) == TRANSFORMER_GB
    assert round(counts["text_encoder"] / 1e9, 2) == TEXT_ENCODER_BILLIONS
    assert bfloat16_gigabytes() == 57.7


def test_configs_fit_together() -> None:
    transformer, text, vae = transformer_config(), text_encoder_config(), vae_config()
    # The transformer reads the encoder's last hidden states ...
    assert transformer["joint_attention_dim"] == text["text_config"]["hidden_size"] == 3584
    # ... and latents of the VAE's 16 channels packed 2x2.
    assert transformer["in_channels"] == 4 * vae["z_dim"] == 64
    assert transformer["out_channels"] == vae["z_dim"]
    # Rotary axes (frame, height, width) share one head's 128 channels.
    assert sum(transformer["axes_dims_rope"]) == transformer["attention_head_dim"] == 128
    assert scheduler_config()["use_dynamic_shifting"] is True


def _fake_build(path: Path) -> Path:
    save_light_parts(path)
    (path / TINY_MARKER).write_text(json.dumps(marker_info("bfloat16", 0)))
    return path


@pytest.mark.slow
def test_light_parts_describe_as_qwen_image_full_size(tmp_path: Path) -> None:
    folder = _fake_build(tmp_path / "qwen")
    index = json.loads((folder / "model_index.json").read_text())
    assert index["_class_name"] == "QwenImagePipeline"
    assert index["transformer"] == ["diffusers", "QwenImageTransformer2DModel"]
    assert index["text_encoder"] == ["transformers", "Qwen2_5_VLForConditionalGeneration"]
    info = get_model(f"diffusers:{folder}?device=cpu").describe()
    assert info["family"] == "qwen-image" and info["random_weights"] is True
    assert info["tiny_random"] is False
    # The family's own settings: 1328 px, 50 steps, true CFG 4 with a " " negative prompt.
    assert info["settings"]["height"] == 1328 and info["settings"]["steps"] == 50
    assert info["guidance_keyword"] == "true_cfg_scale"
    assert info["settings"]["negative_prompt"] == " "


@pytest.mark.slow
def test_finished_build_is_reused_and_bad_dtype_refused(tmp_path: Path) -> None:
    folder = _fake_build(tmp_path / "qwen")
    assert build_qwen_image_architecture(folder) == folder
    assert not (folder / "transformer").exists()  # nothing was built: no weights were written
    with pytest.raises(ValueError, match="dtype"):
        build_qwen_image_architecture(tmp_path / "other", dtype="int8")


@pytest.mark.slow
@pytest.mark.skipif(
    os.environ.get("GLYPHBENCH_BIG_BUILD") != "1",
    reason="needs ~42 GB of memory and ~58 GB of disk (set GLYPHBENCH_BIG_BUILD=1)",
)
@pytest.mark.timeout(3600)
def test_build_load_and_generate_full_size(tmp_path: Path) -> None:
    from glyphbench.models import ImageRequest

    folder = build_qwen_image_architecture(tmp_path / "qwen", dtype="bfloat16")
    try:
        model = get_model(f"diffusers:{folder}?height=256&width=256&steps=1")
        (image,) = model.generate([ImageRequest("a sign that says OPEN", "OPEN", 1)])
        assert image.size == (256, 256)
        assert model.describe()["loaded"] is True
    finally:
        shutil.rmtree(folder, ignore_errors=True)
