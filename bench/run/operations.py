"""Run, merge, rescore and plan: the operations behind ``glyphbench run/merge/rescore``.

* :func:`run_benchmark` runs this process's shard of a config (resuming whatever
  is already in the output folder) and merges when every shard is done;
* :func:`merge_run` merges all part files into ``results.parquet`` and
  completes ``run.json`` (``glyphbench merge DIR``);
* :func:`rescore_run` re-runs OCR and/or scoring over existing images;
* :func:`plan_run` resolves a config without loading any weights (``--dry-run``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from bench.core.errors import InputError
from bench.core.io import read_table
from bench.core.registry import Spec
from bench.core.schema import ROW_KEY, failed_mask, generated_mask
from bench.engine import RunFolder, Shard, start_reader
from bench.engine.lock import FolderLock
from bench.run.config import RunConfig
from bench.run.image_jobs import build_jobs, check_prompt_ids
from bench.run.made_elsewhere import check_files, files_choose_prompts
from bench.run.plan import api_caveats, api_cost, auto_device
from bench.run.provenance import Distributed, detect_distributed, environment, now
from bench.run.results import (
    PROMPTS,
    RESULTS,
    conform_results,
    done_keys,
    read_results,
    write_rows,
)

if TYPE_CHECKING:
    from rich.console import Console

    from bench.engine.backlog import Backlog, SpawnedReaders
    from bench.readers.base import Reader
    from bench.run.reading_store import ReadingStore
    from bench.run.shard import ShardOutcome
    from prompts.schema import PromptSet


#: The lock a rescore holds (so two rescores, or a rescore and a run, never mix).
RESCORE_LOCK = "rescore"
#: run.json's record of the reader the results table is read with (issue 25): part of the
#: table's identity; ``run`` and ``read`` use it and refuse another, a rescore changes it.
READER_KEY = "reader"


def table_reader(meta: Mapping[str, Any]) -> str | None:
    """The reader spec the run's results are read with, when one has read them."""
    value = meta.get(READER_KEY)
    return value if isinstance(value, str) and value else None


def claim_reader(folder: RunFolder, spec: str, what: str, *, write: bool = True) -> None:
    """Record ``spec`` as the table's reader (first reader), or refuse a different one.

    ``write=False``: only refuse (nothing is recorded yet).
    """
    with folder.locked():
        meta = folder.manifest()
        current = table_reader(meta)
        if current is not None and current != spec:
            raise InputError(
                folder.manifest_path,
                f"the results are read with {current!r}; {what} with {spec!r} would mix two "
                f"readers in one table: re-read every image with `glyphbench rescore "
                f"{folder.root} --ocr {spec}`",
                key=READER_KEY,
            )
        if current is None and meta and write:
            folder.write_manifest({**meta, READER_KEY: spec})


def refuse_during_rescore(folder: RunFolder) -> None:
    """One line when a rescore holds the folder (a reader or a run would undo it)."""
    if folder.shard_busy(RESCORE_LOCK):
        raise FolderLock(folder.root, RESCORE_LOCK).busy("rescoring")


@dataclass
class RunResult:
    """Where a run wrote, what this process did and, once merged, the results."""

    out: Path
    outcome: ShardOutcome
    results: pd.DataFrame | None  # None when other shards are still running


