"""Harness/bare on a CPU stand-in that behaves like a GPU pipeline.

On a GPU, a diffusers loop is bound by Python launching kernels: the generating
thread holds the GIL for most of every denoising step, so whatever else holds the
GIL in the generating process (PNG encoding, hashing, scoring in the run's worker
thread) slows generation down, even on a machine with idle cores. The bare-loop
benchmark on this CPU (``bench_pipeline.py``) did not show it: its images are tiny
and its model computes on every core.

The stand-in pipeline (plug-in ``gpuproxy``) spends a fixed amount of pure-Python
work per denoising step, holding the GIL as kernel launches do (``time.sleep``
would release it), optionally followed by a GIL-free wait (``--gil`` below 1: the
share of a step spent launching; the rest a device wait), then returns PIL images
of real sizes and real content:

* ``noise``: uniform random RGB, what a random-weight model draws (PNG ~3 MB at
  1024 px, the slowest to encode);
* ``photo``: smooth gradients and shapes with rendered text, photo-like (PNG
  encodes several times faster and smaller).

For each (size, content), rounds alternate the **bare** loop (call the stand-in
batch after batch, keep the images in memory) and the **harness** (the real
runner, :func:`glyphbench.run.operations.run_benchmark`, with the null reader of
``bench_pipeline.py``: PNG + SHA-256, reading store, scoring, part files), same
batch and images; the best of each is kept and harness/bare printed.

Calibration (defaults): the per-step cost is set so that the bare loop matches the
H200 figures of the full-size random SDXL (docs/performance.md):
1024 px, 20 steps, batch 4, 16 images: 1.130 images/s (177.0 ms a step);
512 px, 4 steps, batch 8, 48 images: 13.34 images/s (149.9 ms a step). The GIL
share of a step (``--gil``, default :data:`DEFAULT_GIL`) is the one with which the
engine measured on the H200 (``--engine`` on a checkout of :data:`H200_ENGINE`)
loses on this stand-in what it lost there (docs/performance.md, "Calibrated against
the engine measured on the H200"). Each step holds the GIL until the generating
thread has spent its share of the step's CPU time (:func:`hold`), so the bare
loop matches the target on any machine that gives it a core, and the harness's
loss is what it takes from that thread: the GIL (and the core) while it runs.
1328 px (``--sizes 1328``) reuses the 1024 px step cost (no GPU figure at that
size: uncalibrated).

    python benchmarks/bench_gpu_proxy.py                    # 512 and 1024 px, noise and photo
    python benchmarks/bench_gpu_proxy.py --json proxy.json  # {"rows": [{"size": 512, ...}]}
    python benchmarks/bench_gpu_proxy.py --gil 1            # every step all launching
    python benchmarks/bench_gpu_proxy.py --engine ../old    # another checkout's engine
    python benchmarks/bench_gpu_proxy.py --ablate images    # + the harness writing no images

``--ablate images`` (or ``part-files``) also runs, in the same rounds, the harness with
that taken out: what the harness would give if it cost nothing, so a row's loss splits
into its parts (a diagnostic: such a pass writes no usable run).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parent))
import checkout

# The engine's checkout: --engine's (ENGINE_VARIABLE below), else the installed one.
if os.environ.get("GLYPHBENCH_PROXY_ENGINE"):
    checkout.mount(Path(os.environ["GLYPHBENCH_PROXY_ENGINE"]))

from bench_pipeline import (
    NullOCR,
    ceiling,
    harness_spec,
    new_run_png,
    png_formats,
    tail_floor,
)

from glyphbench.core.registry import PLUGINS, Options, Spec
from glyphbench.engine import folder
from glyphbench.models.base import ImageRequest, ModelAdapter

#: Environment variable: the root of a glyphbench checkout whose engine the harness
#: passes run instead of this one's (``--engine``: the run re-executes itself with it).
ENGINE_VARIABLE = "GLYPHBENCH_PROXY_ENGINE"
#: The commit of glyphbench whose engine made the H200 figures (its table;
#: ../shared/design/gpu-check.md): ``--engine`` on a checkout of it checks the calibration.
H200_ENGINE = "665db58"
#: The share of each step that holds the GIL by default: with it, the engine measured on
#: the H200 loses on the stand-in what it lost there within 3 points (``--engine``, noise,
#: 2026-11-28 on this project's 2-core machine: 0.797 against 0.807 at 512 px, 0.936
#: against 0.909 at 1024 px). At 1 (every step all launching) its 512 px loss is 9 points
#: too large (0.715). A fit of one share to two figures: docs/performance.md.
DEFAULT_GIL = 0.8
CONTENTS = ("noise", "photo")
#: glyphbench.engine.image_writer.MODE_VARIABLE (read from the environment by the runner).
WRITER_VARIABLE = "GLYPHBENCH_IMAGE_WRITER"
#: What ``--ablate`` can take out of the harness: each is measured in the same rounds,
#: to say where the harness's loss goes (a run without it is a diagnostic, not a run).
#: ``images``: no PNG encoded, hashed or written (:func:`ablated`); ``part-files``: the
#: rows built and scored but no part file written.
ABLATIONS = ("images", "part-files")
#: The digest an ablated image gets in its row.
PLACEHOLDER_SHA256 = "0" * 64


@dataclass(frozen=True)
class Setting:
    """One GPU setting: steps, batch, images and the H200's bare images/s (None: none)."""

    steps: int
    batch: int
    images: int
    rounds: int
    gpu_bare_img_s: float | None

    @property
    def step_ms(self) -> float:
        """Milliseconds a step takes for the bare loop to match the GPU figure."""
        target = self.gpu_bare_img_s or SETTINGS[1024].gpu_bare_img_s
        assert target is not None
        return 1000 * self.batch / target / self.steps


