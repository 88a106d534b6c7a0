"""Attributed prompt sets: load a source, compute attributes, select and sample.

Public API (imports are deferred so that ``import prompts`` stays cheap):

* :func:`load_prompt_set` (spec) -> :class:`~glyphbench.prompts.schema.PromptSet`
* :func:`select` (spec or PromptSet, where=, config=, sample=, stratify=, seed=, limit=, floor=,
  sampler=)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from glyphbench.prompts.selection import select
    from glyphbench.prompts.sources import load_prompt_set

__all__ = ["load_prompt_set", "select"]


def __getattr__(name: str) -> Any:
    # Lazy so that importing prompts stays cheap; the functions keep their own docstrings.
    if name == "load_prompt_set":
        from glyphbench.prompts.sources import load_prompt_set

        return load_prompt_set
    if name == "select":
        from glyphbench.prompts.selection import select

        return select
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
