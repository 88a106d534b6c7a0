"""Run a benchmark shard on the engine: generate every image, read it, score it, write rows.

:class:`Runner` is the benchmark's use of :mod:`glyphbench.engine`:

1. build the job list (:mod:`glyphbench.run.image_jobs`), take this process's shard and skip the
   jobs whose rows already succeeded (resume);
2. one engine group per model: its producer loads the adapter (a load failure
   becomes ``Load:`` error rows for that model and the other models still run) and
   generates batch after batch in the main thread (CUDA out of memory halves the
   batch; another exception gives ``Generate:`` error rows);
3. the engine's worker thread calls :meth:`Runner.finish_batch`: save the images
   (PNG encoding and SHA-256 in the run's image writer process once images are
   large, :mod:`glyphbench.engine.image_writer`, so they do not hold the generating
   process's GIL), read them (:func:`glyphbench.engine.read_batch`; a failing
   image gets an ``OCR:`` error and the others are still read), score them (the
   batch's rows are built as Arrow columns, :class:`~glyphbench.run.results.BatchRows`),
   and writes the part file.

Hosted-API models (:mod:`glyphbench.models.api`) may return, in place of one image, an
:class:`~glyphbench.models.base.ImageNotMade` (its row gets that error: ``Refused: ...``
for a content-policy refusal) or a :class:`~glyphbench.models.base.NotAttempted` (the
run's spending cap was reached: no row, and a later run makes it). Their rows get
a ``cost_usd`` column (what the image cost this run; NaN when no price is known).

Errored rows are retried when the same command is run again. Merging the part
files into ``results.parquet`` is :func:`glyphbench.run.operations.merge_run`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pandas as pd

from glyphbench.core.schema import ROW_KEY
from glyphbench.engine import (
    Batch,
    Group,
    Loop,
    ReadingCache,
    RunFolder,
    Shard,
    error_text,
    progress_bars,
    remaining,
)
from glyphbench.engine.backlog import GatedProducer
from glyphbench.engine.image_writer import (
    WriterPool,
    wants_process,
    wants_process_for,
    writer_mode,
    writer_processes,
)
from glyphbench.models import get_model
from glyphbench.models.base import (
    COST_KEY,
    DRAWN_KEY,
    ImageNotMade,
    ImageRequest,
    NotAttempted,
    RunContext,
)
from glyphbench.models.spend import SpendBudget
from glyphbench.prompts.schema import PromptSet
from glyphbench.readers import get_reader
from glyphbench.readers.base import Reading
from glyphbench.run.config import ModelEntry, RunConfig, SuiteEntry
from glyphbench.run.image_jobs import Job, build_jobs, model_jobs
from glyphbench.run.reading_store import ReadingStore
from glyphbench.run.results import BatchRows, conform_results, done_keys, image_relpath
from glyphbench.run.stages import Scoring, read_timed, reading_columns
from glyphbench.suites.base import resolve_suite
from glyphbench.suites.protocol import suite_spec

#: The response cache of hosted-API models, inside the run folder (unless api.cache_dir).
API_CACHE = "api-cache"
#: A producer without its own ``is_control`` (the model entry's is used).
_NO_FLAG = object()

if TYPE_CHECKING:
    import pyarrow as pa
    from PIL import Image
    from rich.console import Console

    from glyphbench.engine.backlog import Backlog
    from glyphbench.engine.image_writer import WriterPool
    from glyphbench.models.base import ImageRequest, ModelAdapter, RunContext
    from glyphbench.models.spend import SpendBudget
    from glyphbench.readers.base import Reader


@dataclass
class ShardOutcome:
    """What one process did: counts, per-model facts and failures."""

    shard: Shard
    rows_written: int = 0
    errors: int = 0
    skipped: int = 0
    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    model_errors: dict[str, str] = field(default_factory=dict)
    oom_halvings: dict[str, int] = field(default_factory=dict)
    #: label -> {"load_s": load time, "images": n, "span_s": from loaded to last row written}
    timings: dict[str, dict[str, float]] = field(default_factory=dict)
    #: label -> images not attempted because the spending cap was reached (no rows)
    not_attempted: dict[str, int] = field(default_factory=dict)
    #: the one line saying why they were not (empty when every image was attempted)
    stop_reason: str = ""
    #: USD spent by hosted-API models in this run so far (None without a cap)
    spent_usd: float | None = None


class ModelProducer:
    """A loaded model adapter as the engine's producer of one model's images."""

    def __init__(
        self, entry: ModelEntry, adapter: ModelAdapter, frame: pd.DataFrame, outcome: ShardOutcome
    ) -> None:
        self.entry = entry
        self.adapter = adapter
        self.frame = frame
        # Each prompt row's prompt and text as requests carry them, read once (not per batch).
        self.prompts = [_text(value) for value in frame["prompt"].tolist()]
        self.texts = [_text(value) for value in frame["text"].tolist()]
        self.outcome = outcome
        self.is_control = bool(adapter.is_control)
        self.billable = bool(getattr(adapter, "billable", False))
        outcome.models[entry.label] = _safe_describe(adapter)
        #: Called with each batch's outputs, in the generating thread (the image writer).
        self.made: Callable[[Sequence[Any]], None] | None = None

    def prepare(self, jobs: list[Job]) -> list[ImageRequest]:

        return [
            ImageRequest(
                prompt=self.prompts[job.row], text=self.texts[job.row], seed=job.image_seed
            )
            for job in jobs
        ]

    def produce(self, inputs: list[ImageRequest]) -> Sequence[Image.Image]:
        outputs = self.adapter.generate(inputs)
        if self.made is not None:
            self.made(outputs)
        return outputs

    def close(self) -> None:
        self.adapter.close()
        self.outcome.models[self.entry.label] = _safe_describe(self.adapter)  # e.g. dtype


class Runner:
    """Generates, reads and scores a run's shard
    (:func:`glyphbench.run.operations.run_benchmark`)."""

    def __init__(
        self,
        config: RunConfig,
        prompt_set: PromptSet,
        *,
        folder: RunFolder,
        shard: Shard | None = None,
        reader: Reader | None = None,
        device: str | None = None,
        progress: bool = True,
        console: Console | None = None,
        read_now: bool = True,
        backlog: Backlog | None = None,
    ) -> None:
        from rich.console import Console

        self.config = config
        self.frame = prompt_set.frame
        self.folder = folder
        self.shard = shard or Shard()
        self.device = device
        self.show_progress = progress
        self.console = console or Console(stderr=True)
        self.run_id = config.resolved_run_id
        self.outcome = ShardOutcome(self.shard)
        self.cache: ReadingCache = ReadingStore(folder.root, self.shard.name)
        #: The score stage of every batch's rows.
        self.scoring = Scoring(config.score, config.suite)
        self._reader = reader
        self._reader_identity: tuple[str, str] | None = None
        self._entries = {entry.label: entry for entry in config.models}
        self.budget: SpendBudget | None = None
        #: False: images and rows only; ``glyphbench read RUN`` reads them later.
        self.read_now = read_now
        #: ``run --read-workers N``: generation waits while too many images wait to be read.
        self.backlog = backlog
        self._batch_rows: BatchRows | None = None  # made on the first batch
        self._first_group: Group | None = None  # the first to make images (warm_rows)
        #: Where images are encoded (GLYPHBENCH_IMAGE_WRITER, GLYPHBENCH_IMAGE_WRITERS;
        # ) and the processes doing it once started (by the generating thread:
        #: see glyphbench.engine.image_writer).
        self.writer_mode = writer_mode()
        self.writer_processes = writer_processes()  # both checked before anything is written
        self.image_writer: WriterPool | None = None

    # ------------------------------------------------------------------ setup
    @property
    def reader(self) -> Reader:
        if self._reader is None:
            self._reader = get_reader(self.config.read.reader)
        return self._reader

    @property
    def reader_identity(self) -> tuple[str, str]:
        """(name, version) of the reader, asked once (version may query package metadata)."""
        if self._reader_identity is None:
            self._reader_identity = (self.reader.name, self.reader.version)
        return self._reader_identity

    def adapter_spec(self, entry: ModelEntry) -> Any:
        """The entry's spec, with this process's device added for non-control models."""
        spec = entry.to_spec()
        if entry.is_control or "device" in spec.options:
            return spec
        device = self.device or (
            self.config.generate.device if self.config.generate.device != "auto" else None
        )
        if device is None:
            return spec
        options = {**spec.options, "device": device}
        return type(spec)(kind=spec.kind, target=spec.target, options=options, text=spec.text)

    def open_model(self, entry: ModelEntry) -> ModelProducer:
        """Create and load one model (the engine turns an exception into ``Load:`` rows)."""

        adapter = get_model(self.adapter_spec(entry))
        adapter.bind_run(self.run_context(entry))
        planned = adapter.planned_size()
        if self.image_writer is None and wants_process_for(self.writer_mode, planned):
            self._start_writer()  # it starts while the model loads
        load = getattr(adapter, "load", None)
        if callable(load):
            load()
        summary = adapter.input_summary()
        if summary:
            self.console.print(summary, highlight=False, markup=False, soft_wrap=True)
        producer = ModelProducer(entry, adapter, self.frame, self.outcome)
        producer.made = self._made
        if self.backlog is not None:
            return GatedProducer(producer, self.backlog)  # type: ignore[return-value]
        return producer

    def run_context(self, entry: ModelEntry) -> RunContext:
        """What a (hosted-API) model learns about this run: price, cap, cache folder."""

        api = self.config.api
        cache_dir = Path(api.cache_dir) if api.cache_dir else self.folder.root / API_CACHE
        return RunContext(
            root=self.folder.root,
            run_id=self.run_id,
            price_usd=api.price_for(entry),
            budget=self.budget,
            cache_dir=cache_dir,
            expected=tuple(
                (job.prompt_id, job.seed, job.sample_index)
                for job in model_jobs(entry, self.frame, self.config.generate, self.config.suite)
            ),
            **suite_context(self.config.suite, self.frame),
        )

    def _open_budget(self) -> None:
        """The spending cap: what is left of ``api.max_usd``, shared by this run's shards."""
        max_usd = self.config.api.max_usd
        if max_usd is None:
            return

        spent = 0.0
        rows = self.folder.read_parts(ROW_KEY)
        if "cost_usd" in rows.columns:
            spent = float(pd.to_numeric(rows["cost_usd"], errors="coerce").fillna(0).sum())
        # Each of N shard processes may spend an Nth of what is left: together never more.
        allowance = max(0.0, max_usd - spent) / self.shard.count
        self.budget = SpendBudget(spent + allowance, spent)

    # -------------------------------------------------------------------- run
    def run(self) -> ShardOutcome:
        all_jobs = build_jobs(self.config, self.frame, self.shard)
        todo = remaining(all_jobs, done_keys(self.folder), key=lambda job: job.key)
        self._open_budget()
        self.outcome.skipped = sum(len(all_jobs[k]) - len(todo[k]) for k in todo)
        if any(todo.values()) and self.read_now:
            _ = self.reader_identity  # the reader before any model: a bad --ocr fails fast
        if any(todo.values()) and self.writer_mode == "process":
            self._start_writer()  # its start overlaps the models' loading
        groups = [
            Group(entry.label, entry.slug, todo[entry.label], partial(self.open_model, entry))
            for entry in self.config.models
        ]
        self._first_group = next((group for group in groups if group.jobs), None)
        try:
            with progress_bars(groups, self.console, enabled=self.show_progress) as progress:
                loop = Loop(
                    self.folder,
                    self.shard.name,
                    self.finish_batch,
                    begin=self.begin_batch,
                    warm=self.warm_rows,
                    batch_size=self.config.generate.batch_size,
                    progress=progress,
                    say=lambda message: self.console.print(
                        message, highlight=False, soft_wrap=True  # a path stays one line in a log
                    ),
                )
                stats = loop.run(groups)
        finally:
            self.close_writer()
        self.outcome.rows_written, self.outcome.errors = stats.rows_written, stats.errors
        if self.budget is not None:
            self.outcome.spent_usd = round(self.budget.spent_usd, 6)
        if self.outcome.not_attempted:
            skipped = sum(self.outcome.not_attempted.values())
            self.console.print(
                f"[bold yellow]{skipped} images not attempted:[/] {self.outcome.stop_reason}",
                highlight=False,
            )
        for group in groups:
            facts = stats.groups.get(group.name)
            if facts is None:
                continue
            if facts.load_error is not None:
                self.outcome.model_errors[group.name] = error_text("Load", facts.load_error)
                continue
            if facts.oom_halvings:
                self.outcome.oom_halvings[group.name] = facts.oom_halvings
            self.outcome.timings[group.name] = {
                "load_s": facts.load_s,
                "images": len(group.jobs),
                "span_s": facts.span_s,
            }
        return self.outcome

    def _made(self, outputs: Sequence[Any]) -> None:
        """A batch was generated: start the image writer process when it is due.

        Runs in the generating thread, which lives as long as the run: the writer
        process is killed when the thread that started it ends (``PR_SET_PDEATHSIG``).
        """
        if self.image_writer is None and wants_process(self.writer_mode, outputs):
            self._start_writer()

    def _start_writer(self) -> None:
        """Start the image writer processes, writing the run's PNG format."""
        self.image_writer = WriterPool(
            self.folder.root, self.writer_processes, self.folder.png_format
        ).start()

    def close_writer(self) -> None:
        """End the image writer process (once it has written what it was given)."""
        writer, self.image_writer = self.image_writer, None
        if writer is not None:
            writer.close()

    # ---------------------------------------------------------- worker thread
    def warm_rows(self) -> None:
        """Make what every batch's rows use once (the prompt columns as Arrow, the expected
        texts) while the first model loads, so the first batch takes no more of the GIL
        from generation than the others."""
        import pyarrow.parquet  # noqa: F401 - the part files' writer, imported once here
        from pandas.io import parquet  # noqa: F401 - the reading store's (to_parquet)

        if self._batch_rows is None:
            self._batch_rows = BatchRows(self.frame, self.scoring.score, self.scoring.suite)
        self._batch_rows.warm()
        if self._first_group is not None:
            # A speed-up only: a stand-in batch that cannot be built teaches nothing, and
            # the first real batch learns its shape as before.
            with contextlib.suppress(Exception):
                self._learn_rows(self._first_group)

    def _learn_rows(self, group: Group) -> None:
        """The first batch's column types, learnt from a stand-in batch of its shape (an
        image, a file and a reading per job) before it exists: on a first batch the types
        come from a frame built beside the Arrow table (tens of milliseconds of the GIL
        taken from generation; :class:`BatchRows`). A real batch of another shape (a
        failure, a control's drawn text, a hosted model's cost) learns its own, as before."""
        from PIL import Image

        assert self._batch_rows is not None
        jobs = group.jobs[: self.config.generate.batch_size]
        stand_in = Image.new("RGB", (8, 8))
        batch = Batch(group, jobs, outputs=[stand_in] * len(jobs), size=len(jobs), seconds=0.0)
        files: list[tuple[str, str] | None] = [("images/stand-in.png", "0" * 64)] * len(jobs)
        reading = Reading(text="") if self.read_now else None
        readings: list[Reading | Exception | None] = [reading] * len(jobs)
        records = self.records(batch, files, readings, 0.0)
        self._batch_rows.learn(
            records, [job.row for job in jobs], lambda: self.rows_frame(batch, records)
        )

    def finish_batch(self, batch: Batch) -> pa.Table | pd.DataFrame:
        """Save, read and score one batch: its rows (the engine writes the part file)."""
        return self.begin_batch(batch)()

    def begin_batch(self, batch: Batch) -> Callable[[], pa.Table | pd.DataFrame]:
        """:meth:`finish_batch` in two halves: the images handed to the image writer
        process now, the rest (digests, reading, scores) when the returned call comes.

        The engine's worker begins the next batch before finishing this one when the
        next is already waiting, so the writer process encodes one batch while the
        worker reads and scores the other.
        """
        reserved = len(batch.outputs or [])  # room a gated producer took in the backlog
        batch = self._drop_not_attempted(batch)
        outputs: list[Any] = batch.outputs or []
        made = [i for i, output in enumerate(outputs) if not isinstance(output, BaseException)]
        images = [outputs[i] for i in made]
        jobs = [batch.jobs[i] for i in made]
        sent = self.send_images(
            jobs, images, self._entries[batch.group.name].slug, share=batch.final
        )

        def finish() -> pa.Table | pd.DataFrame:
            saved = sent()
            if self.read_now:
                read, seconds = self.read_images(images, [digest for _, digest in saved])
            else:  # read later, from the files: no reading, no identity, no scores yet
                read, seconds = [None] * len(images), float("nan")
            files: list[tuple[str, str] | None] = [None] * len(outputs)
            readings: list[Reading | Exception | None] = [None] * len(outputs)
            for i, file, reading in zip(made, saved, read, strict=True):
                files[i], readings[i] = file, reading
            rows = self.rows(batch, files, readings, seconds)
            if self.backlog is not None:  # only the images saved (left to read) keep their room
                self.backlog.settle(reserved, len(images))
            return rows

        return finish

    def _drop_not_attempted(self, batch: Batch) -> Batch:
        """Jobs a model did not attempt (spending cap) get no row; a later run makes them."""

        outputs = batch.outputs or []
        skipped = [i for i, output in enumerate(outputs) if isinstance(output, NotAttempted)]
        if not skipped:
            return batch
        label = batch.group.name
        self.outcome.not_attempted[label] = self.outcome.not_attempted.get(label, 0) + len(skipped)
        self.outcome.stop_reason = str(outputs[skipped[0]])
        skip = set(skipped)
        kept = [i for i in range(len(outputs)) if i not in skip]
        return replace(
            batch, jobs=[batch.jobs[i] for i in kept], outputs=[outputs[i] for i in kept]
        )

    def send_images(
        self,
        jobs: Sequence[Job],
        images: Sequence[Image.Image],
        model_slug: str,
        *,
        share: bool = False,
    ) -> Callable[[], list[tuple[str, str]]]:
        """Hand the images to the writer processes (or keep them here); the returned call
        writes what is left here and gives (path in the run folder, SHA-256) per image.

        In the image writer processes once a batch of large images has started them
        (:meth:`_made`), else here; ``share`` (the run's last batch: generation is over)
        one share here, the rest in the writer processes (see :meth:`begin_batch`)."""
        # A writer still starting is waited for (a tenth of a second, GIL free): the
        # engine's queue keeps generation going meanwhile, where encoding here would
        # take the GIL from it for a whole batch.
        paths = [
            image_relpath(model_slug, job.prompt_id, job.seed, job.sample_index) for job in jobs
        ]
        digests = self.folder.send_images(images, paths, self.image_writer, share=share)
        return lambda: list(zip(paths, digests(), strict=True))

    def read_images(
        self, images: Sequence[Image.Image], keys: Sequence[str] | None = None
    ) -> tuple[list[Any], float]:
        """The reading step: a Reading or an exception per image, and seconds per image.

        ``keys`` (the images' file SHA-256) key the run folder's reading store.
        """
        return read_timed(self.reader, images, self.cache, keys)

    def rows(
        self,
        batch: Batch,
        files: Sequence[tuple[str, str] | None],
        readings: Sequence[Reading | Exception | None],
        read_seconds: float,
    ) -> pa.Table | pd.DataFrame:
        """The typed, scored results rows of one batch (no rows for an empty batch).

        An Arrow table with the columns, types and pandas metadata that
        ``conform_results(score_rows(...))`` of the same rows gives (the part file is the
        same file), built column by column without a frame per batch: see
        :class:`BatchRows`. Runs that score with more than glyphbench's metrics (suites,
        ``--metrics``) build the frame.
        """
        if not batch.jobs:
            return conform_results(pd.DataFrame())
        records = self.records(batch, files, readings, read_seconds)
        if self._batch_rows is None:
            self._batch_rows = BatchRows(self.frame, self.scoring.score, self.scoring.suite)
        return self._batch_rows.table(
            records, [job.row for job in batch.jobs], lambda: self.rows_frame(batch, records)
        )

    def records(
        self,
        batch: Batch,
        files: Sequence[tuple[str, str] | None],
        readings: Sequence[Reading | Exception | None],
        read_seconds: float,
    ) -> list[dict[str, Any]]:
        """One dict per job of the batch: its columns other than the prompt's and scores."""
        entry = self._entries[batch.group.name]
        outputs: list[Any] = batch.outputs or []
        stage_error = error_text(batch.stage, batch.failure) if batch.failure else ""
        n = len(batch.jobs)
        # Once a batch (the default was evaluated, the model's spec parsed, per row)
        is_control = getattr(batch.producer, "is_control", _NO_FLAG)
        if is_control is _NO_FLAG:
            is_control = entry.is_control
        records = []
        for i, job in enumerate(batch.jobs):
            output = outputs[i] if outputs else None
            image = None if output is None or isinstance(output, BaseException) else output
            file = files[i] if image is not None else None
            record = {
                "run_id": self.run_id,
                "model": job.model,
                "is_control": is_control,
                "prompt_id": job.prompt_id,
                "seed": job.seed,
                "sample_index": job.sample_index,
                "image_seed": job.image_seed,
                "image_path": file[0] if file else None,
                "image_sha256": file[1] if file else None,
                "width": image.size[0] if image is not None else None,
                "height": image.size[1] if image is not None else None,
                "batch_size": batch.size or None,
                "gen_seconds": batch.seconds / n if batch.size else float("nan"),
                **reading_columns(
                    readings[i] if image is not None else None,
                    self.reader_identity if image is not None and self.read_now else None,
                    read_seconds,
                ),
            }
            record["error"] = record["error"] or stage_error or _output_error(output)
            if getattr(batch.producer, "billable", False):
                record["cost_usd"] = _output_cost(output)
            drawn_text = _output_drawn(output)
            if drawn_text is not None:  # a control: what it drew, for the report
                record["drawn_text"] = drawn_text
            records.append(record)
        return records

    def rows_frame(self, batch: Batch, records: list[dict[str, Any]]) -> pd.DataFrame:
        """The batch's rows as a conformed frame: the records, prompt columns and scores."""
        rows = pd.DataFrame.from_records(records)
        prompt_rows = self.frame.iloc[[job.row for job in batch.jobs]].reset_index(drop=True)
        rows = pd.concat([rows, prompt_rows.drop(columns=["prompt_id"])], axis=1)
        return self.scoring.rows(rows)


