"""Benchmark: images per second for each available OCR engine.

Renders ~20 images of short signs (DejaVu Sans Bold on plain backgrounds, 512x512
like a small text-to-image output), reads them with every engine that can run
here, and prints load time, images/second and the mean NED against the rendered
text (a sanity check that the speed is not bought by reading nothing).

    .venv/bin/python benchmarks/bench_ocr.py [--images 20] [--engines easyocr,rapidocr]

Model loading is timed separately and excluded from images/second; one warm-up
image is read first so lazy initialisation is not counted either.
"""

from __future__ import annotations

import argparse
import random
import time

from PIL import Image, ImageDraw, ImageFont

from glyphbench.core.errors import InputError
from glyphbench.core.fonts import font_by_name
from glyphbench.readers import available_engines, get_reader
from glyphbench.scoring import ned

SIGNS = (
    "OPEN", "FRESH BREAD", "SALE 50%", "Coffee & Tea", "EXIT", "Welcome Home",
    "NO PARKING", "Books", "Fresh Bread 24/7", "HELLO WORLD", "Garden Cafe",
    "STOP", "Lemonade 2$", "Tickets", "Night Market", "Bike Repair",
)  # fmt: skip


def render_sign(text: str, rng: random.Random, size: int = 512) -> Image.Image:
    """One sign: random pale background, dark text at a random size and place."""
    background = tuple(rng.randint(200, 255) for _ in range(3))
    ink = tuple(rng.randint(0, 60) for _ in range(3))
    image = Image.new("RGB", (size, size), background)
    font = ImageFont.truetype(str(font_by_name("DejaVuSans-Bold")), rng.randint(32, 56))
    left, top, right, bottom = (int(v) for v in font.getbbox(text))
    x = rng.randint(10, max(10, size - (right - left) - 10))
    y = rng.randint(10, max(10, size - (bottom - top) - 10))
    ImageDraw.Draw(image).text((x, y), text, font=font, fill=ink)
    return image


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=20)
    parser.add_argument(
        "--engines", default="", help="comma-separated specs (default: all available)"
    )
    args = parser.parse_args()

    rng = random.Random(0)
    texts = [SIGNS[i % len(SIGNS)] for i in range(args.images)]
    images = [render_sign(text, rng) for text in texts]

    status = available_engines()
    specs = args.engines.split(",") if args.engines else list(status)
    print(f"{len(images)} images of 512x512; load and warm-up excluded from img/s")
    print(f"{'engine':<28} {'load s':>7} {'img/s':>7} {'mean NED':>9}  version")
    for spec in specs:
        name = spec.partition("?")[0]
        if status.get(name, True) is not True:
            print(f"{spec:<28} skipped: {status[name]}")
            continue
        start = time.perf_counter()
        try:
            engine = get_reader(spec)
            engine.read(images[:1])  # warm-up
        except InputError as error:  # installed, but its weights are not here (the VLM offline)
            print(f"{spec:<28} skipped: {str(error).splitlines()[0]}")
            continue
        loaded = time.perf_counter() - start
        start = time.perf_counter()
        results = engine.read(images)
        seconds = time.perf_counter() - start
        mean_ned = sum(ned(t, r.text) for t, r in zip(texts, results, strict=True)) / len(texts)
        print(
            f"{spec:<28} {loaded:7.1f} {len(images) / seconds:7.2f} {mean_ned:9.3f}  "
            f"{engine.version}"
        )


if __name__ == "__main__":
    main()
