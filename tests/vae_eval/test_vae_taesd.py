"""taesd:<folder>: our TAESD-family model code, on random builds and on the real taef2 weights.

The real weights are the trained taef2 pair in ../shared/taef2 (MIT; see its README);
tests that need them are skipped, with the reason printed, where they are absent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from PIL import Image, ImageFilter

from glyphbench.core.errors import InputError
from glyphbench.vae_eval.codecs import get_codec
from glyphbench.vae_eval.codecs.taesd import KNOWN_LAYOUTS, Layout, TaesdCodec, build, detect_layout
from glyphbench.vae_eval.metrics import psnr
from tests.helpers.paths import SHARED

pytest.importorskip("torch")

TAEF2 = SHARED / "taef2"


@pytest.fixture(scope="module")
def taef2_dir() -> Path:
    if not (TAEF2 / "taef2_encoder.pth").is_file():
        pytest.skip(f"real taef2 weights not found at {TAEF2} (../shared/taef2 beside the repo)")
    return TAEF2


def photo_like(size: int = 256, seed: int = 0) -> Image.Image:
    """Smooth colour regions with soft edges and a gradient: a photo without sensor noise."""
    rng = np.random.default_rng(seed)
    coarse = Image.fromarray(rng.integers(30, 226, (5, 5, 3), dtype=np.uint8), "RGB")
    smooth = coarse.resize((size, size), Image.Resampling.BICUBIC)
    smooth = smooth.filter(ImageFilter.GaussianBlur(size / 40))
    ramp = np.linspace(-20, 20, size)[None, :, None]
    return Image.fromarray(np.clip(np.asarray(smooth) + ramp, 0, 255).astype(np.uint8), "RGB")


def save_random_pair(folder: Path, name: str, layout: Layout, seed: int = 0) -> Path:
    """A random-weight build of ``layout`` saved as NAME_encoder.pth / NAME_decoder.pth."""
    import torch

    torch.manual_seed(seed)
    encoder, decoder = build(layout)
    folder.mkdir(parents=True, exist_ok=True)
    torch.save(encoder.state_dict(), folder / f"{name}_encoder.pth")
    torch.save(decoder.state_dict(), folder / f"{name}_decoder.pth")
    return folder


@pytest.mark.parametrize("name", sorted(KNOWN_LAYOUTS))
def test_layout_is_detected_from_the_state_dicts(name: str) -> None:
    layout = KNOWN_LAYOUTS[name]
    encoder, decoder = build(layout)
    assert detect_layout(encoder.state_dict(), decoder.state_dict()) == layout
    assert name in layout.family


def test_mismatched_halves_are_refused() -> None:
    encoder, _ = build(KNOWN_LAYOUTS["taef2"])
    _, decoder = build(KNOWN_LAYOUTS["taesd"])
    with pytest.raises(ValueError, match="32 latent channels, decoder takes 4"):
        detect_layout(encoder.state_dict(), decoder.state_dict())


def test_random_f32_build_round_trips_any_size(tmp_path: Path) -> None:
    folder = save_random_pair(tmp_path / "sana", "taesana", KNOWN_LAYOUTS["taesana"])
    codec = get_codec(f"taesd:{folder}")
    assert isinstance(codec, TaesdCodec) and codec.multiple == 32
    image = photo_like(40)  # padded to 64 on the f32 grid, cropped back
    first, second = codec.roundtrip([image]), codec.roundtrip([image])
    assert isinstance(first[0], Image.Image) and first[0].size == (40, 40)
    assert isinstance(second[0], Image.Image)
    assert np.array_equal(np.asarray(first[0]), np.asarray(second[0]))


@pytest.mark.slow
def test_folder_with_several_pairs_needs_a_variant(tmp_path: Path) -> None:
    save_random_pair(tmp_path, "taesd", KNOWN_LAYOUTS["taesd"])
    save_random_pair(tmp_path, "taef1", KNOWN_LAYOUTS["taef1"])
    with pytest.raises(InputError, match=r"several encoder/decoder pairs.*taef1, taesd"):
        get_codec(f"taesd:{tmp_path}")
    chosen = get_codec(f"taesd:{tmp_path}?variant=taef1")
    assert isinstance(chosen, TaesdCodec) and chosen.layout.latent_channels == 16
    by_file = get_codec(f"taesd:{tmp_path / 'taesd_encoder.pth'}")
    assert isinstance(by_file, TaesdCodec) and by_file.variant == "taesd"
    with pytest.raises(InputError, match=r"no taef2_encoder\.pth"):
        get_codec(f"taesd:{tmp_path}?variant=taef2")
    with pytest.raises(InputError, match="no such folder"):
        get_codec(f"taesd:{tmp_path / 'missing'}")


# --------------------------------------------------------------------------- real weights


def test_real_taef2_loads_with_the_published_layout(taef2_dir: Path) -> None:
    import torch

    codec = get_codec(f"taesd:{taef2_dir}")
    assert isinstance(codec, TaesdCodec)
    assert codec.layout == Layout(32, grid=8, midblock_norm=True)
    description = codec.describe()
    assert "taef2" in description and "approximation" in description
    published = torch.load(taef2_dir / "taef2_encoder.pth", map_location="cpu", weights_only=True)
    assert set(codec.encoder.state_dict()) == set(published)  # every published tensor has a slot


@pytest.mark.slow
def test_real_taef2_is_far_above_its_random_build(taef2_dir: Path, tmp_path: Path) -> None:
    image = photo_like(256)
    real: Any = get_codec(f"taesd:{taef2_dir}").roundtrip([image])[0]
    folder = save_random_pair(tmp_path / "random", "taef2", KNOWN_LAYOUTS["taef2"])
    random: Any = get_codec(f"taesd:{folder}").roundtrip([image])[0]
    real_db, random_db = psnr(image, real), psnr(image, random)
    assert real_db > 30.0, real_db  # trained: a faithful reconstruction
    assert real_db > random_db + 15.0, (real_db, random_db)


@pytest.mark.slow
def test_real_taef2_tiles_close_to_whole(taef2_dir: Path) -> None:
    image = photo_like(160, seed=3)
    (whole,) = get_codec(f"taesd:{taef2_dir}").roundtrip([image])
    (tiled,) = get_codec(f"taesd:{taef2_dir}?tile=96").roundtrip([image])
    assert isinstance(whole, Image.Image) and isinstance(tiled, Image.Image)
    assert psnr(whole, tiled) > 30.0  # seams blended: tiles agree with the whole image


@pytest.mark.slow
def test_wr_order_identity_taef2_resize8_on_the_synthetic_set(
    taef2_dir: Path, tmp_path: Path
) -> None:
    """The issue's order with real OCR: identity >= taef2 > resize x8 (word retention)."""
    pytest.importorskip("easyocr")
    from glyphbench.vae_eval.runner import RunOptions, evaluate

    specs = ["identity", f"taesd:{taef2_dir}", "resize?factor=8"]
    options = RunOptions(
        codecs=specs, images="default?size=256", ocr="easyocr?gpu=0", limit=6, batch_size=3
    )
    table = evaluate(options, tmp_path / "out")
    assert (table["error"] == "").all()
    wr = table.groupby("vae", sort=False)["wr"].mean()
    identity, taef2, resize8 = (float(wr[spec]) for spec in specs)
    assert identity >= taef2 > resize8, wr.to_dict()
    assert taef2 > 40.0, wr.to_dict()  # most words survive the trained tiny VAE
    # --limit 6 draws one image per font size (5), every size present, and
    # the report states no threshold on one image per size, and the ceiling once.
    from glyphbench.vae_eval.analyse import CEILING_LABEL
    from glyphbench.vae_eval.report import write_report

    per_size = table[table["vae"] == specs[1]].groupby("font_size").size()
    assert per_size.to_dict() == {10: 1, 14: 1, 20: 1, 32: 1, 48: 1}
    page = write_report(table, tmp_path / "out").read_text(encoding="utf-8")
    assert "evidence too thin: n = 1 per font size (48, 32, 20, 14, 10 px)" in page
    summary = page[page.index('<section id="summary">') : page.index('<section id="threshold">')]
    assert summary.count(CEILING_LABEL) == 1


