# mypy: disable-error-code="no-untyped-call"
"""One command for a lent GPU machine: harness/bare figures and every GPU-only path.

    python benchmarks/gpu_check.py --json gpu_check.json            # on a CUDA machine
    python benchmarks/gpu_check.py --reduced --json reduced.json    # tiny, on the CPU

No hub, no download: it builds what it runs (``benchmarks/fullsize.py``'s full-size
SDXL-base-1.0 architecture with random float16 weights, reused from ``--build-dir``
when complete; the tiny random pipelines and the tiny Qwen2.5-VL reader of
``bench/models``). Steps, in order:

* ``environment``: versions, GPUs;
* ``build_tiny``: tiny SDXL, tiny Qwen-Image and tiny Qwen2.5-VL;
* ``offload_model``, ``offload_sequential``, ``compile``: the tiny SDXL through the CLI
  with that loading option; ``qwen_image_bfloat16``: a bfloat16 family;
* ``vlm_read_workers``: the tiny VLM reader in two ``--read-workers`` processes;
* ``rescore_vlm``: ``rescore --ocr vlm:...`` of the ``qwen_image_bfloat16`` run;
* ``easyocr_cuda``: EasyOCR on the GPU (``easyocr?gpu=1``) reading a control model;
* ``readers_per_gpu``: one reader process per visible GPU, each pinned to its own
  (skipped with fewer than two GPUs);
* ``build_fullsize``: the full-size random SDXL pipeline, built in a process of its own
  from the start while the steps above run (this step waits for it);
* ``bench_1024`` / ``bench_512``: harness (null reader) against a bare diffusers loop,
  ``benchmarks/bench_pipeline.py``'s :func:`compare`, at the two settings of the H200 table
  (1024 px, 20 steps, batch 4, 16 images, 2 rounds; 512 px, 4 steps, batch 8, 48 images,
  3 rounds), with the GPU to themselves;
* ``cli_read_workers``: the real CLI on the full-size build, ``run ... --prompts default
  --ocr rapidocr --read-workers 2 --device cuda`` (512 px, 8 steps, 24 prompts);
* ``stand_in``: the CPU stand-in of ``benchmarks/bench_gpu_proxy.py`` (noise, the two
  settings) on this host's CPU, beside ``bench_1024`` and ``bench_512``: how many points
  its prediction is off on this machine (``error_points``).

The tiny steps are skipped when running them would leave the last three less than the
time they may need. Step names stay the same in ``--reduced`` mode, where the "full-size"
pipeline is the tiny SD and the sizes are tiny (the details say which).

Each step is timed and recorded as ``ok``, ``error`` (its error text) or ``skipped``
(why) in ONE JSON file, rewritten after every step, so a killed check keeps what it
measured. A global time budget (``--budget-s``, default 450 s: the whole check under
8 minutes on one H100/H200) skips a step, with the reason, when less time is left than
the step may need, and bounds each CLI step's subprocess by the time left.

``--reduced``: tiny pipelines and sizes on the CPU (``--device cpu``), the CUDA-only
steps skipped with their reason; the test suite runs it (tests/benchmarks/test_gpu_check.py).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # run as a script from a checkout
    sys.path.insert(0, str(ROOT))

from benchmarks.bench_pipeline import ceiling, compare, tail_floor  # noqa: E402

#: Version of the JSON layout below.
FORMAT = 1

#: Seconds the whole check may take by default (target: under 8 minutes; on one H200 its
#: steps add up to about 520 s, so the last ones are skipped: docs/performance.md).
DEFAULT_BUDGET_S = 450.0


@dataclass(frozen=True)
class Sizes:
    """The settings of one mode: the H200 figures' on a GPU, tiny ones on the CPU."""

    bench: tuple[dict[str, int], ...]  # compare() keyword arguments, one per bench step
    run_size: int  # pixels of the CLI run on the big pipeline
    run_steps: int
    run_prompts: int
    run_batch: int
    tiny_prompts: int


FULL = Sizes(
    bench=(
        {"size": 1024, "steps": 20, "batch": 4, "images": 16, "rounds": 2},
        {"size": 512, "steps": 4, "batch": 8, "images": 48, "rounds": 3},
    ),
    run_size=512,
    run_steps=8,
    run_prompts=24,
    run_batch=8,
    tiny_prompts=16,
)
REDUCED = Sizes(
    bench=(
        {"size": 64, "steps": 2, "batch": 2, "images": 2, "rounds": 1},
        {"size": 32, "steps": 1, "batch": 2, "images": 4, "rounds": 1},
    ),
    run_size=64,
    run_steps=2,
    run_prompts=4,
    run_batch=2,
    tiny_prompts=4,
)


