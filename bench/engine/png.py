"""The PNG bytes of a run's images: the formats a run may record and the one encoder.

The run folder (:meth:`glyphbench.engine.folder.RunFolder.write_image`) and the image
writer's child processes (:mod:`glyphbench.engine.image_writer`) both encode here, so an
image has the same bytes and SHA-256 whichever process wrote it; the child loads this
module alone, not the run folder's.
"""

from __future__ import annotations

import hashlib
import io
import zlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from PIL import Image

#: The PNG formats a run's images are written in, by number: Pillow's ``save`` options.
#: A run records its format in run.json (key ``png``) and keeps it when resumed, so one
#: run's images never mix formats; run.json without the key is format 1.
#:
#: * 1: Pillow's defaults (zlib level 6, default strategy), every run before format 2.
#: * 2: zlib's run-length strategy (``Z_RLE``, same level; Pillow's filter choice is the
#:   same). On the 51 real text-to-image outputs of ``tests/data/real_t2i`` it costs 0.26
#:   of format 1's CPU for files 4.7% larger (docs/performance.md, "PNG format 2").
PNG_FORMATS: dict[int, dict[str, int]] = {1: {}, 2: {"compress_type": zlib.Z_RLE}}
#: The format of a new run's images.
PNG_FORMAT = 2


def encode_png(image: Image.Image, png: int = PNG_FORMAT) -> tuple[bytes, str]:
    """The PNG bytes of ``image`` in format ``png`` (:data:`PNG_FORMATS`) and their SHA-256
    (what :meth:`glyphbench.engine.folder.RunFolder.write_image` stores).

    >>> from PIL import Image
    >>> image = Image.linear_gradient("L").resize((64, 64))
    >>> new, old = encode_png(image)[0], encode_png(image, 1)[0]
    >>> new != old and Image.open(io.BytesIO(new)).tobytes() == image.tobytes()
    True
    """
    if png not in PNG_FORMATS:
        raise ValueError(
            f"unknown PNG format {png!r}; this glyphbench writes {sorted(PNG_FORMATS)}"
        )
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", **PNG_FORMATS[png])
    data = buffer.getvalue()
    return data, hashlib.sha256(data).hexdigest()
