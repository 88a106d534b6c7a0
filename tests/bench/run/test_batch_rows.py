"""A batch's rows built as Arrow columns are the rows the frame path builds.

``Runner.rows`` builds each batch's table column by column (:class:`BatchRows`);
``Runner.rows_frame`` is the frame path it replaced (records -> DataFrame, prompt
rows, ``score_rows``, ``conform_results``). Both must give the same table: values,
Arrow types and pandas metadata, so the same part file bytes, for every shape a
batch can take (failed images, failed readings, a failed batch, nothing read,
controls' drawn text, hosted models' costs, prompts without text or attributes).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pandas as pd
import pyarrow as pa
import pytest
from PIL import Image

from glyphbench.engine import Batch, Group, RunFolder
from glyphbench.models.base import COST_KEY, DRAWN_KEY, ImageNotMade
from glyphbench.prompts.schema import PromptSet
from glyphbench.readers.base import Reading
from glyphbench.run.config import RunConfig
from glyphbench.run.image_jobs import build_jobs
from glyphbench.run.operations import run_benchmark
from glyphbench.run.results import TIMING_COLUMNS, BatchRows
from glyphbench.run.shard import Runner
from tests.helpers.runner_helper import PixelOCR, register

register()

MODEL = "control:render?size=64"


def _prompts() -> PromptSet:
    frame = pd.DataFrame(
        {
            "prompt_id": [f"p{i}" for i in range(6)],
            "prompt": [f"A sign that says '{t}'" for t in ("OPEN", "Bakery", "", "x", "y", "z")],
            "text": ["OPEN", "Bakery", None, "Hello world", "42% off!", "EXIT"],
            "prompt_type": ["simple"] * 6,
            "char_length": [4, 6, None, 11, 8, 4],
            "rare": [True, False, None, False, True, False],
        }
    )
    return PromptSet(frame, source="test")


def _runner(tmp_path: Path, *, read_now: bool = True) -> Runner:
    config = RunConfig.from_mapping(
        {"models": [MODEL], "batch_size": 4, "seeds": [0], "ocr": "pixelocr", "out": str(tmp_path)}
    )
    return Runner(
        config,
        _prompts(),
        folder=RunFolder(tmp_path),
        reader=PixelOCR(),
        progress=False,
        read_now=read_now,
    )


def _image(text: str | None = None, cost: float | None = None) -> Image.Image:
    image = Image.new("RGB", (8, 6), "white")
    if text is not None:
        image.info[DRAWN_KEY] = text
    if cost is not None:
        image.info[COST_KEY] = cost
    return image


def _reading(text: str) -> Reading:
    return Reading(
        text=text, pieces=[text], boxes=[[(0, 0), (1, 0), (1, 1), (0, 1)]], confidences=[1]
    )


def _shapes() -> dict[str, dict[str, Any]]:
    """Batches of every shape: outputs, readings and the producer's flags."""
    ok = [_image() for _ in range(4)]
    return {
        "all read": {"outputs": ok, "readings": [_reading(t) for t in ("OPEN", "Bak", "", "Hi")]},
        "failed images and a failed reading": {
            "outputs": [
                _image(),
                ValueError("boom"),
                ImageNotMade("Refused: no", cost_usd=0.0),
                _image(),
            ],
            "readings": [_reading("OPEN"), None, None, RuntimeError("unreadable")],
        },
        "every reading failed": {
            "outputs": ok,
            "readings": [RuntimeError("blind")] * 4,
        },
        "batch failed": {"outputs": None, "failure": RuntimeError("no weights"), "stage": "Load"},
        "controls' drawn text": {
            "outputs": [_image("OPEN"), _image("Bakery"), _image(""), ValueError("x")],
            "readings": [_reading("OPEN"), _reading("Bakery"), _reading(""), None],
            "control": True,
        },
        "hosted model costs": {
            "outputs": [
                _image(cost=0.04),
                ImageNotMade("Refused: policy", cost_usd=0.01),
                _image(),
                _image(),
            ],
            "readings": [_reading("OPEN"), None, _reading("x"), _reading("")],
            "billable": True,
        },
    }


def _batch(
    runner: Runner, shape: dict[str, Any], start: int = 0
) -> tuple[Batch, list[Any], list[Any]]:
    entry = runner.config.models[0]
    jobs = build_jobs(runner.config, runner.frame)[entry.label][start : start + 4]
    producer = SimpleNamespace(
        is_control=shape.get("control", True), billable=shape.get("billable", False)
    )
    outputs = shape["outputs"]
    batch = Batch(
        Group(entry.label, entry.slug, jobs, lambda: producer),
        jobs,
        producer,
        outputs=list(outputs) if outputs is not None else None,
        failure=shape.get("failure"),
        stage=shape.get("stage", ""),
        seconds=0.5,
        size=4 if outputs is not None else 0,
    )
    files: list[Any] = [None] * 4
    readings: list[Any] = shape.get("readings", [None] * 4)
    for i, output in enumerate(outputs or []):
        if isinstance(output, Image.Image):
            files[i] = (f"images/m/{i}.png", f"{i:064x}")
    return batch, files, readings


def _frame_table(runner: Runner, batch: Batch, files: list[Any], readings: list[Any]) -> pa.Table:
    records = runner.records(batch, files, readings, 0.25)
    return pa.Table.from_pandas(runner.rows_frame(batch, records), preserve_index=False)


def _count_frame_rows(runner: Runner) -> tuple[list[int], Callable[[], None]]:
    """Count the runner's calls of ``rows_frame`` (the frame path) from now on; the
    returned call puts the plain method back."""
    calls: list[int] = []
    frame_rows = runner.rows_frame

    def counted(*args: Any) -> pd.DataFrame:
        calls.append(1)
        return frame_rows(*args)

    def stop() -> None:
        runner.rows_frame = frame_rows  # type: ignore[method-assign]

    runner.rows_frame = counted  # type: ignore[method-assign,assignment]
    return calls, stop


