# mypy: disable-error-code="no-untyped-call"
"""Bria FIBO: an 8B DiT trained only on long structured JSON captions (SmolLM3-3B encoder).

FIBO's card warns that free-form prompts give poor results: prompts should be
structured JSON, which Bria makes with a separate VLM ("FIBO-VLM-prompt-to-JSON",
remote code, not run here). glyphbench passes the prompt as given unless the
``json`` quirk is on, which wraps it as ``{"short_description": ...}`` (the
field FIBO captions start with) — a minimal structured prompt, not the VLM's
full caption. Sources: docs/models.md [30].
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glyphbench.models.families import Family, Quirk, register_family
from glyphbench.tiny.parts import fast_bpe_tokenizer
from glyphbench.tiny.pipelines import build_tiny_pipeline

TINY_SETTINGS = {"height": 32, "width": 32, "steps": 2, "guidance": 5.0}

#: FIBO's pipeline encodes an empty prompt as this token id (SmolLM3's begin-of-text).
_BOT_TOKEN_ID = 128000


def build_tiny_bria_fibo(path: str | Path) -> Path:
    """A tiny random ``BriaFiboPipeline`` (SmolLM3 encoder, Wan-style VAE)."""
    return build_tiny_pipeline(path, "bria-fibo", _make_bria_fibo, TINY_SETTINGS)


def _make_bria_fibo(work: Path) -> Any:
    from diffusers import (
        AutoencoderKLWan,
        BriaFiboPipeline,
        BriaFiboTransformer2DModel,
        FlowMatchEulerDiscreteScheduler,
    )
    from transformers import SmolLM3Config, SmolLM3ForCausalLM

    tokenizer = fast_bpe_tokenizer(
        ["<|begin_of_text|>", "<|end_of_text|>", "<|im_end|>"],
        bos="<|begin_of_text|>",
        eos="<|im_end|>",
        pad="<|end_of_text|>",
    )
    width = 16
    # The vocabulary must reach id 128000, which the pipeline uses for empty prompts.
    config = SmolLM3Config(
        vocab_size=_BOT_TOKEN_ID + 1,
        hidden_size=width,
        intermediate_size=2 * width,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=2,
        max_position_embeddings=1024,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    transformer = BriaFiboTransformer2DModel(
        patch_size=1,
        in_channels=16,
        num_layers=1,
        num_single_layers=1,
        attention_head_dim=8,
        num_attention_heads=2,
        joint_attention_dim=2 * width,  # last two hidden states side by side
        text_encoder_dim=width,
        pooled_projection_dim=None,
        axes_dims_rope=[0, 4, 4],
    )
    vae = AutoencoderKLWan(
        base_dim=8,
        decoder_base_dim=8,
        num_res_blocks=1,
        out_channels=12,
        patch_size=2,
        scale_factor_spatial=16,
        scale_factor_temporal=4,
        temperal_downsample=[False, True, True],
        z_dim=16,
        is_residual=True,
        in_channels=12,
        dim_mult=[1, 1, 1, 1],
    )
    return BriaFiboPipeline(
        transformer=transformer,
        scheduler=FlowMatchEulerDiscreteScheduler(),
        vae=vae,
        text_encoder=SmolLM3ForCausalLM(config).eval(),
        tokenizer=tokenizer,
    )


register_family(
    Family(
        "bria-fibo",
        ("BriaFiboPipeline",),
        1024,
        1024,
        50,
        5.0,
        "bfloat16",
        max_sequence_length=3000,
        quirks=(
            Quirk(
                "json",
                'wrap the prompt as the JSON caption {"short_description": <prompt>} '
                "(FIBO is trained on structured JSON captions only)",
                json_key="short_description",
            ),
        ),
        notes=(
            "Bria FIBO: 8B DiT, SmolLM3-3B encoder, Wan 2.2 VAE; 50 steps, guidance 5 (the "
            "card's example). Free-form prompts are off-distribution (card); see the json quirk."
        ),
        id_patterns=(r"(^|/)fibo(?![.\-_]?2)",),
        match_order=18,
        parameters={"transformer": 8.0, "text_encoder": 3.08, "vae": 0.7},
        sources="[30] card / diffusers example: 50 steps, guidance 5, JSON prompts",
        tiny=build_tiny_bria_fibo,
    ),
)
