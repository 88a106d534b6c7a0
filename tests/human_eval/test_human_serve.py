"""The server's private folders in the study: what a killed server left is removed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from glyphbench.core.durable import HOST_TAG
from glyphbench.human_eval.serve import private_temp_dir
from glyphbench.human_eval.study import Study


def test_a_killed_servers_cache_folder_is_removed_by_the_next_start(tmp_path: Path) -> None:
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    dead_pid = int(gone.stdout)  # a process of this host that has ended (kill -9 alike)
    left = tmp_path / f".serve-{HOST_TAG}-{dead_pid}-k1ll3d9x"
    left.mkdir()
    (left / "image-copy.png").write_bytes(b"\x89PNG")
    live = tmp_path / f".serve-{HOST_TAG}-{os.getpid()}-l1ve0000"  # a server still running
    other_host = tmp_path / f".serve-{'0' * 6 if HOST_TAG != '0' * 6 else '1' * 6}-1-abcdefgh"
    for folder in (live, other_host):
        folder.mkdir()
    study = Study(folder=tmp_path, config={}, manifest=None)  # type: ignore[arg-type]
    mine = private_temp_dir(study)
    assert not left.exists()
    assert live.is_dir() and other_host.is_dir()  # alive, or another machine's: kept
    assert mine.name.startswith(f".serve-{HOST_TAG}-{os.getpid()}-")
    assert mine.stat().st_mode & 0o077 == 0
