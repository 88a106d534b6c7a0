"""A tiny random diffusers pipeline through the runner: loads, generates, one image regenerates."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.helpers.runner_helper import PixelOCR, prompt_set, register

register()


@pytest.fixture(scope="module")
def tiny_sd(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("diffusers")
    from glyphbench.tiny.pipelines import build_tiny_sd

    return build_tiny_sd(tmp_path_factory.mktemp("models") / "tiny-sd")


@pytest.mark.slow
def test_tiny_pipeline_runs_and_an_image_regenerates_alone(tmp_path: Path, tiny_sd: Path) -> None:
    from PIL import Image

    from glyphbench.models import ImageRequest, get_model
    from glyphbench.run.config import RunConfig
    from glyphbench.run.operations import run_benchmark

    config = RunConfig.from_mapping(
        {
            "models": [
                {"spec": f"diffusers:{tiny_sd}", "name": "tiny", "options": {"device": "cpu"}}
            ],
            "batch_size": 3,
            "ocr": "pixelocr",
            "out": str(tmp_path / "run"),
        }
    )
    result = run_benchmark(config, prompt_set=prompt_set(3), reader=PixelOCR(), progress=False)
    rows = result.results
    assert rows is not None and len(rows) == 3
    assert (rows["error"] == "").all(), rows["error"].tolist()
    assert rows["batch_size"].tolist() == [3, 3, 3] and not rows["is_control"].any()
    assert (rows["width"] == 64).all() and (rows["height"] == 64).all()
    meta = json.loads((result.out / "run.json").read_text())
    assert meta["models"]["tiny"]["tiny_random"] is True
    assert meta["packages"]["diffusers"]

    # The second image, regenerated alone from its recorded seed, matches the batched one.
    row = rows.iloc[1]
    alone = get_model(f"diffusers:{tiny_sd}?device=cpu").generate(
        [
            ImageRequest(
                prompt=str(row["prompt"]), text=str(row["text"]), seed=int(row["image_seed"])
            )
        ]
    )[0]
    saved = np.asarray(Image.open(result.out / str(row["image_path"])).convert("RGB"), dtype=float)
    assert (
        np.abs(np.asarray(alone, dtype=float) - saved).mean() < 1.0
    )  # batched kernels round differently
    other = np.asarray(
        Image.open(result.out / str(rows.iloc[0]["image_path"])).convert("RGB"), dtype=float
    )
    assert np.abs(other - saved).mean() > 5.0  # a different seed gives a different image


@pytest.mark.slow
def test_a_resume_whose_local_weights_changed_is_refused(tmp_path: Path, tiny_sd: Path) -> None:
    """New weights saved over the old ones would put two models' rows under one label."""
    import shutil

    from glyphbench.core.errors import InputError
    from glyphbench.run.config import RunConfig
    from glyphbench.run.operations import run_benchmark

    weights = shutil.copytree(tiny_sd, tmp_path / "tiny-sd")
    config = RunConfig.from_mapping(
        {
            "models": [
                {"spec": f"diffusers:{weights}", "name": "tiny", "options": {"device": "cpu"}}
            ],
            "ocr": "pixelocr",
            "out": str(tmp_path / "run"),
        }
    )
    run_benchmark(config, prompt_set=prompt_set(2), reader=PixelOCR(), progress=False)
    manifest = tmp_path / "run" / "run.json"
    recorded = json.loads(manifest.read_text())["weights_fingerprint"]
    assert list(recorded) == ["tiny"] and recorded["tiny"].startswith("sha256:")

    # The same weights copied elsewhere by content (new times) resume: nothing changed.
    for file in weights.rglob("*.json"):
        file.touch()
    run_benchmark(config, prompt_set=prompt_set(2), reader=PixelOCR(), progress=False)

    unet = next(weights.glob("unet/*.safetensors"))
    data = bytearray(unet.read_bytes())
    data[-1] ^= 0xFF  # one byte of a tensor, past the header: a retrained checkpoint
    unet.write_bytes(bytes(data))
    before = manifest.read_bytes()
    with pytest.raises(InputError, match="local weights of tiny changed"):
        run_benchmark(config, prompt_set=prompt_set(2), reader=PixelOCR(), progress=False)
    assert manifest.read_bytes() == before  # refused before anything is written

    damaged = {**json.loads(before), "weights_fingerprint": ["sha256:ab"]}  # edited by hand
    manifest.write_text(json.dumps(damaged))
    with pytest.raises(InputError, match=r"run\.json is damaged"):
        run_benchmark(config, prompt_set=prompt_set(2), reader=PixelOCR(), progress=False)


@pytest.mark.slow
def test_a_cascades_local_later_stage_is_part_of_its_weights(tmp_path: Path) -> None:
    """stage2=PATH of a cascade was left out: new stage II weights resumed silently."""
    from glyphbench.run.config import RunConfig
    from glyphbench.run.operations import weights_fingerprints
    from glyphbench.tiny.pipelines import build_tiny_if

    stage1, stage2 = build_tiny_if(tmp_path / "if")
    config = RunConfig.from_mapping(
        {"models": [f"diffusers:{stage1}?stage2={stage2}&device=cpu"], "ocr": "pixelocr"}
    )
    before = weights_fingerprints(config, {})
    unet = next(stage2.glob("unet/*.safetensors"))
    data = bytearray(unet.read_bytes())
    data[-1] ^= 0xFF
    unet.write_bytes(bytes(data))
    after = weights_fingerprints(config, {})
    assert list(before) == list(after) and len(before) == 1
    assert before != after
