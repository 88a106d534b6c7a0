"""``glyphbench demo`` / ``make demo``: the whole harness, offline, on CPU, in minutes.

It samples English prompts from the embedded ``default`` set (stratified by prompt
type and group), runs the three control models (render, typo at two rates, blank)
and one tiny random diffusers pipeline built locally (labelled as untrained: it
draws noise, it exists to exercise the machinery), reads every image with the
default reader (:data:`glyphbench.readers.DEFAULT_READER`), scores it, and writes the
report. Re-running resumes: finished images are kept.

Controls draw 256-pixel images here (512 in a real run) because reading on a small
CPU is the demo's bottleneck; the tiny pipeline draws 64-pixel images.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

from glyphbench.core.errors import InputError
from glyphbench.core.io import read_run_json
from glyphbench.readers import DEFAULT_READER
from glyphbench.run.config import RunConfig
from glyphbench.tiny.pipelines import build_tiny_sd

#: The demo's models: (spec, label). The tiny pipeline's path is filled in at run time.
DEMO_CONTROLS: tuple[tuple[str, str], ...] = (
    ("control:render?size=256", "control:render"),
    ("control:typo?rate=0.1&size=256", "control:typo?rate=0.1"),
    ("control:typo?rate=0.4&size=256", "control:typo?rate=0.4"),
    ("control:blank?size=256", "control:blank"),
)
TINY_LABEL = "tiny-random-sd (untrained)"

#: What to try next, printed at the end (docs/vae_eval.md): the README's VAE command, whose
#: figures the README gives (tests/docs/test_readme_vae_figures.py runs it).
VAE_COMMAND = (
    "glyphbench vae-eval --vae identity --vae taesd:../shared/taef2 "
    "--vae 'resize?factor=8' --limit 25 --ocr rapidocr --out vae-out"
)


def demo_config(out: Path, tiny_path: Path, sample: int = 40) -> dict[str, Any]:
    """The demo's run config as a mapping (see glyphbench.run.config.RunConfig)."""
    models: list[dict[str, Any]] = [{"spec": spec, "name": name} for spec, name in DEMO_CONTROLS]
    models.append(
        {"spec": f"diffusers:{tiny_path}", "name": TINY_LABEL, "options": {"device": "cpu"}}
    )
    return {
        "run_id": "demo",
        "out": str(out / "run"),
        "prompts": "default?lang=en",
        "sample": sample,
        "stratify": ["prompt_type", "group"],
        "seeds": [0],
        "images_per_prompt": 1,
        "batch_size": 8,
        "ocr": DEFAULT_READER,
        "models": models,
    }


#: What a demo writes into its folder (the run, the tiny model and the report).
DEMO_ENTRIES = ("run", "tiny-random-sd", "report")


def check_demo_folder(out: Path) -> None:
    """Refuse an ``--out`` that is not a demo's: the demo writes its report over
    ``OUT/report``, which in another run's folder was that run's own report."""
    if out.exists() and not out.is_dir():
        raise InputError(out, "exists and is not a folder; choose another --out")
    if not out.is_dir():
        return
    foreign = sorted(
        e.name for e in out.iterdir() if e.name not in DEMO_ENTRIES and not e.name.startswith(".")
    )
    run_id = read_run_json(out / "run").get("run_id") if (out / "run").is_dir() else "demo"
    if foreign or run_id not in ("demo", None):
        held = f"it holds {foreign[0]}" if foreign else f"its run/ is run {run_id!r}"
        raise InputError(
            out,
            f"not a demo folder ({held}); the demo writes run/, tiny-random-sd/ and report/ "
            "there: choose an empty or new --out",
        )


def run_demo(out: str | Path = "demo_out", *, sample: int = 40, progress: bool = True) -> Path:
    """Run the demo into ``out``; returns the run folder. Prints where everything is."""
    import yaml

    from glyphbench.report.build import ANSWER
    from glyphbench.report.console import print_answer, summary_console
    from glyphbench.run.operations import load_prompts, run_benchmark

    console = summary_console()
    out = Path(out)
    check_demo_folder(out)
    started = time.perf_counter()
    mapping = demo_config(out, (out / "tiny-random-sd").resolve(), sample)
    config = RunConfig.from_mapping(mapping, "demo")
    prompts = load_prompts(config)  # a --sample it refuses: before anything is written
    build_tiny_sd(out / "tiny-random-sd")
    text = "# glyphbench demo config\n" + yaml.safe_dump(mapping, sort_keys=False)
    result = run_benchmark(config, config_text=text, prompt_set=prompts, progress=progress)
    assert result.results is not None  # one process: merged at the end
    from glyphbench.report import write_report

    index = write_report([result.out], out / "report")
    # the report's answer (scores with intervals, ranks, verdicts), as `glyphbench report` prints it
    answer = json.loads((index.parent / ANSWER).read_text(encoding="utf-8"))
    print_answer(answer, console, title="glyphbench demo (controls are marked)")
    console.print(f"run folder: {result.out}  (run.json, images/, results.parquet)", markup=False)
    console.print(f"report: {index}", markup=False)
    console.print(f"demo finished in {time.perf_counter() - started:.0f} s")
    console.print(f"VAE text survival on a real trained VAE (taef2): {VAE_COMMAND}", markup=False)
    return result.out
