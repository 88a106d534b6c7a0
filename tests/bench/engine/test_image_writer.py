"""The image writer process: the same files as the worker thread, as safe.

PNG encoding and SHA-256 moved out of the generating process; what must not change:
the bytes on disk and their digests, the flush before the part file, errors reaching
the run, and a killed run resuming to the same rows (the process dies with the run).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd
import pytest
from PIL import Image, ImageDraw

import glyphbench.engine.folder as folder_module
from glyphbench.core.errors import InputError, ProcessEnded
from glyphbench.core.registry import PLUGINS, Spec
from glyphbench.engine import RunFolder
from glyphbench.engine.image_writer import (
    MODE_VARIABLE,
    PROCESS_MIN_PIXELS,
    PROCESSES_VARIABLE,
    ImageWriter,
    WriterPool,
    image_pixels,
    shippable,
    wants_process,
    writer_mode,
    writer_processes,
)
from glyphbench.models.controls import RenderControl
from glyphbench.run.config import RunConfig
from glyphbench.run.operations import run_benchmark
from tests.helpers import run_process as runs
from tests.helpers.polling import wait_until
from tests.helpers.runner_helper import (
    GATE_VARIABLE,
    SlowOptions,
    alive,
    child_environment,
    descendants,
    prompt_set,
    register,
    write_prompts_csv,
)


def _images() -> dict[str, Image.Image]:
    rng = np.random.default_rng(7)
    photo = Image.new("RGB", (320, 240), (40, 90, 200))
    ImageDraw.Draw(photo).text((20, 100), "OPEN 24h", fill="white")
    with_profile = Image.new("RGB", (16, 16), "red")
    with_profile.info["icc_profile"] = b"not a real profile"
    costed = Image.fromarray(rng.integers(0, 256, (40, 30, 3), dtype=np.uint8))
    costed.info.update({"glyphbench_cost_usd": 0.04, "glyphbench_drawn": "OPEN"})
    palette = Image.new("P", (24, 24), 3)
    palette.putpalette([v % 256 for v in range(768)])
    return {
        "noise": Image.fromarray(rng.integers(0, 256, (300, 260, 3), dtype=np.uint8)),
        "photo": photo,
        "rgba": Image.fromarray(rng.integers(0, 256, (33, 17, 4), dtype=np.uint8), "RGBA"),
        "gray": Image.fromarray(rng.integers(0, 256, (21, 40), dtype=np.uint8), "L"),
        "gray-alpha": Image.new("LA", (9, 9), (100, 50)),
        "info-only": costed,
        "palette": palette,  # not shipped: written in the thread
        "profile": with_profile,  # not shipped: its PNG carries the profile
    }


@pytest.fixture
def writer(tmp_path: Path):
    started = ImageWriter(tmp_path / "run").start()
    yield started
    started.close()


def test_the_process_writes_the_same_bytes_and_digests_as_the_thread(
    tmp_path: Path, writer: ImageWriter
) -> None:
    images = _images()
    assert [name for name, image in images.items() if not shippable(image)] == [
        "palette",
        "profile",
    ]
    folder = RunFolder(tmp_path / "run")
    names = list(images)
    new = folder.write_images(list(images.values()), [f"images/new/{n}.png" for n in names], writer)
    old = [folder.write_image(images[n], f"images/old/{n}.png") for n in names]
    assert new == old
    for name, digest in zip(names, new, strict=True):
        data = (tmp_path / f"run/images/new/{name}.png").read_bytes()
        assert data == (tmp_path / f"run/images/old/{name}.png").read_bytes(), name
        assert folder_module.encode_png(images[name]) == (data, digest)
    assert not list((tmp_path / "run").rglob("*.tmp"))


@pytest.mark.parametrize("share", [False, True])
def test_a_pool_of_writers_writes_the_same_bytes_in_order_and_takes_every_answer(
    tmp_path: Path, share: bool
) -> None:
    """Three processes share each batch (the thread one share more with ``share``): the
    same files and digests, in order; two batches sent before either answer is taken."""
    images = _images()
    names = list(images)
    folder = RunFolder(tmp_path / "run")
    pool = WriterPool(tmp_path / "run", processes=3).start()
    try:
        assert pool.processes == 3 and pool.ready(wait=True)
        first = folder.send_images(
            list(images.values()), [f"images/a/{n}.png" for n in names], pool, share=share
        )
        second = folder.send_images(
            list(images.values())[::-1], [f"images/b/{n}.png" for n in names[::-1]], pool
        )
        got_first, got_second = first(), second()
    finally:
        pool.close()
    expected = [folder_module.encode_png(images[n])[1] for n in names]
    assert got_first == expected and got_second == expected[::-1]
    for name in names:
        data = (tmp_path / f"run/images/a/{name}.png").read_bytes()
        assert data == folder_module.encode_png(images[name])[0], name
    assert not list((tmp_path / "run").rglob("*.tmp"))


def _pixel_cases() -> dict[str, Image.Image]:
    rng = np.random.default_rng(11)
    cases = {f"new-{mode}": Image.new(mode, (37, 23)) for mode in ("RGB", "RGBA", "L", "LA")}
    for mode, shape in (("RGB", (23, 37, 3)), ("RGBA", (23, 37, 4)), ("L", (23, 37))):
        # fromarray of L and RGBA shares numpy's memory (readonly): never exported
        shared = Image.fromarray(rng.integers(0, 256, shape, dtype=np.uint8))
        cases[f"array-{mode}"] = shared
        cases[f"crop-{mode}"] = shared.crop((1, 2, 30, 20))
    block_size = Image.core.get_block_size()
    Image.core.set_block_size(4096)  # images of more than 4 KB span several blocks
    try:
        cases["several-blocks"] = Image.fromarray(rng.integers(0, 256, (60, 50, 3), np.uint8))
    finally:
        Image.core.set_block_size(block_size)
    return cases


@pytest.mark.parametrize("name", list(_pixel_cases()))
def test_pixels_handed_over_rebuild_the_same_png(name: str) -> None:
    """Pillow's own memory (RGB as RGBX) or a copy: the child's rebuild encodes to the
    same bytes; images over memory they do not own are copied, never exported."""
    image = _pixel_cases()[name]
    raw_mode, raw = image_pixels(image)
    if image.readonly:
        assert raw_mode == image.mode and bytes(raw) == image.tobytes()
    if name.endswith("-RGB") and not image.readonly:
        assert raw_mode == "RGBX" and len(raw) == 4 * image.width * image.height
    rebuilt = Image.frombytes(image.mode, image.size, bytes(raw), "raw", raw_mode)
    assert folder_module.encode_png(rebuilt) == folder_module.encode_png(image)


def _our_blocks() -> set[str]:
    """Shared-memory blocks in /dev/shm (named by multiprocessing: ``psm_*``)."""
    return {path.name for path in Path("/dev/shm").glob("psm_*")}


@pytest.mark.skipif(not Path("/dev/shm").is_dir(), reason="no /dev/shm to look at")
def test_blocks_are_used_in_turn_grown_when_too_small_and_leave_nothing(
    tmp_path: Path, writer: ImageWriter
) -> None:
    """Two blocks serve batch after batch (the same two names, no new mapping per
    batch); a larger batch gets a larger block; a third batch in flight gets a block of
    its own; the files and digests are the thread's; nothing is left in /dev/shm."""
    before = _our_blocks()
    rng = np.random.default_rng(3)
    small = [Image.fromarray(rng.integers(0, 256, (20, 30, 3), dtype=np.uint8)) for _ in range(2)]
    large = [Image.fromarray(rng.integers(0, 256, (90, 70, 3), dtype=np.uint8)) for _ in range(3)]
    sent, expected, names = [], [], []
    for n, batch in enumerate([small, small, small, large, small, large]):
        paths = [f"images/m/{n}-{k}.png" for k in range(len(batch))]
        sent.append(writer.send(batch, paths, durable=False))
        expected.append([folder_module.encode_png(image)[1] for image in batch])
        names.append([block and block.name for block in writer._blocks])
        if len(sent) == 2:  # as the engine's worker: two begun, then the older finished
            assert sent.pop(0)() == expected.pop(0)
    assert sent.pop(0)() == expected.pop(0)
    assert None not in names[1] and names[2] == names[1]  # batch 2 reused batch 0's block
    assert names[3][0] == names[1][0] and names[3][1] != names[1][1]  # batch 3 grew its own
    assert names[5] == names[3] or names[5][1] == names[3][1]  # the grown one serves again
    assert writer._blocks[1].size >= sum(len(image.tobytes()) for image in large)
    three = [writer.send(small, [f"images/t/{k}-{j}.png" for j in range(2)], durable=False)
             for k in range(3)]  # fmt: skip
    assert [get() for get in three] == [[folder_module.encode_png(i)[1] for i in small]] * 3
    data = (tmp_path / "run/images/m/3-2.png").read_bytes()
    assert data == folder_module.encode_png(large[2])[0]
    writer.close()
    assert _our_blocks() - before == set()


