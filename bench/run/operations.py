"""Run and plan: the operations behind ``glyphbench run`` (and ``--dry-run``).

* :func:`run_benchmark` runs this process's shard of a config (resuming whatever
  is already in the output folder) and merges when every shard is done;
* :func:`plan_run` resolves a config without loading any weights (``--dry-run``).

The merge (:func:`merge_run`, ``glyphbench merge``) lives in :mod:`glyphbench.run.merge`
and the rescore (:func:`rescore_run`) in :mod:`glyphbench.run.rescore`; both are
importable from here too, as docs/running.md's Python API names them.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from glyphbench import prompts
from glyphbench.core.errors import InputError
from glyphbench.core.fingerprint import files_fingerprint, recorded_fingerprints
from glyphbench.core.io import atomic_open, checksum_path, read_table
from glyphbench.core.registry import Spec
from glyphbench.core.schema import ROW_KEY, failed_mask
from glyphbench.engine import RunFolder, Shard, start_reader
from glyphbench.engine.backlog import default_backlog
from glyphbench.models import check_prompts, get_model
from glyphbench.readers.scripts import check_reader_reads, reader_scripts
from glyphbench.run.config import ReadSettings, RunConfig, SuiteEntry
from glyphbench.run.image_jobs import build_jobs, check_prompt_ids
from glyphbench.run.made_elsewhere import check_files, files_choose_prompts, prompts_named_by_files
from glyphbench.run.merge import merge_run
from glyphbench.run.plan import api_caveats, api_cost, auto_device
from glyphbench.run.provenance import Distributed, detect_distributed, environment, now
from glyphbench.run.reader_claim import (
    claim_reader,
    probe_on_run,
    refuse_during_rescore,
    table_reader,
)
from glyphbench.run.rescore import rescore_run
from glyphbench.run.results import (
    PROMPTS,
    RESULTS,
    done_keys,
)
from glyphbench.run.shard import Runner
from glyphbench.suites.base import limit_per_subset
from glyphbench.suites.protocol import protocol_card, suite_prompts

if TYPE_CHECKING:
    from rich.console import Console

    from glyphbench.engine.backlog import SpawnedReaders
    from glyphbench.prompts.schema import PromptSet
    from glyphbench.readers.base import Reader
    from glyphbench.run.shard import ShardOutcome


#: The Python API docs/running.md names (merge and rescore live in their own modules).
__all__ = [
    "RunResult",
    "load_prompts",
    "merge_run",
    "plan_run",
    "prompt_source",
    "rescore_run",
    "run_benchmark",
]


@dataclass
class RunResult:
    """Where a run wrote, what this process did and, once merged, the results."""

    out: Path
    outcome: ShardOutcome
    results: pd.DataFrame | None  # None when other shards are still running


def load_prompts(config: RunConfig) -> PromptSet:
    """Select the config's prompts via :func:`glyphbench.prompts.select`."""
    source: str | PromptSet = prompt_source(
        config.prompts.source, config.read.reader, config.prompts.where
    )
    if files_choose_prompts(config.models, config.selection_given):  # images made elsewhere
        return prompts_named_by_files(config.models, str(source))
    chosen = config.prompts
    if config.suite is not None:  # a suite reads its benchmark's own files
        picked = prompts.select(
            suite_prompts(config.suite),
            where=chosen.where,
            sample=chosen.sample,
            stratify=chosen.stratify,
            seed=chosen.seed,
            sampler=chosen.sampler,
        )
        return limit_per_subset(picked, chosen.limit)  # --limit takes from every subset
    return prompts.select(
        source,
        where=chosen.where,
        sample=chosen.sample,
        stratify=chosen.stratify,
        seed=chosen.seed,
        limit=chosen.limit,
        sampler=chosen.sampler,
    )


