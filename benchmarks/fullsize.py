"""A full-size SDXL-base-1.0-architecture pipeline with random weights, built from config.

For GPU throughput benchmarks (``benchmarks/bench_pipeline.py --arch sdxl-full``):
model hubs may be unreachable, yet a benchmark of the harness against a bare
diffusers loop should pay real SDXL FLOPs and memory traffic. This module writes
SDXL base 1.0's published component configs out by hand (UNet, VAE, the CLIP
ViT-L/14 and OpenCLIP bigG/14 text encoders, the Euler scheduler), fills every
weight with seeded random numbers and saves the result with ``save_pretrained``
in the same layout as the real checkpoint, so it loads through the normal
``diffusers:<path>`` adapter.

The weights are untrained: images are noise, never a model's quality. The
tokenizers come from the tiny pipelines' small byte-level vocabulary (every
token id stays far below the encoders' 49,408-row embedding tables) but keep
SDXL's 77-token limit.

The folder carries the same marker file as the tiny pipelines
(:data:`glyphbench.tiny.pipelines.TINY_MARKER`) with ``"tiny_random": false`` and
``"random_weights": true``; the adapter's ``describe()`` then reports it as
random and full size, and uses the SDXL family's real defaults (1024 px, 50
steps) rather than the tiny ones.

Memory: the parameters total about 3.47 billion (13.9 GB in float32). Each
component is created directly in the target dtype (the default dtype is
switched while its modules are constructed), saved, and freed before the next
one, so peak memory is about the largest component in that dtype (the UNet:
5.1 GB in float16) plus the interpreter.

Usage (writes 7-14 GB by dtype, so not a doctest): ``build_sdxl_architecture("/tmp/sdxl-random")``
returns the folder's path.
"""

from __future__ import annotations

import gc
import json
import shutil
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from glyphbench.tiny.pipelines import TINY_MARKER, _tokenizer, read_marker

#: Checkpoint whose architecture is reproduced.
ARCHITECTURE = "sdxl-base-1.0"

#: Marker ``style`` of a full-size build (the tiny builds use "sd", "sdxl", ...).
STYLE = "sdxl-full"

#: SDXL's text encoders (and so its tokenizers) read at most 77 tokens.
MAX_TOKENS = 77

#: Parameter counts of stabilityai/stable-diffusion-xl-base-1.0's components.
PARAMETER_COUNTS: dict[str, int] = {
    "unet": 2_567_463_684,
    "vae": 83_653_863,
    "text_encoder": 123_060_480,
    "text_encoder_2": 694_659_840,
}

DTYPES = ("float16", "bfloat16", "float32")

# --- published configs (SDXL base 1.0) -----------------------------------------


def unet_config() -> dict[str, Any]:
    """``UNet2DConditionModel`` keyword arguments of SDXL base 1.0's ``unet/config.json``."""
    return {
        "sample_size": 128,  # latents: 1024 px / 8
        "in_channels": 4,
        "out_channels": 4,
        "block_out_channels": (320, 640, 1280),
        "layers_per_block": 2,
        "down_block_types": ("DownBlock2D", "CrossAttnDownBlock2D", "CrossAttnDownBlock2D"),
        "up_block_types": ("CrossAttnUpBlock2D", "CrossAttnUpBlock2D", "UpBlock2D"),
        "mid_block_type": "UNetMidBlock2DCrossAttn",
        # The mid block takes the last entry (10 transformer layers) too.
        "transformer_layers_per_block": (1, 2, 10),
        # Named "head dim" but read by diffusers as the number of heads (5, 10, 20),
        # i.e. 64 channels per head in every block.
        "attention_head_dim": (5, 10, 20),
        "cross_attention_dim": 2048,  # 768 (CLIP-L) + 1280 (bigG) hidden states, concatenated
        "use_linear_projection": True,
        # Extra conditioning: bigG's pooled embedding (1280) plus six size/crop
        # numbers embedded with 256 channels each: 1280 + 6 * 256 = 2816.
        "addition_embed_type": "text_time",
        "addition_time_embed_dim": 256,
        "projection_class_embeddings_input_dim": 2816,
        "norm_num_groups": 32,
        "norm_eps": 1e-5,
        "act_fn": "silu",
        "flip_sin_to_cos": True,
        "freq_shift": 0,
        "upcast_attention": False,
    }


