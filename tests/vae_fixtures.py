"""A tiny, seeded AutoencoderKL built from config, shared by the VAE tests."""

from __future__ import annotations

from typing import Any


def tiny_autoencoder_kl(**overrides: Any) -> Any:
    """Two 8/16-channel blocks, 4 latent channels, seeded weights; ``overrides`` edit the config."""
    import torch
    from diffusers import AutoencoderKL

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
    return AutoencoderKL(**config)
