# mypy: disable-error-code="no-untyped-call"
"""A full-size Qwen-Image-architecture pipeline with random weights, built from config.

The 2026 counterpart of :mod:`benchmarks.fullsize` (SDXL) for
``benchmarks/bench_pipeline.py --arch qwen-image-full``: Qwen/Qwen-Image's
published component configs written out by hand (the 20B MMDiT transformer,
the Qwen2.5-VL-7B text encoder, the Qwen-Image VAE, the flow-matching
scheduler), every weight seeded random, saved with ``save_pretrained`` in the
checkpoint's layout, so it loads through the normal ``diffusers:<path>``
adapter as family ``qwen-image`` (1328 px, 50 steps, true CFG 4 with the card's
" " negative prompt: two transformer passes per step).

The weights are untrained: images are noise, never a model's quality. The
tokenizer is the tiny pipelines' small byte-level Qwen tokenizer (ids stay far
below the encoder's 152,064-row embedding table), so prompts are split into
more tokens than the real vocabulary would give; the encoder's cost is real.

Size: 28.85 billion parameters, 57.7 GB in bfloat16 (the transformer alone 40.9
GB). Each component is created in the target dtype and freed after saving, so
peak memory is the transformer plus the interpreter (about 42 GB in bfloat16)
and the folder needs about 58 GB of disk: a GPU machine's job, not a laptop's.

Usage (a GPU machine's job, so not a doctest):
``build_qwen_image_architecture("/data/qwen-image-random")`` returns the folder's path.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.fullsize import build_architecture

#: Checkpoint whose architecture is reproduced.
ARCHITECTURE = "qwen-image"

#: Marker ``style`` of this build.
STYLE = "qwen-image-full"

#: Parameter counts of the components built here. The transformer's times two
#: bytes is the 40.9 GB the hub lists for Qwen/Qwen-Image's transformer folder;
#: the text encoder's is Qwen2.5-VL-7B-Instruct's published 8.29B. The VAE's is
#: the count of the config below (diffusers' defaults for this class).
PARAMETER_COUNTS: dict[str, int] = {
    "transformer": 20_430_401_088,
    "text_encoder": 8_292_166_656,
    "vae": 126_892_531,
}

# --- published configs (Qwen/Qwen-Image) -------------------------------------------


def transformer_config() -> dict[str, Any]:
    """``QwenImageTransformer2DModel`` arguments of Qwen-Image's ``transformer/config.json``."""
    return {
        "patch_size": 2,
        "in_channels": 64,  # 16 latent channels packed 2x2
        "out_channels": 16,
        "num_layers": 60,
        "attention_head_dim": 128,
        "num_attention_heads": 24,
        "joint_attention_dim": 3584,  # Qwen2.5-VL-7B's hidden size
        "guidance_embeds": False,
        "axes_dims_rope": (16, 56, 56),  # frame, height, width; sums to the head size
    }


def vae_config() -> dict[str, Any]:
    """``AutoencoderKLQwenImage`` arguments (a causal 3D VAE: 8x spatial, 16 channels)."""
    return {
        "base_dim": 96,
        "z_dim": 16,
        "dim_mult": [1, 2, 4, 4],
        "num_res_blocks": 2,
        "attn_scales": [],
        "temperal_downsample": [False, True, True],
        "dropout": 0.0,
    }


def text_encoder_config() -> dict[str, Any]:
    """``Qwen2_5_VLConfig`` arguments of Qwen2.5-VL-7B-Instruct (Qwen-Image's ``text_encoder``)."""
    return {
        "text_config": {
            "vocab_size": 152064,
            "hidden_size": 3584,
            "intermediate_size": 18944,
            "num_hidden_layers": 28,
            "num_attention_heads": 28,
            "num_key_value_heads": 4,
            "max_position_embeddings": 128000,
            "rms_norm_eps": 1e-6,
            "rope_theta": 1_000_000.0,
            "hidden_act": "silu",
            "tie_word_embeddings": False,
            "rope_scaling": {
                "type": "mrope",
                "mrope_section": [16, 24, 24],
                "rope_type": "default",
            },
        },
        "vision_config": {
            "depth": 32,
            "hidden_size": 1280,
            "intermediate_size": 3420,
            "num_heads": 16,
            "out_hidden_size": 3584,
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
            "window_size": 112,
            "fullatt_block_indexes": [7, 15, 23, 31],
            "in_chans": 3,
            "hidden_act": "silu",
        },
        "image_token_id": 151655,
        "video_token_id": 151656,
        "vision_start_token_id": 151652,
        "vision_end_token_id": 151653,
        "tie_word_embeddings": False,
    }


