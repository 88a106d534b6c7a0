"""Test doubles for the runner, usable in-process and from subprocesses.

Run as a script it registers them and then behaves exactly like ``glyphbench``::

    python tests/helpers/runner_helper.py run --models slow:render ... --ocr pixelocr

* ``pixelocr``: a fast, deterministic OCR stand-in whose "text" is derived from
  the image's pixels (so equal images read equal, different images differ);
* ``slow:render?delay=S``: the render control, sleeping S seconds per batch
  (gives a test time to kill a run mid-way);
* ``flaky:render?fail=PROMPT_ID&marker=PATH``: fails the batch holding that
  prompt while PATH does not exist, then creates PATH (fails once);
* ``oomy:render``: raises a CUDA-out-of-memory-like error for batches > 1;
* ``broken:``: fails to load;
* readers ``slowocr?delay=S[&torch=1][&started=DIR]`` (pixelocr taking S seconds per
  call, in torch with ``torch=1``; with ``started``, each call first creates
  ``DIR/<pid>`` so a test can wait for a read to be under way),
  ``watchocr?delay=S&watch=DIR&log=FILE`` (slowocr logging, per call, the images under
  DIR not yet read), ``flipocr?fail=READINGS`` (a second reader: pixelocr's text
  reversed, failing on the images pixelocr reads as one of READINGS), ``ocr_blind``
  (created fine, every read fails) and ``ocr_dead`` (cannot be created).
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from glyphbench.core.registry import PLUGINS, Options, Spec
from glyphbench.models.base import ImageRequest, ModelAdapter
from glyphbench.models.controls import RenderControl
from glyphbench.prompts.schema import PromptSet
from glyphbench.readers.base import Reader, Reading


class PixelOCR(Reader):
    name = "pixelocr"

    @property
    def version(self) -> str:
        return "pixelocr 1"

    def read(self, images: Sequence[Any]) -> list[Reading]:
        out = []
        for image in images:
            digest = hashlib.sha256(image.convert("RGB").tobytes()).hexdigest()[:6]
            out.append(
                Reading(
                    text=digest,
                    pieces=[digest],
                    boxes=[[(0, 0), (1, 0), (1, 1), (0, 1)]],
                    confidences=[0.5],
                )
            )
        return out


class SlowOCROptions(Options):
    delay: float = 1.0
    torch: bool = False  # spend the delay in torch (native threads), as EasyOCR does
    started: str = ""  # a folder: each read first creates DIR/<pid> (an event to wait for)


class SlowOCR(PixelOCR):
    def __init__(self, options: SlowOCROptions) -> None:
        self.delay = options.delay
        self.torch = options.torch
        self.started = Path(options.started) if options.started else None

    def read(self, images: Sequence[Any]) -> list[Reading]:
        if self.started is not None:
            self.started.mkdir(parents=True, exist_ok=True)
            (self.started / str(os.getpid())).touch()
        if not self.torch:
            time.sleep(self.delay)
            return super().read(images)
        import torch

        end = time.monotonic() + self.delay
        matrix = torch.randn(600, 600)
        while time.monotonic() < end:
            matrix = (matrix @ matrix).tanh()
        return super().read(images)


class WatchOCROptions(SlowOCROptions):
    watch: str = ""  # a run's images folder
    log: str = ""  # one line per call: images on disk that were not yet read


class WatchOCR(SlowOCR):
    """slowocr that logs, at each call, how many images of the run wait to be read.

    One reader process: the images it has read so far are counted here; images on disk
    minus those are the images generation has made ahead of the reader.
    """

    def __init__(self, options: WatchOCROptions) -> None:
        super().__init__(options)
        self.watch, self.log, self.done = Path(options.watch), Path(options.log), 0

    def read(self, images: Sequence[Any]) -> list[Reading]:
        waiting = sum(1 for _ in self.watch.rglob("*.png")) - self.done
        with self.log.open("a") as log:
            log.write(f"{waiting}\n")
        out = super().read(images)
        self.done += len(images)
        return out


class BlindOCR(PixelOCR):
    name = "ocr_blind"

    def read(self, images: Sequence[Any]) -> list[Reading]:
        raise RuntimeError("Could not initialize: no such language")


class FlipOCROptions(Options):
    fail: str = ""  # comma-separated pixelocr readings of the images to fail on


class FlipOCR(PixelOCR):
    """A second reader: pixelocr's text reversed, under its own name; it fails on the
    images whose pixelocr reading ``fail`` lists (a rescore that cannot re-read them)."""

    name = "flipocr"

    def __init__(self, options: FlipOCROptions) -> None:
        self.fail = set(filter(None, options.fail.split(",")))

    @property
    def version(self) -> str:
        return "flipocr 1"

    def read(self, images: Sequence[Any]) -> list[Reading]:
        readings = super().read(images)
        if any(reading.text in self.fail for reading in readings):
            raise RuntimeError("flipocr cannot read this one")
        return [Reading(r.text[::-1], [r.text[::-1]], r.boxes, r.confidences) for r in readings]


def _dead_ocr(spec: Spec, options: Options) -> Reader:
    raise RuntimeError("engine binary missing")


class DoubleOptions(Options):
    """Every test model accepts the device the runner adds to non-control models."""

    device: str | None = None


class SlowOptions(DoubleOptions):
    delay: float = 0.3
    size: int = 64


class FlakyOptions(DoubleOptions):
    fail: str
    marker: str


#: A file path: a ``slow:`` model makes its first batch, then waits for this file before
#: each later one (at most :data:`GATE_WAIT_S`), so a test can interrupt the run mid-way
#: however loaded the machine is. Unset: no wait.
GATE_VARIABLE = "GLYPHBENCH_TEST_GATE"
GATE_WAIT_S = 120.0


class SlowRender(RenderControl):
    is_control = False

    def __init__(self, spec: Spec, options: SlowOptions) -> None:
        self.delay = options.delay
        self.batches = 0
        super().__init__(options.size, spec=spec.text)

    def generate(self, requests: Sequence[ImageRequest]) -> list[Any]:
        self.batches += 1
        if self.batches > 1:
            wait_for_gate()
        time.sleep(self.delay)
        return super().generate(requests)


def wait_for_gate() -> None:
    """Wait until the file named by :data:`GATE_VARIABLE` exists (when it is set)."""
    gate = os.environ.get(GATE_VARIABLE)
    deadline = time.monotonic() + GATE_WAIT_S
    while gate and not Path(gate).exists() and time.monotonic() < deadline:
        time.sleep(0.05)  # in the generating thread: a Ctrl-C interrupts it


class FlakyRender(RenderControl):
    is_control = False

    def __init__(self, spec: Spec, options: FlakyOptions) -> None:
        self.fail = options.fail
        self.marker = Path(options.marker)
        super().__init__(64, spec=spec.text)

    def generate(self, requests: Sequence[ImageRequest]) -> list[Any]:
        if any(self.fail in r.prompt for r in requests) and not self.marker.exists():
            self.marker.write_text("failed once")
            raise ValueError("flaky failure")
        return super().generate(requests)


class FakeOOM(RuntimeError):
    """Looks like torch's CUDA OOM to glyphbench.core.accelerator.is_oom."""


