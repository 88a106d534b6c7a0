"""benchmarks/bench_gpu_proxy.py at a tiny size: its stand-in and its JSON.

No timing is asserted (the machine is shared): the stand-in's images, content and
cost, and the rows the benchmark writes, are checked for being what they say.
"""

from __future__ import annotations

import io
import json
import sys
import time
from pathlib import Path

import pytest
from PIL import Image

import glyphbench.engine.folder as folder_module
from tests.helpers.paths import REPO_ROOT

sys.path.insert(0, str(REPO_ROOT / "benchmarks"))

import bench_gpu_proxy


def _png_size(image: object) -> int:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")  # type: ignore[attr-defined]
    return len(buffer.getvalue())


def test_the_stand_in_returns_fresh_images_of_the_size_and_content_asked() -> None:
    pipe = bench_gpu_proxy.ProxyPipeline(64, "noise", steps=2, step_ms=1.0)
    first, second = pipe(3), pipe(3)
    assert [image.size for image in first] == [(64, 64)] * 3
    assert {image.mode for image in first} == {"RGB"}
    assert first[0] is not second[0] and first[0].tobytes() == second[0].tobytes()
    assert first[0].tobytes() != first[1].tobytes()  # a pool of distinct images
    # noise does not compress; a photo-like image with text does, far better
    noise = bench_gpu_proxy.render(256, "noise", 0)
    photo = bench_gpu_proxy.render(256, "photo", 0)
    assert _png_size(noise) > 3 * _png_size(photo)
    assert _png_size(noise) > 0.9 * 256 * 256 * 3


def test_a_step_holds_the_gil_for_its_share_of_the_step() -> None:
    """gil=1: all work (the process's CPU time grows); gil=0.25: mostly a GIL-free wait."""
    busy = bench_gpu_proxy.ProxyPipeline(16, "noise", steps=4, step_ms=20.0, gil=1.0)
    waiting = bench_gpu_proxy.ProxyPipeline(16, "noise", steps=4, step_ms=20.0, gil=0.25)
    assert busy.hold_s == 4 * waiting.hold_s == 0.02 and busy.wait_s == 0
    assert abs(waiting.wait_s - 0.015) < 1e-9
    cpu = time.thread_time()
    busy(1)
    assert time.thread_time() - cpu >= 4 * 0.02  # 4 x 20 ms of this thread's CPU
    cpu = time.thread_time()
    waiting(1)
    assert time.thread_time() - cpu < 0.08 * 0.9  # 4 x 15 ms slept, not spent


def test_a_step_is_its_cpu_time_however_long_another_thread_holds_the_gil() -> None:
    """A thread spinning beside it slows the step down (wall) but not its CPU share."""
    import threading

    stop = threading.Event()

    def rival() -> None:
        while not stop.is_set():
            bench_gpu_proxy._spin(bench_gpu_proxy.SPIN_CHUNK)

    thread = threading.Thread(target=rival)
    started, cpu = time.perf_counter(), time.thread_time()
    thread.start()
    try:
        bench_gpu_proxy.hold(0.05)
    finally:
        stop.set()
        thread.join()
    assert time.thread_time() - cpu >= 0.05
    assert time.perf_counter() - started > 1.5 * 0.05  # the rival had the GIL about half the time


def _tiny_setting(monkeypatch: pytest.MonkeyPatch, images: int) -> None:
    """A 64 px setting of 2 steps and batches of 2, one round (``--sizes 64``)."""
    tiny = bench_gpu_proxy.Setting(steps=2, batch=2, images=images, rounds=1, gpu_bare_img_s=None)
    monkeypatch.setitem(bench_gpu_proxy.SETTINGS, 64, tiny)