def prompt_source(source: str, reader: str, where: str | None = None) -> str:
    """The source a run loads: ``default`` without ``lang`` gets the languages its reader reads.

    glyphbench's own set has an English and a Chinese part. A run that names neither
    (``--prompts default``) samples from the parts its reader can read, so an English
    reader (EasyOCR, the default) gets exactly the English set and a reader of Chinese
    gets both; ``default?lang=...`` or a ``--where`` on ``lang`` chooses explicitly
    (a reader that cannot read the choice is then refused).

    >>> prompt_source("default", "easyocr"), prompt_source("default", "rapidocr")
    ('default?lang=en', 'default?lang=all')
    >>> prompt_source("default?lang=zh", "easyocr"), prompt_source("csv:x.csv", "easyocr")
    ('default?lang=zh', 'csv:x.csv')
    >>> prompt_source("default", "easyocr", where="lang == 'zh'")
    'default?lang=all'

    """
    spec = Spec.parse(source)
    if spec.kind != "default" or "lang" in spec.options:
        return source
    reads = reader_scripts(reader)
    chosen = where is not None and "lang" in where
    lang = "all" if chosen or reads is None or "han" in reads else "en"
    joiner = "&" if "?" in source else "?"
    return f"{source}{joiner}lang={lang}"


def run_benchmark(
    config: RunConfig,
    *,
    config_text: str | None = None,
    config_name: str = "config.yaml",
    prompt_set: PromptSet | None = None,
    shard: str | None = None,
    reader: Reader | None = None,
    progress: bool = True,
    console: Console | None = None,
    read_later: bool = False,
    readers: Callable[[str], SpawnedReaders] | None = None,
    read_columns: Sequence[str] | None = None,
) -> RunResult:
    """Run (or resume) this process's shard of ``config``; merge when all shards are done.

    ``read_later``: write the images and rows but read nothing (``glyphbench read RUN``
    reads them afterwards, in worker processes or on other machines).
    ``read_columns``: the result holds only these columns of the merged table (see
    :func:`merge_run`).

    ``readers``: start the run's own reader processes for a reader spec (,
    :func:`glyphbench.run.read_workers.run_with_readers` passes them for
    ``config.read.workers``): generation writes as with ``read_later``, they read
    meanwhile, generation waits when too many images wait, and the merge comes after
    they have read every image.

    ``config_text`` is the config exactly as the user gave it (the YAML text, or
    the command line); it is saved verbatim as ``DIR/<config_name>``.

    Nothing is written before every input is checked: the config (specs resolved at
    load), the prompt selection, the output folder (another run's folder is refused
    unless it holds only a failed attempt) and the OCR engine (created here). Then the
    shard is locked for the process's work (a second process on it is refused) and
    run.json is created under the folder's manifest lock.
    """
    from rich.console import Console

    console = console or Console(stderr=True)
    folder = RunFolder(
        config.output.out,  # plain text: a path may hold "[...]", which markup would drop
        say=lambda message: console.print(  # one line in a log: a path is never broken
            message, highlight=False, markup=False, soft_wrap=True
        ),
    )
    if folder.root.exists() and not folder.root.is_dir():
        raise InputError(folder.root, "exists and is not a folder (--out must be a folder)")
    _refuse_a_foreign_out(folder, config, config_text)
    config = adopt_run_id(config, folder.manifest())
    dist = detect_distributed(shard)
    prompt_set = prompt_set if prompt_set is not None else load_prompts(config)
    check_selection(config, prompt_set)  # before anything is written
    check_device(config)
    check_reader_reads(config.read.reader, prompt_set.frame)  # refuse before writing
    check_files(config, prompt_set)  # images: files named nothing, or mostly missing
    check_prompts([e.to_spec() for e in config.models], prompt_set.frame, config.prompts.source)
    check_weights(config, prompt_set, folder, dist.shard)  # a model that cannot load here
    reader_spec = config.read.reader
    identity = run_identity(config, prompt_set, folder)
    try:
        _check_same_run(folder, identity)
        # A rescore may have re-read the table with another reader: rows made now use it.
        reader_spec = table_reader(folder.manifest()) or config.read.reader
    except DifferentRun:
        if not _failed_attempt(folder):
            raise
    if reader_spec != config.read.reader:
        check_reader_reads(reader_spec, prompt_set.frame)
    if readers is not None and (read_later or dist.shard.count > 1):
        what = "--read-later" if read_later else "--shard or several processes"
        raise InputError(
            "--read-workers",
            f"the run's own readers do not go with {what}: use `run --read-later` and "
            "`glyphbench read RUN [--shard I/N] [--follow]`",
        )
    spawned = readers(reader_spec) if readers is not None else None  # started: nothing written
    with contextlib.ExitStack() as stack:
        if spawned is not None:
            stack.callback(spawned.close)
        elif reader is None and not read_later and not folder.manifest().get("complete"):
            reader = _start_run_reader(reader_spec, config.read.reader, config.suite)
            probe_on_run(reader, reader_spec, folder.root, sample=True)
            if reader_spec != config.read.reader:
                console.print(
                    f"reading with {reader_spec} (this folder's results were re-read with it)",
                    highlight=False,
                    markup=False,
                )
        with folder.hold_shard(dist.shard.name):
            refuse_during_rescore(folder)
            with folder.locked():
                _claim_folder(
                    folder,
                    identity,
                    lambda: {
                        **_run_record(
                            config, prompt_set, config_text, config_name, folder.png_format
                        ),
                        "weights_fingerprint": identity["weights_fingerprint"],
                    },
                    prompt_set,
                    config_text,
                    config_name,
                )
                if not read_later:
                    claim_reader(folder, reader_spec, "this run")
                info = _start_shard(folder, dist)
            runner = Runner(
                config,
                prompt_set,
                folder=folder,
                shard=dist.shard,
                reader=reader,
                device=dist.device,
                progress=progress,
                console=console,
                read_now=not read_later and spawned is None,
            )
            if spawned is not None:  # the run's reader processes read while it generates
                outcome = _run_shard_reading(runner, spawned, info)
            else:
                outcome = runner.run()
            _finish_shard(folder, dist, info, outcome)
            results = _merge_when_done(folder, dist, read_columns)
    return RunResult(folder.root, outcome, results)


