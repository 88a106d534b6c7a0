"""Time ``glyphbench.scoring.score_pairs`` against plain dynamic programming, same run, same pairs.

    python benchmarks/bench_scoring.py [--pairs 100000] [--baseline-pairs N] [--seed 0]

Pairs are realistic: texts shaped like a benchmark's (60% single words, 30% short
phrases, 10% sentences) built from wordfreq's English list, with OCR-like damage
(dropped/substituted/case-flipped characters, split words, extra words, 10% empty
reads). The baseline is ``tests/dp_reference.dp_scores``, the obvious
pure-Python DP for every metric. Values must be identical; the ratio is printed.
Target: >= 50x. Both wall-clock and CPU time are reported: on a machine shared with
other work the CPU-time ratio is the fair one (wall time also counts the others).
"""

from __future__ import annotations

import argparse
import math
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the checkout: tests.helpers

from glyphbench.scoring import SCORE_COLUMNS, score_pairs
from tests.helpers.dp_reference import dp_scores

T = TypeVar("T")


def make_pairs(n: int, seed: int) -> tuple[list[str], list[str]]:
    from wordfreq import top_n_list

    vocab = [w for w in top_n_list("en", 20000) if w.isalpha()]
    rng = random.Random(seed)
    expected, ocr = [], []
    for _ in range(n):
        kind = rng.random()
        n_words = 1 if kind < 0.6 else rng.randint(2, 6) if kind < 0.9 else rng.randint(7, 20)
        words = [rng.choice(vocab) for _ in range(n_words)]
        text = " ".join(w.capitalize() if rng.random() < 0.3 else w for w in words)
        expected.append(text)
        ocr.append(damage(text, rng))
    return expected, ocr


def damage(text: str, rng: random.Random) -> str:
    if rng.random() < 0.1:
        return ""
    out = []
    for ch in text:
        r = rng.random()
        if r < 0.05:
            continue
        out.append(rng.choice("aeilo01rn") if r < 0.1 else ch.swapcase() if r < 0.15 else ch)
        if rng.random() < 0.02:
            out.append(" ")
    noisy = "".join(out)
    if rng.random() < 0.2:
        noisy += " " + rng.choice(["SALE", "the", "OPEN", "x", "2024"])
    return noisy


def timed(work: Callable[[], T]) -> tuple[T, float, float]:
    """``work()``, its wall-clock seconds and the CPU seconds of this process."""
    wall, cpu = time.perf_counter(), time.process_time()
    result = work()
    return result, time.perf_counter() - wall, time.process_time() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--pairs", type=int, default=100_000)
    parser.add_argument(
        "--baseline-pairs",
        type=int,
        default=None,
        help="time the slow baseline on the first N pairs only (default: all)",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    expected, ocr = make_pairs(args.pairs, args.seed)
    unique = len(set(zip(expected, ocr, strict=True)))
    print(
        f"{args.pairs:,} pairs ({unique:,} distinct), mean expected length "
        f"{sum(map(len, expected)) / len(expected):.1f} chars"
    )

    # Importing numpy/pandas and loading the metric table happen once per process,
    # not per call: leave them out of the timing.
    score_pairs(expected[:10], ocr[:10])
    fast, fast_wall, fast_cpu = timed(lambda: score_pairs(expected, ocr))

    n_base = args.baseline_pairs or args.pairs
    pairs = list(zip(expected[:n_base], ocr[:n_base], strict=True))
    slow, slow_wall, slow_cpu = timed(lambda: [dp_scores(e, o) for e, o in pairs])

    mismatches = sum(
        not math.isclose(float(row[c]), float(ref[c]), abs_tol=1e-12)
        for row, ref in zip(fast.head(n_base).to_dict("records"), slow, strict=True)
        for c in SCORE_COLUMNS
    )
    n_fast = args.pairs
    for name, fast_s, slow_s in (("wall", fast_wall, slow_wall), ("CPU", fast_cpu, slow_cpu)):
        print(
            f"{name + ':':5} score_pairs {fast_s:7.2f} s ({fast_s / n_fast * 1e6:6.2f} us/pair), "
            f"plain DP {slow_s:7.2f} s ({slow_s / n_base * 1e6:7.2f} us/pair, {n_base:,} pairs)"
        )
    ratios = {
        name: (s / n_base) / (f / n_fast)
        for name, f, s in (("wall", fast_wall, slow_wall), ("CPU", fast_cpu, slow_cpu))
    }
    verdict = "OK" if ratios["CPU"] >= 50 else "BELOW TARGET"
    print(
        f"speed-up    : {ratios['wall']:6.1f}x wall, {ratios['CPU']:6.1f}x CPU"
        f"   (target >= 50x)  {verdict}"
    )
    print(f"mismatches  : {mismatches} of {n_base * len(SCORE_COLUMNS):,} values")
    if mismatches:
        sys.exit(1)


if __name__ == "__main__":
    main()
