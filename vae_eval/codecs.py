"""Codecs under test: anything that encodes an image and decodes it back.

``codecs`` plug-ins of :data:`bench.registry.PLUGINS`, created from a spec string
(options typed by :class:`JpegOptions`, :class:`ResizeOptions`,
:class:`DiffusersCodecOptions`):

``identity``
    Returns the image unchanged: its WR equals the OCR ceiling.
``jpeg?quality=Q``
    Pillow JPEG at quality Q (1..100, default 75), 4:2:0 chroma subsampling, then decoded.
``resize?factor=F``
    Bicubic down-scaling by F (> 1; e.g. 8 mimics an f8 latent grid) and bicubic
    up-scaling back to the original size.
``diffusers:<hub id or path>[:subfolder][?dtype=fp32|fp16|bf16&device=auto|cpu|cuda&batch_size=N]``
    A diffusers autoencoder (AutoencoderKL, AsymmetricAutoencoderKL, AutoencoderTiny,
    AutoencoderDC, ...); the class comes from the config's ``_class_name``. See
    :class:`DiffusersCodec`.

Spec parsing for ``diffusers``: the target is split at its *last* colon when the part
after it is a plain folder name (no ``/`` or ``\\``); that part is the subfolder. So
``diffusers:stabilityai/stable-diffusion-xl-base-1.0:vae`` loads the ``vae`` folder
of that hub repo, ``diffusers:/models/sd-vae`` loads a local folder, and a Windows
path like ``diffusers:C:\\models\\vae`` keeps its drive letter.

Every codec has ``name`` (the spec text, used as the ``vae`` column), ``describe()``
(what exactly ran, recorded per row), ``native_resolution`` (a size hint or None) and
``roundtrip(images) -> list[Image | CodecFailure]``, one entry per input, in order.
"""

from __future__ import annotations

import io
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import Field, field_validator

from bench.errors import InputError
from bench.registry import PLUGINS, NoOptions, Options, Spec, missing_modules, register

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


def get_codec(spec: str | Spec) -> Codec:
    """Create the codec named by ``spec``; unknown names and bad options raise InputError.

    >>> get_codec("jpeg?quality=30").name
    'jpeg?quality=30'
    """
    codec: Codec = PLUGINS.create("codecs", spec)
    return codec


# --------------------------------------------------------------------------- reference codecs


class IdentityCodec(Codec):
    name = "identity"

    def roundtrip(self, images: Sequence[Image.Image]) -> list[Image.Image | CodecFailure]:
        return [image.convert("RGB").copy() for image in images]


class JpegOptions(Options):
    """Options of the ``jpeg`` codec."""

    quality: int = Field(default=75, ge=1, le=100, description="Pillow JPEG quality (4:2:0 chroma)")


class ResizeOptions(Options):
    """Options of the ``resize`` codec."""

    factor: float = Field(
        default=8.0, gt=1, description="bicubic down-scaling factor (and back up)"
    )


class JpegCodec(Codec):
    def __init__(self, quality: int) -> None:
        self.quality = quality
        self.name = f"jpeg?quality={quality}"

    def describe(self) -> str:
        import PIL

        return f"Pillow {PIL.__version__} JPEG quality {self.quality}, 4:2:0"

    def roundtrip(self, images: Sequence[Image.Image]) -> list[Image.Image | CodecFailure]:
        from PIL import Image

        out: list[Image.Image | CodecFailure] = []
        for image in images:
            buffer = io.BytesIO()
            image.convert("RGB").save(
                buffer, format="JPEG", quality=self.quality, subsampling="4:2:0"
            )
            buffer.seek(0)
            with Image.open(buffer) as decoded:
                out.append(decoded.convert("RGB"))
        return out


class ResizeCodec(Codec):
    def __init__(self, factor: float) -> None:
        self.factor = factor
        self.name = f"resize?factor={factor:g}"

    def describe(self) -> str:
        return f"bicubic down by {self.factor:g} and back up"

    def roundtrip(self, images: Sequence[Image.Image]) -> list[Image.Image | CodecFailure]:
        from PIL import Image

        out: list[Image.Image | CodecFailure] = []
        for image in images:
            rgb = image.convert("RGB")
            small = (
                max(1, round(rgb.width / self.factor)),
                max(1, round(rgb.height / self.factor)),
            )
            down = rgb.resize(small, Image.Resampling.BICUBIC)
            out.append(down.resize(rgb.size, Image.Resampling.BICUBIC))
        return out


@register("codecs", "identity", summary="The image unchanged: its WR is the OCR ceiling.")
def _identity(spec: Spec, options: NoOptions) -> Codec:
    return IdentityCodec()


@register("codecs", "jpeg", options=JpegOptions, summary="Pillow JPEG at a quality, decoded back.")
def _jpeg(spec: Spec, options: JpegOptions) -> Codec:
    return JpegCodec(options.quality)


