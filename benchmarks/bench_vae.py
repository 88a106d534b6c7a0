"""Benchmark: cost of vae_eval's pieces that do not need OCR.

Times, on this machine:

* rendering default-set images (512 px),
* each reference codec's round trip (identity, JPEG q30, resize f8) per 512 px image,
* a tiny AutoencoderKL built from config (an upper bound on overhead, not a real VAE),
* SSIM and PSNR at 512 and 1024 px,
* WR and PA on the default set's ground truths against a corrupted copy.

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/bench_vae.py [--images 12]

OCR dominates a real run (seconds per image on CPU); see benchmarks/bench_ocr.py.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from vae_eval.codecs import get_codec
from vae_eval.imageset import default_set
from vae_eval.metrics import partial_accuracy, psnr, ssim, word_retention


def timed(label: str, count: int, work: Callable[[], Any]) -> None:
    started = time.perf_counter()
    work()
    seconds = time.perf_counter() - started
    print(f"{label:<40} {seconds / count * 1000:9.2f} ms each ({count} items)")


def corrupt(text: str, rng: random.Random) -> str:
    chars = list(text)
    for _ in range(max(1, len(chars) // 8)):
        chars[rng.randrange(len(chars))] = rng.choice("abcxyz01")
    return "".join(chars)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=12)
    args = parser.parse_args()

    items = default_set(512, limit=args.images).items
    images: list[Any] = []
    timed("render default set, 512 px", len(items), lambda: images.extend(i.load() for i in items))
    for spec in ("identity", "jpeg?quality=30", "resize?factor=8"):
        codec = get_codec(spec)
        timed(f"round trip {spec}", len(images), lambda c=codec: c.roundtrip(images))

    import torch
    from diffusers import AutoencoderKL

    torch.manual_seed(0)
    with tempfile.TemporaryDirectory() as folder:
        AutoencoderKL(
            block_out_channels=(8, 16, 16, 16),
            down_block_types=("DownEncoderBlock2D",) * 4,
            up_block_types=("UpDecoderBlock2D",) * 4,
            latent_channels=4,
            norm_num_groups=8,
            layers_per_block=1,
        ).save_pretrained(folder)
        codec = get_codec(f"diffusers:{folder}")
        subset = images[:4]
        timed("round trip tiny AutoencoderKL (f8)", len(subset), lambda: codec.roundtrip(subset))

    pairs = [
        (a, b) for a, b in zip(images, get_codec("jpeg?quality=30").roundtrip(images), strict=True)
    ]
    timed("SSIM 512 px", len(pairs), lambda: [ssim(a, b) for a, b in pairs])
    timed("PSNR 512 px", len(pairs), lambda: [psnr(a, b) for a, b in pairs])
    big = [(a.resize((1024, 1024)), b.resize((1024, 1024))) for a, b in pairs[:4]]
    timed("SSIM 1024 px", len(big), lambda: [ssim(a, b) for a, b in big])

    rng = random.Random(0)
    truths = [item.truth or "" for item in default_set(512).items] * 10
    reads = [corrupt(t, rng) for t in truths]
    timed(
        "word_retention",
        len(truths),
        lambda: [word_retention(t, r) for t, r in zip(truths, reads, strict=True)],
    )
    timed(
        "partial_accuracy",
        len(truths),
        lambda: [partial_accuracy(t, r) for t, r in zip(truths, reads, strict=True)],
    )


if __name__ == "__main__":
    main()
