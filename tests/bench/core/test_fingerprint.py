"""files_fingerprint: what changes a local model's fingerprint, and what does not."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from glyphbench.core import fingerprint
from glyphbench.core.fingerprint import WINDOW, files_fingerprint


def _model(folder: Path) -> Path:
    (folder / "unet").mkdir(parents=True)
    (folder / "model_index.json").write_text('{"_class_name": "StableDiffusionPipeline"}')
    big = bytes(range(256)) * (4 * WINDOW // 256)  # 4 MiB
    (folder / "unet" / "diffusion_pytorch_model.safetensors").write_bytes(big)
    return folder


def _flip(file: Path, offset: int) -> None:
    data = bytearray(file.read_bytes())
    data[offset] ^= 1
    file.write_bytes(bytes(data))


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


def test_any_byte_of_a_file_up_to_64_mib_changes_it(tmp_path: Path) -> None:
    folder = _model(tmp_path / "m")
    weights = folder / "unet" / "diffusion_pytorch_model.safetensors"
    seen = {files_fingerprint(folder)}
    for offset in (0, WINDOW + 10, 2 * WINDOW, 4 * WINDOW - 1):  # anywhere: read whole
        _flip(weights, offset)
        seen.add(files_fingerprint(folder))
    weights.write_bytes(weights.read_bytes() + b"\0")  # the size
    seen.add(files_fingerprint(folder))
    (folder / "model_index.json").write_text('{"_class_name": "FluxPipeline"}')
    seen.add(files_fingerprint(folder))
    (folder / "pipeline.py").write_text("# custom code\n")
    seen.add(files_fingerprint(folder))
    assert len(seen) == 8


def test_a_large_file_is_read_in_windows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Above WHOLE bytes a file is read in WINDOWS windows (here 3 of a 4 MiB file: at 0,
    1.5 and 3 MiB). A change in a window is seen; one confined to a gap between windows is
    the documented limit (a retrained or fine-tuned model changes every window)."""
    monkeypatch.setattr(fingerprint, "WHOLE", 2 * WINDOW)
    monkeypatch.setattr(fingerprint, "WINDOWS", 3)
    folder = _model(tmp_path / "m")
    weights = folder / "unet" / "diffusion_pytorch_model.safetensors"
    before = files_fingerprint(folder)
    _flip(weights, WINDOW + 10)  # after the first window, before the middle one
    assert files_fingerprint(folder) == before
    _flip(weights, 2 * WINDOW)  # inside the middle window
    assert files_fingerprint(folder) != before


def test_a_linked_subfolder_is_read_and_a_link_loop_ends(tmp_path: Path) -> None:
    """A model folder linking its unet/ from a shared store: the linked files count."""
    store = _model(tmp_path / "store")
    folder = tmp_path / "m"
    folder.mkdir()
    (folder / "model_index.json").write_text("{}")
    (folder / "unet").symlink_to(store / "unet")
    (folder / "loop").symlink_to(folder)  # a link back up the tree
    before = files_fingerprint(folder)
    _flip(store / "unet" / "diffusion_pytorch_model.safetensors", 100_000)
    assert files_fingerprint(folder) != before
