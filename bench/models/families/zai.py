# mypy: disable-error-code="no-untyped-call"
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

from glyphbench.models.families import Family, register_family
from glyphbench.tiny.parts import byte_symbols, fast_bpe_tokenizer, kl_vae, t5_encoder
from glyphbench.tiny.pipelines import build_tiny_pipeline

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


#: Tiny GLM-Image token layout: codebook ids first (the AR head only predicts these),
#: then image start/end, then the text vocabulary.
_CODEBOOK, _IMAGE_START, _IMAGE_END, _VISION_VOCAB = 128, 128, 129, 136


def build_tiny_glm_image(path: str | Path) -> Path:
    """A tiny random ``GlmImagePipeline``: a 2-layer AR model samples the token grid first.

    The preview grid is always 16x16, so the AR model draws 256 + 1 + 1 tokens
    for a 32-px image (about a second on a CPU). The tiny AR model never stops
    early: its generation config has no end token (a random model could sample
    one at any step and leave the pipeline short of tokens).
    """
    return build_tiny_pipeline(
        path, "glm-image", _make_glm_image, {**TINY_SETTINGS, "guidance": 1.5}
    )


def _glm_image_processor() -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import GlmImageImageProcessor, GlmImageProcessor, PreTrainedTokenizerFast

    image_tokens = [f"<|image_{i}|>" for i in range(_VISION_VOCAB)]
    image_tokens[_IMAGE_START], image_tokens[_IMAGE_END] = "<|image_start|>", "<|image_end|>"
    specials = ["<|endoftext|>", "<|user|>", "<|assistant|>", "<|image|>", "<sop>"]
    specials += ["<|begin_of_image|>", "<|end_of_image|>"]
    tokens = [*image_tokens, *byte_symbols(), *specials]
    vocab = {token: index for index, token in enumerate(tokens)}
    core = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token="<|image_start|>",
        eos_token="<|endoftext|>",
        pad_token="<|endoftext|>",
        extra_special_tokens={
            "image_token": "<|image|>",
            "grid_bos_token": "<|begin_of_image|>",
            "grid_eos_token": "<|end_of_image|>",
        },
    )
    tokenizer.add_special_tokens({"additional_special_tokens": [*image_tokens[-8:], *specials]})
    template = (
        "{% for message in messages %}<|{{ message['role'] }}|>\n"
        "{% for part in message['content'] %}{% if part['type'] == 'text' %}{{ part['text'] }}"
        "{% else %}<|image|>{% endif %}{% endfor %}{% endfor %}"
    )
    image_processor = GlmImageImageProcessor(patch_size=8, merge_size=1, temporal_patch_size=1)
    return GlmImageProcessor(
        image_processor=image_processor, tokenizer=tokenizer, chat_template=template
    )


def _make_glm_image(work: Path) -> Any:
    from diffusers import (
        FlowMatchEulerDiscreteScheduler,
        GlmImagePipeline,
        GlmImageTransformer2DModel,
    )
    from transformers import ByT5Tokenizer, GlmImageConfig, GlmImageForConditionalGeneration

    processor = _glm_image_processor()
    tokenizer = ByT5Tokenizer()
    config = GlmImageConfig(
        text_config={
            "vocab_size": len(processor.tokenizer),
            "hidden_size": 32,
            "intermediate_size": 32,
            "num_hidden_layers": 2,
            "num_attention_heads": 2,
            "num_key_value_heads": 2,
            "max_position_embeddings": 1024,
            "vision_vocab_size": _VISION_VOCAB,
            "rope_parameters": {"mrope_section": (4, 2, 2)},
            "pad_token_id": processor.tokenizer.pad_token_id,
            "eos_token_id": _IMAGE_END,
        },
        vision_config={
            "depth": 1,
            "hidden_size": 32,
            "num_heads": 2,
            "image_size": 32,
            "patch_size": 8,
            "intermediate_size": 32,
        },
        vq_config={"embed_dim": 32, "num_embeddings": _CODEBOOK, "latent_channels": 32},
        image_token_id=processor.tokenizer.convert_tokens_to_ids("<|image|>"),
        image_start_token_id=_IMAGE_START,
        image_end_token_id=_IMAGE_END,
    )
    vision_language_encoder = GlmImageForConditionalGeneration(config).eval()
    vision_language_encoder.generation_config.eos_token_id = None  # see build_tiny_glm_image
    transformer = GlmImageTransformer2DModel(
        patch_size=2,
        in_channels=4,
        out_channels=4,
        num_layers=2,
        attention_head_dim=8,
        num_attention_heads=2,
        text_embed_dim=32,
        time_embed_dim=16,
        condition_dim=8,
        prior_vq_quantizer_codebook_size=_CODEBOOK,
    )
    return GlmImagePipeline(
        tokenizer=tokenizer,
        processor=processor,
        text_encoder=t5_encoder(384, 32),  # ByT5's 384 ids
        vision_language_encoder=vision_language_encoder,
        # AR tokens (one per 32 px) are upsampled twice: transformer patch 2 x VAE scale 8 = 16.
        vae=kl_vae(4, levels=4, latents_mean=[0.0] * 4, latents_std=[1.0] * 4),
        transformer=transformer,
        scheduler=FlowMatchEulerDiscreteScheduler(),
    )


register_family(
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
    Family(
        "glm-image",
        ("GlmImagePipeline",),
        1024,
        1024,
        50,
        1.5,
        "bfloat16",
        notes=(
            "GLM-Image: a 9B autoregressive GLM samples image tokens (a 16x16 preview, then one "
            "token per 32 px), a 7B DiT decodes them; sizes must be multiples of 32. The AR "
            "model samples (temperature 0.95) from a seed derived from each image's generator."
        ),
        id_patterns=(r"glm[.\-_]?image",),
        match_order=10,
        parameters={"vision_language_encoder": 9.0, "transformer": 7.0, "text_encoder": 0.3},
        sources="[21] diffusers GLM-Image docs and pipeline defaults: 50 steps, guidance 1.5",
        tiny=build_tiny_glm_image,
        tiny_note="the tiny AR model has no end token, so it always draws the full token grid",
    ),
)
