"""Two real processes racing on one run folder (used by tests/bench/run/test_reliability_runs.py).

:func:`race` starts two spawned processes; for every trial both wait at a barrier,
then call :func:`glyphbench.run.operations.run_benchmark` on the same output folder, and report
``"ok"`` or the one-line refusal they got. Spawning once and racing many trials keeps
the test fast (two interpreter start-ups, not forty).
"""

from __future__ import annotations

import io
import multiprocessing
from pathlib import Path
from typing import Any

#: A trial's two configs: (process 0's settings, process 1's settings).
Trial = tuple[dict[str, Any], dict[str, Any]]


def _worker(index: int, trials: list[Trial], barrier: Any, outcomes: Any) -> None:
    from rich.console import Console

    from glyphbench.core.errors import InputError
    from glyphbench.run.config import RunConfig
    from glyphbench.run.operations import run_benchmark
    from tests.helpers.runner_helper import register

    register()
    for number, trial in enumerate(trials):
        config = RunConfig.from_mapping(trial[index], "race")
        barrier.wait(timeout=120)
        try:
            run_benchmark(config, progress=False, console=Console(file=io.StringIO()))
            outcome = "ok"
        except InputError as exc:
            outcome = str(exc)
        except Exception as exc:  # reported to the test, which fails with it
            outcome = f"CRASH {type(exc).__name__}: {exc}"
        outcomes.put((number, index, outcome))


def race(trials: list[Trial], tests_dir: Path) -> list[tuple[str, str]]:
    """Run every trial with two processes at once; per trial the two outcomes."""
    import sys

    context = multiprocessing.get_context("spawn")
    if str(tests_dir) not in sys.path:
        sys.path.insert(0, str(tests_dir))
    barrier = context.Barrier(2)
    outcomes = context.Queue()
    workers = [
        context.Process(target=_worker, args=(index, trials, barrier, outcomes))
        for index in range(2)
    ]
    for worker in workers:
        worker.start()
    results: dict[tuple[int, int], str] = {}
    for _ in range(2 * len(trials)):
        number, index, outcome = outcomes.get(timeout=300)
        results[number, index] = outcome
    for worker in workers:
        worker.join(timeout=60)
    return [(results[n, 0], results[n, 1]) for n in range(len(trials))]
