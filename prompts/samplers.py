"""Samplers: the ``samplers`` plug-ins of :data:`glyphbench.core.registry.PLUGINS`.

A sampler draws ``n`` prompts from a source (a lazy pool or a materialised set),
optionally stratified by columns, reproducibly from a seed. :func:`glyphbench.prompts.select`
and a run's ``sampler:`` setting name one by spec; the default is ``stratified``.

``stratified[?floor=N]``
    Each stratum first gets ``min(floor, its size)`` rows (``floor`` defaults to 1);
    the rest is shared in proportion to stratum size (largest remainder). The draw
    within a stratum is seeded by ``(seed, stratum key)``, so it does not depend on
    the other strata. On a pool it uses index arithmetic and never builds the full
    cross product (see :mod:`glyphbench.prompts.stratify`).

Importing this module is cheap: pandas and the selection code load when sampling.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from pydantic import Field

from glyphbench.core.registry import Options, Spec, register
from glyphbench.prompts.pool import PromptPool
from glyphbench.prompts.schema import PromptSet
from glyphbench.prompts.stratify import sample_frame, sample_pool

if TYPE_CHECKING:
    from glyphbench.prompts.pool import PromptPool
    from glyphbench.prompts.schema import PromptSet

#: The sampler a selection uses when none is named.
DEFAULT_SAMPLER = "stratified"


class Sampler(Protocol):
    """Draws ``n`` rows of ``source``, stratified by ``stratify`` columns, from ``seed``."""

    def sample(
        self, source: PromptPool | PromptSet, n: int, stratify: Sequence[str], seed: int
    ) -> PromptSet: ...


class StratifiedOptions(Options):
    """Options of the ``stratified`` sampler."""

    floor: int = Field(
        default=1, ge=0, description="rows each stratum gets first (all of it when it is smaller)"
    )


class StratifiedSampler:
    """Stratified sampling with a per-stratum floor (see the module docstring)."""

    def __init__(self, options: StratifiedOptions | None = None) -> None:
        self.floor = (options or StratifiedOptions()).floor

    def sample(
        self, source: PromptPool | PromptSet, n: int, stratify: Sequence[str], seed: int
    ) -> PromptSet:

        if isinstance(source, PromptPool):
            sampled = sample_pool(source, n, stratify, seed, self.floor)
            if sampled is not None:
                return sampled
            source = source.to_prompt_set()  # a stratify column only whole rows have
        frame = sample_frame(source.frame, n, stratify, seed, self.floor)
        return PromptSet(
            frame, source=source.source, version=source.version, meta=dict(source.meta)
        )


@register(
    "samplers",
    "stratified",
    options=StratifiedOptions,
    usage="stratified[?floor=N]",
    summary="Stratified sample: a floor per stratum, the rest in proportion to stratum size.",
)
def create_stratified(spec: Spec, options: StratifiedOptions) -> StratifiedSampler:
    return StratifiedSampler(options)
