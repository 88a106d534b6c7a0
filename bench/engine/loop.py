"""The loop: produce batches in the main thread, finish them in a worker thread.

For each group (a model, a codec) with jobs left, :class:`Loop` opens its producer
(loads the model), then cuts the jobs into batches and, per batch, calls
``producer.prepare(jobs)`` (untimed: requests, original images) and
``producer.produce(inputs)`` (timed: generate, encode/decode). Each batch goes
through a bounded queue to one worker thread, which calls ``finish(batch)`` (save
images, read, score: the caller's rows) and writes the rows as a part file. The
queue keeps production at most :data:`QUEUE_DEPTH` batches ahead of the worker.
With a ``begin`` hook (``begin(batch)`` starts the batch and returns the call that
finishes it) the worker begins the next waiting batch before finishing the current
one, so two stages of two batches overlap (the image writer process encodes one
while the worker scores the other).

Failures stay local:

* ``open`` raises: one failed :class:`Batch` (stage ``"Load"``) with all the group's
  jobs; the next group runs;
* ``produce`` raises CUDA out of memory: the batch size is halved (for the rest of the
  group) and the batch retried; any other exception: a failed batch (``"Generate"``);
* the worker raises (a bug, a full disk): the main thread stops and re-raises it.

Ctrl-C: the first one stops production; the worker drops the queued batches, ends the
ones it has begun (so their part files are whole) and the interruption goes on to the
caller (the same command resumes). A second Ctrl-C while the worker ends quits at once
(exit code 130) instead of unwinding the interpreter under native threads, which is
what used to abort with "terminate called without an active exception"; the part
files already written are whole, and the temporary file of the one being written is
deleted when the shard is next taken.
"""

from __future__ import annotations

import collections
import contextlib
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Protocol

from rich.markup import escape  # a model's name or message may hold "[...]"

from glyphbench.core.accelerator import is_oom
from glyphbench.core.errors import Terminated
from glyphbench.core.progress import EtaColumn, LineProgress
from glyphbench.core.schema import failed_mask
from glyphbench.core.words import plural

if TYPE_CHECKING:
    import pandas as pd
    import pyarrow as pa
    from rich.console import Console

    from glyphbench.engine.folder import RunFolder

#: Batches produced ahead of the worker (bounds the memory held by pending outputs).
QUEUE_DEPTH = 2

#: ``progress(group name, jobs done, jobs in the group)``, called when the group starts
#: (its model loaded: jobs done 0) and after each batch.
ProgressFn = Callable[[str, int, int], None]


def error_text(stage: str, exc: BaseException) -> str:
    """``"Stage: ExceptionType: first line of the message"`` (at most 500 characters).

    >>> error_text("Generate", ValueError("bad prompt\\nmore"))
    'Generate: ValueError: bad prompt'
    """
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{stage}: {type(exc).__name__}: {message}"[:500].rstrip(": ")


class Producer(Protocol):
    """Makes one group's outputs (a loaded model, a codec)."""

    def prepare(self, jobs: list[Any]) -> list[Any]:
        """What ``produce`` needs for these jobs (not timed)."""

    def produce(self, inputs: list[Any]) -> Sequence[Any]:
        """One output per input (timed); may raise."""

    def close(self) -> None:
        """Free what the producer holds."""


@dataclass
class Group:
    """One model or codec: its jobs and how to open its producer."""

    name: str  # label in messages, progress and stats
    folder: str  # its part files go to parts/<shard>/<folder>/
    jobs: list[Any]
    open: Callable[[], Producer]


@dataclass
class Batch:
    """One batch on its way to the worker; ``failure`` set when it could not be produced."""

    group: Group
    jobs: list[Any]
    producer: Producer | None = None
    inputs: list[Any] | None = None
    outputs: list[Any] | None = None
    failure: BaseException | None = None
    stage: str = ""  # "Load" or "Generate" when failed
    seconds: float = float("nan")  # time spent in produce()
    size: int = 0  # the batch size produce() was called with (0: never called)
    final: bool = False  # no batch is produced after this one (the process is free)


@dataclass
class GroupStats:
    """What happened to one group in this process."""

    load_s: float = float("nan")
    start: float = float("nan")  # perf_counter() when loaded
    span_s: float = float("nan")  # from loaded to its last part written
    oom_halvings: int = 0
    load_error: BaseException | None = None


