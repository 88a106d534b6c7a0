"""Tiny random diffusers pipelines, built from config, for tests and the demo.

They have the same layout on disk as real checkpoints (``model_index.json`` plus
one folder per component), so they load through the very same
``diffusers:<path>`` code path as a hub model. Their weights are random (seeded,
so every build is identical) and they draw noise, not text: they exist to
exercise the machinery, never to be scored as a model.

Each built folder carries a ``glyphbench_tiny.json`` marker. The diffusers
adapter reports it as ``"tiny_random": true`` and takes the small defaults it
holds (64x64 pixels, 2 steps) in place of the family's real ones.

>>> build_tiny_sd("/tmp/tiny-sd")  # doctest: +SKIP
PosixPath('/tmp/tiny-sd')
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

#: File that marks a folder as a tiny random pipeline built here.
TINY_MARKER = "glyphbench_tiny.json"

#: Settings the adapter uses for tiny pipelines unless the config overrides them.
TINY_DEFAULTS: dict[str, Any] = {"height": 64, "width": 64, "steps": 2, "guidance": 5.0}

_SEED = 0
_TEXT_HIDDEN = 32  # hidden size of each tiny CLIP text encoder
_MAX_TOKENS = 32  # tokenizer model_max_length / text encoder positions


def build_tiny_sd(path: str | Path) -> Path:
    """Build (or reuse) a tiny random Stable-Diffusion-1.x-style pipeline at ``path``."""
    return _build(Path(path), "sd")


def build_tiny_sdxl(path: str | Path) -> Path:
    """Build (or reuse) a tiny random SDXL-style pipeline (two text encoders) at ``path``."""
    return _build(Path(path), "sdxl")


def is_tiny(path: str | Path) -> bool:
    """True when ``path`` holds a pipeline built by this module."""
    return (Path(path) / TINY_MARKER).is_file()


def read_marker(path: str | Path) -> dict[str, Any] | None:
    """The marker's content, or None when ``path`` is not a tiny pipeline."""
    marker = Path(path) / TINY_MARKER
    if not marker.is_file():
        return None
    data: dict[str, Any] = json.loads(marker.read_text(encoding="utf-8"))
    return data


def _build(path: Path, style: str) -> Path:
    marker = read_marker(path)
    if (
        marker is not None
        and marker.get("style") == style
        and (path / "model_index.json").is_file()
    ):
        return path  # idempotent: already built here
    import torch

    # The marker is written last, so a crash mid-build leaves no marker and the
    # next call rebuilds instead of trusting a half-written folder.
    with tempfile.TemporaryDirectory() as tok_dir:
        torch.manual_seed(_SEED)
        pipe = _sd_pipeline(Path(tok_dir)) if style == "sd" else _sdxl_pipeline(Path(tok_dir))
        pipe.save_pretrained(str(path), safe_serialization=True)
    info = {
        "tiny_random": True,
        "style": style,
        "seed": _SEED,
        "note": "tiny random diffusers pipeline built locally by glyphbench; draws noise, not text",
        "defaults": TINY_DEFAULTS,
    }
    (path / TINY_MARKER).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return path


# --- components -------------------------------------------------------------


def _byte_symbols() -> list[str]:
    """The 256 printable stand-ins byte-level BPE uses for bytes (GPT-2/CLIP scheme)."""
    keep = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(0xA1, 0xAC + 1))
        + list(range(0xAE, 0xFF + 1))
    )
    codes = keep[:]
    extra = 0
    for byte in range(256):
        if byte not in keep:
            keep.append(byte)
            codes.append(256 + extra)
            extra += 1
    return [chr(c) for c in codes]


def _tokenizer(work: Path) -> Any:
    """A CLIP tokenizer from a small vocab (bytes, end-of-word bytes, a few merges)."""
    from transformers import CLIPTokenizer

    symbols = _byte_symbols()
    merges = [("t", "h"), ("th", "e</w>"), ("i", "n"), ("a", "n"), ("e", "r</w>")]
    tokens = symbols + [s + "</w>" for s in symbols] + ["".join(m) for m in merges]
    tokens += ["<|startoftext|>", "<|endoftext|>"]
    vocab = {tok: i for i, tok in enumerate(dict.fromkeys(tokens))}
    vocab_file, merges_file = work / "vocab.json", work / "merges.txt"
    vocab_file.write_text(json.dumps(vocab), encoding="utf-8")
    merges_file.write_text(
        "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges), encoding="utf-8"
    )
    return CLIPTokenizer(
        vocab=str(vocab_file), merges=str(merges_file), model_max_length=_MAX_TOKENS
    )