#: size -> setting; the 512 and 1024 figures are the H200 table (../shared/design/gpu-check.md).
SETTINGS: dict[int, Setting] = {
    512: Setting(steps=4, batch=8, images=48, rounds=3, gpu_bare_img_s=13.34),
    1024: Setting(steps=20, batch=4, images=16, rounds=2, gpu_bare_img_s=1.130),
    1328: Setting(steps=20, batch=4, images=16, rounds=2, gpu_bare_img_s=None),
}


# --------------------------------------------------------------------------- the stand-in

#: Iterations of :func:`_spin` between two looks at the thread's CPU clock (~0.1 ms).
SPIN_CHUNK = 2_000


def _spin(iterations: int) -> int:
    """Pure-Python work (holds the GIL throughout, as launching kernels from Python does)."""
    total = 0
    for i in range(iterations):
        total += i & 7
    return total


def hold(cpu_s: float) -> None:
    """Work holding the GIL until this thread has spent ``cpu_s`` seconds of CPU.

    A fixed amount of *CPU time*, not of wall time (a deadline would end on time
    however long other threads held the GIL) nor of iterations (the speed of this
    machine's cores drifts by a third from minute to minute under other tenants, and
    a count calibrated once would miss the GPU figure): while another thread holds
    the GIL, this one waits without spending CPU, so it is slowed down exactly as a
    launching thread is, and alone it takes ``cpu_s`` as the GPU's step does.
    """
    end = time.thread_time() + cpu_s
    while time.thread_time() < end:
        _spin(SPIN_CHUNK)