def load_prompts(config: RunConfig) -> PromptSet:
    """Select the config's prompts via :func:`prompts.select`."""
    import prompts

    source: str | PromptSet = prompt_source(config.prompts, config.ocr, config.where)
    if files_choose_prompts(config):  # issue 33: images made elsewhere, no selection given
        from bench.run.made_elsewhere import prompts_named_by_files

        return prompts_named_by_files(config, str(source))
    if config.suite is not None:  # issue 12: a suite reads its benchmark's own files
        from bench.suites.base import limit_per_subset
        from bench.suites.protocol import suite_prompts

        chosen = prompts.select(
            suite_prompts(config),
            where=config.where,
            sample=config.sample,
            stratify=config.stratify,
            seed=config.prompt_seed,
            sampler=config.sampler,
        )
        return limit_per_subset(chosen, config.limit)  # issue 21: --limit takes from every subset
    return prompts.select(
        source,
        where=config.where,
        sample=config.sample,
        stratify=config.stratify,
        seed=config.prompt_seed,
        limit=config.limit,
        sampler=config.sampler,
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
    from bench.core.registry import Spec
    from bench.readers.scripts import reader_scripts

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
    ocr: Reader | None = None,
    progress: bool = True,
    console: Console | None = None,
    read_later: bool = False,
    readers: Callable[[str], SpawnedReaders] | None = None,
    read_columns: Sequence[str] | None = None,
) -> RunResult:
    """Run (or resume) this process's shard of ``config``; merge when all shards are done.

    ``read_later``: write the images and rows but read nothing (``glyphbench read RUN``
    reads them afterwards, in worker processes or on other machines; issue 18).
    ``read_columns``: the result holds only these columns of the merged table (see
    :func:`merge_run`).

    ``readers``: start the run's own reader processes for a reader spec (issue 26,
    :func:`bench.run.read_workers.run_with_readers` passes them for
    ``config.read_workers``): generation writes as with ``read_later``, they read
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
    folder = RunFolder(config.out, say=lambda message: console.print(message, highlight=False))
    if folder.root.exists() and not folder.root.is_dir():
        raise InputError(folder.root, "exists and is not a folder (--out must be a folder)")
    dist = detect_distributed(shard)
    prompt_set = prompt_set if prompt_set is not None else load_prompts(config)
    if len(prompt_set) == 0:
        raise InputError(config.prompts, "the prompt selection is empty")
    check_prompt_ids(prompt_set.frame, config.prompts)  # issue 32: before anything is written
    from bench.readers.scripts import check_reader_reads  # issue 13: refuse before writing

    check_reader_reads(config.ocr, prompt_set.frame)
    check_files(config, prompt_set)  # issue 33: images: files named nothing, or mostly missing
    reader_spec = config.ocr
    try:
        _check_same_run(folder, config, prompt_set)
        # A rescore may have re-read the table with another reader: rows made now use it.
        reader_spec = table_reader(folder.manifest()) or config.ocr
    except DifferentRun:
        if not _failed_attempt(folder):
            raise
    if reader_spec != config.ocr:
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
        elif ocr is None and not read_later and not folder.manifest().get("complete"):
            ocr = _start_run_reader(config, reader_spec)
            _probe_on_run(ocr, reader_spec, folder.root, sample=True)  # issue 32
            if reader_spec != config.ocr:
                console.print(
                    f"reading with {reader_spec} (this folder's results were re-read with it)",
                    highlight=False,
                    markup=False,
                )
        with folder.hold_shard(dist.shard.name):
            refuse_during_rescore(folder)
            with folder.locked():
                _claim_folder(folder, config, prompt_set, config_text, config_name)
                if not read_later:
                    claim_reader(folder, reader_spec, "this run")
                info = _start_shard(folder, dist)
            if spawned is None:
                outcome = _run_shard(
                    folder,
                    config,
                    prompt_set,
                    dist,
                    ocr,
                    progress,
                    console,
                    read_now=not read_later,
                )
            else:
                outcome = _run_shard_reading(
                    folder, config, prompt_set, dist, progress, console, spawned, info
                )
            _finish_shard(folder, dist, info, outcome)
            results = _merge_when_done(folder, dist, read_columns)
    return RunResult(folder.root, outcome, results)


def _run_shard_reading(
    folder: RunFolder,
    config: RunConfig,
    prompt_set: PromptSet,
    dist: Distributed,
    progress: bool,
    console: Console,
    spawned: SpawnedReaders,
    info: dict[str, Any],
) -> ShardOutcome:
    """Generate while the run's reader processes read; they have read every image at the end."""
    with spawned.reading(config) as backlog:
        outcome = _run_shard(
            folder, config, prompt_set, dist, None, progress, console, backlog=backlog
        )
    spawned.close()  # free the reader processes before the merge
    info["readers"] = {**spawned.facts(), **backlog.facts()}
    return outcome


