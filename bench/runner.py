"""Run a benchmark: generate every image, OCR it, score it, write rows; resumable.

:func:`run_benchmark` is the whole pipeline behind ``glyphbench run``:

1. select the prompts, build the job list (:mod:`bench.jobs`) and take this
   process's shard; skip jobs whose rows already succeeded (resume);
2. for each model: load it once (a load failure becomes ``Load:`` error rows
   for that model and the other models still run), then generate batch after
   batch in the main thread;
3. a worker thread saves each batch's images, OCRs and scores them and writes
   the batch's part file, while the main thread generates the next batch (a
   bounded queue keeps generation at most two batches ahead);
4. when every shard is done, merge the part files into ``results.parquet``.

Failures stay local: an exception while generating a batch gives ``Generate:``
error rows; CUDA out-of-memory halves the batch size (for the rest of that
model) and retries; an OCR failure gives ``OCR:`` rows for the images concerned.
Errored rows are retried when the same command is run again.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pandas as pd

from bench.config import ModelEntry, RunConfig
from bench.jobs import Job, Shard, build_jobs
from bench.store import RunStore
from prompts.schema import PromptSet

if TYPE_CHECKING:
    from PIL import Image
    from rich.console import Console

    from bench.models.base import ModelAdapter
    from bench.readers.base import Reader, Reading

#: Batches generated ahead of the OCR worker (bounds memory held by pending images).
QUEUE_DEPTH = 2


def error_text(stage: str, exc: BaseException) -> str:
    """``"Stage: ExceptionType: first line of the message"`` (at most 500 characters).

    >>> error_text("Generate", ValueError("bad prompt\\nmore"))
    'Generate: ValueError: bad prompt'
    """
    message = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{stage}: {type(exc).__name__}: {message}"[:500].rstrip(": ")


def is_oom(exc: BaseException) -> bool:
    """Out-of-memory test shared with the diffusers adapter."""
    from bench.models.diffusers_adapter import is_oom as adapter_is_oom

    return adapter_is_oom(exc)


@dataclass
class Batch:
    """One generated batch on its way to the OCR worker."""

    entry: ModelEntry
    is_control: bool
    jobs: list[Job]
    images: list[Image.Image] | None
    seconds: float
    batch_size: int
    error: str = ""


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
    #: label -> {"load_s": model load time, "images": n, "span_s": first batch start -> last row written}
    timings: dict[str, dict[str, float]] = field(default_factory=dict)


class Runner:
    """Generates, OCRs and scores one shard of a run. Use :func:`run_benchmark`."""

    def __init__(
        self,
        config: RunConfig,
        prompt_set: PromptSet,
        *,
        store: RunStore,
        shard: Shard = Shard(),
        ocr: Reader | None = None,
        device: str | None = None,
        progress: bool = True,
        console: Console | None = None,
    ) -> None:
        from rich.console import Console

        self.config = config
        self.frame = prompt_set.frame
        self.store = store
        self.shard = shard
        self.device = device
        self.show_progress = progress
        self.console = console or Console(stderr=True)
        self.run_id = config.resolved_run_id
        self.outcome = ShardOutcome(shard)
        self._ocr = ocr
        self._ocr_identity: tuple[str, str] | None = None
        self._failure: BaseException | None = None
        self._progress: Any = None
        self._tasks: dict[str, Any] = {}

    # ------------------------------------------------------------------ setup
    @property
    def ocr(self) -> Reader:
        if self._ocr is None:
            from bench.readers import get_reader

            self._ocr = get_reader(self.config.ocr)
        return self._ocr

    @property
    def ocr_identity(self) -> tuple[str, str]:
        """(name, version) of the OCR engine, asked once (version may query package metadata)."""
        if self._ocr_identity is None:
            self._ocr_identity = (self.ocr.name, self.ocr.version)
        return self._ocr_identity

    def adapter_spec(self, entry: ModelEntry) -> Any:
        """The entry's spec, with this process's device added for non-control models."""
        spec = entry.to_spec()
        if entry.is_control or "device" in spec.options:
            return spec
        device = self.device or (self.config.device if self.config.device != "auto" else None)
        if device is None:
            return spec
        options = {**spec.options, "device": device}
        return type(spec)(kind=spec.kind, target=spec.target, options=options, text=spec.text)

    # -------------------------------------------------------------------- run
    def run(self) -> ShardOutcome:
        from rich.progress import (
            BarColumn,
            MofNCompleteColumn,
            Progress,
            TextColumn,
            TimeElapsedColumn,
            TimeRemainingColumn,
        )

        all_jobs = build_jobs(self.config, self.frame, self.shard)
        done = self.store.done_keys()
        todo = {label: [j for j in jobs if j.key not in done] for label, jobs in all_jobs.items()}
        self.outcome.skipped = sum(len(all_jobs[k]) - len(todo[k]) for k in todo)
        if any(todo.values()):
            _ = self.ocr_identity  # load the OCR engine before any model: a bad --ocr fails fast

        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=self.console,
            disable=not self.show_progress,
        )
        work: queue.Queue[Batch | None] = queue.Queue(maxsize=QUEUE_DEPTH)
        worker = threading.Thread(
            target=self._worker, args=(work,), name="glyphbench-ocr", daemon=True
        )
        with self._progress:
            for entry in self.config.models:
                self._tasks[entry.label] = self._progress.add_task(
                    entry.label,
                    total=len(todo[entry.label]) or None,
                    visible=bool(todo[entry.label]),
                )
            worker.start()
            try:
                for entry in self.config.models:
                    if todo[entry.label]:
                        self._run_model(entry, todo[entry.label], work)
                    self._raise_worker_failure()
            finally:
                work.put(None)
                worker.join()
        self._raise_worker_failure()
        return self.outcome

    def _raise_worker_failure(self) -> None:
        if self._failure is not None:
            raise self._failure

    def _run_model(
        self, entry: ModelEntry, jobs: list[Job], work: queue.Queue[Batch | None]
    ) -> None:
        from bench.models import get_model

        started = time.perf_counter()
        try:
            adapter = get_model(self.adapter_spec(entry))
            load = getattr(adapter, "load", None)
            if callable(load):
                load()
        except Exception as exc:
            message = error_text("Load", exc)
            self.outcome.model_errors[entry.label] = message
            self.console.print(
                f"[bold red]model {entry.label} failed to load:[/] {message}", highlight=False
            )
            work.put(Batch(entry, entry.is_control, jobs, None, 0.0, 0, message))
            return
        loaded = time.perf_counter()
        self.outcome.timings[entry.label] = {
            "load_s": loaded - started,
            "images": len(jobs),
            "start": loaded,
        }
        try:
            self.outcome.models[entry.label] = _safe_describe(adapter)
            self._generate_all(entry, adapter, jobs, work)
        finally:
            adapter.close()
        self.outcome.models[entry.label] = _safe_describe(adapter)  # e.g. dtype known after load

    def _generate_all(
        self,
        entry: ModelEntry,
        adapter: ModelAdapter,
        jobs: list[Job],
        work: queue.Queue[Batch | None],
    ) -> None:
        size = self.config.batch_size
        position = 0
        while position < len(jobs):
            self._raise_worker_failure()
            chunk = jobs[position : position + size]
            requests = [self._request(job) for job in chunk]
            started = time.perf_counter()
            try:
                images = adapter.generate(requests)
                if len(images) != len(chunk):
                    raise RuntimeError(
                        f"adapter returned {len(images)} images for {len(chunk)} requests"
                    )
            except Exception as exc:
                if is_oom(exc) and size > 1:
                    size = max(1, size // 2)
                    self.outcome.oom_halvings[entry.label] = (
                        self.outcome.oom_halvings.get(entry.label, 0) + 1
                    )
                    self.console.print(
                        f"{entry.label}: out of memory, batch size -> {size}", highlight=False
                    )
                    _free_accelerator_memory()
                    continue
                elapsed = time.perf_counter() - started
                work.put(
                    Batch(
                        entry,
                        adapter.is_control,
                        chunk,
                        None,
                        elapsed,
                        len(chunk),
                        error_text("Generate", exc),
                    )
                )
            else:
                elapsed = time.perf_counter() - started
                work.put(Batch(entry, adapter.is_control, chunk, list(images), elapsed, len(chunk)))
            position += len(chunk)

    def _request(self, job: Job) -> Any:
        from bench.models.base import ImageRequest

        row = self.frame.iloc[job.row]
        return ImageRequest(
            prompt=_text(row["prompt"]), text=_text(row["text"]), seed=job.image_seed
        )

    # ------------------------------------------------------------ OCR worker
    def _worker(self, work: queue.Queue[Batch | None]) -> None:
        while True:
            batch = work.get()
            if batch is None:
                return
            if self._failure is not None:
                continue  # drain: the main thread is about to raise
            try:
                rows = self._finish_batch(batch)
                self.store.write_part(rows, self.shard.name, batch.entry.slug)
                self.outcome.rows_written += len(rows)
                self.outcome.errors += int((rows["error"] != "").sum())
                self._progress.advance(self._tasks[batch.entry.label], len(batch.jobs))
                timing = self.outcome.timings.get(batch.entry.label)
                if timing is not None:
                    timing["span_s"] = time.perf_counter() - timing["start"]
            except BaseException as exc:  # surfaced in the main thread
                self._failure = exc

    def _finish_batch(self, batch: Batch) -> pd.DataFrame:
        """Save images, OCR and score one batch; returns its rows."""
        n = len(batch.jobs)
        paths: list[str | None] = [None] * n
        hashes: list[str | None] = [None] * n
        sizes: list[tuple[int, int] | None] = [None] * n
        errors = [batch.error] * n
        results: list[Reading | None] = [None] * n
        ocr_seconds = float("nan")
        if batch.images is not None:
            for i, (job, image) in enumerate(zip(batch.jobs, batch.images, strict=True)):
                rel = self.store.image_relpath(
                    batch.entry.slug, job.prompt_id, job.seed, job.sample_index
                )
                hashes[i] = self.store.write_image(image, rel)
                paths[i] = rel
                sizes[i] = image.size
            started = time.perf_counter()
            results, ocr_errors = read_with_ocr(self.ocr, batch.images)
            ocr_seconds = (time.perf_counter() - started) / n
            errors = [e or errors[i] for i, e in enumerate(ocr_errors)]
        return self._rows(batch, paths, hashes, sizes, results, errors, ocr_seconds)

    def _rows(
        self,
        batch: Batch,
        paths: Sequence[str | None],
        hashes: Sequence[str | None],
        sizes: Sequence[tuple[int, int] | None],
        results: Sequence[Reading | None],
        errors: Sequence[str],
        ocr_seconds: float,
    ) -> pd.DataFrame:
        prompt_rows = self.frame.iloc[[job.row for job in batch.jobs]].reset_index(drop=True)
        ocr_ran = batch.images is not None
        records = []
        for i, job in enumerate(batch.jobs):
            result = results[i]
            size = sizes[i]
            records.append(
                {
                    "run_id": self.run_id,
                    "model": job.model,
                    "is_control": batch.is_control,
                    "prompt_id": job.prompt_id,
                    "seed": job.seed,
                    "sample_index": job.sample_index,
                    "image_seed": job.image_seed,
                    "image_path": paths[i],
                    "image_sha256": hashes[i],
                    "width": size[0] if size else None,
                    "height": size[1] if size else None,
                    "batch_size": batch.batch_size or None,
                    "gen_seconds": batch.seconds / len(batch.jobs)
                    if batch.batch_size
                    else float("nan"),
                    **ocr_fields(result),
                    "ocr_engine": self.ocr_identity[0] if ocr_ran else None,
                    "ocr_version": self.ocr_identity[1] if ocr_ran else None,
                    "ocr_seconds": ocr_seconds if result is not None else float("nan"),
                    "error": errors[i],
                }
            )
        rows = pd.DataFrame.from_records(records)
        prompt_part = prompt_rows.drop(columns=["prompt_id"])
        rows = pd.concat([rows, prompt_part], axis=1)
        return score_rows(rows, self.config)


def read_with_ocr(
    engine: Reader, images: Sequence[Image.Image]
) -> tuple[list[Reading | None], list[str]]:
    """OCR a batch; a failing image gets an ``OCR:`` error and the others are still read."""
    from bench.readers.common import ReadError

    try:
        results: list[Reading | None] = list(engine.read(images))
        if len(results) != len(images):
            raise RuntimeError(
                f"{engine.name} returned {len(results)} results for {len(images)} images"
            )
        return results, [""] * len(images)
    except ReadError:
        pass  # read one by one below so only the failing image(s) get an error
    except Exception as exc:
        message = error_text("OCR", exc)
        return [None] * len(images), [message] * len(images)
    out: list[Reading | None] = []
    errors: list[str] = []
    for image in images:
        try:
            out.append(engine.read([image])[0])
            errors.append("")
        except Exception as exc:
            cause = exc.cause if isinstance(exc, ReadError) else exc
            out.append(None)
            errors.append(error_text("OCR", cause))
    return out, errors


def ocr_fields(result: Reading | None) -> dict[str, Any]:
    """The ``ocr_*`` text columns of one row (lists as JSON strings)."""
    if result is None:
        return {"ocr_text": None, "ocr_pieces": None, "ocr_boxes": None, "ocr_confidences": None}
    return {
        "ocr_text": result.text,
        "ocr_pieces": json.dumps(list(result.pieces), ensure_ascii=False),
        "ocr_boxes": json.dumps(
            [[list(map(float, point)) for point in box] for box in result.boxes]
        ),
        "ocr_confidences": json.dumps([float(c) for c in result.confidences]),
    }


def score_rows(rows: pd.DataFrame, config: RunConfig) -> pd.DataFrame:
    """Add every score column; rows without OCR text (errors) get NaN scores."""
    from bench.scoring import SCORE_COLUMNS, score_pairs

    rows = rows.drop(columns=[c for c in SCORE_COLUMNS if c in rows.columns])
    has_ocr = rows["ocr_text"].notna() & (rows["error"].fillna("") == "")
    scores = pd.DataFrame(float("nan"), index=rows.index, columns=list(SCORE_COLUMNS))
    if has_ocr.any():
        scored = score_pairs(
            rows.loc[has_ocr, "text"].fillna("").astype(str).tolist(),
            rows.loc[has_ocr, "ocr_text"].fillna("").astype(str).tolist(),
            keep_case=config.normalization.keep_case,
            strip_punct=config.normalization.strip_punct,
        )
        scored.index = rows.index[has_ocr]
        for column in SCORE_COLUMNS:
            scores.loc[has_ocr, column] = scored[column].astype(float)
    return pd.concat([rows, scores], axis=1)


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


def _free_accelerator_memory() -> None:
    import gc
    import sys

    gc.collect()
    torch = sys.modules.get("torch")
    if torch is not None and torch.cuda.is_available():
        torch.cuda.empty_cache()