def vae_config() -> dict[str, Any]:
    """``AutoencoderKL`` keyword arguments of SDXL base 1.0's ``vae/config.json``."""
    return {
        "in_channels": 3,
        "out_channels": 3,
        "block_out_channels": (128, 256, 512, 512),
        "down_block_types": ("DownEncoderBlock2D",) * 4,
        "up_block_types": ("UpDecoderBlock2D",) * 4,
        "layers_per_block": 2,
        "latent_channels": 4,
        "norm_num_groups": 32,
        "act_fn": "silu",
        "sample_size": 1024,
        "scaling_factor": 0.13025,
        # The released VAE overflows in float16, so pipelines upcast it to float32.
        "force_upcast": True,
    }


def _clip_text(hidden: int, layers: int, heads: int, act: str) -> dict[str, Any]:
    return {
        "vocab_size": 49408,
        "hidden_size": hidden,
        "intermediate_size": 4 * hidden,
        "num_hidden_layers": layers,
        "num_attention_heads": heads,
        "max_position_embeddings": MAX_TOKENS,
        "projection_dim": hidden,
        "hidden_act": act,
        "layer_norm_eps": 1e-5,
        # As published. With eos_token_id 2 CLIP pools at the highest token id
        # (its legacy rule), which is also end-of-text in the small vocab used here.
        "bos_token_id": 0,
        "eos_token_id": 2,
        "pad_token_id": 1,
    }


def text_encoder_config() -> dict[str, Any]:
    """``CLIPTextConfig`` of ``text_encoder`` (OpenAI CLIP ViT-L/14's text tower)."""
    return _clip_text(hidden=768, layers=12, heads=12, act="quick_gelu")


def text_encoder_2_config() -> dict[str, Any]:
    """``CLIPTextConfig`` of ``text_encoder_2`` (OpenCLIP ViT-bigG/14's text tower, projected)."""
    return _clip_text(hidden=1280, layers=32, heads=20, act="gelu")


def scheduler_config() -> dict[str, Any]:
    """SDXL base 1.0's ``EulerDiscreteScheduler`` settings (its scheduler_config.json)."""
    return {
        "num_train_timesteps": 1000,
        "beta_start": 0.00085,
        "beta_end": 0.012,
        "beta_schedule": "scaled_linear",
        "prediction_type": "epsilon",
        "interpolation_type": "linear",
        "use_karras_sigmas": False,
        "timestep_spacing": "leading",
        "steps_offset": 1,
    }


# --- components -------------------------------------------------------------------


def _unet() -> Any:
    from diffusers import UNet2DConditionModel

    return UNet2DConditionModel(**unet_config())


def _vae() -> Any:
    from diffusers import AutoencoderKL

    return AutoencoderKL(**vae_config())


def _text_encoder() -> Any:
    from transformers import CLIPTextConfig, CLIPTextModel

    return CLIPTextModel(CLIPTextConfig(**text_encoder_config()))


def _text_encoder_2() -> Any:
    from transformers import CLIPTextConfig, CLIPTextModelWithProjection

    return CLIPTextModelWithProjection(CLIPTextConfig(**text_encoder_2_config()))


#: Weighted components in build order (smallest first: a failure shows up early).
COMPONENTS: dict[str, Callable[[], Any]] = {
    "vae": _vae,
    "text_encoder": _text_encoder,
    "text_encoder_2": _text_encoder_2,
    "unet": _unet,
}


def meta_components() -> dict[str, Any]:
    """Every weighted component on the meta device: full configs, no memory (for tests).

    Parameter counts: vae 83,653,863; text_encoder 123,060,480; text_encoder_2
    694,659,840; unet 2,567,463,684 (checked in tests/bench/models/test_models_fullsize.py).
    """
    from accelerate import init_empty_weights

    with init_empty_weights():
        return {name: make() for name, make in COMPONENTS.items()}


def parameter_count(module: Any) -> int:
    """Number of parameters of a torch module (shared ones counted once)."""
    return sum(p.numel() for p in module.parameters())


@contextmanager
def _default_dtype(dtype: Any) -> Iterator[None]:
    """Create new float tensors in ``dtype`` inside the block (modules are born in it).

    Building the UNet in float32 and casting afterwards would need 10.3 GB at once;
    creating it in float16 needs half that and gives the same kind of weights.
    """
    import torch

    previous = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


# --- build ------------------------------------------------------------------------


