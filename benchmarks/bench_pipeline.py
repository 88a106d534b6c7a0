# mypy: disable-error-code="no-untyped-call"
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
    # random-weight full-size Qwen-Image (20B MMDiT + Qwen2.5-VL-7B; 58 GB, one 80 GB GPU):
    python benchmarks/bench_pipeline.py --arch qwen-image-full --build-dir DIR --device cuda

``--arch sdxl-full`` first builds (or reuses) a full-size SDXL-base-1.0-architecture
pipeline with random float16 weights in ``--build-dir`` (~7 GB, see
``benchmarks.fullsize``); ``--arch qwen-image-full`` a Qwen-Image one in
bfloat16 (~58 GB of disk, ~42 GB of memory while building; see
``benchmarks.fullsize_qwen``). Their images are noise, their cost is the
real model's. Both sides load the pipeline in the same dtype (``--dtype``,
else the family's on CUDA and float32 on CPU) and call it with the same
arguments: the family's guidance keyword (Qwen-Image: ``true_cfg_scale`` with
its " " negative prompt, i.e. two transformer passes per step), size, steps
and extra call arguments, as the harness resolves them.
"""

from __future__ import annotations

import argparse
import inspect
import json
import shutil
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def bare_call_kwargs(settings: dict[str, Any], call: dict[str, Any]) -> dict[str, Any]:
    """The ``__call__`` arguments the harness passes, from its ``describe()`` (no negative prompt).

    >>> bare_call_kwargs(
    ...     {"steps": 50, "guidance": 4.0, "height": 1328, "width": 1328},
    ...     {"guidance_keyword": "true_cfg_scale", "call_kwargs": {}},
    ... )["true_cfg_scale"]
    4.0
    """
    kwargs: dict[str, Any] = {
        "num_inference_steps": settings["steps"],
        "height": settings.get("height"),
        "width": settings.get("width"),
        "max_sequence_length": settings.get("max_sequence_length"),
        **call.get("call_kwargs", {}),
    }
    keyword = call.get("guidance_keyword", "guidance_scale")
    if keyword != "guider":  # a guider component carries its own scale
        kwargs[keyword] = settings["guidance"]
    return {key: value for key, value in kwargs.items() if value is not None}


def bare_loop(
    model: Path,
    prompts: list[str],
    seeds: list[int],
    batch: int,
    settings: dict[str, Any],
    device: str,
    dtype: str = "float32",
    call: dict[str, Any] | None = None,
) -> float:
    """Images per second of a plain loop over the pipeline (load excluded).

    ``call`` holds the adapter's ``guidance_keyword`` and ``call_kwargs``
    (``describe()``), so the bare loop asks for the same work as the harness.
    """
    call = call or {}
    import torch
    from diffusers import DiffusionPipeline

    pipe = DiffusionPipeline.from_pretrained(str(model), torch_dtype=getattr(torch, dtype))
    pipe = pipe.to(device)
    pipe.set_progress_bar_config(disable=True)
    kwargs = bare_call_kwargs(settings, call)
    accepted = inspect.signature(pipe.__call__).parameters
    kwargs = {key: value for key, value in kwargs.items() if key in accepted}
    negative = settings.get("negative_prompt")
    started = time.perf_counter()
    for start in range(0, len(prompts), batch):
        chunk = prompts[start : start + batch]
        generators = [torch.Generator("cpu").manual_seed(s) for s in seeds[start : start + batch]]
        if negative:
            kwargs["negative_prompt"] = [negative] * len(chunk)
        pipe(prompt=chunk, generator=generators, output_type="pil", **kwargs)
    elapsed = time.perf_counter() - started
    del pipe
    return len(prompts) / elapsed


class NullOCR:
    """An OCR stand-in that reads nothing instantly (measures the harness alone)."""

    name = "null"
    version = "null"

    def read(self, images: Sequence[Any]) -> list[Any]:
        from glyphbench.readers.base import Reading

        return [Reading(text="") for _ in images]


def register_null_reader() -> None:
    """Let run configs name the ``null`` reader (the stand-in above); idempotent."""
    from glyphbench.core.registry import PLUGINS

    PLUGINS.register("readers", "null", summary="benchmark stand-in: reads nothing")(
        lambda spec, options: NullOCR()
    )


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
    return harness_spec(
        f"diffusers:{model}", n, batch, ocr, work, {"device": device, **(options or {})}
    )


def harness_spec(
    spec: str, n: int, batch: int, ocr: Any, work: Path, options: dict[str, Any] | None = None
) -> tuple[float, float]:
    """:func:`harness` for any model spec: ``n`` prompts, one seed, model label ``bench``."""
    import pandas as pd

    register_null_reader()

    from glyphbench.prompts.schema import PromptSet

    try:
        from glyphbench.run.config import RunConfig
        from glyphbench.run.operations import run_benchmark
    except ImportError:  # an engine before the engine/run split (bench_gpu_proxy.py --engine)
        from glyphbench.engine.config import RunConfig  # type: ignore[no-redef]
        from glyphbench.engine.operations import run_benchmark  # type: ignore[no-redef]

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
            "models": [{"spec": spec, "name": "bench", "options": dict(options or {})}],
            "batch_size": batch,
            "ocr": getattr(ocr, "name", "null"),
            "out": str(out),
        }
    )
    # the reader object's keyword: ``reader``; engines before the typed stages (--engine,
    # the one the H200 ran) call it ``ocr``
    known = inspect.signature(run_benchmark).parameters
    given = {"reader" if "reader" in known else "ocr": ocr}
    result = run_benchmark(
        config, prompt_set=PromptSet(frame, source="bench"), progress=False, **given
    )
    timing = result.outcome.timings["bench"]
    shutil.rmtree(out, ignore_errors=True)
    return n / timing["span_s"], timing["load_s"]


def harness_cost_per_image(batch: int, work: Path, repeats: int = 10) -> float:
    """Milliseconds of harness work per image, no generation.

    PNG + SHA-256, null OCR, scoring and the part file.

    The same code the OCR worker runs for each batch, timed alone on
    ``batch`` rendered 64-pixel images: the harness's own CPU cost, which on a
    GPU overlaps the next batch's generation.
    """
    import pandas as pd

    from glyphbench.engine import Batch, Group, RunFolder
    from glyphbench.prompts.schema import PromptSet
    from glyphbench.run.config import RunConfig
    from glyphbench.run.image_jobs import build_jobs
    from glyphbench.run.shard import Runner

    register_null_reader()
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
    folder = RunFolder(config.output.out)
    runner = Runner(config, prompts, folder=folder, reader=NullOCR(), progress=False)  # type: ignore[arg-type]
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


def _png_home() -> Any:
    """The imported engine's module that encodes PNGs: ``glyphbench.engine.png``, or the
    run folder's module in an engine that has no such module (``bench_gpu_proxy.py --engine``)."""
    import importlib
    import importlib.util

    home = "glyphbench.engine.png"
    return importlib.import_module(
        home if importlib.util.find_spec(home) else "glyphbench.engine.folder"
    )


