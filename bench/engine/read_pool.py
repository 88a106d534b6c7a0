"""Reading in worker processes, fed through the run folder.

Each worker process creates its own reader from the spec (so a reader never
crosses a process boundary) and reads image *files* of the run folder: images
are written first, then read, which is what lets reading run in other
processes, after generation or on other machines (``glyphbench read RUN``).

:class:`ReadPool` keeps at most ``2 x workers`` chunks in flight (back-pressure:
the images waiting to be read stay bounded) and yields each chunk's outcomes
in submission order. ``workers=0`` reads in the calling process (no pool).

On a machine with several GPUs each worker process is pinned to one of them, round-robin
(:func:`reader_devices`): worker ``k`` starts with ``CUDA_VISIBLE_DEVICES`` set to the
``k``-th device modulo their number, before its reader imports torch, so a reader asking
for ``cuda`` gets its own GPU.

>>> from glyphbench.engine.read_pool import resolve_workers
>>> resolve_workers(0), resolve_workers(3)
(0, 3)
"""

from __future__ import annotations

import os
import pickle
from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glyphbench.core.errors import InputError, ProcessEnded, ended_how

if TYPE_CHECKING:
    from concurrent.futures import Future

    from glyphbench.readers.base import Reader, Reading

#: Chunks in flight per worker: one being read, one waiting.
IN_FLIGHT_PER_WORKER = 2

_READER: Reader | None = None
_START_ERROR: BaseException | None = None
_BARRIER: Any = None  # the pool's barrier of :meth:`ReadPool.check`

#: Environment variable: the GPUs (ids as ``CUDA_VISIBLE_DEVICES`` takes them, comma
#: separated) the reader processes go round-robin over; empty: no pinning.
READ_DEVICES_ENV = "GLYPHBENCH_READ_DEVICES"


def reader_devices(environ: dict[str, str] | None = None) -> list[str]:
    """The GPUs reader processes are pinned to, one process after another (round-robin).

    ``GLYPHBENCH_READ_DEVICES`` when set (``"6,7"``: the readers on GPUs 6 and 7, whatever
    the generating process uses; ``""``: no pinning). Otherwise the GPUs this process
    sees, when there are two or more: the entries of ``CUDA_VISIBLE_DEVICES`` if set,
    else ``torch.cuda.device_count()`` of them (torch is imported only when it already is
    or the NVIDIA driver lists two GPUs or more in ``/proc/driver/nvidia/gpus``). One
    GPU or none: no pinning (a reader process sees what its parent sees, as before).

    >>> reader_devices({"GLYPHBENCH_READ_DEVICES": "0, 2"})
    ['0', '2']
    >>> reader_devices({"GLYPHBENCH_READ_DEVICES": ""})
    []
    >>> reader_devices({"CUDA_VISIBLE_DEVICES": "3"})  # one GPU: the readers share it
    []
    >>> reader_devices({"CUDA_VISIBLE_DEVICES": "1,3"})
    ['1', '3']
    """
    import sys

    environ = dict(os.environ) if environ is None else environ
    if READ_DEVICES_ENV in environ:
        return [d.strip() for d in environ[READ_DEVICES_ENV].split(",") if d.strip()]
    visible = environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        found = [d.strip() for d in visible.split(",") if d.strip()]
    else:
        listed = Path("/proc/driver/nvidia/gpus")
        count = len(list(listed.iterdir())) if listed.is_dir() else 0
        if count >= 2 or "torch" in sys.modules:  # CUDA's own count (a container may see fewer)
            try:
                import torch

                count = torch.cuda.device_count()
            except ImportError:  # no torch: no reader of this install uses CUDA
                count = 0
        found = [str(number) for number in range(count)]
    return found if len(found) >= 2 else []


def pinned_devices(spec: str, environ: dict[str, str] | None = None) -> list[str]:
    """:func:`reader_devices` for the reader ``spec``; none when it names a GPU itself.

    A spec holding ``cuda:N`` (``vlm:...?device=cuda:1``) chose its GPU: its processes
    see every GPU, as before, so that ``N`` still means the same one.

    >>> pinned_devices("easyocr?gpu=1", {"GLYPHBENCH_READ_DEVICES": "0,1"})
    ['0', '1']
    >>> pinned_devices("vlm:/m?device=cuda:1", {"GLYPHBENCH_READ_DEVICES": "0,1"})
    []
    """
    import re

    return [] if re.search(r"cuda:\d", spec) else reader_devices(environ)


