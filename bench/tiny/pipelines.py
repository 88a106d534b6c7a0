"""Tiny random diffusers pipelines, built from config, for tests and the demo.

They have the same layout on disk as real checkpoints (``model_index.json`` plus
one folder per component), so they load through the very same
``diffusers:<path>`` code path as a hub model. Their weights are random (seeded,
so every build is identical) and they draw noise, not text: they exist to
exercise the machinery, never to be scored as a model.

Each built folder carries a ``glyphbench_tiny.json`` marker. The diffusers
adapter reports it as ``"tiny_random": true`` and takes the small defaults it
holds (64x64 pixels, 2 steps) in place of the family's real ones.

Usage: ``build_tiny_sd("/tmp/tiny-sd")`` returns the folder's path (the tests build
one per session through the same function).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from glyphbench.tiny.parts import clip_tokenizer_in

#: File that marks a folder as a tiny random pipeline built here.
TINY_MARKER = "glyphbench_tiny.json"

#: Settings the adapter uses for tiny pipelines unless the config overrides them.
TINY_DEFAULTS: dict[str, Any] = {"height": 64, "width": 64, "steps": 2, "guidance": 5.0}

_SEED = 0
_TEXT_HIDDEN = 32  # hidden size of each tiny CLIP text encoder
_MAX_TOKENS = 32  # tokenizer model_max_length / text encoder positions


def build_tiny_sd(path: str | Path) -> Path:
    """Build (or reuse) a tiny random Stable-Diffusion-1.x-style pipeline at ``path``."""
    return _build(Path(path), "sd", TINY_DEFAULTS)


def build_tiny_sdxl(path: str | Path) -> Path:
    """Build (or reuse) a tiny random SDXL-style pipeline (two text encoders) at ``path``."""
    return _build(Path(path), "sdxl", TINY_DEFAULTS)


def build_tiny_if(path: str | Path) -> tuple[Path, Path]:
    """Build (or reuse) a tiny random DeepFloyd-IF-style cascade: ``(stage I, stage II)``.

    Stage I (``IFPipeline``, T5 text encoder) makes 16 px images and stage II
    (``IFSuperResolutionPipeline``) upsamples them to 32 px; they are saved in
    ``path/stage1`` and ``path/stage2``. Use as
    ``diffusers:<stage I>?stage2=<stage II>``.
    """
    root = Path(path)
    stage1_defaults = {**TINY_DEFAULTS, "height": 16, "width": 16, "stage2_steps": 2}
    stage1 = _build(root / "stage1", "if-stage1", stage1_defaults)
    stage2 = _build(root / "stage2", "if-stage2", {})
    return stage1, stage2


def read_marker(path: str | Path) -> dict[str, Any] | None:
    """The marker's content, or None when ``path`` is not a tiny pipeline."""
    marker = Path(path) / TINY_MARKER
    if not marker.is_file():
        return None
    data: dict[str, Any] = json.loads(marker.read_text(encoding="utf-8"))
    return data


def _build(path: Path, style: str, defaults: dict[str, Any]) -> Path:
    builders = {
        "sd": _sd_pipeline,
        "sdxl": _sdxl_pipeline,
        "if-stage1": _if_stage1_pipeline,
        "if-stage2": _if_stage2_pipeline,
    }
    return build_tiny_pipeline(path, style, builders[style], defaults)


def build_tiny_pipeline(
    path: str | Path,
    style: str,
    make: Callable[[Path], Any],
    defaults: Mapping[str, Any],
    call_kwargs: Mapping[str, Any] | None = None,
) -> Path:
    """Build (or reuse) the pipeline ``make(work_dir)`` returns at ``path``, with a marker.

    ``style`` names the build in the marker (a folder holding the same style is
    reused); ``defaults`` are the settings the adapter uses for it (small sizes,
    few steps); ``call_kwargs`` are ``__call__`` arguments a tiny build needs on
    top of the family's (Sana-Sprint: no resolution binning, which would make
    1024 px images). Torch is seeded with :data:`_SEED` first, so builds repeat
    exactly. The family modules build their tiny pipelines through this function.
    """
    path = Path(path)
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
        pipe = make(Path(tok_dir))
        pipe.save_pretrained(str(path), safe_serialization=True)
    info: dict[str, Any] = {
        "tiny_random": True,
        "style": style,
        "seed": _SEED,
        "note": "tiny random diffusers pipeline built locally by glyphbench; draws noise, not text",
        "defaults": dict(defaults),
    }
    if call_kwargs:
        info["call_kwargs"] = dict(call_kwargs)
    (path / TINY_MARKER).write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return path


