"""Adding a suite with its own metric family, or a codec, is one object.

Each test registers a toy of its kind here (no other file changes) and follows it
through the command line: ``run`` / ``vae-eval`` results, the report and ``list``.
The other kinds are proved in tests/bench/core/test_registry.py: a metric in a family of its own
(``test_a_metric_in_a_family_of_its_own_reaches_results_report_and_list``), a reader
and a prompt source (``test_toy_metric_reader_and_source_reach_results_report_and_list``)
and a model (``test_toy_model_reader_and_source_reach_the_report``, below, adds the report).
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from PIL import Image
from typer.testing import CliRunner

from glyphbench.cli.root import app
from glyphbench.core.registry import PLUGINS, Options, Spec, register
from glyphbench.models import ImageRequest, ModelAdapter
from glyphbench.readers import Reader, Reading
from glyphbench.scoring.table import METRICS, Metric, Ratio

# --------------------------------------------------------------------------- toys


class GreyModel(ModelAdapter):
    def __init__(self, spec: Spec, options: Options) -> None:
        self.spec = spec.text

    def generate(self, requests: Sequence[ImageRequest]) -> list[Image.Image]:
        return [Image.new("RGB", (32, 32), (128, 128, 128)) for _ in requests]


class SizeReader(Reader):
    name = "recipe-size"

    def __init__(self, spec: Spec, options: Options) -> None:
        pass

    @property
    def version(self) -> str:
        return "recipe-size 1"

    def read(self, images: Sequence[Image.Image]) -> list[Reading]:
        return [Reading(f"image {image.width}x{image.height}") for image in images]


def recipe_words(spec: Spec, options: Options) -> Any:
    from glyphbench.prompts.schema import PromptSet

    frame = pd.DataFrame(
        {
            "prompt_id": ["w0", "w1"],
            "prompt": ['A sign that says "image".', 'A sign that says "sign".'],
            "text": ["image", "sign"],
            "prompt_type": "simple",
        }
    )
    return PromptSet(frame, source=spec.text, version="recipe-1")


TOYS = {"models": "recipe-grey", "readers": "recipe-size", "sources": "recipe-words"}
_TOY_FACTORIES: dict[str, tuple[Any, str]] = {
    "models": (GreyModel, "A 32 x 32 grey square for every prompt."),
    "readers": (SizeReader, "Reads every image as 'image WxH'."),
    "sources": (recipe_words, "Two prompts: 'image' and 'sign'."),
}


@pytest.fixture(scope="module", autouse=True)
def _toys_while_this_module_runs() -> Iterator[None]:
    """The toys exist only while this module's tests run: registered at import, they would
    reach every test collected in the same worker (``--help`` texts, ``list``)."""
    for kind, name in TOYS.items():
        factory, summary = _TOY_FACTORIES[kind]
        register(kind, name, summary=summary)(factory)
    yield
    for kind, name in TOYS.items():
        PLUGINS.unregister(kind, name)


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


# --------------------------------------------------------------------------- model, reader, source


@pytest.mark.slow
def test_toy_model_reader_and_source_reach_the_report(tmp_path: Path) -> None:
    """The report names the toy model, its reader and its source; `list` names all three."""
    from glyphbench.report import write_report

    out = tmp_path / "run"
    _invoke("run", "--models", "recipe-grey", "--prompts", "recipe-words", "--ocr", "recipe-size",
            "--out", str(out), "--no-progress")  # fmt: skip
    rows = pd.read_parquet(out / "results.parquet")
    assert rows["ocr_text"].tolist() == ["image 32x32"] * 2
    assert rows["exact_match"].astype(float).tolist() == [0.0, 0.0]
    write_report([out], tmp_path / "report", n_boot=50)
    summary = pd.read_csv(tmp_path / "report" / "tables" / "summary.csv")
    assert summary["model"].tolist() == ["recipe-grey"]
    page = (tmp_path / "report" / "index.html").read_text("utf-8")
    assert "recipe-size" in page and "recipe-words" in page
    for kind, name in TOYS.items():
        assert name in _invoke("list", kind)


# --------------------------------------------------------------------------- suite + family

FAMILY = "recipe"


def _family() -> list[Metric]:
    """A toy benchmark scorer: per-pair hits, pooled over the set as found / words."""

    def found(pair: Any) -> float:
        return float(pair.expected in pair.read)

    common: dict[str, Any] = {"family": FAMILY, "higher_is_better": True}
    return [
        Metric("recipe_hit", found, label="Recipe hit", doc="1 when read.", **common),
        Metric("recipe_found", found, label="Recipe found", doc="Found.", helper=True, **common),
        Metric("recipe_words", lambda pair: 1.0, label="Recipe words", doc="Words asked for.",
               helper=True, **common),
        Metric("recipe_score", None, label="Recipe pooled score", doc="Found / words, pooled.",
               aggregate=Ratio("recipe_found", "recipe_words"), summary=1, **common),
    ]  # fmt: skip


@pytest.mark.slow
def test_a_suite_with_its_own_metric_family_reaches_results_report_list_and_score(
    tmp_path: Path,
) -> None:
    """A suite scored by a family of its own; nothing outside this test changes."""
    from glyphbench.report import write_report
    from glyphbench.suites.base import Protocol, Subset, Suite, register_suite

    def load_rows(folder: Path, subset: Subset, options: Any) -> list[dict[str, Any]]:
        words = (folder / "words.txt").read_text("utf-8").split()
        return [
            {"benchmark_id": str(i), "prompt": f'A sign "{w}"', "text": w}
            for i, w in enumerate(words)
        ]

    for metric in _family():
        METRICS.add(metric)
    register_suite(
        Suite(
            "recipe-suite",
            "Recipe suite",
            "words from words.txt, scored by the recipe family",
            (Subset("en", FAMILY, files=("words.txt",)),),
            Protocol(1, (0,), reader="recipe-size", reader_note="the toy reader"),
            headline="recipe_score",
            load_rows=load_rows,
        )
    )
    try:
        data = tmp_path / "data"
        data.mkdir()
        (data / "words.txt").write_text("image sign\n", "utf-8")
        out = tmp_path / "run"
        args = ["--suite", "recipe-suite", "--data", str(data), "--models", "recipe-grey"]
        printed = _invoke("run", *args, "--out", str(out), "--no-progress")
        assert "Recipe pooled score" in printed  # the console summary's headline column
        # results: the family's per-image columns, helpers included (they feed the pooling)
        rows = pd.read_parquet(out / "results.parquet")
        assert rows["recipe_hit"].tolist() == [1.0, 0.0]
        assert rows["recipe_found"].tolist() == [1.0, 0.0]
        assert rows["recipe_words"].tolist() == [1.0, 1.0]
        # report: the suite's section with its headline, pooled as the record says
        write_report([out], tmp_path / "report", n_boot=50)
        report = json.loads((tmp_path / "report" / "report.json").read_text("utf-8"))
        suite = report["suites"]["recipe-suite"]
        assert suite["headline"] == "recipe_score"
        scores = [s for s in suite["scores"] if s["model"] == "recipe-grey"]
        assert scores and all(s["recipe_score"] == 0.5 for s in scores)
        page = (tmp_path / "report" / "index.html").read_text("utf-8")
        assert "Recipe suite" in page and "Recipe pooled score" in page
        # list: the suite and its metrics
        assert "recipe-suite" in _invoke("list", "suites")
        assert "recipe_score" in _invoke("list", "metrics")
        # score --compat: the per-pair columns without helpers; the summary its headline
        pairs = tmp_path / "pairs.csv"
        pairs.write_text("expected,ocr\nimage,image 32x32\nsign,image 32x32\n", "utf-8")
        scored, summary = tmp_path / "out.csv", tmp_path / "summary.json"
        _invoke("score", str(pairs), "--compat", FAMILY, "--out", str(scored),
                "--summary", str(summary))  # fmt: skip
        with open(scored, encoding="utf-8", newline="") as handle:
            header = next(csv.reader(handle))
        assert header == ["expected", "ocr", "recipe_hit"]
        assert json.loads(summary.read_text("utf-8")) == {"recipe_score": 0.5}
    finally:
        PLUGINS.unregister("suites", "recipe-suite")
        for metric in _family():
            METRICS.remove(metric.name, FAMILY)


# --------------------------------------------------------------------------- codec


class DarkerCodec:
    """A round-trip codec object: every pixel value halved."""

    name = "recipe-darker"

    def roundtrip(self, images: Sequence[Image.Image]) -> list[Image.Image]:
        return [Image.eval(image, lambda value: value // 2) for image in images]


@pytest.mark.slow
def test_a_codec_reaches_vae_eval_results_report_and_list(tmp_path: Path) -> None:
    """A codec registered here runs through `glyphbench vae-eval` by name."""
    from glyphbench.vae_eval.codecs import register_codec

    register_codec("recipe-darker", DarkerCodec, summary="Halves every pixel value.")
    try:
        out = tmp_path / "vae"
        _invoke("vae-eval", "--vae", "identity", "--vae", "recipe-darker",
                "--images", "default?size=128", "--limit", "5", "--ocr", "recipe-size",
                "--out", str(out))  # fmt: skip
        table = pd.read_parquet(out / "vae_results.parquet")
        assert list(dict.fromkeys(table["vae"])) == ["identity", "recipe-darker"]
        assert (table["error"] == "").all()
        psnr = table.groupby("vae")["psnr"].mean()
        assert psnr["identity"] == np.inf and 5.0 < psnr["recipe-darker"] < 20.0
        summary = pd.read_csv(out / "report" / "tables" / "summary.csv")
        assert "recipe-darker" in summary["vae"].tolist()
        assert (out / "report" / "index.html").read_text("utf-8").count("recipe-darker") >= 2
        listed = _invoke("list", "codecs")
        assert "recipe-darker" in listed and "Halves every pixel value." in listed
    finally:
        PLUGINS.unregister("codecs", "recipe-darker")