@pytest.mark.parametrize("read_now", [True, False])
@pytest.mark.parametrize("name", list(_shapes()))
def test_batch_table_is_the_frame_table(tmp_path: Path, name: str, read_now: bool) -> None:
    runner = _runner(tmp_path, read_now=read_now)
    shape = _shapes()[name]
    first = runner.rows(*_batch(runner, shape), 0.25)  # first of its shape: via the frame
    calls, stop_counting = _count_frame_rows(runner)
    batch, files, readings = _batch(runner, shape, start=2)  # other prompts, same shape
    built = runner.rows(batch, files, readings, 0.25)
    assert not calls, "the second batch of a shape is built from columns"
    assert runner._batch_rows is not None and runner._batch_rows.enabled
    stop_counting()
    expected = _frame_table(runner, batch, files, readings)
    assert isinstance(built, pa.Table) and isinstance(first, pa.Table)
    assert built.schema.equals(expected.schema, check_metadata=True)
    assert built.equals(expected), name
    # the same part file, byte for byte
    one, two = RunFolder(tmp_path / "a"), RunFolder(tmp_path / "b")
    part = one.write_part(built, "s", "m")
    assert part.read_bytes() == two.write_part(expected, "s", "m").read_bytes()
    merged = pd.read_parquet(part)
    assert merged.dtypes.equals(pd.read_parquet(two.part_files()[0]).dtypes)


@pytest.mark.parametrize("read_now", [True, False])
def test_warm_rows_learns_the_first_shape_before_the_first_batch(
    tmp_path: Path, read_now: bool
) -> None:
    """The worker's warm-up (while the model loads) learns the shape of a batch whose
    images were all made from a stand-in batch: the run's first real batch of that shape
    is then built from columns, the same table as the frame path's."""
    runner = _runner(tmp_path, read_now=read_now)
    entry = runner.config.models[0]
    jobs = build_jobs(runner.config, runner.frame)[entry.label]
    runner._first_group = Group(entry.label, entry.slug, jobs, lambda: None)
    runner.warm_rows()
    calls, stop_counting = _count_frame_rows(runner)
    shape = dict(_shapes()["all read"])
    if not read_now:  # as the run passes them: nothing read yet
        shape["readings"] = [None] * 4
    batch, files, readings = _batch(runner, shape)
    built = runner.rows(batch, files, readings, 0.25)
    assert not calls, "the first batch was built from columns"
    stop_counting()
    expected = _frame_table(runner, batch, files, readings)
    assert isinstance(built, pa.Table)
    assert built.schema.equals(expected.schema, check_metadata=True) and built.equals(expected)
    # a batch of another shape (a failure) still learns its own through the frame
    calls, _ = _count_frame_rows(runner)
    failed = runner.rows(*_batch(runner, _shapes()["batch failed"]), 0.25)
    assert calls == [1] and isinstance(failed, pa.Table) and len(failed) == 4


def test_shapes_in_turn_share_one_builder(tmp_path: Path) -> None:
    """Shapes alternate in a run (a failed batch between good ones): each keeps its schema."""
    runner = _runner(tmp_path)
    shapes = list(_shapes().values())
    for shape in [*shapes, *shapes]:
        batch, files, readings = _batch(runner, shape, start=1)
        built = runner.rows(batch, files, readings, 0.25)
        assert built.equals(_frame_table(runner, batch, files, readings))
        assert built.schema.equals(
            _frame_table(runner, batch, files, readings).schema, check_metadata=True
        )
    assert runner._batch_rows is not None and runner._batch_rows.enabled


def test_untyped_prompt_columns_and_suites_use_the_frame(tmp_path: Path) -> None:
    prompts = _prompts()
    prompts.frame["note"] = pd.Series(["a", None, 3, "b", None, "c"], dtype=object)
    config = RunConfig.from_mapping({"models": [MODEL], "ocr": "pixelocr", "out": str(tmp_path)})
    assert not BatchRows(prompts.frame, config.score, config.suite).enabled
    assert BatchRows(_prompts().frame, config.score, config.suite).enabled
    with_metrics = config.with_overrides(metrics=["vae"])
    assert not BatchRows(_prompts().frame, with_metrics.score, with_metrics.suite).enabled


@pytest.mark.slow
def test_a_run_writes_the_same_table_either_way(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A whole run (retried failures, two models) merges to the same results.parquet."""
    from tests.helpers.runner_helper import prompt_set

    marker = tmp_path / "failed-once"

    def run(out: Path) -> pd.DataFrame:
        marker.unlink(missing_ok=True)
        config = RunConfig.from_mapping(
            {
                "models": [f"flaky:render?fail=Bakery&marker={marker}", "control:blank?size=64"],
                "batch_size": 3,
                "seeds": [0, 1],
                "ocr": "pixelocr",
                "out": str(out),
            }
        )
        for _ in range(2):  # the second run retries the failed batch
            run_benchmark(config, prompt_set=prompt_set(7), reader=PixelOCR(), progress=False)
        return pd.read_parquet(out / "results.parquet")

    columns = run(tmp_path / "columns")
    monkeypatch.setattr(
        BatchRows,
        "table",
        lambda self, records, rows, frame_rows: pa.Table.from_pandas(
            frame_rows(), preserve_index=False
        ),
    )
    frames = run(tmp_path / "frames")
    assert columns.dtypes.equals(frames.dtypes)
    same = [c for c in columns.columns if c not in TIMING_COLUMNS]
    pd.testing.assert_frame_equal(columns[same], frames[same])
    assert len(columns) == 28 and (columns["error"] == "").all()
