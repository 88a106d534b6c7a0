"""The streamed merge writes the same results table as the in-memory merge.

The in-memory merge (:meth:`RunFolder.merge`: every part file concatenated, the newest
row of each key kept, then sorted) is the reference; :meth:`RunFolder.merge_stream`
must write the same rows in the same order with the same types, whatever the chunk
size, on folders with retried rows, failed rows, rows of unknown models and prompts,
and an optional column that only some part files carry. A merge killed half-way
leaves the previous results.parquet (or none), never a torn one.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pyarrow.parquet as pq
import pytest

from glyphbench.core.schema import ROW_KEY
from glyphbench.engine import RunFolder
from glyphbench.run.merge import JobOrder, order_rows
from glyphbench.run.results import conform_results
from tests.helpers.paths import REPO_ROOT

LABELS = ["model-b", "model-a", "control:blank"]
PROMPT_IDS = [f"p{i:03d}" for i in (5, 1, 3, 0, 2, 4)]


def _rows(
    model: str, prompts: list[str], seed: int, *, error: str = "", ocr: str = "x"
) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "run_id": "r",
            "model": model,
            "is_control": model.startswith("control"),
            "prompt_id": prompts,
            "prompt": [f"say {p}" for p in prompts],
            "text": "OPEN",
            "seed": seed,
            "sample_index": 0,
            "image_path": [f"images/{model}/{p}_s{seed}.png" for p in prompts],
            "width": 64,
            "height": 64,
            "ocr_text": ocr,
            "ocr_engine": "prepared",
            "ocr_version": "1",
            "error": error,
        }
    )


def messy_folder(root: Path) -> RunFolder:
    """Part files with retries (a later file replaces a failed row), rows still failed,
    a model and prompts outside the config, and ``cost_usd`` in some files only."""
    folder = RunFolder(root)
    written: list[Path] = []

    def part(rows: pd.DataFrame, shard: str, group: str) -> None:
        written.append(folder.write_part(conform_results(rows), shard, group))

    part(_rows("model-a", ["p000", "p001", "p002"], 0, error="OOM"), "0-of-2", "model-a")
    part(_rows("model-b", ["p003", "p004", "p005"], 0), "0-of-2", "model-b")
    part(_rows("model-a", ["p003", "p004", "p005"], 0), "1-of-2", "model-a")
    part(_rows("zz-unknown", ["p001", "q-extra"], 1), "1-of-2", "zz-unknown")
    part(_rows("model-a", ["p000", "p001"], 0, ocr="retried"), "0-of-2", "model-a")  # retry
    priced = _rows("control:blank", ["p002", "p000", "q-extra", "a-extra"], 1)
    part(priced.assign(cost_usd=[0.0, 0.01, float("nan"), 0.02]), "1-of-2", "control_blank")
    part(_rows("model-b", ["p004"], 0, error="still failing"), "0-of-2", "model-b")  # a retry
    part(_rows("model-b", ["p001", "p002"], 1), "0-of-2", "model-b")
    part(_rows("model-a", ["p002"], 0, ocr="re-read"), "1-of-2", "model-a")  # replaces "OOM"
    part(pd.DataFrame(), "1-of-2", "model-a")  # an empty part file
    for age, path in enumerate(written):  # oldest first, whatever the file system's clock
        os.utime(path, ns=(1_000_000_000 * (age + 1),) * 2)
    return folder


def _order(rows: pd.DataFrame) -> pd.DataFrame:
    return order_rows(rows, LABELS, PROMPT_IDS)


def _same_table(old: Path, new: Path) -> None:
    pd.testing.assert_frame_equal(pd.read_parquet(new), pd.read_parquet(old), check_exact=True)
    assert pq.read_schema(new).equals(pq.read_schema(old), check_metadata=False)


@pytest.mark.parametrize("lean", [False, True], ids=["frame-pick", "job-order"])
@pytest.mark.parametrize("chunk_rows", [1, 3, 7, 100_000])
def test_streamed_merge_equals_the_in_memory_merge(
    tmp_path: Path, chunk_rows: int, lean: bool
) -> None:
    folder = messy_folder(tmp_path)
    old = folder.merge("old.parquet", ROW_KEY, _order, conform=conform_results)
    seen: list[int] = []
    count = folder.merge_stream(
        "new.parquet",
        ROW_KEY,
        _order,
        conform=conform_results,
        pick=JobOrder(LABELS, PROMPT_IDS) if lean else None,
        observe=lambda chunk: seen.append(len(chunk)),
        chunk_rows=chunk_rows,
    )
    _same_table(tmp_path / "old.parquet", tmp_path / "new.parquet")
    assert count == len(old) == sum(seen) == 17
    assert max(seen) <= chunk_rows
    merged = pd.read_parquet(tmp_path / "new.parquet")
    a = merged[merged["model"] == "model-a"].set_index("prompt_id")
    assert a.loc["p000", "ocr_text"] == "retried" and a.loc["p002", "ocr_text"] == "re-read"
    assert a.loc["p002", "error"] == ""  # the failed row was replaced by its retry
    assert merged["model"].tolist()[-2:] == ["zz-unknown", "zz-unknown"]  # unknown: last
    assert merged["prompt_id"].tolist()[-4:] == ["a-extra", "q-extra", "p001", "q-extra"]
    assert pq.ParquetFile(tmp_path / "new.parquet").metadata.num_row_groups == -(-17 // chunk_rows)


def test_job_order_sorts_unlisted_models_and_prompts_as_order_rows(tmp_path: Path) -> None:
    """Unlisted models tie on their rank and are then sorted by prompt rank, then text."""
    folder = RunFolder(tmp_path)
    for i, (model, prompts) in enumerate(
        [("zz", ["p001", "b", "a"]), ("yy", ["p005", "a", "c"]), ("model-a", ["c", "p000"])]
    ):
        folder.write_part(conform_results(_rows(model, prompts, i % 2)), "0-of-1", model)
    folder.merge("old.parquet", ROW_KEY, _order, conform=conform_results)
    pick = JobOrder(LABELS, PROMPT_IDS)
    folder.merge_stream("new.parquet", ROW_KEY, _order, conform=conform_results, pick=pick)
    _same_table(tmp_path / "old.parquet", tmp_path / "new.parquet")
    merged = pd.read_parquet(tmp_path / "new.parquet")
    assert list(zip(merged["model"], merged["prompt_id"], strict=True))[2:5] == [
        ("yy", "p005"),
        ("zz", "p001"),
        ("yy", "a"),
    ]


def test_streamed_merge_of_no_rows_equals_the_in_memory_merge(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path)
    folder.write_part(conform_results(pd.DataFrame()), "0-of-1", "m")
    folder.merge("old.parquet", ROW_KEY, _order, conform=conform_results)
    assert folder.merge_stream("new.parquet", ROW_KEY, _order, conform=conform_results) == 0
    _same_table(tmp_path / "old.parquet", tmp_path / "new.parquet")


def test_a_filter_in_the_order_drops_rows_as_in_memory(tmp_path: Path) -> None:
    folder = messy_folder(tmp_path)

    def known(rows: pd.DataFrame) -> pd.DataFrame:
        return _order(rows[rows["model"].isin(LABELS) & rows["prompt_id"].isin(PROMPT_IDS)])

    folder.merge("old.parquet", ROW_KEY, known, conform=conform_results)
    assert folder.merge_stream("new.parquet", ROW_KEY, known, conform=conform_results) == 13
    _same_table(tmp_path / "old.parquet", tmp_path / "new.parquet")


@pytest.mark.slow
def test_a_real_run_merges_to_the_same_table(tmp_path: Path) -> None:
    """A run of the harness benchmark's plug-ins, resumed after a retry, merged both ways."""
    sys.path.insert(0, str(REPO_ROOT / "benchmarks"))
    import bench_harness

    from glyphbench.run.merge import merge_run, merge_run_rows
    from glyphbench.run.operations import run_benchmark

    bench_harness.register()
    config, prompts = bench_harness.run_config(tmp_path / "run", 120, n_models=3)
    run_benchmark(config, prompt_set=prompts, progress=False)
    folder = RunFolder(tmp_path / "run")
    labels = [model.label for model in config.models]
    ids = prompts.frame["prompt_id"].astype(str).tolist()
    folder.merge(
        "old.parquet", ROW_KEY, lambda r: order_rows(r, labels, ids), conform=conform_results
    )
    tally = merge_run_rows(tmp_path / "run")
    _same_table(tmp_path / "run" / "old.parquet", tmp_path / "run" / "results.parquet")
    assert tally.rows == 120 and tally.errors == 0
    returned = merge_run(tmp_path / "run")
    pd.testing.assert_frame_equal(returned, pd.read_parquet(tmp_path / "run" / "old.parquet"))


