# mypy: disable-error-code="no-untyped-call"
"""Kolors (Kuaishou): an SDXL-style UNet conditioned on ChatGLM3-6B, bilingual (zh/en).

Its ChatGLM tokenizer needs the ``sentencepiece`` package (in the ``gen``
extra); without it the family cannot load and ``describe()`` says so.
The tiny build trains a 400-piece SentencePiece model on a few sentences, in
well under a second. Sources: docs/models.md [29].
"""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

from glyphbench.models.families import Family, register_family
from glyphbench.tiny.parts import kl_vae
from glyphbench.tiny.pipelines import build_tiny_pipeline

TINY_SETTINGS = {"height": 32, "width": 32, "steps": 2, "guidance": 5.0}

#: What the tiny SentencePiece model is trained on (bilingual, like Kolors' prompts).
_CORPUS = (
    "a shop sign that says open",
    "a poster with the words fresh coffee daily",
    "the quick brown fox jumps over the lazy dog 0123456789",
    "一张瓢虫的照片，微距，变焦，高质量，电影，拿着一个牌子，写着可图",  # noqa: RUF001 - Chinese
    "写着开门的牌子",
)


def build_tiny_kolors(path: str | Path) -> Path:
    """A tiny random ``KolorsPipeline`` (ChatGLM encoder of 2 layers; needs sentencepiece)."""
    return build_tiny_pipeline(path, "kolors", _make_kolors, TINY_SETTINGS)


def _sentencepiece_model(work: Path) -> Path:
    import sentencepiece

    model = io.BytesIO()
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(_CORPUS * 4),
        model_writer=model,
        vocab_size=400,
        model_type="bpe",
        byte_fallback=True,
        character_coverage=1.0,
        num_threads=1,
        minloglevel=2,
    )
    target = work / "tokenizer.model"
    target.write_bytes(model.getvalue())
    return target


def _make_kolors(work: Path) -> Any:
    from diffusers import EulerDiscreteScheduler, KolorsPipeline, UNet2DConditionModel
    from diffusers.pipelines.kolors.text_encoder import ChatGLMConfig, ChatGLMModel
    from diffusers.pipelines.kolors.tokenizer import ChatGLMTokenizer

    tokenizer = ChatGLMTokenizer(vocab_file=str(_sentencepiece_model(work)))
    width, time_dim = 32, 8
    config = ChatGLMConfig(
        num_layers=2,
        padded_vocab_size=tokenizer.tokenizer.n_words,
        hidden_size=width,
        ffn_hidden_size=2 * width,
        kv_channels=8,
        num_attention_heads=4,
        seq_length=256,
        multi_query_attention=True,
        multi_query_group_num=2,
        original_rope=True,  # as ChatGLM3-6B's config; the model reads it
    )
    unet = UNet2DConditionModel(
        block_out_channels=(16, 32),
        layers_per_block=1,
        sample_size=16,
        in_channels=4,
        out_channels=4,
        down_block_types=("DownBlock2D", "CrossAttnDownBlock2D"),
        up_block_types=("CrossAttnUpBlock2D", "UpBlock2D"),
        attention_head_dim=(2, 4),
        use_linear_projection=True,
        addition_embed_type="text_time",
        addition_time_embed_dim=time_dim,
        transformer_layers_per_block=(1, 1),
        projection_class_embeddings_input_dim=6 * time_dim + width,
        cross_attention_dim=width,
        norm_num_groups=8,
    )
    scheduler = EulerDiscreteScheduler(
        beta_start=0.00085,
        beta_end=0.014,
        beta_schedule="scaled_linear",
        timestep_spacing="leading",
        steps_offset=1,
    )
    return KolorsPipeline(
        vae=kl_vae(4),
        text_encoder=_initialised(ChatGLMModel(config).eval()),
        tokenizer=tokenizer,
        unet=unet,
        scheduler=scheduler,
        force_zeros_for_empty_prompt=False,
    )


def _initialised(model: Any) -> Any:
    """Give ChatGLM seeded weights: it skips initialisation (its tensors hold leftover memory)."""
    import torch

    with torch.no_grad():
        for name, parameter in model.named_parameters():
            if "norm" in name:
                parameter.fill_(1.0)
            elif parameter.dim() == 1:
                parameter.zero_()
            else:
                parameter.normal_(0.0, 0.02)
    return model


register_family(
    Family(
        "kolors",
        ("KolorsPipeline",),
        1024,
        1024,
        50,
        5.0,
        "float16",
        max_sequence_length=256,
        requires=("sentencepiece",),
        notes=(
            "Kolors: SDXL-like 2.6B UNet with a ChatGLM3-6B encoder (256 tokens); 50 steps, "
            "guidance 5 (the card's example). The -diffusers repo ships variant 'fp16'."
        ),
        id_patterns=(r"kolors",),
        match_order=17,
        parameters={"unet": 2.58, "text_encoder": 6.24, "vae": 0.08},
        sources="[29] Kwai-Kolors/Kolors-diffusers card example: 50 steps, guidance 5",
        tiny=build_tiny_kolors,
        tiny_note="needs sentencepiece (its tokenizer is a SentencePiece model)",
    ),
)
