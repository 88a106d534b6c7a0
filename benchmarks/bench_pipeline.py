"""Harness overhead: images/s of ``glyphbench run`` against a bare diffusers loop, and OCR images/s.

Same process, same pipeline folder, same batch size, same image settings:

* **bare**: ``DiffusionPipeline.from_pretrained`` then ``pipe(prompt=[...], generator=[...])``
  batch after batch, images kept in memory, nothing else;
* **harness, null OCR**: the full runner (per-image generators, PNG writes,
  SHA-256, scoring, atomic part files, progress) with an OCR stand-in that
  returns no text, i.e. the harness's own cost;
* **harness, EasyOCR**: the same with real EasyOCR overlapping generation (on
  a GPU both share the device; on a small CPU they compete for the same cores).

Throughput excludes model loading on both sides (the runner reports its load
time separately). Rounds alternate bare/harness and the best of each is kept,
which damps noise from other work on the machine. Also reports OCR images/s
per installed engine on 256-pixel control images.

    python benchmarks/bench_pipeline.py                      # tiny random SD, CPU
    python benchmarks/bench_pipeline.py --model PATH --device cuda --batch-size 4 --images 64
    # random-weight full-size SDXL (real FLOPs; built once in --build-dir):
    python benchmarks/bench_pipeline.py --arch sdxl-full --build-dir DIR --device cuda --steps 30

``--arch sdxl-full`` first builds (or reuses) a full-size SDXL-base-1.0-architecture
pipeline with random float16 weights in ``--build-dir`` (~7 GB, see
``bench.models.fullsize``); its images are noise, its cost is SDXL's. Both sides
load the pipeline in the same dtype: ``--dtype``, else the family's on CUDA
(float16 for SDXL) and float32 on CPU.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def bare_loop(
    model: Path,
    prompts: list[str],
    seeds: list[int],
    batch: int,
    settings: dict[str, Any],
    device: str,
    dtype: str = "float32",
) -> float:
    """Images per second of a plain loop over the pipeline (load excluded)."""
    import torch
    from diffusers import DiffusionPipeline

    pipe = DiffusionPipeline.from_pretrained(str(model), torch_dtype=getattr(torch, dtype))
    pipe = pipe.to(device)
    pipe.set_progress_bar_config(disable=True)
    kwargs = {"num_inference_steps": settings["steps"], "guidance_scale": settings["guidance"]}
    if settings.get("height"):
        kwargs.update(height=settings["height"], width=settings["width"])
    started = time.perf_counter()
    for start in range(0, len(prompts), batch):
        chunk = prompts[start : start + batch]
        generators = [torch.Generator("cpu").manual_seed(s) for s in seeds[start : start + batch]]
        pipe(prompt=chunk, generator=generators, output_type="pil", **kwargs)
    elapsed = time.perf_counter() - started
    del pipe
    return len(prompts) / elapsed


class NullOCR:
    """An OCR stand-in that reads nothing instantly (measures the harness alone)."""

    name = "null"
    version = "null"

    def read(self, images: Sequence[Any]) -> list[Any]:
        from bench.readers.base import Reading

        return [Reading(text="") for _ in images]


def harness(
    model: Path,
    n: int,
    batch: int,
    device: str,
    ocr: Any,
    work: Path,
    options: dict[str, Any] | None = None,
) -> tuple[float, float]:
    """(images/s from first batch to last row written, load seconds) of one runner pass."""
    import pandas as pd

    from bench.config import RunConfig
    from bench.runs import run_benchmark
    from prompts.schema import PromptSet

    frame = pd.DataFrame(
        {
            "prompt_id": [f"b{i:04d}" for i in range(n)],
            "prompt": [f"a shop sign that says 'OPEN {i}'" for i in range(n)],
            "text": [f"OPEN {i}" for i in range(n)],
        }
    )
    out = work / f"run-{time.monotonic_ns()}"
    config = RunConfig.from_mapping(
        {
            "models": [
                {
                    "spec": f"diffusers:{model}",
                    "name": "bench",
                    "options": {"device": device, **(options or {})},
                }
            ],
            "batch_size": batch,
            "ocr": getattr(ocr, "name", "null"),
            "out": str(out),
        }
    )
    result = run_benchmark(
        config, prompt_set=PromptSet(frame, source="bench"), ocr=ocr, progress=False
    )
    timing = result.outcome.timings["bench"]
    shutil.rmtree(out, ignore_errors=True)
    return n / timing["span_s"], timing["load_s"]


def harness_cost_per_image(batch: int, work: Path, repeats: int = 10) -> float:
    """Milliseconds of harness work per image (PNG + SHA-256, null OCR, scoring, part file), no generation.

    The same code the OCR worker runs for each batch, timed alone on
    ``batch`` rendered 64-pixel images: the harness's own CPU cost, which on a
    GPU overlaps the next batch's generation.
    """
    import pandas as pd

    from bench.config import RunConfig
    from bench.engine import Batch, Group, RunFolder
    from bench.jobs import build_jobs
    from bench.runner import Runner
    from prompts.schema import PromptSet

    frame = pd.DataFrame(
        {
            "prompt_id": [f"c{i}" for i in range(batch)],
            "prompt": ["p"] * batch,
            "text": ["OPEN"] * batch,
        }
    )
    config = RunConfig.from_mapping(
        {
            "models": ["control:render?size=64"],
            "batch_size": batch,
            "ocr": "null",
            "out": str(work / "cost"),
        }
    )
    prompts = PromptSet(frame, source="bench")
    folder = RunFolder(config.out)
    runner = Runner(config, prompts, folder=folder, ocr=NullOCR(), progress=False)  # type: ignore[arg-type]
    entry = config.models[0]
    jobs = build_jobs(config, prompts.frame)[entry.label]
    producer = runner.open_model(entry)
    images = producer.produce(producer.prepare(jobs))
    group = Group(entry.label, entry.slug, jobs, lambda: producer)
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        done = Batch(group, jobs, producer, None, list(images), seconds=0.1, size=batch)
        rows = runner.finish_batch(done)
        folder.write_part(rows, "cost", "m")
        best = min(best, time.perf_counter() - started)
    return 1000 * best / batch


def ocr_throughput(engines: list[str], n: int = 16) -> dict[str, float | str]:
    """Images per second of each engine on ``n`` rendered 256-pixel control images (after a warm-up)."""
    from bench.models import ImageRequest, get_model
    from bench.readers import available_engines, get_reader

    texts = ["OPEN", "Hello world", "Fresh coffee daily", "42% off!"]
    requests = [ImageRequest(prompt="", text=texts[i % 4], seed=i) for i in range(n)]
    images = get_model("control:render?size=256").generate(requests)
    found: dict[str, float | str] = {}
    available = available_engines()
    for spec in engines:
        name = spec.split("?")[0]
        if available.get(name) is not True:
            found[spec] = f"skipped: {available.get(name, 'not registered')}"
            continue
        engine = get_reader(spec)
        engine.read(images[:2])  # warm-up (first call allocates)
        started = time.perf_counter()
        engine.read(images)
        found[spec] = n / (time.perf_counter() - started)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--model", type=Path, help="Local pipeline folder (default: built per --arch)."
    )
    parser.add_argument(
        "--arch",
        choices=("tiny-sd", "sdxl-full"),
        default="tiny-sd",
        help="Pipeline to build when --model is not given: tiny random SD (default) or a "
        "full-size SDXL-base-1.0 architecture with random weights (~7 GB, built once).",
    )
    parser.add_argument(
        "--build-dir",
        type=Path,
        help="Folder for the --arch sdxl-full build, reused when complete "
        "(default: ~/.cache/glyphbench/sdxl-base-1.0-random-float16).",
    )
    parser.add_argument(
        "--dtype",
        choices=("float32", "float16", "bfloat16"),
        help="Load dtype for both sides (default: the family's on CUDA, float32 on CPU).",
    )
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--images", type=int, default=24)
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--size", type=int, help="Override the pipeline's image size (pixels).")
    parser.add_argument("--steps", type=int, help="Override the pipeline's number of steps.")
    parser.add_argument(
        "--ocr", default="easyocr,rapidocr", help="Engines for the OCR throughput part."
    )
    parser.add_argument("--skip-easyocr-harness", action="store_true")
    parser.add_argument("--json", type=Path, help="Also write the numbers here.")
    args = parser.parse_args()

    from bench.models import get_model

    work = Path(tempfile.mkdtemp(prefix="bench-pipeline-"))
    model = args.model
    if model is None and args.arch == "sdxl-full":
        from bench.models.fullsize import build_sdxl_architecture

        build_dir = args.build_dir or (
            Path.home() / ".cache" / "glyphbench" / "sdxl-base-1.0-random-float16"
        )
        started = time.perf_counter()
        model = build_sdxl_architecture(build_dir, dtype="float16")
        print(f"sdxl-full pipeline ready in {build_dir} ({time.perf_counter() - started:.0f} s)")
    if model is None:
        from bench.models.tiny import build_tiny_sd

        model = build_tiny_sd(work / "tiny-sd")
    # One dtype for both sides: the harness's own choice, made explicit.
    dtype = args.dtype
    if dtype is None:
        from bench.models.diffusers_adapter import DiffusersModel

        adapter = get_model(f"diffusers:{model}")
        dtype = "float32"
        if args.device.startswith("cuda") and isinstance(adapter, DiffusersModel):
            dtype = adapter.family.dtype
    options: dict[str, Any] = {"dtype": dtype}
    if args.size:
        options.update(height=args.size, width=args.size)
    if args.steps:
        options["steps"] = args.steps
    query = "&".join(f"{k}={v}" for k, v in {"device": args.device, **options}.items())
    settings = get_model(f"diffusers:{model}?{query}").describe()["settings"]
    prompts = [f"a shop sign that says 'OPEN {i}'" for i in range(args.images)]
    from bench.seeds import image_seed

    seeds = [image_seed(0, f"b{i:04d}", 0) for i in range(args.images)]

    bare, null = [], []
    load = 0.0
    for _ in range(args.rounds):
        bare.append(bare_loop(model, prompts, seeds, args.batch_size, settings, args.device, dtype))
        speed, load = harness(
            model, args.images, args.batch_size, args.device, NullOCR(), work, options
        )
        null.append(speed)
    numbers: dict[str, Any] = {
        "model": str(model),
        "device": args.device,
        "dtype": dtype,
        "images": args.images,
        "batch_size": args.batch_size,
        "settings": settings,
        "bare_images_per_s": max(bare),
        "harness_null_ocr_images_per_s": max(null),
        "harness_null_ocr_ratio": max(null) / max(bare),
        "harness_load_s": load,
    }
    if not args.skip_easyocr_harness:
        from bench.readers import get_reader

        engine = get_reader("easyocr")
        speed, _ = harness(model, args.images, args.batch_size, args.device, engine, work, options)
        numbers["harness_easyocr_images_per_s"] = speed
        numbers["harness_easyocr_ratio"] = speed / max(bare)
    numbers["harness_cpu_ms_per_image"] = harness_cost_per_image(args.batch_size, work)
    numbers["ocr_images_per_s"] = ocr_throughput([s for s in args.ocr.split(",") if s])
    shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(numbers, indent=2, default=str))
    if args.json:
        args.json.write_text(json.dumps(numbers, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
