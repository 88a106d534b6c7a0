"""Rebuild this fixture: photo-like images with words at known places, in ICDAR 2015 format.

    python tests/data/icdar2015_mini/make_fixture.py

Each image is a noisy two-colour gradient (a stand-in for a photograph: no real
ICDAR image is redistributed) with words drawn in DejaVu Sans Bold, one slightly
rotated, and one tiny smudge of text labelled ``###`` (do not care). Labels are
``gt_img_N.txt``: eight corner coordinates (clockwise from the top left) and the
transcription, one word per line, UTF-8 with a byte-order mark as the originals.
"""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

HERE = Path(__file__).resolve().parent
SCENES = [
    [("EXIT", 30, 40, 0), ("Parking", 40, 120, 0)],
    [("Coffee", 20, 30, 0), ("OPEN", 180, 110, 8)],
    [("Museum", 40, 50, 0), ("Tickets", 60, 130, -6)],
]


def _font(size: int) -> ImageFont.FreeTypeFont:
    import matplotlib

    path = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / "DejaVuSans-Bold.ttf"
    return ImageFont.truetype(str(path), size)


def _background(rng: random.Random, width: int, height: int) -> Image.Image:
    top = np.array([rng.randint(60, 200) for _ in range(3)], dtype=float)
    bottom = np.array([rng.randint(60, 200) for _ in range(3)], dtype=float)
    ramp = np.linspace(0, 1, height)[:, None, None]
    pixels = top * (1 - ramp) + bottom * ramp + np.zeros((height, width, 3))
    noise = np.random.default_rng(rng.randint(0, 2**31)).normal(0, 12, pixels.shape)
    return Image.fromarray(np.clip(pixels + noise, 0, 255).astype(np.uint8))


def _word(image: Image.Image, text: str, x: int, y: int, angle: int) -> list[tuple[int, int]]:
    font = _font(34)
    left, top, right, bottom = font.getbbox(text)
    tile = Image.new("RGBA", (right + 8, bottom + 8), (0, 0, 0, 0))
    ImageDraw.Draw(tile).text((4, 4), text, font=font, fill=(250, 250, 245, 255))
    rotated = tile.rotate(angle, expand=True, resample=Image.Resampling.BICUBIC)
    image.paste(rotated, (x, y), rotated)
    # corners of the unrotated text box, rotated about the tile centre, then moved
    cx, cy = tile.width / 2, tile.height / 2
    corners = [
        (4 + left, 4 + top),
        (4 + right, 4 + top),
        (4 + right, 4 + bottom),
        (4 + left, 4 + bottom),
    ]
    theta = np.deg2rad(angle)
    out = []
    for px, py in corners:
        dx, dy = px - cx, py - cy
        rx = cx + dx * np.cos(theta) + dy * np.sin(theta) + (rotated.width - tile.width) / 2
        ry = cy - dx * np.sin(theta) + dy * np.cos(theta) + (rotated.height - tile.height) / 2
        out.append((int(np.rint(x + rx)), int(np.rint(y + ry))))
    return out


def main() -> None:
    for number, scene in enumerate(SCENES, start=1):
        rng = random.Random(number)
        image = _background(rng, 360, 200)
        lines = []
        for text, x, y, angle in scene:
            points = _word(image, text, x, y, angle)
            lines.append(",".join(f"{a},{b}" for a, b in points) + f",{text}")
        smudge = (300, 170)
        ImageDraw.Draw(image).text(smudge, "ab", font=_font(7), fill=(230, 230, 230))
        lines.append(
            f"{smudge[0]},{smudge[1]},{smudge[0] + 9},{smudge[1]},{smudge[0] + 9},"
            f"{smudge[1] + 8},{smudge[0]},{smudge[1] + 8},###"
        )
        image.save(HERE / f"img_{number}.jpg", quality=90)
        (HERE / f"gt_img_{number}.txt").write_text("\ufeff" + "\r\n".join(lines) + "\r\n", "utf-8")


if __name__ == "__main__":
    main()
