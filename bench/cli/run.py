"""``glyphbench run | merge | rescore | demo``: the benchmark runner's commands."""

from __future__ import annotations

import contextlib
import json
import shlex
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer

from glyphbench.cli.common import (
    SOURCE_HELP,
    every_row_failed,
    fail_when_every_row_failed,
    interruptible,
    print_error,
    readers_help,
)
from glyphbench.cli.exit_codes import EVERY_ROW_FAILED, MODEL_FAILED
from glyphbench.core.errors import InputError
from glyphbench.core.io import MAX_CONFIG_BYTES, json_safe, read_run_json, read_text
from glyphbench.core.registry import PLUGINS
from glyphbench.core.schema import failed_mask
from glyphbench.core.terminal import printable
from glyphbench.core.words import plural


def _quiet_library_warnings() -> None:
    """Hide warnings that EasyOCR/torch repeat on every CPU call; they say nothing about the run."""
    import warnings

    for message in (".*pin_memory.*", ".*quantize_per_tensor.*", ".*quantized tensor creation.*"):
        warnings.filterwarnings("ignore", message=message, category=UserWarning)


def _split(values: list[str] | None) -> list[str] | None:
    """Repeatable, comma-separated flag values -> one list (None when not given)."""
    if not values:
        return None
    return [part.strip() for value in values for part in value.split(",") if part.strip()]


def _seeds(values: list[str] | None) -> list[int] | None:
    parts = _split(values)
    if parts is None:
        return None
    try:
        return [int(p) for p in parts]
    except ValueError:
        raise InputError(None, f"--seeds must be integers, got {','.join(parts)!r}") from None


def _seed_policy(value: str | None) -> str | None:
    """``--seed-policy`` checked here, so a typo is one line naming the choices."""
    if value is None:
        return None
    choice = value.strip().lower()
    if choice not in ("benchmark", "glyphbench"):
        raise InputError(None, f"--seed-policy must be benchmark or glyphbench, got {value!r}")
    return choice


def _suite_entry(suite: str | None, data: Path | None) -> dict[str, str] | None:
    """``--suite`` and ``--data`` as the config's ``suite`` entry (``--data`` needs ``--suite``)."""
    if suite is None:
        if data is not None:
            raise InputError(None, "--data points at a suite's files; give --suite NAME too")
        return None
    return {"spec": suite, **({"data": str(data)} if data is not None else {})}


def _command_line(flags: dict[str, Any]) -> str:
    """The config flags given, as one shell-quoted ``glyphbench run`` line (saved as command.txt).

    ``--shard`` is left out: every shard runs the same config (shard.json records each).
    """
    words = ["glyphbench", "run"]
    for key, value in flags.items():
        if value is None:
            continue
        if key == "suite":  # the --suite/--data pair of the config's suite entry
            words += ["--suite", value["spec"]]
            words += ["--data", value["data"]] if "data" in value else []
            continue
        text = ",".join(map(str, value)) if isinstance(value, list) else str(value)
        words += [f"--{key.replace('_', '-')}", text]
    return shlex.join(words) + "\n"


def _suite_help() -> str:
    """The ``--suite`` help, listing every registered suite (their modules are cheap to import)."""
    usages = ", ".join(plugin.name for plugin in PLUGINS.entries("suites"))
    return (
        f"Run a benchmark suite, NAME[:SUBSET][?option=value]: {usages}. It brings the "
        "benchmark's prompts, reader and protocol (docs/suites.md); `glyphbench list suites` "
        "lists the options, e.g. oneig-text?image_path=oneig (read OneIG's WebP grid cells)."
    )


