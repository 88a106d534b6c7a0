"""Attributed prompt sets: load a source, compute attributes, select and sample.

Public API (imports are deferred so that ``import prompts`` stays cheap):

* :func:`load_prompt_set` (spec) -> :class:`~prompts.schema.PromptSet`
* :func:`select` (spec or PromptSet, where=, config=, sample=, stratify=, seed=, limit=, floor=,
  sampler=)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from prompts.schema import PromptSet

__all__ = ["load_prompt_set", "select"]


def load_prompt_set(spec: str) -> PromptSet:
    """Load a source spec (``default``, ``textinvision:DIR``, ``csv:PATH``, ...), rows built.

    Sources are ``sources`` plug-ins of :data:`bench.registry.PLUGINS` (see :mod:`prompts.sources`).
    """
    from prompts.sources import load_prompt_set as _load

    return _load(spec)


def select(
    spec_or_promptset: Any,
    *,
    where: str | None = None,
    config: Any = None,
    sample: int | None = None,
    stratify: Sequence[str] | str | None = None,
    seed: int = 0,
    limit: int | None = None,
    floor: int = 1,
    sampler: str | None = None,
) -> PromptSet:
    """Select/sample prompts; see :func:`prompts.selection.select` for the rules.

    ``select("default", sample=40, stratify=["prompt_type", "group"], seed=0)``
    never builds the default set's full cross product; ``sampler`` names a sampler
    plug-in (``"stratified?floor=2"``), by default ``stratified`` with ``floor``.
    """
    from prompts.selection import select as _select

    return _select(
        spec_or_promptset,
        where=where,
        config=config,
        sample=sample,
        stratify=stratify,
        seed=seed,
        limit=limit,
        floor=floor,
        sampler=sampler,
    )
