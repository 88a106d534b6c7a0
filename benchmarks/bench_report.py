"""Benchmark: build the full report for a 1,000,000-row results table.

Target: under 30 seconds on the project's 2-core machine with 1,000 resamples
over prompt clusters, with margin under load. The machine is shared,
so each line prints CPU seconds and the load average beside the wall time. Each
report is built in a fresh child process, so the printed peak memory (the
child's peak resident set) is the report's own.

    python benchmarks/bench_report.py                       # 1,000,000 rows
    python benchmarks/bench_report.py --rows 100000 --naive # + naive-loop comparison
    python benchmarks/bench_report.py --scaling 100000,300000,1000000 \
        --figure docs/performance_report_scaling.png --json report-scaling.json
    git worktree add /tmp/old <commit>                      # before/after, same table:
    python benchmarks/bench_report.py --against /tmp/old    # old, this, old; same output?

The table is synthetic (scores drawn to look like a real run: 8 models of
different quality plus the controls, every prompt attribute varied); a handful
of rows point at real PNG files so the gallery code path runs too.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import checkout

from glyphbench.report.slices import slice_labels
from glyphbench.report.stats import SUMMARY_METRICS, summarize
from glyphbench.run.results import RESULT_COLUMNS

ROOT = Path(__file__).resolve().parents[1]
TARGET_SECONDS = 30.0
CHILD = """
import json, os, resource, sys, time
from glyphbench.report import write_report
load, start, cpu = os.getloadavg()[0], time.perf_counter(), time.process_time()
index = write_report([sys.argv[1]], sys.argv[3], n_boot=int(sys.argv[2]))
print(json.dumps({'wall': time.perf_counter() - start, 'cpu': time.process_time() - cpu,
    'peak_mib': resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    'load': [load, os.getloadavg()[0]],
    'stages': json.loads((index.parent / 'report.json').read_text())['stage_seconds']}))