KILLED_MERGE = """
import sys, time
import pyarrow.parquet as pq
from glyphbench.engine import RunFolder
from glyphbench.run.merge import JobOrder, order_rows
from glyphbench.core.schema import ROW_KEY
from glyphbench.run.results import conform_results
write = pq.ParquetWriter.write_table
def slow(self, *args, **kwargs):
    write(self, *args, **kwargs)
    print("chunk", flush=True)
    time.sleep(60)  # killed here, half-way through the merge
pq.ParquetWriter.write_table = slow
RunFolder(sys.argv[1]).merge_stream(
    "results.parquet", ROW_KEY, lambda r: order_rows(r, [], []),
    conform=conform_results, chunk_rows=2,
)
"""


@pytest.mark.slow
@pytest.mark.parametrize("previous", [True, False], ids=["old-kept", "none"])
def test_a_merge_killed_half_way_leaves_the_old_table_or_none(
    tmp_path: Path, previous: bool
) -> None:
    folder = messy_folder(tmp_path)
    results = tmp_path / "results.parquet"
    if previous:
        folder.merge("results.parquet", ROW_KEY, lambda r: r.head(3), conform=conform_results)
    before = results.read_bytes() if previous else None
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    process = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(KILLED_MERGE), str(tmp_path)],
        env=env,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "chunk"  # one chunk written, more to come
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    if previous:
        assert results.read_bytes() == before
    else:
        assert not results.exists()
    # The next merge (a new process holding the lock) writes the whole table.
    count = RunFolder(tmp_path).merge_stream(
        "results.parquet", ROW_KEY, lambda r: order_rows(r, [], []), conform=conform_results
    )
    assert count == 17 and len(pd.read_parquet(results)) == 17


def test_an_unreadable_part_file_is_set_aside_and_the_rest_merged(tmp_path: Path) -> None:
    folder = messy_folder(tmp_path)
    broken = folder.part_dir("1-of-2", "model-a") / "batch-99999-x-1.parquet"
    broken.write_bytes(b"PAR1 not really")
    said: list[str] = []
    folder.say = said.append
    count = folder.merge_stream(
        "new.parquet", ROW_KEY, _order, conform=conform_results, pick=JobOrder(LABELS, PROMPT_IDS)
    )
    assert count == 17 and not broken.exists()
    assert broken.with_name(broken.name + ".unreadable").exists()
    assert any("unreadable part file" in line for line in said)


def test_merge_of_a_folder_that_is_no_run_writes_nothing_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`merge nope` said "not a glyphbench run folder" after making nope/.locks/."""
    from tests.helpers.cli_runs import run_cli

    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine", encoding="utf-8")
    for folder in (tmp_path / "nope", other):
        code, err = run_cli(["merge", str(folder)], capsys)
        assert code == 2 and "not a glyphbench run folder" in err, err
    assert not (tmp_path / "nope").exists()
    assert [p.name for p in other.iterdir()] == ["notes.txt"]
