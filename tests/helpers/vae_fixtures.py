"""Tiny random autoencoders built from config, shared by the VAE tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def tiny_autoencoder_kl(**overrides: Any) -> Any:
    """Two 8/16-channel blocks, 4 latent channels, seeded weights; ``overrides`` edit the config."""
    import diffusers
    import torch

    torch.manual_seed(0)
    config: dict[str, Any] = {
        "block_out_channels": (8, 16),
        "down_block_types": ("DownEncoderBlock2D",) * 2,
        "up_block_types": ("UpDecoderBlock2D",) * 2,
        "latent_channels": 4,
        "norm_num_groups": 8,
        "layers_per_block": 1,
        "sample_size": 64,
        **overrides,
    }
    autoencoder_kl: Any = diffusers.AutoencoderKL  # untyped in diffusers
    return autoencoder_kl(**config)


# --------------------------------------------------------------------------- every class

#: Small kwargs shared by the 2-D KL-style autoencoders (two blocks: one halving).
_KL_BLOCKS: dict[str, Any] = {
    "block_out_channels": (8, 16),
    "down_block_types": ("DownEncoderBlock2D",) * 2,
    "up_block_types": ("UpDecoderBlock2D",) * 2,
    "latent_channels": 4,
    "norm_num_groups": 8,
    "layers_per_block": 1,
    "sample_size": 32,
}
#: Wan-style 3-D VAEs: base width 8, one spatial halving, no temporal one; non-trivial
#: latent statistics so that the per-channel normalisation is really exercised.
_VIDEO: dict[str, Any] = {
    "base_dim": 8,
    "z_dim": 4,
    "dim_mult": [1, 2],
    "num_res_blocks": 1,
    "temperal_downsample": [False],
    "latents_mean": [0.1, -0.2, 0.3, 0.0],
    "latents_std": [2.0, 0.5, 1.5, 1.0],
}


def _flux2() -> Any:
    import diffusers
    import torch

    flux2: Any = diffusers.AutoencoderKLFlux2  # untyped in diffusers
    vae = flux2(**_KL_BLOCKS, mid_block_add_attention=False)
    with torch.no_grad():  # non-trivial batch-norm statistics (fresh ones are 0 and 1)
        vae.bn.running_mean.copy_(torch.linspace(-0.5, 0.5, vae.bn.running_mean.numel()))
        vae.bn.running_var.copy_(torch.linspace(0.5, 2.0, vae.bn.running_var.numel()))
    return vae


def _build(class_name: str, **kwargs: Any) -> Callable[[], Any]:
    def build() -> Any:
        import diffusers

        return getattr(diffusers, class_name)(**kwargs)

    return build


#: A tiny random build of every autoencoder class the ``diffusers:`` codec supports.
TINY_BUILDS: dict[str, Callable[[], Any]] = {
    "AutoencoderKL": _build("AutoencoderKL", **_KL_BLOCKS, shift_factor=0.1),
    "AsymmetricAutoencoderKL": _build(
        "AsymmetricAutoencoderKL",
        down_block_types=("DownEncoderBlock2D",) * 2,
        down_block_out_channels=(8, 16),
        layers_per_down_block=1,
        up_block_types=("UpDecoderBlock2D",) * 2,
        up_block_out_channels=(8, 16),
        layers_per_up_block=1,
        latent_channels=4,
        norm_num_groups=8,
        sample_size=32,
    ),
    "AutoencoderKLFlux2": _flux2,
    "AutoencoderKLHunyuanImage": _build(
        "AutoencoderKLHunyuanImage",
        in_channels=3,
        out_channels=3,
        latent_channels=8,
        block_out_channels=(32, 64),  # its group norms have 32 groups
        layers_per_block=1,
        spatial_compression_ratio=2,
        sample_size=32,
        scaling_factor=0.75,
    ),
    "AutoencoderKLHunyuanImageRefiner": _build(
        "AutoencoderKLHunyuanImageRefiner",
        latent_channels=8,
        block_out_channels=(32, 32, 32),
        layers_per_block=1,
        spatial_compression_ratio=4,
        temporal_compression_ratio=4,
    ),
    "AutoencoderTiny": _build(
        "AutoencoderTiny",
        encoder_block_out_channels=(8, 8),
        decoder_block_out_channels=(8, 8),
        num_encoder_blocks=(1, 1),
        num_decoder_blocks=(1, 1),
        latent_channels=4,
    ),
    "AutoencoderDC": _build(
        "AutoencoderDC",
        in_channels=3,
        latent_channels=4,
        attention_head_dim=8,
        encoder_block_types=("ResBlock", "ResBlock"),
        decoder_block_types=("ResBlock", "ResBlock"),
        encoder_block_out_channels=(8, 16),
        decoder_block_out_channels=(8, 16),
        encoder_layers_per_block=(1, 1),
        decoder_layers_per_block=(1, 1),
        encoder_qkv_multiscales=((), ()),
        decoder_qkv_multiscales=((), ()),
        upsample_block_type="interpolate",
        downsample_block_type="Conv",
        decoder_norm_types="rms_norm",
        decoder_act_fns="silu",
        scaling_factor=0.41,
    ),
    "VQModel": _build("VQModel", **_KL_BLOCKS, num_vq_embeddings=16),
    "AutoencoderKLQwenImage": _build("AutoencoderKLQwenImage", **_VIDEO),
    "AutoencoderKLQwenImage21": _build(  # RGBA in and out (4 channels), residual blocks
        "AutoencoderKLQwenImage21",
        **{**_VIDEO, "dim_mult": [1, 2, 2], "temperal_downsample": [False, False]},
        decoder_base_dim=8,
    ),
    "AutoencoderKLWan": _build("AutoencoderKLWan", **_VIDEO),
}