def suite_context(suite: SuiteEntry | None, frame: pd.DataFrame) -> dict[str, Any]:
    """A suite run's spec and each prompt's (subset, benchmark id), for ``RunContext``."""

    spec = suite_spec(suite)
    if spec is None or not {"suite_subset", "benchmark_id"} <= set(frame.columns):
        return {}
    pairs = zip(frame["suite_subset"].astype(str), frame["benchmark_id"].astype(str), strict=True)
    return {
        "suite": spec,
        "suite_layout": resolve_suite(spec).layout(),
        "benchmark_ids": dict(zip(frame["prompt_id"].astype(str), pairs, strict=True)),
    }


def _output_error(output: object) -> str:
    """The error of one output that is not an image ("" for an image)."""

    if isinstance(output, ImageNotMade):
        return output.row_error
    if isinstance(output, Exception):
        return error_text("Generate", output)
    return ""


def _output_drawn(output: object) -> str | None:
    """The text a control model drew on this image (None for every other model)."""

    info = getattr(output, "info", None)
    text = info.get(DRAWN_KEY) if isinstance(info, dict) else None
    return None if text is None else str(text)


def _output_cost(output: object) -> float:
    """What one output cost (USD): an image's ``COST_KEY``, a failure's ``cost_usd``."""

    if isinstance(output, ImageNotMade):
        return float(output.cost_usd)
    info = getattr(output, "info", None)
    cost = info.get(COST_KEY) if isinstance(info, dict) else None
    return float("nan") if cost is None else float(cost)


def _text(value: object) -> str:
    return (
        ""
        if value is None or value is pd.NA or (isinstance(value, float) and value != value)
        else str(value)
    )


def _safe_describe(adapter: ModelAdapter) -> dict[str, Any]:
    try:
        return dict(adapter.describe())
    except Exception as exc:  # describe() is informative only; never fail a run on it
        return {"spec": adapter.spec, "describe_error": error_text("Describe", exc)}