def _start_run_reader(config: RunConfig, spec: str | None = None) -> Reader:
    """The run's reader; when a suite's own reader cannot start, say how to run without it."""
    try:
        return start_reader(spec or config.ocr)
    except InputError as error:
        if config.suite is None:
            raise
        error.problem += (
            f"; {config.ocr!r} is the reader suite {config.suite.spec!r} prescribes: pass "
            "--ocr easyocr (or another installed reader) to run offline, and the report "
            "marks the numbers as read under a different protocol"
        )
        raise


class DifferentRun(InputError):
    """The output folder holds another run."""


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
    folder: RunFolder, config: RunConfig, prompt_set: PromptSet, text: str | None, name: str
) -> None:
    """Compare with run.json (under the manifest lock), start a failed attempt over, create it."""
    try:
        _check_same_run(folder, config, prompt_set)
    except DifferentRun:
        if not _failed_attempt(folder):
            raise
        previous = folder.manifest().get("config_verbatim") or {}
        stale = [PROMPTS, RESULTS, *([previous["file"]] if previous.get("file") else [])]
        folder.clear(stale)
        folder.say(f"{folder.root}: its earlier run made no usable row; starting over")
    _write_run_start(folder, config, prompt_set, text, name)


def _start_shard(folder: RunFolder, dist: Distributed) -> dict[str, Any]:
    shard_json = folder.shard_json(dist.shard.name)
    previous = folder.read_json(shard_json)
    info: dict[str, Any] = {
        "shard": dist.shard.name,
        "launcher": dist.launcher,
        "device": dist.device,
        "attempts": [*previous.get("attempts", []), {"started_at": now()}],
        **_host(),
    }
    folder.write_json(shard_json, {**info, "finished": False})
    return info


def _run_shard(
    folder: RunFolder,
    config: RunConfig,
    prompt_set: PromptSet,
    dist: Distributed,
    ocr: Reader | None,
    progress: bool,
    console: Console,
    *,
    read_now: bool = True,
    backlog: Backlog | None = None,
) -> ShardOutcome:
    """Run the shard's jobs; with ``backlog``, reading is the run's reader processes' job."""
    from bench.run.shard import Runner

    runner = Runner(
        config,
        prompt_set,
        folder=folder,
        shard=dist.shard,
        ocr=ocr,
        device=dist.device,
        progress=progress,
        console=console,
        read_now=read_now and backlog is None,
        backlog=backlog,
    )
    return runner.run()


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


def _plan_readers(config: RunConfig) -> dict[str, int]:
    """The run's own reader processes and backlog (issue 26), when it starts any."""
    if not config.read_workers:
        return {}
    from bench.engine.backlog import default_backlog

    backlog = config.read_backlog or default_backlog(config.read_workers, config.batch_size)
    return {"read_workers": config.read_workers, "read_backlog": backlog}


def _check_same_run(folder: RunFolder, config: RunConfig, prompt_set: PromptSet) -> None:
    """Refuse to mix two different runs in one folder (resuming the same one is fine)."""
    problems = {
        "config_hash": "this folder holds a different run (its config differs); "
        "use another --out or the same config",
        "prompts.content_hash": "the selected prompts differ from those this run started with; "
        "use another --out",
    }
    folder.check_same_run(
        {"config_hash": config.config_hash(), "prompts.content_hash": prompt_set.content_hash},
        lambda key, _: DifferentRun(folder.manifest_path, problems[key]),
    )


