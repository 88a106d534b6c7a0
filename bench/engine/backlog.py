"""Back-pressure between generation and the run's reader processes.

``glyphbench run --read-workers N`` generates in the main thread while N reader
processes read the images from their files. :class:`Backlog` counts the images
made and not yet read; generation asks it for room before each batch
(:meth:`Backlog.reserve`) and waits while the batch would take the count over the
bound; the readers give room back as they read (:meth:`Backlog.release`).

>>> backlog = Backlog(8)
>>> backlog.reserve(4); backlog.reserve(4); backlog.waiting, backlog.peak
(8, 8)
>>> backlog.release(5); backlog.waiting
3
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

#: Seconds between looks at the count while generation waits (Ctrl-C stays prompt).
WAIT_POLL_S = 0.5

#: Default backlog: this many batches per reader process. Each reader process has two
#: chunks (a batch each) in flight (``read_pool.IN_FLIGHT_PER_WORKER``); two more per
#: process are made while those are read, so readers never wait for generation when it
#: is ahead, and no more images than that wait on disk when reading is the slower side.
BATCHES_PER_WORKER = 4


def default_backlog(workers: int, batch_size: int) -> int:
    """Images allowed to wait for a reader when ``read_backlog`` is not set.

    >>> default_backlog(1, 4), default_backlog(2, 8)
    (16, 64)
    """
    return BATCHES_PER_WORKER * max(1, workers) * max(1, batch_size)


class Backlog:
    """Images made and not yet read, bounded by ``bound`` (see the module docstring).

    A batch larger than the bound is let through when nothing waits, so generation
    never stops for good: at most ``max(bound, batch size)`` images wait.
    """

    def __init__(self, bound: int) -> None:
        self.bound = max(1, bound)
        self.waiting = 0
        self.peak = 0
        self.waited_s = 0.0  # seconds generation spent waiting for the readers
        self.saved = 0  # images generation has saved (their part file follows)
        self.ended = False  # generation has ended
        self._failure: BaseException | None = None
        self._changed = threading.Condition()

    def add(self, count: int) -> None:
        """Count ``count`` images already waiting (a resumed run's unread images)."""
        with self._changed:
            self.waiting += count
            self.peak = max(self.peak, self.waiting)

    def reserve(self, count: int) -> None:
        """Wait until ``count`` more images fit under the bound, then count them."""
        with self._changed:
            started = time.perf_counter()
            while self.waiting and self.waiting + count > self.bound:
                if self._failure is not None:
                    raise self._failure
                self._changed.wait(WAIT_POLL_S)
            self.waited_s += time.perf_counter() - started
            if self._failure is not None:
                raise self._failure
            self.waiting += count
            self.peak = max(self.peak, self.waiting)

    def release(self, count: int) -> None:
        """``count`` images were read (or will never need reading): room for more."""
        if count <= 0:
            return
        with self._changed:
            self.waiting = max(0, self.waiting - count)
            self._changed.notify_all()

    def settle(self, reserved: int, saved: int) -> None:
        """A batch that reserved ``reserved`` saved ``saved`` images: only those wait."""
        with self._changed:
            self.saved += saved
            self.waiting = max(0, self.waiting - (reserved - saved))
            self._changed.notify_all()

    def end(self) -> None:
        """Generation has ended: a reader waiting in :meth:`wait_saved` goes on."""
        with self._changed:
            self.ended = True
            self._changed.notify_all()

    def wait_saved(self, beyond: int, timeout: float) -> None:
        """Wait (at most ``timeout``) until more than ``beyond`` images are saved, or the end.

        The readers sleep here instead of listing the part files ten times a second
        while a batch is being generated.
        """
        deadline = time.monotonic() + timeout
        with self._changed:
            while not self.ended and self.saved <= beyond:
                left = deadline - time.monotonic()
                if left <= 0:
                    return
                self._changed.wait(min(left, WAIT_POLL_S))

    def fail(self, failure: BaseException) -> None:
        """The readers stopped: a waiting (or the next) :meth:`reserve` raises ``failure``."""
        with self._changed:
            self._failure = failure
            self._changed.notify_all()

    def facts(self) -> dict[str, Any]:
        """What shard.json records: the bound, the peak and the seconds generation waited."""
        return {
            "backlog": self.bound,
            "peak_backlog": self.peak,
            "waited_s": round(self.waited_s, 3),
        }


class GatedProducer:
    """A producer whose ``produce`` first reserves room for its images in a :class:`Backlog`.

    Other attributes (``is_control``, ``billable``, ...) are the wrapped producer's.
    A ``produce`` that raises gives its room back (an out-of-memory retry or a failed
    batch never holds room).
    """

    def __init__(self, producer: Any, backlog: Backlog) -> None:
        self._producer = producer
        self._backlog = backlog

    def prepare(self, jobs: list[Any]) -> list[Any]:
        result: list[Any] = self._producer.prepare(jobs)
        return result

    def produce(self, inputs: list[Any]) -> Sequence[Any]:
        self._backlog.reserve(len(inputs))
        try:
            outputs: Sequence[Any] = self._producer.produce(inputs)
        except BaseException:
            self._backlog.release(len(inputs))
            raise
        return outputs

    def close(self) -> None:
        self._producer.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._producer, name)


class SpawnedReaders(Protocol):
    """A run's own reader processes, as :func:`glyphbench.run.operations.run_benchmark` uses them.

    Implemented by :class:`glyphbench.run.read_workers.RunReaders`.
    """

    def reading(self, scoring: Any) -> AbstractContextManager[Backlog]:
        """Read while the block generates; on a normal exit, read what is left.

        ``scoring`` is the run's score stage (:class:`glyphbench.run.stages.Scoring`),
        handed through: the kernel does not import the benchmark run.
        """

    def facts(self) -> dict[str, Any]:
        """What the readers did (shard.json)."""

    def close(self) -> None:
        """End the reader processes."""
