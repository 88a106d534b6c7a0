"""The ``vlm`` reader on a tiny random Qwen2.5-VL built locally, and the real one when on disk."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from glyphbench.core.errors import InputError
from glyphbench.core.registry import PLUGINS
from glyphbench.readers import get_reader
from glyphbench.readers.vlm import (
    BENCHMARK_INSTRUCTION,
    DEFAULT_MODEL,
    PRESETS,
    VLMOptions,
    is_refusal,
    smart_resize,
)

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def tiny_vlm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from glyphbench.readers.tiny_vlm import build_tiny_qwen_vl

    return build_tiny_qwen_vl(tmp_path_factory.mktemp("tiny-vlm"))


def _images() -> list[Image.Image]:
    sign = Image.new("RGB", (96, 64), "white")
    ImageDraw.Draw(sign).text((8, 20), "OPEN", fill="black")
    return [sign, Image.new("RGB", (64, 64), "black"), Image.new("RGB", (30, 20), "red")]


def test_tiny_vlm_reads_a_batch_like_one_image_at_a_time(tiny_vlm: Path) -> None:
    reader = get_reader(f"vlm:{tiny_vlm}?max_new_tokens=6&batch_size=2")
    batch = reader.read(_images())
    alone = [reader.read([image])[0] for image in _images()]
    assert [r.pieces for r in batch] == [r.pieces for r in alone]  # left padding is harmless
    assert len({r.pieces[0] for r in batch}) == 3  # the answers depend on the image
    assert all(len(r.pieces) == 1 and r.boxes == [] for r in batch)
    assert reader.read(_images()) == batch  # greedy: the same answers again


def test_version_names_the_folder_the_settings_and_the_preset(tiny_vlm: Path) -> None:
    reader = get_reader(f"vlm:{tiny_vlm}?preset=oneig")
    assert reader.name == "vlm"
    assert tiny_vlm.name in reader.version and "float32; cpu" in reader.version
    assert "preset oneig; max_new_tokens 128" in reader.version


def test_prompt_is_one_user_turn_with_the_image_first_then_the_instruction(tiny_vlm: Path) -> None:
    reader = get_reader(f"vlm:{tiny_vlm}?preset=longtext")
    turn = [{"type": "image"}, {"type": "text", "text": reader.instruction}]
    prompt = reader.processor.apply_chat_template(
        [{"role": "user", "content": turn}], tokenize=False, add_generation_prompt=True
    )
    assert prompt.endswith(
        f"<|im_start|>user\n<|vision_start|><|image_pad|><|vision_end|>{BENCHMARK_INSTRUCTION}"
        "<|im_end|>\n<|im_start|>assistant\n"
    )
    assert reader.max_new_tokens == 1024 and reader.no_text == "keep"


def test_images_are_resized_as_qwen_vl_utils_does(tiny_vlm: Path) -> None:
    reader = get_reader(f"vlm:{tiny_vlm}")
    assert reader.prepare(Image.new("RGB", (30, 20))).size == (84, 56)
    assert reader.prepare(Image.new("RGB", (512, 512))).size == (504, 504)
    assert smart_resize(3000, 4000, max_pixels=1000 * 28 * 28) == (756, 1008)
    with pytest.raises(ValueError, match="aspect ratio"):
        smart_resize(1, 300)


def test_presets_and_the_no_text_option() -> None:
    assert PRESETS["oneig"].instruction == PRESETS["longtext"].instruction == BENCHMARK_INSTRUCTION
    assert VLMOptions(preset="oneig").resolved()[1:] == (128, "keep")
    assert VLMOptions(preset="oneig", max_new_tokens=256).resolved()[1] == 256
    assert VLMOptions().resolved()[2] == "empty"  # plain: a refusal reads as nothing
    assert VLMOptions(instruction="Read.").resolved()[0] == "Read."
    assert is_refusal(" No text recognized. ") and is_refusal("“No text recognized”")
    assert not is_refusal("No text recognized here: EXIT")


def test_no_text_empty_keeps_the_raw_answer_as_the_piece(tiny_vlm: Path) -> None:
    reader = get_reader(f"vlm:{tiny_vlm}?no_text=empty")
    reading = reader.to_reading("No text recognized.")
    assert reading.text == "" and reading.pieces == ["No text recognized."]
    keep = get_reader(f"vlm:{tiny_vlm}?preset=oneig")
    assert keep.to_reading("No text recognized").text == "No text recognized"


def test_vllm_backend_and_missing_weights_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="vLLM is not installed"):
        get_reader("vlm?backend=vllm")
    with pytest.raises(InputError, match="cannot load the model"):
        get_reader(f"vlm:{tmp_path / 'nothing-here'}")
    assert PLUGINS.resolve("readers", "vlm").options.scripts() == {"latin", "han"}


def _weights_on_disk(repo: str) -> bool:
    from huggingface_hub import try_to_load_from_cache

    found = try_to_load_from_cache(repo, "config.json")
    return isinstance(found, str) and os.path.isfile(found)


@pytest.mark.slow
def test_real_qwen25_vl_reads_a_rendered_sign() -> None:
    if not _weights_on_disk(DEFAULT_MODEL):
        print(f"skipped: {DEFAULT_MODEL} is not in the local Hugging Face cache")
        pytest.skip(f"{DEFAULT_MODEL} weights are not on disk")
    from glyphbench.models.controls import render_text

    reader = get_reader("vlm?preset=longtext")
    readings = reader.read([render_text("Grand Opening", seed=3), Image.new("RGB", (512, 512))])
    assert "grand opening" in readings[0].text.casefold()
    assert is_refusal(readings[1].text) or readings[1].text.strip() == ""
