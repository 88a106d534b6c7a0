"""Progress, one library (rich) everywhere: bars on a terminal, lines elsewhere.

On a terminal :class:`LineProgress` is rich's :class:`~rich.progress.Progress`
(live bars). When the console is not a terminal (output piped to a file, a CI
log, a job array's log), live bars print nothing until the end; there it prints
one plain line per task instead whenever another :data:`STEP` of the total is
done or :data:`EVERY_S` seconds have passed, and when the task completes::

    control:render: 40/120 (33%), 0:00:12 elapsed

:func:`track` wraps an iterable the same way (what ``tqdm(iterable)`` did).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Sized
from datetime import timedelta
from typing import Any, TypeVar

from rich.console import Console
from rich.progress import Progress, Task, TaskID, TimeRemainingColumn
from rich.text import Text

T = TypeVar("T")

#: Fraction of a task's total between two progress lines when not on a terminal.
STEP = 0.10
#: Seconds between two progress lines of a task (also for tasks without a total).
EVERY_S = 30.0
#: Seconds a task must have run before its rate is stated.
MIN_RATE_S = 0.5


class LineProgress(Progress):
    """rich's Progress; on a non-terminal console, line-by-line progress instead of bars.

    >>> import io
    >>> console = Console(file=io.StringIO(), width=120)  # not a terminal
    >>> with LineProgress(console=console) as progress:
    ...     task = progress.add_task("reading", total=4)
    ...     for _ in range(4):
    ...         progress.advance(task)
    >>> [line.split(",")[0] for line in console.file.getvalue().splitlines()]
    ['reading: 1/4 (25%)', 'reading: 2/4 (50%)', 'reading: 3/4 (75%)', 'reading: 4/4 (100%)']
    """

    def __init__(
        self,
        *columns: Any,
        console: Console | None = None,
        disable: bool = False,
        step: float = STEP,
        every_s: float = EVERY_S,
        **options: Any,
    ) -> None:
        console = console or Console(stderr=True)
        self.lines = not disable and not console.is_terminal
        super().__init__(*columns, console=console, disable=disable or self.lines, **options)
        self._step = step
        self._every_s = every_s
        self._said: dict[TaskID, tuple[float, float]] = {}  # task -> (fraction, time) last said
        self._start: dict[TaskID, tuple[float, float]] = {}  # task -> (completed, time) at start

    def add_task(self, description: str, *args: Any, **fields: Any) -> TaskID:
        """A task; with ``start=False`` its clock (elapsed, rate, time left) starts only at
        :meth:`start_task`: a model's task starts when that model does, not with the run."""
        task_id = super().add_task(description, *args, **fields)
        if fields.get("start", True):
            self._start[task_id] = (float(fields.get("completed", 0) or 0), time.monotonic())
        return task_id

    def start_task(self, task_id: TaskID, at: float | None = None) -> None:
        """Start the task's clock now, or at ``at`` (a ``time.monotonic()`` before now)."""
        super().start_task(task_id)
        with self._lock:
            task = self._tasks[task_id]
            if at is not None:
                task.start_time = at
            done = task.completed
        self._start[task_id] = (float(done), time.monotonic() if at is None else at)

    def update(self, task_id: TaskID, **changes: Any) -> None:
        super().update(task_id, **changes)
        self._maybe_say(task_id)

    def advance(self, task_id: TaskID, advance: float = 1) -> None:
        super().advance(task_id, advance)
        self._maybe_say(task_id)

    def _maybe_say(self, task_id: TaskID) -> None:
        if not self.lines:
            return
        with self._lock:
            task = self._tasks[task_id]
            done, total, visible = task.completed, task.total, task.visible
            description, elapsed = task.description, task.elapsed or 0.0
            fields = dict(task.fields)
        fraction = done / total if total else 0.0
        last_fraction, last_time = self._said.get(task_id, (0.0, time.monotonic()))
        now = time.monotonic()
        if task_id not in self._said and task_id in self._start:
            first, started = self._start[task_id]
            if now - started < MIN_RATE_S:  # the task was added after its first batch was
                self._start[task_id] = (done, now)  # made: that batch's items do not count
        finished = total is not None and total > 0 and done >= total and last_fraction < 1.0
        stepped = bool(total) and fraction - last_fraction >= self._step - 1e-9
        waited = now - last_time >= self._every_s and done > 0
        if not visible or not (finished or stepped or waited):
            self._said.setdefault(task_id, (last_fraction, last_time))
            return
        self._said[task_id] = (fraction if total else 0.0, now)
        count = f"{done:.0f}/{total:.0f} ({100 * fraction:.0f}%)" if total else f"{done:.0f}"
        first, started = self._start.get(task_id, (0.0, now - elapsed))
        spent = str(timedelta(seconds=int(now - started)))  # since the task's own start
        pace = rate_eta(done - first, now - started, (total - done) if total else None)
        if "eta" in fields:  # a task whose time left its owner works out (a whole run's)
            pace = f", ETA {fields['eta']}"
        self.console.print(  # one line, however wide: a log is read by lines
            f"{description}: {count}, {spent} elapsed{pace}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )


class EtaColumn(TimeRemainingColumn):
    """rich's time-remaining column, or a task's own ``eta`` field where it has one."""

    def render(self, task: Task) -> Text:
        if "eta" in task.fields:
            return Text(str(task.fields["eta"]), style="progress.remaining")
        return super().render(task)


def rate_eta(done: float, seconds: float, left: float | None) -> str:
    """``", 3.33/s, ETA 0:00:24"``: the average rate and the time ``left`` items take at it.

    >>> rate_eta(40, 12.0, 80)
    ', 3.33/s, ETA 0:00:24'
    >>> rate_eta(3, 60.0, None), rate_eta(0, 5.0, 10), rate_eta(4, 0.001, 21)
    (', 3/min', ', ?/s, ETA ?', ', ?/s, ETA ?')
    >>> rate_eta(1234, 1.0, 0)
    ', 1234/s, ETA 0:00:00'
    """
    if done <= 0 or seconds < MIN_RATE_S:  # too soon for a rate (a task added late, say)
        eta = "" if left is None else ", ETA 0:00:00" if left <= 0 else ", ETA ?"
        return ", ?/s" + eta
    per_s = done / seconds
    if per_s >= 100:
        rate = f"{per_s:.0f}/s"
    else:
        rate = f"{per_s:.3g}/s" if per_s >= 1 else f"{per_s * 60:.3g}/min"
    if left is None:
        return f", {rate}"
    return f", {rate}, ETA {timedelta(seconds=round(max(left, 0) / per_s))}"


class Ticker:
    """A callback per item (a million captions) that tells ``progress`` every ``every`` items.

    >>> import io
    >>> progress = LineProgress(console=Console(file=io.StringIO()))
    >>> tick = Ticker(progress, progress.add_task("captions", total=None), every=1000)
    >>> for _ in range(2500):
    ...     tick()
    >>> progress.tasks[0].completed, tick.close(), progress.tasks[0].completed
    (2000, None, 2500)
    """

    def __init__(self, progress: Progress, task: TaskID, every: int = 1000) -> None:
        self.progress, self.task, self.every, self.count = progress, task, every, 0

    def __call__(self) -> None:
        self.count += 1
        if self.count % self.every == 0:
            self.progress.update(self.task, completed=self.count)

    def close(self) -> None:
        """Tell the final count."""
        self.progress.update(self.task, completed=self.count)


def track(
    items: Iterable[T],
    description: str,
    *,
    total: int | None = None,
    disable: bool = False,
    console: Console | None = None,
) -> Iterator[T]:
    """Iterate ``items`` with a progress bar (lines when not on a terminal)."""
    if total is None and isinstance(items, Sized):
        total = len(items)
    with LineProgress(console=console, disable=disable) as progress:
        task = progress.add_task(description, total=total)
        for item in items:
            yield item
            progress.advance(task)
