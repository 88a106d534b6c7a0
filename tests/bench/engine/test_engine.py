"""The run engine alone: run folder, job list, reading step and loop, with stand-ins.

The benchmark and the VAE evaluation on top of it are tested end to end in
tests/bench/run/test_runner*.py and tests/vae_eval/test_vae_runner.py; here each stage is pinned
down with small hand-made inputs.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from PIL import Image

import glyphbench.engine.folder as folder_module
from glyphbench.core.durable import HOST_TAG
from glyphbench.core.errors import InputError
from glyphbench.engine import (
    Batch,
    Group,
    Loop,
    ReadingCache,
    RunFolder,
    Shard,
    read_batch,
    remaining,
    slug,
    take_shard,
)
from glyphbench.readers import Reader, ReadError, Reading


# ------------------------------------------------------------------------ folder names
@given(st.text(max_size=40))
def test_slug_defaults_keep_only_safe_characters(label: str) -> None:
    name = slug(label)
    assert name and all(c.isascii() and (c.isalnum() or c in "._=+-") for c in name)
    assert not name.startswith("_") and not name.endswith("_")


@given(st.text(min_size=1, max_size=30), st.text(min_size=1, max_size=30))
def test_slug_with_digest_keeps_distinct_names_apart(a: str, b: str) -> None:
    assume(a != b)
    assert slug(a, digest=8) != slug(b, digest=8)
    assert re.fullmatch(r"[A-Za-z0-9._-]+", slug(a, keep="._-", limit=60, digest=6))


# -------------------------------------------------------------------------- run folder
def test_manifest_is_created_once_and_another_run_is_refused(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path / "run")
    assert folder.manifest() == {}
    with pytest.raises(InputError, match="not a glyphbench run folder"):
        folder.manifest(required=True)
    assert folder.create_manifest({"run": "a", "prompts": {"hash": "h1"}})
    assert not folder.create_manifest({"run": "b"})
    assert folder.manifest() == {"run": "a", "prompts": {"hash": "h1"}}

    def refuse(key: str, previous: object) -> InputError:
        return InputError(folder.manifest_path, f"{key} was {previous}", key=key)

    folder.check_same_run({"run": "a", "prompts.hash": "h1", "absent": 1}, refuse)
    with pytest.raises(InputError, match=r"prompts\.hash was h1"):
        folder.check_same_run({"prompts.hash": "h2"}, refuse)
    with pytest.raises(InputError, match="absent was None"):
        folder.check_same_run({"absent": 1}, refuse, missing_ok=False)
    RunFolder(tmp_path / "new").check_same_run({"run": "x"}, refuse, missing_ok=False)


def test_write_image_is_png_with_its_sha256(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path)
    image = Image.new("RGB", (8, 4), (10, 20, 30))
    sha = folder.write_image(image, "images/m/a_s0_i0.png")
    data = (tmp_path / "images/m/a_s0_i0.png").read_bytes()
    assert hashlib.sha256(data).hexdigest() == sha
    assert Image.open(tmp_path / "images/m/a_s0_i0.png").tobytes() == image.tobytes()
    assert [p.name for p in (tmp_path / "images/m").iterdir()] == ["a_s0_i0.png"]  # no temp left


def _photo_like() -> Image.Image:
    """Smooth rows with a few edges: content whose PNG bytes depend on the zlib strategy."""
    image = Image.linear_gradient("L").resize((96, 64)).convert("RGB")
    image.paste((200, 30, 30), (10, 10, 40, 30))
    return image


def test_a_new_run_writes_png_format_2_and_an_older_run_keeps_format_1(tmp_path: Path) -> None:
    image = _photo_like()
    formats = {n: folder_module.encode_png(image, n) for n in folder_module.PNG_FORMATS}
    assert formats[1][0] != formats[2][0]  # the formats differ in bytes, not in pixels
    assert all(
        Image.open(io.BytesIO(data)).tobytes() == image.tobytes() for data, _ in formats.values()
    )
    cases = {"new": None, "older": {"run_id": "r"}, "format 2": {"run_id": "r", "png": 2}}
    for name, manifest in cases.items():
        folder = RunFolder(tmp_path / name)
        if manifest is not None:
            folder.write_manifest(manifest)
        expected = 1 if name == "older" else 2
        assert folder.png_format == expected, name
        sha = folder.write_image(image, "images/m/a.png")
        assert (folder.root / "images/m/a.png").read_bytes() == formats[expected][0], name
        assert sha == formats[expected][1]


def test_a_run_json_of_an_unknown_png_format_is_refused_naming_it(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path)
    folder.write_manifest({"run_id": "r", "png": 9})
    with pytest.raises(InputError, match=r"run.json \[png\]: PNG format 9 is not one"):
        folder.write_image(_photo_like(), "images/m/a.png")
    assert not (tmp_path / "images").exists()
    with pytest.raises(ValueError, match="unknown PNG format 0"):
        folder_module.encode_png(_photo_like(), 0)


def _rows(keys: Sequence[str], value: str, error: str = "") -> pd.DataFrame:
    return pd.DataFrame({"k": list(keys), "value": value, "error": error})


def test_parts_are_numbered_and_the_newest_row_of_a_key_wins(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path)
    first = folder.write_part(_rows(["a", "b"], "old", "boom"), "shard-0-of-1", "m")
    second = folder.write_part(_rows(["b", "c"], "new"), "shard-0-of-1", "m")
    other = folder.write_part(_rows(["z"], "other"), "shard-0-of-1", "n")
    # numbered per (shard, group); the writing process (host, pid) and the file's
    # SHA-256 (16 hex digits) in the name
    writer = f"{HOST_TAG}-{os.getpid()}"
    names = [path.name.rsplit("-", 1) for path in (first, second, other)]
    assert [name for name, _ in names] == [
        f"batch-00001-{writer}",
        f"batch-00002-{writer}",
        f"batch-00001-{writer}",
    ]
    for path, (_, sha) in zip((first, second, other), names, strict=True):
        assert sha == hashlib.sha256(path.read_bytes()).hexdigest()[:16] + ".parquet"
    # a new folder object (a resumed process) continues the numbering
    resumed = RunFolder(tmp_path).write_part(_rows(["d"], "x"), "shard-0-of-1", "m")
    assert resumed.name.startswith(f"batch-00003-{writer}-")
    rows = folder.read_parts(["k"], groups=["m"])
    assert dict(zip(rows["k"], rows["value"], strict=True)) == {
        "a": "old",
        "b": "new",
        "c": "new",
        "d": "x",
    }
    assert folder.groups() == {"m", "n"}
    assert folder.done_keys(["k"], groups=["m"]) == {("b",), ("c",), ("d",)}
    assert ("a",) in folder.done_keys(["k"], groups=["m"], with_failed=True)
    merged = folder.merge(
        "table.parquet", ["k"], lambda t: t.sort_values("k", ascending=False, ignore_index=True)
    )
    assert merged["k"].tolist() == ["z", "d", "c", "b", "a"]
    pd.testing.assert_frame_equal(pd.read_parquet(tmp_path / "table.parquet"), merged)


def test_empty_folder_reads_as_no_rows(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path / "nothing")
    assert folder.read_parts(["k"]).empty and folder.done_keys(["k"]) == set()
    typed = folder.read_parts(["k"], conform=lambda f: f.reindex(columns=["k", "error"]))
    assert list(typed.columns) == ["k", "error"] and typed.empty
    assert folder.shards() == {}
    folder.write_json(folder.shard_json("shard-0-of-2"), {"finished": True})
    assert folder.shards() == {"shard-0-of-2": {"finished": True}}


# ---------------------------------------------------------------------------- job list
def test_shards_are_round_robin_within_each_group() -> None:
    groups = {"m": list(range(7)), "n": list(range(3))}
    shards = [take_shard(groups, Shard(i, 3)) for i in range(3)]
    assert shards[1] == {"m": [1, 4], "n": [1]}
    for name, jobs in groups.items():
        assert sorted(j for s in shards for j in s[name]) == jobs
    assert remaining(groups, {0, 5}, key=lambda job: job) == {"m": [1, 2, 3, 4, 6], "n": [1, 2]}
    with pytest.raises(InputError, match="--shard"):
        Shard.parse("2/2")


# ------------------------------------------------------------------------ reading step
class CountingReader(Reader):
    """Reads an image's top-left pixel as text; fails on red images (as a ReadError)."""

    name = "counting"

    def __init__(self, version: str = "1") -> None:
        self._version = version
        self.calls: list[int] = []

    @property
    def version(self) -> str:
        return self._version

    def read(self, images: Sequence[Any]) -> list[Reading]:
        self.calls.append(len(images))
        out = []
        for index, image in enumerate(images):
            pixel = image.getpixel((0, 0))
            if pixel == (255, 0, 0):
                raise ReadError(self.name, index, ValueError("red"))
            out.append(Reading(text=str(pixel)))
        return out