def test_a_pool_raises_a_childs_error_after_taking_every_answer(tmp_path: Path) -> None:
    """One slice fails (its target is a folder): the error reaches the caller, and the
    next batch's answers are its own (no answer was left in a pipe)."""
    root = tmp_path / "run"
    (root / "images/m/c.png").mkdir(parents=True)  # the last slice cannot be written
    pool = WriterPool(root, processes=3).start()
    try:
        images = [Image.new("RGB", (8, 8), c) for c in ("red", "green", "blue")]
        paths = ["images/m/a.png", "images/m/b.png", "images/m/c.png"]
        with pytest.raises(Exception, match=r"c\.png|[Dd]irectory"):
            pool.write(images, paths, durable=False)
        again = pool.write(images, ["images/m/x.png", "images/m/y.png", "images/m/z.png"],
                           durable=False)  # fmt: skip
    finally:
        pool.close()
    assert again == [folder_module.encode_png(image)[1] for image in images]


def test_the_number_of_writer_processes_is_checked() -> None:
    assert writer_processes({PROCESSES_VARIABLE: "2"}) == 2
    for bad in ("0", "two", "-1"):
        with pytest.raises(InputError, match=PROCESSES_VARIABLE):
            writer_processes({PROCESSES_VARIABLE: bad})


