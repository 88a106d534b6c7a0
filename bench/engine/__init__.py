"""The run engine: one way to make outputs, read them, score them and keep the rows.

Both runs glyphbench makes stand on it: the benchmark (:mod:`glyphbench.run.shard`: the
producer is a text-to-image model) and the VAE evaluation (:mod:`glyphbench.vae_eval.runner`:
the producer is an encode/decode round trip; the originals are read first, as the
OCR ceiling). A run goes through four stages:

1. **jobs** (:mod:`~glyphbench.engine.jobs`): one job per output, grouped by model or
   codec in run order; a process takes its :class:`Shard` (round-robin within each
   group) and skips the jobs whose rows are already done (resume);
2. **produce** (:mod:`~glyphbench.engine.loop`, main thread): per group, open the
   producer (load the model), then produce batch after batch; load failures and
   exceptions become failed batches, CUDA out of memory halves the batch;
3. **finish** (worker thread, fed by a bounded queue): the caller's function saves
   the images, reads them with :func:`read_batch` (:mod:`~glyphbench.engine.reading`:
   per-image fallback, cache by pixels and reader) and scores them; the engine
   writes the rows as a part file;
4. **merge** (:meth:`RunFolder.merge`): the part files become one table, the newest
   row of each key winning, in the caller's order.

Run folder layout (:mod:`~glyphbench.engine.folder`)::

    run.json                              the manifest; a folder of another run is refused
    images/<group>/<name>.png             written atomically in the run's PNG format; SHA-256
    parts/<shard>/<group>/batch-N-<host>-<pid>-<sha>.parquet   one batch's rows (sha: its SHA-256)
    parts/<shard>/shard.json              facts about the process that ran the shard
    <table>.parquet                       the merged table (results, vae_results)
    .locks/<shard>.lock, manifest.lock    who writes which shard; who edits run.json

Crash safety: an image is written (atomically; flushed to disk with its batch, see
:meth:`RunFolder.batch_durability`) before the part file holding its row, and each
part file is written atomically and flushed after its batch, so a crash loses at
most the batches in flight and never leaves a half-written file; the
hidden temporary files a killed process leaves are deleted when the shard is next
taken. An unreadable part file is reported, set aside and its rows made again.

Concurrency: one process per (folder, shard) (:meth:`RunFolder.hold_shard` refuses a
second one with :class:`FolderBusy`); run.json is compared and created, and tables
merged, under the folder's manifest lock (:meth:`RunFolder.locked`).

Reading is its own step (:func:`read_batch`; in the benchmark ``Runner.read_images``),
so it can move to separate processes fed through the run folder
(:class:`~glyphbench.engine.read_pool.ReadPool`: worker processes reading image files, used
by ``glyphbench read RUN`` after ``run --read-later``); the cache is keyed
by reader identity, so two readers can read the same images.

Public API::

    RunFolder(root, say=)                 manifest(), create_manifest(data), write_manifest(data),
                                          check_same_run(expected, refuse), write_image(image, rel),
                                          write_part(rows, shard, group), read_parts(key),
                                          done_keys(key), merge(name, key, finish),
                                          merge_stream(name, key, order, conform=, pick=),
                                          batch_durability(), sync_images(),
                                          hold_shard(shard), locked(), busy_shards(), clear(files)
    FolderBusy                            the refusal when another process holds a lock
    slug(name, digest=, keep=, limit=)    the folder-name rule; image_path(group, stem)
    Shard, take_shard(groups, shard), remaining(groups, done, key)
    read_batch(reader, images, cache)     Reading or Exception per image; ReadingCache
    start_reader(spec, flag=)             create a reader; one that cannot start is an InputError
    Loop(folder, shard, finish, batch_size=).run(groups), Group, Batch, progress_bars
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from glyphbench.core.io import slug
    from glyphbench.engine.folder import RunFolder, image_path
    from glyphbench.engine.jobs import Shard, remaining, take_shard
    from glyphbench.engine.lock import FolderBusy
    from glyphbench.engine.loop import (
        QUEUE_DEPTH,
        Batch,
        Group,
        GroupStats,
        Loop,
        LoopStats,
        Producer,
        error_text,
        progress_bars,
    )
    from glyphbench.engine.png import encode_png
    from glyphbench.engine.reading import (
        ReadingCache,
        failure_cause,
        image_digest,
        read_batch,
        reader_identity,
        start_reader,
    )

#: Name -> the module it lives in. The package face imports nothing until a name is used,
#: so ``import glyphbench.engine.jobs`` (or the lock) does not pull in pandas and pyarrow
#: through the folder and the loop.
_HOMES = {
    "slug": "glyphbench.core.io",
    **dict.fromkeys(("RunFolder", "image_path"), "glyphbench.engine.folder"),
    "encode_png": "glyphbench.engine.png",
    **dict.fromkeys(("Shard", "remaining", "take_shard"), "glyphbench.engine.jobs"),
    "FolderBusy": "glyphbench.engine.lock",
    **dict.fromkeys(
        (
            "QUEUE_DEPTH",
            "Batch",
            "Group",
            "GroupStats",
            "Loop",
            "LoopStats",
            "Producer",
            "error_text",
            "progress_bars",
        ),
        "glyphbench.engine.loop",
    ),
    **dict.fromkeys(
        (
            "ReadingCache",
            "failure_cause",
            "image_digest",
            "read_batch",
            "reader_identity",
            "start_reader",
        ),
        "glyphbench.engine.reading",
    ),
}


def __getattr__(name: str) -> Any:
    """The public names, imported from their module on first use."""
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(_HOMES[name]), name)
    globals()[name] = value
    return value


__all__ = [
    "QUEUE_DEPTH",
    "Batch",
    "FolderBusy",
    "Group",
    "GroupStats",
    "Loop",
    "LoopStats",
    "Producer",
    "ReadingCache",
    "RunFolder",
    "Shard",
    "encode_png",
    "error_text",
    "failure_cause",
    "image_digest",
    "image_path",
    "progress_bars",
    "read_batch",
    "reader_identity",
    "remaining",
    "slug",
    "start_reader",
    "take_shard",
]
