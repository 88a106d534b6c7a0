# mypy: disable-error-code="no-untyped-call"
"""Parts for tiny random pipelines: tokenizers built locally and small text encoders.

The tiny pipelines of :mod:`glyphbench.tiny.pipelines` and of the family modules
(:mod:`glyphbench.models.families`) must build with no model hub: every tokenizer
here is made from a few hundred vocabulary entries written out in code (the 256
byte symbols of byte-level BPE, a handful of merges and the family's special
tokens), and every text encoder is its real class with a two-layer config.
Their outputs are noise; they exist so that a family's real loading and calling
code runs in seconds on a CPU.

>>> len(byte_bpe_vocab(["<|x|>"])[0]) > 256
True

Nothing heavy is imported at module import (transformers/tokenizers load inside
the functions).
"""

from __future__ import annotations

import json
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

#: Seed every tiny build starts from (each component is built after re-seeding).
SEED = 0

#: A ChatML chat template (Qwen style), enough for ``apply_chat_template``.
CHATML_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}"
    "{% else %}{% for part in message['content'] %}"
    "{% if part['type'] == 'text' %}{{ part['text'] }}"
    "{% elif part['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% endif %}{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)

#: Qwen's special tokens (Qwen2/2.5/3 and their VL models).
QWEN_SPECIALS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|vision_pad|>",
    "<|image_pad|>",
    "<|video_pad|>",
    "<think>",
    "</think>",
)

_MERGES = (("t", "h"), ("th", "e"), ("i", "n"), ("a", "n"), ("e", "r"), ("o", "n"))


def byte_symbols() -> list[str]:
    """The 256 printable stand-ins byte-level BPE uses for bytes (GPT-2 scheme).

    >>> symbols = byte_symbols()
    >>> len(symbols), symbols[ord("A") - ord("!")], symbols[-1] == chr(0x143)
    (256, 'A', True)
    """
    keep = (
        list(range(ord("!"), ord("~") + 1))
        + list(range(0xA1, 0xAC + 1))
        + list(range(0xAE, 0xFF + 1))
    )
    codes = keep[:]
    extra = 0
    for byte in range(256):
        if byte not in keep:
            keep.append(byte)
            codes.append(256 + extra)
            extra += 1
    return [chr(c) for c in codes]


def byte_bpe_vocab(specials: Sequence[str] = ()) -> tuple[dict[str, int], list[tuple[str, str]]]:
    """A byte-level BPE vocabulary (bytes, a few merges, then ``specials``) and its merges."""
    tokens = [*byte_symbols(), *("".join(pair) for pair in _MERGES), *specials]
    vocab = {token: index for index, token in enumerate(dict.fromkeys(tokens))}
    return vocab, list(_MERGES)


def qwen_tokenizer(max_length: int = 1 << 17, template: str = CHATML_TEMPLATE) -> Any:
    """A ``Qwen2Tokenizer`` with Qwen's special tokens and a ChatML chat template."""
    from transformers import Qwen2Tokenizer

    vocab, merges = byte_bpe_vocab(QWEN_SPECIALS)
    pairs: Any = merges  # the tokenizers backend takes (left, right) pairs
    tokenizer = Qwen2Tokenizer(vocab=vocab, merges=pairs, model_max_length=max_length)
    tokenizer.add_special_tokens({"additional_special_tokens": list(QWEN_SPECIALS[1:])})
    tokenizer.chat_template = template
    return tokenizer


def qwen_token_ids(tokenizer: Any) -> dict[str, Any]:
    """The ids a Qwen-VL config must agree on with the tokenizer (image/vision tokens)."""
    ids = tokenizer.convert_tokens_to_ids
    return {
        "image_token_id": ids("<|image_pad|>"),
        "video_token_id": ids("<|video_pad|>"),
        "vision_start_token_id": ids("<|vision_start|>"),
        "vision_end_token_id": ids("<|vision_end|>"),
        "eos_token_id": ids("<|im_end|>"),
        "pad_token_id": ids("<|endoftext|>"),
    }


