"""The run folder: manifest, images, part files and the merged table (see :mod:`glyphbench.engine`).

Everything a run writes goes through one :class:`RunFolder`, so the rules live in one
place: writes are atomic and durable (a temporary file flushed, then renamed into
place), images are PNG with their SHA-256 returned (encoded by :mod:`glyphbench.engine.png`),
part files are numbered per (shard, group) and carry the writing process in their name
(:mod:`glyphbench.engine.parts`), and merging keeps the newest row of each key
(:mod:`glyphbench.engine.merge` without the table in memory).

Concurrency: a process writing a shard holds that shard's lock for its whole work
(:meth:`RunFolder.hold_shard`; a second process on the same shard is refused), and
run.json is compared, created and merged into only under the folder's manifest lock
(:meth:`RunFolder.locked`). Taking a shard lock also deletes the temporary files that
dead processes left behind.

A part file that cannot be read (truncated by a full disk, damaged by a copy) is
reported in one line and renamed ``*.parquet.unreadable`` by the process holding the
lock, so its rows count as not done and are produced again.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
from collections.abc import Callable, Collection, Hashable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, overload

from glyphbench.core.durable import Commit, sync_folder
from glyphbench.core.errors import InputError
from glyphbench.core.io import (
    RUN_JSON,
    RUN_MARKERS,
    checksum_path,
    read_json,
    read_run_json,
    remove_stale_temp_files,
    write_bytes_atomic,
    write_checksum,
    write_json,
    write_table,
)
from glyphbench.core.paths import Contained
from glyphbench.core.schema import failed_mask
from glyphbench.engine import merge as merging
from glyphbench.engine.lock import FolderLock
from glyphbench.engine.parts import (
    PARTS,
    Finish,
    last_part_number,
    list_parts,
    open_part,
    part_bytes,
    set_aside,
    unreadable_errors,
)
from glyphbench.engine.png import PNG_FORMAT, PNG_FORMATS, encode_png

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    from PIL import Image

MANIFEST = RUN_JSON
#: The lock taken to compare, create or update run.json and to merge.
MANIFEST_LOCK = "manifest"


def image_path(group: str, stem: str) -> str:
    """Where an image of ``group`` (a folder name) lives, relative to the run folder.

    >>> image_path("control_blank", "p-001_s0_i0")
    'images/control_blank/p-001_s0_i0.png'
    """
    return f"images/{group}/{stem}.png"


def sync_files(root: Path, paths: Sequence[Path]) -> None:
    """Flush ``paths`` (files under ``root``) and their folders to disk.

    One ``syncfs`` of ``root``'s file system where the C library has it (Linux): one
    call for a whole batch. Elsewhere one ``fsync`` per file and per folder.
    """
    syncfs = _syncfs()
    if syncfs is not None:
        fd = os.open(root, os.O_RDONLY)
        try:
            if syncfs(fd) == 0:
                return
        finally:
            os.close(fd)
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    for folder in dict.fromkeys(path.parent for path in paths):
        sync_folder(folder)


@functools.cache
def _syncfs() -> Callable[[int], int] | None:
    """libc's ``syncfs(fd)``, or None where there is none (looked up once a process)."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes

    try:
        function: Callable[[int], int] = ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None
    return function


def _say_on_stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


class ImageSender(Protocol):
    """What :meth:`RunFolder.write_images` needs of the image writer process."""

    @property
    def processes(self) -> int:
        """How many processes share a batch (the thread takes one share more of the last)."""

    def shippable(self, image: Image.Image) -> bool:
        """Whether the writer writes ``image`` to the bytes :func:`encode_png` gives."""

    def send(
        self, images: Sequence[Image.Image], relpaths: Sequence[str], *, durable: bool
    ) -> Callable[[], list[str]]:
        """Hand the images over; the returned call waits for their SHA-256."""


def _holds_an_input(entry: Path, inputs: Sequence[Path]) -> bool:
    """Whether ``entry`` is one of ``inputs``, a folder holding one, or inside one (all
    resolved: a manifest's folder that is ``--out`` itself holds every entry)."""
    return any(entry == path or entry in path.parents or path in entry.parents for path in inputs)