class Skip(Exception):
    """A step that cannot run here: its reason."""


@dataclass
class Check:
    """The steps' outcomes, the budget and the JSON file they are written to."""

    out: Path
    work: Path
    budget_s: float
    reduced: bool
    device: str
    started: float = field(default_factory=time.monotonic)
    steps: list[dict[str, Any]] = field(default_factory=list)
    found: dict[str, Any] = field(default_factory=dict)  # what later steps use

    def left(self) -> float:
        return self.budget_s - (time.monotonic() - self.started)

    def step(self, name: str, needs_s: float, run: Callable[[], dict[str, Any]]) -> None:
        """Run one step unless the budget is short; record its outcome and write the file."""
        record: dict[str, Any] = {"name": name, "status": "skipped", "seconds": 0.0}
        left = self.left()
        if left < needs_s:
            record["reason"] = (
                f"time budget: {max(left, 0):.0f} s left, the step may need {needs_s:.0f} s"
            )
        else:
            began = time.perf_counter()
            try:
                record["details"] = run()
                record["status"] = "ok"
            except Skip as why:
                record["reason"] = str(why)
            except Exception as exc:  # recorded, and the check goes on
                record["status"] = "error"
                record["error"] = f"{type(exc).__name__}: {exc}"[-4000:]
                record["traceback"] = traceback.format_exc()[-4000:]
            record["seconds"] = round(time.perf_counter() - began, 2)
        self.steps.append(record)
        said = record.get("reason") or record.get("error") or ""
        print(f"[gpu_check] {name}: {record['status']} ({record['seconds']} s) {said}"[:300])
        self.write()

    def write(self) -> None:
        counts = {s: sum(r["status"] == s for r in self.steps) for s in ("ok", "error", "skipped")}
        data = {
            "format": FORMAT,
            "mode": "reduced" if self.reduced else "full",
            "device": self.device,
            "budget_s": self.budget_s,
            "elapsed_s": round(time.monotonic() - self.started, 2),
            "summary": counts,
            "steps": self.steps,
        }
        tmp = self.out.with_name(self.out.name + ".tmp")
        tmp.write_text(json.dumps(data, indent=2, default=str) + "\n", encoding="utf-8")
        tmp.replace(self.out)

    # ------------------------------------------------------------------ the CLI

    def cli(self, *args: str, timeout_s: float | None = None) -> dict[str, Any]:
        """Run ``glyphbench ARGS`` as its own process (bounded by the time left)."""
        limit = max(10.0, self.left()) if timeout_s is None else timeout_s
        env = dict(os.environ)
        if self.reduced:  # tiny models on a small CPU: one thread a process, no oversubscription
            env.setdefault("OMP_NUM_THREADS", "1")
        began = time.perf_counter()
        bounded([sys.executable, "-m", "glyphbench", *args], f"glyphbench {args[0]}", limit, env)
        seconds = round(time.perf_counter() - began, 2)
        return {"command": ["glyphbench", *args], "seconds": seconds}

    def run(self, name: str, model: str, *extra: str, prompts: int, batch: int) -> dict[str, Any]:
        """``glyphbench run`` of ``prompts`` default prompts into its own folder; rows checked."""
        out = self.work / name
        shutil.rmtree(out, ignore_errors=True)
        done = self.cli(
            "run", "--models", model, "--prompts", "default", "--sample", str(prompts),
            "--seeds", "0", "--batch-size", str(batch), "--device", self.device,
            "--out", str(out), "--no-progress", *extra,
        )  # fmt: skip
        done.update(outcome(out, expected=prompts))
        self.found[name] = out
        return done


def bounded(command: list[str], what: str, limit: float, env: dict[str, str] | None = None) -> None:
    """Run ``command`` from the checkout within ``limit`` seconds; a time-out or a failure
    is raised with ``what`` and the last lines it printed."""
    try:
        done = subprocess.run(
            command, cwd=str(ROOT), env=env, capture_output=True, text=True, timeout=limit
        )
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"{what} timed out after {limit:.0f} s") from None
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-12:]
        raise RuntimeError(f"{what} exit {done.returncode}: " + " | ".join(tail))


