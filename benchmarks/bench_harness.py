"""Benchmark: the harness's own cost per image, its memory, resume and merge.

A generator that returns a prepared image and a reader that returns a prepared
reading (both registered as plug-ins in this process) go through the real run
engine (:func:`glyphbench.run.operations.run_benchmark`: jobs, batches, PNG + SHA-256 per image,
the reading store, scoring, part files, merge). What remains of the time is the
harness's own. Printed figures, each against its target:

* per-image harness overhead (ms, wall and CPU) for ``--jobs`` jobs;
* peak memory (resident set of a fresh child process) at 10k and 100k jobs: flat?
* plan/resume of a run folder of ``--resume-rows`` finished rows (the done keys:
  what ``glyphbench run`` reads before it starts), and the merge of that folder;
* peak memory of the streamed merge (``glyphbench merge``) at 1%, 10% and 100% of
  ``--resume-rows`` (10k, 100k, 1M rows): flat? Beside it, the in-memory
  merge it replaced, at the two smaller sizes;
* overlap of generation and reading: a generator sleeping G per image and a reader
  sleeping R per image take about max(G, R) per image, not G + R;
* the same with the reader processes the run starts itself (``run --read-workers 1``):
  G (generation alone, ``--read-later``) and R (``glyphbench read`` of
  those images alone, its process start-up included) measured, then the run that
  does both, against max(G, R).

    python benchmarks/bench_harness.py                 # 100k jobs, 1M-row resume folder
    python benchmarks/bench_harness.py --small         # a quick run of every figure
    python benchmarks/bench_harness.py --json harness.json
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from glyphbench.core.registry import PLUGINS, Options, Spec
from glyphbench.models.base import ImageRequest, ModelAdapter
from glyphbench.prompts.schema import PromptSet
from glyphbench.readers.base import Reader, Reading
from glyphbench.run.config import RunConfig

#: Targets: the harness nearly free, memory flat, resume and merge quick.
TARGET_OVERHEAD_MS = 5.0
#: the harness's CPU time per image (prepared image and reading, 100k jobs).
TARGET_CPU_MS = 2.0
TARGET_MEMORY_GROWTH_MIB = 100.0
TARGET_RESUME_S = 30.0
TARGET_MERGE_S = 60.0
#: the merge's peak memory grows less than this from 10k to 1M rows.
TARGET_MERGE_GROWTH_MIB = 200.0
MODELS = 5
SEEDS = 4


# --------------------------------------------------------------------------- plug-ins


class PreparedOptions(Options):
    size: int = 64
    delay: float = 0.0  # seconds per image (the overlap figure)


class PreparedModel(ModelAdapter):
    """Returns the same prepared image for every request (after ``delay`` per image)."""

    def __init__(self, spec: Spec, options: PreparedOptions) -> None:
        from PIL import Image, ImageDraw

        self.delay = options.delay
        self.image = Image.new("RGB", (options.size, options.size), "white")
        ImageDraw.Draw(self.image).text((4, options.size // 2 - 6), "OPEN", fill="black")
        self.spec = spec.text

    def generate(self, requests: Sequence[ImageRequest]) -> list[Any]:
        if self.delay:
            time.sleep(self.delay * len(requests))
        return [self.image.copy() for _ in requests]


class PreparedReader(Reader):
    """Returns the same prepared reading for every image (after ``delay`` per image)."""

    name = "prepared-reading"

    def __init__(self, options: PreparedOptions) -> None:
        self.delay = options.delay
        self.reading = Reading(
            text="OPEN", pieces=["OPEN"], boxes=[[(0, 0), (9, 0), (9, 9), (0, 9)]], confidences=[1]
        )

    @property
    def version(self) -> str:
        return "prepared 1"

    def read(self, images: Sequence[Any]) -> list[Reading]:
        if self.delay:
            time.sleep(self.delay * len(images))
        return [self.reading for _ in images]


def register() -> None:
    """Register ``prepared:NAME`` (model) and ``prepared-reading`` (reader) in this process."""
    if "prepared" in PLUGINS.names("models"):
        return
    PLUGINS.register("models", "prepared", options=PreparedOptions, target="optional")(
        PreparedModel
    )
    PLUGINS.register("readers", "prepared-reading", options=PreparedOptions)(
        lambda _spec, options: PreparedReader(options)
    )


# --------------------------------------------------------------------------- one run


def prompt_set(n: int) -> PromptSet:
    frame = pd.DataFrame(
        {
            "prompt_id": [f"p{i:07d}" for i in range(n)],
            "prompt": [f"A sign that says 'OPEN' (#{i})" for i in range(n)],
            "text": "OPEN",
            "prompt_type": "simple",
        }
    )
    return PromptSet(frame, source="bench-harness")


def run_config(
    out: Path,
    jobs: int,
    *,
    gen_delay: float = 0.0,
    read_delay: float = 0.0,
    batch_size: int = 8,
    size: int = 64,
    n_models: int = MODELS,
) -> tuple[RunConfig, PromptSet]:
    """A run of about ``jobs`` jobs: ``n_models`` models x SEEDS seeds x prompts."""
    prompts = max(1, jobs // (n_models * SEEDS))
    models = [f"prepared:m{i}?size={size}&delay={gen_delay}" for i in range(n_models)]
    config = RunConfig.from_mapping(
        {
            "models": models,
            "batch_size": batch_size,
            "seeds": list(range(SEEDS)),
            "ocr": f"prepared-reading?delay={read_delay}",
            "out": str(out),
        }
    )
    return config, prompt_set(prompts)


def timed_run(out: Path, jobs: int, **kwargs: Any) -> dict[str, Any]:
    """Run the engine on ``jobs`` jobs in this process: wall and CPU seconds, images.

    As ``glyphbench run`` does: the merge reads back the summary's columns and the
    summary is computed from them.
    """
    from glyphbench.report.console import summarize, summary_columns
    from glyphbench.run.operations import run_benchmark

    config, prompts = run_config(out, jobs, **kwargs)
    start, cpu = time.perf_counter(), time.process_time()
    result = run_benchmark(
        config, prompt_set=prompts, progress=False, read_columns=summary_columns()
    )
    if result.results is not None:
        summarize(result.results)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    images = len(result.results) if result.results is not None else 0
    return {"jobs": images, "wall_s": wall, "cpu_s": cpu}


#: The child processes' peak memory (MiB): VmHWM, the peak of this process's own memory;
#: ru_maxrss carries the launching process's peak over the exec on Linux, so a
#: child started by a big benchmark process reported that process's size.
PEAK = """
def peak():
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
"""

CHILD = """
import json, resource, sys
sys.path.insert(0, sys.argv[3])
import bench_harness as h
import glyphbench.run.operations as runs
h.register()
{peak}before_merge = {}
merge = runs._merge_when_done
def measured_merge(*args):
    before_merge['peak'] = peak()  # the run loop's peak, before the final merge
    return merge(*args)
