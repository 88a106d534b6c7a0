"""The dry-run's estimate names generation it cannot count (with the
command that measures it), warns when ``device auto`` puts a diffusers model on the CPU,
and ``--ocr`` help lists every registered reader."""

from __future__ import annotations

from pathlib import Path

import pytest

from glyphbench.run import plan as planning
from glyphbench.run.plan import auto_device, plan_lines

CONTROLS = {"label": "control:render", "spec": "control:render", "jobs": 10, "remaining": 10}
SDXL = {
    "label": "sdxl",
    "spec": "diffusers:stabilityai/stable-diffusion-xl-base-1.0",
    "jobs": 10,
    "remaining": 10,
    "describe": {"family": "sdxl"},
}


def _plan(*models: dict[str, object], device: str = "auto", auto: str = "cpu") -> list[str]:
    plan = {
        "run_id": "r",
        "out": "runs/r",
        "device": device,
        "auto_device": auto,
        "ocr": "rapidocr",
        "prompts": {"source": "default", "count": 10},
        "seeds": [0],
        "images_per_prompt": 1,
        "models": list(models),
    }
    return plan_lines(plan)


def test_everything_counted_gives_one_estimate_line() -> None:
    lines = _plan(CONTROLS)
    assert lines[-1].startswith("estimate: about 3 s on cpu (device auto): making under 1 s")
    assert not any(line.startswith(("  unknown", "warning")) for line in lines)


def test_generation_without_a_figure_is_a_line_with_the_command_that_measures_it() -> None:
    lines = _plan(CONTROLS, SDXL)
    head = next(line for line in lines if line.startswith("estimate:"))
    assert head.startswith("estimate: more than 5 s on cpu (device auto)")  # 20 read
    assert head.endswith("and 1 part without a figure:")
    unknown = [line for line in lines if line.startswith("  unknown: ")]
    assert unknown == [
        "  unknown: making the images of sdxl (family sdxl: no per-image figure on cpu): "
        "measure with `glyphbench run --models "
        "diffusers:stabilityai/stable-diffusion-xl-base-1.0 --limit 8 --read-later "
        "--out runs/timing`"
    ]
    assert lines[-1].startswith("warning:  device auto is cpu here (no CUDA GPU visible): sdxl")


def test_a_family_with_a_measured_figure_is_counted(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(planning.MAKE_SECONDS_FAMILY, ("sdxl", "cuda"), 2.0)
    lines = _plan(SDXL, auto="cuda")
    assert lines[-1].startswith("estimate: about 22 s on cpu (device auto): making 20 s + ")
    assert not any(line.startswith("warning") for line in lines)  # the GPU is there


def test_no_warning_when_the_cpu_is_asked_for_or_no_model_needs_a_gpu() -> None:
    assert not any(line.startswith("warning") for line in _plan(SDXL, device="cpu"))
    assert not any(line.startswith("warning") for line in _plan(CONTROLS))


def test_auto_device_reads_torch_and_the_devices_without_importing_torch(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import sys

    monkeypatch.delitem(sys.modules, "torch", raising=False)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    assert auto_device() == "cpu"  # every GPU hidden
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    if not any(Path("/dev").glob("nvidia[0-9]*")):
        assert auto_device() == "cpu"  # no NVIDIA device: torch would find no GPU either
    assert "torch" not in sys.modules


def test_ocr_help_lists_every_registered_reader() -> None:
    from typer.testing import CliRunner

    from glyphbench.cli.root import app
    from glyphbench.core.registry import PLUGINS

    # the shipped readers (other test modules register toy readers in the same process
    # after the help was built; those are not the CLI's to list)
    names = sorted({"easyocr", "rapidocr", "tesseract", "paddleocr", "vlm"})
    assert set(names) <= {plugin.name for plugin in PLUGINS.entries("readers")}
    for command in (["run"], ["vae-eval"], ["rescore"], ["read"]):
        shown = CliRunner().invoke(app, [*command, "--help"], terminal_width=400).output
        text = " ".join(shown.split())
        assert all(name in text for name in names), (command, names)