def _image(colour: tuple[int, int, int]) -> Image.Image:
    return Image.new("RGB", (4, 4), colour)


def test_read_batch_falls_back_to_one_image_at_a_time() -> None:
    reader = CountingReader()
    outcomes = read_batch(reader, [_image((1, 1, 1)), _image((255, 0, 0)), _image((2, 2, 2))])
    assert reader.calls == [3, 1, 1, 1]  # the batch failed, then one by one
    assert [getattr(o, "text", None) for o in outcomes] == ["(1, 1, 1)", None, "(2, 2, 2)"]
    failure = outcomes[1]
    assert isinstance(failure, ReadError) and str(failure.cause) == "red"
    assert read_batch(reader, []) == []


def test_reading_cache_reads_each_image_once_per_reader() -> None:
    reader, cache = CountingReader(), ReadingCache()
    white, black = _image((255, 255, 255)), _image((0, 0, 0))
    first = read_batch(reader, [white, white.copy(), black], cache)
    assert reader.calls == [2]  # the repeated image is read once
    again = read_batch(reader, [black, white], cache)
    assert reader.calls == [2] and [o for o in again] == [first[2], first[0]]
    other = CountingReader(version="2")  # another identity: its own readings
    read_batch(other, [white], cache)
    assert other.calls == [1] and len(cache) == 3