runs._merge_when_done = measured_merge
out = h.timed_run(h.Path(sys.argv[1]), int(sys.argv[2]))
out['peak_mib'], out['loop_peak_mib'] = peak(), before_merge['peak']
print(json.dumps(out))
""".replace("{peak}", PEAK)


def child_run(out: Path, jobs: int) -> dict[str, Any]:
    """:func:`timed_run` in a fresh process, with that process's peak memory (MiB)."""
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(out), str(jobs), str(Path(__file__).parent)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# --------------------------------------------------------------------------- resume, merge


def finished_folder(source: Path, target: Path, rows: int, rows_per_part: int) -> None:
    """A run folder of ``rows`` finished rows made of ``source``'s rows, as a run writes them.

    Each model of ``source`` gets its share of the rows: prompts ``q00000000``... (listed
    in prompts.parquet) times SEEDS seeds, in job order, in part files of
    ``rows_per_part`` rows (the batch size of the run that made them) in its own folder.
    The source's images are copied: a resume counts a row done only while its image is on
    disk, so the scan looks each one up.
    """
    from glyphbench.core.io import write_table
    from glyphbench.engine import RunFolder, slug

    shutil.copytree(
        source, target, ignore=shutil.ignore_patterns("parts", "*.parquet", "*.sha256")
    )
    template = pd.read_parquet(source / "results.parquet")
    by_model = [group for _, group in template.groupby("model", sort=True)]
    prompts = -(-rows // (len(by_model) * SEEDS))
    ids = [f"q{i:08d}" for i in range(prompts)]
    frame = pd.DataFrame({"prompt_id": ids, "prompt": "A sign that says 'OPEN'", "text": "OPEN"})
    write_table(frame, target / "prompts.parquet")
    folder = RunFolder(target)
    for m, model in enumerate(by_model):
        share = rows // len(by_model) + (m < rows % len(by_model))
        group = slug(str(model["model"].iloc[0]))
        for start in range(0, share, rows_per_part):
            jobs = range(start, min(share, start + rows_per_part))
            part = model.iloc[[i % len(model) for i in jobs]].copy()
            part["prompt_id"] = [ids[i // SEEDS] for i in jobs]
            part["seed"] = [i % SEEDS for i in jobs]
            part["sample_index"] = 0
            folder.write_part(part.reset_index(drop=True), "all", group)


def time_resume(folder: Path) -> dict[str, float]:
    """Seconds to read the done keys (what plan and resume read)."""
    from glyphbench.engine import RunFolder
    from glyphbench.run.results import done_keys

    start = time.perf_counter()
    keys = done_keys(RunFolder(folder))
    return {"rows": len(keys), "resume_s": time.perf_counter() - start}


MERGE_CHILD = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[3])
import bench_harness
import pandas, pyarrow.parquet
bench_harness.register()
from glyphbench.engine import RunFolder
from glyphbench.run.merge import merge_run_rows, order_rows
from glyphbench.core.schema import ROW_KEY
from glyphbench.run.results import conform_results
{peak}base = peak()
start, cpu = time.perf_counter(), time.process_time()
if sys.argv[2] == "stream":
    rows = merge_run_rows(sys.argv[1]).rows
else:  # the in-memory merge merge_run did before the streamed merge (same table, same order)
    import glyphbench.run.operations as runs
    from glyphbench.run.config import RunConfig
    folder = RunFolder(sys.argv[1])
    config = RunConfig.from_mapping(folder.manifest()["config"])
    labels = [model.label for model in config.models]
    prompts = folder.root / "prompts.parquet"
    ids = pandas.read_parquet(prompts)["prompt_id"].astype(str).tolist()
    rows = len(folder.merge(
        "results.parquet", ROW_KEY, lambda r: order_rows(r, labels, ids), conform=conform_results
    ))
wall, cpu = time.perf_counter() - start, time.process_time() - cpu
out = {"rows": rows, "merge_s": wall, "cpu_s": cpu, "peak_mib": peak(), "base_mib": base}
print(json.dumps(out))
""".replace("{peak}", PEAK)


def child_merge(folder: Path, how: str = "stream") -> dict[str, Any]:
    """Merge ``folder`` in a fresh process (``how``: stream or memory): seconds, peak MiB."""
    done = subprocess.run(
        [sys.executable, "-c", MERGE_CHILD, str(folder), how, str(Path(__file__).parent)],
        capture_output=True,
        text=True,
    )
    if done.returncode:
        raise RuntimeError(f"the {how} merge of {folder} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def load() -> str:
    """The machine's load average (1, 5, 15 min): timings on a shared machine vary with it."""
    one, five, fifteen = os.getloadavg()
    return f"load {one:.1f} {five:.1f} {fifteen:.1f} on {os.cpu_count()} CPUs"


# --------------------------------------------------------------------------- main


def verdict(value: float, target: float) -> str:
    return f"(target < {target:g}: {'met' if value < target else 'NOT met'})"


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true", help="small sizes: a quick check")
    parser.add_argument("--jobs", type=int, help="jobs of the overhead run (default 100000)")
    parser.add_argument("--resume-rows", type=int, help="rows of the resume folder (1000000)")
    parser.add_argument("--rows-per-part", type=int, default=64)
    parser.add_argument("--memory-jobs", help="two job counts for the peak-memory runs")
    parser.add_argument("--overlap-jobs", type=int, help="jobs of the overlap run (200)")
    parser.add_argument("--delay", type=float, default=0.05, help="G = R of the overlap run (s)")
    parser.add_argument(
        "--read-workers", type=int, default=1, help="reader processes of the follow run"
    )
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    jobs = args.jobs or (2_000 if args.small else 100_000)
    memory_sizes = (max(1, jobs // 10), jobs)
    if args.memory_jobs:
        small_n, large_n = (int(n) for n in args.memory_jobs.split(","))
        memory_sizes = (small_n, large_n)
    resume_rows = args.resume_rows or (20_000 if args.small else 1_000_000)
    register()
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp)
        # Each run in a fresh process: its peak memory is the run's own.
        runs = {n: child_run(base / f"run-{n}", n) for n in dict.fromkeys((*memory_sizes, jobs))}
        run = runs[jobs]
        per_image = 1000 * run["wall_s"] / run["jobs"]
        figures["overhead"] = {
            **run,
            "ms_per_image": per_image,
            "cpu_ms_per_image": 1000 * run["cpu_s"] / run["jobs"],
        }
        print(
            f"harness overhead: {run['jobs']:,} images in {run['wall_s']:.1f} s: "
            f"{per_image:.2f} ms/image wall {verdict(per_image, TARGET_OVERHEAD_MS)}, "
            f"{figures['overhead']['cpu_ms_per_image']:.2f} ms/image CPU "
            f"{verdict(figures['overhead']['cpu_ms_per_image'], TARGET_CPU_MS)} [{load()}]",
            flush=True,
        )
        peaks = {n: runs[n] for n in memory_sizes}
        figures["memory"] = {str(n): p for n, p in peaks.items()}
        small, large = (peaks[n] for n in memory_sizes)
        growth = large["loop_peak_mib"] - small["loop_peak_mib"]
        print(
            "peak memory of the run loop: "
            + ", ".join(f"{n:,} jobs {p['loop_peak_mib']:,.0f} MiB" for n, p in peaks.items())
            + f"; growth {growth:+,.0f} MiB {verdict(growth, TARGET_MEMORY_GROWTH_MIB)}",
            flush=True,
        )
        print(
            "peak memory with the final merge (the results table in memory): "
            + ", ".join(f"{n:,} jobs {p['peak_mib']:,.0f} MiB" for n, p in peaks.items()),
            flush=True,
        )

        finished_folder(base / f"run-{jobs}", base / "resume", resume_rows, args.rows_per_part)
        resume = time_resume(base / "resume")
        print(
            f"resume scan: {resume['rows']:,} finished rows "
            f"({args.rows_per_part} rows per part file) in {resume['resume_s']:.1f} s "
            f"{verdict(resume['resume_s'], TARGET_RESUME_S)} [{load()}]",
            flush=True,
        )
        figures["merges"] = merge_memory(base, jobs, resume_rows, args.rows_per_part)
        largest = figures["merges"][str(resume_rows)]["stream"]
        resume.update(merge_s=largest["merge_s"], merged=largest["rows"])
        figures["resume"] = resume
        print(
            f"merge: {largest['rows']:,} rows in {largest['merge_s']:.1f} s "
            f"{verdict(largest['merge_s'], TARGET_MERGE_S)}",
            flush=True,
        )

        overlap_jobs = args.overlap_jobs or (40 if args.small else 200)
        figures["overlap"] = overlap(base, args.delay, overlap_jobs)
        figures["follow"] = follow_overlap(base, args.delay, overlap_jobs, args.read_workers)
        figures["spawned"] = spawned_overlap(base, args.delay, overlap_jobs, args.read_workers)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    return figures


def merge_memory(base: Path, jobs: int, largest: int, rows_per_part: int) -> dict[str, Any]:
    """Peak memory of the streamed merge at 1%, 10% and 100% of ``largest`` rows.

    Each merge runs in a fresh process; the in-memory merge it replaced runs beside
    it at the two smaller sizes (at a million rows it would need about 13 GiB).
    """
    sizes = sorted({max(1, largest // 100), max(1, largest // 10), largest})
    merges: dict[str, Any] = {}
    for n in sizes:
        folder = base / "resume" if n == largest else base / f"merge-{n}"
        if n != largest:
            finished_folder(base / f"run-{jobs}", folder, n, rows_per_part)
        merges[str(n)] = {"stream": child_merge(folder)}
        line = f"  {n:,} rows: streamed merge peak {merges[str(n)]['stream']['peak_mib']:,.0f} MiB"
        line += f" in {merges[str(n)]['stream']['merge_s']:.1f} s"
        if n != largest:
            merges[str(n)]["memory"] = child_merge(folder, "memory")
            memory = merges[str(n)]["memory"]
            line += f"; in-memory merge {memory['peak_mib']:,.0f} MiB in {memory['merge_s']:.1f} s"
        print(line + f" [{load()}]", flush=True)
        if n != largest:
            shutil.rmtree(folder)
    small, large = merges[str(sizes[0])]["stream"], merges[str(sizes[-1])]["stream"]
    growth = large["peak_mib"] - small["peak_mib"]
    print(
        f"peak memory of the merge: {sizes[0]:,} rows {small['peak_mib']:,.0f} MiB, "
        f"{sizes[-1]:,} rows {large['peak_mib']:,.0f} MiB; growth {growth:+,.0f} MiB "
        f"{verdict(growth, TARGET_MERGE_GROWTH_MIB)}",
        flush=True,
    )
    return merges


def overlap(base: Path, delay: float, jobs: int) -> dict[str, float]:
    """Per-image seconds with a generator and a reader each sleeping ``delay`` per image."""
    # One model: the overlap within a model's batches, not model loading, is measured.
    run = timed_run(base / "overlap", jobs, gen_delay=delay, read_delay=delay, n_models=1)
    per_image = run["wall_s"] / run["jobs"]
    serial, overlapped = 2 * delay, delay
    print(
        f"overlap: G = R = {1000 * delay:.0f} ms/image: {1000 * per_image:.1f} ms/image "
        f"(max(G, R) = {1000 * overlapped:.0f} ms, G + R = {1000 * serial:.0f} ms; "
        f"{'overlapped' if per_image < 0.75 * serial else 'NOT overlapped'})",
        flush=True,
    )
    return {"delay_s": delay, "jobs": run["jobs"], "s_per_image": per_image}


def follow_overlap(base: Path, delay: float, jobs: int, workers: int) -> dict[str, float]:
    """The same through the run folder: ``run --read-later`` and ``read --follow`` at once."""
    import threading

    from glyphbench.engine import RunFolder
    from glyphbench.run.operations import run_benchmark
    from glyphbench.run.read_later import read_run

    out = base / "follow"
    config, prompts = run_config(out, jobs, gen_delay=delay, read_delay=delay, n_models=1)
    start = time.perf_counter()
    generation = threading.Thread(
        target=run_benchmark,
        args=(config,),
        kwargs={"prompt_set": prompts, "progress": False, "read_later": True},
    )
    generation.start()
    folder = RunFolder(out)
    while generation.is_alive() and not (folder.busy_shards() and folder.manifest_path.exists()):
        time.sleep(0.01)  # the reader follows a generation that has started
    done = read_run(out, workers=workers, follow=True, progress=False)
    generation.join()
    wall = time.perf_counter() - start
    per_image = wall / done["read"] if done["read"] else float("nan")
    print(
        f"overlap through the run folder (run --read-later + read --follow, "
        f"{workers} read worker process(es)): "
        f"{done['read']:,} images, {1000 * per_image:.1f} ms/image "
        f"(max(G, R) = {1000 * delay:.0f} ms, G + R = {2000 * delay:.0f} ms; "
        f"{'overlapped' if per_image < 1.5 * delay else 'NOT overlapped'})",
        flush=True,
    )
    return {"delay_s": delay, "jobs": done["read"], "s_per_image": per_image, "workers": workers}


#: ``run --read-workers 1`` takes about max(G, R): at most this many times it.
TARGET_SPAWNED_RATIO = 1.25


def spawned_overlap(
    base: Path, delay: float, jobs: int, workers: int, read_delay: float | None = None
) -> dict[str, float]:
    """``run --read-workers N`` against G (generate only) and R (read only), wall seconds.

    G: the run with ``read_later`` (a generator sleeping ``delay`` per image, no reading).
    R: ``read_run`` of that folder in ``workers`` processes (a reader sleeping ``delay``
    per image, ``read_delay`` when given; the processes' start-up included, as the run
    pays it too). Overlap: a fresh run of the same jobs with ``workers`` reader processes.
    """
    from glyphbench.run.operations import run_benchmark
    from glyphbench.run.read_later import read_run
    from glyphbench.run.read_workers import run_with_readers

    read_delay = delay if read_delay is None else read_delay
    config, prompts = run_config(
        base / "spawned-g", jobs, gen_delay=delay, read_delay=read_delay, n_models=1
    )
    start = time.perf_counter()
    run_benchmark(config, prompt_set=prompts, progress=False, read_later=True)
    generate_s = time.perf_counter() - start
    start = time.perf_counter()
    done = read_run(config.output.out, workers=workers, progress=False)
    read_s = time.perf_counter() - start
    both, _ = run_config(base / "spawned", jobs, gen_delay=delay, read_delay=read_delay, n_models=1)
    both = both.with_overrides(read_workers=workers)
    start = time.perf_counter()
    result = run_with_readers(both, prompt_set=prompts, progress=False)
    overlap_s = time.perf_counter() - start
    rows = result.results
    unread = int(rows["ocr_text"].isna().sum()) if rows is not None else -1
    target = max(generate_s, read_s)
    ratio = overlap_s / target
    print(
        f"overlap of run --read-workers {workers}: {done['read']:,} images, "
        f"G {generate_s:.1f} s (generate only), R {read_s:.1f} s (read only), "
        f"run {overlap_s:.1f} s = {ratio:.2f} x max(G, R), G + R = {generate_s + read_s:.1f} s "
        f"(target <= {TARGET_SPAWNED_RATIO:g} x max(G, R): "
        f"{'met' if ratio <= TARGET_SPAWNED_RATIO and unread == 0 else 'NOT met'}; "
        f"{unread} rows unread) [{load()}]",
        flush=True,
    )
    return {
        "delay_s": delay,
        "read_delay_s": read_delay,
        "jobs": done["read"],
        "workers": workers,
        "generate_s": generate_s,
        "read_s": read_s,
        "overlap_s": overlap_s,
        "ratio_to_max": ratio,
        "unread": unread,
    }


if __name__ in ("__main__", "__mp_main__"):
    # Spawned read workers import this script as __mp_main__: the plug-ins exist there too.
    register()
if __name__ == "__main__":
    main()