def _run_shard_reading(
    runner: Runner, spawned: SpawnedReaders, info: dict[str, Any]
) -> ShardOutcome:
    """Generate while the run's reader processes read; they have read every image at the end."""
    with spawned.reading(runner.scoring) as backlog:
        runner.backlog = backlog  # generation waits while too many images wait to be read
        outcome = runner.run()
    spawned.close()  # free the reader processes before the merge
    info["readers"] = {**spawned.facts(), **backlog.facts()}
    return outcome


def _start_run_reader(reader_spec: str, configured: str, suite: SuiteEntry | None) -> Reader:
    """The run's reader; when a suite's own reader cannot start, say how to run without it."""
    try:
        return start_reader(reader_spec)
    except InputError as error:
        if suite is None:
            raise
        error.problem += (
            f"; {configured!r} is the reader suite {suite.spec!r} prescribes: pass "
            "--ocr easyocr (or another installed reader) to run offline, and the report "
            "marks the numbers as read under a different protocol"
        )
        raise


class DifferentRun(InputError):
    """The output folder holds another run."""


#: The names a run saves its config under, as given (``glyphbench run``: a YAML config, or the
#: command line): ``config_name`` of :func:`run_benchmark`.
CONFIG_COPIES = ("config.yaml", "command.txt")


def run_inputs(config: RunConfig) -> list[Path]:
    """The files and folders a run reads that a user may keep in its ``--out``: the prompt
    file, the suite's data, an ``images:`` model's folder (or its manifest's folder, which
    holds the images it lists), the API cache.

    >>> config = RunConfig.model_validate(
    ...     {"models": ["images:runs/x/mine"], "prompts": "csv:runs/x/p.csv"})
    >>> [str(path) for path in run_inputs(config)]
    ['runs/x/p.csv', 'runs/x/mine']
    """
    given: list[str | None] = [Spec.parse(config.prompts.source).path]
    given += [config.suite.data if config.suite is not None else None, config.api.cache_dir]
    paths = [Path(path) for path in given if path]
    for entry in config.models:
        spec = Spec.parse(entry.spec)
        path = Path(spec.path)
        paths.append(path.parent if spec.kind == "images" and path.is_file() else path)
    return paths


def _refuse_a_foreign_out(folder: RunFolder, config: RunConfig, text: str | None) -> None:
    """The run's ``--out`` check (:meth:`RunFolder.refuse_foreign`), as the run and its plan
    make it."""
    folder.refuse_foreign("run", run_inputs(config), own=_run_start_files(folder.root, text))


