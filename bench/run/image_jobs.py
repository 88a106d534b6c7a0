"""The benchmark's job list: one job per image, in a deterministic order.

Order: models in config order; within a model, prompts in the prompt set's
order, then seeds in config order, then sample indices 0..images_per_prompt-1.
Shards are the engine's (:class:`glyphbench.engine.Shard`): round-robin within each model.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from glyphbench.core.errors import InputError
from glyphbench.core.seeds import image_seed
from glyphbench.engine import Shard, take_shard
from glyphbench.run.config import GenerateSettings, ModelEntry, RunConfig, SuiteEntry
from glyphbench.suites.protocol import image_seed_rule

__all__ = ["Job", "Shard", "build_jobs", "model_jobs"]


@dataclass(frozen=True)
class Job:
    """One image to make: which model, which prompt (row of the prompt frame), which seed."""

    model: str  # the model's label
    prompt_id: str
    seed: int
    sample_index: int
    row: int  # position of the prompt in the prompt frame
    #: ``--seed-policy benchmark`` on a suite whose benchmark seeds every image with the
    #: run seed (TextCrafter, LeX-Art): the first sample's image seed is the seed itself.
    fixed_seed: bool = False

    @property
    def key(self) -> tuple[str, str, int, int]:
        """The results row key (glyphbench.core.schema.ROW_KEY order)."""
        return (self.model, self.prompt_id, self.seed, self.sample_index)

    @property
    def image_seed(self) -> int:
        if self.fixed_seed and self.sample_index == 0:
            return self.seed
        return image_seed(self.seed, self.prompt_id, self.sample_index)


def check_prompt_ids(frame: pd.DataFrame, source: str) -> list[str]:
    """The prompt ids as text; repeated ones are an :class:`InputError` naming ``source``.

    ``run`` checks this before writing anything; ``prompts validate`` reports the same
    repeats as ``duplicate`` findings.
    """
    ids: list[str] = frame["prompt_id"].astype(str).tolist()
    if len(set(ids)) != len(ids):
        dupes = sorted({i for i in ids if ids.count(i) > 1})[:3]
        raise InputError(source, f"prompt_id values repeat (e.g. {dupes}); ids must be unique")
    return ids


def model_jobs(
    entry: ModelEntry,
    frame: pd.DataFrame,
    generate: GenerateSettings,
    suite: SuiteEntry | None = None,
    source: str = "the prompts",
) -> list[Job]:
    """Every job of one model, in the documented order (``source`` names the prompts in
    an error)."""
    ids = check_prompt_ids(frame, source)

    fixed = image_seed_rule(generate.seed_policy, suite) == "fixed"
    label = entry.label  # parses the spec: once, not per job
    return [
        Job(label, prompt_id, seed, sample, row, fixed)
        for row, prompt_id in enumerate(ids)
        for seed in generate.seeds
        for sample in range(generate.images_per_prompt)
    ]


def build_jobs(
    config: RunConfig, frame: pd.DataFrame, shard: Shard | None = None
) -> dict[str, list[Job]]:
    """Model label -> this shard's jobs for that model (all jobs without ``shard``)."""
    jobs = {
        entry.label: model_jobs(entry, frame, config.generate, config.suite, config.prompts.source)
        for entry in config.models
    }
    return take_shard(jobs, shard or Shard())