def build_sdxl_architecture(path: str | Path, *, dtype: str = "float16", seed: int = 0) -> Path:
    """Build (or reuse) a random-weight SDXL-base-1.0-architecture pipeline at ``path``.

    ``dtype`` (float16, bfloat16 or float32) is the dtype of the saved weights.
    Each component is seeded with ``seed`` plus its position in :data:`COMPONENTS`,
    so a build is reproducible. A folder whose marker records the same
    architecture, dtype and seed is reused as it is; any other content is
    overwritten. The marker is written last, so an interrupted build is redone.
    About 7 GB on disk in float16 (14 GB in float32).
    """
    return build_architecture(
        path,
        style=STYLE,
        components=COMPONENTS,
        light_parts=_save_light_parts,
        marker=marker_info(dtype, seed),
        dtype=dtype,
        seed=seed,
    )


def build_architecture(
    path: str | Path,
    *,
    style: str,
    components: Mapping[str, Callable[[], Any]],
    light_parts: Callable[[Path], None],
    marker: dict[str, Any],
    dtype: str,
    seed: int,
) -> Path:
    """Build (or reuse) a random-weight pipeline folder, one component at a time.

    Shared by the full-size builds: each weighted component is seeded with ``seed``
    plus its position in ``components``, created in ``dtype``, saved and freed;
    ``light_parts`` writes the rest (tokenizers, scheduler, model_index.json). A
    folder whose marker records the same ``style``, dtype and seed is reused as it
    is; the marker is written last, so an interrupted build is redone.
    """
    if dtype not in DTYPES:
        raise ValueError(f"dtype must be one of {', '.join(DTYPES)}, got {dtype!r}")
    root = Path(path)
    wanted = {"style": style, "dtype": dtype, "seed": seed}
    found = read_marker(root)
    if (
        found is not None
        and all(found.get(k) == v for k, v in wanted.items())
        and (root / "model_index.json").is_file()
    ):
        return root  # idempotent: already built here
    import torch

    root.mkdir(parents=True, exist_ok=True)
    (root / TINY_MARKER).unlink(missing_ok=True)  # a rebuild is not complete until the end
    torch_dtype = getattr(torch, dtype)
    for offset, (name, make) in enumerate(components.items()):
        torch.manual_seed(seed + offset)
        with _default_dtype(torch_dtype):
            module = make()
        module.save_pretrained(str(root / name), safe_serialization=True)
        del module
        gc.collect()
    light_parts(root)
    (root / TINY_MARKER).write_text(json.dumps(marker, indent=2) + "\n", encoding="utf-8")
    return root


def marker_info(dtype: str, seed: int) -> dict[str, Any]:
    """Content of a full-size build's marker file.

    ``tiny_random`` false and ``random_weights`` true make the adapter report
    the build as random but full size; no ``defaults`` key, so the SDXL family's
    own settings (1024 px, 50 steps, guidance 5) apply.
    """
    return {
        "tiny_random": False,
        "random_weights": True,
        "architecture": ARCHITECTURE,
        "style": STYLE,
        "dtype": dtype,
        "seed": seed,
        "parameters": dict(PARAMETER_COUNTS),
        "note": (
            "full-size SDXL-base-1.0 architecture with random weights, built locally "
            "by glyphbench for throughput benchmarks; draws noise, not text"
        ),
    }


def _save_light_parts(root: Path) -> None:
    """Tokenizers, scheduler and ``model_index.json`` (the pipeline's table of contents).

    ``model_index.json`` is written by diffusers itself from a pipeline whose
    heavy components sit on the meta device, so its format always matches the
    installed diffusers.
    """
    from diffusers import EulerDiscreteScheduler, StableDiffusionXLPipeline

    scheduler: Any = EulerDiscreteScheduler(**scheduler_config())
    with tempfile.TemporaryDirectory() as work:
        tokenizer = _tokenizer(Path(work), max_length=MAX_TOKENS)
        tokenizer_2 = _tokenizer(Path(work), max_length=MAX_TOKENS)
        for name, part in (("tokenizer", tokenizer), ("tokenizer_2", tokenizer_2)):
            target = root / name
            shutil.rmtree(target, ignore_errors=True)
            part.save_pretrained(str(target))
    scheduler.save_pretrained(str(root / "scheduler"))
    parts = meta_components()
    pipe: Any = StableDiffusionXLPipeline(
        tokenizer=tokenizer,
        tokenizer_2=tokenizer_2,
        scheduler=scheduler,
        force_zeros_for_empty_prompt=True,
        **parts,
    )
    pipe.save_config(str(root))