"""
MODELS = {  # name -> mean NED
    **{f"model-{i}": q for i, q in enumerate((0.93, 0.9, 0.86, 0.8, 0.74, 0.66, 0.55, 0.4))},
    "control:render": 0.97,
    "control:typo?rate=0.1": 0.88,
    "control:typo?rate=0.3": 0.7,
    "control:blank": 0.0,
}


def synthetic_results(n_rows: int, seed: int = 0) -> pd.DataFrame:
    """A results table of ``n_rows`` rows with every RESULT_COLUMNS column."""
    rng = np.random.default_rng(seed)
    names = list(MODELS)
    n_prompts = int(np.ceil(n_rows / len(names)))
    prompt_ids = np.array([f"p{i:06d}" for i in range(n_prompts)])
    model_idx = np.repeat(np.arange(len(names)), n_prompts)[:n_rows]
    prompt_idx = np.tile(np.arange(n_prompts), len(names))[:n_rows]
    char_length = rng.integers(1, 80, n_prompts)[prompt_idx]
    word_count = np.maximum(1, char_length // 6)
    quality = np.array([MODELS[m] for m in names])[model_idx]
    difficulty = np.clip(char_length / 200, 0, 0.3)
    ned = np.clip(rng.normal(quality - difficulty, 0.12), 0, 1).round(3)
    ned[model_idx == names.index("control:blank")] = 0.0
    exact = (ned > 0.97) & (rng.random(n_rows) < 0.9)
    ned[exact] = 1.0
    algorithm1 = np.round((1 - ned) * char_length * 0.8).astype(float)
    prompt_type = np.array(["simple", "complex", "real_world"])[prompt_idx % 3]
    groups = np.array(
        ["Advertisements", "Signs", "Book covers", "Menus", "Packaging"], dtype=object
    )
    group = np.where(
        prompt_type == "real_world", groups[prompt_idx % 5], np.array(None, dtype=object)
    )
    cefr = np.array(["A1", "A2", "B1", "B2", "C1", "C2", None], dtype=object)[prompt_idx % 7]
    laion = np.where(
        prompt_idx % 9 == 0, np.nan, np.floor(10 ** rng.uniform(0, 6, n_prompts))[prompt_idx]
    )
    error = np.where(rng.random(n_rows) < 0.01, "Generate: RuntimeError: CUDA out of memory", "")
    frame = pd.DataFrame(
        {
            "run_id": "bench",
            "model": np.array(names)[model_idx],
            "is_control": np.char.startswith(np.array(names)[model_idx], "control:"),
            "prompt_id": prompt_ids[prompt_idx],
            "seed": 0,
            "sample_index": 0,
            "image_seed": prompt_idx,
            "prompt": "A sign that says something",
            "text": "something",
            "prompt_type": prompt_type,
            "group": group,
            "cefr": cefr,
            "char_length": char_length,
            "word_count": word_count,
            "laion_freq": laion,
            "image_path": "",
            "ocr_text": "something",
            "ocr_boxes": "[]",
            "error": error,
            "algorithm1": algorithm1,
            "ned": ned,
            "anls": np.where(ned >= 0.5, ned, 0.0),
            "exact_match": exact.astype(float),
            "word_f1": np.clip(ned - 0.1 + rng.normal(0, 0.05, n_rows), 0, 1),
            "word_precision": np.clip(ned - 0.08, 0, 1),
            "word_recall": np.clip(ned - 0.12, 0, 1),
        }
    )
    for column in RESULT_COLUMNS:
        if column not in frame.columns:
            frame[column] = pd.NA
    failed = frame["error"] != ""
    frame.loc[
        failed,
        ["ned", "anls", "exact_match", "word_f1", "algorithm1", "word_precision", "word_recall"],
    ] = np.nan
    return frame


def naive_summary(frame: pd.DataFrame, column: str, n_boot: int, seed: int) -> int:
    """The obvious implementation: a Python loop over resamples for every slice and metric."""
    rng = np.random.default_rng(seed)
    labels = slice_labels(frame, column).astype(str)
    ok = frame["error"] == ""
    count = 0
    for (_, _), rows in frame[ok].groupby([frame["model"][ok], labels[ok]]):
        for metric in SUMMARY_METRICS:
            values = rows[metric].dropna().to_numpy()
            means = [
                values[rng.integers(0, len(values), len(values))].mean() for _ in range(n_boot)
            ]
            np.percentile(means, [2.5, 97.5])
            count += 1
    return count


def build_run(folder: Path, rows: int) -> pd.DataFrame:
    """Write a synthetic run of ``rows`` rows into ``folder``; return its table."""
    folder.mkdir(parents=True, exist_ok=True)
    frame = synthetic_results(rows)
    _add_some_images(frame, folder)
    frame.to_parquet(folder / "results.parquet", index=False)
    (folder / "run.json").write_text(json.dumps({"run_id": "bench", "config": {"rows": rows}}))
    return frame


def time_report(
    folder: Path, n_boot: int, code: Path = ROOT, out: Path | None = None
) -> dict[str, Any]:
    """Wall and CPU seconds, peak memory (MiB), load average (at start and end) and stages
    of one report, in a fresh process importing glyphbench from ``code``."""
    out = out or folder / "report"
    done = subprocess.run(
        [sys.executable, "-c", checkout.prelude(code) + CHILD, str(folder), str(n_boot), str(out)],
        check=True,
        capture_output=True,
        text=True,
    )
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def report_line(rows: int, n_boot: int, result: dict[str, Any], label: str = "") -> str:
    """One printed line: rows, wall, CPU, peak memory, load, and the ratio to the target.

    The machine is shared, so the load average (1 min, at start and end) is printed
    beside the wall time; CPU seconds depend much less on it.
    """
    load = result.get("load") or [float("nan")] * 2
    return (
        f"{label}rows={rows:,} n_boot={n_boot}: write_report {result['wall']:.1f} s wall, "
        f"{result['cpu']:.1f} s CPU, peak {result['peak_mib']:,.0f} MiB, "
        f"load {load[0]:.1f}-{load[1]:.1f} "
        f"(target < {TARGET_SECONDS:.0f} s wall, ratio {result['wall'] / TARGET_SECONDS:.2f}, "
        f"{'met' if result['wall'] < TARGET_SECONDS else 'NOT met'}; "
        f"CPU {'within' if result['cpu'] < TARGET_SECONDS else 'NOT within'} it)"
    )


def scaling_figure(points: list[dict[str, Any]], path: Path) -> None:
    """Rows against seconds (wall and CPU) and peak memory, two panels."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [p["rows"] for p in points]
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.4))
    left.plot(rows, [p["wall"] for p in points], "o-", color="#0072B2", label="wall")
    left.plot(rows, [p["cpu"] for p in points], "s--", color="#E69F00", label="CPU")
    left.axhline(TARGET_SECONDS, color="#D55E00", linestyle=":", label="target at 1M rows")
    left.set(xlabel="result rows", ylabel="seconds", title="report time (1,000 resamples)")
    left.legend(frameon=False)
    right.plot(rows, [p["peak_mib"] / 1024 for p in points], "o-", color="#009E73")
    right.set(xlabel="result rows", ylabel="GiB", title="report peak memory")
    for axis in (left, right):
        axis.set_xscale("log")
        axis.set_ylim(bottom=0)
        axis.grid(alpha=0.3)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--n-boot", type=int, default=1000)
    parser.add_argument("--scaling", help="comma-separated row counts: one report each")
    parser.add_argument("--figure", type=Path, help="PNG of the scaling curve (with --scaling)")
    parser.add_argument("--json", type=Path, help="write the measured points here")
    parser.add_argument("--naive", action="store_true", help="also time a naive bootstrap loop")
    parser.add_argument(
        "--against",
        type=Path,
        help="another checkout of glyphbench (e.g. a git worktree of an older commit): its "
        "report on the same table is timed too, before and after this one's, and the two "
        "report folders are compared (tables, page and figures the same, timestamps aside)",
    )
    args = parser.parse_args()
    sizes = [int(n) for n in args.scaling.split(",")] if args.scaling else [args.rows]
    points = []
    with tempfile.TemporaryDirectory() as tmp:
        for rows in sizes:
            folder = Path(tmp) / f"run-{rows}"
            frame = build_run(folder, rows)
            if args.against:
                against(folder, rows, args.n_boot, args.against)
            result = time_report(folder, args.n_boot)
            points.append({"rows": rows, "n_boot": args.n_boot, **result})
            print(report_line(rows, args.n_boot, result, "this tree: " if args.against else ""))
            print("  stages (s):", result["stages"])
            if args.against:
                against(folder, rows, args.n_boot, args.against)
                print("  reports the same as the other tree's:", same_reports(folder))
            if args.naive:
                naive_comparison(frame, args.n_boot)
            del frame
    if args.figure:
        scaling_figure(points, args.figure)
        print(f"figure: {args.figure}")
    if args.json:
        args.json.write_text(json.dumps(points, indent=1))