def _run_start_files(root: Path, text: str | None) -> Callable[[Path], bool]:
    """Whether an entry of ``--out`` is what a run writes before its run.json
    (:func:`_write_run_start`: the config as given, then the prompts and their checksum): a
    shard starting beside another, or a run killed before run.json, leaves them there, and
    the config may then differ from this command's (another ``--device``, an edited file).
    Without the prompts, a file of this config's text, whatever its name, is the user's copy
    of the config kept beside the run."""
    data = text.encode("utf-8") if text is not None else None
    prompts = {PROMPTS, checksum_path(PROMPTS).name}
    started = (root / PROMPTS).is_file()  # a start's own files, whatever their text

    def is_start_file(entry: Path) -> bool:
        if started and (entry.name in prompts or entry.name in CONFIG_COPIES):
            return entry.is_file()
        try:
            if data is None or not entry.is_file() or entry.stat().st_size != len(data):
                return False
            return entry.read_bytes() == data
        except OSError:
            return False

    return is_start_file


def _failed_attempt(folder: RunFolder) -> bool:
    """True when the folder's run produced no usable row and nobody is writing it now."""
    if folder.busy_shards():
        return False
    rows = folder.read_parts(ROW_KEY)
    results = folder.root / RESULTS
    if not len(rows) and results.is_file():
        rows = read_table(results)
    return not bool((~failed_mask(rows)).any())


def _claim_folder(
    folder: RunFolder,
    identity: dict[str, object],
    record: Callable[[], dict[str, Any]],
    prompt_set: PromptSet,
    text: str | None,
    name: str,
) -> None:
    """Compare with run.json (under the manifest lock), start a failed attempt over, create it
    (``record``: run.json's first content)."""
    try:
        _check_same_run(folder, identity)
    except DifferentRun:
        if not _failed_attempt(folder):
            raise
        previous = folder.manifest().get("config_verbatim") or {}
        stale = [PROMPTS, RESULTS, *([previous["file"]] if previous.get("file") else [])]
        folder.clear(stale)
        folder.say(f"{folder.root}: its earlier run made no usable row; starting over")
    _write_run_start(folder, record, prompt_set, text, name)


def _start_shard(folder: RunFolder, dist: Distributed) -> dict[str, Any]:
    shard_json = folder.shard_json(dist.shard.name)
    previous = folder.shard_facts(shard_json)
    info: dict[str, Any] = {
        "shard": dist.shard.name,
        "launcher": dist.launcher,
        "device": dist.device,
        "attempts": [*previous.get("attempts", []), {"started_at": now()}],
        **_host(),
    }
    folder.write_json(shard_json, {**info, "finished": False})
    return info


def _finish_shard(
    folder: RunFolder, dist: Distributed, info: dict[str, Any], outcome: ShardOutcome
) -> None:
    info["attempts"][-1].update(
        finished_at=now(),
        rows_written=outcome.rows_written,
        errors=outcome.errors,
        skipped=outcome.skipped,
    )
    if outcome.spent_usd is not None or outcome.not_attempted:  # hosted APIs: the cap's story
        info["attempts"][-1].update(
            spent_usd=outcome.spent_usd,
            not_attempted=outcome.not_attempted,
            stop_reason=outcome.stop_reason or None,
        )
    folder.write_json(
        folder.shard_json(dist.shard.name),
        {
            **info,
            "finished": True,
            "finished_at": now(),
            "models": outcome.models,
            "model_errors": outcome.model_errors,
            "oom_halvings": outcome.oom_halvings,
            "timings": {
                label: {k: round(v, 3) for k, v in t.items()}
                for label, t in outcome.timings.items()
            },
        },
    )


def _host() -> dict[str, Any]:
    import socket

    return {"hostname": socket.gethostname()}


def _merge_when_done(
    folder: RunFolder, dist: Distributed, columns: Sequence[str] | None = None
) -> pd.DataFrame | None:
    if dist.state is not None:
        dist.barrier()  # every process has written its parts
        return merge_run(folder.root, folder=folder, read_columns=columns) if dist.is_main else None
    names = [Shard(i, dist.shard.count).name for i in range(dist.shard.count)]
    finished = [folder.read_json(folder.shard_json(name)).get("finished") for name in names]
    return merge_run(folder.root, folder=folder, read_columns=columns) if all(finished) else None


def _plan_readers(read: ReadSettings, batch_size: int) -> dict[str, int]:
    """The run's own reader processes and backlog, when it starts any."""
    if not read.workers:
        return {}
    backlog = read.backlog or default_backlog(read.workers, batch_size)
    return {"read_workers": read.workers, "read_backlog": backlog}