@dataclass
class LoopStats:
    rows_written: int = 0
    errors: int = 0
    groups: dict[str, GroupStats] = field(default_factory=dict)


class Loop:
    """Runs groups through produce -> queue -> finish -> part file; see the module docstring."""

    def __init__(
        self,
        folder: RunFolder,
        shard: str,
        finish: Callable[[Batch], pd.DataFrame | pa.Table],
        *,
        begin: Callable[[Batch], Callable[[], pd.DataFrame | pa.Table]] | None = None,
        warm: Callable[[], None] | None = None,
        batch_size: int,
        progress: ProgressFn | None = None,
        say: Callable[[str], None] | None = None,
        noun: str = "model",
    ) -> None:
        self.folder = folder
        self.shard = shard
        self.finish = finish
        self.begin = begin or (lambda batch: lambda: finish(batch))
        #: Run by the worker before the first batch comes (while the first model loads):
        #: one-time work that would otherwise take the GIL from generation.
        self.warm = warm
        #: Batches begun and not finished: two with a ``begin`` hook (overlap), else one.
        self.ahead = 2 if begin is not None else 1
        self.batch_size = batch_size
        self.progress = progress
        self.say = say or (lambda message: None)
        self.noun = noun
        self.stats = LoopStats()
        self._failure: BaseException | None = None
        self._stopping = False
        self._done: dict[str, int] = {}
        self._worker_ended = threading.Event()

    def run(self, groups: Sequence[Group]) -> LoopStats:
        work: queue.Queue[Batch | None] = queue.Queue(maxsize=QUEUE_DEPTH)
        worker = threading.Thread(
            target=self._work, args=(work,), name="glyphbench-worker", daemon=True
        )
        worker.start()
        last = next((group for group in reversed(groups) if group.jobs), None)
        try:
            for group in groups:
                if group.jobs:
                    self._run_group(group, work, final=group is last)
                self._raise_worker_failure()
        except KeyboardInterrupt as stop:
            self._interrupted(work, worker, stop)
            raise
        try:
            self._stop_worker(work, worker)
        except KeyboardInterrupt as stop:  # all generated, batches still being read and written
            self._interrupted(work, worker, stop)
            raise
        self._raise_worker_failure()
        return self.stats

    def _interrupted(
        self, work: queue.Queue[Batch | None], worker: threading.Thread, stop: KeyboardInterrupt
    ) -> None:
        """First Ctrl-C (or SIGTERM): finish the batch being written, drop the queued ones."""
        self._stopping = True  # the worker drops what is queued
        self.say(TERMINATED if isinstance(stop, Terminated) else INTERRUPTED)
        try:
            self._stop_worker(work, worker)
        except KeyboardInterrupt as again:
            quit_now(again.exit_code if isinstance(again, Terminated) else 130)

    def _stop_worker(self, work: queue.Queue[Batch | None], worker: threading.Thread) -> None:
        """Let the worker finish what it has and end (an extra end marker is harmless).

        Waits on an event, not ``worker.join()``: on Python 3.11 a join that Ctrl-C
        interrupted marks the thread as ended, so the next join returned at once and the
        run went down with its worker still in native code ("terminate called").
        """
        work.put(None)
        while not self._worker_ended.wait(0.2):
            pass

    # ---------------------------------------------------------------- producing
    def _run_group(
        self, group: Group, work: queue.Queue[Batch | None], *, final: bool = False
    ) -> None:
        stats = self.stats.groups.setdefault(group.name, GroupStats())
        started = time.perf_counter()
        try:
            producer = group.open()
        except Exception as exc:
            stats.load_error = exc
            what = escape(f"{self.noun} {group.name} failed to load:")
            self.say(f"[bold red]{what}[/] {escape(error_text('Load', exc))}")
            work.put(Batch(group, group.jobs, failure=exc, stage="Load", final=final))
            return
        stats.start = time.perf_counter()
        stats.load_s = stats.start - started
        if self.progress is not None:  # the group's clock starts now, not with the run
            self.progress(group.name, self._done.get(group.name, 0), len(group.jobs))
        try:
            self._produce_all(group, producer, stats, work, final=final)
        finally:
            producer.close()

    def _produce_all(
        self,
        group: Group,
        producer: Producer,
        stats: GroupStats,
        work: queue.Queue[Batch | None],
        *,
        final: bool = False,
    ) -> None:
        """Produce the group's batches; ``final``: the last group (its last batch is final)."""
        size = self.batch_size
        position = 0
        while position < len(group.jobs):
            self._raise_worker_failure()
            jobs = group.jobs[position : position + size]
            batch = Batch(group, jobs, producer, producer.prepare(jobs), size=len(jobs))
            batch.final = final and position + len(jobs) >= len(group.jobs)
            started = time.perf_counter()
            try:
                outputs = list(producer.produce(batch.inputs or []))
                if len(outputs) != len(jobs):
                    raise RuntimeError(
                        f"adapter returned {len(outputs)} images for {len(jobs)} requests"
                    )
            except Exception as exc:
                if is_oom(exc) and size > 1:
                    size = max(1, size // 2)
                    stats.oom_halvings += 1
                    self.say(escape(f"{group.name}: out of memory, batch size -> {size}"))
                    _free_accelerator_memory()
                    continue
                batch.failure, batch.stage = exc, "Generate"
            else:
                batch.outputs = outputs
            batch.seconds = time.perf_counter() - started
            work.put(batch)
            position += len(jobs)

    # ------------------------------------------------------------------ worker
    def _work(self, work: queue.Queue[Batch | None]) -> None:
        # Images are flushed once per part file, not one by one.
        try:
            if self.warm is not None:
                self._warm()
            with self.folder.batch_durability():
                self._work_batches(work)
        finally:
            self._worker_ended.set()

    def _warm(self) -> None:
        assert self.warm is not None
        try:
            self.warm()
        except BaseException as exc:  # surfaced in the main thread, as a batch's failure
            self._failure = self._failure or exc

    def _work_batches(self, work: queue.Queue[Batch | None]) -> None:
        """Finish batches in order; begin the next one first when it is already waiting.

        ``begin`` hands a batch's images to the image writer process; while the writer
        encodes the next batch, this thread reads, scores and writes the part file of
        the one before: a worker that has fallen behind catches up instead
        of adding the two times. At most two batches are begun and not finished (one
        without a ``begin`` hook: finishing then is all there is, and the memory bound
        stays what it was).
        """
        begun: collections.deque[tuple[Batch, Callable[[], Any]]] = collections.deque()
        ended = False
        while begun or not ended:
            if not begun or (len(begun) < self.ahead and not ended and not work.empty()):
                batch = work.get()
                if batch is None:
                    ended = True
                elif self._failure is None and not self._stopping:
                    self._begin(batch, begun)
                # else drain: the main thread is about to raise or was interrupted
                continue
            self._finish(*begun.popleft())

    def _begin(
        self, batch: Batch, begun: collections.deque[tuple[Batch, Callable[[], Any]]]
    ) -> None:
        try:
            begun.append((batch, self.begin(batch)))
        except BaseException as exc:  # surfaced in the main thread
            self._failure = self._failure or exc

    def _finish(self, batch: Batch, rest: Callable[[], pd.DataFrame | pa.Table]) -> None:
        """The rest of a begun batch and its part file (also when stopping: a begun batch is
        finished whole); after a failure, only the writer's answer is taken."""

        if self._failure is not None:  # take the writer's answer, write nothing more
            with contextlib.suppress(BaseException):
                rest()
            return
        try:
            rows = rest()
            if len(rows):  # a batch whose jobs were all skipped (spending cap) has none
                self.folder.write_part(rows, self.shard, batch.group.folder)
            self.stats.rows_written += len(rows)
            self.stats.errors += int(failed_mask(rows).sum())
            self._advance(batch)
        except BaseException as exc:  # surfaced in the main thread
            self._failure = self._failure or exc

    def _advance(self, batch: Batch) -> None:
        name = batch.group.name
        self._done[name] = self._done.get(name, 0) + len(batch.jobs)
        stats = self.stats.groups[name]
        stats.span_s = time.perf_counter() - stats.start
        if self.progress is not None:
            self.progress(name, self._done[name], len(batch.group.jobs))

    def _raise_worker_failure(self) -> None:
        if self._failure is not None:
            raise self._failure


@contextlib.contextmanager
def progress_bars(
    groups: Sequence[Group], console: Console, *, enabled: bool = True
) -> Iterator[ProgressFn]:
    """Progress bars, one per group with jobs (lines when not on a terminal:
    glyphbench.core.progress), and one for the whole run when several groups have jobs.

    A group's clock (elapsed, rate, time left) starts when its model has loaded, so a
    model's time left is its own; the run's time left adds each started model's
    (:func:`run_eta`) and says how many models are not timed yet. Yields the
    ``progress`` callback.
    """
    from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn

    bars = LineProgress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        EtaColumn(),
        console=console,
        disable=not enabled,
    )
    with_jobs = [group for group in groups if group.jobs]
    whole = None
    if len(with_jobs) > 1:
        total = sum(len(group.jobs) for group in with_jobs)
        whole = bars.add_task(RUN_TASK, total=total, eta="?")
    tasks = {
        group.name: bars.add_task(
            group.name, total=len(group.jobs) or None, visible=bool(group.jobs), start=False
        )
        for group in groups
    }
    clocks: dict[str, GroupClock] = {group.name: GroupClock(len(group.jobs)) for group in with_jobs}
    started: set[str] = set()

    def advance(name: str, done: int, total: int) -> None:
        clock = clocks.get(name)
        if clock is not None:
            _tick(clock, clocks, done)
            if clock.started is not None and (name not in started or clock.moved):
                started.add(name)
                bars.start_task(tasks[name], at=clock.started)
        bars.update(tasks[name], completed=done)
        if whole is not None:
            completed = sum(c.done for c in clocks.values())
            bars.update(whole, completed=completed, eta=run_eta(clocks.values()))

    with bars:
        yield advance


