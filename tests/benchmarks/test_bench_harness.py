"""benchmarks/bench_harness.py at a small size: it completes and prints every figure.

No timing is asserted (the machine is shared); the figures are checked for being
measured (positive, the right counts), not for meeting their targets.
"""

from __future__ import annotations

import sys

import pytest

from tests.helpers.paths import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "benchmarks"))

import bench_harness

# A performance benchmark run small: out of the quick loop (`make quick`), kept in `make test`.
pytestmark = pytest.mark.slow


def test_harness_benchmark_prints_every_figure(capsys: pytest.CaptureFixture[str]) -> None:
    figures = bench_harness.main(
        [
            "--small",
            "--jobs",
            "200",
            "--memory-jobs",
            "100,300",
            "--resume-rows",
            "3000",
            "--rows-per-part",
            "100",
            "--overlap-jobs",
            "20",
            "--delay",
            "0.02",
            "--read-workers",
            "0",  # a spawned worker would not have the benchmark's plug-ins under pytest
        ]
    )
    printed = capsys.readouterr().out
    labels = (
        "harness overhead:",
        "peak memory of the run loop:",
        "with the final merge",
        "resume scan:",
        "merge:",
        "overlap:",
    )
    for label in (*labels, "overlap through the run folder", "overlap of run --read-workers"):
        assert label in printed, printed
    assert figures["overhead"]["jobs"] == 200 and figures["overhead"]["ms_per_image"] > 0
    assert set(figures["memory"]) == {"100", "300"}
    assert all(p["peak_mib"] >= p["loop_peak_mib"] > 50 for p in figures["memory"].values())
    assert figures["resume"]["rows"] == 3000 and figures["resume"]["merged"] == 3000
    assert figures["overlap"]["jobs"] == 20 and figures["overlap"]["s_per_image"] > 0
    assert figures["follow"]["jobs"] == 20 and figures["follow"]["s_per_image"] > 0
    spawned = figures["spawned"]
    assert spawned["jobs"] == 20 and spawned["unread"] == 0
    assert min(spawned["generate_s"], spawned["read_s"], spawned["overlap_s"]) > 0