def _check_same_run(folder: RunFolder, identity: dict[str, object]) -> None:
    """Refuse to mix two different runs in one folder (resuming the same one is fine)."""
    if not folder.manifest_path.is_file() and folder.part_files():
        # run.json is written before any row: rows without it are a damaged folder, and
        # with nothing to compare, any other config would mix its rows with theirs
        raise DifferentRun(
            folder.manifest_path,
            "missing, but the folder holds rows (parts/): it is damaged; put run.json "
            "back, or use another --out",
        )
    problems = {
        "config_hash": "this folder holds a different run (its config differs); "
        "use another --out or the same config",
        "prompts.content_hash": "the selected prompts differ from those this run started with; "
        "use another --out",
    }

    def refuse(key: str, found: object) -> DifferentRun:
        if key == "weights_fingerprint":
            return DifferentRun(folder.manifest_path, _weights_changed(identity[key], found))
        if key == "run_id":  # the same run under another name: its rows would mix two ids
            return DifferentRun(
                folder.manifest_path,
                f"this folder's run is named {found!r}, not {identity['run_id']!r}; resume "
                f"it with --run-id {found} (or the config's run_id), or use another --out",
            )
        return DifferentRun(folder.manifest_path, problems[key])

    folder.check_same_run(identity, refuse)


def run_identity(config: RunConfig, prompt_set: PromptSet, folder: RunFolder) -> dict[str, object]:
    """What a folder's run.json must match for this run to resume it (:func:`_check_same_run`)."""
    return {
        "config_hash": config.config_hash(),
        "prompts.content_hash": prompt_set.content_hash,
        "run_id": config.resolved_run_id,  # the rows of one run carry one run id
        "weights_fingerprint": weights_fingerprints(
            config, folder.manifest(), folder.manifest_path
        ),
    }


def adopt_run_id(config: RunConfig, manifest: dict[str, Any]) -> RunConfig:
    """The config with the folder's run id when none was given and it is the same run.

    A run named with ``--run-id`` is resumed by the same command without it: the id is not
    part of the config hash, so the folder's run.json tells it. A different config (another
    hash), or an id given explicitly, is left to the identity check, which refuses a
    mismatch.
    """
    found = manifest.get("run_id")
    if config.output.run_id or not isinstance(found, str) or not found:
        return config
    if manifest.get("config_hash") != config.config_hash():
        return config
    output = config.output.model_copy(update={"run_id": found})
    return config.model_copy(update={"output": output})


def weights_fingerprints(
    config: RunConfig, manifest: dict[str, Any], where: Path | None = None
) -> dict[str, str]:
    """``{label: fingerprint}`` of each model whose weights load from a local path.

    Recorded in run.json; a resume whose local weights changed is refused, as their rows
    would describe two models under one label (:mod:`glyphbench.core.fingerprint`). Hub
    ids are pinned by their revision option, not here. Weights no longer on disk keep the
    recorded fingerprint (``manifest``: run.json): a finished model needs no weights, and
    one with images left fails its rows as when its folder is missing at the start.
    """
    labels = {entry.label for entry in config.models}
    recorded = recorded_fingerprints(manifest, "weights_fingerprint", where)
    prints = {label: value for label, value in recorded.items() if label in labels}
    for entry in config.models:
        try:
            paths = get_model(entry.to_spec()).local_weights()
        except Exception:  # an adapter that cannot be made fails in the run, as its rows
            continue
        if paths and all(path.exists() for path in paths):
            prints[entry.label] = _combined(files_fingerprint(path) for path in paths)
    return prints


def _combined(prints: Iterable[str]) -> str:
    """One fingerprint of several (a cascade's stages, its extra components), in order."""
    parts = list(prints)
    if len(parts) == 1:  # one folder: its own fingerprint, as run.json has always held it
        return parts[0]
    return "sha256:" + hashlib.sha256("\n".join(parts).encode("ascii")).hexdigest()


def _weights_changed(now_prints: object, then_prints: object) -> str:
    """The refusal of a resume whose local weights changed, naming the models."""
    now_prints = now_prints if isinstance(now_prints, dict) else {}
    then_prints = then_prints if isinstance(then_prints, dict) else {}
    changed = sorted(
        label
        for label in set(now_prints) | set(then_prints)
        if now_prints.get(label) != then_prints.get(label)
    )
    return (
        f"the local weights of {', '.join(changed)} changed since this run started (their "
        "files differ from those its rows were made with); put the old weights back to "
        "resume, or use another --out"
    )