# --- components -------------------------------------------------------------


def _tokenizer(work: Path, max_length: int = _MAX_TOKENS) -> Any:
    """A CLIP tokenizer from a small vocab: :func:`glyphbench.tiny.parts.clip_tokenizer_in`."""
    return clip_tokenizer_in(work, max_length)


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


# --- DeepFloyd-IF-style cascade ------------------------------------------------


def _t5_parts() -> tuple[Any, Any]:
    """A T5 tokenizer from a small unigram vocabulary, and a 2-layer T5 encoder."""
    from transformers import T5Config, T5EncoderModel, T5Tokenizer

    pieces = ["<pad>", "</s>", "<unk>", "\u2581"]
    pieces += [chr(c) for c in range(ord("a"), ord("z") + 1)]
    pieces += ["\u2581" + chr(c) for c in range(ord("a"), ord("z") + 1)]
    pieces += [chr(c) for c in range(ord("0"), ord("9") + 1)]
    vocab = [(piece, 0.0 if i < 3 else -float(i)) for i, piece in enumerate(pieces)]
    tokenizer = T5Tokenizer(vocab=vocab, extra_ids=0, model_max_length=_MAX_TOKENS)
    config = T5Config(
        vocab_size=len(tokenizer),
        d_model=_TEXT_HIDDEN,
        d_ff=37,
        d_kv=8,
        num_layers=2,
        num_heads=4,
        pad_token_id=0,
        eos_token_id=1,
    )
    return tokenizer, T5EncoderModel(config)


def _if_scheduler() -> Any:
    from diffusers import DDPMScheduler

    return DDPMScheduler(
        num_train_timesteps=1000,
        beta_schedule="squaredcos_cap_v2",
        thresholding=True,
        dynamic_thresholding_ratio=0.95,
        sample_max_value=1.0,
        prediction_type="epsilon",
        variance_type="learned_range",
    )


def _if_unet(in_channels: int, sample_size: int, **extra: Any) -> Any:
    from diffusers import UNet2DConditionModel

    return UNet2DConditionModel(
        sample_size=sample_size,
        layers_per_block=1,
        block_out_channels=(32, 64),
        down_block_types=("ResnetDownsampleBlock2D", "SimpleCrossAttnDownBlock2D"),
        mid_block_type="UNetMidBlock2DSimpleCrossAttn",
        up_block_types=("SimpleCrossAttnUpBlock2D", "ResnetUpsampleBlock2D"),
        in_channels=in_channels,
        out_channels=6,  # 3 noise channels + 3 variance channels ("learned_range")
        cross_attention_dim=_TEXT_HIDDEN,
        encoder_hid_dim=_TEXT_HIDDEN,
        attention_head_dim=8,
        addition_embed_type="text",
        addition_embed_type_num_heads=2,
        cross_attention_norm="group_norm",
        resnet_time_scale_shift="scale_shift",
        act_fn="gelu",
        **extra,
    )


def _if_stage1_pipeline(work: Path) -> Any:
    from diffusers import IFPipeline

    tokenizer, text_encoder = _t5_parts()
    return IFPipeline(
        tokenizer=tokenizer,
        text_encoder=text_encoder,
        unet=_if_unet(3, 16),
        scheduler=_if_scheduler(),
        safety_checker=None,
        feature_extractor=None,
        watermarker=None,
        requires_safety_checker=False,
    )


def _if_stage2_pipeline(work: Path) -> Any:
    from diffusers import DDPMScheduler, IFSuperResolutionPipeline

    tokenizer, text_encoder = _t5_parts()
    # Stage II sees the noisy upsampled stage I image next to its own noise (6 channels)
    # and is told the noise level through a timestep class embedding.
    unet = _if_unet(
        6,
        32,
        class_embed_type="timestep",
        mid_block_scale_factor=1.414,
        time_embedding_act_fn="gelu",
        time_embedding_dim=32,
    )
    return IFSuperResolutionPipeline(
        tokenizer=tokenizer,
        text_encoder=text_encoder,
        unet=unet,
        scheduler=_if_scheduler(),
        image_noising_scheduler=DDPMScheduler(
            num_train_timesteps=1000, beta_schedule="squaredcos_cap_v2"
        ),
        safety_checker=None,
        feature_extractor=None,
        watermarker=None,
        requires_safety_checker=False,
    )
