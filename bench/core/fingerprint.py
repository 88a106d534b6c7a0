"""Fingerprints of local weight files: has a folder's model changed since a run started?

A resumed run reuses the rows it has. If the weights behind a local path were replaced
between two attempts (a new checkpoint saved over the old one, another VAE copied into
the folder), the old rows and the new ones would describe two models under one name.
Runs record :func:`files_fingerprint` of each local weight path and refuse to resume
when it differs.

The fingerprint reads content, not modification times, so copying or checking out the
same files keeps it. It reads each file up to 64 MiB whole (configs, tokenizers, small
VAEs and TAESD pairs), and of a larger one its size and 16 evenly spaced 1 MiB windows,
so a 30 GB pipeline folder costs about half a GB of reading. Two checkpoints of one
architecture share their safetensors header but not their tensors, so a retrained or
fine-tuned model differs in every window; a change confined to bytes between windows of
a large file (one layer edited by hand) is not seen.

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

from glyphbench.core.errors import InputError

#: Bytes read per window, and windows read of a large file (evenly spaced, first and
#: last included); a file up to WHOLE bytes is read whole.
WINDOW = 1 << 20
WINDOWS = 16
WHOLE = 64 << 20


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


def recorded_fingerprints(
    manifest: dict[str, object], key: str, where: Path | None
) -> dict[str, str]:
    """The ``{name: fingerprint}`` mapping under ``key`` of a run.json (``where``), or {}
    when it has none; an :class:`~glyphbench.core.errors.InputError` when it is not one
    (a hand-edited file), as a resume cannot tell what the rows were made with.

    >>> recorded_fingerprints({"weights": {"m": "sha256:ab"}}, "weights", None)
    {'m': 'sha256:ab'}
    >>> recorded_fingerprints({}, "weights", None)
    {}
    """
    value = manifest.get(key) or {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise InputError(
            where,
            f"{key!r} is not a mapping of names to fingerprints: run.json is damaged; put "
            "it back, or use another --out",
            key=key,
        )
    return dict(value)


def _visible_files(root: Path) -> Iterable[tuple[str, Path]]:
    # Links are followed (a model folder may link its unet/ from a shared store), each
    # real folder once (a link back up the tree does not loop).
    seen: set[str] = set()
    for folder, subfolders, files in os.walk(root, followlinks=True):
        real = os.path.realpath(folder)
        if real in seen:
            subfolders[:] = []
            continue
        seen.add(real)
        subfolders[:] = [
            name for name in subfolders if not name.startswith(".") and name not in SKIPPED_FOLDERS
        ]
        for name in files:
            if not name.startswith(".") and not name.endswith(SKIPPED_SUFFIXES):
                file = Path(folder) / name
                yield file.relative_to(root).as_posix(), file


def _file_digest(file: Path) -> bytes:
    """Size plus the content of one file: whole up to :data:`WHOLE` bytes, else
    :data:`WINDOWS` evenly spaced windows."""
    size = file.stat().st_size
    digest = hashlib.sha256(str(size).encode("ascii") + b"\0")
    with file.open("rb") as handle:
        if size <= WHOLE:
            for block in iter(lambda: handle.read(WINDOW), b""):
                digest.update(block)
        else:
            step = (size - WINDOW) / (WINDOWS - 1)
            for index in range(WINDOWS):
                handle.seek(round(index * step))
                digest.update(handle.read(WINDOW))
    return digest.digest()
