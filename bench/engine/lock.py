"""Exclusive locks on a run folder: one writer per shard, one manifest editor at a time.

A lock is an ``flock`` on a small file in ``DIR/.locks/``, held as long as the lock
object is open; the operating system releases it when the process ends, however it
ends (``kill -9`` included), so a lock is never stale. The file itself stays; it
records the holder (pid, host, since) so a refusal can say who holds it. On Linux,
NFS mounts get ``flock`` through the NFS lock manager; where ``fcntl`` does not
exist (Windows), locking is skipped.

Two kinds:

* :meth:`FolderLock.try_hold`: a shard's writer lock, taken once for the process's
  work; a second process on the same shard is refused with :class:`FolderBusy`
  ("another glyphbench process (pid N, host H) is writing DIR");
* :meth:`FolderLock.wait_hold`: the manifest lock, held briefly to compare and create
  run.json and to merge; others wait (saying so after a moment). It is re-entrant
  within one process, so a merge inside a locked section does not deadlock.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import ClassVar

from glyphbench.core.errors import InputError
from glyphbench.core.io import ensure_folder, os_problem

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

LOCKS = ".locks"

#: Seconds a waiting process stays silent before it says what it waits for.
QUIET_WAIT_S = 2.0


class FolderBusy(InputError):
    """Another process holds the lock: the message names it and the folder."""


def holder_text(path: Path, *, patience_s: float = 1.0) -> str:
    """``pid N, host H`` from a lock file (what its holder wrote), or ``pid ?``.

    A holder writes its record just after taking the lock, so an empty record is
    read again for up to ``patience_s``.
    """
    deadline = time.monotonic() + patience_s
    while True:
        try:
            words = path.read_text(encoding="utf-8").split()
        except OSError:
            words = []
        fields = dict(word.split("=", 1) for word in words if "=" in word)
        if "pid" in fields or time.monotonic() > deadline:
            return f"pid {fields.get('pid', '?')}, host {fields.get('host', '?')}"
        time.sleep(0.02)


class FolderLock:
    """One named lock of a run folder (see the module docstring)."""

    _held: ClassVar[dict[Path, tuple[int, int]]] = {}  # path -> (fd, depth), re-entrant holds
    _guard: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, root: Path, name: str) -> None:
        self.root = root
        self.name = name
        self.path = (root / LOCKS / f"{name}.lock").resolve()

    def _open(self) -> int:
        ensure_folder(self.path.parent)
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
        except OSError as exc:
            raise InputError(self.path, f"cannot open lock file: {os_problem(exc)}") from None

    def _try(self, fd: int) -> bool:
        if fcntl is None:  # pragma: no cover - Windows
            return True
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _record(self, fd: int) -> None:
        since = time.strftime("%Y-%m-%dT%H:%M:%S%z")
        text = f"pid={os.getpid()} host={socket.gethostname()} since={since}\n"
        data = text.encode("utf-8")
        with suppress(OSError):  # the record is informative only
            os.pwrite(fd, data, 0)  # overwrite, then cut: never an empty file between
            os.ftruncate(fd, len(data))

    def busy(self, what: str = "writing") -> FolderBusy:
        return FolderBusy(
            None,
            f"another glyphbench process ({holder_text(self.path)}) is {what} {self.root}"
            f" ({self.name}); wait for it to end or use another output folder",
        )

    @contextmanager
    def try_hold(self) -> Iterator[FolderLock]:
        """Hold the lock for the block, or raise :class:`FolderBusy` at once."""
        fd = self._open()
        if not self._try(fd):
            os.close(fd)
            raise self.busy()
        self._record(fd)
        try:
            yield self
        finally:
            os.close(fd)  # closing the descriptor releases the flock

    @contextmanager
    def wait_hold(self, say: Callable[[str], None] | None = None) -> Iterator[FolderLock]:
        """Hold the lock for the block, waiting for another holder (re-entrant per process)."""
        with self._guard:
            if self.path in self._held:
                fd, depth = self._held[self.path]
                self._held[self.path] = (fd, depth + 1)
                reentered = True
            else:
                reentered = False
        if not reentered:
            fd = self._wait(say)
            with self._guard:
                self._held[self.path] = (fd, 1)
        try:
            yield self
        finally:
            with self._guard:
                fd, depth = self._held[self.path]
                if depth > 1:
                    self._held[self.path] = (fd, depth - 1)
                else:
                    del self._held[self.path]
                    os.close(fd)

    def _wait(self, say: Callable[[str], None] | None) -> int:
        fd = self._open()
        started = time.monotonic()
        told = False
        while not self._try(fd):
            if not told and time.monotonic() - started > QUIET_WAIT_S and say is not None:
                say(f"waiting for another glyphbench process ({holder_text(self.path)}) ...")
                told = True
            time.sleep(0.05)
        self._record(fd)
        return fd

    def held_by_other(self) -> bool:
        """True when another process (or another holder here) holds this lock right now."""
        if not self.path.is_file() or fcntl is None:
            return False
        fd = self._open()
        try:
            if self._try(fd):
                fcntl.flock(fd, fcntl.LOCK_UN)
                return False
            return True
        finally:
            os.close(fd)