def run_command(
    config: Path = typer.Option(
        None, "--config", "-c", help="RUN.yaml (flags below override its values)."
    ),
    models: list[str] = typer.Option(
        None, "--models", "-m", help="Model specs, comma-separated or repeated."
    ),
    prompts: str = typer.Option(None, "--prompts", help=SOURCE_HELP),
    suite: str = typer.Option(None, "--suite", help=_suite_help()),
    data: Path = typer.Option(
        None, "--data", help="The suite benchmark's files (default: its hub dataset, if any)."
    ),
    limit: int = typer.Option(
        None,
        "--limit",
        help="Keep the first N prompts of the selection (with --suite: of every subset).",
    ),
    sample: int = typer.Option(None, "--sample", help="Stratified sample of N prompts."),
    stratify: list[str] = typer.Option(
        None, "--stratify", help="Columns to stratify the sample by."
    ),
    where: str = typer.Option(
        None, "--where", help="Filter expression passed to glyphbench.prompts.select."
    ),
    seeds: list[str] = typer.Option(None, "--seeds", help="Seeds, e.g. 0,1,2."),
    seed_policy: str = typer.Option(
        None,
        "--seed-policy",
        help="benchmark | glyphbench: seed each image as the suite's benchmark does (a suite's "
        "default) or with glyphbench's per-image seeds (docs/suites.md).",
    ),
    images_per_prompt: int = typer.Option(
        None, "--images-per-prompt", help="Images per prompt and seed."
    ),
    metrics: list[str] = typer.Option(
        None,
        "--metrics",
        help="Metric families to score besides glyphbench's (and the suite's), e.g. "
        "mario,lex (glyphbench list metrics).",
    ),
    batch_size: int = typer.Option(None, "--batch-size", help="Images per generation call."),
    ocr: str = typer.Option(
        None, "--ocr", help=readers_help("Reader (OCR engine) spec, default rapidocr")
    ),
    out: Path = typer.Option(None, "--out", "-o", help="Output folder."),
    run_id: str = typer.Option(None, "--run-id", help="Run id (default: derived from the config)."),
    device: str = typer.Option(
        None, "--device", help="auto | cpu | cuda | cuda:N for model adapters."
    ),
    shard: str = typer.Option(None, "--shard", help="Run only shard I/N of the jobs (job arrays)."),
    max_usd: float = typer.Option(
        None, "--max-usd", help="Spending cap for hosted-API models (overrides api.max_usd)."
    ),
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        help="Print a short plan (models, prompts, images, estimated time); load no weights.",
    ),
    as_json: bool = typer.Option(
        False,
        "--json",
        help="Print the answer (headline, intervals, ranks, verdicts; docs/report.md) as JSON "
        "on stdout instead of the summary table; with --dry-run: the full resolved plan.",
    ),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bars."),
    read_later: bool = typer.Option(
        False, "--read-later", help="Generate only; read with `glyphbench read RUN` later."
    ),
    read_workers: int = typer.Option(
        None,
        "--read-workers",
        help="Reader processes the run starts itself, reading while it generates "
        "(default 0: read in the run's own thread; docs/running.md).",
    ),
    read_backlog: int = typer.Option(
        None,
        "--read-backlog",
        help="With --read-workers: images that may wait to be read before generation "
        "pauses (default: 4 batches per reader process).",
    ),
) -> None:
    """Generate, OCR and score images; re-running the same command resumes.

    Example:
      glyphbench run --models control:render,control:blank --sample 40 --out runs/x

    A benchmark: glyphbench run --suite longtext --data DIR --models ... --out runs/y

    The run ends with the report's answer: scores with 95% intervals,
    rank, place against the controls (--json: the same for scripts).

    Exit codes (docs/running.md):
      0    every model made rows
      1    every row failed
      2    a user error, or a model cannot run here (its weights);
           nothing written
      3    a model failed on every row, after the others finished;
           with --dry-run: a model cannot run here (its weights)
      4    the disk or quota filled: free space, the same command resumes
      130  Ctrl-C; 143 SIGTERM: the same command resumes
    """
    from rich.console import Console

    # the run's modules stay out of --help's imports (pydantic models, the run kernel)
    from glyphbench.run.config import RunConfig

    _quiet_library_warnings()
    overrides: dict[str, Any] = {
        "models": _split(models),
        "prompts": prompts,
        "limit": limit,
        "sample": sample,
        "stratify": _split(stratify),
        "where": where,
        "seeds": _seeds(seeds),
        "seed_policy": _seed_policy(seed_policy),
        "images_per_prompt": images_per_prompt,
        "metrics": _split(metrics),
        "batch_size": batch_size,
        "ocr": ocr,
        "out": str(out) if out is not None else None,
        "run_id": run_id,
        "device": device,
        "suite": _suite_entry(suite, data),
        "read_workers": read_workers,
        "read_backlog": read_backlog,
    }
    if config is not None:
        text = read_text(config, limit=MAX_CONFIG_BYTES)
        with _naming_flags(overrides):
            run_config = RunConfig.from_yaml_text(text, config).with_overrides(**overrides)
        verbatim, name = text, "config.yaml"
    else:
        if not overrides["models"]:
            raise InputError(None, "give --config RUN.yaml or --models SPEC[,SPEC...]")
        with _naming_flags(overrides):
            run_config = RunConfig.from_mapping(
                {k: v for k, v in overrides.items() if v is not None}, COMMAND_LINE
            )
        verbatim, name = _command_line(overrides), "command.txt"

    if max_usd is not None:  # api.max_usd is outside the run's identity: a resume may raise it
        api = {**run_config.api.model_dump(), "max_usd": max_usd}
        run_config = run_config.with_overrides(api=api)

    console = Console(stderr=True)
    if read_later and run_config.read.workers:
        raise InputError(
            "--read-later",
            "reads nothing while the run generates; --read-workers "
            f"{run_config.read.workers} reads meanwhile: give one of them",
        )
    if dry_run:
        _dry_run(run_config, shard, as_json, verbatim)
        return
    from glyphbench.report.answer import answer_columns
    from glyphbench.report.console import summary_columns
    from glyphbench.run.read_workers import run_with_readers

    suites = [run_config.suite.spec] if run_config.suite is not None else []
    columns = [*summary_columns(suites), *answer_columns(run_config.score.metrics)]
    columns = list(dict.fromkeys([*columns, "image_path", "ocr_text"]))
    grid_reader = _grid_reader(run_config.read, run_config.suite, read_later)  # before writing
    with interruptible():
        result = run_with_readers(
            run_config,
            config_text=verbatim,
            config_name=name,
            shard=shard,
            progress=not no_progress,
            console=console,
            read_later=read_later or grid_reader is not None,
            # the summary's columns and _say_unread's, not the whole table
            read_columns=columns,
        )
        if grid_reader is not None and result.results is not None:
            reader_spec = run_config.read.reader
            result = _read_grid(result, grid_reader, reader_spec, columns, not no_progress)
    if result.results is not None:
        _print_answer(result.results, result.out, run_config.score.metrics, as_json)
        _say_unread(result.results, result.out)
        fail_when_every_row_failed(result.results, "the run")
        fail_when_a_model_failed(result.results)
    else:
        typer.echo(
            f"shard done ({plural(result.outcome.rows_written, 'row')}); "
            f"other shards not finished yet (the last to finish merges; `glyphbench merge` "
            f"at any time) -> {result.out}",
            err=as_json,
        )
        if result.outcome.rows_written and result.outcome.errors == result.outcome.rows_written:
            every_row_failed(result.outcome.errors, "this shard", "")
        if result.outcome.model_errors:
            _models_failed(dict(result.outcome.model_errors), "in this shard")