def _write_run_start(
    folder: RunFolder, config: RunConfig, prompt_set: PromptSet, text: str | None, name: str
) -> None:
    """Write the config as given, the prompts and run.json (caller holds the manifest lock)."""
    if folder.manifest_path.is_file():
        return
    if text is not None:
        from bench.core.io import atomic_open

        with atomic_open(folder.root / name, "w", encoding="utf-8") as handle:
            handle.write(text)
    if not (folder.root / PROMPTS).is_file():
        folder.write_table(prompt_set.frame, PROMPTS)
    folder.create_manifest(
        {
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
            **environment(),
            "protocol": _protocol_card(config, prompt_set),
        },
    )


def _named_by(prompt_set: PromptSet) -> dict[str, Any]:
    """``{"named_by": [labels]}`` when the prompts are those ``images:`` files name, else {}."""
    selection = prompt_set.meta.get("selection")
    named_by = selection.get("named_by") if isinstance(selection, dict) else None
    return {"named_by": named_by} if named_by else {}


def _protocol_card(config: RunConfig, prompt_set: PromptSet) -> dict[str, Any]:
    """The run's protocol card (issue 12, :mod:`bench.suites.protocol`)."""
    from bench.suites.protocol import protocol_card

    full = prompt_set.meta.get("benchmark_prompts")
    return protocol_card(
        config,
        prompt_count=len(prompt_set),
        benchmark_prompts=int(full) if isinstance(full, int) else None,
    )


