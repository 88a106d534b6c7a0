# mypy: disable-error-code="no-untyped-call"
"""Sana (NVIDIA): linear-attention DiT with a Gemma-2-2B encoder and a 32x DC-AE; Sana-Sprint.

Sana-Sprint is Sana 1.6B distilled (sCM + LADD) to 1-4 steps with a guidance
embedding. Both pipelines prepend a "complex human instruction" (a fixed
prompt-rewriting instruction the Gemma encoder reads before the prompt; the
models were trained with it): the ``chi`` quirk, on by default as in diffusers,
``quirks=-chi`` turns it off. Sources: docs/models.md [9], [23].
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glyphbench.models.families import Family, Quirk, register_family
from glyphbench.tiny.parts import gemma2_encoder, gemma_tokenizer
from glyphbench.tiny.pipelines import build_tiny_pipeline

TINY_SETTINGS = {"height": 32, "width": 32, "steps": 2, "guidance": 4.5}

_CHI = Quirk(
    "chi",
    "the pipeline's 'complex human instruction' prepended for the Gemma encoder "
    "(on by default, as the pipelines and cards have it)",
    default=True,
    call_off={"complex_human_instruction": None},
)


def build_tiny_sana_sprint(path: str | Path) -> Path:
    """A tiny random ``SanaSprintPipeline`` (Gemma2 encoder, tiny DC-AE, SCM scheduler).

    Resolution binning is off in the tiny build: with it the pipeline would draw
    at the nearest 1024-px bin and resize down.
    """
    return build_tiny_pipeline(
        path,
        "sana-sprint",
        _make_sana_sprint,
        TINY_SETTINGS,
        call_kwargs={"use_resolution_binning": False},
    )


def _dc_ae() -> Any:
    from diffusers import AutoencoderDC

    return AutoencoderDC(
        in_channels=3,
        latent_channels=4,
        attention_head_dim=2,
        encoder_block_types=("ResBlock", "EfficientViTBlock"),
        decoder_block_types=("ResBlock", "EfficientViTBlock"),
        encoder_block_out_channels=(8, 8),
        decoder_block_out_channels=(8, 8),
        encoder_qkv_multiscales=((), (5,)),
        decoder_qkv_multiscales=((), (5,)),
        encoder_layers_per_block=(1, 1),
        decoder_layers_per_block=(1, 1),
        downsample_block_type="conv",
        upsample_block_type="interpolate",
        decoder_norm_types="rms_norm",
        decoder_act_fns="silu",
        scaling_factor=0.41407,
    )


def _make_sana_sprint(work: Path) -> Any:
    from diffusers import SanaSprintPipeline, SanaTransformer2DModel, SCMScheduler

    tokenizer = gemma_tokenizer()
    transformer = SanaTransformer2DModel(
        patch_size=1,
        in_channels=4,
        out_channels=4,
        num_layers=1,
        num_attention_heads=2,
        attention_head_dim=4,
        num_cross_attention_heads=2,
        cross_attention_head_dim=4,
        cross_attention_dim=8,
        caption_channels=16,
        sample_size=32,
        qk_norm="rms_norm_across_heads",
        guidance_embeds=True,
    )
    return SanaSprintPipeline(
        tokenizer=tokenizer,
        text_encoder=gemma2_encoder(tokenizer, 16),
        vae=_dc_ae(),
        transformer=transformer,
        scheduler=SCMScheduler(),
    )


register_family(
    Family(
        "sana",
        ("SanaPipeline",),
        1024,
        1024,
        20,
        4.5,
        "bfloat16",
        max_sequence_length=300,
        quirks=(_CHI,),
        notes="Sana 1.6B 1024 px (Gemma-2 text encoder). The *_BF16 repos ship variant 'bf16'.",
        id_patterns=(r"sana",),
        match_order=70,
        parameters={"transformer": 1.6, "text_encoder": 2.61, "vae": 0.31},
        sources="[9] Sana docs example; max seq = pipeline default",
    ),
    Family(
        "sana-sprint",
        ("SanaSprintPipeline",),
        1024,
        1024,
        2,
        4.5,
        "bfloat16",
        max_sequence_length=300,
        quirks=(_CHI,),
        notes=(
            "Sana-Sprint 1.6B/0.6B: 2 steps with a guidance embedding of 4.5 (pipeline and card "
            "defaults; max_timesteps 1.5708 and intermediate_timesteps 1.3 left to the pipeline). "
            "Resolution binning to 1024-px aspect-ratio bins stays on."
        ),
        id_patterns=(r"sana[.\-_]?sprint",),
        match_order=69,
        parameters={"transformer": 1.6, "text_encoder": 2.61, "vae": 0.31},
        sources="[23] card example (pipeline defaults: 2 steps, guidance 4.5)",
        tiny=build_tiny_sana_sprint,
        tiny_note="resolution binning is off in the tiny build (it would draw 1024 px)",
    ),
)