def render(size: int, content: str, number: int) -> Any:
    """One image of ``content`` (``noise`` or ``photo``), distinct per ``number``."""
    import numpy as np
    from PIL import Image, ImageDraw, ImageFilter, ImageFont

    rng = np.random.default_rng(number)
    if content == "noise":
        return Image.fromarray(rng.integers(0, 256, (size, size, 3), dtype=np.uint8))
    if content != "photo":
        raise ValueError(f"content must be one of {CONTENTS}, got {content!r}")
    ramp = np.linspace(0.0, 1.0, size, dtype=np.float32)
    low, high = rng.uniform(0, 255, 3), rng.uniform(0, 255, 3)
    weight = (ramp[:, None] * 0.7 + ramp[None, :] * 0.3)[..., None]
    # Texture: coarse noise, blurred (surfaces, foliage); a photo is not perfectly smooth.
    grain = np.kron(rng.normal(0, 6, (size // 8, size // 8, 3)), np.ones((8, 8, 1)))
    pixels = np.clip(low * (1 - weight) + high * weight + grain, 0, 255).astype(np.uint8)
    image = Image.fromarray(pixels).filter(ImageFilter.GaussianBlur(4))
    draw = ImageDraw.Draw(image)
    for _ in range(6):  # shapes: a sky, a sign, a shop front
        x, y = rng.integers(0, size, 2)
        r = int(rng.integers(size // 16, size // 4))
        fill = tuple(int(v) for v in rng.integers(0, 256, 3))
        draw.ellipse((x - r, y - r, x + r, y + r), fill=fill)
    draw.rectangle((size // 8, size // 3, size * 7 // 8, size * 2 // 3), fill=(245, 240, 225))
    font = ImageFont.load_default(size=max(12, size // 12))
    draw.text((size // 6, size * 11 // 24), f"OPEN {number}", fill=(20, 20, 30), font=font)
    return image


class ProxyPipeline:
    """Calls cost ``steps x step_ms`` of work holding the GIL for ``gil`` of each step.

    The images come from a pool of 4 prepared ones (made once, outside any timing);
    each call returns fresh copies (``Image.fromarray``), as a pipeline's
    ``numpy_to_pil`` does.
    """

    def __init__(
        self, size: int, content: str, steps: int, step_ms: float, gil: float = 1.0
    ) -> None:
        import numpy as np

        if not 0.0 < gil <= 1.0:
            raise ValueError(f"gil must be in (0, 1], got {gil}")
        self.steps, self.gil = steps, gil
        self.hold_s = step_ms * gil / 1000
        self.wait_s = step_ms * (1.0 - gil) / 1000
        self.pool = [np.asarray(render(size, content, n)) for n in range(4)]

    def __call__(self, count: int) -> list[Any]:
        from PIL import Image

        for _ in range(self.steps):
            hold(self.hold_s)
            if self.wait_s:
                time.sleep(self.wait_s)  # the device computing: the GIL is free
        return [Image.fromarray(self.pool[i % len(self.pool)]) for i in range(count)]


class ProxyOptions(Options):
    size: int = 512
    content: Literal["noise", "photo"] = "noise"
    steps: int = 4
    step_ms: float = 1.0
    gil: float = 1.0
    device: str | None = None  # the runner adds one to non-control models


#: (start, end) of each ``gpuproxy`` generate call in this process (the harness's batches).
CALLS: list[tuple[float, float]] = []
#: The run's worker thread's CPU seconds when each ``gpuproxy`` call ended (what the
#: harness took, in the generating process, beside generation: see ``worker_cpu_ms``).
WORKER_CPU: list[float] = []


#: Worker threads of earlier runs (ended, or about to): never the one measured. The
#: threads themselves are kept, not their ids (a freed thread's id may be the next one's).
EARLIER_WORKERS: list[Any] = []


def worker_threads() -> list[Any]:
    """Each live thread of the engine named ``glyphbench-worker``."""
    import threading

    return [thread for thread in threading.enumerate() if thread.name == "glyphbench-worker"]


def worker_cpu_s() -> float:
    """CPU seconds so far of this run's worker thread (``glyphbench-worker``, not one of
    :data:`EARLIER_WORKERS`, which may linger a moment after its run ended); 0 if none."""
    for thread in worker_threads():
        if any(thread is earlier for earlier in EARLIER_WORKERS) or thread.ident is None:
            continue
        with contextlib.suppress(OSError):  # it may end meanwhile
            return time.clock_gettime(time.pthread_getcpuclockid(thread.ident))
    return 0.0


class ProxyModel(ModelAdapter):
    """The ``gpuproxy`` model: a :class:`ProxyPipeline` behind the adapter interface."""

    def __init__(self, spec: Spec, options: ProxyOptions) -> None:
        self.spec = spec.text
        self.size = options.size
        self.pipe = ProxyPipeline(
            options.size, options.content, options.steps, options.step_ms, options.gil
        )

    def planned_size(self) -> tuple[int, int]:
        return self.size, self.size

    def generate(self, requests: Sequence[ImageRequest]) -> list[Any]:
        started = time.perf_counter()
        images = self.pipe(len(requests))
        CALLS.append((started, time.perf_counter()))
        WORKER_CPU.append(worker_cpu_s())
        return images


def register() -> None:
    """Register the ``gpuproxy`` model in this process (idempotent)."""
    if "gpuproxy" not in PLUGINS.names("models"):
        PLUGINS.register("models", "gpuproxy", options=ProxyOptions, summary="benchmark stand-in")(
            ProxyModel
        )


# --------------------------------------------------------------------------- measuring


def _without_images(
    self: Any, images: Sequence[Any], relpaths: Sequence[str], *args: Any, **kwargs: Any
) -> Any:
    """``RunFolder.send_images`` writing nothing: every digest :data:`PLACEHOLDER_SHA256`."""
    return lambda: [PLACEHOLDER_SHA256] * len(images)


def _without_part_file(self: Any, *args: Any, **kwargs: Any) -> None:
    """``RunFolder.write_part`` writing no part file: it only flushes the batch's images, as
    before a part file (so the images cost what they cost in a run)."""
    sync = getattr(self, "sync_images", None)  # older engines had none
    if sync is not None:
        sync()


#: Each ablation: the engine's ``RunFolder`` method it replaces, and with what.
ABLATED: dict[str, tuple[str, Any]] = {
    "images": ("send_images", _without_images),
    "part-files": ("write_part", _without_part_file),
}


def ablated(what: str) -> contextlib.AbstractContextManager[Any]:
    """This process's engine with ``what`` (:data:`ABLATIONS`) taken out, inside the block
    (:data:`ABLATED`); the run's reading and scoring are left as they are."""
    return mock.patch.object(folder.RunFolder, *ABLATED[what])


def unablatable(ablations: Sequence[str]) -> list[str]:
    """The ablations this process's engine lacks the method for (``--engine``: an old one)."""
    return [what for what in ablations if not hasattr(folder.RunFolder, ABLATED[what][0])]


def bare(pipe: ProxyPipeline, images: int, batch: int) -> float:
    """Images/s of the bare loop: batch after batch, the images kept in memory."""
    kept: list[Any] = []
    started = time.perf_counter()
    for start in range(0, images, batch):
        kept.extend(pipe(min(batch, images - start)))
    return images / (time.perf_counter() - started)


def harness_pass(
    count: int, batch: int, work: Path, options: dict[str, Any]
) -> tuple[float, float, float | None]:
    """One harness pass: images/s from the model loaded to its last row written, images/s
    of its generation alone (first batch asked to last batch made), and the worker
    thread's CPU milliseconds per batch while generation ran (None with one batch)."""
    CALLS.clear()
    EARLIER_WORKERS[:] = worker_threads()
    WORKER_CPU.clear()
    speed, _ = harness_spec("gpuproxy:", count, batch, NullOCR(), work, options)
    generating = count / (CALLS[-1][1] - CALLS[0][0])
    batches = len(WORKER_CPU) - 1
    worker_ms = 1000 * (WORKER_CPU[-1] - WORKER_CPU[0]) / batches if batches > 0 else None
    return speed, generating, worker_ms


def measure(
    size: int,
    content: str,
    setting: Setting,
    work: Path,
    *,
    gil: float = DEFAULT_GIL,
    step_ms: float | None = None,
    rounds: int | None = None,
    images: int | None = None,
    compare_thread: bool = False,
    ablate: Sequence[str] = (),
) -> dict[str, Any]:
    """One row: best bare and harness images/s over alternating rounds, and their ratio.

    ``compare_thread``: each round also runs the harness with every image written in
    the worker thread (``GLYPHBENCH_IMAGE_WRITER=thread``, the engine the H200 ran):
    ``thread_ratio``, measured in the same rounds. ``ablate``: each round also runs the
    harness with each of these taken out (:func:`ablated`): ``ablated[what]``, its
    ratio and generation ratio over the same bare loop.
    """
    register()
    step = step_ms if step_ms is not None else setting.step_ms
    count = images or setting.images
    options = {"size": size, "content": content, "steps": setting.steps, "step_ms": step}
    options["gil"] = gil
    pipe = ProxyPipeline(size, content, setting.steps, step, gil)
    bares, harnesses, generating, tails, threaded = [], [], [], [], []
    worker_ms: list[float] = []
    without: dict[str, list[tuple[float, float]]] = {what: [] for what in ablate}
    for _ in range(rounds or setting.rounds):
        bares.append(bare(pipe, count, setting.batch))
        speed, made, worker = harness_pass(count, setting.batch, work, options)
        harnesses.append(speed)
        generating.append(made)
        if worker is not None:
            worker_ms.append(worker)
        tails.append(count / speed - count / made)
        for what, passes in without.items():
            with ablated(what):
                passes.append(harness_pass(count, setting.batch, work, options)[:2])
        if compare_thread:
            with mock.patch.dict(os.environ, {WRITER_VARIABLE: "thread"}):
                threaded.append(harness_pass(count, setting.batch, work, options)[0])
    best_bare, best_harness = max(bares), max(harnesses)
    compared = (
        {"thread_ratio": max(threaded) / best_bare, "thread_rounds": threaded} if threaded else {}
    )
    from PIL import Image

    floor = tail_floor([Image.fromarray(pixels) for pixels in pipe.pool], count, setting.batch)
    return {
        **compared,
        **({"ablated": ablated_figures(without, best_bare)} if without else {}),
        "size": size,
        "content": content,
        "ratio": best_harness / best_bare,
        # The last batch cannot be encoded before it is made: even with nothing else to
        # do, its PNGs take this long on the encoders this machine has (the writer
        # processes and the worker thread, one a core), so no harness that writes the
        # same files can beat ``ceiling_ratio`` on these settings here.
        **floor,
        "ceiling_ratio": ceiling(count, best_bare, floor["tail_floor_s"]),
        "bare_img_s": best_bare,
        "harness_img_s": best_harness,
        # The harness's generation alone (first batch asked to last batch made): what
        # the rest of the harness costs the generating thread, without the last batch's
        # finishing after generation (the tail, once per run).
        "generation_ratio": max(generating) / best_bare,
        "harness_generation_img_s": max(generating),
        "tail_s": min(tails),
        # CPU of the run's worker thread per batch while generation ran (reading,
        # scoring, part files, the hand-over to the writer): on a GPU, the GIL it can
        # take from the launching thread. Least over the rounds; NaN with one batch.
        "worker_cpu_ms": min(worker_ms, default=float("nan")),
        "target_bare_img_s": setting.gpu_bare_img_s if step_ms is None else None,
        "steps": setting.steps,
        "batch": setting.batch,
        "images": count,
        "rounds": len(bares),
        "step_ms": step,
        "gil": gil,
        "bare_rounds": bares,
        "harness_rounds": harnesses,
    }


def ablated_figures(
    without: dict[str, list[tuple[float, float]]], best_bare: float
) -> dict[str, dict[str, Any]]:
    """Per ablation: the best harness and generation images/s of its passes over the bare
    loop's best (the row's ``ratio`` and ``generation_ratio`` without it), and its passes."""
    return {
        what: {
            "ratio": max(speed for speed, _ in passes) / best_bare,
            "generation_ratio": max(made for _, made in passes) / best_bare,
            "harness_rounds": [speed for speed, _ in passes],
        }
        for what, passes in without.items()
    }


def engine_root() -> str:
    """The checkout whose engine this process imported (``--engine``'s, or the installed one)."""
    import glyphbench

    return str(Path(glyphbench.__file__).resolve().parents[1])


def engine_commit() -> str | None:
    """That checkout's commit (``git rev-parse``), None where git cannot say."""
    import subprocess

    found = subprocess.run(
        ["git", "-C", engine_root(), "rev-parse", "--short", "HEAD"],
        capture_output=True,
        text=True,
        check=False,
    )
    if found.returncode != 0:
        return None
    return found.stdout.strip() or None


def child_argv(args: argparse.Namespace) -> list[str]:
    """The command line of :func:`main` for ``args`` but ``--engine`` and ``--json``."""
    argv = ["--sizes", args.sizes, "--contents", args.contents, "--gil", str(args.gil)]
    for flag, value in (
        ("--step-ms", args.step_ms),
        ("--rounds", args.rounds),
        ("--images", args.images),
        ("--png", args.png),
    ):
        if value is not None:
            argv += [flag, str(value)]
    argv += [flag for what in args.ablate for flag in ("--ablate", what)]
    return argv + (["--compare-thread"] if args.compare_thread else [])


def run_on_engine(engine: Path, argv: Sequence[str]) -> dict[str, Any]:
    """:func:`main` with ``argv`` in a fresh interpreter whose ``bench`` and ``prompts``
    are the checkout at ``engine``'s (:data:`ENGINE_VARIABLE`): its figures."""
    import subprocess

    if not (engine / "bench" / "engine" / "folder.py").is_file():
        raise SystemExit(f"--engine {engine}: not a glyphbench checkout (no bench/engine/)")
    with tempfile.TemporaryDirectory(prefix="bench-gpu-proxy-engine-") as scratch:
        out = Path(scratch) / "figures.json"
        environment = {**os.environ, ENGINE_VARIABLE: str(engine.resolve())}
        command = [sys.executable, str(Path(__file__).resolve()), *argv, "--json", str(out)]
        done = subprocess.run(command, env=environment, check=False)
        if done.returncode != 0:  # its own message is printed (an option that engine lacks)
            raise SystemExit(done.returncode)
        figures: dict[str, Any] = json.loads(out.read_text())
    return figures


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load {one:.1f} {five:.1f} {fifteen:.1f} on {os.cpu_count()} CPUs"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--sizes", default="512,1024", help="Image sizes (512, 1024, 1328).")
    parser.add_argument("--contents", default="noise,photo", help="Contents: noise, photo.")
    parser.add_argument(
        "--gil",
        type=float,
        default=DEFAULT_GIL,
        help=f"Share of each step that holds the GIL (default {DEFAULT_GIL}, calibrated "
        "against the engine measured on the H200; 1: all of it; the rest is a GIL-free "
        "wait, as a device sync).",
    )
    parser.add_argument("--step-ms", type=float, help="Per-step cost (default: calibrated).")
    parser.add_argument("--rounds", type=int, help="Rounds (default: 3 at 512 px, 2 above).")
    parser.add_argument("--images", type=int, help="Images per pass (default: 48 / 16).")
    parser.add_argument(
        "--compare-thread",
        action="store_true",
        help="Also run the harness with its images written in the worker thread (the "
        "engine the H200 ran) in the same rounds: thread_ratio.",
    )
    parser.add_argument(
        "--ablate",
        action="append",
        default=[],
        choices=ABLATIONS,
        help="Also run the harness without this (images: no PNG encoded, hashed or "
        "written; part-files: no part file written) in the same rounds, to see where its "
        "loss goes: ablated.<what>.ratio (a diagnostic; repeat for both).",
    )
    parser.add_argument(
        "--png",
        type=int,
        choices=png_formats(),
        help=f"PNG format of the harness's runs (default {new_run_png()}, a new run's; 1: "
        "Pillow's defaults, every run before PNG format 2).",
    )
    parser.add_argument(
        "--engine",
        type=Path,
        help="Run the harness passes on the engine of another glyphbench checkout (its "
        "bench/ and prompts/; this script and the stand-in stay this one's), e.g. the "
        "engine measured on the H200 (665db58) to check the calibration.",
    )
    parser.add_argument("--json", type=Path, help="Also write the rows here.")
    args = parser.parse_args(argv)
    if args.engine is not None:
        figures = run_on_engine(args.engine, child_argv(args))
        if args.json:
            args.json.write_text(json.dumps(figures, indent=2) + "\n")
        return figures
    lacking = unablatable(args.ablate)
    if lacking:
        parser.error(
            f"--ablate {lacking[0]}: this engine has no RunFolder."
            f"{ABLATED[lacking[0]][0]} to take out"
        )
    png = new_run_png() if args.png is None else args.png
    sizes = [int(size) for size in args.sizes.split(",") if size]
    contents = [content for content in args.contents.split(",") if content]
    for size in sizes:
        if size not in SETTINGS:
            parser.error(f"--sizes: {size} is not one of {sorted(SETTINGS)}")
    rows = []
    engine = {"root": engine_root(), "commit": engine_commit()}
    print(f"[{load()}] engine {engine['root']} ({engine['commit']}), PNG format {png}", flush=True)
    work = Path(tempfile.mkdtemp(prefix="bench-gpu-proxy-"))
    default_png, folder.PNG_FORMAT = new_run_png(), png  # a new run's format
    try:
        for size in sizes:
            for content in contents:
                row = measure(
                    size,
                    content,
                    SETTINGS[size],
                    work,
                    gil=args.gil,
                    step_ms=args.step_ms,
                    rounds=args.rounds,
                    images=args.images,
                    compare_thread=args.compare_thread,
                    ablate=args.ablate,
                )
                target = row["target_bare_img_s"]
                rows.append(row)
                print(
                    f"{size} px {content}: bare {row['bare_img_s']:.3f} img/s"
                    + (f" (GPU {target:.3f})" if target else "")
                    + f", harness {row['harness_img_s']:.3f} img/s, "
                    f"harness/bare {row['ratio']:.3f} (generation alone "
                    f"{row['generation_ratio']:.3f}, tail {row['tail_s']:.2f} s, worker "
                    f"{row['worker_cpu_ms']:.0f} ms CPU a batch; ceiling "
                    f"{row['ceiling_ratio']:.3f}: the last batch's PNGs take "
                    f"{row['tail_floor_s']:.2f} s on {row['encoders']} encoders)"
                    + (
                        f", in-thread writes {row['thread_ratio']:.3f}"
                        if "thread_ratio" in row
                        else ""
                    )
                    + "".join(
                        f", without {what} {found['ratio']:.3f} (generation alone "
                        f"{found['generation_ratio']:.3f})"
                        for what, found in row.get("ablated", {}).items()
                    )
                    + f" [{load()}]",
                    flush=True,
                )
    finally:
        folder.PNG_FORMAT = default_png
        shutil.rmtree(work, ignore_errors=True)
    figures = {
        "rows": rows,
        "gil": args.gil,
        "png_format": png,
        "engine": engine,
        "load": load(),
    }
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return figures


if __name__ in ("__main__", "__mp_main__"):
    register()  # a spawned process of this run (a reader, a writer) knows the model too
if __name__ == "__main__":
    main()
