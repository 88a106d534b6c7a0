"""The codec protocol: what the VAE evaluation asks of anything it round-trips images through.

Two levels; a codec implements one of them.

**Images** (:class:`Codec`): ``roundtrip(images) -> list[Image | CodecFailure]``, one
same-size RGB reconstruction (or a failure) per input PIL image, in order; plus
``name`` (the ``vae`` column), ``describe()`` (what exactly ran, recorded per row) and
``native_resolution`` (a size hint or None). The reference codecs (identity, JPEG,
resize; :mod:`glyphbench.vae_eval.codecs.reference`) work at this level.

**Tensors** (:class:`TensorCodec`): ``encode(x) -> latents`` and ``decode(latents) -> x``
where ``x`` is a float tensor ``B x 3 x H x W`` in [-1, 1] on the codec's ``device``
with its ``dtype``; :class:`TensorCodec` does everything around it, the same way for
every neural codec (diffusers, TAESD, your own):

* images become tensors (``pixel / 127.5 - 1``), grouped by size into batches of
  ``batch_size``, edge-padded to a multiple of ``multiple`` (the latent grid) and
  cropped back after decoding; outputs are clamped to [-1, 1] and rounded to uint8;
* ``tile=N`` (pixels, 0 = off, else at least :data:`MIN_TILE`) round-trips images
  larger than N in overlapping N x N tiles (overlap N/4, linearly blended), for memory;
  results then differ slightly from the untiled ones near tile seams;
* NaN/inf in a decoded image, or an exception in a batch, becomes a
  :class:`CodecFailure` for those images (the runner turns it into an error row);
* everything runs under ``torch.inference_mode()``.

Options every tensor codec takes (:class:`TensorOptions`): ``dtype`` (fp32, fp16, bf16;
fp16 on CPU runs in fp32), ``device`` (auto, cpu, cuda), ``batch_size`` and ``tile``.

Plain Python objects with ``encode``/``decode`` (or ``roundtrip``) become codecs with
:func:`adapt` (used by ``python:module:Object`` and :func:`register_codec`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from glyphbench.core.dtypes import dtype_name
from glyphbench.core.registry import Options, Spec, register

if TYPE_CHECKING:
    from PIL import Image


@dataclass(frozen=True)
class CodecFailure:
    """A reconstruction that failed (NaN output, exception); becomes an error row."""

    message: str


class Codec(ABC):
    """Encode-decode round trip over RGB PIL images."""

    name: str = ""
    #: Side length the codec was trained at (e.g. 512 for SD 1.x VAEs), when known.
    native_resolution: int | None = None

    def describe(self) -> str:
        return self.name

    @abstractmethod
    def roundtrip(self, images: Sequence[Image.Image]) -> list[Image.Image | CodecFailure]:
        """One reconstruction (same size, RGB) or failure per input image."""


# --------------------------------------------------------------------------- tensor codecs


#: The smallest ``tile``: 8 x 8 latent cells of an f8 codec.
MIN_TILE = 64


class TensorOptions(Options):
    """Options of every tensor codec (diffusers, taesd, python entries)."""

    dtype: str = Field(
        default="fp32", description="fp32, fp16 or bf16 (also float32/float16/bfloat16)"
    )
    device: Literal["auto", "cpu", "cuda"] = Field(
        default="auto", description="auto: CUDA when available"
    )
    batch_size: int = Field(default=4, ge=1, description="images per encode/decode call")
    tile: int = Field(
        default=0,
        ge=0,
        description=f"round-trip in overlapping tiles of this many pixels (0: off; else at "
        f"least {MIN_TILE})",
    )

    @field_validator("tile")
    @classmethod
    def _whole_tiles(cls, value: int) -> int:
        if 0 < value < MIN_TILE:
            raise ValueError(
                f"must be 0 (off) or at least {MIN_TILE} pixels, not {value}: a smaller tile "
                "holds too few latent cells (8 pixels each at f8) for its seams not to show, "
                "and tiles of 1 to 3 pixels crash or take tens of thousands of round trips "
                "per image"
            )
        return value

    @field_validator("dtype")
    @classmethod
    def _known_dtype(cls, value: str) -> str:
        dtype_name(value)  # the spelling is kept (run records show what was asked)
        return value.strip().lower()


def resolve_device(device: str) -> str:
    """``auto`` -> ``cuda`` when available, else ``cpu``; other values unchanged."""
    if device != "auto":
        return device
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def resolve_dtype(name: str, device: str) -> Any:
    """The torch dtype of ``name``; fp16 on CPU becomes fp32 (many CPU kernels lack fp16)."""
    import torch

    dtype = getattr(torch, dtype_name(name))
    return torch.float32 if device == "cpu" and dtype == torch.float16 else dtype


class TensorCodec(Codec):
    """A codec defined on tensors in [-1, 1]; subclasses give ``encode`` and ``decode``."""

    #: Inputs are edge-padded to a multiple of this (the latent grid's cell, in pixels).
    multiple: int = 8

    def __init__(self, options: TensorOptions | None = None) -> None:
        options = options or TensorOptions()
        self.device = resolve_device(options.device)
        self.dtype = resolve_dtype(options.dtype, self.device)
        self.batch_size = options.batch_size
        self.tile = options.tile

    @abstractmethod
    def encode(self, x: Any) -> Any:
        """Pixels ``B x 3 x H x W`` in [-1, 1] -> latents (anything ``decode`` takes)."""

    @abstractmethod
    def decode(self, latents: Any) -> Any:
        """Latents -> pixels ``B x 3 x H x W``, nominally in [-1, 1] (clamped afterwards)."""

    def dtype_name(self) -> str:
        return str(self.dtype).replace("torch.", "")

    def tiling_text(self) -> str:
        return f"; tiles {self.tile}px" if self.tile else ""

    def roundtrip(self, images: Sequence[Image.Image]) -> list[Image.Image | CodecFailure]:
        out: list[Image.Image | CodecFailure] = []
        for start in range(0, len(images), self.batch_size):
            out.extend(self._batch(images[start : start + self.batch_size]))
        return out

    def _batch(self, images: Sequence[Image.Image]) -> list[Image.Image | CodecFailure]:
        import torch

        if len({image.size for image in images}) > 1:  # a batch must share one size
            return [item for image in images for item in self._batch([image])]
        x = images_to_tensor(images).to(self.device, self.dtype)
        try:
            with torch.inference_mode():
                decoded = self._reconstruct(x)
        except Exception as exc:
            message = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            return [CodecFailure(message) for _ in images]
        return tensor_to_images(decoded.float().cpu(), str(self.dtype))

    def _reconstruct(self, x: Any) -> Any:
        height, width = x.shape[-2:]
        if self.tile and max(height, width) > self.tile:
            return tiled(self._padded_roundtrip, x, self.tile)
        return self._padded_roundtrip(x)

    def _padded_roundtrip(self, x: Any) -> Any:
        import torch.nn.functional as F

        height, width = x.shape[-2:]
        pad_h, pad_w = (-height) % self.multiple, (-width) % self.multiple
        if pad_h or pad_w:
            x = F.pad(x, (0, pad_w, 0, pad_h), mode="replicate")
        return self.decode(self.encode(x))[:, :, :height, :width]


def images_to_tensor(images: Sequence[Image.Image]) -> Any:
    """RGB images of one size -> float32 tensor ``B x 3 x H x W`` in [-1, 1]."""
    import numpy as np
    import torch

    arrays = np.stack([np.asarray(image.convert("RGB"), dtype=np.float32) for image in images])
    return torch.from_numpy(arrays).permute(0, 3, 1, 2) / 127.5 - 1.0


def tensor_to_images(decoded: Any, dtype: str) -> list[Image.Image | CodecFailure]:
    """Float tensor ``B x 3 x H x W`` in [-1, 1] -> uint8 RGB images; non-finite ones fail."""
    import numpy as np
    import torch
    from PIL import Image

    out: list[Image.Image | CodecFailure] = []
    for sample in decoded:
        if not bool(torch.isfinite(sample).all()):
            out.append(CodecFailure(f"non-finite values (NaN/inf) in decoded output ({dtype})"))
            continue
        pixels = ((sample.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8)
        array = np.ascontiguousarray(pixels.permute(1, 2, 0).numpy())
        out.append(Image.fromarray(array, "RGB"))
    return out


def tile_starts(length: int, tile: int, step: int) -> list[int]:
    """Start offsets of tiles of ``tile`` covering ``length`` with stride ``step``.

    >>> tile_starts(100, 64, 48)
    [0, 36]
    >>> tile_starts(50, 64, 48)
    [0]
    """
    if length <= tile:
        return [0]
    starts = list(range(0, length - tile, step))
    return [*starts, length - tile]


def tiled(roundtrip: Callable[[Any], Any], x: Any, tile: int) -> Any:
    """Round-trip ``x`` in overlapping ``tile`` x ``tile`` tiles, blended with linear ramps."""
    import torch

    height, width = x.shape[-2:]
    overlap = max(1, tile // 4)
    out = torch.zeros_like(x, dtype=torch.float32)
    weight = torch.zeros((1, 1, height, width), dtype=torch.float32, device=x.device)
    for top in tile_starts(height, tile, tile - overlap):
        for left in tile_starts(width, tile, tile - overlap):
            patch = x[:, :, top : top + tile, left : left + tile]
            ramp = _ramp(patch.shape[-2], overlap, x.device)[:, None] * _ramp(
                patch.shape[-1], overlap, x.device
            )
            out[:, :, top : top + tile, left : left + tile] += roundtrip(patch).float() * ramp
            weight[:, :, top : top + tile, left : left + tile] += ramp
    return out / weight


def _ramp(length: int, overlap: int, device: Any) -> Any:
    """Weights rising linearly over ``overlap`` pixels at both ends (never 0)."""
    import torch

    position = torch.arange(length, dtype=torch.float32, device=device)
    rise = torch.minimum(position + 1, length - position) / (overlap + 1)
    return rise.clamp(max=1.0)


# --------------------------------------------------------------------------- plain objects


class ObjectTensorCodec(TensorCodec):
    """A Python object with ``encode(x)``/``decode(latents)`` on [-1, 1] tensors, as a codec.

    Read from the object when present: ``downsampling_factor`` (padding multiple,
    default 8), ``native_resolution``, ``describe()``; an object with ``to()`` (a torch
    module) is moved to the codec's device and dtype and put in eval mode.
    """

    def __init__(self, name: str, target: Any, options: TensorOptions | None = None) -> None:
        super().__init__(options)
        self.name = name
        self.target = target
        self.multiple = int(getattr(target, "downsampling_factor", 8) or 1)
        self.native_resolution = getattr(target, "native_resolution", None)
        if callable(getattr(target, "to", None)):
            target.to(device=self.device, dtype=self.dtype)
            if callable(getattr(target, "eval", None)):
                target.eval()

    def encode(self, x: Any) -> Any:
        return self.target.encode(x)

    def decode(self, latents: Any) -> Any:
        return self.target.decode(latents)

    def describe(self) -> str:
        own = self.target.describe() if callable(getattr(self.target, "describe", None)) else ""
        kind = own or type(self.target).__qualname__
        return f"{kind}; {self.dtype_name()} on {self.device}{self.tiling_text()}"


class ObjectCodec(Codec):
    """A Python object with ``roundtrip(images)`` (PIL in, PIL or CodecFailure out)."""

    def __init__(self, name: str, target: Any) -> None:
        self.name = name
        self.target = target
        self.native_resolution = getattr(target, "native_resolution", None)

    def roundtrip(self, images: Sequence[Image.Image]) -> list[Image.Image | CodecFailure]:
        return list(self.target.roundtrip(images))

    def describe(self) -> str:
        if callable(getattr(self.target, "describe", None)):
            return str(self.target.describe())
        return type(self.target).__qualname__


def adapt(name: str, target: Any, options: TensorOptions | None = None) -> Codec:
    """Make a :class:`Codec` of ``target``: a Codec, or an object following the protocol.

    A :class:`Codec` is returned as it is (renamed when it has no name); an object
    with ``encode`` and ``decode`` becomes an :class:`ObjectTensorCodec`; one with
    ``roundtrip`` an :class:`ObjectCodec`. Anything else is a ``TypeError``.
    """
    if isinstance(target, Codec):
        if not target.name:
            target.name = name
        return target
    if callable(getattr(target, "encode", None)) and callable(getattr(target, "decode", None)):
        return ObjectTensorCodec(name, target, options)
    if callable(getattr(target, "roundtrip", None)):
        return ObjectCodec(name, target)
    raise TypeError(
        f"{type(target).__qualname__} is not a codec: it needs encode() and decode() "
        "(tensors in [-1, 1]) or roundtrip() (PIL images); see docs/vae_eval.md"
    )


def register_codec(name: str, target: Any, *, summary: str = "", replace: bool = False) -> None:
    """Register ``target`` as codec ``name`` (then ``--vae name`` / ``get_codec(name)`` work).

    ``target`` is a codec object, an object following the protocol, or a class or
    function making one (called with no arguments each time the codec is created).
    Tensor codecs take :class:`TensorOptions` (``name?dtype=bf16&tile=512``).
    A name registered already by another target is an error unless ``replace=True``.
    """

    def create(spec: Spec, options: TensorOptions) -> Codec:
        made = target() if callable(target) and not _is_codec_like(target) else target
        return adapt(name, made, options)

    register(
        "codecs",
        name,
        options=TensorOptions,
        summary=summary or f"Registered object {_qualname(target)}.",
        module=f"{getattr(target, '__module__', None) or type(target).__module__}"
        f".{_qualname(target)}",
        replace=replace,
    )(create)


def _is_codec_like(target: Any) -> bool:
    """An object (not a class or plain function) that already follows the protocol."""
    if isinstance(target, type):
        return False
    return any(callable(getattr(target, method, None)) for method in ("roundtrip", "decode"))


def _qualname(target: Any) -> str:
    kind = target if isinstance(target, type) or callable(target) else type(target)
    return f"{getattr(kind, '__module__', '?')}.{getattr(kind, '__qualname__', repr(kind))}"


def name_codecs(codecs: Sequence[Any]) -> tuple[list[str], dict[str, Codec]]:
    """Codec names in order (repeats dropped) and the codec objects among them, by name.

    ``codecs`` mixes spec strings and objects (a :class:`Codec` or an object following
    the protocol, named by its ``name`` attribute or else its class name); a spec string
    is its own name. Lets ``RunOptions(codecs=[...])`` take objects made in Python.

    >>> from glyphbench.vae_eval.codecs.reference import IdentityCodec
    >>> name_codecs(["jpeg?quality=30", IdentityCodec(), "jpeg?quality=30"])[0]
    ['jpeg?quality=30', 'identity']
    """
    names: list[str] = []
    objects: dict[str, Codec] = {}
    for item in codecs:
        if isinstance(item, str):
            name = item
        else:
            name = str(getattr(item, "name", "") or type(item).__name__)
            objects.setdefault(name, adapt(name, item))
        if name not in names:
            names.append(name)
    return names, objects
