"""The job list: one job per image, in a deterministic order, and its shards.

Order: models in config order; within a model, prompts in the prompt set's
order, then seeds in config order, then sample indices 0..images_per_prompt-1.

Sharding (``--shard i/N`` or ``accelerate launch``) is round-robin *within each
model*: shard ``i`` takes jobs ``i, i+N, i+2N, ...`` of every model. So every
process loads every model once, each gets a balanced share of every model, and
the shards are disjoint and together cover all jobs.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from bench.config import ModelEntry, RunConfig
from bench.errors import InputError
from bench.seeds import image_seed


@dataclass(frozen=True)
class Job:
    """One image to make: which model, which prompt (row of the prompt frame), which seed."""

    model: str  # the model's label
    prompt_id: str
    seed: int
    sample_index: int
    row: int  # position of the prompt in the prompt frame

    @property
    def key(self) -> tuple[str, str, int, int]:
        """The results row key (bench.schema.ROW_KEY order)."""
        return (self.model, self.prompt_id, self.seed, self.sample_index)

    @property
    def image_seed(self) -> int:
        return image_seed(self.seed, self.prompt_id, self.sample_index)


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

    def take(self, jobs: list[Job]) -> list[Job]:
        return jobs[self.index :: self.count]


def model_jobs(entry: ModelEntry, frame: pd.DataFrame, config: RunConfig) -> list[Job]:
    """Every job of one model, in the documented order."""
    ids = frame["prompt_id"].astype(str).tolist()
    if len(set(ids)) != len(ids):
        dupes = sorted({i for i in ids if ids.count(i) > 1})[:3]
        raise InputError(
            config.prompts, f"prompt_id values repeat (e.g. {dupes}); ids must be unique"
        )
    return [
        Job(entry.label, prompt_id, seed, sample, row)
        for row, prompt_id in enumerate(ids)
        for seed in config.seeds
        for sample in range(config.images_per_prompt)
    ]


def build_jobs(
    config: RunConfig, frame: pd.DataFrame, shard: Shard = Shard()
) -> dict[str, list[Job]]:
    """Model label -> this shard's jobs for that model."""
    return {entry.label: shard.take(model_jobs(entry, frame, config)) for entry in config.models}
