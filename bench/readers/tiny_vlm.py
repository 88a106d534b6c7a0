"""A tiny, untrained Qwen2.5-VL built locally, to exercise the ``vlm`` reader offline.

:func:`build_tiny_qwen_vl` writes a folder that ``vlm:<folder>`` loads through the
same ``from_pretrained`` path as the real checkpoint: a Qwen2.5-VL model of two
vision blocks and two language layers (hidden size 32, random weights, seeded),
a byte-level BPE tokenizer with Qwen's special tokens (256 byte tokens, no merges,
built with ``tokenizers``), Qwen's image processor with qwen_vl_utils' pixel
limits, and a chat template of the Qwen format (system turn, user turn with
``<|vision_start|><|image_pad|><|vision_end|>`` before the text, assistant turn).

Its answers are noise: it exists to test the reader's machinery (batching,
padding, templates, decoding, the reading cache), never its accuracy. Nothing is
downloaded; building takes a few seconds on a CPU.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from glyphbench.readers.vlm import MAX_PIXELS, MIN_PIXELS

#: Qwen's special tokens, in the order the tiny tokenizer numbers them after the bytes.
SPECIAL_TOKENS = (
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
)

#: The Qwen chat format, written for this tiny model (the real checkpoints ship their own).
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{% if loop.first and message['role'] != 'system' %}"
    "<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n{% endif %}"
    "<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}"
    "{% for item in message['content'] %}"
    "{% if item['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif item['type'] == 'text' %}{{ item['text'] }}{% endif %}"
    "{% endfor %}{% endif %}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def _tokenizer() -> Any:
    import transformers
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers

    alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
    backend = Tokenizer(models.BPE(vocab={c: i for i, c in enumerate(alphabet)}, merges=[]))
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    backend.add_special_tokens(
        [AddedToken(token, special=True, normalized=False) for token in SPECIAL_TOKENS]
    )
    fast: Any = transformers.PreTrainedTokenizerFast
    return fast(
        tokenizer_object=backend,
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        padding_side="left",
    )


def build_tiny_qwen_vl(folder: str | Path, seed: int = 0) -> Path:
    """Write the tiny model, tokenizer and processor to ``folder`` (kept when complete)."""
    folder = Path(folder)
    if (folder / "model.safetensors").is_file() and (folder / "tokenizer.json").is_file():
        return folder
    import torch
    import transformers
    from transformers.models.qwen2_vl.image_processing_qwen2_vl import Qwen2VLImageProcessor
    from transformers.models.qwen2_vl.video_processing_qwen2_vl import Qwen2VLVideoProcessor

    tokenizer = _tokenizer()
    ids = {token: tokenizer.convert_tokens_to_ids(token) for token in SPECIAL_TOKENS}
    image_processor = Qwen2VLImageProcessor(
        min_pixels=MIN_PIXELS, max_pixels=MAX_PIXELS, patch_size=14, merge_size=2
    )
    processor_class: Any = transformers.Qwen2_5_VLProcessor
    processor = processor_class(
        image_processor=image_processor,
        tokenizer=tokenizer,
        video_processor=Qwen2VLVideoProcessor(),
        chat_template=CHAT_TEMPLATE,
    )
    text = {
        "vocab_size": len(tokenizer),
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 2,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "max_position_embeddings": 4096,
        "rope_parameters": {
            "rope_type": "default",
            "rope_theta": 10000.0,
            "mrope_section": [2, 1, 1],
        },
        "bos_token_id": ids["<|endoftext|>"],
        "eos_token_id": ids["<|im_end|>"],
        "pad_token_id": ids["<|endoftext|>"],
        "initializer_range": 0.5,
    }
    vision = {
        "depth": 2,
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_heads": 4,
        "out_hidden_size": 32,
        "fullatt_block_indexes": [1],
        "initializer_range": 1.0,  # large random features: answers differ between images
    }
    config = transformers.Qwen2_5_VLConfig(
        text_config=text,
        vision_config=vision,
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
    )
    torch.manual_seed(seed)
    model = transformers.Qwen2_5_VLForConditionalGeneration(config)
    model.generation_config.do_sample = False
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    folder.mkdir(parents=True, exist_ok=True)
    processor.save_pretrained(folder)
    model.save_pretrained(folder)
    return folder