def _dry_run(run_config: Any, shard: str | None, as_json: bool, config_text: str) -> None:
    """Print the plan; exit 3 naming each model that cannot run here (its weights)."""
    from glyphbench.run.operations import plan_run
    from glyphbench.run.plan import plan_lines, unrunnable

    plan = plan_run(run_config, shard=shard, config_text=config_text)
    text = (
        json.dumps(json_safe(plan), indent=2, default=str)
        if as_json
        else "\n".join(plan_lines(plan))
    )
    typer.echo(text)
    problems = unrunnable(plan)
    if problems:
        _models_failed(problems, "would fail: it cannot run here")


def _print_answer(rows: Any, out: Path, metrics: list[str], as_json: bool) -> None:
    """The run's answer (the report's numbers) as a table, or as JSON with ``--json``."""
    from glyphbench.report.answer import answer_of_rows, answer_settings
    from glyphbench.report.console import print_summary, summary_console

    settings = answer_settings(rows, metrics)
    answer = answer_of_rows(rows, settings) if settings is not None else None
    results = out / "results.parquet"
    if as_json:
        document = answer if answer is not None else {"models": []}
        typer.echo(
            json.dumps(json_safe({**document, "results": str(results)}), indent=2, default=str)
        )
        return
    print_summary(rows, summary_console(), answer=answer)
    typer.echo(f"results: {results}")


