"""Benchmark: how fast the report's image browser (browse.html) opens, filters and sorts.

Target: the page shows its first rows in under 2 s for a 10,000-row run, opened from the
static report folder as a file:// page in headless Chromium (Debian's chromium and
chromium-driver, as the browser tests use).

    python benchmarks/bench_browser.py                  # 10,000 rows, 5 opens
    python benchmarks/bench_browser.py --rows 100000    # 10^5 rows (100,000 small PNGs)
    python benchmarks/bench_browser.py --thumbnails 40  # the cost the browser does not pay
    python benchmarks/bench_browser.py --build 1000000  # its data files alone, 10^6 rows

The run is ``build_wide_run`` of ``tests/helpers/report_fixtures.py`` (the browser test's): 5
models, every prompt attribute varied, readings with typos at each model's rate, real scores, one
small real PNG per row. The report is built once (``write_report``; its "image browser" stage
and the data's size are printed); the page is then opened ``--repeat`` times, each a fresh
navigation, the first with a cold profile. The open time is the page's own
``performance.now()`` when its first rows are shown (from the start of the navigation:
HTML, index.js, decoding, filtering and the first page's row and prompt files), and
again when the images on screen have been decoded. Also timed: choosing one model (a
filter over every row) and sorting every row by NED, from the click to the page shown.

``--build N`` times only the writing of the browser's files (``write_browser``, CPU and
wall) for benchmarks/bench_report.py's synthetic table of N rows, read back from Parquet
as the report reads it (``load_runs``), with the report's default slicings.

``--thumbnails N`` times instead what the browser avoids: making a 160 px JPEG thumbnail
(Pillow, as the gallery makes its own) from each of N 1024 x 1024 PNGs shaped like a
model's image (a smooth photo-like background with text), and the time that gives for
10^5 images on one core.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: tests.helpers

from tests.helpers.browser import chromium_driver
from tests.helpers.report_fixtures import WIDE_MODELS, build_wide_run

TARGET_MS = 2000.0

#: Milliseconds from the navigation until every image on screen is decoded.
IMAGES_SHOWN = """
const done = arguments[0];
const shown = Array.from(document.querySelectorAll('#images tbody img')).filter(
  i => i.getBoundingClientRect().top < innerHeight);
shown.forEach(i => { i.loading = 'eager'; });
Promise.all(shown.map(i => i.decode().catch(() => null)))
  .then(() => done([performance.now(), shown.length]));
"""

#: Milliseconds from a change to the page it shows (the page counts its renders).
TIMED_CHANGE = """
const [id, value, done] = arguments;
const status = document.getElementById('status');
const before = status.dataset.renders;
const start = performance.now();
const select = document.getElementById(id);
select.value = value;
select.dispatchEvent(new Event('change'));
(function wait() {
  if (status.dataset.renders !== before) done(performance.now() - start);
  else setTimeout(wait, 1);
})();
"""


def open_once(driver: Any, page: Path) -> tuple[float, float, int]:
    """(ms to the first rows, ms to the images on screen, images on screen) of one open."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get("about:blank")
    driver.get(page.as_uri())
    WebDriverWait(driver, 120).until(
        lambda d: d.execute_script("return document.body.dataset.state") == "ready"
    )
    rows = float(driver.execute_script("return window.glyphbenchBrowse.openMs"))
    images, count = driver.execute_async_script(IMAGES_SHOWN)
    return rows, float(images), int(count)


def data_size(report: Path) -> str:
    folder = report / "browse"
    files = list(folder.rglob("*.js"))
    index = (folder / "index.js").stat().st_size
    total = sum(f.stat().st_size for f in files)
    return (
        f"index.js {index / 2**20:.2f} MiB (loaded at open); {len(files) - 2} data files, "
        f"{total / 2**20:.1f} MiB in all"
    )


