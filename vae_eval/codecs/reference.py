"""Reference codecs: no weights, known behaviour, the scale real VAEs are read against.

``identity``
    Returns the image unchanged: its WR equals the OCR ceiling.
``jpeg?quality=Q``
    Pillow JPEG at quality Q (1..100, default 75), 4:2:0 chroma subsampling, then decoded.
``resize?factor=F``
    Bicubic down-scaling by F (> 1; e.g. 8 mimics an f8 latent grid) and bicubic
    up-scaling back to the original size.
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import TYPE_CHECKING

from pydantic import Field

from glyphbench.core.registry import NoOptions, Options, Spec, register
from glyphbench.vae_eval.codecs.protocol import Codec, CodecFailure

if TYPE_CHECKING:
    from PIL import Image


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
