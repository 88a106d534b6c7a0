"""The job list: jobs grouped by model or codec, in run order, split into shards.

A job is whatever one output needs (a prompt and seed, an image); the engine only
needs its group and, for resuming, its key. Groups keep the run's order (models or
codecs in config order) and so do the jobs within a group.

Sharding (``--shard i/N`` or ``accelerate launch``) is round-robin *within each
group*: shard ``i`` takes jobs ``i, i+N, i+2N, ...`` of every group. So every process
loads every model once, each gets a balanced share of every model, and the shards are
disjoint and together cover all jobs.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import TypeVar

from glyphbench.core.errors import InputError

J = TypeVar("J")


@dataclass(frozen=True)
class Shard:
    """Shard ``index`` of ``count`` (0-based)."""

    index: int = 0
    count: int = 1

    @classmethod
    def parse(cls, text: str) -> Shard:
        """``"1/4"`` -> Shard(index=1, count=4).

        >>> Shard.parse("1/4")
        Shard(index=1, count=4)
        """
        head, sep, tail = text.partition("/")
        try:
            index, count = int(head), int(tail)
        except ValueError:
            index, count = -1, 0
        if not sep or count < 1 or not 0 <= index < count:
            raise InputError(None, f"--shard must be I/N with 0 <= I < N, got {text!r}")
        return cls(index, count)

    @property
    def name(self) -> str:
        """Folder name of this shard's part files, e.g. ``shard-1-of-4``."""
        return f"shard-{self.index}-of-{self.count}"

    def take(self, jobs: Sequence[J]) -> list[J]:
        """This shard's jobs of one group.

        >>> Shard(1, 3).take(list("abcdefg"))
        ['b', 'e']
        """
        return list(jobs[self.index :: self.count])


def take_shard(groups: Mapping[str, Sequence[J]], shard: Shard) -> dict[str, list[J]]:
    """Group -> this shard's jobs of that group (round-robin within each group)."""
    return {name: shard.take(jobs) for name, jobs in groups.items()}


def remaining(
    groups: Mapping[str, Sequence[J]],
    done: Collection[Hashable],
    key: Callable[[J], Hashable],
) -> dict[str, list[J]]:
    """Group -> the jobs whose key is not in ``done``, in order (what a resumed run does).

    >>> remaining({"m": [1, 2, 3]}, {(2,)}, key=lambda job: (job,))
    {'m': [1, 3]}
    """
    return {name: [job for job in jobs if key(job) not in done] for name, jobs in groups.items()}