# --------------------------------------------------------------------------- resumes


def test_a_resume_refuses_changed_weights_or_images(tmp_path: Path) -> None:
    """Rows of a finished codec are kept on a resume: other weights copied over its files,
    or another ground truth, would be mixed with them under the same name."""
    import json

    from glyphbench.vae_eval.imageset import load_image_set
    from glyphbench.vae_eval.runner import RunOptions, evaluate
    from tests.helpers.runner_helper import PixelOCR

    images = tmp_path / "images"
    images.mkdir()
    for name, colour in (("a.png", "white"), ("b.png", "gray")):
        Image.new("RGB", (64, 64), colour).save(images / name)
    metadata = images / "metadata.jsonl"
    metadata.write_text('{"file": "a.png", "text": "OPEN"}\n{"file": "b.png", "text": "EXIT"}\n')
    weights = save_random_pair(tmp_path / "vae", "taesd", KNOWN_LAYOUTS["taesd"])
    codecs = [f"taesd:{weights}", "jpeg?quality=50"]
    out = tmp_path / "run"

    def evaluate_again() -> None:
        image_set = load_image_set(str(images))
        evaluate(RunOptions(codecs=codecs), out, image_set=image_set, ocr_engine=PixelOCR())

    evaluate_again()
    recorded = json.loads((out / "run.json").read_text())
    assert list(recorded["codec_fingerprints"]) == [codecs[0]]  # JPEG has no files
    evaluate_again()  # nothing changed: resumes (and does nothing)

    metadata.write_text('{"file": "a.png", "text": "CLOSED"}\n{"file": "b.png", "text": "EXIT"}\n')
    with pytest.raises(InputError, match=r"images or texts of .* changed"):
        evaluate_again()
    metadata.write_text('{"file": "a.png", "text": "OPEN"}\n{"file": "b.png", "text": "EXIT"}\n')
    Image.new("RGB", (64, 64), "black").save(images / "b.png")
    with pytest.raises(InputError, match=r"images or texts of .* changed"):
        evaluate_again()
    Image.new("RGB", (64, 64), "gray").save(images / "b.png")

    metadata.write_text(
        '{"file": "a.png", "text": "OPEN", "font_size": 20}\n{"file": "b.png", "text": "EXIT"}\n'
    )  # an attribute the report slices by
    with pytest.raises(InputError, match=r"images or texts of .* changed"):
        evaluate_again()
    metadata.write_text('{"file": "a.png", "text": "OPEN"}\n{"file": "b.png", "text": "EXIT"}\n')

    save_random_pair(weights, "taesd", KNOWN_LAYOUTS["taesd"], seed=1)  # other weights
    before = (out / "run.json").read_bytes()
    with pytest.raises(InputError, match=r"weight files of codec taesd:.* changed"):
        evaluate_again()
    assert (out / "run.json").read_bytes() == before  # refused before anything is written

    damaged = {**json.loads(before), "codec_fingerprints": ["sha256:ab"]}  # edited by hand
    (out / "run.json").write_text(json.dumps(damaged))
    with pytest.raises(InputError, match=r"run\.json is damaged"):
        evaluate_again()


