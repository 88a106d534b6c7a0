"""Runs of ``images:`` models (images made elsewhere): which prompts, and enough files?

Two rules, both applied before anything is written:

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
from glyphbench.run.config import GenerateSettings, ModelEntry, RunConfig, SuiteEntry
from glyphbench.run.image_jobs import model_jobs
from glyphbench.run.shard import suite_context

if TYPE_CHECKING:
    from glyphbench.models.images import ImagesModel, Matching
    from glyphbench.prompts.schema import PromptSet


def images_entries(models: list[ModelEntry]) -> list[ModelEntry]:
    """The ``images:`` models among ``models``."""
    return [entry for entry in models if Spec.parse(entry.spec).kind == "images"]


def files_choose_prompts(models: list[ModelEntry], selection_given: list[str]) -> bool:
    """True when the prompts are those the files name: an ``images:`` model, no selection
    (``selection_given``: :attr:`RunConfig.selection_given`).

    >>> config = RunConfig.from_mapping({"models": ["control:blank"]})
    >>> files_choose_prompts(config.models, config.selection_given)
    False
    """
    return bool(images_entries(models)) and not selection_given


def _adapter(entry: ModelEntry) -> ImagesModel:
    adapter = get_model(entry.to_spec())
    assert isinstance(adapter, Images)
    return adapter


def prompts_named_by_files(models: list[ModelEntry], source: str) -> PromptSet:
    """The prompts of ``source`` whose ids the ``images:`` models' files name."""

    adapters = {entry.label: _adapter(entry) for entry in images_entries(models)}
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
    for entry in images_entries(config.models):
        jobs = model_jobs(entry, frame, config.generate, config.suite, config.prompts.source)
        context = RunContext(
            root=config.output.folder,
            run_id=config.resolved_run_id,
            expected=tuple((job.prompt_id, job.seed, job.sample_index) for job in jobs),
            **suite_context(config.suite, frame),
        )
        adapter = _adapter(entry)
        matching = adapter.match(context)  # no file at all: InputError naming the files
        found, missing = len(matching.files), len(matching.missing)
        if missing > found:
            todo = _what_to_do(config.selection_given, config.suite, config.generate)
            raise InputError(entry.spec, f"{_mostly_missing(prompt_set, matching)}; {todo}")
        counts[entry.label] = {"found": found, "missing": missing}
    return counts


def _mostly_missing(prompt_set: PromptSet, matching: Matching) -> str:
    """The problem of a run whose expected images mostly have no file."""
    found, missing = len(matching.files), len(matching.missing)
    return (
        f"{missing} of {found + missing} expected images have no file ({found} found) for "
        f"{len(prompt_set)} prompts from {prompt_set.source}"
    )


def _what_to_do(
    selection_given: list[str], suite: SuiteEntry | None, generate: GenerateSettings
) -> str:
    """What to do about images mostly missing: choose other prompts, seeds or indices."""
    given = [f"--{key}" for key in selection_given if key != "suite"]
    if suite is not None:
        return "select the subset and prompts the files were made for (--suite NAME:SUBSET)"
    if given:
        return (
            f"leave out {'/'.join(given)} to score the prompts the files name, or give the "
            "prompt file the images were made from (--prompts csv:FILE)"
        )
    # the prompts are those the files name: the seeds or indices are missing
    return (
        f"the run expects seeds {','.join(map(str, generate.seeds))} x "
        f"{generate.images_per_prompt} "
        "per prompt: give the --seeds and --images-per-prompt the files were made with"
    )
