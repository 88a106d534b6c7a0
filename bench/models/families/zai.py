"""Z.ai (Zhipu, formerly THUDM) models: CogView4-6B and GLM-Image.

CogView4 encodes the prompt with GLM-4-9B (the second-to-last hidden state);
GLM-Image first has a 9B autoregressive model (``GlmImageForConditionalGeneration``)
sample a grid of image tokens, then a 7B diffusion decoder renders them, with a
ByT5/T5 glyph encoder for quoted text. CogView4's card recommends rewriting
prompts with an LLM first; that script is not part of diffusers and is not
applied. Sources: docs/models.md [20]-[21].
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bench.models.families import Family
from bench.models.tiny import build_tiny_pipeline

TINY_SETTINGS = {"height": 32, "width": 32, "steps": 2, "guidance": 3.5}


def build_tiny_cogview4(path: str | Path) -> Path:
    """A tiny random ``CogView4Pipeline`` (GLM text encoder, 2 layers)."""
    return build_tiny_pipeline(path, "cogview4", _make_cogview4, TINY_SETTINGS)


def _make_cogview4(work: Path) -> Any:
    from diffusers import (
        CogView4Pipeline,
        CogView4Transformer2DModel,
        FlowMatchEulerDiscreteScheduler,
    )
    from transformers import GlmConfig, GlmModel

    from bench.models.tinyparts import fast_bpe_tokenizer, kl_vae

    specials = ["[gMASK]", "<sop>", "<|endoftext|>", "<|user|>", "<|assistant|>"]
    tokenizer = fast_bpe_tokenizer(
        specials, bos=None, eos="<|endoftext|>", pad="<|endoftext|>", prefix=("[gMASK]", "<sop>")
    )
    tokenizer.padding_side = "left"
    config = GlmConfig(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=16,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        head_dim=8,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
    )
    transformer = CogView4Transformer2DModel(
        patch_size=2,
        in_channels=4,
        num_layers=2,
        attention_head_dim=4,
        num_attention_heads=4,
        out_channels=4,
        text_embed_dim=32,
        time_embed_dim=8,
        condition_dim=4,
    )
    scheduler = FlowMatchEulerDiscreteScheduler(
        base_shift=0.25,
        max_shift=0.75,
        base_image_seq_len=256,
        use_dynamic_shifting=True,
        time_shift_type="linear",
    )
    return CogView4Pipeline(
        tokenizer=tokenizer,
        text_encoder=GlmModel(config).eval(),
        vae=kl_vae(4),
        transformer=transformer,
        scheduler=scheduler,
    )


FAMILIES: tuple[Family, ...] = (
    Family(
        "cogview4",
        ("CogView4Pipeline",),
        1024,
        1024,
        50,
        3.5,
        "bfloat16",
        max_sequence_length=1024,
        notes=(
            "CogView4-6B: 6B DiT with a GLM-4-9B text encoder; sizes 512-2048 px, multiples "
            "of 32. The card's memory table: 35 GB at 1024 px without offload, 20 GB with "
            "model offload, 13 GB with a 4-bit text encoder."
        ),
        id_patterns=(r"cogview[.\-_]?4",),
        match_order=11,
        parameters={"transformer": 6.0, "text_encoder": 9.4, "vae": 0.08},
        sources="[20] card example: 1024 px, 50 steps, guidance 3.5",
        tiny=build_tiny_cogview4,
    ),
)
