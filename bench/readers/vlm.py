"""A vision-language model as a reader: ``vlm:<hub id or folder>`` (Qwen2.5-VL by default).

LongText-Bench and OneIG-Bench read every image with Qwen2.5-VL-7B-Instruct and
one fixed instruction; this reader does the same through ``transformers``
(``AutoModelForImageTextToText`` + ``AutoProcessor``, no ``qwen_vl_utils``):

1. each image becomes one user turn, the image first and then the instruction,
   rendered by the model's own chat template with ``add_generation_prompt=True``;
2. Qwen-VL images are resized as ``qwen_vl_utils.process_vision_info`` does by
   default (:func:`smart_resize`: sides rounded to multiples of 28, at least
   4x28x28 and at most 16384x28x28 pixels, PIL bicubic), so the processor, whose
   limits on the Qwen2.5-VL checkpoints are the same, resizes nothing further;
3. a batch is left-padded and generated greedily (``do_sample=False``; the
   benchmarks pass no sampling arguments and Qwen2.5-VL's ``generation_config``
   then decodes greedily too) for at most ``max_new_tokens`` tokens;
4. the prompt tokens are cut off and the rest decoded with
   ``skip_special_tokens=True, clean_up_tokenization_spaces=False``.

The decoded answer is the reading, untouched: each benchmark cleans answers in
its own scorer (``bench/scoring/oneig.py``, ``longtext.py``). With
``no_text=empty`` a reply that is only the preset's refusal ("No text recognized",
any case, a final full stop or quotes around it allowed) becomes an empty
``Reading.text`` (what glyphbench's own metrics score, so a blank image scores as
"nothing read"); ``Reading.pieces`` always holds the raw answer, which is what a
benchmark's scorer must be given. Presets (:data:`PRESETS`, registered in
:mod:`glyphbench.readers.vlm_presets`) name the instruction, the token limit and that default.

bf16 on a GPU, fp32 on the CPU (``dtype=auto``); ``device=auto`` picks CUDA when
present. Weights are never downloaded unless ``download=1``: a hub id must be in
the local Hugging Face cache. ``backend=vllm`` would run the same prompts through
vLLM for throughput; vLLM is not installed here, so it is refused with that
reason (it is documented in ``docs/readers/vlm.md``, not implemented).
"""

from __future__ import annotations

import functools
import hashlib
import math
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field

from glyphbench.core.errors import InputError
from glyphbench.core.images import to_rgb_image
from glyphbench.core.registry import OneOf, Options, Spec, missing_modules, register
from glyphbench.readers.base import Reader, Reading
from glyphbench.readers.common import ReadError
from glyphbench.readers.scripts import LATIN_HAN
from glyphbench.readers.vlm_presets import BENCHMARK_INSTRUCTION as BENCHMARK_INSTRUCTION
from glyphbench.readers.vlm_presets import PLAIN_INSTRUCTION as PLAIN_INSTRUCTION
from glyphbench.readers.vlm_presets import PRESETS as PRESETS
from glyphbench.readers.vlm_presets import Preset as Preset

if TYPE_CHECKING:
    from PIL import Image

DEFAULT_MODEL = "Qwen/Qwen2.5-VL-7B-Instruct"

REFUSAL = "No text recognized"

#: Quotation marks a model may put around its answer (ASCII and typographic).
QUOTES = "'\"\u201c\u201d\u2018\u2019"

# qwen_vl_utils' defaults for images (the Qwen2.5-VL checkpoints' processor uses the same).
IMAGE_FACTOR = 28
MIN_PIXELS = 4 * 28 * 28
MAX_PIXELS = 16384 * 28 * 28
MAX_RATIO = 200


class VLMOptions(Options):
    """Options of the ``vlm`` reader; unset ones come from the preset."""

    preset: Annotated[str, OneOf("vlm-presets")] = Field(
        default="plain", description="instruction, token limit and refusal handling"
    )
    instruction: str | None = Field(default=None, description="replaces the preset's text")
    max_new_tokens: int | None = Field(default=None, ge=1, description="replaces the preset's")
    no_text: Literal["keep", "empty"] | None = Field(
        default=None, description="empty: a 'No text recognized' reply reads as no text"
    )
    batch_size: int | None = Field(
        default=None, ge=1, description="images per generate() call (default: the preset's, else 4)"
    )
    device: str = Field(default="auto", description="auto (CUDA when present), cpu, cuda:N")
    dtype: Literal["auto", "bfloat16", "float16", "float32"] = Field(
        default="auto", description="auto: bfloat16 on a GPU, float32 on the CPU"
    )
    min_pixels: int = Field(default=MIN_PIXELS, ge=1, description="fewest pixels after resize")
    max_pixels: int = Field(default=MAX_PIXELS, ge=1, description="most pixels after resize")
    attention: str | None = Field(
        default=None, description="attn_implementation, e.g. flash_attention_2 or sdpa"
    )
    download: bool = Field(default=False, description="allow downloading weights from the hub")
    backend: Literal["transformers", "vllm"] = Field(
        default="transformers", description="vllm: not available in this build"
    )

    def scripts(self) -> frozenset[str]:
        """Qwen2.5-VL reads English and Chinese (what LongText/OneIG use it for)."""
        return LATIN_HAN

    def resolved(self) -> tuple[str, int, str]:
        """(instruction, max_new_tokens, no_text) after the preset's defaults."""
        preset = PRESETS[self.preset]
        return (
            self.instruction or preset.instruction,
            self.max_new_tokens or preset.max_new_tokens,
            self.no_text or preset.no_text,
        )

    def long_answer(self) -> int | None:
        """The preset's longer token limit (kept as a second piece), unless a limit is given.

        >>> VLMOptions(preset="oneig").long_answer(), VLMOptions(preset="oneig",
        ...     max_new_tokens=64).long_answer(), VLMOptions(preset="longtext").long_answer()
        (256, None, None)
        """
        return None if self.max_new_tokens else PRESETS[self.preset].long_answer

    def batch(self) -> int:
        """Images per ``generate()`` call: the option, else the preset's, else 4.

        >>> VLMOptions(preset="longtext").batch(), VLMOptions().batch()
        (1, 4)
        """
        return self.batch_size or PRESETS[self.preset].batch_size or 4


