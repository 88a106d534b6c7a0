"""A run's PNG images encoded, hashed and written in a process of their own.

On a GPU a diffusers loop is bound by Python launching kernels: the generating
thread holds the GIL for most of each step. PNG encoding (tens to hundreds of
milliseconds for a 1024-pixel image) and SHA-256 in the run's worker thread held
the same GIL and slowed generation down, though the machine had idle cores. So
:class:`ImageWriter` hands each batch's pixels to one child process (spawned, as
the reader processes of :mod:`glyphbench.engine.read_pool`) which encodes them with
:func:`glyphbench.engine.png.encode_png` (in the run's PNG format: the same bytes and
SHA-256 as :meth:`RunFolder.write_image <glyphbench.engine.folder.RunFolder.write_image>`)
and writes each file with the same atomic write; the worker thread waits for the
digests with the GIL free, then reads, scores and writes the part file as before
(meanwhile the processes encode the next batch, which the worker has already begun:
:class:`glyphbench.engine.loop.Loop`).

Hand-over without needless copies: a shared-memory block
(:mod:`multiprocessing.shared_memory`) holds a batch's raw pixels (the one copy out
of the PIL images); the child attaches, unlinks the block's name at once (from then
on a crash leaks nothing) and rebuilds each image from it. Each writer keeps two
blocks and uses them in turn (two batches at most are in flight: the engine's
worker begins one while it finishes the other), so a batch is copied into memory
already mapped: a fresh block per batch page-faulted on every page it was written
to, which tripled the copy's cost in the generating process (14 ms against 5 for 8
images of 512 px on this project's CPU machine). A block too small for a batch is
replaced by a larger one. A block that a killed run created and no child unlinked
is unlinked by :mod:`multiprocessing`'s resource tracker when the run's processes
are gone.

Crash safety is the in-thread path's: files are written through a temporary file
renamed into place (the temporary name carries the child's pid, so the next run
that takes the shard deletes what a killed child left); a row is done only when its
part file exists, and the part file is written after the child has answered and
the images are flushed (:meth:`RunFolder.write_images
<glyphbench.engine.folder.RunFolder.write_images>`). The child dies with the run
(``PR_SET_PDEATHSIG``, so it must be started by the run's main thread: Linux sends
the signal when the *thread* that started it ends) and ignores Ctrl-C (the run
finishes the batch being written). Batches in flight are at most two a writer (the
engine's worker begins one while it finishes the other, then waits for the older), so
the engine's bounded queue keeps its back-pressure.

Only images whose PNG depends on their mode, size and pixels alone are shipped
(:data:`SHIPPED_MODES`, no palette, transparency or ICC profile in ``info``); the
others are written in the worker thread, as before.

Which runs use it: ``GLYPHBENCH_IMAGE_WRITER`` = ``auto`` (default: the process starts
while a model loads when the model says it will make images of at least
:data:`PROCESS_MIN_PIXELS` (:meth:`ModelAdapter.planned_size
<glyphbench.models.base.ModelAdapter.planned_size>`), else with the first batch holding
such an image; then the worker thread waits for it to start, about a tenth of a
second, while the engine's queue keeps generation going; smaller images, such as
the 64-pixel controls of tests, cost less to encode than a process costs to start),
``process`` (started with the run; every batch waits for it) or ``thread`` (never).

How many: :class:`WriterPool` runs ``GLYPHBENCH_IMAGE_WRITERS`` processes (default
:func:`writer_processes`: one per two usable cores, 1 to 8) and cuts each batch into
one contiguous slice per process. One keeps up with generation; more shorten the
run's tail (the last batch, written after generation ends, which the worker thread
shares with them) and the wait before each batch's rows.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glyphbench.core.errors import InputError, ProcessEnded, ended_how
from glyphbench.core.io import write_bytes_atomic
from glyphbench.engine.png import PNG_FORMAT, encode_png
from glyphbench.engine.read_pool import _die_with_parent, _portable

if TYPE_CHECKING:
    import subprocess
    from multiprocessing.connection import Connection

    from PIL import Image

#: The environment variable that chooses where images are written (see the module docstring).
MODE_VARIABLE = "GLYPHBENCH_IMAGE_WRITER"
MODES = ("auto", "process", "thread")
#: ``auto``: the writer process starts with the first image at least this large (256 x 256).
PROCESS_MIN_PIXELS = 256 * 256
#: Modes whose PNG is a function of mode, size and raw pixels alone.
SHIPPED_MODES = frozenset({"RGB", "RGBA", "L", "LA"})
#: ``info`` keys that PNG saving reads (Pillow's PngImagePlugin._save): such images stay.
_PNG_INFO_KEYS = frozenset({"transparency", "icc_profile", "default_image"})

#: Shared-memory blocks each writer keeps and uses in turn (batches in flight, at most).
BLOCKS = 2

#: One image in a block: (path in the run folder, mode, (width, height), offset, bytes,
#: the pixels' layout there as a Pillow raw mode).
Item = tuple[str, str, tuple[int, int], int, int, str]
#: Modes whose pixels are copied straight from Pillow's memory (its Arrow export, four
#: bytes a pixel for RGB): mode -> the raw mode that reads them back.
EXPORTED = {"RGB": "RGBX", "RGBA": "RGBA", "L": "L"}


def writer_mode(environ: dict[str, str] | None = None) -> str:
    """``GLYPHBENCH_IMAGE_WRITER`` checked (``auto`` when unset); an InputError otherwise.

    >>> writer_mode({}), writer_mode({MODE_VARIABLE: "thread"})
    ('auto', 'thread')
    """
    value = (os.environ if environ is None else environ).get(MODE_VARIABLE, "") or "auto"
    if value not in MODES:
        raise InputError(MODE_VARIABLE, f"must be one of {', '.join(MODES)}, got {value!r}")
    return value


def wants_process(mode: str, images: Sequence[Any]) -> bool:
    """Whether a run in ``mode`` starts its writer process for a batch of ``images``."""
    if mode != "auto":
        return mode == "process"
    sizes = ((getattr(image, "width", 0), getattr(image, "height", 0)) for image in images)
    return any(wants_process_for(mode, size) for size in sizes)


def image_pixels(image: Image.Image) -> tuple[str, Any]:
    """(raw mode, buffer) of ``image``'s pixels: Pillow's own memory, without a copy, where
    its Arrow export gives it (:data:`EXPORTED` modes, an image owning its memory in one
    block), else ``tobytes()`` (a copy made holding the GIL).

    >>> from PIL import Image
    >>> mode, raw = image_pixels(Image.new("RGB", (3, 2), (1, 2, 3)))
    >>> mode, len(raw), bytes(raw)[:8]
    ('RGBX', 24, b'\\x01\\x02\\x03\\xff\\x01\\x02\\x03\\xff')
    >>> image_pixels(Image.new("LA", (3, 2)))[0]
    'LA'
    """
    raw_mode = EXPORTED.get(image.mode)
    # Not an image over memory it does not own (``readonly``: ``Image.fromarray`` of an
    # L or RGBA array, ``frombuffer``): Pillow 12.3's export of those crashes the process.
    if raw_mode is not None and not image.readonly and hasattr(image, "__arrow_c_array__"):
        import pyarrow as pa

        image.load()
        try:
            array = pa.array(image)
        except (ValueError, TypeError, pa.ArrowException):  # several blocks, an old Pillow
            pass
        else:
            per_pixel = pa.types.is_fixed_size_list(array.type)  # RGB(X), RGBA: 4 bytes
            values = array.values if per_pixel else array
            if array.offset == 0 and values.offset == 0:
                size = image.width * image.height * (4 if per_pixel else 1)
                return raw_mode, memoryview(values.buffers()[1])[:size]
    return image.mode, image.tobytes()


def wants_process_for(mode: str, size: tuple[int, int] | None) -> bool:
    """Whether a run in ``mode`` starts its writer process before a model that will make
    images of ``size`` (width, height; None: not known before it makes them) loads.

    >>> wants_process_for("auto", (512, 512)), wants_process_for("auto", (64, 64))
    (True, False)
    >>> wants_process_for("auto", None), wants_process_for("thread", (1024, 1024))
    (False, False)
    """
    if mode != "auto" or size is None:
        return mode == "process"
    return size[0] * size[1] >= PROCESS_MIN_PIXELS


def shippable(image: Any) -> bool:
    """True when the child can rebuild ``image`` to the same PNG bytes (see module docstring)."""
    info = getattr(image, "info", None) or {}
    return getattr(image, "mode", None) in SHIPPED_MODES and not (_PNG_INFO_KEYS & info.keys())


class ImageWriter:
    """One child process writing PNG images under ``root``; see the module docstring."""

    @property
    def processes(self) -> int:
        return 1

    def __init__(self, root: str | Path, png: int = PNG_FORMAT) -> None:
        self.root = str(root)
        self.png = png  # the run's PNG format (RunFolder.png_format)
        self._process: subprocess.Popen[bytes] | None = None
        self._conn: Connection | None = None
        self._ready = False
        #: The blocks used in turn, and whether each holds a batch whose digests are
        #: not yet taken (then the next send uses a block of its own).
        self._blocks: list[Any] = [None] * BLOCKS
        self._busy = [False] * BLOCKS
        self._turn = 0

    def shippable(self, image: Image.Image) -> bool:
        """:func:`shippable` (what :meth:`RunFolder.write_images` asks)."""
        return shippable(image)

    def start(self) -> ImageWriter:
        """Start the child (without waiting for it): call from the run's main thread.

        A plain interpreter running :func:`main`, not a ``multiprocessing`` spawn: a
        spawned child re-runs the caller's main script, which a script calling
        ``run_benchmark`` without an ``if __name__ == "__main__":`` guard cannot bear.
        """
        import json
        import socket
        import subprocess
        import sys
        from multiprocessing.connection import Connection

        here, there = socket.socketpair()
        with there:
            fd, parent = str(there.fileno()), str(os.getpid())
            process = subprocess.Popen(
                [
                    sys.executable,
                    "-c",
                    _BOOT,
                    json.dumps(sys.path),
                    fd,
                    self.root,
                    parent,
                    str(self.png),
                ],
                pass_fds=(there.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
            )
        self._process, self._conn = process, Connection(here.detach())
        return self

    def write(
        self, images: Sequence[Image.Image], relpaths: Sequence[str], *, durable: bool
    ) -> list[str]:
        """Write ``images`` (all :func:`shippable`) at ``relpaths``: their files' SHA-256.

        ``durable``: each file flushed as it is written (else the caller flushes them
        before the part file that lists them, as ``batch_durability`` does). An error
        of the child (a full disk) is raised here, as the in-thread write raises it.
        """
        return self.send(images, relpaths, durable=durable)()

    def send(
        self, images: Sequence[Image.Image], relpaths: Sequence[str], *, durable: bool
    ) -> Callable[[], list[str]]:
        """:meth:`write`, in two halves: hand the images over now, return their digests'
        getter (the caller may work meanwhile: the child encodes in parallel)."""
        if not images:
            return list
        import numpy as np

        pixels = [image_pixels(image) for image in images]
        slot, block = self._block(max(1, sum(len(raw) for _, raw in pixels)))
        try:
            items: list[Item] = []
            offset = 0
            target = np.frombuffer(block.buf, dtype=np.uint8)
            for relpath, image, (raw_mode, raw) in zip(relpaths, images, pixels, strict=True):
                # numpy copies a large buffer with the GIL released (a memoryview
                # assignment holds it): the generating thread keeps launching meanwhile.
                np.copyto(target[offset : offset + len(raw)], np.frombuffer(raw, np.uint8))
                items.append((relpath, image.mode, image.size, offset, len(raw), raw_mode))
                offset += len(raw)
            del pixels, target
            self._send((block.name, durable, items))
        except BaseException:
            self._done_with(slot, block)
            raise

        def digests() -> list[str]:
            try:
                return self._receive()
            finally:
                self._done_with(slot, block)

        return digests

    def _block(self, size: int) -> tuple[int | None, Any]:
        """A block of at least ``size`` bytes: the next of the two kept ones (replaced by
        a larger one when too small), or one of its own (slot None) when that one still
        holds a batch in flight."""
        from multiprocessing import shared_memory

        slot = self._turn
        if self._busy[slot]:
            return None, shared_memory.SharedMemory(create=True, size=size)
        self._turn = (slot + 1) % BLOCKS
        block = self._blocks[slot]
        if block is None or block.size < size:
            if block is not None:
                _release(block)
            self._blocks[slot] = block = shared_memory.SharedMemory(create=True, size=size)
        self._busy[slot] = True
        return slot, block

    def _done_with(self, slot: int | None, block: Any) -> None:
        """The batch in ``block`` is written (or failed): its block may be used again."""
        if slot is None:
            _release(block)
        else:
            self._busy[slot] = False

    def close(self) -> None:
        """End the child once it has written what it was given (kill it if it does not end)."""
        import subprocess

        process, conn = self._process, self._conn
        self._process = self._conn = None
        blocks, self._blocks = self._blocks, [None] * BLOCKS
        for block in blocks:
            if block is not None:
                _release(block)
        if process is None or conn is None:
            return
        with contextlib.suppress(OSError):  # OSError: it has ended already
            conn.send(None)
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        conn.close()

    def ready(self, *, wait: bool = False) -> bool:
        """Whether the child has started (``wait``: wait until it has); a dead one raises."""
        if not self._ready:
            assert self._conn is not None, "start() the image writer first"
            try:
                if wait or self._conn.poll(0):
                    self._answer()  # the child's hello (or EOF: it died)
                    self._ready = True
            except (EOFError, OSError):
                raise self._ended() from None
        return self._ready

    def _send(self, message: tuple[str, bool, list[Item]]) -> None:
        assert self._conn is not None, "start() the image writer first"
        self.ready(wait=True)
        try:
            self._conn.send(message)
        except OSError:
            raise self._ended() from None

    def _receive(self) -> list[str]:
        try:
            answer: list[str] = self._answer()
        except (EOFError, OSError):
            raise self._ended() from None
        return answer

    def _answer(self) -> Any:
        assert self._conn is not None
        kind, payload = self._conn.recv()
        if kind == "ok":
            return payload
        if kind == "input-error":
            source, problem, line, key = payload
            raise InputError(source, problem, line=line, key=key)
        raise payload

    def _ended(self) -> ProcessEnded:
        """One line (not a traceback): the writer was killed (or died) under the run."""
        process = self._process
        code = process.poll() if process is not None else None
        return ProcessEnded(
            f"the image writer process ended unexpectedly ({ended_how(code)}); the rows "
            "written so far are kept: run the same command again to resume"
        )


#: The environment variable that sets how many writer processes a run starts.
PROCESSES_VARIABLE = "GLYPHBENCH_IMAGE_WRITERS"
#: At most this many writer processes by default (one batch split among them).
MAX_PROCESSES = 8


def writer_processes(environ: dict[str, str] | None = None, cpus: int | None = None) -> int:
    """How many writer processes a run starts: ``GLYPHBENCH_IMAGE_WRITERS``, else one per
    two usable cores, 1 to :data:`MAX_PROCESSES` (the generating thread keeps a core).

    >>> writer_processes({}, cpus=2), writer_processes({}, cpus=16), writer_processes({}, cpus=64)
    (1, 8, 8)
    >>> writer_processes({PROCESSES_VARIABLE: "3"}, cpus=2)
    3
    """
    value = (os.environ if environ is None else environ).get(PROCESSES_VARIABLE, "")
    if value:
        if not value.isdigit() or int(value) < 1:
            raise InputError(PROCESSES_VARIABLE, f"must be a whole number >= 1, got {value!r}")
        return int(value)
    if cpus is None:
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(MAX_PROCESSES, (cpus or 1) // 2))


class WriterPool:
    """Several :class:`ImageWriter` processes sharing each batch (contiguous slices).

    One process keeps up with generation; several shorten what is left to write
    when generation ends (the run's last batch, the tail of every run) and the
    delay before a batch's rows, on a machine with cores to spare.
    """

    def __init__(self, root: str | Path, processes: int = 1, png: int = PNG_FORMAT) -> None:
        self.writers = [ImageWriter(root, png) for _ in range(max(1, processes))]

    @property
    def processes(self) -> int:
        return len(self.writers)

    def shippable(self, image: Image.Image) -> bool:
        return shippable(image)

    def start(self) -> WriterPool:
        """Start every process (without waiting): call from the run's main thread."""
        for writer in self.writers:
            writer.start()
        return self

    def ready(self, *, wait: bool = False) -> bool:
        return all([writer.ready(wait=wait) for writer in self.writers])

    def send(
        self, images: Sequence[Image.Image], relpaths: Sequence[str], *, durable: bool
    ) -> Callable[[], list[str]]:
        """:meth:`ImageWriter.send`, the batch cut into one slice per process."""
        count = len(self.writers)
        cuts = [len(images) * k // count for k in range(count + 1)]
        getters = [
            writer.send(images[a:b], relpaths[a:b], durable=durable)
            for writer, a, b in zip(self.writers, cuts, cuts[1:], strict=False)
            if b > a
        ]

        def digests() -> list[str]:
            found: list[str] = []
            failure: BaseException | None = None
            for getter in getters:  # every answer taken: the next batch's must come next
                try:
                    found.extend(getter())
                except BaseException as exc:
                    failure = failure or exc
            if failure is not None:
                raise failure
            return found

        return digests

    def write(
        self, images: Sequence[Image.Image], relpaths: Sequence[str], *, durable: bool
    ) -> list[str]:
        return self.send(images, relpaths, durable=durable)()

    def close(self) -> None:
        for writer in self.writers:
            writer.close()


def _release(block: Any) -> None:
    """Close this process's mapping of ``block``; unlink it unless the child did."""
    block.close()
    try:
        block.unlink()
    except FileNotFoundError:  # the child unlinked it: this process's tracker forgets it
        from multiprocessing import resource_tracker

        resource_tracker.unregister(block._name, "shared_memory")


# ------------------------------------------------------------------------- child process


#: The child's command: the caller's import path first, then :func:`main`.
_BOOT = (
    "import json, sys; sys.path[:0] = json.loads(sys.argv[1]); "
    "from glyphbench.engine.image_writer import main; main(sys.argv[2:])"
)


def main(argv: Sequence[str]) -> None:
    """The child: ``argv`` = (socket fd, run folder, the run's pid, PNG format)."""
    import signal
    from multiprocessing.connection import Connection

    fd, root, parent, png = argv
    _die_with_parent(int(parent))
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the run's to handle
    serve(Connection(int(fd)), root, int(png))


def serve(conn: Connection, root: str, png: int) -> None:
    """Write each block the run sends, in PNG format ``png``, until it sends None (or ends)."""
    conn.send(("ok", os.getpid()))
    _warm_up()  # while the first batch is still being made
    while True:
        try:
            message = conn.recv()
        except EOFError:
            return
        if message is None:
            return
        try:
            conn.send(("ok", write_block(root, *message, png=png)))
        except Exception as exc:
            conn.send(_error(exc))


def _warm_up() -> None:
    """Import what :func:`write_block` needs before the first block comes."""
    import multiprocessing.shared_memory  # noqa: F401

    from PIL import Image, PngImagePlugin  # noqa: F401

    import glyphbench.engine.folder  # noqa: F401


#: The child's mappings of the run's blocks, newest last (their names already unlinked).
_ATTACHED: dict[str, Any] = {}


def _attached(name: str) -> Any:
    """The block ``name``, mapped once: its name unlinked at once, so a crash from then on
    leaks nothing; the mappings of blocks the run no longer uses are closed."""
    from multiprocessing import shared_memory

    block = _ATTACHED.pop(name, None)
    if block is None:
        block = shared_memory.SharedMemory(name=name)
        with contextlib.suppress(FileNotFoundError):
            block.unlink()  # the name goes now
    _ATTACHED[name] = block
    while len(_ATTACHED) > BLOCKS:  # a block the run replaced or used once
        _ATTACHED.pop(next(iter(_ATTACHED))).close()
    return block


def write_block(
    root: str, name: str, durable: bool, items: Sequence[Item], *, png: int
) -> list[str]:
    """Rebuild, encode (PNG format ``png``) and write the images of shared-memory block
    ``name``: their SHA-256."""
    from PIL import Image

    buffer = _attached(name).buf
    assert buffer is not None
    images = []
    for _relpath, mode, size, offset, length, raw_mode in items:
        with buffer[offset : offset + length] as raw:
            images.append(Image.frombytes(mode, size, raw, "raw", raw_mode))
    del buffer
    digests = []
    for (relpath, *_), image in zip(items, images, strict=True):
        data, digest = encode_png(image, png)
        write_bytes_atomic(Path(root) / relpath, data, durable=durable)
        digests.append(digest)
    return digests


def _error(exc: Exception) -> tuple[str, Any]:
    """An exception as the parent can rebuild it (InputError by its fields)."""

    if isinstance(exc, InputError):
        return "input-error", (exc.source, exc.problem, exc.line, exc.key)
    return "error", _portable(exc)