def thumbnail_cost(count: int) -> None:
    """Seconds per 160 px JPEG thumbnail of a 1024 px PNG, and what 10^5 would take."""
    import io

    import numpy as np
    from PIL import Image, ImageDraw, ImageFilter

    rng = np.random.default_rng(0)
    noise = Image.fromarray((rng.random((64, 64, 3)) * 255).astype("uint8"))
    image = noise.resize((1024, 1024), Image.Resampling.BICUBIC).filter(ImageFilter.GaussianBlur(2))
    ImageDraw.Draw(image).text((100, 500), "GRAND OPENING TODAY", fill="black")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "image.png"
        image.save(source)
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(count):
            with Image.open(source) as opened:
                small = opened.convert("RGB")
            small.thumbnail((160, 160))
            small.save(io.BytesIO(), format="JPEG", quality=85)
        wall = (time.perf_counter() - start) / count
        cpu_each = (time.process_time() - cpu) / count
        size = source.stat().st_size
    print(
        f"thumbnail of a 1024 px PNG ({size / 2**20:.1f} MiB): "
        f"{wall * 1000:.1f} ms wall, {cpu_each * 1000:.1f} ms CPU each over {count}; "
        f"10^5 images: {cpu_each * 1e5 / 60:.0f} min of CPU"
    )


def build_cost(rows: int) -> None:
    """Wall and CPU seconds of ``write_browser`` alone on bench_report's table of ``rows``."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import bench_report

    from glyphbench.report.image_browser import write_browser
    from glyphbench.report.load import REPORT_UNUSED_COLUMNS, load_runs
    from glyphbench.report.slices import Slicing
    from glyphbench.report.stats import SUMMARY_METRICS

    with tempfile.TemporaryDirectory() as tmp:
        bench_report.build_run(Path(tmp) / "run", rows)
        frame = load_runs([Path(tmp) / "run"], skip=REPORT_UNUSED_COLUMNS)
        slicing = Slicing.resolve(frame, None)
        out = Path(tmp) / "report"
        start, cpu = time.perf_counter(), time.process_time()
        write_browser(
            frame,
            out,
            models=list(bench_report.MODELS),
            metrics=["ned", *(m for m in SUMMARY_METRICS if m != "ned")],
            report_slices=slicing.labels,
        )
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        files = sum(1 for _ in (out / "browse").rglob("*.js"))
    print(
        f"write_browser, {len(frame):,} rows of bench_report's table: {wall:.1f} s wall, "
        f"{cpu:.1f} s CPU, {files:,} files"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--n-boot", type=int, default=200, help="the report's resamples")
    parser.add_argument("--width", type=int, default=1366)
    parser.add_argument("--height", type=int, default=768)
    parser.add_argument("--thumbnails", type=int, help="time N thumbnails instead (see above)")
    parser.add_argument("--build", type=int, help="time the data files alone for N rows")
    args = parser.parse_args()
    if args.build:
        build_cost(args.build)
        return
    if args.thumbnails:
        thumbnail_cost(args.thumbnails)
        return
    from glyphbench.report import write_report

    n_prompts = -(-args.rows // len(WIDE_MODELS))
    with tempfile.TemporaryDirectory() as tmp:
        start = time.perf_counter()
        run = build_wide_run(Path(tmp) / "run", n_prompts=n_prompts)
        built = time.perf_counter() - start
        start = time.perf_counter()
        index = write_report([run], n_boot=args.n_boot)
        report_seconds = time.perf_counter() - start
        stages = json.loads((index.parent / "report.json").read_text())["stage_seconds"]
        rows = len(WIDE_MODELS) * n_prompts
        print(
            f"rows={rows:,}: run built in {built:.1f} s; write_report {report_seconds:.1f} s, "
            f"of which the image browser {stages['image browser']:.2f} s; {data_size(index.parent)}"
        )
        page = index.parent / "browse.html"
        with chromium_driver(Path(tmp) / "profile", args.width, args.height) as driver:
            driver.set_script_timeout(120)
            opens = [open_once(driver, page) for _ in range(args.repeat)]
            model = driver.execute_async_script(TIMED_CHANGE, "model", "2")
            ordered = driver.execute_async_script(TIMED_CHANGE, "sort", "ned:worst")
    first_rows = [round(o[0]) for o in opens]
    with_images = [round(o[1]) for o in opens]
    median = statistics.median(first_rows)
    print(
        f"browse.html, {rows:,} rows, file://, {args.width}x{args.height}: first rows shown in "
        f"median {median:.0f} ms over {args.repeat} opens {first_rows} (first: cold profile); "
        f"with the {opens[0][2]} images on screen decoded {with_images} ms "
        f"(target < {TARGET_MS:.0f} ms, ratio {median / TARGET_MS:.2f}, "
        f"{'met' if median < TARGET_MS else 'NOT met'})"
    )
    print(f"  one model chosen: {model:.0f} ms; every row sorted by NED: {ordered:.0f} ms")


if __name__ == "__main__":
    main()
