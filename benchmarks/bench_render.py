"""Time the render control on long texts: seconds per 512-pixel image by text length.

    python benchmarks/bench_render.py [--lengths 500,1000,2000,4000] [--repeats 3] [--seed 0]

Texts are seeded random strings of three kinds: Latin letters without a space (one
word to cut over many lines), Chinese characters (which break anywhere) and Latin
words of 1 to 9 letters. Each is drawn ``--repeats`` times with ``render_text`` (image
seeds 0, 1, ...); the median wall-clock and CPU seconds are printed, with the characters
measured per character of text (the work, which tests/bench/models/test_render_linear.py keeps
flat). Target: a 2,000-character text in under 5 s; texts over
``MAX_RENDER_CHARS`` are refused up front, so the longest length is that limit.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from glyphbench.models import controls

KINDS = {
    "latin, no space": "abcdefghijklmnopqrstuvwxyz",
    "chinese": "营业中欢迎光临咖啡店出口入口停车场禁止吸烟",
    "latin words": "abcdefghij ",
}


def text_of(kind: str, length: int, rng: random.Random) -> str:
    return "".join(rng.choice(KINDS[kind]) for _ in range(length))


def measure(text: str, repeats: int) -> tuple[float, float, float]:
    """Median wall and CPU seconds of one image, and characters measured per character."""
    counts = [0]
    width = controls._text_width

    def counting(font: object, part: str) -> float:
        counts[0] += len(part)
        return width(font, part)  # type: ignore[arg-type]

    walls, cpus = [], []
    controls._text_width = counting  # type: ignore[assignment]
    try:
        for seed in range(repeats):
            wall, cpu = time.perf_counter(), time.process_time()
            controls.render_text(text, seed=seed)
            walls.append(time.perf_counter() - wall)
            cpus.append(time.process_time() - cpu)
    finally:
        controls._text_width = width
    return statistics.median(walls), statistics.median(cpus), counts[0] / repeats / len(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lengths", default=f"500,1000,2000,{controls.MAX_RENDER_CHARS}")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print(f"{'text':<16} {'chars':>6} {'wall s':>7} {'CPU s':>7} {'measured/char':>14}")
    for kind in KINDS:
        for length in (int(n) for n in args.lengths.split(",")):
            wall, cpu, work = measure(text_of(kind, length, rng), args.repeats)
            print(f"{kind:<16} {length:>6} {wall:>7.2f} {cpu:>7.2f} {work:>14.1f}", flush=True)


if __name__ == "__main__":
    main()