def _holds_nothing_visible(entry: Path) -> bool:
    """Whether ``entry`` is a folder with no file at any depth but hidden ones."""
    if entry.is_symlink() or not entry.is_dir():
        return False
    for _, folders, files in os.walk(entry):
        if any(not name.startswith(".") for name in files):
            return False
        folders[:] = [name for name in folders if not name.startswith(".")]
    return True


class RunFolder:
    """One run's folder on disk; see the layout in :mod:`glyphbench.engine`.

    ``say`` receives one-line notices (an unreadable part file set aside, a wait for
    another process); by default they go to stderr.
    """

    def __init__(self, root: str | Path, *, say: Callable[[str], None] | None = None) -> None:
        self.root = Path(root)
        self.say = say or _say_on_stderr
        self._last_part: dict[Path, int] = {}
        self._holding: set[str] = set()  # shards whose lock this object holds
        self._unsynced: list[Path] | None = None  # images to flush (batch_durability)
        self._sync_thread = 0
        self._inside: Contained | None = None  # checks the folders it writes into
        self._checked: set[str] = set()  # ... each once

    def folder_inside(self, relpath: str) -> None:
        """Refuse to write ``relpath`` when its folder leads outside the run folder.

        A folder someone sent may hold links (``images/<model>`` to elsewhere): a run
        resumed there would write through them. Each folder is resolved once.
        """
        folder = os.path.dirname(relpath)
        if folder and folder not in self._checked:
            if self._inside is None:
                self._inside = Contained(self.root, source=self.root, column="folder")
            self._inside(folder)
            self._checked.add(folder)

    def refuse_foreign(
        self, what: str, inputs: Sequence[Path] = (), own: Callable[[Path], bool] | None = None
    ) -> None:
        """Refuse a folder that exists, holds something, and holds no run (no run.json and
        no merged table): an ``--out`` naming a home or project folder by mistake would get
        the run's images, parts and tables among its files. What the run reads is allowed
        there (``inputs``: a config or prompt file kept beside the run, a folder holding
        one), as is what ``own`` says the run itself writes (its copy of the config).
        Hidden entries (a lock, a temporary file) never count, nor folders holding only
        such (what a run killed before its run.json was written leaves).
        """
        root = self.root
        if not root.is_dir():
            return
        self.manifest()  # installs a run.json a killed process was committing
        if self._holds_a_run():
            return
        held = [Path(os.path.realpath(path)) for path in inputs]
        foreign = sorted(
            entry.name
            for entry in root.iterdir()
            if not entry.name.startswith(".")
            and not (own is not None and own(entry))
            and not _holds_an_input(Path(os.path.realpath(entry)), held)
            and not _holds_nothing_visible(entry)
        )
        if foreign and not self._holds_a_run():
            # (a shard starting beside this one may have made it a run meanwhile)
            raise InputError(
                root / foreign[0],
                f"--out holds {len(foreign)} {'entry' if len(foreign) == 1 else 'entries'} "
                f"no {what} wrote, and no run.json: the {what} would write its files among "
                "them; choose an empty or new --out",
            )

    def _holds_a_run(self) -> bool:
        return any((self.root / marker).exists() for marker in RUN_MARKERS)

    # -------------------------------------------------------------------- locks
    @contextmanager
    def hold_shard(self, shard: str) -> Iterator[None]:
        """Be the one process writing ``shard`` for the block (else :class:`FolderBusy`).

        Temporary files left by dead processes are deleted once the lock is held.
        """
        with FolderLock(self.root, shard).try_hold():
            self._holding.add(shard)
            try:
                removed = remove_stale_temp_files(self.root)
                if removed:
                    self.say(f"{self.root}: removed {removed} temporary file(s) of an ended run")
                yield
            finally:
                self._holding.discard(shard)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Hold the manifest lock for the block (waiting for another holder)."""
        with FolderLock(self.root, MANIFEST_LOCK).wait_hold(self.say):
            self._holding.add(MANIFEST_LOCK)
            try:
                yield
            finally:
                self._holding.discard(MANIFEST_LOCK)

    def shard_busy(self, shard: str) -> bool:
        """True when another process holds ``shard``'s lock right now."""
        return FolderLock(self.root, shard).held_by_other()

    def busy_shards(self) -> list[str]:
        """Shards whose lock another process holds right now."""
        locks = sorted((self.root / ".locks").glob("*.lock"))
        names = [path.stem for path in locks if path.stem != MANIFEST_LOCK]
        return [name for name in names if name not in self._holding and self.shard_busy(name)]

    @property
    def manifest_path(self) -> Path:
        return self.root / MANIFEST

    @property
    def parts(self) -> Path:
        return self.root / PARTS

    # ----------------------------------------------------------------- manifest
    def read_json(self, path: Path) -> dict[str, Any]:
        """A JSON object from ``path`` ({} when the file does not exist; one-line errors)."""
        if not path.is_file():
            return {}
        data: dict[str, Any] = read_json(path)
        return data

    def write_json(self, path: Path, data: Mapping[str, Any]) -> None:
        write_json(path, dict(data))

    def manifest(self, *, required: bool = False) -> dict[str, Any]:
        """``run.json`` ({} for a new folder; an :class:`InputError` when ``required``):
        :func:`glyphbench.core.io.read_run_json`."""
        return read_run_json(self.root, required=required)

    @functools.cached_property
    def png_format(self) -> int:
        """The PNG format of this run's images (:data:`PNG_FORMATS`): run.json's ``png``,
        1 for a run.json without it (written before format 2), :data:`PNG_FORMAT` for a
        folder without run.json (a new run). Read once, so a resumed run keeps its format.
        """
        manifest = self.manifest()
        if not manifest:
            return PNG_FORMAT
        png = manifest.get("png", 1)
        if png not in PNG_FORMATS:
            raise InputError(
                self.manifest_path,
                f"PNG format {png!r} is not one this glyphbench writes ({sorted(PNG_FORMATS)});"
                " resume the run with the glyphbench that started it",
                key="png",
            )
        return int(png)

    def write_manifest(self, data: Mapping[str, Any]) -> None:
        self.write_json(self.manifest_path, data)

    def create_manifest(self, data: Mapping[str, Any]) -> bool:
        """Write ``run.json`` when the folder has none; True when it was written.

        Checked and written under the manifest lock, so of two processes starting
        at once exactly one creates it and the other compares against it.
        """
        with self.locked():
            if self.manifest_path.is_file():
                return False
            self.write_manifest(data)
            return True

    def check_same_run(
        self,
        expected: Mapping[str, object],
        refuse: Callable[[str, object], Exception],
        *,
        missing_ok: bool = True,
    ) -> None:
        """Refuse a folder that holds another run: raise ``refuse(key, value in run.json)``.

        ``expected`` maps dotted keys of run.json (``"prompts.content_hash"``) to this
        run's values. A folder without run.json is new; a key the manifest lacks is
        accepted when ``missing_ok``.
        """
        existing = self.manifest()
        if not existing:
            return
        self.png_format  # noqa: B018  (an unknown PNG format is refused before any write)
        for dotted, value in expected.items():
            previous: Any = existing
            for part in dotted.split("."):
                previous = previous.get(part) if isinstance(previous, dict) else None
            if previous == value or (previous is None and missing_ok):
                continue
            raise refuse(dotted, previous)

    # ------------------------------------------------------------------- images
    def write_image(self, image: Image.Image, relpath: str) -> str:
        """Save ``image`` as PNG at ``relpath`` atomically; return the file's SHA-256.

        Inside :meth:`batch_durability` the file is renamed into place unflushed and
        flushed with the batch, before the next part file.
        """
        data, sha256 = encode_png(image, self.png_format)
        self.folder_inside(relpath)
        path = self.root / relpath
        if self._unsynced is None or threading.get_ident() != self._sync_thread:
            write_bytes_atomic(path, data)
            return sha256
        write_bytes_atomic(path, data, durable=False)
        self._unsynced.append(path)
        return sha256

    def write_images(
        self,
        images: Sequence[Image.Image],
        relpaths: Sequence[str],
        writer: ImageSender | None,
        *,
        share: bool = False,
    ) -> list[str]:
        """:meth:`write_image` for each image; with ``writer``, in its process.

        ``writer``: a :class:`glyphbench.engine.image_writer.ImageWriter`. The same files,
        bytes and durability: images the writer cannot rebuild exactly
        (``writer.shippable``) are written here; inside
        :meth:`batch_durability` the writer's files are flushed with the next part file.
        ``share``: this thread writes a share of the images while the writer's
        processes write the rest (when nothing else needs this process: the last batch
        of a run).
        """
        return self.send_images(images, relpaths, writer, share=share)()

    def send_images(
        self,
        images: Sequence[Image.Image],
        relpaths: Sequence[str],
        writer: ImageSender | None,
        *,
        share: bool = False,
    ) -> Callable[[], list[str]]:
        """:meth:`write_images` in two halves: the writer's images handed over now; the
        returned call writes the rest here and gives every image's SHA-256 (meanwhile
        the caller may finish an earlier batch while the writer encodes).
        Calls of the returned functions must come in the order the batches were sent.
        """
        if writer is None:
            pairs = list(zip(images, relpaths, strict=True))
            return lambda: [self.write_image(image, relpath) for image, relpath in pairs]
        shipped = [i for i, image in enumerate(images) if writer.shippable(image)]
        for i in shipped:  # the writer process writes them: their folders checked here
            self.folder_inside(relpaths[i])
        if share:  # this thread takes one share, each writer process one
            share_of = writer.processes
            shipped = shipped[: -(-len(shipped) * share_of // (share_of + 1))]
        batched = self._unsynced is not None and threading.get_ident() == self._sync_thread
        written = writer.send(
            [images[i] for i in shipped], [relpaths[i] for i in shipped], durable=not batched
        )

        def digests() -> list[str]:
            found: dict[int, str] = {}
            try:  # meanwhile, the rest here
                for i in sorted(set(range(len(images))) - set(shipped)):
                    found[i] = self.write_image(images[i], relpaths[i])
            finally:  # always take the writer's answer (the next batch's must come next)
                for i, digest in zip(shipped, written(), strict=True):
                    found[i] = digest
                    if batched:
                        assert self._unsynced is not None
                        self._unsynced.append(self.root / relpaths[i])
            return [found[i] for i in range(len(images))]

        return digests

    @contextmanager
    def batch_durability(self) -> Iterator[None]:
        """Flush images once per part file instead of once per image.

        Inside the block, :meth:`write_image` renames each image into place (atomic:
        a killed process leaves the old file or the new one) without flushing it, and
        :meth:`write_part` flushes every such image (one ``syncfs`` on Linux, else one
        ``fsync`` per file and folder) before the part file that lists them is written.
        A row is done only when its part file exists, so after a crash (even of the
        machine) an image whose row is done is on disk; an unflushed one is made again.
        Two fsyncs per image (file, folder) become one ``syncfs`` per batch.
        """
        if self._unsynced is not None:  # already inside one
            yield
            return
        self._unsynced, self._sync_thread = [], threading.get_ident()  # this thread's images
        try:
            yield
        finally:
            self._unsynced = None  # unflushed images left are listed by no part file

    def sync_images(self) -> None:
        """Flush the images written unflushed since the last part file (see above)."""
        if not self._unsynced:
            return
        sync_files(self.root, self._unsynced)
        self._unsynced.clear()

    def write_table(self, frame: pd.DataFrame, relpath: str, commit: Commit | None = None) -> Path:
        """Write a table of the run (page checksums, and its SHA-256 in ``NAME.sha256``).

        The table and its checksum replace the old pair together (a :class:`Commit`):
        never a table without its sum, nor one beside an old sum. ``commit``: staged in
        that commit (which its caller applies, e.g. with run.json).
        """
        if commit is None:
            with Commit(self.root) as own:
                return self.write_table(frame, relpath, own)
        self.folder_inside(relpath)
        staged = commit.path(relpath)
        write_table(frame, staged)
        commit.path(checksum_path(relpath).as_posix())
        write_checksum(staged)  # beside the staged table: its staged sum
        return self.root / relpath

    # ------------------------------------------------------------------ shards
    def shard_json(self, shard: str) -> Path:
        """Facts about the process that ran ``shard`` (host, device, attempts, timings)."""
        return self.parts / shard / "shard.json"

    def shards(self) -> dict[str, dict[str, Any]]:
        """Shard name -> its shard.json, for every shard that wrote one."""
        paths = sorted(self.parts.glob("*/shard.json"))
        return {path.parent.name: self.shard_facts(path) for path in paths}

    def shard_facts(self, path: Path) -> dict[str, Any]:
        """A shard.json ({} when absent). One that cannot be read (a crash of the disk, an
        edit) is set aside as ``shard.json.damaged`` and said so: it holds facts about the
        shard's processes, not rows, and blocked every resume and merge of the run."""
        try:
            return self.read_json(path)
        except InputError as exc:
            aside = path.with_name(path.name + ".damaged")
            os.replace(path, aside)
            self.say(f"{exc}; set aside as {aside.name} (it holds no rows; its history restarts)")
            return {}

    # --------------------------------------------------------------- part files
    def part_dir(self, shard: str, group: str) -> Path:
        return self.parts / shard / group

    def write_part(
        self,
        rows: pd.DataFrame | pa.Table,
        shard: str,
        group: str,
        commit: Commit | None = None,
    ) -> Path:
        """Write one batch's rows as the next ``batch-NNNNN.parquet`` of (shard, group).

        ``rows`` may be an Arrow table (written as ``DataFrame.to_parquet`` writes the
        frame it came from). The folder is listed once; later numbers come from a
        counter, so a long run does not list thousands of part files for every batch.
        ``commit``: staged there (a rescore's rows appear with the table they make);
        the staged file is returned.
        """
        folder = self.part_dir(shard, group)
        if folder not in self._last_part:
            self._last_part[folder] = last_part_number(folder)
        self._last_part[folder] += 1
        self.sync_images()  # the images a part file lists are on disk before it
        data, tail = part_bytes(rows)
        path = folder / f"batch-{self._last_part[folder]:05d}-{tail}"
        self.folder_inside(path.relative_to(self.root).as_posix())
        if commit is not None:
            path = commit.path(path.relative_to(self.root).as_posix())
        write_bytes_atomic(path, data)
        return path

    def groups(self) -> set[str]:
        """Names of every group that has part files (over all shards)."""
        return {path.parent.name for path in self.part_files()}

    def part_files(self, groups: Collection[str] | None = None) -> list[Path]:
        """Part files (of ``groups`` only, when given), oldest first: modification time, path."""
        return list_parts(self.parts, groups)

    def read_parts(
        self,
        key: Sequence[str],
        *,
        groups: Collection[str] | None = None,
        conform: Finish | None = None,
        files: Sequence[Path] | None = None,
    ) -> pd.DataFrame:
        """Every row of the part files, the newest row of each ``key`` winning.

        ``conform`` is applied to each file's rows before they are put together (so
        every file has the same columns and types). No rows: an empty frame, conformed.
        ``files``: these part files only (e.g. the ones new since a last look).
        """
        import pandas as pd

        files = self.part_files(groups) if files is None else files
        rows = self._read_together(files, conform)
        if rows is None:  # files whose columns do not combine: one by one, as before
            read = (self._read_part(path) for path in files)
            frames = [frame for frame in read if frame is not None]
            frames = [conform(f) if conform else f for f in frames if len(f)]
            if not frames:
                return conform(pd.DataFrame()) if conform else pd.DataFrame()
            rows = pd.concat(frames, ignore_index=True)
        return rows.drop_duplicates(subset=list(key), keep="last").reset_index(drop=True)

    def _read_together(self, files: Sequence[Path], conform: Finish | None) -> pd.DataFrame | None:
        """The files' rows as one Arrow table made a frame once (thousands of part files
        cost seconds, not minutes); None when their column types clash."""
        import pandas as pd
        import pyarrow as pa

        tables = [t for t in (self._read_part(path, None) for path in files) if t is not None]
        tables = [table for table in tables if table.num_rows]
        if not tables:
            return conform(pd.DataFrame()) if conform else pd.DataFrame()
        try:
            rows = pa.concat_tables(tables, promote_options="permissive").to_pandas()
        except (pa.ArrowException, ValueError, TypeError, KeyError):
            return None
        return conform(rows) if conform else rows

    @overload
    def _read_part(self, path: Path) -> pd.DataFrame | None: ...
    @overload
    def _read_part(self, path: Path, columns: Sequence[str] | None) -> pa.Table | None: ...
    def _read_part(self, path: Path, columns: Any = False) -> pd.DataFrame | pa.Table | None:
        """One part file's rows; None (reported, and set aside under a lock) when unreadable.

        With ``columns`` (None: all): those of them the file has, as an Arrow table.
        """
        try:
            part = open_part(path)
            if columns is False:
                return part.read(use_threads=False).to_pandas()
            if columns is None:
                return part.read(use_threads=False)
            present = set(part.schema_arrow.names)
            return part.read(columns=[c for c in columns if c in present], use_threads=False)
        except unreadable_errors() as exc:
            self.report_unreadable(path, exc)
            return None

    def report_unreadable(self, path: Path, exc: Exception) -> None:
        """Report an unreadable part file; set it aside when this process holds a lock."""
        set_aside(path, exc, self.say, holding=bool(self._holding))

    def done_keys(
        self,
        key: Sequence[str],
        *,
        groups: Collection[str] | None = None,
        with_failed: bool = False,
        on_disk: str | None = None,
    ) -> set[tuple[Hashable, ...]]:
        """Keys of the rows already written; failed rows count only ``with_failed``.

        With ``on_disk`` (a column of paths inside the folder, e.g. ``image_path``), a row
        whose file is gone is not done: a resume makes it again rather than keep a row
        that names a missing file.
        """
        import pyarrow as pa

        # Only the key and error columns, gathered as Arrow tables and converted once:
        # a resume scan of a million rows in thousands of part files.
        columns = [*key, "error", *([on_disk] if on_disk else [])]
        read = (self._read_part(path, columns) for path in self.part_files(groups))
        tables = [table for table in read if table is not None and table.num_rows]
        if not tables:
            return set()
        merged = pa.concat_tables(tables, promote_options="permissive").to_pandas()
        rows = merged.drop_duplicates(subset=list(key), keep="last")
        if not with_failed:
            rows = rows[~failed_mask(rows)]
        if on_disk and on_disk in rows.columns:
            root = str(self.root)  # os.path on strings: a million lookups in about 2 s
            present = [
                not isinstance(name, str) or not name or os.path.isfile(os.path.join(root, name))
                for name in rows[on_disk]
            ]
            rows = rows[present]
        return set(zip(*(rows[column].tolist() for column in key), strict=True))

    def merge(
        self,
        name: str,
        key: Sequence[str],
        finish: Finish,
        *,
        groups: Collection[str] | None = None,
        conform: Finish | None = None,
    ) -> pd.DataFrame:
        """Merge the part files into the table ``name``: newest row per key, then ``finish``.

        Under the manifest lock: two processes finishing at once merge one after the other.
        """
        with self.locked():
            table = finish(self.read_parts(key, groups=groups, conform=conform))
            self.write_table(table, name)
        return table

    def merge_stream(
        self,
        name: str,
        key: Sequence[str],
        order: Finish,
        *,
        conform: Finish,
        pick: merging.Pick | None = None,
        by: Sequence[str] = (),
        groups: Collection[str] | None = None,
        observe: Callable[[pd.DataFrame], None] | None = None,
        chunk_rows: int = 10_000,
        commit: Commit | None = None,
        staged: Sequence[Path] = (),
    ) -> int:
        """:meth:`merge` without the table in memory (:func:`glyphbench.engine.merge.merge_stream`,
        which says when the two tables are the same); returns the number of rows written."""
        return merging.merge_stream(
            self, name, key, order, conform=conform, pick=pick, by=by, groups=groups,
            observe=observe, chunk_rows=chunk_rows, commit=commit, staged=staged,
        )  # fmt: skip

    def clear(self, files: Collection[str]) -> None:
        """Delete the part files, run.json and ``files`` (a failed attempt's files).

        Images stay: a new run overwrites those it makes again.
        """
        import shutil

        if self.parts.is_dir():
            shutil.rmtree(self.parts)
        for name in (MANIFEST, *files):
            (self.root / name).unlink(missing_ok=True)
        self._last_part.clear()