def _claim_device(devices: Sequence[str], counter: Any) -> str | None:
    """This worker's device: the next one round-robin (``counter`` is shared by the pool)."""
    if not devices:
        return None
    with counter.get_lock():
        number = counter.value
        counter.value += 1
    device: str = devices[number % len(devices)]
    os.environ["CUDA_VISIBLE_DEVICES"] = device  # before the reader imports torch
    return device


def free_cores() -> int:
    """Cores not taken by this process (at least 1): the default number of read workers."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, cores - 1)


def resolve_workers(workers: int | None) -> int:
    """``None``: :func:`free_cores`; otherwise the number given (0: read in-process)."""
    if workers is None:
        return free_cores()
    if workers < 0:
        raise InputError(None, f"--read-workers must be 0 or more, got {workers}")
    return workers


def _start(spec: str) -> None:
    """Worker initialiser: create this process's reader once."""
    global _READER
    # the image writer's child imports this module: readers stay out of it
    from glyphbench.engine.reading import start_reader

    _READER = start_reader(spec)


def _start_worker(
    spec: str, parent: int, devices: Sequence[str] = (), counter: Any = None, barrier: Any = None
) -> None:
    """Worker initialiser: die with the parent (SIGTERM or kill -9 of `read`), then start.

    With ``devices`` the worker first takes its GPU (:func:`_claim_device`).

    Ctrl-C is the parent's to handle (it stops the pool): a worker ignores SIGINT, so a
    Ctrl-C in the terminal does not kill it mid-chunk with a traceback. A reader that
    cannot start is kept as the worker's error and raised by every call, so the parent
    sees it (a failing initialiser would only break the pool without saying why).
    """
    import signal

    global _START_ERROR, _BARRIER
    _die_with_parent(parent)
    _BARRIER = barrier
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _claim_device(devices, counter)
    try:
        _start(spec)
    except Exception as exc:
        error = _portable(exc)
        _START_ERROR = error if isinstance(error, Exception) else exc


def _die_with_parent(parent: int) -> None:
    """Ask Linux to kill this process when its parent ends (``PR_SET_PDEATHSIG``).

    Without it a worker of a killed ``read`` (and its reader's memory) lives on under
    pid 1. Elsewhere (no ``prctl``) workers end when the pool's pipe closes.
    """
    import signal
    import sys

    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):  # pragma: no cover - no libc prctl
        return
    if os.getppid() != parent:  # the parent ended before the request took effect
        os._exit(1)


def _portable(outcome: Reading | Exception) -> Reading | Exception:
    """An exception that cannot be sent back between processes becomes a RuntimeError."""
    if not isinstance(outcome, Exception):
        return outcome
    try:
        pickle.loads(pickle.dumps(outcome))  # some exceptions pickle but do not unpickle
    except Exception:
        return RuntimeError(f"{type(outcome).__name__}: {outcome}")
    return outcome


#: What one chunk gives back: the reader's (name, version), its full identity (name,
#: version and options: the reading store's key) and one outcome per image.
Outcomes = tuple[tuple[str, str], str, list["Reading | Exception"]]


def read_files(root: str, paths: Sequence[str]) -> Outcomes:
    """Read image files (relative to ``root``) with this process's reader."""
    from PIL import Image

    # the image writer's child imports this module: readers stay out of it
    from glyphbench.engine.reading import read_batch, reader_identity

    if _START_ERROR is not None:
        raise _START_ERROR
    assert _READER is not None, "the worker's reader was not started"
    images, unreadable = [], {}
    for number, path in enumerate(paths):
        try:
            with Image.open(Path(root) / path) as image:
                images.append(image.convert("RGB"))
        except Exception as exc:  # one damaged file is one failed row, not a failed read
            unreadable[number] = UnreadableImage(f"{path}: {type(exc).__name__}: {exc}")
    read = iter(read_batch(_READER, images) if images else [])
    identity = (_READER.name, _READER.version)
    outcomes = [
        unreadable[number] if number in unreadable else _portable(next(read))
        for number in range(len(paths))
    ]
    return identity, reader_identity(_READER), outcomes


def worker_ready() -> tuple[int, str | None]:
    """A worker's answer once its reader has started: its pid and ``CUDA_VISIBLE_DEVICES``.

    Its start error otherwise. In a pool it first waits (at the pool's barrier) until
    every worker holds one such call, so each worker answers exactly once.
    """
    import contextlib
    import threading

    if _BARRIER is not None:
        with contextlib.suppress(threading.BrokenBarrierError):  # one is late: answer anyway
            _BARRIER.wait(READY_WAIT_S)
    if _START_ERROR is not None:
        raise _START_ERROR
    return os.getpid(), os.environ.get("CUDA_VISIBLE_DEVICES")


