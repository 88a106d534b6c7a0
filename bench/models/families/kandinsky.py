# mypy: disable-error-code="no-untyped-call"
"""Kandinsky (Sber AI / Kandinsky Lab): 2.1/2.2 (prior + decoder), 3, and 5 (Image Lite).

Kandinsky 5.0 Image Lite is a 6B flow-matching DiT reading Qwen2.5-VL-7B hidden
states and a pooled CLIP-L embedding; its pipeline returns ``image`` where
others return ``images`` (the adapter reads either). Sources: docs/models.md
[10], [11], [24].
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glyphbench.models.families import Family, register_family
from glyphbench.tiny.parts import (
    clip_text_encoder,
    clip_tokenizer,
    kl_vae,
    qwen2_vl_processor,
    qwen25_vl_encoder,
    qwen_tokenizer,
)
from glyphbench.tiny.pipelines import build_tiny_pipeline

TINY_SETTINGS = {"height": 32, "width": 32, "steps": 2, "guidance": 3.5}


def build_tiny_kandinsky5(path: str | Path) -> Path:
    """A tiny random ``Kandinsky5T2IPipeline`` (Qwen2.5-VL + CLIP encoders, 2 layers each)."""
    return build_tiny_pipeline(path, "kandinsky5", _make_kandinsky5, TINY_SETTINGS)


def _make_kandinsky5(work: Path) -> Any:
    from diffusers import (
        FlowMatchEulerDiscreteScheduler,
        Kandinsky5T2IPipeline,
        Kandinsky5Transformer3DModel,
    )

    processor = qwen2_vl_processor(qwen_tokenizer())
    tokenizer_2 = clip_tokenizer()
    transformer = Kandinsky5Transformer3DModel(
        in_visual_dim=16,
        in_text_dim=32,
        in_text_dim2=16,
        time_dim=16,
        out_visual_dim=16,
        patch_size=(1, 2, 2),
        model_dim=16,
        ff_dim=32,
        num_text_blocks=1,
        num_visual_blocks=2,
        axes_dims=(1, 1, 2),
        visual_cond=False,
        attention_type="regular",
    )
    return Kandinsky5T2IPipeline(
        transformer=transformer,
        vae=kl_vae(16, levels=4, scaling_factor=0.3611, shift_factor=0.1159),
        text_encoder=qwen25_vl_encoder(processor.tokenizer, 32),
        tokenizer=processor,
        text_encoder_2=clip_text_encoder(len(tokenizer_2), 16),
        tokenizer_2=tokenizer_2,
        scheduler=FlowMatchEulerDiscreteScheduler(shift=3.0),
    )


register_family(
    Family(
        "kandinsky22",
        (
            "KandinskyV22Pipeline",
            "KandinskyV22CombinedPipeline",
            "KandinskyPipeline",
            "KandinskyCombinedPipeline",
        ),
        768,
        768,
        100,
        4.0,
        "float16",
        call_kwargs={"prior_guidance_scale": 4.0, "prior_num_inference_steps": 25},
        loader="auto",
        notes=(
            "Kandinsky 2.1/2.2: the decoder repo is loaded with AutoPipelineForText2Image, "
            "which adds the prior (text -> image embedding) as one combined pipeline."
        ),
        id_patterns=(r"kandinsky",),
        match_order=81,
        parameters={"unet": 1.22, "prior": 1.0, "text/image encoders": 1.1, "movq": 0.08},
        sources=(
            "[10] card examples at 768 px; steps/guidance and prior 25 steps / 4.0 = "
            "combined-pipeline defaults"
        ),
    ),
    Family(
        "kandinsky3",
        ("Kandinsky3Pipeline",),
        1024,
        1024,
        25,
        3.0,
        "float16",
        loader="auto",
        notes="Kandinsky 3 (Flan-UL2 text encoder).",
        id_patterns=(r"kandinsky[.\-_]?3",),
        match_order=80,
        parameters={"unet": 3.0, "text_encoder": 8.6, "movq": 0.27},
        sources="[11] card example (25 steps); guidance = pipeline default",
    ),
    Family(
        "kandinsky5",
        ("Kandinsky5T2IPipeline",),
        1024,
        1024,
        50,
        3.5,
        "bfloat16",
        max_sequence_length=512,
        negative_prompt="",
        notes=(
            "Kandinsky 5.0 Image Lite: 6B DiT with Qwen2.5-VL-7B and CLIP-L encoders; 50 steps, "
            "guidance 3.5, empty negative prompt, as the diffusers example."
        ),
        id_patterns=(r"kandinsky[.\-_]?5",),
        match_order=79,
        parameters={"transformer": 6.0, "text_encoder": 8.29, "text_encoder_2": 0.12, "vae": 0.08},
        sources="[24] diffusers Kandinsky5T2IPipeline example: 1024 px, 50 steps, guidance 3.5",
        tiny=build_tiny_kandinsky5,
    ),
)