#: The description of the whole run's progress line.
RUN_TASK = "run (all models)"


@dataclass
class GroupClock:
    """One group's jobs, how many are done and when it started (None: not yet)."""

    total: int
    done: int = 0
    started: float | None = None
    #: When its last batch was done (``time.monotonic()``).
    last: float | None = None
    #: Whether the last tick moved ``started`` (its first batch waited for another's).
    moved: bool = False


def _tick(clock: GroupClock, clocks: dict[str, GroupClock], done: int) -> None:
    """Record a group's start (done 0, its model loaded) or a batch done.

    Rows are finished one batch after another: a model that starts while the worker
    still reads the previous model's last batches makes its first rows only after
    those. Its clock then starts when the other's last batch was done, so its rate and
    time left are its own (a fast model after a slow one is not timed from the slow
    one's backlog).
    """
    now = time.monotonic()
    clock.moved = False
    if clock.started is None:
        clock.started = now
    if done > clock.done and clock.done == 0:  # the group's first batch
        others = [c.last for c in clocks.values() if c is not clock and c.last is not None]
        backlog = max(others, default=clock.started)
        if backlog > clock.started:
            clock.started, clock.moved = backlog, True
    if done > clock.done:
        clock.last = now
    clock.done = done


def run_eta(clocks: Iterable[GroupClock], now: float | None = None) -> str:
    """The run's time left: each started group's jobs left at its own rate, summed; the
    groups not timed yet (not started, or started with nothing done) said as such.

    >>> run_eta([GroupClock(10, 10, 0.0), GroupClock(10, 5, 0.0), GroupClock(4)], now=10.0)
    '0:00:10 + 1 model not timed yet'
    >>> run_eta([GroupClock(10, 5, 0.0)], now=10.0), run_eta([GroupClock(3)], now=1.0)
    ('0:00:10', '? (1 model not timed yet)')
    """
    now = time.monotonic() if now is None else now
    seconds, untimed = 0.0, 0
    for clock in clocks:
        if clock.done >= clock.total:
            continue
        if clock.started is None or clock.done == 0 or now <= clock.started:
            untimed += 1
            continue
        seconds += (clock.total - clock.done) * (now - clock.started) / clock.done
    if untimed and not seconds:
        return f"? ({plural(untimed, 'model')} not timed yet)"
    text = str(timedelta(seconds=round(seconds)))
    return text + (f" + {plural(untimed, 'model')} not timed yet" if untimed else "")


#: What the first Ctrl-C prints (the batch being written completes, so its part file is whole).
INTERRUPTED = "interrupted: finishing the batch being written (Ctrl-C again quits now)"
TERMINATED = "terminated: finishing the batch being written (a second SIGTERM quits now)"


def quit_now(code: int = 130) -> None:
    """Leave the process at once (second Ctrl-C): flush the output, skip interpreter teardown."""
    with contextlib.suppress(Exception):
        sys.stderr.write("interrupted again: stopped now; run the same command to resume\n")
        sys.stderr.flush()
        sys.stdout.flush()
    os._exit(code)


def _free_accelerator_memory() -> None:
    import gc
    import sys

    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()