def test_failures_are_not_cached() -> None:
    reader, cache = CountingReader(), ReadingCache()
    red = _image((255, 0, 0))
    assert isinstance(read_batch(reader, [red], cache)[0], ReadError)
    assert isinstance(read_batch(reader, [red], cache)[0], ReadError)
    assert reader.calls == [1, 1] and len(cache) == 0


# -------------------------------------------------------------------------------- loop
class ListProducer:
    """Outputs ``job * 10``; raises for jobs in ``fail``, fake OOM for batches > ``fits``."""

    def __init__(self, fail: set[int] | None = None, fits: int = 100) -> None:
        self.fail = fail or set()
        self.fits = fits
        self.sizes: list[int] = []
        self.closed = False

    def prepare(self, jobs: list[int]) -> list[int]:
        return list(jobs)

    def produce(self, inputs: list[int]) -> list[int]:
        self.sizes.append(len(inputs))
        if len(inputs) > self.fits:
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB")
        if self.fail & set(inputs):
            raise ValueError("bad job")
        return [job * 10 for job in inputs]

    def close(self) -> None:
        self.closed = True


def _finish(batch: Batch) -> pd.DataFrame:
    error = f"{batch.stage}: {batch.failure}" if batch.failure else ""
    outputs = batch.outputs or [None] * len(batch.jobs)
    return pd.DataFrame(
        {
            "group": batch.group.name,
            "job": batch.jobs,
            "output": outputs,
            "size": batch.size,
            "error": error,
            "thread": threading.current_thread().name,
        }
    )


def test_loop_writes_a_part_per_batch_and_keeps_failures_local(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path)
    ok, flaky = ListProducer(), ListProducer(fail={4})

    def broken() -> ListProducer:
        raise OSError("no such checkpoint")

    groups = [
        Group("ok", "ok", [1, 2, 3], lambda: ok),
        Group("broken", "broken", [7, 8, 9], broken),
        Group("empty", "empty", [], broken),  # no jobs: never opened
        Group("flaky", "flaky", [4, 5, 6], lambda: flaky),
    ]
    seen: list[tuple[str, int, int]] = []
    said: list[str] = []
    stats = Loop(
        folder,
        "shard-0-of-1",
        _finish,
        batch_size=2,
        progress=lambda *args: seen.append(args),
        say=said.append,
    ).run(groups)
    rows = folder.read_parts(["group", "job"])
    by_job = rows.set_index("job")
    assert by_job.loc[[1, 2, 3], "output"].tolist() == [10, 20, 30]
    assert by_job.loc[[7, 8, 9], "error"].eq("Load: no such checkpoint").all()
    assert by_job.loc[[4, 5], "error"].eq("Generate: bad job").all()  # the failing batch only
    assert by_job.loc[6, "output"] == 60 and by_job.loc[6, "error"] == ""
    assert set(rows["thread"]) == {"glyphbench-worker"}
    assert len(folder.part_files()) == 5  # ok: 2 batches, broken: 1, flaky: 2
    assert (stats.rows_written, stats.errors) == (9, 5)
    assert isinstance(stats.groups["broken"].load_error, OSError)
    assert ok.closed and flaky.closed and "empty" not in stats.groups
    # each group that loaded says so first (done 0: its clock starts), then each batch;
    # a group may start while the worker still finishes the one before (threads interleave)
    assert [s for s in seen if s[0] == "ok"] == [("ok", 0, 3), ("ok", 2, 3), ("ok", 3, 3)]
    assert [s for s in seen if s[0] == "broken"] == [("broken", 3, 3)]
    assert [s for s in seen if s[0] == "flaky"] == [
        ("flaky", 0, 3),
        ("flaky", 2, 3),
        ("flaky", 3, 3),
    ]
    assert said == ["[bold red]model broken failed to load:[/] Load: OSError: no such checkpoint"]