def smart_resize(
    height: int,
    width: int,
    factor: int = IMAGE_FACTOR,
    min_pixels: int = MIN_PIXELS,
    max_pixels: int = MAX_PIXELS,
) -> tuple[int, int]:
    """(height, width) for a Qwen-VL image: multiples of ``factor``, pixels within limits.

    Each side is rounded to the nearest multiple of ``factor`` (at least one
    factor); when the area is then above ``max_pixels`` both sides are scaled down
    by the same ratio and floored to multiples, below ``min_pixels`` scaled up and
    ceiled. Aspect ratios above 200 are refused.

    >>> smart_resize(512, 512), smart_resize(720, 1280), smart_resize(20, 30)
    ((504, 504), (728, 1288), (56, 84))
    """
    if max(height, width) / min(height, width) > MAX_RATIO:
        raise ValueError(f"aspect ratio above {MAX_RATIO}: {width}x{height}")
    new_height = max(factor, round(height / factor) * factor)
    new_width = max(factor, round(width / factor) * factor)
    if new_height * new_width > max_pixels:
        scale = math.sqrt(height * width / max_pixels)
        new_height = max(factor, math.floor(height / scale / factor) * factor)
        new_width = max(factor, math.floor(width / scale / factor) * factor)
    elif new_height * new_width < min_pixels:
        scale = math.sqrt(min_pixels / (height * width))
        new_height = math.ceil(height * scale / factor) * factor
        new_width = math.ceil(width * scale / factor) * factor
    return new_height, new_width


def is_refusal(answer: str, refusal: str = REFUSAL) -> bool:
    """Whether ``answer`` is only the refusal phrase (case, quotes and a final stop ignored).

    >>> is_refusal("No text recognized."), is_refusal("'no text recognized'"), is_refusal("NO")
    (True, True, False)
    """
    core = answer.strip().strip(QUOTES).rstrip(".\u3002").strip().strip(QUOTES)
    return core.casefold() == refusal.casefold()


def _resolve_device(device: str) -> str:
    import torch

    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise InputError(None, f"vlm reader: device {device!r} asked for but no CUDA device")
    return device


def _torch_dtype(name: str, device: str) -> Any:
    import torch

    if name == "auto":
        return torch.bfloat16 if device.startswith("cuda") else torch.float32
    return getattr(torch, name)


def model_identity(source: str) -> str:
    """What exactly is loaded: a folder's config and weight sizes hashed, or the hub id.

    >>> model_identity("Qwen/Qwen2.5-VL-7B-Instruct")
    'Qwen/Qwen2.5-VL-7B-Instruct'
    """
    folder = Path(source)
    if not folder.is_dir():
        return source
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.json")) + sorted(folder.glob("*.safetensors")):
        digest.update(path.name.encode())
        digest.update(
            path.read_bytes() if path.suffix == ".json" else str(path.stat().st_size).encode()
        )
    return f"{folder.name} (folder, sha256 {digest.hexdigest()[:12]})"


@functools.cache
def _load(source: str, device: str, dtype: str, attention: str | None, download: bool) -> Any:
    """(model, processor) once per process and settings."""
    import transformers

    # transformers is untyped where it matters here: treat its loaders as Any.
    processors: Any = transformers.AutoProcessor
    models: Any = transformers.AutoModelForImageTextToText
    local_only = not download
    extra = {"attn_implementation": attention} if attention else {}
    try:
        processor = processors.from_pretrained(source, local_files_only=local_only)
        model = models.from_pretrained(
            source, dtype=_torch_dtype(dtype, device), local_files_only=local_only, **extra
        )
    except OSError as error:
        hint = "" if download else "; the weights must be on disk (or pass ?download=1)"
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise InputError(None, f"vlm:{source}: cannot load the model: {first}{hint}") from None
    model.to(device)
    model.eval()
    processor.tokenizer.padding_side = "left"  # generation continues every row at its end
    return model, processor