class OOMRender(RenderControl):
    is_control = False

    def __init__(self, spec: Spec, options: DoubleOptions) -> None:
        super().__init__(64, spec=spec.text)
        self.calls: list[int] = []

    def generate(self, requests: Sequence[ImageRequest]) -> list[Any]:
        self.calls.append(len(requests))
        if len(requests) > 1:
            raise FakeOOM("CUDA out of memory. Tried to allocate 1.00 GiB")
        return super().generate(requests)


class Broken(ModelAdapter):
    def __init__(self, spec: Spec, options: DoubleOptions) -> None:
        raise OSError(f"cannot load {spec.text}: no such checkpoint")

    def generate(self, requests: Sequence[ImageRequest]) -> list[Any]:  # pragma: no cover
        raise AssertionError("never loaded")


def register() -> None:
    PLUGINS.register("readers", "pixelocr", summary="test double")(lambda spec, _: PixelOCR())
    PLUGINS.register("readers", "slowocr", options=SlowOCROptions)(lambda _, o: SlowOCR(o))
    PLUGINS.register("readers", "watchocr", options=WatchOCROptions)(lambda _, o: WatchOCR(o))
    PLUGINS.register("readers", "ocr_blind")(lambda spec, _: BlindOCR())
    PLUGINS.register("readers", "flipocr", options=FlipOCROptions)(lambda _, o: FlipOCR(o))
    PLUGINS.register("readers", "ocr_dead")(_dead_ocr)
    for name, factory, options in (
        ("slow", SlowRender, SlowOptions),
        ("flaky", FlakyRender, FlakyOptions),
        ("oomy", OOMRender, DoubleOptions),
        ("broken", Broken, DoubleOptions),
    ):
        PLUGINS.register("models", name, options=options, target="optional")(factory)