def against(folder: Path, rows: int, n_boot: int, code: Path) -> None:
    """Time the report of another checkout on the same table (written beside this one's)."""
    result = time_report(folder, n_boot, code.resolve(), folder / "report-against")
    print(report_line(rows, n_boot, result, f"{code}: "))


def same_reports(folder: Path) -> bool:
    """Whether this tree's report folder and the other tree's hold the same files and bytes,
    leaving out what differs between any two runs: the page's "Generated" time, report.json's
    timings, and the SVGs' date and random element ids."""
    import re

    def normal(path: Path) -> bytes:
        data = path.read_bytes()
        if path.suffix == ".svg":
            data = re.sub(rb"<dc:date>.*?</dc:date>", b"", data)
            ids: dict[bytes, bytes] = {}
            return re.sub(
                rb"\b(?:p|m|image)[0-9a-f]{10}\b",
                lambda m: ids.setdefault(m.group(0), b"id%d" % len(ids)),
                data,
            )
        if path.name == "index.html":
            return re.sub(rb"Generated \d{4}-\d\d-\d\d \d\d:\d\d UTC", b"", data)
        if path.name == "report.json":
            meta = json.loads(data)
            meta.pop("seconds", None)
            meta.pop("stage_seconds", None)
            return json.dumps(meta, sort_keys=True).encode()
        return data

    ours, theirs = folder / "report", folder / "report-against"
    files = sorted(p.relative_to(ours) for p in ours.rglob("*") if p.is_file())
    if files != sorted(p.relative_to(theirs) for p in theirs.rglob("*") if p.is_file()):
        return False
    return all(normal(ours / name) == normal(theirs / name) for name in files)


def naive_comparison(frame: pd.DataFrame, n_boot: int) -> None:
    """Same slices, vectorised vs a naive loop (one attribute keeps the naive run short)."""
    start = time.perf_counter()
    summarize(frame, ["prompt_type"], n_boot=n_boot)
    fast = time.perf_counter() - start
    start = time.perf_counter()
    groups = naive_summary(frame, "prompt_type", n_boot, 0)
    slow = time.perf_counter() - start
    print(
        f"  summarize by prompt_type ({groups} slice x metric intervals): "
        f"vectorised {fast:.2f} s, naive loop {slow:.1f} s, speed-up x{slow / fast:.1f}"
    )


def _add_some_images(frame: pd.DataFrame, run: Path) -> None:
    """Give the first rows of each model a real image so the gallery code runs."""
    from PIL import Image, ImageDraw

    for model, rows in frame.groupby("model").groups.items():
        for k, i in enumerate(list(rows)[:3]):
            rel = f"images/{str(model).replace(':', '_').replace('?', '_')}/{k}.png"
            (run / rel).parent.mkdir(parents=True, exist_ok=True)
            image = Image.new("RGB", (256, 96), "white")
            ImageDraw.Draw(image).text((10, 40), "something", fill="black")
            image.save(run / rel)
            frame.loc[i, "image_path"] = rel
            frame.loc[i, "ocr_boxes"] = json.dumps([[[8, 38], [80, 38], [80, 52], [8, 52]]])


if __name__ == "__main__":
    main()