class VLMReader(Reader):
    """Reads images by asking a vision-language model; see the module docstring."""

    name = "vlm"

    def __init__(self, source: str, options: VLMOptions | None = None) -> None:
        self.source = source or DEFAULT_MODEL
        self.options = options or VLMOptions()
        if self.options.backend == "vllm":
            raise InputError(
                None, "vlm?backend=vllm: vLLM is not installed; use backend=transformers"
            )
        self.instruction, self.max_new_tokens, self.no_text = self.options.resolved()
        self.long_answer = self.options.long_answer()
        self.device = _resolve_device(self.options.device)
        self.dtype = self.options.dtype
        self.model, self.processor = _load(
            self.source, self.device, self.dtype, self.options.attention, self.options.download
        )
        self.identity = model_identity(self.source)

    @property
    def version(self) -> str:
        import transformers

        dtype = str(getattr(self.model, "dtype", self.dtype)).removeprefix("torch.")
        return (
            f"vlm {self.identity}; transformers {transformers.__version__}; {dtype}; "
            f"{self.device}; preset {self.options.preset}; max_new_tokens {self.max_new_tokens}"
            + (f" (and {self.long_answer} kept)" if self.long_answer else "")
            + f"; batch {self.options.batch()}"
        )

    def prepare(self, image: Image.Image) -> Image.Image:
        """The image as the model sees it: RGB, resized as qwen_vl_utils would for Qwen-VL."""
        from PIL import Image as PILImage

        rgb = to_rgb_image(image)
        processor = self.processor.image_processor
        patch, merge = (
            getattr(processor, "patch_size", None),
            getattr(processor, "merge_size", None),
        )
        if not (isinstance(patch, int) and isinstance(merge, int)):
            return rgb  # not a Qwen-VL processor: it resizes in its own way
        height, width = smart_resize(
            rgb.height, rgb.width, patch * merge, self.options.min_pixels, self.options.max_pixels
        )
        if (height, width) == (rgb.height, rgb.width):
            return rgb
        return rgb.resize((width, height), PILImage.Resampling.BICUBIC)

    def answers(self, images: Sequence[Image.Image]) -> list[list[str]]:
        """The model's decoded answers for each image, in batches of ``batch_size``.

        One answer per image, or two with a preset's ``long_answer``: the answer cut
        at ``max_new_tokens`` and the one at the longer limit, from one greedy
        generation (greedy decoding makes the first tokens of the longer one the
        shorter one's).
        """
        out: list[list[str]] = []
        step = self.options.batch()
        for start in range(0, len(images), step):
            out.extend(self._generate([self.prepare(i) for i in images[start : start + step]]))
        return out

    def _generate(self, images: list[Image.Image]) -> list[list[str]]:
        import torch

        turn = [{"type": "image"}, {"type": "text", "text": self.instruction}]
        prompt = self.processor.apply_chat_template(
            [{"role": "user", "content": turn}], tokenize=False, add_generation_prompt=True
        )
        inputs = self.processor(
            text=[prompt] * len(images), images=images, padding=True, return_tensors="pt"
        ).to(self.device)
        with torch.inference_mode():
            generated = self.model.generate(
                **inputs,
                max_new_tokens=max(self.max_new_tokens, self.long_answer or 0),
                do_sample=False,
            )
        new_tokens = generated[:, inputs["input_ids"].shape[1] :]
        limits = [self.max_new_tokens] + ([self.long_answer] if self.long_answer else [])
        decoded = [
            self.processor.batch_decode(
                new_tokens[:, :limit], skip_special_tokens=True, clean_up_tokenization_spaces=False
            )
            for limit in limits
        ]
        return [list(answers) for answers in zip(*decoded, strict=True)]

    def to_reading(self, answer: str | list[str]) -> Reading:
        """The reading of one image's answers: the raw answers as pieces, the text per ``no_text``.

        The text is the first answer (cut at ``max_new_tokens``); a preset's longer
        answer is the second piece.
        """
        answers = [answer] if isinstance(answer, str) else list(answer)
        text = "" if self.no_text == "empty" and is_refusal(answers[0]) else answers[0]
        return Reading(text=text, pieces=answers, boxes=[], confidences=[])

    def read(self, images: Sequence[Image.Image]) -> list[Reading]:
        try:
            answers = self.answers(images)
        except Exception as error:
            if len(images) == 1:
                raise ReadError(self.name, 0, error) from error
            raise  # read_batch re-reads one by one and pins the failing image
        return [self.to_reading(answer) for answer in answers]


@register(
    "readers",
    "vlm",
    options=VLMOptions,
    target="optional",
    usage="vlm[:<hub id or folder>][?preset=plain|longtext|oneig]",
    summary="A vision-language model (Qwen2.5-VL-7B-Instruct by default) asked to read the "
    "text, as LongText-Bench and OneIG-Bench do; transformers, bf16 on GPU.",
    missing=lambda: missing_modules("transformers", "torch"),
)
def create_vlm(spec: Spec, options: VLMOptions) -> VLMReader:
    return VLMReader(spec.target or DEFAULT_MODEL, options)
