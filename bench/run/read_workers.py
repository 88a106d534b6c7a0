"""``glyphbench run --read-workers N``: the run starts its own reader processes.

The run generates in its main thread and writes images and rows as ``run
--read-later`` does; N reader processes read those images from their files, with
the code of ``glyphbench read --follow`` (:func:`glyphbench.run.read_later.read_passes`
driving a :class:`glyphbench.engine.read_pool.ReadPool`) in one thread of the run. The
rows they score go to ``parts/read-0-of-1/`` (the run holds that lock, so a
``glyphbench read`` on the same folder is refused while it runs), and the run merges
once the readers have read every image.

Back-pressure: a :class:`glyphbench.engine.backlog.Backlog` counts the images made and not
yet read; generation waits before a batch that would take it over ``read_backlog``
and goes on as the readers catch up.

Why processes of a pool owned by the run, not a ``glyphbench read --follow``
subprocess: the reader processes write nothing (they open image files and send
readings back through a pipe); every file is written by the run process, atomically.
So a killed run leaves no reader writing a half file: its reader processes are killed
with it (``PR_SET_PDEATHSIG``, as ``read``'s workers) and hold nothing the next run
needs. A subprocess would be a second writer with its own locks, merge and end to
coordinate across a kill.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from glyphbench.core.errors import InputError
from glyphbench.engine.backlog import Backlog, default_backlog
from glyphbench.engine.folder import RunFolder
from glyphbench.engine.loop import quit_now
from glyphbench.engine.read_pool import ReadPool
from glyphbench.engine.reading import refuse_failed_probe, sample_image
from glyphbench.run.operations import run_benchmark
from glyphbench.run.read_later import read_passes

if TYPE_CHECKING:
    from glyphbench.run.config import ReadSettings, RunConfig
    from glyphbench.run.operations import RunResult
    from glyphbench.run.stages import Scoring

#: The share the run's readers read and the lock they hold: all of it, as `read` does.
READ_SHARD = "read-0-of-1"
#: Seconds the readers wait at most without looking at the folder while nothing new
#: was saved (a safety net: a new batch wakes them at once).
IDLE_LOOK_S = 5.0


class _Stopped(Exception):
    """The run was interrupted: the readers' thread stops at the next chunk."""