def _write_run_start(
    folder: RunFolder,
    record: Callable[[], dict[str, Any]],
    prompt_set: PromptSet,
    text: str | None,
    name: str,
) -> None:
    """Write the config as given, the prompts and run.json (caller holds the manifest lock)."""
    if folder.manifest_path.is_file():
        return
    if text is not None:
        with atomic_open(folder.root / name, "w", encoding="utf-8") as handle:
            handle.write(text)
    # no run.json: prompts here are a start killed before it, maybe of another selection
    folder.write_table(prompt_set.frame, PROMPTS)
    folder.create_manifest(record())


def _run_record(
    config: RunConfig, prompt_set: PromptSet, text: str | None, name: str, png: Any
) -> dict[str, Any]:
    """What run.json records when the run starts: the config, models, prompts, versions."""
    return {
        "run_id": config.resolved_run_id,
        "config_hash": config.config_hash(),
        "config_verbatim": {"file": name if text is not None else None, "text": text},
        "config": config.model_dump(mode="json"),
        "models_requested": {
            e.label: {
                "spec": e.spec,
                "resolved_spec": e.to_spec().text,
                "is_control": e.is_control,
            }
            for e in config.models
        },
        "prompts": {
            "source": prompt_set.source,
            "version": prompt_set.version,
            "content_hash": prompt_set.content_hash,
            "count": len(prompt_set),
            "file": PROMPTS,
            **_named_by(prompt_set),
        },
        "started_at": now(),
        "finished_at": None,
        "png": png,
        **environment(),
        "protocol": protocol_card(config, **_card_counts(prompt_set)),
    }


def _named_by(prompt_set: PromptSet) -> dict[str, Any]:
    """``{"named_by": [labels]}`` when the prompts are those ``images:`` files name, else {}."""
    selection = prompt_set.meta.get("selection")
    named_by = selection.get("named_by") if isinstance(selection, dict) else None
    return {"named_by": named_by} if named_by else {}


def _card_counts(prompt_set: PromptSet) -> dict[str, int | None]:
    """The prompt counts of the protocol card (:mod:`glyphbench.suites.protocol`)."""
    full = prompt_set.meta.get("benchmark_prompts")
    return {
        "prompt_count": len(prompt_set),
        "benchmark_prompts": int(full) if isinstance(full, int) else None,
    }


def check_weights(
    config: RunConfig, prompt_set: PromptSet, folder: RunFolder, shard: Shard
) -> None:
    """Refuse, before anything is written, a model with images left to make whose weights
    are in no local folder or cache while the hub does not answer (or a package it needs is
    missing): the run would make the other models' images and fail all of its rows.
    ``run --dry-run`` lists the same problems (:func:`glyphbench.run.plan.unrunnable`)."""
    unrunnable = {}
    for entry in config.models:
        try:
            adapter = get_model(entry.to_spec())
        except Exception:  # an adapter that cannot even be made fails in the run, as its
            continue  # own failed rows (as in check_prompts)
        problem = adapter.weights_check()["problem"]
        if problem:
            unrunnable[entry.label] = problem
    if not unrunnable:  # the usual case: no scan of a resumed folder's rows for this
        return
    jobs = build_jobs(config, prompt_set.frame, shard)
    done = done_keys(folder)
    problems = [
        f"model {label} cannot run here: {problem}"
        for label, problem in unrunnable.items()
        # nothing left to make: its weights are not needed
        if not all(job.key in done for job in jobs[label])
    ]
    if problems:
        raise InputError(
            None,  # the models may come from --models or from the config's models:
            "; ".join(problems)
            + "; download the weights where the hub answers, give a local folder "
            "(diffusers:PATH) or leave the model out (`run --dry-run` checks every model)",
        )