def merge_run(
    root: str | Path,
    *,
    folder: RunFolder | None = None,
    read_columns: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Merge the part files into ``results.parquet`` (in job list order); update run.json.

    Under the folder's manifest lock, so shards finishing together merge in turn.
    Returns the merged table, read back from ``results.parquet``: only the columns
    ``read_columns`` (those it has) when given, e.g. what the console summary reads
    (issue 26: the whole table of a million rows is over a GB). :func:`merge_run_rows`
    merges without reading anything back.
    """
    folder = folder or RunFolder(root)
    with folder.locked():
        _merge_locked(folder)
        return read_results(folder.root / RESULTS, read_columns)


def merge_run_rows(root: str | Path, *, folder: RunFolder | None = None) -> MergeTally:
    """:func:`merge_run` without reading the table back: what the merge counted (issue 26).

    The merge streams the part files into ``results.parquet`` chunk by chunk
    (:meth:`RunFolder.merge_stream`): its memory grows with the row keys only.
    """
    folder = folder or RunFolder(root)
    with folder.locked():
        return _merge_locked(folder)


class MergeTally:
    """What a streamed merge saw: rows, failed rows, reader engines and image sizes."""

    def __init__(self) -> None:
        self.rows = 0
        self.errors = 0
        #: the distinct (ocr_engine, ocr_version) and (width, height) pairs, as rows.
        self.seen: list[pd.DataFrame] = []

    def __call__(self, chunk: pd.DataFrame) -> None:
        self.rows += len(chunk)
        self.errors += int(failed_mask(chunk).sum())
        for pair in (["ocr_engine", "ocr_version"], ["width", "height"]):
            if set(pair) <= set(chunk.columns):
                self.seen.append(chunk[pair].dropna().drop_duplicates())

    def observed(self) -> pd.DataFrame:
        """A small frame with the observed pairs (what the protocol card reads)."""
        return pd.concat(self.seen, ignore_index=True) if self.seen else pd.DataFrame()


def _merge_locked(folder: RunFolder) -> MergeTally:
    meta = folder.manifest(required=True)
    if not isinstance(meta.get("config"), dict):
        raise InputError(folder.manifest_path, "no 'config' mapping: not a benchmark run.json")
    config = RunConfig.from_mapping(meta["config"], folder.manifest_path)
    results = folder.root / RESULTS
    tally = MergeTally()
    if not folder.part_files() and results.is_file():
        # Part files removed (e.g. to save space): the merged table is all there is; keep it.
        tally(conform_results(read_table(results)))
        return tally
    prompt_ids: list[str] = []
    if (folder.root / PROMPTS).is_file():
        prompts = read_table(folder.root / PROMPTS)
        if "prompt_id" not in prompts.columns:
            raise InputError(folder.root / PROMPTS, "missing column 'prompt_id'")
        prompt_ids = prompts["prompt_id"].astype(str).tolist()
    labels = [e.label for e in config.models]
    folder.merge_stream(
        RESULTS,
        ROW_KEY,
        lambda rows: order_rows(rows, labels, prompt_ids),
        conform=conform_results,
        pick=JobOrder(labels, prompt_ids),
        observe=tally,
    )
    shards = folder.shards()
    models: dict[str, Any] = {}
    model_errors: dict[str, str] = {}
    for info in shards.values():
        models.update(info.get("models", {}))
        model_errors.update(info.get("model_errors", {}))
    expected = len(config.models) * len(prompt_ids) * len(config.seeds) * config.images_per_prompt
    errors = tally.errors
    finished = [str(info["finished_at"]) for info in shards.values() if info.get("finished_at")]
    meta.update(
        models=models,
        model_errors=model_errors,
        shards=shards,
        rows=tally.rows,
        errors=errors,
        expected_rows=expected,
        complete=bool(tally.rows == expected and errors == 0),
        finished_at=max(finished) if finished else None,
        merged_at=now(),
    )
    from bench.suites.protocol import update_card

    meta["protocol"] = update_card(meta.get("protocol") or {}, config, tally.observed())
    folder.write_manifest(meta)
    return tally


def order_rows(
    rows: pd.DataFrame, labels: Sequence[str], prompt_ids: Sequence[str]
) -> pd.DataFrame:
    """Sort rows like the job list: model (config order), prompt (set order), seed, sample."""
    model_rank = {label: i for i, label in enumerate(labels)}
    prompt_rank = {pid: i for i, pid in enumerate(prompt_ids)}
    keyed = rows.assign(
        _m=rows["model"].map(lambda m: model_rank.get(str(m), len(model_rank))),
        _p=rows["prompt_id"].map(lambda p: prompt_rank.get(str(p), len(prompt_rank))),
    )
    keyed = keyed.sort_values(
        ["_m", "_p", "model", "prompt_id", "seed", "sample_index"], kind="stable"
    )
    return keyed.drop(columns=["_m", "_p"]).reset_index(drop=True)


class _Ranks:
    """Integer stand-ins for one key column's strings that sort as :func:`order_rows` does.

    A string listed in ``known`` gets ``(its position, -1)``; any other gets
    ``(len(known), its rank among the other strings seen, by text)``, the second number
    known only once every file is seen (:meth:`final`).
    """

    def __init__(self, known: Sequence[str]) -> None:
        self.known = {value: i for i, value in enumerate(known)}  # as order_rows' dict
        self.others: dict[str, int] = {}

    def codes(self, column: Any) -> tuple[Any, Any]:
        """(rank, provisional id of an unlisted string or -1) for each value of ``column``."""
        import numpy as np
        import pyarrow as pa

        if column.null_count:
            raise ValueError("a key column holds a missing value")
        encoded = column.combine_chunks().cast(pa.string()).dictionary_encode()
        ranks, ids = [], []
        for value in encoded.dictionary.to_pylist():
            rank = self.known.get(value)
            ranks.append(len(self.known) if rank is None else rank)
            ids.append(-1 if rank is not None else self.others.setdefault(value, len(self.others)))
        indices = encoded.indices.to_numpy()
        return np.asarray(ranks, np.int32)[indices], np.asarray(ids, np.int32)[indices]

    def final(self, ids: Any) -> Any:
        """The provisional ids as ranks by text (-1 stays -1)."""
        import numpy as np

        by_text = np.zeros(len(self.others) + 1, np.int32)
        by_text[-1] = -1
        for rank, value in enumerate(sorted(self.others)):
            by_text[self.others[value]] = rank
        return by_text[ids]


class JobOrder:
    """The lean pick of :meth:`RunFolder.merge_stream` for results (issue 26).

    The same rows in the same order as :func:`order_rows` after keeping the newest row
    of each key, from integer ranks of the key columns (about 40 bytes a row, where a
    frame of the keys' strings took hundreds).
    """

    def __init__(self, labels: Sequence[str], prompt_ids: Sequence[str]) -> None:
        self.models, self.prompts = _Ranks(labels), _Ranks(prompt_ids)

    def __call__(self, tables: Any) -> tuple[Any, Any]:
        import numpy as np

        columns: list[list[Any]] = [[] for _ in range(8)]
        for number, table in tables:
            if set(ROW_KEY) - set(table.column_names):
                raise ValueError("a part file lacks a key column")
            seed, sample = (table[c] for c in ("seed", "sample_index"))
            if seed.null_count or sample.null_count:
                raise ValueError("a key column holds a missing value")
            values = (
                *self.models.codes(table["model"]),
                *self.prompts.codes(table["prompt_id"]),
                seed.to_numpy().astype(np.int64),
                sample.to_numpy().astype(np.int64),
                np.full(table.num_rows, number, np.int32),
                np.arange(table.num_rows, dtype=np.int32),
            )
            for gathered, value in zip(columns, values, strict=True):
                gathered.append(value)
        if not columns[0]:
            return np.zeros(0, np.int32), np.zeros(0, np.int32)
        m, m_id, p, p_id, seed_, sample_, parts, rows = (np.concatenate(c) for c in columns)
        del columns
        m_text, p_text = self.models.final(m_id), self.prompts.final(p_id)
        del m_id, p_id
        # order_rows: model rank, prompt rank, model text, prompt text, seed, sample;
        # lexsort is stable, so of equal keys the newest (last read) comes last.
        ordered = np.lexsort((sample_, seed_, p_text, m_text, p, m))
        keys = [k[ordered] for k in (m, p, m_text, p_text, seed_, sample_)]
        del m, p, m_text, p_text, seed_, sample_
        last = np.ones(len(ordered), bool)
        same = np.ones(len(ordered) - 1, bool)
        for k in keys:
            same &= k[1:] == k[:-1]
        last[:-1] = ~same
        kept = ordered[last]
        return parts[kept], rows[kept]


def rescore_run(
    root: str | Path,
    *,
    ocr: str | None = None,
    scores_only: bool = False,
    batch_size: int | None = None,
    engine: Reader | None = None,
    progress: bool = True,
    console: Console | None = None,
) -> pd.DataFrame:
    """Re-read (unless ``scores_only``) and re-score the run's images; nothing is regenerated.

    A re-read adds the new readings to the run's reading store (``RUN/readings/``)
    and keeps the previous ones there (stored first if the store lacks them), saying
    so on the console; ``results.parquet`` then holds the new reader's. The new rows
    are written as a newer part file (so a later merge keeps them)
    and merged into ``results.parquet``; run.json records what was re-run.
    """
    from bench.run.reading_store import keep_results_readings
    from bench.run.results import score_rows

    if scores_only and (ocr or engine):
        raise InputError(None, "--scores-only keeps the OCR text; do not combine it with --ocr")
    folder = RunFolder(root)
    meta = folder.manifest(required=True)
    if not isinstance(meta.get("config"), dict):
        raise InputError(folder.manifest_path, "no 'config' mapping: not a benchmark run.json")
    config = RunConfig.from_mapping(meta["config"], folder.manifest_path)
    engine_spec = ocr or config.ocr
    if ocr and (folder.root / PROMPTS).is_file():  # issue 13: a reader that can read them
        from bench.readers.scripts import check_reader_reads

        check_reader_reads(ocr, pd.read_parquet(folder.root / PROMPTS))
    if not scores_only and engine is None:  # before anything is written
        engine = start_reader(engine_spec)
    store = None
    if engine is not None and not scores_only:
        from bench.run.reading_store import ReadingStore

        store = ReadingStore(folder.root, "rescore")  # issue 13: read each image once per reader
        _probe_on_run(engine, engine_spec, folder.root, store=store)  # issue 32: before writing
    with folder.hold_shard(RESCORE_LOCK):
        busy = folder.busy_shards()
        if busy:
            raise FolderLock(folder.root, busy[0]).busy("writing")
        rows = merge_run(folder.root, folder=folder).copy()
        if engine is not None and not scores_only:
            from bench.run.grid_path import grid_rereader  # issue 31: OneIG's image path

            reread = grid_rereader(folder, rows, config) or _reread  # refuses before writing
            kept = keep_results_readings(folder.root, rows)  # the old readings stay stored
            step = batch_size or config.batch_size
            tried, failed, kept_old = reread(folder, rows, engine, step, progress, console, store)
            if tried and failed == tried:  # nothing read: keep the table as it is
                raise InputError(
                    "--ocr",
                    f"the OCR engine {engine_spec!r} failed on every image ({failed} of "
                    f"{tried}); the results table and its reader were left unchanged",
                )
            _say(console, _rescore_note(folder.root, engine, kept))
            if kept_old:
                _say(
                    console,
                    f"rescore: {engine.name} failed on {kept_old} rows that were read before; "
                    f"those {kept_old} rows kept their previous reading (their ocr_engine "
                    "column names it)",
                )
        rescored = conform_results(score_rows(rows, config))
        stamp = now().replace(":", "").replace("+0000", "Z")
        write_rows(folder, rescored, f"rescore-{stamp}", "all")
        with folder.locked():
            merged = merge_run(folder.root, folder=folder)
            meta = folder.manifest()
            if not scores_only:
                meta[READER_KEY] = engine_spec  # the table's reader from now on
            meta.setdefault("rescores", []).append(
                {
                    "at": now(),
                    "ocr": None if scores_only else (engine.name if engine else engine_spec),
                    "ocr_version": None if scores_only or engine is None else engine.version,
                    "scores_only": scores_only,
                    "rows": len(rescored),
                }
            )
            folder.write_manifest(meta)
    return merged


def _probe_on_run(
    engine: Reader,
    spec: str,
    root: Path,
    *,
    sample: bool = False,
    store: ReadingStore | None = None,
) -> None:
    """Refuse a reader that cannot read one of the run's images (nothing written yet).

    ``sample``: a folder without images (a new run) probes with :func:`sample_image`.
    ``store``: the probe's reading is kept there (the image is not read twice), and an
    image it already holds a reading of needs no probe.
    """
    import hashlib

    from bench.engine.reading import probe_reader, run_image, sample_image

    found = run_image(root) if root.is_dir() else None
    if found is not None:
        key = (hashlib.sha256((root / found[0]).read_bytes()).hexdigest(), "")
        if store is not None:
            key = (key[0], store.identity(engine))
            if store.get(key) is not None:
                return
        reading = probe_reader(engine, found[1], spec, found[0])
        if store is not None:
            store.put(key, reading)
    elif sample:
        probe_reader(engine, sample_image(), spec, "a sample image of text")


def _rescore_note(root: Path, engine: Reader, kept: Sequence[str]) -> str:
    """What a re-read did to the readings: new ones added to the store, old ones kept."""
    from bench.run.reading_store import READINGS_DIR

    new = f"{engine.name} {engine.version}"
    old = [reader for reader in kept if reader != new]
    previous = (
        f"the previous readings ({', '.join(old)}) are kept there; "
        f"report them with `glyphbench report {root} --reader {old[0].split(' ')[0]}`"
        if old
        else "no other reader's readings were replaced"
    )
    return (
        f"rescore: readings of {new} stored in {root / READINGS_DIR} and used in "
        f"results.parquet; {previous}"
    )


def _say(console: Console | None, message: str) -> None:
    from rich.console import Console

    (console or Console(stderr=True)).print(message, highlight=False, markup=False, soft_wrap=True)


def _reread(
    folder: RunFolder,
    rows: pd.DataFrame,
    reader: Reader,
    step: int,
    progress: bool,
    console: Console | None,
    cache: ReadingStore | None = None,
) -> tuple[int, int, int]:
    """Read the images of ``rows`` again (in place) through the engine's reading step.

    A row read before that the new reader fails on keeps its previous reading (issue
    32: a rescore never turns a good row into a failed one). Returns (images read,
    failures, failed rows that kept their previous reading).
    """
    import time

    from rich.console import Console

    from bench.engine import read_batch
    from bench.run.reading_store import ReadingStore
    from bench.run.shard import reading_columns

    indices = list(rows.index[generated_mask(rows)])
    was_read = ~failed_mask(rows) & rows["ocr_text"].notna()
    identity = (reader.name, reader.version)
    tried = failed = kept = 0
    if cache is None:
        cache = ReadingStore(folder.root, "rescore")  # issue 13: each image once per reader
    from bench.core.progress import LineProgress

    with LineProgress(console=console or Console(stderr=True), disable=not progress) as bar:
        task = bar.add_task("rescore OCR", total=len(indices))
        for start in range(0, len(indices), step):
            chunk = indices[start : start + step]
            images, ok = _load_unchanged(folder, rows, chunk)
            if ok:
                started = time.perf_counter()
                keys = [str(rows.at[index, "image_sha256"]) for index in ok]
                outcomes = read_batch(reader, images, cache, keys)
                seconds = (time.perf_counter() - started) / len(ok)
                for index, outcome in zip(ok, outcomes, strict=True):
                    tried += 1
                    if isinstance(outcome, Exception):
                        failed += 1
                        if was_read[index]:
                            kept += 1
                            continue
                    for column, value in reading_columns(outcome, identity, seconds).items():
                        rows.at[index, column] = value
            bar.advance(task, len(chunk))
    return tried, failed, kept


def _load_unchanged(
    folder: RunFolder, rows: pd.DataFrame, indices: Sequence[Any]
) -> tuple[list[Any], list[Any]]:
    """The images of ``indices`` still as generated; the others get a ``Rescore:`` error."""
    import hashlib
    import io

    from PIL import Image

    images, ok = [], []
    for index in indices:
        path = folder.root / str(rows.at[index, "image_path"])
        if not path.is_file():
            rows.at[index, "error"] = "Rescore: FileNotFoundError: image missing"
            continue
        data = path.read_bytes()  # read once: hashed, then decoded
        if hashlib.sha256(data).hexdigest() != rows.at[index, "image_sha256"]:
            rows.at[index, "error"] = "Rescore: ValueError: image changed since it was generated"
            continue
        images.append(Image.open(io.BytesIO(data)).convert("RGB"))
        ok.append(index)
    return images, ok


def plan_run(
    config: RunConfig, *, prompt_set: PromptSet | None = None, shard: str | None = None
) -> dict[str, Any]:
    """The resolved plan of a run, without loading any model weights (``--dry-run``)."""
    from bench.models import get_model

    prompt_set = prompt_set if prompt_set is not None else load_prompts(config)
    dist_shard = Shard.parse(shard) if shard else Shard()
    folder = RunFolder(config.out)
    jobs = build_jobs(config, prompt_set.frame, dist_shard)
    done = done_keys(folder)
    check_files(config, prompt_set)  # the run would refuse these: so does its plan
    models = []
    for entry in config.models:
        adapter = get_model(entry.to_spec())  # adapters load weights lazily: this reads no weights
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
        "seeds": config.seeds,
        "images_per_prompt": config.images_per_prompt,
        "batch_size": config.batch_size,
        "device": config.device,
        **({"auto_device": auto_device()} if config.device == "auto" else {}),
        "ocr": config.ocr,
        **_plan_readers(config),
        "protocol": _protocol_card(config, prompt_set),
        "models": models,
        "api": {"max_usd": config.api.max_usd, **api_cost(models)},
        "outputs": {
            "run_json": str(folder.manifest_path),
            "results": str(folder.root / RESULTS),
            "images": str(folder.root / "images"),
        },
    }
