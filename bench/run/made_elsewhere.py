"""Runs of ``images:`` models (images made elsewhere): which prompts, and enough files?

Two rules, both applied before anything is written (issue 33):

* **No prompt selection given** (none of ``prompts``, ``where``, ``sample``, ``limit``,
  ``suite`` in the config file or the flags: :attr:`RunConfig.selection_given`): the
  prompts are those the files name. The source is still the default one (``default``,
  in the languages the reader reads), so the prompt text and attributes come from it;
  only the rows whose ``prompt_id`` a file (or a manifest row) names are kept, in the
  source's order. The plan and run.json (``prompts.meta.selection.named_by``) say so.
* **Every run**: an ``images:`` model whose files name no image of the run is refused
  (naming the files it found), and so is one whose expected images are mostly missing
  (more missing than found), naming how many and the selection to use. A run where
  fewer are missing goes ahead; each missing image is a failed row (``Missing: ...``).

:func:`check_files` matches the names only; decoding each file is the run's first step
(:meth:`glyphbench.models.images.ImagesModel.bind_run`), which names unreadable files.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from glyphbench.core.errors import InputError
from glyphbench.core.registry import Spec
from glyphbench.models import get_model
from glyphbench.models.base import RunContext
from glyphbench.models.images import ImagesModel as Images
from glyphbench.prompts.selection import select_ids
from glyphbench.run.config import ModelEntry, RunConfig
from glyphbench.run.image_jobs import model_jobs
from glyphbench.run.shard import suite_context

if TYPE_CHECKING:
    from glyphbench.models.images import ImagesModel, Matching
    from glyphbench.prompts.schema import PromptSet


def images_entries(config: RunConfig) -> list[ModelEntry]:
    """The config's ``images:`` models."""
    return [entry for entry in config.models if Spec.parse(entry.spec).kind == "images"]


def files_choose_prompts(config: RunConfig) -> bool:
    """True when the prompts are those the files name: an ``images:`` model, no selection.

    >>> files_choose_prompts(RunConfig.from_mapping({"models": ["control:blank"]}))
    False
    """
    return bool(images_entries(config)) and not config.selection_given


def _adapter(entry: ModelEntry) -> ImagesModel:
    adapter = get_model(entry.to_spec())
    assert isinstance(adapter, Images)
    return adapter


def prompts_named_by_files(config: RunConfig, source: str) -> PromptSet:
    """The prompts of ``source`` whose ids the ``images:`` models' files name."""

    adapters = {entry.label: _adapter(entry) for entry in images_entries(config)}
    names: set[str] = set()
    for adapter in adapters.values():
        names |= adapter.named_ids()
    chosen = select_ids(source, names)
    if not len(chosen):
        first = next(iter(adapters.values()))
        raise InputError(
            first.spec,
            f"no file in {first.source} names a prompt of {source} (files are named "
            f"<prompt_id>[_s<seed>][_i<index>].png); {first.unused_files()}; to score other "
            "prompts give them with --prompts csv:FILE",
        )
    chosen.meta["selection"] = {"named_by": sorted(adapters)}
    return chosen


def check_files(config: RunConfig, prompt_set: PromptSet) -> dict[str, dict[str, int]]:
    """Refuse ``images:`` models with no file or mostly missing files; their counts otherwise.

    Returns, per ``images:`` label, ``{"found": N, "missing": M}`` over every image the
    run expects (all shards).
    """

    counts: dict[str, dict[str, int]] = {}
    frame = prompt_set.frame
    for entry in images_entries(config):
        expected = tuple(
            (job.prompt_id, job.seed, job.sample_index) for job in model_jobs(entry, frame, config)
        )
        context = RunContext(
            root=config.out_dir,
            run_id=config.resolved_run_id,
            expected=expected,
            **suite_context(config, frame),
        )
        adapter = _adapter(entry)
        matching = adapter.match(context)  # no file at all: InputError naming the files
        found, missing = len(matching.files), len(matching.missing)
        if missing > found:
            raise InputError(entry.spec, mostly_missing(config, prompt_set, matching))
        counts[entry.label] = {"found": found, "missing": missing}
    return counts


def mostly_missing(config: RunConfig, prompt_set: PromptSet, matching: Matching) -> str:
    """The problem of a run whose expected images mostly have no file, with what to do."""
    found, missing = len(matching.files), len(matching.missing)
    total = found + missing
    head = (
        f"{missing} of {total} expected images have no file ({found} found) for "
        f"{len(prompt_set)} prompts from {prompt_set.source}"
    )
    given = [f"--{key}" for key in config.selection_given if key != "suite"]
    if config.suite is not None:
        todo = "select the subset and prompts the files were made for (--suite NAME:SUBSET)"
    elif given:
        todo = (
            f"leave out {'/'.join(given)} to score the prompts the files name, or give the "
            "prompt file the images were made from (--prompts csv:FILE)"
        )
    else:  # the prompts are those the files name: the seeds or indices are missing
        todo = (
            f"the run expects seeds {','.join(map(str, config.seeds))} x "
            f"{config.images_per_prompt} "
            "per prompt: give the --seeds and --images-per-prompt the files were made with"
        )
    return f"{head}; {todo}"