class RunReaders:
    """The reader processes of one run (see the module docstring).

    :meth:`start` starts them and checks that every one created its reader (nothing
    is written before); :meth:`reading` reads while its block generates, and on a
    normal exit of the block reads what is left; :meth:`close` ends the processes.
    """

    def __init__(self, read: ReadSettings, root: Path, batch_size: int, reader_spec: str) -> None:
        self.root = root
        self.reader_spec = reader_spec
        self.workers = read.workers
        self.step = batch_size  # images a reader process is sent at a time
        self.backlog = Backlog(read.backlog or default_backlog(read.workers, batch_size))
        self.read = 0
        self.errors = 0
        self._pool: ReadPool | None = None
        self._ended = threading.Event()
        self._stop = threading.Event()
        self._scanned = threading.Event()
        self._failure: BaseException | None = None
        self._found: int | None = None  # unread images found after the first look

    def start(self) -> RunReaders:
        pool = ReadPool(self.reader_spec, self.root, self.workers)
        pool.__enter__()
        self._pool = pool
        try:
            pool.check()
        except Exception as exc:
            self.close()
            cause = str(exc) if isinstance(exc, RuntimeError) else f"{type(exc).__name__}: {exc}"
            raise InputError(
                None,
                f"the reader {self.reader_spec!r} could not start in a reader process: {cause}",
            ) from None
        try:
            self._probe(pool)
        except BaseException:
            self.close()
            raise
        return self

    def _probe(self, pool: ReadPool) -> None:
        """Refuse a reader that starts but cannot read: one sample image, read in
        a reader process from a temporary file outside the run folder."""
        import tempfile

        with tempfile.TemporaryDirectory(prefix="glyphbench-probe-") as folder:
            path = Path(folder) / "sample.png"
            sample_image().save(path)
            refuse_failed_probe(pool.probe(str(path)), self.reader_spec, "a sample image of text")

    def close(self) -> None:
        if self._pool is not None:
            pool, self._pool = self._pool, None
            pool.__exit__(None)

    def __enter__(self) -> RunReaders:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def reading(self, scoring: Scoring) -> Iterator[Backlog]:
        """Read the folder's images while the block generates (gated by the backlog it yields).

        The readers' first look (the unread images a resumed run left) is counted in the
        backlog before the block starts. On a normal exit the readers read the rest;
        on an exception (Ctrl-C) the reader processes are killed at once (they write
        nothing) and the thread ends without writing what it had in hand.
        """
        assert self._pool is not None, "start() the readers first"
        folder = RunFolder(self.root)  # the readers' own: its part counters and locks
        with folder.hold_shard(READ_SHARD):
            thread = threading.Thread(
                target=self._follow, args=(folder, scoring), name="glyphbench-readers", daemon=True
            )
            thread.start()
            while not self._scanned.wait(0.1):
                if not thread.is_alive():
                    break
            try:
                self._raise_failure()
                yield self.backlog
            except BaseException:
                self._stop.set()
                self._ended.set()
                self.backlog.end()
                self._pool.stop_now()  # the readers stop now; the thread then ends
                self._join(thread)
                raise
            self._ended.set()
            self.backlog.end()
            self._join(thread)
            self._raise_failure()

    def facts(self) -> dict[str, Any]:
        """What shard.json records of the readers."""
        return {"workers": self.workers, "read": self.read, "errors": self.errors}

    def _join(self, thread: threading.Thread) -> None:
        try:
            thread.join()
        except KeyboardInterrupt:  # a second Ctrl-C: quit now, as the run loop does
            quit_now()

    def _raise_failure(self) -> None:
        if self._failure is not None:
            raise self._failure

    def _follow(self, folder: RunFolder, scoring: Scoring) -> None:

        assert self._pool is not None
        try:
            totals = read_passes(
                folder,
                self._pool,
                scoring,
                READ_SHARD,
                generating=lambda: not self._ended.is_set(),
                step=self.step,
                progress=False,  # the run shows its own progress bars
                found=self._look,
                read=self._read,
                idle=self._idle,
            )
            self.read, self.errors = totals["read"], totals["errors"]
        except _Stopped:
            pass
        except BaseException as exc:  # surfaced in the run's thread; generation stops
            self._failure = exc
            self.backlog.fail(exc)
        finally:
            self._scanned.set()

    def _look(self, count: int) -> None:
        if self._found is None:  # the first look: what an earlier run left unread
            self.backlog.add(count)
            self._found = 0
            self._scanned.set()
        else:
            self._found += count

    def _idle(self, seconds: float) -> None:
        """Between empty passes: look again soon only when a batch's part file is due."""
        if self.backlog.saved > (self._found or 0):  # saved, its part file being written
            self._ended.wait(seconds)
        else:  # nothing new until generation saves a batch (a safety look every 5 s)
            self.backlog.wait_saved(self._found or 0, IDLE_LOOK_S)

    def _read(self, count: int) -> None:
        self.backlog.release(count)
        if self._stop.is_set():
            raise _Stopped


def run_with_readers(config: RunConfig, **kwargs: Any) -> RunResult:
    """:func:`glyphbench.run.operations.run_benchmark` with ``config.read.workers`` reader
    processes.

    ``config.read.workers`` 0: the run reads in its own worker thread, as always.
    """

    read, root, step = config.read, config.output.folder, config.generate.batch_size
    if read.workers > 0:
        kwargs["readers"] = lambda spec: RunReaders(read, root, step, spec).start()
    return run_benchmark(config, **kwargs)
