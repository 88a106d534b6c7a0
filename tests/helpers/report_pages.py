"""_bench_report, _vae_report: what several test modules share.

Here rather than in one of them: a test module never imports another.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers.report_fixtures import build_run
from tests.helpers.vae_report_fixtures import vae_results


def _bench_report(root: Path) -> Path:
    from glyphbench.report import write_report

    run = build_run(root / "run_bench", n_prompts=16)
    return write_report([run], root / "bench_report", n_boot=200)


def _vae_report(root: Path) -> Path:
    from glyphbench.vae_eval.report import write_report

    return write_report(vae_results(), root / "vae")
