"""Images are flushed once per batch, before the part file that lists them."""

from __future__ import annotations

import os
from pathlib import Path

import pandas as pd
import pytest
from PIL import Image

import glyphbench.engine.folder as folder_module
from glyphbench.engine import RunFolder


def _count_fsyncs(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The file descriptors os.fsync is called with from now on (it still flushes)."""
    calls: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        calls.append(fd)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return calls


def test_images_are_flushed_together_before_their_part_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[tuple[str, object]] = []
    real_sync = folder_module.sync_files

    def sync(root: Path, paths: list[Path]) -> None:
        events.append(("sync", sorted(p.name for p in paths)))
        real_sync(root, paths)

    monkeypatch.setattr(folder_module, "sync_files", sync)
    fsyncs = _count_fsyncs(monkeypatch)
    folder = RunFolder(tmp_path)
    (tmp_path / "images/m").mkdir(parents=True)  # (a new folder is flushed when made)
    image = Image.new("RGB", (8, 8), "white")
    with folder.batch_durability():
        for name in ("a", "b", "c"):
            folder.write_image(image, f"images/m/{name}.png")
        assert not fsyncs  # renamed into place, not flushed one by one
        assert (tmp_path / "images/m/a.png").is_file()
        events.append(("part", folder.write_part(pd.DataFrame({"x": [1]}), "s", "m").name))
        folder.write_image(image, "images/m/d.png")
    assert events[0] == ("sync", ["a.png", "b.png", "c.png"]) and events[1][0] == "part"
    assert len(events) == 2  # d.png is listed by no part file: not flushed
    fsyncs.clear()
    folder.write_image(image, "images/m/e.png")  # outside the block: flushed at once
    assert len(fsyncs) == 2  # the file, then its folder


def test_another_threads_images_are_flushed_at_once(tmp_path: Path) -> None:
    import threading

    folder = RunFolder(tmp_path)
    image = Image.new("RGB", (8, 8), "white")
    with folder.batch_durability():
        worker = threading.Thread(target=folder.write_image, args=(image, "images/o/x.png"))
        worker.start()
        worker.join()
        assert folder._unsynced == []  # written durably by the other thread


def test_sync_files_without_syncfs_flushes_each_file_and_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(folder_module, "_syncfs", lambda: None)
    synced = _count_fsyncs(monkeypatch)
    paths = []
    for name in ("a/1", "a/2", "b/3"):
        path = tmp_path / f"{name}.png"
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(b"x")
        paths.append(path)
    folder_module.sync_files(tmp_path, paths)
    assert len(synced) == 3 + 2  # three files, two folders
