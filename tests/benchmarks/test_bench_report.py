"""benchmarks/bench_report.py run small: it times the report, prints it against the target
with CPU time and load, and ``--against`` compares two trees' report folders.

No timing is asserted (the machine is shared): the printed lines are checked for
being there and measured, and the folder comparison for telling a change apart.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.paths import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "benchmarks"))

import bench_report

ROOT = REPO_ROOT

# A performance benchmark run small: out of the quick loop (`make quick`), kept in `make test`.
pytestmark = pytest.mark.slow


def test_report_benchmark_against_its_own_tree_gives_the_same_report() -> None:
    command = [sys.executable, str(ROOT / "benchmarks" / "bench_report.py"), "--rows", "2400"]
    command += ["--n-boot", "40", "--against", str(ROOT)]
    done = subprocess.run(command, capture_output=True, text=True, check=True, timeout=600)
    timed = [line for line in done.stdout.splitlines() if "write_report" in line]
    assert len(timed) == 3  # the other tree, this one, the other again
    for line in timed:
        assert "rows=2,400 n_boot=40" in line and " s CPU" in line and "load " in line
        assert "target < 30 s wall" in line and "met" in line
    assert "reports the same as the other tree's: True" in done.stdout


def test_same_reports_leaves_out_times_and_ids_but_sees_a_changed_table(tmp_path: Path) -> None:
    sides = (("report", 10, "0123456789"), ("report-against", 11, "abcdef0123"))
    for name, minute, svg_id in sides:
        folder = tmp_path / name
        (folder / "tables").mkdir(parents=True)
        (folder / "tables" / "summary.csv").write_text("model,ned\nm,0.5\n")
        (folder / "index.html").write_text(f"<p>Generated 2026-11-25 22:{minute} UTC</p>")
        (folder / "f.svg").write_text(
            f'<dc:date>2026-11-25T22:{minute}</dc:date><g clip-path="url(#p{svg_id})"></g>'
        )
    assert bench_report.same_reports(tmp_path)
    (tmp_path / "report-against" / "tables" / "summary.csv").write_text("model,ned\nm,0.6\n")
    assert not bench_report.same_reports(tmp_path)