def _grid_reader(read: Any, suite: Any, read_later: bool) -> Any:
    """The reader of a run read through OneIG's grid (``?image_path=oneig``), or None.

    Such a run makes its images first and then reads each prompt's grid cells
    (:mod:`glyphbench.run.grid_path`); its reader starts and reads a sample image here,
    before anything is written.
    """
    from glyphbench.run.grid_path import image_path_of, refuse_split_reading

    if image_path_of(suite) is None:
        return None
    if read.workers:
        refuse_split_reading("--read-workers")
    if read_later:
        return None  # `glyphbench read RUN` reads the grid cells later
    from glyphbench.engine.reading import probe_reader, sample_image, start_reader

    reader = start_reader(read.reader)
    probe_reader(reader, sample_image(), read.reader, "a sample image of text")
    return reader


def _read_grid(
    result: Any, reader: Any, reader_spec: str, columns: list[str], progress: bool
) -> Any:
    """Read a finished generation's grid cells; the result with the merged table."""
    from dataclasses import replace

    from glyphbench.run.read_later import read_grid_run
    from glyphbench.run.results import RESULTS, read_results

    read_grid_run(result.out, reader, reader_spec, progress=progress)
    return replace(result, results=read_results(result.out / RESULTS, columns))


def _say_unread(rows: Any, out: Path) -> None:
    """One line when images wait to be read (a `--read-later` run, or one resumed without
    the reader processes an interrupted `--read-workers` run left work for)."""
    from glyphbench.run.read_later import unread

    count = int(unread(rows).sum()) if len(rows) else 0
    if count:
        typer.echo(
            f"{plural(count, 'image')} not read yet: `glyphbench read {out}`, or the same run with "
            "--read-workers N",
            err=True,
        )


#: The source name RunConfig gives settings that came from flags.
COMMAND_LINE = "command-line flags"


@contextlib.contextmanager
def _naming_flags(flags: dict[str, Any]) -> Iterator[None]:
    """A bad flag value is reported as that flag: ``--limit``, ``--models [models.0]``."""
    try:
        yield
    except InputError as exc:
        top = (exc.key or "").split(".")[0]
        if exc.source != COMMAND_LINE or flags.get(top) is None:
            raise
        nested = exc.key if exc.key and exc.key != top else None  # e.g. models.0
        raise InputError(f"--{top.replace('_', '-')}", exc.problem, key=nested) from None


def fail_when_a_model_failed(rows: Any) -> None:
    """Exit 3 naming each model every row of which failed, when others made rows; name the
    models with some failed rows on stderr (exit 0: the same command retries them)."""
    import numpy as np

    failed = np.asarray(failed_mask(rows), dtype=bool)
    models = rows["model"].astype(str).to_numpy()
    wholesale: dict[str, str] = {}
    for model, index in rows.groupby(models, sort=False).indices.items():
        errors = rows["error"].iloc[index[failed[index]]].astype(str)
        if not len(errors):
            continue
        example = errors.value_counts().index[0]
        if len(errors) == len(index):
            count = len(index)
            wholesale[str(model)] = f"every row failed ({count} of {count}); e.g. {example}"
        else:
            typer.echo(  # the label and the error may quote prompt text: controls escaped
                printable(
                    f"warning: {model}: {len(errors)} of {len(index)} rows failed (e.g. "
                    f"{example}); the same command retries them"
                ),
                err=True,
            )
    if wholesale:
        _models_failed(wholesale, "failed")


def _models_failed(problems: dict[str, str], what: str) -> None:
    """One error line per model, then exit :data:`~glyphbench.cli.exit_codes.MODEL_FAILED`."""
    for model, why in problems.items():
        print_error(f"model {model} {what}: {why}")
    raise typer.Exit(MODEL_FAILED)


def merge_command(run_dir: Path = typer.Argument(..., help="The run folder.")) -> None:
    """Merge every shard's part files into DIR/results.parquet (safe to repeat)."""

    from glyphbench.report.analyse import run_warnings
    from glyphbench.report.console import print_summary, suites_of, summary_columns, summary_console
    from glyphbench.run.operations import merge_run
    from glyphbench.run.results import RESULTS, read_results

    # Only the columns the summary reads; a suite's headline ones once known.
    rows = merge_run(run_dir, read_columns=summary_columns())
    if suites_of(rows):
        rows = read_results(run_dir / RESULTS, summary_columns(suites_of(rows)))
    print_summary(rows, summary_console())
    typer.echo(f"merged {plural(len(rows), 'row')} -> {run_dir / 'results.parquet'}")
    # A shard not run yet, or a part file set aside as unreadable, leaves the table short:
    # said here, where a job array's merge step ends, not only by a later report.
    for line in run_warnings(read_run_json(run_dir)):
        typer.echo(f"warning: {line}", err=True)