def test_out_of_memory_halves_the_batch_for_the_rest_of_the_group(tmp_path: Path) -> None:
    producer = ListProducer(fits=1)
    folder = RunFolder(tmp_path)
    stats = Loop(folder, "s", _finish, batch_size=4).run(
        [Group("g", "g", [1, 2, 3], lambda: producer)]
    )
    assert producer.sizes == [3, 2, 1, 1, 1]  # 4 -> 2 -> 1, then one at a time
    assert stats.groups["g"].oom_halvings == 2
    rows = folder.read_parts(["job"])
    assert rows["output"].tolist() == [10, 20, 30] and rows["size"].tolist() == [1, 1, 1]


def test_a_worker_failure_stops_the_run(tmp_path: Path) -> None:
    producer = ListProducer()

    def finish(batch: Batch) -> pd.DataFrame:
        raise OSError("disk full")

    loop = Loop(RunFolder(tmp_path), "s", finish, batch_size=1)
    with pytest.raises(OSError, match="disk full"):
        loop.run([Group("g", "g", list(range(50)), lambda: producer)])
    assert len(producer.sizes) < 50 and producer.closed  # it stopped early and cleaned up
    assert not list(tmp_path.rglob("*.parquet"))


def test_a_waiting_batch_is_begun_before_the_current_one_is_finished(tmp_path: Path) -> None:
    """With ``begin``, the worker hands the next waiting batch over before finishing the
    current one (the writer encodes it meanwhile); never more than two begun,
    part files in batch order, the same rows as ``finish`` alone."""
    events: list[tuple[str, int]] = []
    begun = 0
    most = 0
    released = threading.Event()

    def begin(batch: Batch) -> Any:
        nonlocal begun, most
        begun += 1
        most = max(most, begun)
        events.append(("begin", batch.jobs[0]))

        def rest() -> pd.DataFrame:
            nonlocal begun
            released.wait(5)  # the first batch waits until the producer has made them all
            begun -= 1
            events.append(("finish", batch.jobs[0]))
            return _finish(batch)

        return rest

    class Producer(ListProducer):
        def produce(self, inputs: list[int]) -> list[int]:
            if inputs[0] == 5:  # the last batch: every other one is queued or begun
                released.set()
            return super().produce(inputs)

    folder = RunFolder(tmp_path)
    stats = Loop(folder, "s", _finish, begin=begin, batch_size=1).run(
        [Group("g", "g", [1, 2, 3, 4, 5], Producer)]
    )
    assert stats.rows_written == 5 and most == 2
    finished = [job for what, job in events if what == "finish"]
    assert finished == [1, 2, 3, 4, 5]
    assert events.index(("begin", 2)) < events.index(("finish", 1))  # 2 begun while 1 waited
    rows = folder.read_parts(["job"])
    assert rows.sort_values("job")["output"].tolist() == [10, 20, 30, 40, 50]


def test_a_begun_batch_is_finished_whole_when_production_is_interrupted(tmp_path: Path) -> None:
    """Ctrl-C in the main thread: the batches begun are finished (their part files whole),
    the queued ones dropped; the interruption reaches the caller."""
    finished: list[int] = []
    second_begun = threading.Event()

    def begin(batch: Batch) -> Any:
        if batch.jobs[0] == 2:
            second_begun.set()

        def rest() -> pd.DataFrame:
            finished.append(batch.jobs[0])
            return _finish(batch)

        return rest

    class Producer(ListProducer):
        def produce(self, inputs: list[int]) -> list[int]:
            if inputs[0] == 3:
                assert second_begun.wait(5)
                raise KeyboardInterrupt
            return super().produce(inputs)

    folder = RunFolder(tmp_path)
    loop = Loop(folder, "s", _finish, begin=begin, batch_size=1)
    with pytest.raises(KeyboardInterrupt):
        loop.run([Group("g", "g", [1, 2, 3, 4], Producer)])
    assert finished == [1, 2]  # made before the interruption: finished, in order
    assert sorted(folder.read_parts(["job"])["job"]) == [1, 2]


def test_shard_json_and_manifest_are_plain_json(tmp_path: Path) -> None:
    folder = RunFolder(tmp_path)
    folder.write_manifest({"a": [1, 2], "b": "é"})
    assert json.loads(folder.manifest_path.read_text(encoding="utf-8")) == {"a": [1, 2], "b": "é"}


def test_a_load_failure_message_keeps_the_brackets_of_its_name_and_error(
    tmp_path: Path,
) -> None:
    """The message is Rich markup: "m [reader easyocr]" or "[blocked] ..." unescaped would
    lose its brackets on the console."""
    from rich.console import Console

    def broken() -> ListProducer:
        raise OSError("[blocked] no such checkpoint")

    said: list[str] = []
    groups = [Group("m [reader easyocr]", "m", [7], broken)]
    Loop(RunFolder(tmp_path), "shard-0-of-1", _finish, batch_size=2, say=said.append).run(groups)
    console = Console(record=True, width=200)
    console.print(said[0])
    text = console.export_text()
    assert "model m [reader easyocr] failed to load: Load: OSError: [blocked]" in text, text