def outcome(out: Path, expected: int) -> dict[str, Any]:
    """Rows, failed rows and the readers' facts of a finished run; an error unless all good."""
    import pandas as pd

    from glyphbench.core.schema import failed_mask

    rows = pd.read_parquet(out / "results.parquet")
    failed = int(failed_mask(rows).sum())
    facts: dict[str, Any] = {"rows": len(rows), "errors": failed, "folder": str(out)}
    if failed:
        facts["first_error"] = str(rows.loc[failed_mask(rows), "error"].iloc[0])[:500]
    if "ocr_text" in rows.columns:
        facts["read"] = int(rows["ocr_text"].notna().sum())
    shard = out / "parts" / "shard-0-of-1" / "shard.json"
    if shard.is_file():
        readers = json.loads(shard.read_text()).get("readers")
        if readers:
            facts["readers"] = readers
    if len(rows) != expected or failed:
        raise RuntimeError(f"{len(rows)} rows (expected {expected}), {failed} failed: {facts}")
    return facts


# ---------------------------------------------------------------------- steps


def environment(check: Check) -> dict[str, Any]:
    import importlib.metadata as metadata

    facts: dict[str, Any] = {"python": platform.python_version(), "machine": platform.node()}
    for name in ("torch", "diffusers", "transformers", "accelerate", "onnxruntime", "easyocr"):
        try:
            facts[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            facts[name] = None
    import torch

    facts["cuda"] = torch.version.cuda
    facts["gpus"] = [
        {
            "name": torch.cuda.get_device_name(i),
            "memory_mib": torch.cuda.get_device_properties(i).total_memory // 2**20,
        }
        for i in range(torch.cuda.device_count())
    ]
    facts["cpus"] = os.cpu_count()
    from glyphbench.engine.read_pool import reader_devices

    facts["reader_devices"] = reader_devices()
    if check.device.startswith("cuda") and not facts["gpus"]:
        check.found["no_cuda"] = True
        raise RuntimeError("--device cuda, but torch sees no CUDA device (use --reduced)")
    return facts


class Builder:
    """The big pipeline, built in a process of its own while the tiny steps run.

    The full-size build is CPU work (random initialisation, then writing 7 GB); the GPU
    paths of the tiny steps need little CPU, so both go on at once and the benchmarks,
    which need the GPU alone, run after.
    """

    def __init__(self, check: Check, build_dir: Path | None) -> None:
        self.reduced = check.reduced
        self.folder = check.work / "tiny-sd" if check.reduced else build_dir
        code = (
            "import sys, time; from pathlib import Path; sys.path.insert(0, sys.argv[1])\n"
            "began = time.perf_counter()\n"
            "from benchmarks.bench_pipeline import build_full_size\n"
            "from glyphbench.tiny.pipelines import build_tiny_sd\n"
            "folder = Path(sys.argv[3]) if sys.argv[3] else None\n"
            "built = build_tiny_sd(folder) if sys.argv[2] == 'tiny' else "
            "build_full_size('sdxl-full', folder)\n"
            "print('BUILT', round(time.perf_counter() - began, 2), built)\n"
        )
        kind = "tiny" if check.reduced else "full"
        self.began = time.perf_counter()
        self.process = subprocess.Popen(
            [sys.executable, "-c", code, str(ROOT), kind, str(self.folder or "")],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def join(self, check: Check) -> dict[str, Any]:
        """Wait for the build (at most the time left); the folder it built."""
        try:
            out, err = self.process.communicate(timeout=max(10.0, check.left()))
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.communicate()
            raise RuntimeError("the build did not finish within the time budget") from None
        built = [line[6:].split(" ", 1) for line in out.splitlines() if line.startswith("BUILT ")]
        if self.process.returncode != 0 or not built:
            tail = " | ".join(err.strip().splitlines()[-8:])
            raise RuntimeError(f"build exit {self.process.returncode}: {tail}")
        seconds, folder = built[-1]
        check.found["big"] = Path(folder)
        return {
            "folder": folder,
            "pipeline": "tiny-sd" if self.reduced else "sdxl-full",
            "build_s": float(seconds),  # its own time (0 when a complete build was reused)
            "joined_after_s": round(time.perf_counter() - self.began, 2),  # from its start
        }

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.communicate()


def bench(check: Check, settings: dict[str, int]) -> dict[str, Any]:
    big = needs(check, "big", "build_fullsize")
    if check.reduced:
        import torch

        torch.set_num_threads(1)  # as the CLI steps' processes (OMP_NUM_THREADS=1)
    numbers = compare(
        big,
        device=check.device,
        images=settings["images"],
        batch=settings["batch"],
        rounds=settings["rounds"],
        size=settings["size"],
        steps=settings["steps"],
        work=check.work,
    )
    if check.device.startswith("cuda"):
        import torch

        torch.cuda.empty_cache()  # the CLI steps run in other processes
    # What no harness writing the same files can beat on this host's cores: the last
    # batch's PNGs (noise, as the random-weight model draws) after generation ends.
    floor = tail_floor(noise_images(settings["size"]), settings["images"], settings["batch"])
    numbers.update(floor)
    numbers["ceiling_ratio"] = ceiling(
        settings["images"], numbers["bare_images_per_s"], floor["tail_floor_s"]
    )
    check.found.setdefault("ratios", {})[settings["size"]] = numbers["harness_null_ocr_ratio"]
    print(
        f"[gpu_check] {settings['size']} px, {settings['steps']} steps, batch {settings['batch']}: "
        f"bare {numbers['bare_images_per_s']:.3f} img/s, harness "
        f"{numbers['harness_null_ocr_images_per_s']:.3f} img/s, harness/bare "
        f"{numbers['harness_null_ocr_ratio']:.3f} (ceiling {numbers['ceiling_ratio']:.3f}: the "
        f"last batch's PNGs take {floor['tail_floor_s']:.2f} s on {floor['encoders']} encoders)"
    )
    return numbers


#: ``bench_gpu_proxy.py`` options of the ``stand_in`` step in reduced mode: one tiny pass.
REDUCED_STAND_IN = ("--sizes", "512", "--images", "2", "--rounds", "1", "--step-ms", "5")


def stand_in(check: Check) -> dict[str, Any]:
    """The CPU stand-in (``bench_gpu_proxy.py``: noise, its calibrated GIL share, the
    settings of the bench steps) on this host, beside the ratios the GPU gave in this
    check: ``error_points``, stand-in minus GPU, says how well it predicts them here."""
    out = check.work / "stand_in.json"
    command = [sys.executable, str(ROOT / "benchmarks" / "bench_gpu_proxy.py")]
    command += ["--contents", "noise", "--json", str(out)]
    if check.reduced:  # its sizes are the GPU settings' (512, 1024), not the tiny steps'
        command += REDUCED_STAND_IN
    bounded(command, "bench_gpu_proxy.py", max(10.0, check.left()))
    figures = json.loads(out.read_text())
    keep = ("size", "content", "ratio", "generation_ratio", "tail_s", "ceiling_ratio")
    rows = [{key: row[key] for key in keep} for row in figures["rows"]]
    gpu = check.found.get("ratios", {})
    errors = {
        str(row["size"]): round(100 * (row["ratio"] - gpu[row["size"]]), 1)
        for row in rows
        if row["size"] in gpu
    }
    for size, points in errors.items():
        print(f"[gpu_check] stand-in at {size} px: {points:+.1f} points against this GPU")
    return {"gil": figures["gil"], "rows": rows, "gpu_ratios": gpu, "error_points": errors}


def noise_images(size: int, count: int = 2) -> list[Any]:
    """Uniform random RGB images of ``size`` pixels (a random-weight model's output)."""
    import numpy as np
    from PIL import Image

    rng = np.random.default_rng(0)
    return [
        Image.fromarray(rng.integers(0, 256, (size, size, 3), dtype=np.uint8)) for _ in range(count)
    ]


def needs(check: Check, key: str, step: str) -> Any:
    if key not in check.found:
        raise Skip(f"needs the output of step {step}, which did not finish")
    return check.found[key]


def build_tiny(check: Check) -> dict[str, Any]:
    from glyphbench.models.families.qwen import build_tiny_qwen_image
    from glyphbench.readers.tiny_vlm import build_tiny_qwen_vl
    from glyphbench.tiny.pipelines import build_tiny_sdxl

    built = {
        "tiny_sdxl": build_tiny_sdxl(check.work / "tiny-sdxl"),
        "tiny_qwen_image": build_tiny_qwen_image(check.work / "tiny-qwen-image"),
        "tiny_vlm": build_tiny_qwen_vl(check.work / "tiny-qwen-vl"),
    }
    check.found.update(built)
    return {name: str(path) for name, path in built.items()}


def cuda_only(check: Check, what: str) -> None:
    if not check.device.startswith("cuda"):
        raise Skip(f"{what} is a CUDA path: not run on the CPU (--reduced)")


def gpu_option(check: Check, name: str, query: str) -> dict[str, Any]:
    """The tiny SDXL through the CLI with a loading option that only CUDA has."""
    cuda_only(check, query)
    return tiny_run(check, name, query)


def tiny_run(check: Check, name: str, query: str, *extra: str, model: str = "tiny_sdxl") -> Any:
    folder = needs(check, model, "build_tiny")
    spec = f"diffusers:{folder}" + (f"?{query}" if query else "")
    return check.run(name, spec, *extra, prompts=sizes_of(check).tiny_prompts, batch=4)


def sizes_of(check: Check) -> Sizes:
    return REDUCED if check.reduced else FULL


def vlm_spec(check: Check) -> str:
    folder = needs(check, "tiny_vlm", "build_tiny")
    return f"vlm:{folder}?device={'cuda' if check.device.startswith('cuda') else 'cpu'}"


def rescore_vlm(check: Check) -> dict[str, Any]:
    """``rescore --ocr vlm:...`` of the Qwen-Image run (read by RapidOCR in that run)."""
    out = needs(check, "qwen_image_bfloat16", "qwen_image_bfloat16")
    done = check.cli("rescore", str(out), "--ocr", vlm_spec(check), "--no-progress")
    done.update(outcome(out, expected=sizes_of(check).tiny_prompts))
    return done


def joined(builder: Builder | None, check: Check) -> dict[str, Any]:
    if builder is None:
        raise Skip("not started: the environment step did not finish")
    return builder.join(check)


#: The steps on tiny builds (before the big pipeline's).
TINY_STEPS = (
    "build_tiny",
    "offload_model",
    "offload_sequential",
    "compile",
    "qwen_image_bfloat16",
    "vlm_read_workers",
    "rescore_vlm",
    "easyocr_cuda",
    "readers_per_gpu",
)


def easyocr(check: Check) -> dict[str, Any]:
    from glyphbench.readers import available_engines

    available = available_engines().get("easyocr")
    if available is not True:
        raise Skip(f"easyocr is not available here: {available}")
    gpu = 1 if check.device.startswith("cuda") else 0  # --reduced: the same run on the CPU
    return check.run(
        "easyocr",
        "control:render?size=256",
        "--ocr",
        f"easyocr?gpu={gpu}",
        prompts=sizes_of(check).tiny_prompts,
        batch=4,
    )


def readers_per_gpu(check: Check) -> dict[str, Any]:
    """One reader process per GPU: each reports its own device, then they read images."""
    from glyphbench.engine.read_pool import ReadPool, reader_devices
    from glyphbench.models import ImageRequest, get_model

    devices = reader_devices()
    if len(devices) < 2:
        raise Skip(f"{len(devices) or 'fewer than 2'} GPUs to pin readers to (needs 2 or more)")
    folder = check.work / "readers-per-gpu"
    folder.mkdir(parents=True, exist_ok=True)
    requests = [ImageRequest(prompt="", text=f"OPEN {i}", seed=i) for i in range(4 * len(devices))]
    paths = []
    for number, image in enumerate(get_model("control:render?size=256").generate(requests)):
        image.save(folder / f"{number}.png")
        paths.append(f"{number}.png")
    with ReadPool(vlm_spec(check), folder, len(devices)) as pool:
        answers = pool.check()
        read = sum(len(outcomes) for _, (_, _, outcomes) in pool.read([[p] for p in paths]))
    assigned = sorted(device or "" for _, device in answers)
    if assigned != sorted(devices):
        raise RuntimeError(f"reader processes got devices {assigned}, expected {sorted(devices)}")
    return {"devices": devices, "processes": [list(a) for a in answers], "images_read": read}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--json", type=Path, default=Path("gpu_check.json"), help="Result file.")
    parser.add_argument("--reduced", action="store_true", help="Tiny pipelines on the CPU.")
    parser.add_argument("--device", help="Default: cuda (cpu with --reduced).")
    parser.add_argument(
        "--budget-s", type=float, default=DEFAULT_BUDGET_S, help="Time for the whole check."
    )
    parser.add_argument(
        "--build-dir",
        type=Path,
        help="Full-size build folder, reused when complete (default: bench_pipeline's).",
    )
    parser.add_argument("--work", type=Path, help="Scratch folder (default: a temporary one).")
    parser.add_argument("--skip", default="", help="Comma-separated steps not to run.")
    args = parser.parse_args(argv)

    import signal

    # SIGTERM ends the check as Ctrl-C does: the step's glyphbench process is killed with it.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    work = args.work or Path(tempfile.mkdtemp(prefix="gpu-check-"))
    work.mkdir(parents=True, exist_ok=True)
    device = args.device or ("cpu" if args.reduced else "cuda")
    check = Check(args.json, work, args.budget_s, args.reduced, device)
    sizes = sizes_of(check)
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    big_run = (
        f"diffusers:{{big}}?steps={sizes.run_steps}&height={sizes.run_size}&width={sizes.run_size}"
    )
    builder: Builder | None = None
    # The benchmarks and the big CLI run come last (the GPU to themselves once the build is
    # done); the tiny steps before them leave them the time they may need. On one H200
    # (2026-12-04) they took 71, 43 and 32 s; each is given about a quarter more.
    last = 0.0 if args.reduced else 90 + 55 + 40

    def start_build() -> dict[str, Any]:  # once the environment is known to be good
        nonlocal builder
        facts = environment(check)
        if "build_fullsize" not in skip:
            builder = Builder(check, args.build_dir)
        return facts

    steps: list[tuple[str, float, Callable[[], dict[str, Any]]]] = [
        ("environment", 5, start_build),
        ("build_tiny", 30, lambda: build_tiny(check)),
        ("offload_model", 30, lambda: gpu_option(check, "offload_model", "offload=model")),
        (
            "offload_sequential",
            30,
            lambda: gpu_option(check, "offload_sequential", "offload=sequential"),
        ),
        ("compile", 60, lambda: gpu_option(check, "compile", "compile=true")),
        (
            "qwen_image_bfloat16",
            40,
            lambda: tiny_run(
                check, "qwen_image_bfloat16", "dtype=bfloat16", model="tiny_qwen_image"
            ),
        ),
        (
            "vlm_read_workers",
            120,  # 99 s on one H200 (2026-12-04): two processes each load the VLM
            lambda: tiny_run(
                check, "vlm_read_workers", "", "--ocr", vlm_spec(check), "--read-workers", "2"
            ),
        ),
        ("rescore_vlm", 130, lambda: rescore_vlm(check)),  # 102 s on one H200 (2026-12-04)
        ("easyocr_cuda", 40, lambda: easyocr(check)),
        ("readers_per_gpu", 40, lambda: readers_per_gpu(check)),
        ("build_fullsize", 10, lambda: joined(builder, check)),
        ("bench_1024", 30 if args.reduced else 90, lambda: bench(check, sizes.bench[0])),
        ("bench_512", 30 if args.reduced else 55, lambda: bench(check, sizes.bench[1])),
        (
            "cli_read_workers",
            40,
            lambda: check.run(
                "cli_read_workers",
                big_run.format(big=needs(check, "big", "build_fullsize")),
                "--ocr",
                "rapidocr",
                "--read-workers",
                "2",
                prompts=sizes.run_prompts,
                batch=sizes.run_batch,
            ),
        ),
        # Last, and the first to go when time is short: the GPU is not needed for it.
        ("stand_in", 30 if args.reduced else 120, lambda: stand_in(check)),
    ]
    try:
        for name, needs_s, run in steps:
            if name in skip or check.found.get("no_cuda"):
                reason = "--skip" if name in skip else "no CUDA device (see environment)"
                check.steps.append(
                    {"name": name, "status": "skipped", "seconds": 0.0, "reason": reason}
                )
                check.write()
                continue
            reserve = last if name in TINY_STEPS else 0.0
            check.step(name, needs_s + reserve, run)
    finally:
        if builder is not None:
            builder.stop()
    check.write()
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    summary = json.loads(args.json.read_text())["summary"]
    print(f"[gpu_check] {json.dumps(summary)} -> {args.json}")
    return 1 if summary["error"] else 0


if __name__ == "__main__":
    sys.exit(main())