@register(
    "codecs",
    "resize",
    options=ResizeOptions,
    summary="Bicubic down-scaling by a factor and back up (e.g. 8 mimics an f8 latent grid).",
)
def _resize(spec: Spec, options: ResizeOptions) -> Codec:
    return ResizeCodec(options.factor)


# --------------------------------------------------------------------------- diffusers


def split_target(target: str) -> tuple[str, str | None]:
    """Split ``<hub id or path>[:subfolder]`` (see the module docstring).

    >>> split_target("stabilityai/stable-diffusion-xl-base-1.0:vae")
    ('stabilityai/stable-diffusion-xl-base-1.0', 'vae')
    >>> split_target("stabilityai/sd-vae-ft-mse")
    ('stabilityai/sd-vae-ft-mse', None)
    >>> split_target("C:\\\\models\\\\vae")
    ('C:\\\\models\\\\vae', None)
    """
    head, sep, tail = target.rpartition(":")
    if sep and head and tail and "/" not in tail and "\\" not in tail:
        return head, tail
    return target, None


#: Image autoencoders whose encode/decode this module knows, by config ``_class_name``.
KL_CLASSES = ("AutoencoderKL", "AsymmetricAutoencoderKL")
SUPPORTED_CLASSES = (*KL_CLASSES, "AutoencoderTiny", "AutoencoderDC")

DTYPES = {
    "fp32": "float32",
    "float32": "float32",
    "fp16": "float16",
    "float16": "float16",
    "bf16": "bfloat16",
    "bfloat16": "bfloat16",
}


class DiffusersCodecOptions(Options):
    """Options of the ``diffusers:`` codec."""

    dtype: str = Field(
        default="fp32", description="fp32, fp16 or bf16 (also float32/float16/bfloat16)"
    )
    device: Literal["auto", "cpu", "cuda"] = Field(
        default="auto", description="auto: CUDA when available"
    )
    batch_size: int = Field(default=4, ge=1, description="images per encode/decode call")

    @field_validator("dtype")
    @classmethod
    def _known_dtype(cls, value: str) -> str:
        if value.lower() not in DTYPES:
            raise ValueError(f"dtype={value!r}: use fp32, fp16 or bf16")
        return value.lower()


