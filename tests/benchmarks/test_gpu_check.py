"""Benchmarks/gpu_check.py, run here in its reduced (CPU) mode.

The full check needs a CUDA GPU (docs/performance.md says where its figures are); the
reduced mode runs the same steps with tiny pipelines on the CPU and skips the CUDA-only
ones with their reason, writing the same JSON.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from glyphbench.readers import available_engines
from tests.helpers.paths import REPO_ROOT
from tests.helpers.runner_helper import child_environment

SCRIPT = REPO_ROOT / "benchmarks" / "gpu_check.py"

STEPS = [
    "environment", "build_tiny", "offload_model", "offload_sequential", "compile",
    "qwen_image_bfloat16", "vlm_read_workers", "rescore_vlm", "easyocr_cuda",
    "readers_per_gpu", "build_fullsize", "bench_1024", "bench_512", "cli_read_workers",
    "stand_in",
]  # fmt: skip
#: Steps only CUDA has: skipped on the CPU, with the reason.
CUDA_ONLY = {"offload_model", "offload_sequential", "compile"}


def check(tmp_path: Path, *args: str, mode: str = "--reduced", exit_code: int = 0) -> dict:
    out = tmp_path / "check.json"
    done = subprocess.run(
        [sys.executable, str(SCRIPT), mode, "--json", str(out), *args],
        env=child_environment(),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == exit_code, done.stderr[-3000:]
    data: dict = json.loads(out.read_text())
    assert data["format"] == 1
    if mode == "--reduced":
        assert data["mode"] == "reduced" and data["device"] == "cpu"
    assert [step["name"] for step in data["steps"]] == STEPS
    for step in data["steps"]:
        assert step["status"] in ("ok", "error", "skipped")
        assert isinstance(step["seconds"], float)
        assert step["status"] != "skipped" or step["reason"]
    counts = {
        s: sum(step["status"] == s for step in data["steps"]) for s in ("ok", "error", "skipped")
    }
    assert data["summary"] == counts
    return data


def test_a_spent_budget_skips_every_step_and_says_why(tmp_path: Path) -> None:
    data = check(tmp_path, "--budget-s", "0")
    assert {step["status"] for step in data["steps"]} == {"skipped"}
    assert all("time budget" in step["reason"] for step in data["steps"])


def _cuda() -> bool:
    import torch

    return bool(torch.cuda.is_available())


@pytest.mark.slow
def test_the_full_check_without_a_gpu_says_so_and_runs_nothing(tmp_path: Path) -> None:
    if _cuda():
        pytest.skip("a GPU is here: the full check would run")
    build = tmp_path / "build"
    data = check(tmp_path, "--build-dir", str(build), mode="--device=cuda", exit_code=1)
    first, *rest = data["steps"]
    assert first["status"] == "error" and "no CUDA device" in first["error"]
    assert all(step["reason"] == "no CUDA device (see environment)" for step in rest)
    assert not build.exists()  # the full-size build was not started


@pytest.mark.slow
def test_the_reduced_check_runs_every_cpu_step(tmp_path: Path) -> None:
    data = check(tmp_path, "--budget-s", "3000", "--work", str(tmp_path / "work"))
    steps = {step["name"]: step for step in data["steps"]}
    easyocr = available_engines().get("easyocr") is True
    for name, step in steps.items():
        if name in CUDA_ONLY:
            assert step["status"] == "skipped" and "CUDA" in step["reason"], step
        elif name == "readers_per_gpu":  # no GPU here
            assert step["status"] == "skipped" and "GPUs" in step["reason"], step
        elif name == "easyocr_cuda" and not easyocr:
            assert step["status"] == "skipped", step
        else:
            assert step["status"] == "ok", step
    for name in ("bench_1024", "bench_512"):
        numbers = steps[name]["details"]
        ratio = numbers["harness_null_ocr_images_per_s"] / numbers["bare_images_per_s"]
        assert numbers["harness_null_ocr_ratio"] == pytest.approx(ratio) and ratio > 0
        assert numbers["encode_ms"] > 0 and numbers["encoders"] >= 1
        assert 0 < numbers["ceiling_ratio"] < 1
    run = steps["cli_read_workers"]["details"]
    assert run["rows"] == 4 and run["errors"] == 0 and run["read"] == 4
    assert run["readers"]["workers"] == 2 and run["readers"]["read"] == 4
    assert steps["vlm_read_workers"]["details"]["readers"]["workers"] == 2
    assert steps["rescore_vlm"]["details"]["rows"] == 4
    # The stand-in ran on this CPU; its 512 px is no size of the reduced bench steps (64,
    # 32), so nothing is compared, and the GPU ratios it would be compared with are kept.
    stand_in = steps["stand_in"]["details"]
    [row] = stand_in["rows"]
    assert (row["size"], row["content"]) == (512, "noise") and row["ratio"] > 0
    assert stand_in["error_points"] == {} and stand_in["gil"] == 0.8
    assert set(stand_in["gpu_ratios"]) == {"64", "32"}  # JSON keys
    for size, name in (("64", "bench_1024"), ("32", "bench_512")):
        expected = steps[name]["details"]["harness_null_ocr_ratio"]
        assert stand_in["gpu_ratios"][size] == expected