def prompt_set(n: int = 6) -> PromptSet:
    """A small prompt set: short texts, one sentence, one with digits/punctuation."""
    texts = [
        "OPEN",
        "Bakery",
        "Hello world",
        "42% off!",
        "Fresh coffee daily",
        "EXIT",
        "Lemonade",
        "Sale",
    ]
    texts = (texts * (n // len(texts) + 1))[:n]
    frame = pd.DataFrame(
        {
            "prompt_id": [f"p{i:02d}" for i in range(n)],
            "prompt": [f"A sign that says '{t}' (#{i})" for i, t in enumerate(texts)],
            "text": texts,
            "prompt_type": ["simple"] * n,
        }
    )
    return PromptSet(frame, source="test")


def doubles_script(folder: Path) -> Path:
    """A ``glyphbench`` script with these doubles registered (spawned workers import it
    too, so the doubles exist in reader processes)."""
    root = Path(__file__).resolve().parents[2]  # the checkout: tests.helpers and benchmarks
    script = folder / "glyphbench_with_doubles.py"
    script.write_text(
        "import sys\n"
        f"sys.path[:0] = [{str(root)!r}]\n"
        "from tests.helpers.runner_helper import register\n"
        "register()\n"
        "if __name__ == '__main__':\n"
        "    from glyphbench.cli import main\n"
        "    sys.argv[0] = 'glyphbench'\n"
        "    main()\n"
    )
    return script


def write_prompts_csv(path: Path, n: int = 6) -> Path:
    prompt_set(n).frame[["prompt_id", "prompt", "text"]].to_csv(path, index=False)
    return path


def child_environment() -> dict[str, str]:
    """The environment of a glyphbench process run from this script in a test.

    The checkout under test first on the path (an installed glyphbench may be another
    checkout), one thread for torch, no accelerate world size.
    """
    # the checkout alone: tests/ itself on the path would make tests/benchmarks shadow the
    # repository's benchmarks/ (test helpers import as tests.helpers.*)
    root = Path(__file__).resolve().parents[2]
    env = dict(os.environ, OMP_NUM_THREADS="1", PYTHONPATH=str(root))
    env.pop("WORLD_SIZE", None)
    return env


def descendants(pid: int) -> set[int]:
    """Every process below ``pid`` (from /proc)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found


def alive(pid: int) -> bool:
    """True while ``pid`` runs (a zombie is not alive)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def survivors(pids: set[int], wait_s: float = 20.0) -> list[int]:
    """The processes of ``pids`` still running after ``wait_s``; they are killed then.

    So a failing test leaves no process behind.
    """
    import contextlib
    import signal

    from tests.helpers.polling import wait_until

    with contextlib.suppress(AssertionError):
        wait_until(lambda: not any(map(alive, pids)), "the processes' exit", timeout=wait_s)
    left = [pid for pid in pids if alive(pid)]
    for pid in left:
        os.kill(pid, signal.SIGKILL)
    return left


if __name__ in ("__main__", "__mp_main__"):
    # Reader processes (multiprocessing spawn) import this script as __mp_main__: the
    # doubles exist there too.
    register()
if __name__ == "__main__":
    from glyphbench.cli import main

    sys.argv[0] = "glyphbench"
    main()
