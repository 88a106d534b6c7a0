"""Which reader reads a run's results table, and whether it can: the guard ``run``, ``read``
and ``rescore`` share.

* :func:`table_reader` / :func:`claim_reader`: run.json records the reader of the
  results table; another reader is refused;
* :func:`refuse_during_rescore`: a rescore holds the folder (:data:`RESCORE_LOCK`);
* :func:`probe_on_run`: a reader that cannot read one of the run's images is refused
  before anything is written.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glyphbench.core.errors import InputError
from glyphbench.engine import RunFolder
from glyphbench.engine.lock import FolderLock
from glyphbench.engine.reading import probe_reader, run_image, sample_image

if TYPE_CHECKING:
    from glyphbench.readers.base import Reader
    from glyphbench.run.reading_store import ReadingStore

#: The lock a rescore holds (so two rescores, or a rescore and a run, never mix).
RESCORE_LOCK = "rescore"
#: run.json's record of the reader the results table is read with: part of the
#: table's identity; ``run`` and ``read`` use it and refuse another, a rescore changes it.
READER_KEY = "reader"


def table_reader(meta: Mapping[str, Any]) -> str | None:
    """The reader spec the run's results are read with, when one has read them."""
    value = meta.get(READER_KEY)
    return value if isinstance(value, str) and value else None


def claim_reader(folder: RunFolder, reader_spec: str, what: str, *, write: bool = True) -> None:
    """Record ``reader_spec`` as the table's reader (first reader), or refuse a different one.

    ``write=False``: only refuse (nothing is recorded yet).
    """
    with folder.locked():
        meta = folder.manifest()
        current = table_reader(meta)
        if current is not None and current != reader_spec:
            raise InputError(
                folder.manifest_path,
                f"the results are read with {current!r}; {what} with {reader_spec!r} would mix two "
                f"readers in one table: re-read every image with `glyphbench rescore "
                f"{folder.root} --ocr {reader_spec}`",
                key=READER_KEY,
            )
        if current is None and meta and write:
            folder.write_manifest({**meta, READER_KEY: reader_spec})


def refuse_during_rescore(folder: RunFolder) -> None:
    """One line when a rescore holds the folder (a reader or a run would undo it)."""
    if folder.shard_busy(RESCORE_LOCK):
        raise FolderLock(folder.root, RESCORE_LOCK).busy("rescoring")


def probe_on_run(
    reader: Reader,
    reader_spec: str,
    root: Path,
    *,
    sample: bool = False,
    store: ReadingStore | None = None,
) -> None:
    """Refuse a reader that cannot read one of the run's images (nothing written yet).

    ``sample``: a folder without images (a new run) probes with :func:`sample_image`.
    ``store``: the probe's reading is kept there (the image is not read twice), and an
    image it already holds a reading of needs no probe.
    """
    found = run_image(root) if root.is_dir() else None
    if found is not None:
        key = (hashlib.sha256((root / found[0]).read_bytes()).hexdigest(), "")
        if store is not None:
            key = (key[0], store.identity(reader))
            if store.get(key) is not None:
                return
        reading = probe_reader(reader, found[1], reader_spec, found[0])
        if store is not None:
            store.put(key, reading)
    elif sample:
        probe_reader(reader, sample_image(), reader_spec, "a sample image of text")
