"""glyphbench.core.images.shrunk_copy: the one shrunk RGB copy the report's gallery and the
calibration page both draw their thumbnails from."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from glyphbench.core.images import shrunk_copy


def _picture(path: Path, size: tuple[int, int], mode: str = "RGB") -> Path:
    Image.new(mode, size, color=0).save(path)
    return path


def test_a_large_image_fits_the_side_keeping_its_shape(tmp_path: Path) -> None:
    copy = shrunk_copy(_picture(tmp_path / "wide.png", (1000, 250)), 320)
    assert copy is not None
    image, scale = copy
    assert image.size == (320, 80) and image.mode == "RGB"
    assert scale == pytest.approx(0.32)


def test_a_small_image_is_never_enlarged(tmp_path: Path) -> None:
    copy = shrunk_copy(_picture(tmp_path / "small.png", (40, 30), mode="L"), 320)
    assert copy is not None
    assert copy[0].size == (40, 30) and copy[0].mode == "RGB" and copy[1] == 1.0


def test_a_missing_or_damaged_file_gives_none(tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.jpg"
    damaged.write_bytes(b"\xff\xd8 not really a jpeg")
    assert shrunk_copy(tmp_path / "missing.png", 320) is None
    assert shrunk_copy(damaged, 320) is None


def test_an_image_over_the_decoding_limit_gives_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = _picture(tmp_path / "big.png", (300, 300))
    monkeypatch.setattr(Image, "MAX_IMAGE_PIXELS", 100 * 100 // 2)  # 90,000 px is over twice it
    assert shrunk_copy(big, 320) is None