def test_the_writers_images_are_flushed_before_their_part_file(
    tmp_path: Path, writer: ImageWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[tuple[str, object]] = []
    real_sync = folder_module.sync_files

    def sync(root: Path, paths: list[Path]) -> None:
        events.append(("sync", sorted(p.name for p in paths)))
        real_sync(root, paths)

    monkeypatch.setattr(folder_module, "sync_files", sync)
    folder = RunFolder(tmp_path / "run")
    image = Image.new("RGB", (8, 8), "white")
    palette = Image.new("P", (8, 8))
    with folder.batch_durability():
        paths = ["images/m/a.png", "images/m/b.png", "images/m/c.png"]
        folder.write_images([image, palette, image], paths, writer)
        assert not events  # renamed into place, not flushed one by one
        folder.write_part(pd.DataFrame({"x": [1]}), "s", "m")
    assert events == [("sync", ["a.png", "b.png", "c.png"])]


def test_outside_a_batch_the_writer_flushes_each_file(
    tmp_path: Path, writer: ImageWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not inside batch_durability (another thread's images): durable at once, as before."""
    folder = RunFolder(tmp_path / "run")
    sent: list[bool] = []
    real_send = ImageWriter.send

    def send(self: ImageWriter, images: list, relpaths: list, *, durable: bool) -> Any:
        sent.append(durable)
        return real_send(self, images, relpaths, durable=durable)

    monkeypatch.setattr(ImageWriter, "send", send)
    folder.write_images([Image.new("RGB", (4, 4))], ["images/m/a.png"], writer)
    assert sent == [True] and folder._unsynced is None


def test_a_write_error_in_the_process_is_the_threads_error(
    tmp_path: Path, writer: ImageWriter
) -> None:
    folder = RunFolder(tmp_path / "run")
    (tmp_path / "run/images").mkdir(parents=True)
    (tmp_path / "run/images/m").write_text("a file where a folder should be")
    image = Image.new("RGB", (4, 4))
    with pytest.raises(InputError) as in_thread:
        folder.write_image(image, "images/m/a.png")
    with pytest.raises(InputError) as in_process:
        folder.write_images([image], ["images/m/a.png"], writer)
    assert str(in_process.value) == str(in_thread.value)
    # the writer lives on: the next batch is written
    assert folder.write_images([image], ["images/n/a.png"], writer) == [
        folder_module.encode_png(image)[1]
    ]


def test_a_writer_that_died_is_an_error_naming_it(tmp_path: Path) -> None:
    writer = ImageWriter(tmp_path).start()
    try:
        assert writer._process is not None
        writer._process.kill()
        writer._process.wait()
        with pytest.raises(ProcessEnded, match="image writer process ended unexpectedly"):
            writer.write([Image.new("RGB", (4, 4))], ["a.png"], durable=True)
    finally:
        writer.close()


def test_the_mode_comes_from_the_environment_and_auto_goes_by_image_size() -> None:
    assert writer_mode({MODE_VARIABLE: ""}) == "auto"
    with pytest.raises(InputError, match=MODE_VARIABLE):
        writer_mode({MODE_VARIABLE: "threads"})
    small, large = Image.new("RGB", (64, 64)), Image.new("RGB", (256, 256))
    assert large.width * large.height == PROCESS_MIN_PIXELS
    assert not wants_process("auto", [small, small]) and wants_process("auto", [small, large])
    assert wants_process("process", [small]) and not wants_process("thread", [large])


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
def test_the_writer_process_dies_with_the_run(tmp_path: Path) -> None:
    """kill -9 of the run kills its writer: no process is left writing into the folder."""
    script = textwrap.dedent(
        f"""
        import time
        from glyphbench.engine.image_writer import ImageWriter
        writer = ImageWriter({str(tmp_path)!r}).start()
        print(writer._process.pid, flush=True)
        time.sleep(120)
        """
    )
    run = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=child_environment()
    )
    assert run.stdout is not None
    child = int(run.stdout.readline())
    wait_until(lambda: alive(child), "the writer's start")
    run.kill()
    run.wait(timeout=30)
    wait_until(lambda: not alive(child), "the writer's end", timeout=30)


def _run(out: Path, mode: str, monkeypatch: pytest.MonkeyPatch) -> pd.DataFrame:
    monkeypatch.setenv(MODE_VARIABLE, mode)
    config = RunConfig.from_mapping(
        {
            "models": ["slow:render?delay=0&size=256", "control:blank?size=64"],
            "seeds": [0, 1],
            "batch_size": 3,
            "ocr": "pixelocr",
            "out": str(out),
        }
    )
    result = run_benchmark(config, prompt_set=prompt_set(5), progress=False)
    assert result.results is not None
    return result.results


@pytest.mark.slow
def test_a_run_with_the_writer_process_gives_the_rows_and_files_of_the_thread(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register()
    shipped: list[int] = []
    real_send = ImageWriter.send

    def send(self: ImageWriter, images: list, relpaths: list, *, durable: bool) -> Any:
        shipped.append(len(images))
        return real_send(self, images, relpaths, durable=durable)

    monkeypatch.setattr(ImageWriter, "send", send)
    threaded = _run(tmp_path / "thread", "thread", monkeypatch)
    assert not shipped
    in_process = _run(tmp_path / "process", "process", monkeypatch)
    # every image went to the process, the run's last batch shared with the worker
    # thread (its 1 image: it goes there)
    assert sum(shipped) == 20 and shipped[-1] == 1
    # auto: the process starts with the 256-pixel model's first batch, which waits for
    # it (no batch is encoded in the worker thread while it starts)
    shipped.clear()
    auto = _run(tmp_path / "auto", "auto", monkeypatch)
    assert sum(shipped) == 20
    # three processes: each batch cut in three slices, the same files
    shipped.clear()
    monkeypatch.setenv(PROCESSES_VARIABLE, "3")
    pooled = _run(tmp_path / "pool", "process", monkeypatch)
    assert sum(shipped) == 20 and max(shipped) == 1 and len(shipped) > 7
    columns = [c for c in threaded.columns if c not in runs.TIMING_COLUMNS and c != "run_id"]
    outcomes = {"process": in_process, "auto": auto, "pool": pooled}
    for other, rows in outcomes.items():
        pd.testing.assert_frame_equal(threaded[columns], rows[columns])
        for path in threaded["image_path"]:
            expected = (tmp_path / "thread" / path).read_bytes()
            assert (tmp_path / other / path).read_bytes() == expected


class SizedRender(RenderControl):
    """A model that says the size of its images before loading, and notes at load time
    whether the run's image writer process is already running."""

    is_control = False
    writer_at_load: ClassVar[list[bool]] = []

    def __init__(self, spec: Spec, options: SlowOptions) -> None:
        self.size = options.size
        super().__init__(options.size, spec=spec.text)

    def planned_size(self) -> tuple[int, int]:
        return self.size, self.size

    def load(self) -> None:
        writers = [pid for pid in descendants(os.getpid()) if _is_image_writer(pid)]
        SizedRender.writer_at_load.append(bool(writers))


def _is_image_writer(pid: int) -> bool:
    try:
        return b"glyphbench.engine.image_writer" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_writer_starts_while_a_model_of_large_images_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """auto: a model whose planned images are 256 px or more loads with the writer process
    already started (its start overlaps the load); one of 64-px images starts none."""
    register()
    if "sized" not in PLUGINS.names("models"):
        PLUGINS.register("models", "sized", options=SlowOptions, target="optional")(SizedRender)
    monkeypatch.setenv(MODE_VARIABLE, "auto")
    SizedRender.writer_at_load.clear()
    for size in (256, 64):
        config = RunConfig.from_mapping(
            {"models": [f"sized:render?size={size}"], "ocr": "pixelocr",
             "out": str(tmp_path / str(size)), "batch_size": 2}
        )  # fmt: skip
        result = run_benchmark(config, prompt_set=prompt_set(3), progress=False)
        assert result.results is not None and (result.results["error"] == "").all()
    assert SizedRender.writer_at_load == [True, False]


@pytest.mark.slow
@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT], ids=["kill", "ctrl-c"])
def test_an_interrupted_run_with_the_writer_process_resumes_to_the_same_rows(
    tmp_path: Path, how: signal.Signals
) -> None:
    """tests/bench/run/test_runner_process.py's kill/Ctrl-C test, the images written by the
    process."""
    csv = write_prompts_csv(tmp_path / "prompts.csv", runs.N_PROMPTS)
    env = {**child_environment(), MODE_VARIABLE: "process"}
    threaded = tmp_path / "thread"
    subprocess.run(
        runs.command(threaded, csv),
        env={**env, MODE_VARIABLE: "thread"},
        check=True,
        capture_output=True,
        timeout=300,
    )
    out = tmp_path / "run"
    gated = {**env, GATE_VARIABLE: str(tmp_path / "gate")}  # mid-way however loaded
    process = subprocess.Popen(
        runs.command(out, csv), env=gated, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    wait_until(lambda: runs._parts(out), "a first part file", timeout=240, process=process)
    process.send_signal(how)
    process.wait(timeout=120)
    written = len(runs._parts(out))
    assert 1 <= written < runs.BATCHES, f"{written} part files: not interrupted mid-way"
    resumed = subprocess.run(
        runs.command(out, csv), env=env, capture_output=True, text=True, timeout=300
    )
    assert resumed.returncode == 0, resumed.stderr[-2000:]
    rows = pd.read_parquet(out / "results.parquet")
    baseline = pd.read_parquet(threaded / "results.parquet")
    pd.testing.assert_frame_equal(
        runs.comparable(rows).drop(columns="run_id"),
        runs.comparable(baseline).drop(columns="run_id"),
    )
    assert len(runs._parts(out)) == runs.BATCHES  # finished work was not redone
    for path in baseline["image_path"]:
        assert (out / path).read_bytes() == (threaded / path).read_bytes()
    assert not list(out.rglob("*.tmp"))


class _Doubles:
    """A producer of doubled numbers (the engine's smallest producer)."""

    def prepare(self, jobs: list[int]) -> list[int]:
        return jobs

    def produce(self, inputs: list[int]) -> list[int]:
        return [2 * x for x in inputs]

    def close(self) -> None:
        pass


def test_only_the_last_batch_of_the_last_group_with_jobs_is_final(tmp_path: Path) -> None:
    """The final batch is written half in the run's process: nothing is generated after it."""
    from glyphbench.engine import Batch, Group, Loop

    seen: list[tuple[str, list[int], bool]] = []

    def finish(batch: Batch) -> pd.DataFrame:
        seen.append((batch.group.name, batch.jobs, batch.final))
        return pd.DataFrame({"job": batch.jobs, "error": ""})

    groups = [
        Group("a", "a", [1, 2, 3], _Doubles),
        Group("b", "b", [4, 5], _Doubles),
        Group("none", "none", [], _Doubles),  # no jobs: the last group with jobs is b
    ]
    Loop(RunFolder(tmp_path), "s", finish, batch_size=2).run(groups)
    assert seen == [
        ("a", [1, 2], False),
        ("a", [3], False),
        ("b", [4, 5], True),
    ]


def test_a_shared_batch_is_written_half_here_half_there_to_the_same_files(
    tmp_path: Path, writer: ImageWriter, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped: list[int] = []
    real_send = ImageWriter.send

    def send(self: ImageWriter, images: list, relpaths: list, *, durable: bool) -> Any:
        shipped.append(len(images))
        return real_send(self, images, relpaths, durable=durable)

    monkeypatch.setattr(ImageWriter, "send", send)
    rng = np.random.default_rng(3)
    images = [Image.fromarray(rng.integers(0, 256, (40, 50, 3), dtype=np.uint8)) for _ in range(5)]
    folder = RunFolder(tmp_path / "run")
    paths = [f"images/m/{i}.png" for i in range(5)]
    digests = folder.write_images(images, paths, writer, share=True)
    assert shipped == [3]  # the writer takes half (rounded up), this thread the rest
    assert digests == [folder_module.encode_png(image)[1] for image in images]
    for path, image in zip(paths, images, strict=True):
        assert (tmp_path / "run" / path).read_bytes() == folder_module.encode_png(image)[0]


def _format_of(path: Path) -> int:
    """Which PNG format wrote ``path``: the one whose encoding of its pixels gives its bytes."""
    data = path.read_bytes()
    with Image.open(path) as image:
        image.load()
        found = [
            n for n in folder_module.PNG_FORMATS if folder_module.encode_png(image, n)[0] == data
        ]
    assert len(found) == 1, (path, found)
    return found[0]


@pytest.mark.slow
def test_a_resumed_run_keeps_the_png_format_its_run_json_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A new run records PNG format 2; a run.json written before format 2 (no ``png``) is
    resumed in format 1, by the writer processes and the worker thread alike."""
    register()
    out = tmp_path / "run"
    rows = _run(out, "process", monkeypatch)
    manifest = RunFolder(out).manifest()
    assert manifest["png"] == folder_module.PNG_FORMAT == 2
    assert {_format_of(out / path) for path in rows["image_path"]} == {2}
    # as an older glyphbench left it: no "png" in run.json; its rows and images gone
    RunFolder(out).write_manifest({k: v for k, v in manifest.items() if k != "png"})
    for generated in ("parts", "images", "results.parquet"):
        target = out / generated
        if target.is_dir():
            shutil.rmtree(target)
        else:
            target.unlink(missing_ok=True)
    again = _run(out, "process", monkeypatch)
    assert len(again) == len(rows)
    assert {_format_of(out / path) for path in again["image_path"]} == {1}
    assert "png" not in RunFolder(out).manifest()
    columns = ["image_path", "ocr_text"]
    pd.testing.assert_frame_equal(again[columns], rows[columns])