def fast_bpe_tokenizer(
    specials: Sequence[str],
    *,
    bos: str | None,
    eos: str,
    pad: str,
    max_length: int = 1 << 17,
    template: str | None = None,
    prefix: Sequence[str] = (),
) -> Any:
    """A byte-level BPE ``PreTrainedTokenizerFast`` (Llama 3 / GLM / SmolLM style).

    ``prefix`` tokens are prepended to every encoded text, as Llama 3's tokenizer
    does with ``<|begin_of_text|>`` and GLM-4's with ``[gMASK]<sop>``.
    """
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
    from transformers import PreTrainedTokenizerFast

    vocab, merges = byte_bpe_vocab(specials)
    core = Tokenizer(models.BPE(vocab=vocab, merges=merges))
    core.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    core.decoder = decoders.ByteLevel()
    if prefix:
        head = " ".join(prefix)
        core.post_processor = processors.TemplateProcessing(
            single=f"{head} $A",
            pair=f"{head} $A $B",
            special_tokens=[(token, vocab[token]) for token in prefix],
        )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token=bos,
        eos_token=eos,
        pad_token=pad,
        model_max_length=max_length,
    )
    tokenizer.add_special_tokens({"additional_special_tokens": list(specials)})
    if template is not None:
        tokenizer.chat_template = template
    return tokenizer


def llama3_tokenizer(max_length: int = 1 << 17) -> Any:
    """A Llama-3-style byte-level BPE tokenizer (``<|begin_of_text|>`` prepended)."""
    specials = ["<|begin_of_text|>", "<|end_of_text|>", "<|start_header_id|>"]
    specials += ["<|end_header_id|>", "<|eot_id|>"]
    return fast_bpe_tokenizer(
        specials,
        bos="<|begin_of_text|>",
        eos="<|eot_id|>",
        pad="<|end_of_text|>",
        max_length=max_length,
        prefix=("<|begin_of_text|>",),
    )


def decoder_sizes(vocab_size: int, width: int, layers: int = 2) -> dict[str, Any]:
    """The sizes every tiny decoder-only text encoder shares (Llama, Gemma 2, Qwen): config
    keywords for ``layers`` layers ``width`` wide, an MLP twice as wide, two attention heads.

    >>> decoder_sizes(300, 16)["intermediate_size"], decoder_sizes(300, 16, 3)["num_hidden_layers"]
    (32, 3)
    """
    return {
        "vocab_size": vocab_size,
        "hidden_size": width,
        "intermediate_size": 2 * width,
        "num_hidden_layers": layers,
        "num_attention_heads": 2,
        "num_key_value_heads": 2,
    }