def _text_config(vocab_size: int, projection_dim: int = _TEXT_HIDDEN) -> Any:
    from transformers import CLIPTextConfig

    return CLIPTextConfig(
        vocab_size=vocab_size,
        hidden_size=_TEXT_HIDDEN,
        intermediate_size=37,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=_MAX_TOKENS,
        projection_dim=projection_dim,
        bos_token_id=vocab_size - 2,
        eos_token_id=vocab_size - 1,
        pad_token_id=vocab_size - 1,
        hidden_act="gelu",
    )


def _vae() -> Any:
    from diffusers import AutoencoderKL

    # Three blocks: a scale factor of 4, so 64x64 images use 16x16 latents.
    return AutoencoderKL(
        block_out_channels=(16, 32, 32),
        in_channels=3,
        out_channels=3,
        down_block_types=("DownEncoderBlock2D",) * 3,
        up_block_types=("UpDecoderBlock2D",) * 3,
        latent_channels=4,
        norm_num_groups=8,
        layers_per_block=1,
        sample_size=64,
    )


def _scheduler() -> Any:
    from diffusers import EulerDiscreteScheduler

    # Euler (not ancestral) adds no noise during sampling, so an image depends
    # only on its own generator's initial latents.
    return EulerDiscreteScheduler(
        beta_start=0.00085,
        beta_end=0.012,
        beta_schedule="scaled_linear",
        timestep_spacing="leading",
        steps_offset=1,
    )


def _sd_pipeline(work: Path) -> Any:
    from diffusers import StableDiffusionPipeline, UNet2DConditionModel
    from transformers import CLIPTextModel

    tokenizer = _tokenizer(work)
    text_encoder = CLIPTextModel(_text_config(len(tokenizer)))
    unet = UNet2DConditionModel(
        block_out_channels=(32, 64),
        layers_per_block=1,
        sample_size=16,  # 16 latents * 4 = 64 px, the pipeline's own default size
        in_channels=4,
        out_channels=4,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        cross_attention_dim=_TEXT_HIDDEN,
        attention_head_dim=8,
        norm_num_groups=32,
    )
    return StableDiffusionPipeline(
        vae=_vae(),
        text_encoder=text_encoder,
        tokenizer=tokenizer,
        unet=unet,
        scheduler=_scheduler(),
        safety_checker=None,
        feature_extractor=None,
        requires_safety_checker=False,
    )


def _sdxl_pipeline(work: Path) -> Any:
    from diffusers import StableDiffusionXLPipeline, UNet2DConditionModel
    from transformers import CLIPTextModel, CLIPTextModelWithProjection

    tokenizer = _tokenizer(work)
    tokenizer_2 = _tokenizer(work)
    text_encoder = CLIPTextModel(_text_config(len(tokenizer)))
    text_encoder_2 = CLIPTextModelWithProjection(
        _text_config(len(tokenizer_2), projection_dim=_TEXT_HIDDEN)
    )
    time_dim = 8
    unet = UNet2DConditionModel(
        block_out_channels=(32, 64),
        layers_per_block=1,
        sample_size=16,
        in_channels=4,
        out_channels=4,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        # SDXL conditions on both encoders' hidden states, concatenated ...
        cross_attention_dim=2 * _TEXT_HIDDEN,
        attention_head_dim=(2, 4),
        use_linear_projection=True,
        # ... and on the pooled text embedding plus six size/crop numbers.
        addition_embed_type="text_time",
        addition_time_embed_dim=time_dim,
        transformer_layers_per_block=(1, 2),
        projection_class_embeddings_input_dim=6 * time_dim + _TEXT_HIDDEN,
        norm_num_groups=32,
    )
    return StableDiffusionXLPipeline(
        vae=_vae(),
        text_encoder=text_encoder,
        text_encoder_2=text_encoder_2,
        tokenizer=tokenizer,
        tokenizer_2=tokenizer_2,
        unet=unet,
        scheduler=_scheduler(),
        force_zeros_for_empty_prompt=True,
    )
