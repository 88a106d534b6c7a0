"""Progress lines when output is not a terminal, one progress library, declared
dependencies, and the tokenizer's length warning silenced where truncation is intended."""

from __future__ import annotations

import ast
import io
import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest
import tomllib
from rich.console import Console

from glyphbench.run.config import RunConfig
from glyphbench.run.operations import run_benchmark
from tests.helpers.paths import REPO_ROOT
from tests.helpers.runner_helper import PixelOCR, prompt_set, write_prompts_csv

REPO = REPO_ROOT
PACKAGES = ("bench", "prompts", "vae_eval", "human_eval")


def test_a_run_prints_progress_lines_to_a_console_that_is_not_a_terminal(
    tmp_path: Path,
) -> None:
    console = Console(file=io.StringIO(), width=200)  # a file: not a terminal
    assert not console.is_terminal
    config = RunConfig.from_mapping(
        {"models": ["control:render?size=64"], "batch_size": 2, "out": str(tmp_path / "run")}
    )
    run_benchmark(config, prompt_set=prompt_set(10), reader=PixelOCR(), console=console)
    lines = [x for x in console.file.getvalue().splitlines() if x.startswith("control:render")]
    # one line per 10% at least (batches of 2 of 10 images: every 20%), then the last
    assert [x.split(",")[0] for x in lines] == [
        f"control:render?size=64: {n}/10 ({10 * n}%)" for n in (2, 4, 6, 8, 10)
    ]
    # rate and time left, as tqdm shows them ("?" until half a second has passed);
    # the last line has nothing left
    pace = r"elapsed, ([\d.]+/(s|min)|\?/s), ETA (\d+:\d\d:\d\d|\?)$"
    assert all(re.search(pace, x) for x in lines), lines
    assert lines[-1].endswith("ETA 0:00:00")