def llama_encoder(tokenizer: Any, width: int = 32, layers: int = 2) -> Any:
    """A ``LlamaForCausalLM`` of ``layers`` layers agreeing with ``tokenizer``."""
    from transformers import LlamaConfig, LlamaForCausalLM

    config = LlamaConfig(
        **decoder_sizes(len(tokenizer), width, layers),
        max_position_embeddings=1024,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    return LlamaForCausalLM(config).eval()


def gemma_tokenizer(max_length: int = 1 << 17) -> Any:
    """A ``GemmaTokenizer`` (byte-fallback BPE over characters) with Gemma's specials."""
    from transformers import GemmaTokenizer

    specials = ["<pad>", "<eos>", "<bos>", "<unk>", "<mask>", "<start_of_turn>", "<end_of_turn>"]
    pieces = [*specials, "\u2581", *(f"<0x{byte:02X}>" for byte in range(256))]
    pieces += [chr(c) for c in range(ord("!"), ord("~") + 1)]
    pieces += ["\u2581" + chr(c) for c in range(ord("a"), ord("z") + 1)]
    vocab = {piece: index for index, piece in enumerate(dict.fromkeys(pieces))}
    tokenizer = GemmaTokenizer(vocab=vocab, merges=[], model_max_length=max_length)
    tokenizer.chat_template = (
        "{{ bos_token }}{% for message in messages %}<start_of_turn>"
        "{{ 'model' if message['role'] == 'assistant' else message['role'] }}\n"
        "{{ message['content'] }}<end_of_turn>\n{% endfor %}"
        "{% if add_generation_prompt %}<start_of_turn>model\n{% endif %}"
    )
    return tokenizer


#: Gemma 2 soft-caps attention logits, which only the eager attention implements.
_EAGER: dict[str, Any] = {"attn_implementation": "eager"}


def gemma2_encoder(tokenizer: Any, width: int = 16) -> Any:
    """A two-layer ``Gemma2Model`` for ``tokenizer`` (eager attention: soft-capping)."""
    from transformers import Gemma2Config, Gemma2Model

    config = Gemma2Config(
        **decoder_sizes(len(tokenizer), width),
        head_dim=8,
        max_position_embeddings=4096,
        sliding_window=64,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        **_EAGER,
    )
    return Gemma2Model(config).eval()


def clip_tokenizer(max_length: int = 77) -> Any:
    """A ``CLIPTokenizer`` from a small byte-level vocabulary (ids stay below 600)."""
    with tempfile.TemporaryDirectory() as work:
        return clip_tokenizer_in(Path(work), max_length)


def clip_tokenizer_in(work: Path, max_length: int) -> Any:
    """A CLIP tokenizer from a small vocab (bytes, end-of-word bytes, a few merges).

    Its vocabulary files are written to ``work``.
    """
    from transformers import CLIPTokenizer

    symbols = byte_symbols()
    merges = [("t", "h"), ("th", "e</w>"), ("i", "n"), ("a", "n"), ("e", "r</w>")]
    tokens = symbols + [s + "</w>" for s in symbols] + ["".join(m) for m in merges]
    tokens += ["<|startoftext|>", "<|endoftext|>"]
    vocab = {tok: i for i, tok in enumerate(dict.fromkeys(tokens))}
    vocab_file, merges_file = work / "vocab.json", work / "merges.txt"
    vocab_file.write_text(json.dumps(vocab), encoding="utf-8")
    merges_file.write_text(
        "#version: 0.2\n" + "".join(f"{a} {b}\n" for a, b in merges), encoding="utf-8"
    )
    return CLIPTokenizer(
        vocab=str(vocab_file), merges=str(merges_file), model_max_length=max_length
    )


def t5_tokenizer(max_length: int = 512) -> Any:
    """A ``T5Tokenizer`` from a small unigram vocabulary (letters, digits, word starts)."""
    from transformers import T5Tokenizer

    pieces = ["<pad>", "</s>", "<unk>", "\u2581"]
    pieces += [chr(c) for c in range(ord("a"), ord("z") + 1)]
    pieces += ["\u2581" + chr(c) for c in range(ord("a"), ord("z") + 1)]
    pieces += [chr(c) for c in range(ord("0"), ord("9") + 1)]
    vocab = [(piece, 0.0 if i < 3 else -float(i)) for i, piece in enumerate(pieces)]
    return T5Tokenizer(vocab=vocab, extra_ids=0, model_max_length=max_length)


_T5_EXTRA: dict[str, Any] = {"decoder_start_token_id": 0}


def t5_encoder(vocab_size: int, width: int = 32, *, layers: int = 2) -> Any:
    """A two-layer ``T5EncoderModel`` of hidden size ``width``."""
    from transformers import T5Config, T5EncoderModel

    config = T5Config(
        vocab_size=vocab_size,
        d_model=width,
        d_ff=2 * width,
        d_kv=8,
        num_layers=layers,
        num_heads=4,
        pad_token_id=0,
        eos_token_id=1,
        **_T5_EXTRA,
    )
    return T5EncoderModel(config)


def clip_text_encoder(
    vocab_size: int, width: int = 32, *, projection: bool = False, positions: int = 77
) -> Any:
    """A two-layer CLIP text encoder (``CLIPTextModelWithProjection`` with ``projection``)."""
    from transformers import CLIPTextConfig, CLIPTextModel, CLIPTextModelWithProjection

    config = CLIPTextConfig(
        vocab_size=vocab_size,
        hidden_size=width,
        intermediate_size=2 * width,
        num_hidden_layers=2,
        num_attention_heads=4,
        max_position_embeddings=positions,
        projection_dim=width,
        bos_token_id=vocab_size - 2,
        eos_token_id=vocab_size - 1,
        pad_token_id=vocab_size - 1,
        hidden_act="gelu",
    )
    return (CLIPTextModelWithProjection if projection else CLIPTextModel)(config)


def qwen_text_config(vocab_size: int, width: int = 32, **extra: Any) -> dict[str, Any]:
    """Keyword arguments of a two-layer Qwen2/Qwen3 language-model config."""
    return {
        **decoder_sizes(vocab_size, width),
        "head_dim": width // 2,
        "max_position_embeddings": 4096,
        "rope_theta": 1_000_000.0,
        "tie_word_embeddings": False,
        **extra,
    }


def _vl_text_config(tokenizer: Any, width: int) -> tuple[dict[str, Any], dict[str, Any]]:
    """The language part of a tiny Qwen VL config (multimodal rope) and the token ids
    left for the outer config."""
    ids = qwen_token_ids(tokenizer)
    text = qwen_text_config(len(tokenizer), width, bos_token_id=ids["pad_token_id"])
    text["eos_token_id"] = ids.pop("eos_token_id")
    text["pad_token_id"] = ids.pop("pad_token_id")
    text["rope_scaling"] = {"mrope_section": [2, 2, 4], "rope_type": "default"}
    return text, ids


def _vl_vision_config(width: int, **extra: Any) -> dict[str, Any]:
    """A one-block vision tower of a tiny Qwen VL model, projecting to ``width``."""
    return {
        "depth": 1,
        "hidden_size": 16,
        "intermediate_size": 16,
        "num_heads": 2,
        "out_hidden_size": width,
        **extra,
    }


def qwen25_vl_encoder(tokenizer: Any, width: int = 32) -> Any:
    """A two-layer ``Qwen2_5_VLForConditionalGeneration`` agreeing with ``tokenizer``'s ids."""
    from transformers import Qwen2_5_VLConfig, Qwen2_5_VLForConditionalGeneration

    text, ids = _vl_text_config(tokenizer, width)
    text.pop("head_dim")
    text["rope_scaling"]["type"] = "default"
    config = Qwen2_5_VLConfig(text_config=text, vision_config=_vl_vision_config(width), **ids)
    return Qwen2_5_VLForConditionalGeneration(config).eval()


def qwen3_vl_encoder(tokenizer: Any, width: int = 32) -> Any:
    """A two-layer ``Qwen3VLForConditionalGeneration`` agreeing with ``tokenizer``'s ids."""
    from transformers import Qwen3VLConfig, Qwen3VLForConditionalGeneration

    text, ids = _vl_text_config(tokenizer, width)
    vision = _vl_vision_config(
        width, patch_size=16, deepstack_visual_indexes=[0], num_position_embeddings=16
    )
    config = Qwen3VLConfig(text_config=text, vision_config=vision, **ids)
    return Qwen3VLForConditionalGeneration(config).eval()


def qwen3_vl_processor() -> Any:
    """A ``Qwen3VLProcessor``: small image/video processors, a Qwen tokenizer, ChatML."""
    from transformers import Qwen2VLImageProcessor, Qwen3VLProcessor, Qwen3VLVideoProcessor

    image_processor = Qwen2VLImageProcessor(patch_size=16, min_pixels=64 * 64, max_pixels=128 * 128)
    video_processor = Qwen3VLVideoProcessor(patch_size=16)
    return Qwen3VLProcessor(
        image_processor=image_processor,
        tokenizer=qwen_tokenizer(),
        video_processor=video_processor,
        chat_template=CHATML_TEMPLATE,
    )


def qwen2_vl_processor(tokenizer: Any) -> Any:
    """A ``Qwen2VLProcessor`` (small image processor + ``tokenizer``) with a ChatML template."""
    from transformers import Qwen2VLImageProcessor, Qwen2VLProcessor, Qwen2VLVideoProcessor

    image_processor = Qwen2VLImageProcessor(min_pixels=56 * 56, max_pixels=112 * 112)
    return Qwen2VLProcessor(
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=Qwen2VLVideoProcessor(),
        chat_template=CHATML_TEMPLATE,
    )


def kl_vae(latent_channels: int = 4, levels: int = 2, **extra: Any) -> Any:
    """A small ``AutoencoderKL``: ``levels`` blocks of 8 channels (scale 2 ** (levels - 1)).

    The mid-block attention is left out: some pipelines always draw 1024-px images
    (Kandinsky 5) or a fixed area (HiDream), where attention over every latent
    pixel would cost more than the rest of the tiny pipeline together.
    """
    from diffusers import AutoencoderKL

    return AutoencoderKL(
        in_channels=3,
        out_channels=3,
        down_block_types=("DownEncoderBlock2D",) * levels,
        up_block_types=("UpDecoderBlock2D",) * levels,
        block_out_channels=(8,) * levels,
        layers_per_block=1,
        latent_channels=latent_channels,
        norm_num_groups=4,
        sample_size=32,
        mid_block_add_attention=False,
        **extra,
    )


def qwen3_encoder(tokenizer: Any, width: int = 32, *, causal_lm: bool = False) -> Any:
    """A two-layer ``Qwen3Model`` (``Qwen3ForCausalLM`` with ``causal_lm``) for ``tokenizer``."""
    from transformers import Qwen3Config, Qwen3ForCausalLM, Qwen3Model

    ids = qwen_token_ids(tokenizer)
    config = Qwen3Config(
        **qwen_text_config(len(tokenizer), width),
        bos_token_id=ids["pad_token_id"],
        eos_token_id=ids["eos_token_id"],
        pad_token_id=ids["pad_token_id"],
    )
    return (Qwen3ForCausalLM if causal_lm else Qwen3Model)(config).eval()


@contextmanager
def seeded(offset: int = 0) -> Iterator[None]:
    """Seed torch's global generator (``SEED + offset``) for the components built inside."""
    import torch

    torch.manual_seed(SEED + offset)
    yield
