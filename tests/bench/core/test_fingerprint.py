"""files_fingerprint: what changes a local model's fingerprint, and what does not."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from glyphbench.core.fingerprint import WINDOW, files_fingerprint


def _model(folder: Path) -> Path:
    (folder / "unet").mkdir(parents=True)
    (folder / "model_index.json").write_text('{"_class_name": "StableDiffusionPipeline"}')
    big = bytes(range(256)) * (4 * WINDOW // 256)  # 4 MiB: read in three windows
    (folder / "unet" / "diffusion_pytorch_model.safetensors").write_bytes(big)
    return folder


def test_a_copy_with_new_times_and_tool_files_keeps_the_fingerprint(tmp_path: Path) -> None:
    first = files_fingerprint(_model(tmp_path / "a"))
    copy = Path(shutil.copytree(tmp_path / "a", tmp_path / "b"))  # new modification times
    os.utime(copy / "model_index.json", (1, 1))
    (copy / "__pycache__").mkdir()
    (copy / "__pycache__" / "pipeline.cpython-311.pyc").write_bytes(b"compiled")
    (copy / ".cache").mkdir()
    (copy / ".cache" / "download.lock").write_bytes(b"")
    (copy / "README.md").write_text("a model card")
    assert files_fingerprint(copy) == first


def test_weights_config_or_a_new_file_change_it(tmp_path: Path) -> None:
    folder = _model(tmp_path / "m")
    weights = folder / "unet" / "diffusion_pytorch_model.safetensors"
    seen = {files_fingerprint(folder)}
    data = bytearray(weights.read_bytes())
    data[len(data) // 2] ^= 1  # the middle window: a retrained tensor
    weights.write_bytes(bytes(data))
    seen.add(files_fingerprint(folder))
    weights.write_bytes(bytes(data) + b"\0")  # the size
    seen.add(files_fingerprint(folder))
    (folder / "model_index.json").write_text('{"_class_name": "FluxPipeline"}')
    seen.add(files_fingerprint(folder))
    (folder / "pipeline.py").write_text("# custom code\n")
    seen.add(files_fingerprint(folder))
    assert len(seen) == 5


def test_a_change_between_the_windows_of_a_large_file_is_not_seen(tmp_path: Path) -> None:
    """The documented limit of reading three windows: a byte changed between them (and
    nowhere else) keeps the fingerprint. A retrained checkpoint changes every tensor."""
    folder = _model(tmp_path / "m")
    weights = folder / "unet" / "diffusion_pytorch_model.safetensors"
    before = files_fingerprint(folder)
    data = bytearray(weights.read_bytes())
    data[WINDOW + 10] ^= 1  # after the first window, before the middle one
    weights.write_bytes(bytes(data))
    assert files_fingerprint(folder) == before
