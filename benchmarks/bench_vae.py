"""Benchmark: cost of vae_eval's pieces that do not need OCR.

Times, on this machine:

* rendering default-set images (512 px),
* each reference codec's round trip (identity, JPEG q30, resize f8) per 512 px image,
* a tiny AutoencoderKL built from config (an upper bound on overhead, not a real VAE),
* the real taef2 tiny autoencoder (../shared/taef2) per 512 px image, when present,
* SSIM and PSNR at 512 and 1024 px,
* WR and PA on the default set's ground truths against a corrupted copy.

    OMP_NUM_THREADS=2 .venv/bin/python benchmarks/bench_vae.py [--images 12]

OCR dominates a real run (seconds per image on CPU); see benchmarks/bench_ocr.py.

``--ocr-timing N`` measures instead whether reading time depends on what ran before
("OCR 3x slower right after a VAE"): the same N images round-tripped by
taef2 and read with EasyOCR (a) the old way, reading while the codec works on the
next batch (``overlap=True``), (b) the new way, codec and reader taking turns
(``overlap=False``), (c) re-read in the same process right after, and (d) re-read
in a fresh process. It prints the median seconds per image of each.
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

from PIL import Image

from glyphbench.vae_eval.codecs import get_codec
from glyphbench.vae_eval.imageset import default_set
from glyphbench.vae_eval.metrics import partial_accuracy, psnr, ssim, word_retention


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


TAEF2 = Path(__file__).resolve().parents[2] / "shared" / "taef2"


def median(values: Any) -> float:
    import statistics

    return float(statistics.median(list(values)))


def read_each(reader: Any, images: list[Any]) -> list[float]:
    """Seconds of one ``reader.read`` call per image (after one warm-up call)."""
    reader.read(images[:1])
    seconds = []
    for image in images:
        started = time.perf_counter()
        reader.read([image])
        seconds.append(time.perf_counter() - started)
    return seconds


FRESH_READ = """
import json, sys, time
from pathlib import Path
from PIL import Image
sys.path.insert(0, {root!r})
from glyphbench.readers import get_reader
from benchmarks.bench_vae import read_each
images = [Image.open(p).convert("RGB") for p in sorted(Path({folder!r}).glob("*.png"))]
print(json.dumps(read_each(get_reader("easyocr?gpu=0"), images)))
"""


def ocr_timing(count: int) -> None:
    """Reading time after a VAE: overlapped vs taking turns vs re-read (see the docstring)."""
    import json
    import subprocess

    from glyphbench.readers import get_reader
    from glyphbench.vae_eval.runner import RunOptions, evaluate

    spec = f"taesd:{TAEF2}"
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for overlap in (True, False):
            out = Path(folder) / f"overlap-{overlap}"
            options = RunOptions(
                codecs=[spec], ocr="easyocr?gpu=0", limit=count, batch_size=2, overlap=overlap
            )
            table = evaluate(options, out)
            label = "(a) overlapped with the codec" if overlap else "(b) taking turns"
            results[label] = median(table["ocr_seconds"])
            results[f"    codec seconds, {label[4:]}"] = median(table["codec_seconds"])
        recon_dir = next((Path(folder) / "overlap-False" / "images").glob("taesd*"))
        images = [Image.open(p).convert("RGB") for p in sorted(recon_dir.glob("*.png"))]
        results["(c) re-read, same process"] = median(
            read_each(get_reader("easyocr?gpu=0"), images)
        )
        root = str(Path(__file__).resolve().parents[1])
        code = FRESH_READ.format(root=root, folder=str(recon_dir))
        fresh = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        results["(d) re-read, fresh process"] = median(json.loads(fresh.stdout.splitlines()[-1]))
    print(f"OCR seconds per image, median over {count} taef2 reconstructions (512 px):")
    for label, seconds in results.items():
        print(f"  {label:<44} {seconds:6.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=12)
    parser.add_argument("--ocr-timing", type=int, default=0, metavar="N")
    args = parser.parse_args()
    if args.ocr_timing:
        ocr_timing(args.ocr_timing)
        return

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
    if (TAEF2 / "taef2_encoder.pth").is_file():
        taef2 = get_codec(f"taesd:{TAEF2}")
        subset = images[:2]
        timed("round trip taef2 (real, 512 px)", len(subset), lambda: taef2.roundtrip(subset))

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
