# mypy: disable-error-code="no-untyped-call"
"""Qwen-Image (20B MMDiT, Qwen2.5-VL encoder) and Qwen-Image 2.1 (7B, Qwen3-VL encoder).

Qwen-Image runs real classifier-free guidance through ``true_cfg_scale``, which
the pipeline only applies when a negative prompt is given: the card passes
``" "`` (a space), so that is the family's negative prompt. The card also
appends a "positive magic" suffix to every prompt; here that is the ``magic``
quirk, off unless ``quirks=magic``. Sources: docs/models.md [13]-[15].
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glyphbench.models.families import Family, Quirk, register_family
from glyphbench.tiny.parts import (
    qwen3_vl_encoder,
    qwen3_vl_processor,
    qwen25_vl_encoder,
    qwen_tokenizer,
)
from glyphbench.tiny.pipelines import build_tiny_pipeline

#: Tiny pipelines: 32 px (Qwen-Image's VAE here scales by 4, its transformer patches by 2).
#: Qwen-Image-2512's negative prompt (QwenLM/Qwen-Image README.md:100, the 2512 example).
QWEN_IMAGE_2512_NEGATIVE = (
    "低分辨率，低画质，肢体畸形，手指畸形，画面过饱和，蜡像感，人脸无细节，过度光滑，"  # noqa: RUF001
    "画面具有AI感。构图混乱。文字模糊，扭曲。"  # noqa: RUF001
)

TINY_SETTINGS = {"height": 32, "width": 32, "steps": 2, "guidance": 4.0}
#: Qwen-Image 2.1's VAE scales by 16 and its transformer reads latents unpatched.
TINY_21_SETTINGS = {"height": 32, "width": 32, "steps": 2, "guidance": 1.0}


def build_tiny_qwen_image(path: str | Path) -> Path:
    """A tiny random ``QwenImagePipeline`` (Qwen2.5-VL text encoder, 2 layers)."""
    return build_tiny_pipeline(path, "qwen-image", _make_qwen_image, TINY_SETTINGS)


def build_tiny_qwen_image_21(path: str | Path) -> Path:
    """A tiny random ``QwenImage21Pipeline`` (Qwen3-VL text encoder and processor)."""
    return build_tiny_pipeline(path, "qwen-image-2.1", _make_qwen_image_21, TINY_21_SETTINGS)


def _make_qwen_image(work: Path) -> Any:
    from diffusers import (
        AutoencoderKLQwenImage,
        FlowMatchEulerDiscreteScheduler,
        QwenImagePipeline,
        QwenImageTransformer2DModel,
    )

    tokenizer = qwen_tokenizer()
    transformer = QwenImageTransformer2DModel(
        patch_size=2,
        in_channels=16,
        out_channels=4,
        num_layers=2,
        attention_head_dim=16,
        num_attention_heads=2,
        joint_attention_dim=32,
        guidance_embeds=False,
        axes_dims_rope=(8, 4, 4),
    )
    vae = AutoencoderKLQwenImage(
        base_dim=24,
        z_dim=4,
        dim_mult=[1, 2, 4],
        num_res_blocks=1,
        temperal_downsample=[False, True],
        latents_mean=[0.0] * 4,
        latents_std=[1.0] * 4,
    )
    return QwenImagePipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(),
        vae=vae,
        text_encoder=qwen25_vl_encoder(tokenizer, width=32),
        tokenizer=tokenizer,
        transformer=transformer,
    )


def _make_qwen_image_21(work: Path) -> Any:
    from diffusers import (
        AutoencoderKLQwenImage21,
        FlowMatchEulerDiscreteScheduler,
        QwenImage21Pipeline,
        QwenImage21Transformer2DModel,
    )

    processor = qwen3_vl_processor()
    transformer = QwenImage21Transformer2DModel(**_tiny_21_transformer_config())
    vae = AutoencoderKLQwenImage21(**_tiny_21_vae_config())
    return QwenImage21Pipeline(
        scheduler=FlowMatchEulerDiscreteScheduler(),
        vae=vae,
        text_encoder=qwen3_vl_encoder(processor.tokenizer, width=32),
        processor=processor,
        transformer=transformer,
    )


def _tiny_21_transformer_config() -> dict[str, Any]:
    # Latents are read unpatched (patch 1): in/out channels are the VAE's z_dim.
    return {
        "num_layers": 2,
        "attention_head_dim": 16,
        "num_attention_heads": 2,
        "context_in_dim": 32,
        "in_channels": 4,
        "out_channels": 4,
        "axes_dims_rope": (4, 6, 6),
    }


def _tiny_21_vae_config() -> dict[str, Any]:
    # Five levels (four downsamplings): the 16x spatial factor the pipeline assumes.
    return {
        "base_dim": 8,
        "decoder_base_dim": 8,
        "z_dim": 4,
        "dim_mult": [1, 1, 1, 1, 1],
        "num_res_blocks": 1,
        "temperal_downsample": [False, True, True, True],
        "latents_mean": [0.0] * 4,
        "latents_std": [1.0] * 4,
    }


register_family(
    Family(
        "qwen-image",
        ("QwenImagePipeline",),
        1328,
        1328,
        50,
        4.0,
        "bfloat16",
        max_sequence_length=512,
        guidance_keyword="true_cfg_scale",
        negative_prompt=" ",
        quirks=(
            Quirk(
                "magic",
                "the card's 'positive magic' suffix: ', Ultra HD, 4K, cinematic composition.' "
                "(the Chinese one for Chinese prompts)",
                suffix=", Ultra HD, 4K, cinematic composition.",
                suffix_cjk=", 超清，4K，电影级构图.",  # noqa: RUF001 - the card's text
            ),
        ),
        notes=(
            "Qwen-Image: 20B MMDiT with a Qwen2.5-VL-7B text encoder. true_cfg_scale 4 with the "
            "card's negative prompt ' ' (CFG only runs with a negative prompt); 1328 px is the "
            "card's 1:1 size. guidance_scale is ignored by this (non-distilled) model."
        ),
        id_patterns=(r"qwen[.\-_]?image",),
        match_order=6,
        parameters={"transformer": 20.43, "text_encoder": 8.29, "vae": 0.13},
        sources="[13], [15] card example: 50 steps, true_cfg_scale 4, negative ' ', 1328x1328",
        tiny=build_tiny_qwen_image,
    ),
    Family(
        "qwen-image-2512",
        ("QwenImagePipeline",),
        1328,
        1328,
        50,
        4.0,
        "bfloat16",
        max_sequence_length=512,
        guidance_keyword="true_cfg_scale",
        negative_prompt=QWEN_IMAGE_2512_NEGATIVE,
        notes=(
            "Qwen-Image-2512: the December 2025 Qwen-Image weights (same pipeline). The "
            "README's 2512 example passes its own Chinese negative prompt (not Qwen-Image's "
            "' '), true_cfg_scale 4, 50 steps, 1328 px at 1:1, and no 'positive magic' suffix."
        ),
        id_patterns=(r"qwen[.\-_]?image[.\-_]?2512",),
        match_order=4,
        parameters={"transformer": 20.43, "text_encoder": 8.29, "vae": 0.13},
        sources="[31] QwenLM/Qwen-Image@6b5e1f5 README.md:95-122 (negative prompt l. 100)",
    ),
    Family(
        "qwen-image-2.1",
        ("QwenImage21Pipeline",),
        2048,
        2048,
        40,
        1.0,
        "bfloat16",
        guidance_keyword="true_cfg_scale",
        notes=(
            "Qwen-Image 2.1: 7B single-stream transformer with a Qwen3-VL-8B encoder. 40 steps "
            "and no guidance (true_cfg_scale 1) are the values Qwen recommends; set guidance > 1 "
            "and a negative_prompt to turn CFG on. 2048x2048 is the card's default size "
            "(diffusers' own default, output_resolution, is 1024)."
        ),
        id_patterns=(r"qwen[.\-_]?image[.\-_]?2[.\-_]?1",),
        match_order=5,
        parameters={"transformer": 7.12, "text_encoder": 8.77, "vae": 0.34},
        sources="[14] diffusers Qwen-Image 2.1 docs (Qwen's recommended 40 steps, no CFG); "
        "2048 px: [14] the card (not readable offline; see docs/models.md)",
        tiny=build_tiny_qwen_image_21,
    ),
)