def test_progress_lines_give_the_average_rate_and_the_time_left(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fake clock: 4 items in 8 s is 0.5/s, so the 6 left take 12 s; items a task
    starts with (a resumed run's) count neither in the rate nor in the time left."""
    from glyphbench.core import progress as module

    clock = [100.0]
    monkeypatch.setattr(module.time, "monotonic", lambda: clock[0])
    console = Console(file=io.StringIO(), width=200)
    bar = module.LineProgress(console=console, step=0.2)
    task = bar.add_task("making", total=12, completed=2)
    for _ in range(4):
        clock[0] += 2.0
        bar.advance(task)
    said = console.file.getvalue().splitlines()
    assert said[-1].startswith("making: 6/12 (50%)")
    assert said[-1].endswith(", 30/min, ETA 0:00:12")


@pytest.mark.slow
def test_the_cli_piped_to_a_file_shows_progress_lines(tmp_path: Path) -> None:
    csv = write_prompts_csv(tmp_path / "p.csv", 4)
    command = [
        sys.executable, str(REPO / "tests" / "helpers" / "runner_helper.py"), "run",
        "--models", "control:blank?size=32", "--prompts", f"csv:{csv}", "--ocr", "pixelocr",
        "--batch-size", "1", "--out", str(tmp_path / "run"),
    ]  # fmt: skip
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    progress = [x for x in done.stderr.splitlines() if x.startswith("control:blank?size=32: ")]
    assert [x.split(",")[0].split(": ")[1] for x in progress] == [
        "1/4 (25%)", "2/4 (50%)", "3/4 (75%)", "4/4 (100%)",
    ]  # fmt: skip


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names.add(node.module.split(".")[0])
    return names


@pytest.mark.slow
def test_one_progress_library_and_dependencies_declared_where_used() -> None:
    files = [p for package in PACKAGES for p in (REPO / package).rglob("*.py")]
    users = {name: [p for p in files if name in _imported_modules(p)] for name in ("tqdm", "scipy")}
    assert users["tqdm"] == [], "progress is rich everywhere (glyphbench.core.progress)"
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    main = {dep.split(">")[0].split("=")[0].strip() for dep in project["dependencies"]}
    assert "rich" in main and "tqdm" not in main
    vae_users = [p for p in users["scipy"] if p.parts[-2] in ("vae_eval", "scoring")]
    assert vae_users, "the VAE scores use scipy"  # so it must be a main dependency
    assert "scipy" in main


def test_the_tokenizer_length_warning_is_silenced_only_where_prompts_are_cut(
    tmp_path: Path,
) -> None:
    from glyphbench.models.diffusers_adapter import quiet_token_length_warning
    from glyphbench.tiny.pipelines import _tokenizer

    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    keep = Keep()
    logger = logging.getLogger("transformers")  # transformers does not propagate to root
    logger.addHandler(keep)
    long_prompt = "a shop sign that says open " * 20
    try:
        with quiet_token_length_warning():
            quiet = _tokenizer(tmp_path)
            quiet(long_prompt)  # longer than the tiny tokenizer's 32 tokens
            logging.getLogger("transformers.tokenization_utils_base").warning("other warning")
        loud = _tokenizer(tmp_path)
        loud(long_prompt)  # outside: transformers warns as before
    finally:
        logger.removeHandler(keep)
    messages = [record.getMessage() for record in records]
    length = [m for m in messages if m.startswith("Token indices sequence length is longer than")]
    assert len(length) == 1 and "other warning" in messages
    assert messages.index("other warning") < messages.index(length[0])  # the loud one, after


def test_diffusers_loading_bar_is_off_while_loading_into_a_log() -> None:
    """Under pytest stderr is not a terminal: the loading bar is off, then back on."""
    from diffusers.utils import logging as diffusers_logging

    from glyphbench.models.diffusers_adapter import _quiet_loading_bars

    assert diffusers_logging.is_progress_bar_enabled()
    with _quiet_loading_bars():
        assert not diffusers_logging.is_progress_bar_enabled()
    assert diffusers_logging.is_progress_bar_enabled()


def test_a_model_after_a_slow_one_is_timed_from_its_own_start(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A fake clock: a slow model takes 20 min, the next one starts loading while its last
    batch is read, then makes 4 images in 4 s. Before, the fast one's time was counted
    from the run's start ("ETA 0:25:25" for a model done in seconds); now from its own
    first batch, and the run has a line of its own whose time left says what it knows."""
    from types import SimpleNamespace

    from glyphbench.core import progress as module
    from glyphbench.engine.loop import RUN_TASK, progress_bars

    clock = [0.0]
    monkeypatch.setattr(module.time, "monotonic", lambda: clock[0])
    console = Console(file=io.StringIO(), width=200)
    groups = [SimpleNamespace(name=n, jobs=[0, 1, 2, 3]) for n in ("slow", "fast")]
    with progress_bars(groups, console) as progress:  # type: ignore[arg-type]
        progress("slow", 0, 4)  # loaded
        for done in (1, 2, 3):
            clock[0] += 300.0
            progress("slow", done, 4)
        progress("fast", 0, 4)  # loaded while the slow model's last batch is read
        clock[0] += 300.0
        progress("slow", 4, 4)
        for done in (1, 2, 3, 4):
            clock[0] += 1.0
            progress("fast", done, 4)
    lines = console.file.getvalue().splitlines()
    fast = [line for line in lines if line.startswith("fast:")]
    assert fast[1] == "fast: 2/4 (50%), 0:00:02 elapsed, 1/s, ETA 0:00:02", fast
    whole = [line for line in lines if line.startswith(RUN_TASK)]
    # 3 slow images in 15 min: 1 left, 5 min, and the fast model not timed yet
    assert (
        whole[2] == f"{RUN_TASK}: 3/8 (38%), 0:15:00 elapsed, ETA 0:05:00 + 1 model not timed yet"
    )
    assert whole[-1].endswith("8/8 (100%), 0:20:04 elapsed, ETA 0:00:00"), whole