@pytest.mark.slow
def test_the_benchmark_writes_one_row_per_size_and_content(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _tiny_setting(monkeypatch, images=4)
    out = tmp_path / "proxy.json"
    # Steps of 10 ms: a batch outlasts the interpreter's 5 ms switch interval, so the
    # worker thread gets the GIL between the two batches (with 1 ms it may not).
    options = ["--sizes", "64", "--contents", "noise,photo", "--step-ms", "10", "--compare-thread"]
    figures = bench_gpu_proxy.main([*options, "--json", str(out)])
    written = json.loads(out.read_text())
    assert written["rows"] == figures["rows"]
    assert [(row["size"], row["content"]) for row in written["rows"]] == [
        (64, "noise"),
        (64, "photo"),
    ]
    for row in written["rows"]:
        assert row["bare_img_s"] > 0 and row["harness_img_s"] > 0
        assert row["ratio"] == row["harness_img_s"] / row["bare_img_s"]
        assert (row["batch"], row["steps"], row["images"], row["rounds"]) == (2, 2, 4, 1)
        assert row["thread_ratio"] == row["thread_rounds"][0] / row["bare_img_s"] > 0
        assert row["generation_ratio"] > 0 and row["tail_s"] == row["tail_s"]  # not NaN
        assert row["worker_cpu_ms"] > 0  # the worker thread ran between the 2 batches
        # The ceiling: the last batch (2 images) shared by the encoders, after the pass.
        assert row["encode_ms"] > 0 and row["encoders"] >= 1
        per_encoder = -(-2 // row["encoders"])
        assert row["tail_floor_s"] == pytest.approx(per_encoder * row["encode_ms"] / 1000)
        pass_s = 4 / row["bare_img_s"]
        assert row["ceiling_ratio"] == pytest.approx(pass_s / (pass_s + row["tail_floor_s"]))
        assert 0 < row["ceiling_ratio"] < 1


def test_without_the_thread_comparison_a_row_has_no_thread_ratio(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The documented default command (no --compare-thread) writes its rows too."""
    _tiny_setting(monkeypatch, images=2)
    [row] = bench_gpu_proxy.main(["--sizes", "64", "--contents", "noise", "--step-ms", "5"])["rows"]
    assert "thread_ratio" not in row and row["ratio"] == row["harness_img_s"] / row["bare_img_s"]
    assert row["png_format"] == folder_module.PNG_FORMAT == 2


def test_png_1_measures_the_harness_writing_format_1_and_leaves_the_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--png 1: round five's bytes (Pillow's defaults), for before-and-after figures."""
    _tiny_setting(monkeypatch, images=2)
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setattr(bench_gpu_proxy.tempfile, "mkdtemp", lambda **_: str(work))
    monkeypatch.setattr(bench_gpu_proxy.shutil, "rmtree", lambda *_, **__: None)  # kept to look at
    options = ["--sizes", "64", "--contents", "photo", "--step-ms", "5", "--png", "1"]
    figures = bench_gpu_proxy.main(options)
    assert figures["png_format"] == figures["rows"][0]["png_format"] == 1
    assert folder_module.PNG_FORMAT == 2  # restored for the rest of the process
    written = sorted(work.rglob("*.png"))
    assert written
    for path in written:
        manifest = json.loads((path.parents[2] / "run.json").read_text())
        assert manifest["png"] == 1
        with Image.open(path) as image:
            image.load()
            assert path.read_bytes() == folder_module.encode_png(image, 1)[0]


def _runs_kept(monkeypatch: pytest.MonkeyPatch, work: Path) -> None:
    """The benchmark's scratch folder is ``work`` and its harness runs stay there."""
    work.mkdir()
    monkeypatch.setattr(bench_gpu_proxy.tempfile, "mkdtemp", lambda **_: str(work))
    monkeypatch.setattr(bench_gpu_proxy.shutil, "rmtree", lambda *_, **__: None)


def test_ablate_runs_the_harness_without_images_and_without_part_files_in_the_same_rounds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--ablate: each round's passes are the harness, then without images, then without
    part files; each takes out what it says and leaves the engine whole afterwards."""
    import pandas as pd

    _tiny_setting(monkeypatch, images=2)
    work = tmp_path / "work"
    _runs_kept(monkeypatch, work)
    methods = {
        name: getattr(folder_module.RunFolder, name) for name in ("send_images", "write_part")
    }
    options = ["--sizes", "64", "--contents", "photo", "--step-ms", "5"]
    [row] = bench_gpu_proxy.main([*options, "--ablate", "images", "--ablate", "part-files"])["rows"]
    assert {name: getattr(folder_module.RunFolder, name) for name in methods} == methods
    assert list(row["ablated"]) == ["images", "part-files"]
    for found in row["ablated"].values():
        assert found["ratio"] == max(found["harness_rounds"]) / row["bare_img_s"] > 0
        assert found["generation_ratio"] > 0 and len(found["harness_rounds"]) == row["rounds"]
    # The three passes' run folders, in the order they ran (run-<monotonic ns>).
    whole, no_images, no_parts = sorted(work.glob("run-*"), key=lambda run: int(run.name[4:]))
    pngs = {run: sorted(run.rglob("*.png")) for run in (whole, no_images, no_parts)}
    parts = {
        run: sorted((run / "parts").rglob("*.parquet")) for run in (whole, no_images, no_parts)
    }
    assert len(pngs[whole]) == len(pngs[no_parts]) == 2 and not pngs[no_images]
    assert parts[whole] and parts[no_images] and not parts[no_parts]
    digests = pd.concat([pd.read_parquet(part) for part in parts[no_images]])["image_sha256"]
    assert set(digests) == {bench_gpu_proxy.PLACEHOLDER_SHA256}
    written = pd.concat([pd.read_parquet(part) for part in parts[whole]])["image_sha256"]
    assert bench_gpu_proxy.PLACEHOLDER_SHA256 not in set(written)


def test_ablate_is_refused_on_an_engine_without_the_method_it_replaces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An engine without writer processes (no RunFolder.send_images): exit 2, nothing run."""
    monkeypatch.delattr(folder_module.RunFolder, "send_images")
    assert bench_gpu_proxy.unablatable(["images", "part-files"]) == ["images"]
    with pytest.raises(SystemExit) as refused:
        bench_gpu_proxy.main(["--sizes", "64", "--ablate", "images"])
    assert refused.value.code == 2


def test_engine_passes_ablate_on_to_the_other_engine() -> None:
    args = bench_gpu_proxy.argparse.Namespace(
        sizes="512",
        contents="noise",
        gil=0.8,
        step_ms=None,
        rounds=None,
        images=None,
        png=None,
        ablate=["images", "part-files"],
        compare_thread=False,
    )
    argv = bench_gpu_proxy.child_argv(args)
    assert argv[-4:] == ["--ablate", "images", "--ablate", "part-files"]


def test_default_step_costs_match_the_gpu_figures() -> None:
    settings = bench_gpu_proxy.SETTINGS
    for size in (512, 1024):
        setting = settings[size]
        bare = 1000 * setting.batch / (setting.steps * setting.step_ms)
        assert abs(bare - (setting.gpu_bare_img_s or 0)) < 1e-9
    assert round(settings[1024].step_ms, 1) == 177.0
    assert round(settings[512].step_ms, 1) == 149.9


def _export(commit: str, into: Path) -> Path:
    """``bench/`` and ``prompts/`` of ``commit`` of this repository, written under ``into``."""
    import subprocess
    import tarfile

    repo = REPO_ROOT
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", "--format=tar", commit, "bench", "prompts"],
        capture_output=True,
        check=False,
    )
    if archive.returncode != 0:
        pytest.skip(f"commit {commit} is not in this clone's history (a shallow clone?)")
    with tarfile.open(fileobj=io.BytesIO(archive.stdout)) as tar:
        tar.extractall(into, filter="data")
    return into


@pytest.mark.slow
def test_engine_runs_the_harness_passes_on_the_engine_measured_on_the_h200(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """--engine: the stand-in and this script, the harness of another checkout (665db58,
    before the writer processes: Pillow's default PNG, every image encoded in the worker thread)."""
    engine = _export(bench_gpu_proxy.H200_ENGINE, tmp_path / "old")
    options = ["--sizes", "512", "--contents", "photo", "--images", "2", "--rounds", "1"]
    out = tmp_path / "old.json"
    figures = bench_gpu_proxy.main(
        [*options, "--step-ms", "5", "--engine", str(engine), "--json", str(out)]
    )
    assert json.loads(out.read_text()) == figures
    assert figures["engine"] == {"root": str(engine.resolve()), "commit": None}  # no .git there
    [row] = figures["rows"]
    assert row["png_format"] == figures["png_format"] == 1  # that engine's only format
    assert row["encoders"] == 1  # no writer processes then: the worker thread alone
    assert row["ratio"] == row["harness_img_s"] / row["bare_img_s"] > 0
    assert row["encode_ms"] > 0  # measured with that engine's encode_png (no format argument)
    with pytest.raises(SystemExit) as refused:  # format 2 did not exist then
        bench_gpu_proxy.main([*options, "--step-ms", "5", "--png", "2", "--engine", str(engine)])
    assert refused.value.code == 2
    with pytest.raises(SystemExit) as refused:  # no RunFolder.send_images then
        bench_gpu_proxy.main([*options, "--ablate", "images", "--engine", str(engine)])
    assert refused.value.code == 2
    assert "--ablate images: this engine has no RunFolder.send_images" in capfd.readouterr().err


def test_engine_refuses_a_folder_that_is_not_a_checkout(tmp_path: Path) -> None:
    with pytest.raises(SystemExit, match="not a glyphbench checkout"):
        bench_gpu_proxy.main(["--engine", str(tmp_path)])


def test_the_commit_of_this_checkout_is_recorded() -> None:
    """Without --engine the figures name this checkout and its commit (git permitting)."""
    root = REPO_ROOT
    assert bench_gpu_proxy.engine_root() == str(root)
    commit = bench_gpu_proxy.engine_commit()
    if (root / ".git").exists():  # a clone: git names its commit
        assert commit is not None and len(commit) >= 7
        assert int(commit, 16) >= 0  # hexadecimal