def png_formats() -> list[int]:
    """The PNG formats the imported engine writes: ``[1]`` for one before PNG format 2
    (``bench_gpu_proxy.py --engine``), which writes Pillow's defaults and takes no format."""
    return sorted(getattr(_png_home(), "PNG_FORMATS", {1: {}}))


def new_run_png() -> int:
    """The PNG format the imported engine gives a new run (1 before PNG format 2)."""
    from glyphbench.engine import folder

    return int(getattr(folder, "PNG_FORMAT", 1))


def encode_png(image: Any, png: int) -> tuple[bytes, str]:
    """:func:`glyphbench.engine.png.encode_png` in format ``png``, on any engine."""
    home = _png_home()
    formats = (png,) if hasattr(home, "PNG_FORMATS") else ()  # an engine before: format 1 alone
    encoded: tuple[bytes, str] = home.encode_png(image, *formats)
    return encoded


def tail_floor(pool: Sequence[Any], images: int, batch: int) -> dict[str, Any]:
    """The least time a run's last batch can take to encode after generation ends.

    ``encode_ms``: CPU of :func:`glyphbench.engine.png.encode_png` per image in the PNG
    format of a new run (``png_format``; least of 3 for each image of ``pool``, images
    like the model's, then their mean). The last
    batch's images are shared by the writer processes and the worker thread, at most
    one encoder a usable core (``encoders``); ``tail_floor_s``: the slowest encoder's
    whole images.
    """
    import os

    try:
        from glyphbench.engine.image_writer import writer_processes
    except ImportError:  # an engine before the writer processes (--engine): the worker thread alone

        def writer_processes() -> int:
            return 0

    png = new_run_png()  # read now: a benchmark may ask for another format (--png)
    costs = []
    for image in pool:
        best = float("inf")
        for _ in range(3):
            started = time.thread_time()
            encode_png(image, png)
            best = min(best, time.thread_time() - started)
        costs.append(best)
    encode_s = sum(costs) / len(costs)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    encoders = min(cores or 1, writer_processes() + 1)
    last = images - batch * ((images - 1) // batch)
    floor_s = -(-last // encoders) * encode_s
    return {
        "png_format": png,
        "encode_ms": 1000 * encode_s,
        "encoders": encoders,
        "tail_floor_s": floor_s,
    }


def ceiling(images: int, bare_images_per_s: float, floor_s: float) -> float:
    """The best harness/bare a pass of ``images`` can give: the bare loop's time over that
    time plus the last batch's :func:`tail_floor` (no harness writing the same files beats
    it on this machine).

    >>> round(ceiling(48, 13.34, 0.16), 3)
    0.957
    """
    bare_s = images / bare_images_per_s
    return bare_s / (bare_s + floor_s)


def ocr_throughput(engines: list[str], n: int = 16) -> dict[str, float | str]:
    """Images per second of each engine on ``n`` rendered 256-pixel control images.

    Timed after a warm-up call (the first call allocates).
    """
    from glyphbench.models import ImageRequest, get_model
    from glyphbench.readers import available_engines, get_reader

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


#: ``--arch`` -> (builder module, builder function, saved dtype, default build folder name);
#: tiny-sd is built in a temporary folder by main().
ARCHITECTURES: dict[str, tuple[str, str, str, str]] = {
    "tiny-sd": ("glyphbench.tiny.pipelines", "build_tiny_sd", "float32", ""),
    "sdxl-full": (
        "benchmarks.fullsize",
        "build_sdxl_architecture",
        "float16",
        "sdxl-base-1.0-random-float16",
    ),
    "qwen-image-full": (
        "benchmarks.fullsize_qwen",
        "build_qwen_image_architecture",
        "bfloat16",
        "qwen-image-random-bfloat16",
    ),
}


def build_full_size(arch: str, build_dir: Path | None) -> Path:
    """Build (or reuse) the full-size random-weight pipeline ``arch`` and return its folder."""
    import importlib

    module, function, dtype, name = ARCHITECTURES[arch]
    folder = build_dir or Path.home() / ".cache" / "glyphbench" / name
    started = time.perf_counter()
    built: Path = getattr(importlib.import_module(module), function)(folder, dtype=dtype)
    print(f"{arch} pipeline ready in {folder} ({time.perf_counter() - started:.0f} s)")
    return built


def compare(
    model: Path,
    *,
    device: str,
    images: int,
    batch: int,
    rounds: int,
    size: int | None = None,
    steps: int | None = None,
    dtype: str | None = None,
    work: Path,
) -> dict[str, Any]:
    """Harness (null reader) against the bare loop on ``model``: best images/s of each, ratio.

    Rounds alternate bare and harness; both load the pipeline in one dtype (``dtype``,
    else the family's on CUDA and float32 on CPU) and make ``images`` images of
    ``size`` pixels (default: the pipeline's) in ``steps`` steps, ``batch`` at a time.
    The returned dict also holds the ``settings`` the harness resolved and each round.
    """
    from glyphbench.core.seeds import image_seed
    from glyphbench.models import get_model

    if dtype is None:  # one dtype for both sides: the harness's own choice, made explicit
        from glyphbench.models.diffusers_adapter import DiffusersModel

        adapter = get_model(f"diffusers:{model}")
        dtype = "float32"
        if device.startswith("cuda") and isinstance(adapter, DiffusersModel):
            dtype = adapter.family.dtype
    options: dict[str, Any] = {"dtype": dtype}
    if size:
        options.update(height=size, width=size)
    if steps:
        options["steps"] = steps
    query = "&".join(f"{k}={v}" for k, v in {"device": device, **options}.items())
    described = get_model(f"diffusers:{model}?{query}").describe()
    settings = described["settings"]
    prompts = [f"a shop sign that says 'OPEN {i}'" for i in range(images)]
    seeds = [image_seed(0, f"b{i:04d}", 0) for i in range(images)]
    bare, null = [], []
    load = 0.0
    for _ in range(rounds):
        bare.append(bare_loop(model, prompts, seeds, batch, settings, device, dtype, described))
        speed, load = harness(model, images, batch, device, NullOCR(), work, options)
        null.append(speed)
    return {
        "model": str(model),
        "device": device,
        "dtype": dtype,
        "images": images,
        "batch_size": batch,
        "rounds": rounds,
        "settings": settings,
        "options": options,
        "bare_rounds_images_per_s": bare,
        "harness_rounds_images_per_s": null,
        "bare_images_per_s": max(bare),
        "harness_null_ocr_images_per_s": max(null),
        "harness_null_ocr_ratio": max(null) / max(bare),
        "harness_load_s": load,
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--model", type=Path, help="Local pipeline folder (default: built per --arch)."
    )
    parser.add_argument(
        "--arch",
        choices=tuple(ARCHITECTURES),
        default="tiny-sd",
        help="Pipeline to build when --model is not given: tiny random SD (default), or a "
        "full-size SDXL-base-1.0 (~7 GB) or Qwen-Image (~58 GB) architecture with random "
        "weights, built once.",
    )
    parser.add_argument(
        "--build-dir",
        type=Path,
        help="Folder for a full-size build, reused when complete (default: "
        "~/.cache/glyphbench/sdxl-base-1.0-random-float16 or qwen-image-random-bfloat16).",
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

    work = Path(tempfile.mkdtemp(prefix="bench-pipeline-"))
    model = args.model
    if model is None and args.arch != "tiny-sd":
        model = build_full_size(args.arch, args.build_dir)
    if model is None:
        from glyphbench.tiny.pipelines import build_tiny_sd

        model = build_tiny_sd(work / "tiny-sd")
    numbers = compare(
        model,
        device=args.device,
        images=args.images,
        batch=args.batch_size,
        rounds=args.rounds,
        size=args.size,
        steps=args.steps,
        dtype=args.dtype,
        work=work,
    )
    options = numbers["options"]
    bare = numbers["bare_images_per_s"]
    if not args.skip_easyocr_harness:
        from glyphbench.readers import get_reader

        engine = get_reader("easyocr")
        speed, _ = harness(model, args.images, args.batch_size, args.device, engine, work, options)
        numbers["harness_easyocr_images_per_s"] = speed
        numbers["harness_easyocr_ratio"] = speed / bare
    numbers["harness_cpu_ms_per_image"] = harness_cost_per_image(args.batch_size, work)
    numbers["ocr_images_per_s"] = ocr_throughput([s for s in args.ocr.split(",") if s])
    shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(numbers, indent=2, default=str))
    if args.json:
        args.json.write_text(json.dumps(numbers, indent=2, default=str) + "\n")


if __name__ == "__main__":
    main()