def scheduler_config() -> dict[str, Any]:
    """``FlowMatchEulerDiscreteScheduler`` settings of Qwen-Image (dynamic, exponential shift)."""
    return {
        "num_train_timesteps": 1000,
        "shift": 1.0,
        "use_dynamic_shifting": True,
        "base_shift": 0.5,
        "max_shift": 0.9,
        "base_image_seq_len": 256,
        "max_image_seq_len": 8192,
        "shift_terminal": 0.02,
        "time_shift_type": "exponential",
        "invert_sigmas": False,
        "stochastic_sampling": False,
        "use_karras_sigmas": False,
        "use_exponential_sigmas": False,
        "use_beta_sigmas": False,
    }


# --- components -------------------------------------------------------------------


def _transformer() -> Any:
    from diffusers import QwenImageTransformer2DModel

    return QwenImageTransformer2DModel(**transformer_config())


def _vae() -> Any:
    from diffusers import AutoencoderKLQwenImage

    return AutoencoderKLQwenImage(**vae_config())


def _text_encoder() -> Any:
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    return Qwen2_5_VLForConditionalGeneration(Qwen2_5_VLConfig(**text_encoder_config()))


#: Weighted components in build order (smallest first: a failure shows up early).
COMPONENTS: dict[str, Callable[[], Any]] = {
    "vae": _vae,
    "text_encoder": _text_encoder,
    "transformer": _transformer,
}


def meta_components() -> dict[str, Any]:
    """Every weighted component on the meta device: full configs, no memory (for tests)."""
    from accelerate import init_empty_weights

    with init_empty_weights():
        return {name: make() for name, make in COMPONENTS.items()}


def bfloat16_gigabytes() -> float:
    """Weights in bfloat16, in GB (10^9 bytes).

    >>> bfloat16_gigabytes()
    57.7
    """
    return round(2 * sum(PARAMETER_COUNTS.values()) / 1e9, 1)


# --- build ------------------------------------------------------------------------


def build_qwen_image_architecture(
    path: str | Path, *, dtype: str = "bfloat16", seed: int = 0
) -> Path:
    """Build (or reuse) a random-weight Qwen-Image-architecture pipeline at ``path``.

    ``dtype`` is the saved weights' dtype; each component is seeded with ``seed``
    plus its position in :data:`COMPONENTS`. A folder whose marker records the
    same architecture, dtype and seed is reused; the marker is written last, so
    an interrupted build is redone.
    """
    return build_architecture(
        path,
        style=STYLE,
        components=COMPONENTS,
        light_parts=save_light_parts,
        marker=marker_info(dtype, seed),
        dtype=dtype,
        seed=seed,
    )


def marker_info(dtype: str, seed: int) -> dict[str, Any]:
    """Marker content: random but full size, no tiny defaults (the family's settings apply)."""
    return {
        "tiny_random": False,
        "random_weights": True,
        "architecture": ARCHITECTURE,
        "style": STYLE,
        "dtype": dtype,
        "seed": seed,
        "parameters": dict(PARAMETER_COUNTS),
        "note": (
            "full-size Qwen-Image architecture with random weights, built locally by "
            "glyphbench for throughput benchmarks; draws noise, not text"
        ),
    }


def save_light_parts(root: Path) -> None:
    """Tokenizer, scheduler and ``model_index.json`` (written by diffusers from meta parts)."""
    from diffusers import FlowMatchEulerDiscreteScheduler, QwenImagePipeline

    from glyphbench.tiny.parts import qwen_tokenizer

    scheduler: Any = FlowMatchEulerDiscreteScheduler(**scheduler_config())
    tokenizer = qwen_tokenizer()
    shutil.rmtree(root / "tokenizer", ignore_errors=True)
    tokenizer.save_pretrained(str(root / "tokenizer"))
    scheduler.save_pretrained(str(root / "scheduler"))
    pipe: Any = QwenImagePipeline(scheduler=scheduler, tokenizer=tokenizer, **meta_components())
    pipe.save_config(str(root))
