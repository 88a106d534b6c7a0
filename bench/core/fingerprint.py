"""Fingerprints of local weight files: has a folder's model changed since a run started?

A resumed run reuses the rows it has. If the weights behind a local path were replaced
between two attempts (a new checkpoint saved over the old one, another VAE copied into
the folder), the old rows and the new ones would describe two models under one name.
Runs record :func:`files_fingerprint` of each local weight path and refuse to resume
when it differs.

The fingerprint reads content, not modification times, so copying or checking out the
same files keeps it; it reads at most three 1 MiB windows of each file (start, middle,
end) plus its size, so a 30 GB pipeline folder costs well under a second. Two checkpoints
of one architecture share their safetensors header but not their tensors, so the windows
past the header differ.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "model.safetensors").write_bytes(b"weights")
>>> first = files_fingerprint(folder)
>>> first == files_fingerprint(folder)
True
>>> _ = (folder / "README.md").write_text("notes")  # notes are not the model
>>> first == files_fingerprint(folder)
True
>>> _ = (folder / "model.safetensors").write_bytes(b"WEIGHTS")
>>> first == files_fingerprint(folder)
False
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable
from pathlib import Path

#: Bytes read per window; files up to three windows long are read whole.
WINDOW = 1 << 20


def files_fingerprint(path: Path | str, names: Iterable[str] | None = None) -> str:
    """``sha256:HEX`` over the files at ``path`` (a file, or every file under a folder).

    ``names``: only these files of the folder (relative paths), e.g. one encoder/decoder
    pair among several. Left out, as tools write them without changing the model: hidden
    files and folders (``.cache``, ``.git``), ``__pycache__`` (a pipeline's own code,
    compiled when it loads) and notes (``*.md``, ``*.log``, ``*.lock``).
    """
    root = Path(path).expanduser()
    if root.is_file():
        files = [(root.name, root)]
    elif names is not None:
        files = sorted((name, root / name) for name in names)
    else:
        files = sorted(_visible_files(root))
    digest = hashlib.sha256()
    for relpath, file in files:
        digest.update(relpath.encode("utf-8") + b"\0")
        digest.update(_file_digest(file))
    return f"sha256:{digest.hexdigest()}"


#: Files and folders left out of a folder's fingerprint (see :func:`files_fingerprint`).
SKIPPED_FOLDERS = ("__pycache__",)
SKIPPED_SUFFIXES = (".md", ".log", ".lock", ".pyc")


def _visible_files(root: Path) -> Iterable[tuple[str, Path]]:
    for folder, subfolders, files in os.walk(root):
        subfolders[:] = [
            name for name in subfolders if not name.startswith(".") and name not in SKIPPED_FOLDERS
        ]
        for name in files:
            if not name.startswith(".") and not name.endswith(SKIPPED_SUFFIXES):
                file = Path(folder) / name
                yield file.relative_to(root).as_posix(), file


def _file_digest(file: Path) -> bytes:
    """Size plus the start, middle and end windows of one file (the whole of a small one)."""
    size = file.stat().st_size
    digest = hashlib.sha256(str(size).encode("ascii") + b"\0")
    with file.open("rb") as handle:
        if size <= 3 * WINDOW:
            digest.update(handle.read())
        else:
            for offset in (0, (size - WINDOW) // 2, size - WINDOW):
                handle.seek(offset)
                digest.update(handle.read(WINDOW))
    return digest.digest()