def rescore_command(
    run_dir: Path = typer.Argument(..., help="The run folder."),
    ocr: str = typer.Option(
        None, "--ocr", help=readers_help("Re-read with this reader (default: the run's)")
    ),
    scores_only: bool = typer.Option(
        False, "--scores-only", help="Keep the OCR text; recompute scores only."
    ),
    batch_size: int = typer.Option(None, "--batch-size", min=1, help="Images per OCR call."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar."),
) -> None:
    """Re-run OCR and/or scoring over existing images, without regenerating them.

    A suite run read through its benchmark's image path (oneig-text?image_path=oneig) is
    re-read the same way: each prompt's grid cells, made again from the stored images.
    """

    from glyphbench.report.console import print_summary, summary_console
    from glyphbench.run.operations import rescore_run

    _quiet_library_warnings()
    with interruptible():
        rows = rescore_run(
            run_dir,
            reader_spec=ocr,
            scores_only=scores_only,
            batch_size=batch_size,
            progress=not no_progress,
        )
    print_summary(rows, summary_console(), title="Summary after rescore")
    typer.echo(f"rescored {plural(len(rows), 'row')} -> {run_dir / 'results.parquet'}")
    fail_when_every_row_failed(rows, "the rescore")


def read_command(
    run_dir: Path = typer.Argument(..., help="The run folder."),
    read_workers: int = typer.Option(
        None, "--read-workers", help="Reader processes (default: the free cores; 0: this one)."
    ),
    shard: str = typer.Option(None, "--shard", help="Read only share I/N of the images."),
    ocr: str = typer.Option(None, "--ocr", help=readers_help("Reader spec (default: the run's)")),
    again: bool = typer.Option(False, "--again", help="Read every image, not only unread ones."),
    follow: bool = typer.Option(
        False, "--follow", help="Keep reading while a `run --read-later` on RUN generates."
    ),
    batch_size: int = typer.Option(None, "--batch-size", min=1, help="Images per reader call."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bar."),
) -> None:
    """Read a run's unread images (a `run --read-later`) in worker processes, then score them.

    Example (4 machines): glyphbench read runs/x --shard 0/4 ... --shard 3/4
    """
    from glyphbench.run.read_later import read_run

    _quiet_library_warnings()
    with interruptible():
        done = read_run(
            run_dir,
            reader_spec=ocr,
            workers=read_workers,
            shard=shard,
            again=again,
            follow=follow,
            batch_size=batch_size,
            progress=not no_progress,
        )
    merged = f"; merged {plural(done['merged'], 'row')}" if done["merged"] is not None else ""
    errors = plural(done["errors"], "OCR error")
    typer.echo(f"read {plural(done['read'], 'image')} ({errors}){merged}")
    if done.get("unfinished"):  # the run it followed died part-way
        print_error(
            f"the run writing {run_dir} stopped before it finished (no shard recorded its "
            "end): its images so far are read; run the same `glyphbench run` again to finish"
        )
        raise typer.Exit(EVERY_ROW_FAILED)
    if done["read"] and done["errors"] == done["read"]:  # not a success
        print_error(f"every image read failed ({done['read']} of {done['read']})")
        raise typer.Exit(EVERY_ROW_FAILED)


def demo_command(
    out: Path = typer.Option(Path("demo_out"), "--out", "-o", help="Output folder."),
    sample: int = typer.Option(40, "--sample", help="Prompts sampled from the default set."),
    no_progress: bool = typer.Option(False, "--no-progress", help="No progress bars."),
) -> None:
    """The embedded default, offline on CPU: controls and a tiny random pipeline.

    Read by the default reader; prints the report's answer and where the run and page are."""
    from glyphbench.cli.demo import run_demo

    _quiet_library_warnings()
    with interruptible():
        run_demo(out, sample=sample, progress=not no_progress)


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
    app.command("merge")(merge_command)
    app.command("rescore")(rescore_command)
    app.command("read")(read_command)
    app.command("demo")(demo_command)