def test_a_swapped_half_or_unreadable_file_is_refused_before_the_run(tmp_path: Path) -> None:
    """Found by reading the pair up front, not as every row failed once the run started."""
    from glyphbench.vae_eval.codecs import check_codec_files

    save_random_pair(tmp_path / "sd", "taesd", KNOWN_LAYOUTS["taesd"])
    save_random_pair(tmp_path / "f1", "taef1", KNOWN_LAYOUTS["taef1"])
    swapped = tmp_path / "swapped"
    swapped.mkdir()
    (swapped / "x_encoder.pth").write_bytes((tmp_path / "f1" / "taef1_encoder.pth").read_bytes())
    (swapped / "x_decoder.pth").write_bytes((tmp_path / "sd" / "taesd_decoder.pth").read_bytes())
    with pytest.raises(InputError, match=r"x_encoder\.pth and x_decoder\.pth are not one TAESD"):
        check_codec_files(f"taesd:{swapped}")

    import torch

    encoder = torch.load(tmp_path / "sd" / "taesd_encoder.pth", weights_only=True)
    for extra in ({"99.scale": torch.ones(1)}, {"0.weight": 5}):  # edited, or not tensors
        torch.save({**encoder, **extra}, swapped / "x_encoder.pth")
        with pytest.raises(InputError, match=r"not one TAESD pair: not a TAESD state dict"):
            check_codec_files(f"taesd:{swapped}")

    (swapped / "x_encoder.pth").write_text("not a checkpoint\n")
    with pytest.raises(InputError, match=r"x_encoder\.pth: cannot read .* saved with torch\.save"):
        check_codec_files(f"taesd:{swapped}")
    check_codec_files(f"taesd:{tmp_path / 'sd'}")  # a real pair passes