class DiffusersCodec(Codec):
    """A diffusers autoencoder, loaded with ``from_pretrained`` and run deterministically.

    * KL autoencoders encode to ``latent_dist.mode()`` (the mean, no sampling); Tiny
      and DC-AE encoders are deterministic already.
    * Latents are scaled as a pipeline would hand them to the denoiser,
      ``(z - shift_factor) * scaling_factor``, and unscaled before decoding, so the
      round trip sees the same numbers a diffusion model does (the scaling is exact
      up to float rounding; the config values are recorded in ``describe()``).
    * Inputs are mapped to [-1, 1], edge-padded to a multiple of the downsampling
      factor and cropped back after decoding; outputs are clamped to [-1, 1].
    * dtype defaults to fp32. With ``dtype=fp16``/``bf16`` a config with
      ``force_upcast: true`` (SD/SDXL VAEs, known to overflow in fp16) runs in fp32
      anyway, and ``describe()`` says so.
    * Decoded output containing NaN/inf becomes a :class:`CodecFailure` for that
      image (the runner also fails blank, i.e. constant, outputs).
    """

    def __init__(self, spec: Spec, options: DiffusersCodecOptions | None = None) -> None:
        options = options or DiffusersCodecOptions()
        self.name = spec.text
        self.source, self.subfolder = split_target(spec.target)
        dtype_name = options.dtype
        self.batch_size = options.batch_size
        device = options.device

        import diffusers
        import torch

        self.device = (
            ("cuda" if torch.cuda.is_available() else "cpu") if device == "auto" else device
        )
        config = self._load_config(diffusers)
        self.class_name = str(config.get("_class_name", "AutoencoderKL"))
        if self.class_name not in SUPPORTED_CLASSES:
            raise InputError(
                None,
                f"{spec.text!r} is a {self.class_name}; "
                f"supported autoencoders: {', '.join(SUPPORTED_CLASSES)}",
            )
        requested = getattr(torch, DTYPES[dtype_name])
        self.upcast = requested != torch.float32 and bool(config.get("force_upcast", False))
        self.dtype = torch.float32 if self.upcast else requested
        if self.device == "cpu" and self.dtype == torch.float16:
            self.dtype = torch.float32  # many CPU kernels lack fp16; fp32 is the faithful reference
        model_class = getattr(diffusers, self.class_name)
        kwargs: dict[str, Any] = {"torch_dtype": self.dtype}
        if self.subfolder:
            kwargs["subfolder"] = self.subfolder
        try:
            self.model = model_class.from_pretrained(self.source, **kwargs)
        except (OSError, ValueError) as exc:
            raise InputError(
                None, f"cannot load {spec.text!r}: {str(exc).splitlines()[0]}"
            ) from None
        self.model.to(self.device).eval()
        self.config = dict(self.model.config)
        self.scaling_factor = float(self.config.get("scaling_factor") or 1.0)
        self.shift_factor = float(self.config.get("shift_factor") or 0.0)
        self.multiple = self._downsampling_factor()
        sample_size = self.config.get("sample_size")
        if isinstance(sample_size, (list, tuple)):
            sample_size = max(sample_size)
        self.native_resolution = int(sample_size) if sample_size else None

    def _load_config(self, diffusers: Any) -> dict[str, Any]:
        local = Path(self.source) / (self.subfolder or "") / "config.json"
        if local.is_file():
            import json

            loaded: dict[str, Any] = json.loads(local.read_text(encoding="utf-8"))
            return loaded
        if Path(self.source).exists():
            raise InputError(
                local, "no diffusers config.json here (wrong path or missing :subfolder?)"
            )
        try:
            kwargs = {"subfolder": self.subfolder} if self.subfolder else {}
            config: dict[str, Any] = diffusers.AutoencoderKL.load_config(self.source, **kwargs)
            return config
        except (OSError, ValueError) as exc:
            raise InputError(
                None, f"cannot load config of {self.name!r}: {str(exc).splitlines()[0]}"
            ) from None

    def _downsampling_factor(self) -> int:
        if self.class_name in ("AutoencoderDC", "AutoencoderTiny"):
            channels = self.config.get("encoder_block_out_channels") or ()
        else:
            channels = self.config.get("block_out_channels") or ()
        return 2 ** max(0, len(channels) - 1) if channels else 64

    def describe(self) -> str:
        import diffusers

        dtype = str(self.dtype).replace("torch.", "")
        upcast = " (force_upcast)" if self.upcast else ""
        where = self.source + (f" [{self.subfolder}]" if self.subfolder else "")
        return (
            f"{self.class_name} {where}; {dtype}{upcast} on {self.device}; "
            f"scale {self.scaling_factor:g} shift {self.shift_factor:g}; "
            f"diffusers {diffusers.__version__}"
        )

    def roundtrip(self, images: Sequence[Image.Image]) -> list[Image.Image | CodecFailure]:
        out: list[Image.Image | CodecFailure] = []
        for start in range(0, len(images), self.batch_size):
            out.extend(self._batch(images[start : start + self.batch_size]))
        return out

    def _batch(self, images: Sequence[Image.Image]) -> list[Image.Image | CodecFailure]:
        import numpy as np
        import torch
        import torch.nn.functional as F
        from PIL import Image

        if len({image.size for image in images}) > 1:  # a batch must share one size
            return [item for image in images for item in self._batch([image])]
        width, height = images[0].size
        arrays = np.stack([np.asarray(image.convert("RGB"), dtype=np.float32) for image in images])
        x = torch.from_numpy(arrays).permute(0, 3, 1, 2) / 127.5 - 1.0
        pad_h, pad_w = (-height) % self.multiple, (-width) % self.multiple
        if pad_h or pad_w:
            x = F.pad(x, (0, pad_w, 0, pad_h), mode="replicate")
        x = x.to(self.device, self.dtype)
        try:
            with torch.inference_mode():
                decoded = self._decode(self._encode(x))
        except Exception as exc:
            message = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            return [CodecFailure(message) for _ in images]
        decoded = decoded[:, :, :height, :width].float().cpu()
        out: list[Image.Image | CodecFailure] = []
        for sample in decoded:
            if not bool(torch.isfinite(sample).all()):
                out.append(
                    CodecFailure(f"non-finite values (NaN/inf) in decoded output ({self.dtype})")
                )
                continue
            pixels = (
                ((sample.clamp(-1, 1) + 1) * 127.5).round().to(torch.uint8).permute(1, 2, 0).numpy()
            )
            out.append(Image.fromarray(np.ascontiguousarray(pixels), "RGB"))
        return out

    def _encode(self, x: Any) -> Any:
        if self.class_name in KL_CLASSES:
            latents = self.model.encode(x).latent_dist.mode()
        elif self.class_name == "AutoencoderTiny":
            latents = self.model.encode(x).latents
        else:  # AutoencoderDC
            latents = self.model.encode(x).latent
        return (latents - self.shift_factor) * self.scaling_factor

    def _decode(self, latents: Any) -> Any:
        return self.model.decode(latents / self.scaling_factor + self.shift_factor).sample


@register(
    "codecs",
    "diffusers",
    options=DiffusersCodecOptions,
    target="required",
    usage="diffusers:<hub id or path>[:subfolder]",
    summary="A diffusers autoencoder (AutoencoderKL, AutoencoderTiny, AutoencoderDC, ...).",
    missing=lambda: missing_modules("torch", "diffusers"),
)
def _diffusers(spec: Spec, options: DiffusersCodecOptions) -> Codec:
    return DiffusersCodec(spec, options)