#: Seconds a started worker waits for the others in :meth:`ReadPool.check`.
READY_WAIT_S = 600.0


class UnreadableImage(OSError):
    """An image file that cannot be opened: the row's error names the file."""


class ReadPool:
    """``workers`` processes reading image files of ``root`` with the reader ``spec``."""

    def __init__(self, spec: str, root: str | Path, workers: int) -> None:
        self.spec, self.root, self.workers = spec, str(root), workers
        self.devices: list[str] = []
        self._executor: Any = None

    def __enter__(self) -> ReadPool:
        if self.workers > 0:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor

            # spawn: readers hold native threads (torch); forking them is unsafe.
            context = multiprocessing.get_context("spawn")
            self.devices = pinned_devices(self.spec)
            counter, barrier = context.Value("i", 0), context.Barrier(self.workers)
            self._executor = ProcessPoolExecutor(
                self.workers,
                mp_context=context,
                initializer=_start_worker,
                initargs=(self.spec, os.getpid(), self.devices, counter, barrier),
            )
        else:
            _start(self.spec)
        return self

    def __exit__(self, kind: object = None, *exc: object) -> None:
        """End the workers: at once when the block failed (Ctrl-C), else once idle."""
        if kind is not None:
            self.stop_now()
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)

    def stop_now(self) -> None:
        """Kill the workers (they write nothing, so no file is left half-written).

        Ctrl-C then ends without waiting for the chunks in flight (up to two per worker,
        seconds each with a slow reader); their images are read again on resume.
        """
        if self._executor is None:
            return
        # concurrent.futures has no public call that ends busy workers; _processes is
        # the executor's own {pid: process} (CPython 3.8+).
        for process in list(getattr(self._executor, "_processes", {}).values()):
            process.kill()

    def check(self) -> list[tuple[int, str | None]]:
        """Start every worker now and wait until each has its reader.

        Returns each worker's pid and ``CUDA_VISIBLE_DEVICES``. A reader that cannot
        start raises its error here (before any image is handed out). One call per
        worker, all submitted before any answer, so every worker is started by the
        calling thread; each call waits at a barrier for the others, so each worker
        answers once.
        """
        if self._executor is None:
            return [(os.getpid(), os.environ.get("CUDA_VISIBLE_DEVICES"))]
        futures = [self._executor.submit(worker_ready) for _ in range(self.workers)]
        return [self._result(future) for future in futures]

    def probe(self, path: str) -> Reading | Exception:
        """Read the one image file ``path`` in a worker (or here): its reading or failure.

        What ``glyphbench read`` tries before writing anything.
        """
        if self._executor is None:
            return read_files(self.root, [path])[2][0]
        outcomes: Outcomes = self._result(self._executor.submit(read_files, self.root, [path]))
        return outcomes[2][0]

    def read(self, chunks: Iterable[Sequence[str]]) -> Iterator[tuple[Sequence[str], Outcomes]]:
        """``(paths, (reader identity, outcomes))`` per chunk, in order.

        At most ``2 x workers`` chunks are in flight: the images waiting stay bounded.
        """
        if self._executor is None:
            for paths in chunks:
                yield paths, read_files(self.root, paths)
            return
        pending: deque[tuple[Sequence[str], Future[Outcomes]]] = deque()
        limit = IN_FLIGHT_PER_WORKER * self.workers
        for paths in chunks:
            pending.append((paths, self._executor.submit(read_files, self.root, list(paths))))
            if len(pending) >= limit:
                done, future = pending.popleft()
                yield done, self._result(future)
        while pending:
            done, future = pending.popleft()
            yield done, self._result(future)

    def _result(self, future: Future[Any]) -> Any:
        """A worker's answer; a worker that died (killed, out of memory) is one line."""
        from concurrent.futures.process import BrokenProcessPool

        try:
            return future.result()
        except BrokenProcessPool:
            processes = getattr(self._executor, "_processes", None) or {}
            codes = [p.exitcode for p in processes.values() if p.exitcode not in (None, 0)]
            raise ProcessEnded(
                f"a reader process of {self.spec!r} ended unexpectedly "
                f"({ended_how(codes[0] if codes else None)}); the readings made so far are "
                "kept: run the same command again to read the rest"
            ) from None
