"""Images as the readers and the metrics take them: a PIL image or a uint8 array.

Both the readers (:mod:`glyphbench.readers`) and the image metrics (:mod:`glyphbench.scoring`)
need the same conversions; they live here, below both, so neither imports the other.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, TypeAlias

if TYPE_CHECKING:
    from pathlib import Path

    import numpy as np
    import numpy.typing as npt
    from PIL import Image

    #: What the image helpers accept: a PIL image (any mode) or an HxW / HxWxC uint8 array.
    ImageLike: TypeAlias = Image.Image | npt.NDArray[np.uint8]


def to_rgb_image(image: ImageLike) -> Image.Image:
    """An RGB PIL image from a PIL image (any mode) or an HxW / HxWx{1,3,4} uint8 array."""
    from PIL import Image

    if isinstance(image, Image.Image):
        return image if image.mode == "RGB" else image.convert("RGB")
    import numpy as np

    array = np.asarray(image)
    if array.dtype != np.uint8:
        raise TypeError(f"expected a uint8 image array, got dtype {array.dtype}")
    if array.ndim == 3 and array.shape[2] == 1:
        array = array[:, :, 0]
    if array.ndim == 2:
        return Image.fromarray(array, mode="L").convert("RGB")
    if array.ndim == 3 and array.shape[2] in (3, 4):
        return Image.fromarray(array[:, :, :3].copy(), mode="RGB")
    raise TypeError(f"expected an image array of shape HxW or HxWxC, got {array.shape}")


def to_rgb_array(image: ImageLike) -> npt.NDArray[np.uint8]:
    """An HxWx3 uint8 RGB array (see :func:`to_rgb_image` for accepted inputs)."""
    import numpy as np

    return np.asarray(to_rgb_image(image))


def shrunk_copy(path: str | Path, side: int) -> tuple[Image.Image, float] | None:
    """An RGB copy of the image file at ``path`` shrunk to fit ``side`` pixels, and its scale.

    The scale is the factor applied to the image's sides (1.0 when it already fits, never
    enlarged), so coordinates on the original map onto the copy by multiplying by it.
    None when the file is missing, is not an image or is larger than PIL will decode (its
    decompression-bomb limit), so a page of thumbnails can show its other images instead of
    failing on one.
    """
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as opened:
            image = opened.convert("RGB")
    except (OSError, UnidentifiedImageError, Image.DecompressionBombError):
        return None
    scale = min(1.0, side / max(image.size))
    if scale < 1.0:
        size = (max(1, round(image.width * scale)), max(1, round(image.height * scale)))
        image = image.resize(size, Image.Resampling.LANCZOS)
    return image, scale