def check_device(config: RunConfig) -> None:
    """Refuse ``--device cuda`` where no CUDA device is visible, before anything is written
    (the models' loads failed, as rows of a folder already made). Only diffusers pipelines
    run on it (controls draw, ``images:`` reads files, ``api:`` calls a service); a model
    given its own ``device`` option is checked when it loads."""
    wanted = config.generate.device
    on_device = [
        e
        for e in config.models
        if Spec.parse(e.spec).kind == "diffusers" and "device" not in e.to_spec().options
    ]
    if wanted.startswith("cuda") and on_device and auto_device() != "cuda":
        raise InputError(
            "--device",
            f"{wanted!r} asked for, but no CUDA device is visible here (torch without CUDA, "
            "no GPU, or CUDA_VISIBLE_DEVICES empty); use --device cpu, or auto",
        )


def check_selection(config: RunConfig, prompt_set: PromptSet) -> None:
    """Refuse a selection no run can use: no prompt at all, or one id twice (the run and its
    ``--dry-run`` both call this, so the plan never promises what the run refuses)."""
    source = prompt_set.source or config.prompts.source  # a suite's: not prompts.source
    if len(prompt_set) == 0:
        raise InputError(source, "the prompt selection is empty")
    check_prompt_ids(prompt_set.frame, source)


def plan_run(
    config: RunConfig,
    *,
    prompt_set: PromptSet | None = None,
    shard: str | None = None,
    config_text: str | None = None,
) -> dict[str, Any]:
    """The resolved plan of a run, without loading any model weights (``--dry-run``).
    ``config_text``: the config as given, as for :func:`run_benchmark`."""
    prompt_set = prompt_set if prompt_set is not None else load_prompts(config)
    check_selection(config, prompt_set)  # the run would refuse these: so does its plan
    check_device(config)
    dist_shard = Shard.parse(shard) if shard else Shard()
    folder = RunFolder(config.output.out)
    _refuse_a_foreign_out(folder, config, config_text)
    config = adopt_run_id(config, folder.manifest())
    try:  # a folder the run would refuse: so does its plan
        _check_same_run(folder, run_identity(config, prompt_set, folder))
    except DifferentRun:
        if not _failed_attempt(folder):
            raise
    jobs = build_jobs(config, prompt_set.frame, dist_shard)
    done = done_keys(folder)
    check_files(config, prompt_set)  # the run would refuse these: so does its plan
    models = []
    for entry in config.models:
        adapter = get_model(entry.to_spec())  # adapters load weights lazily: this reads no weights
        adapter.check_prompts(prompt_set.frame, config.prompts.source)  # as the run would refuse
        todo = [j for j in jobs[entry.label] if j.key not in done]
        model: dict[str, Any] = {
            "label": entry.label,
            "spec": entry.to_spec().text,
            "is_control": entry.is_control,
            "jobs": len(jobs[entry.label]),
            "remaining": len(todo),
            "images": f"{folder.root}/images/{entry.slug}/",
            "describe": adapter.describe(),
        }
        price = config.api.price_for(entry)
        if price is not None or Spec.parse(entry.spec).kind == "api":
            model["price_usd"] = price
            model["cost_usd"] = None if price is None else price * len(todo)
        caveats = api_caveats(model["describe"])
        if caveats:
            model["caveats"] = caveats
        weights = adapter.weights_check()
        if weights["source"] is not None or weights["problem"] is not None:
            model["weights"] = weights
        files_found = getattr(adapter, "files_found", None)
        if files_found is not None:  # images made elsewhere: look at what is there
            found = files_found([(j.prompt_id, j.seed, j.sample_index) for j in todo])
            model.update(remaining=found["found"], no_file=found["missing"])
        models.append(model)
    return {
        "run_id": config.resolved_run_id,
        "out": str(folder.root),
        "shard": dist_shard.name,
        "prompts": {
            "source": prompt_set.source,
            "count": len(prompt_set),
            "content_hash": prompt_set.content_hash,
            "version": prompt_set.version,
            **_named_by(prompt_set),
        },
        "seeds": config.generate.seeds,
        "images_per_prompt": config.generate.images_per_prompt,
        "batch_size": config.generate.batch_size,
        "device": config.generate.device,
        **({"auto_device": auto_device()} if config.generate.device == "auto" else {}),
        "ocr": config.read.reader,
        **_plan_readers(config.read, config.generate.batch_size),
        "protocol": protocol_card(config, **_card_counts(prompt_set)),
        "models": models,
        "api": {"max_usd": config.api.max_usd, **api_cost(models)},
        "outputs": {
            "run_json": str(folder.manifest_path),
            "results": str(folder.root / RESULTS),
            "images": str(folder.root / "images"),
        },
    }
