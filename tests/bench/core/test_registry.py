"""The plug-in registry: toy plug-ins registered here, listed and usable by name.

Each toy plug-in below is one object registered with one decorator: the same
recipe docs/plugins.md gives for adding a reader, a prompt source or a model.
"""

from __future__ import annotations

import importlib.metadata
import json
import re
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from PIL import Image
from pydantic import Field
from typer.testing import CliRunner

from glyphbench import prompts
from glyphbench.cli.root import app
from glyphbench.core.errors import InputError
from glyphbench.core.registry import (
    ENTRY_POINT_GROUP,
    PLUGINS,
    Options,
    PluginRegistry,
    Spec,
    register,
)
from glyphbench.models import ImageRequest, ModelAdapter, get_model
from glyphbench.models.controls import TypoOptions
from glyphbench.prompts.schema import PROMPT_COLUMNS, PromptSet
from glyphbench.prompts.sources import TableOptions
from glyphbench.readers import Reader, Reading, available_engines, get_reader
from glyphbench.run.config import RunConfig

# --------------------------------------------------------------------------- toy plug-ins


class EchoOptions(Options):
    shout: bool = Field(default=False, description="read everything in capitals")


class EchoReader(Reader):
    name = "toy-echo"

    def __init__(self, spec: Spec, options: EchoOptions) -> None:
        self.shout = options.shout

    @property
    def version(self) -> str:
        return "toy-echo 1"

    def read(self, images: Sequence[Image.Image]) -> list[Reading]:
        texts = [f"image {image.width}x{image.height}" for image in images]
        return [Reading(text.upper() if self.shout else text) for text in texts]


class WordsOptions(Options):
    count: int = Field(default=3, ge=1, description="how many prompts to make")


def toy_words(spec: Spec, options: WordsOptions) -> PromptSet:
    words = (spec.target or "alpha,beta,gamma,delta").split(",")[: options.count]
    frame = pd.DataFrame(
        {
            "prompt_id": [f"w{i}" for i in range(len(words))],
            "prompt": [f'A sign that says "{word}".' for word in words],
            "text": words,
            "prompt_type": "simple",
        }
    )
    return PromptSet(frame, source=spec.text, version="toy-1")


class SolidOptions(Options):
    size: int = Field(default=64, ge=8, description="side of the square image, in pixels")
    device: str | None = Field(default=None, description="where to run (the runner may set it)")


class SolidModel(ModelAdapter):
    def __init__(self, spec: Spec, options: SolidOptions) -> None:
        self.spec = spec.text
        self.size = options.size

    def generate(self, requests: Sequence[ImageRequest]) -> list[Image.Image]:
        return [Image.new("RGB", (self.size, self.size), (128, 128, 128)) for _ in requests]


TOYS = {"readers": "toy-echo", "sources": "toy-words", "models": "toy-solid"}


@pytest.fixture(scope="module", autouse=True)
def _toys_while_this_module_runs() -> Iterator[None]:
    """The toys exist only while this module's tests run: registered at import, they would
    reach every test collected in the same worker (``--help`` texts, ``list``)."""
    register("readers", "toy-echo", options=EchoOptions, summary="Reads the image's size as text.")(
        EchoReader
    )
    register(
        "sources",
        "toy-words",
        options=WordsOptions,
        target="optional",
        summary="Prompts asking for the words of the target (comma-separated).",
    )(toy_words)
    register(
        "models", "toy-solid", options=SolidOptions, summary="A grey square for every prompt."
    )(SolidModel)
    yield
    for kind, name in TOYS.items():
        PLUGINS.unregister(kind, name)


# --------------------------------------------------------------------------- usable by name


def test_toys_are_usable_by_name() -> None:
    reader = get_reader("toy-echo?shout=1")
    assert reader.read([Image.new("RGB", (40, 30))])[0].text == "IMAGE 40X30"
    assert available_engines()["toy-echo"] is True
    loaded = prompts.load_prompt_set("toy-words:red,green,blue?count=2")
    assert loaded.frame["text"].tolist() == ["red", "green"]
    assert loaded.source == "toy-words:red,green,blue?count=2"
    model = get_model("toy-solid?size=16")
    assert model.generate([ImageRequest("p", "t", 0)])[0].size == (16, 16)
    for kind, spec, problem in [
        ("readers", "toy-echo?shout=maybe", "'shout': Input should be a valid boolean"),
        ("sources", "toy-words?count=0", "'count': Input should be greater than or equal to 1"),
        ("models", "toy-solid:x", "'toy-solid' takes no target"),
    ]:
        with pytest.raises(InputError, match=problem):
            PLUGINS.resolve(kind, spec)


def test_toys_run_end_to_end_through_the_cli(tmp_path: Path) -> None:
    out = tmp_path / "run"
    args = ["run", "--models", "toy-solid?size=32", "--prompts", "toy-words?count=2"]
    args += ["--ocr", "toy-echo", "--out", str(out), "--no-progress"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    rows = pd.read_parquet(out / "results.parquet")
    assert rows["model"].tolist() == ["toy-solid?size=32"] * 2
    assert rows["ocr_text"].tolist() == ["image 32x32"] * 2
    assert set(rows["text"]) == {"alpha", "beta"}


@pytest.mark.slow
def test_toy_metric_reader_and_source_reach_results_report_and_list(tmp_path: Path) -> None:
    """Each toy is one registered object, seen everywhere it should be."""
    from glyphbench.report import write_report
    from glyphbench.scoring.table import METRICS, Metric

    toy_metric = Metric(
        "toy_read_chars",
        lambda pair: float(len(pair.read)),
        label="Characters read",
        higher_is_better=True,
        doc="How many characters the reader returned.",
        summary=99,
    )
    METRICS.add(toy_metric)
    try:
        out = tmp_path / "run"
        args = ["run", "--models", "toy-solid?size=32", "--prompts", "toy-words?count=2"]
        args += ["--ocr", "toy-echo", "--out", str(out), "--no-progress"]
        assert CliRunner().invoke(app, args).exit_code == 0
        rows = pd.read_parquet(out / "results.parquet")
        assert rows["toy_read_chars"].tolist() == [11.0, 11.0]  # "image 32x32"
        write_report([out], tmp_path / "report", n_boot=50)
        summary = pd.read_csv(tmp_path / "report" / "tables" / "summary.csv")
        assert summary.loc[0, "toy_read_chars"] == 11.0
        assert "Characters read" in (tmp_path / "report" / "index.html").read_text("utf-8")
        listed = CliRunner().invoke(app, ["list"]).output
        assert all(name in listed for name in ("toy_read_chars", "toy-echo", "toy-words"))
    finally:
        METRICS.remove("toy_read_chars")


@pytest.mark.slow
def test_a_metric_in_a_family_of_its_own_reaches_results_report_and_list(tmp_path: Path) -> None:
    """A new family's metric is one object; `run --metrics FAMILY` computes it,
    the report shows it and `list` names it, with no other file changed."""
    from glyphbench.report import write_report
    from glyphbench.scoring.table import METRICS, Metric

    toy = Metric(
        "toy_lines_read",
        lambda pair: float(len(pair.read_raw.splitlines())),
        label="Lines read",
        higher_is_better=True,
        doc="How many lines the reader returned.",
        family="toyfamily",
        summary=1,
    )
    METRICS.add(toy)
    try:
        out = tmp_path / "run"
        args = ["run", "--models", "toy-solid?size=32", "--prompts", "toy-words?count=2"]
        args += ["--ocr", "toy-echo", "--metrics", "toyfamily", "--out", str(out), "--no-progress"]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        rows = pd.read_parquet(out / "results.parquet")
        assert rows["toy_lines_read"].tolist() == [1.0, 1.0]
        write_report([out], tmp_path / "report", n_boot=50)
        summary = pd.read_csv(tmp_path / "report" / "tables" / "summary.csv")
        assert summary.loc[0, "toy_lines_read"] == 1.0
        assert "Lines read" in (tmp_path / "report" / "index.html").read_text("utf-8")
        assert "toy_lines_read" in CliRunner().invoke(app, ["list", "metrics"]).output
        # without --metrics the family is not scored; an unknown family is a one-line error
        plain = tmp_path / "plain"
        args = ["run", "--models", "toy-solid?size=32", "--prompts", "toy-words?count=2"]
        args += ["--ocr", "toy-echo", "--out", str(plain), "--no-progress"]
        assert CliRunner().invoke(app, args).exit_code == 0
        assert "toy_lines_read" not in pd.read_parquet(plain / "results.parquet").columns
        bad = CliRunner().invoke(
            app, [*args[:-3], "--metrics", "nosuch", "--out", str(tmp_path / "x")]
        )
        assert "unknown metric family 'nosuch'" in str(bad.exception)  # InputError: exit 2
        assert not (tmp_path / "x").exists()
    finally:
        METRICS.remove("toy_lines_read")


# --------------------------------------------------------------------------- glyphbench list


def test_toys_are_listed_with_their_options() -> None:
    runner = CliRunner()
    for kind, name in TOYS.items():
        text = runner.invoke(app, ["list", kind])
        assert text.exit_code == 0, text.output
        assert name in text.output
        listed = json.loads(runner.invoke(app, ["list", kind, "--json"]).output)[kind]
        (toy,) = [plugin for plugin in listed if plugin["name"] == name]
        assert toy["module"] == __name__
    echo = runner.invoke(app, ["list", "readers"]).output
    assert "shout  bool  default False  read everything in capitals" in echo
    words = json.loads(runner.invoke(app, ["list", "sources", "--json"]).output)["sources"]
    (toy,) = [plugin for plugin in words if plugin["name"] == "toy-words"]
    assert toy["options"] == [
        {
            "name": "count",
            "type": "int (>= 1)",
            "default": 3,
            "required": False,
            "description": "how many prompts to make",
        }
    ]


def test_list_shows_every_kind_and_every_builtin() -> None:
    listed = json.loads(CliRunner().invoke(app, ["list", "--json"]).output)
    assert list(listed) == [
        "models",
        "readers",
        "codecs",
        "sources",
        "samplers",
        "suites",
        "metrics",
    ]
    names = {
        kind: {p["name"] for p in plugins} for kind, plugins in listed.items() if kind != "metrics"
    }
    assert {"control", "diffusers"} <= names["models"]
    assert {"easyocr", "rapidocr", "tesseract"} <= names["readers"]
    assert {"identity", "jpeg", "resize", "diffusers"} <= names["codecs"]
    assert {"default", "textinvision", "csv", "jsonl", "parquet", "hf"} <= names["sources"]
    assert names["samplers"] >= {"stratified"}
    control = next(p for p in listed["models"] if p["name"] == "control")
    assert list(control["targets"]) == ["render", "typo", "blank"]
    assert [o["name"] for o in control["targets"]["typo"]] == ["size", "rate"]
    assert control["targets"]["typo"][1]["required"] is True


def test_list_metrics_reads_the_metric_table() -> None:
    from glyphbench.scoring.table import METRICS, Metric

    toy = Metric(
        "toy_chars",
        lambda pair: 0.0,
        label="Characters read",
        higher_is_better=True,
        doc="How many characters the reader returned.",
        family="toy",
    )
    METRICS.add(toy)
    try:
        text = CliRunner().invoke(app, ["list", "metrics"]).output
        listed = json.loads(CliRunner().invoke(app, ["list", "metrics", "--json"]).output)
    finally:
        METRICS.remove("toy_chars")
    assert re.search(r"toy_chars\s+Characters read\s+higher is better\s+\[toy\]", text)
    assert "How many characters the reader returned." in text
    assert {
        "name": "toy_chars",
        "label": "Characters read",
        "direction": "higher is better",
        "family": "toy",
        "doc": "How many characters the reader returned.",
    } in listed["metrics"]


def test_list_of_something_unknown_is_a_one_line_error() -> None:
    result = CliRunner().invoke(app, ["list", "modles"])
    assert isinstance(result.exception, InputError)
    assert "choose one of: models, readers" in str(result.exception)


# --------------------------------------------------------------------------- registry rules


def test_unknown_names_list_every_known_name() -> None:
    for kind in ("models", "readers", "codecs", "sources", "samplers"):
        with pytest.raises(InputError) as info:
            PLUGINS.resolve(kind, "no-such-thing")
        message = str(info.value)
        assert all(name in message for name in PLUGINS.names(kind)), message
        assert "..." not in message


def test_bare_table_paths_resolve_by_suffix() -> None:
    for path, kind in [
        ("data/mine.csv", "csv"),
        ("mine.TSV", "csv"),
        ("x.ndjson", "jsonl"),
        ("x.parquet", "parquet"),
    ]:
        spec = PLUGINS.resolve("sources", f"{path}?text=caption").spec
        assert (spec.kind, spec.target, spec.text) == (kind, path, f"{kind}:{path}?text=caption")
    with pytest.raises(InputError, match=r"or a path ending in \.csv"):
        PLUGINS.resolve("sources", "notes.txt")


def test_table_options_map_every_schema_column() -> None:
    mappable = [name for name in TableOptions.model_fields if name != "template"]
    assert mappable == list(PROMPT_COLUMNS)


def test_sampler_is_a_plugin_with_a_floor() -> None:
    pool = prompts.load_prompt_set("toy-words:a,b,c,d,e,f?count=6")
    pool.frame["prompt_type"] = ["simple"] * 5 + ["complex"]
    default = prompts.select(pool, sample=2, stratify=["prompt_type"], seed=0)
    assert sorted(default.frame["prompt_type"]) == ["complex", "simple"]  # floor 1 each
    with pytest.raises(InputError, match="smaller than the floor of 1 row"):
        prompts.select(pool, sample=1, stratify=["prompt_type"], seed=0)
    no_floor = prompts.select(
        pool, sample=1, stratify=["prompt_type"], seed=0, sampler="stratified?floor=0"
    )
    assert no_floor.frame["prompt_type"].tolist() == ["simple"]  # in proportion only
    selection = no_floor.meta["selection"]
    assert isinstance(selection, dict)
    assert (selection["floor"], selection["sampler"]) == (0, "stratified?floor=0")
    with pytest.raises(InputError, match="unknown option 'flor'; known: floor"):
        prompts.select(pool, sample=2, sampler="stratified?flor=2")


def test_run_config_records_the_sampler_only_when_not_the_default() -> None:
    plain = RunConfig.from_mapping({"models": ["control:render"]})
    assert "sampler" not in plain.model_dump(mode="json")
    floored = RunConfig.from_mapping(
        {"models": ["control:render"], "sampler": "stratified?floor=2"}
    )
    assert floored.model_dump(mode="json")["sampler"] == "stratified?floor=2"
    assert floored.config_hash() != plain.config_hash()
    with pytest.raises(InputError, match=r"\[sampler\]: unknown sampler 'random'"):
        RunConfig.from_mapping({"models": ["control:render"], "sampler": "random"}, "run.yaml")


def test_targets_choose_the_options_class() -> None:
    typo = PLUGINS.resolve("models", "control:typo?rate=0.2").options
    assert isinstance(typo, TypoOptions) and typo.rate == 0.2
    with pytest.raises(InputError, match="unknown option 'rate'; known: size"):
        PLUGINS.resolve("models", "control:blank?rate=0.2")
    with pytest.raises(InputError, match="option 'rate' is required"):
        PLUGINS.resolve("models", "control:typo")


def test_entry_points_add_plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "toy_entry_plugin.py").write_text(
        "from glyphbench.core.registry import PLUGINS\n"
        "PLUGINS.register('codecs', 'toy-entry', summary='from an entry point')(\n"
        "    lambda spec, options: 'made')\n",
        encoding="utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    entry = importlib.metadata.EntryPoint("toy", "toy_entry_plugin", ENTRY_POINT_GROUP)

    def entry_points(group: str) -> list[Any]:
        return [entry] if group == ENTRY_POINT_GROUP else []

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    fresh = PluginRegistry()
    try:
        assert "toy_entry_plugin" not in sys.modules
        fresh.load("readers")  # loading any kind (not only the first) imports the entry points
        assert "toy_entry_plugin" in sys.modules
        assert PLUGINS.create("codecs", "toy-entry") == "made"
    finally:
        PLUGINS.unregister("codecs", "toy-entry")
        sys.modules.pop("toy_entry_plugin", None)


# ----------------------------------------------------------------- CLI: exit 2, nothing written


def _glyphbench(*args: str) -> subprocess.CompletedProcess[str]:
    exe = sys.executable.replace("python", "glyphbench")
    return subprocess.run([exe, *args], capture_output=True, text=True)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run", "--models", "control:render", "--ocr", "easyocr?colour=red"], "unknown option"),
        (["run", "--models", "control:render", "--ocr", "easyorc"], "unknown reader 'easyorc'"),
        (["run", "--models", "control:typo?rat=0.2"], "[models.0]: control:typo?rat=0.2"),
        (["vae-eval", "--vae", "identity", "--ocr", "tesseract?psm=x"], "--ocr: tesseract?psm=x"),
        (["vae-eval", "--vae", "jpeg?qualty=30"], "unknown option 'qualty'; known: quality"),
        (["vae-eval", "--vae", "jpg"], "unknown codec 'jpg'"),
    ],
)
def test_mistyped_spec_exits_2_with_one_line_and_writes_nothing(
    tmp_path: Path, args: list[str], message: str
) -> None:
    out = tmp_path / "out"
    result = _glyphbench(*args, "--out", str(out))
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    assert not out.exists()


def test_toy_suite_is_one_registered_object_run_by_name(tmp_path: Path) -> None:
    """A suite is one record; `run --suite` reads its files and scores its family."""
    from glyphbench.suites.base import Protocol, Subset, Suite, register_suite

    def load_rows(folder: Path, subset: Subset, options: Any) -> list[dict[str, Any]]:
        words = (folder / "words.txt").read_text("utf-8").split()
        return [
            {"benchmark_id": str(i), "prompt": f'A sign "{w}"', "text": w}
            for i, w in enumerate(words)
        ]

    register_suite(
        Suite(
            "toy-suite",
            "Toy suite",
            "words from words.txt, scored as LongText does",
            (Subset("en", "longtext", files=("words.txt",)),),
            Protocol(1, (0,), reader="toy-echo", reader_note="the toy reader"),
            headline="longtext_text_score",
            load_rows=load_rows,
        )
    )
    try:
        (tmp_path / "data").mkdir()
        (tmp_path / "data" / "words.txt").write_text("image sign\n", "utf-8")
        out = tmp_path / "run"
        args = ["run", "--suite", "toy-suite", "--data", str(tmp_path / "data")]
        args += ["--models", "toy-solid?size=32", "--out", str(out), "--no-progress"]
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, result.output
        rows = pd.read_parquet(out / "results.parquet")
        assert rows["text"].tolist() == ["image", "sign"]
        # The toy reader reads "image 32x32": LongText's recall finds "image", not "sign".
        assert rows["ocr_text"].tolist() == ["image 32x32"] * 2, rows.iloc[0].to_dict()
        assert rows["longtext_recall"].tolist() == [1.0, 0.0]
        assert "toy-suite" in CliRunner().invoke(app, ["list", "suites"]).output
    finally:
        PLUGINS.unregister("suites", "toy-suite")


@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("jpeg??", "'?' is not an option"),
        ("jpeg?=3", "'' is not an option"),
        ("jpeg?quality", "option 'quality' has no value"),
        ("jpeg?qualty=", "unknown option 'qualty'"),
    ],
)
def test_malformed_option_queries_are_refused(spec: str, problem: str) -> None:
    """A blank value means "default" only for a known option; a bare word is no option."""
    with pytest.raises(InputError, match=re.escape(problem)):
        PLUGINS.resolve("codecs", spec)
    assert PLUGINS.resolve("codecs", "jpeg?quality=").options.quality == 75


def test_a_spec_option_given_twice_is_refused_not_overwritten() -> None:
    """``control:typo?rate=0.1&rate=0.9`` ran at 0.9 without a word."""
    import pytest

    from glyphbench.core.errors import InputError
    from glyphbench.core.registry import Spec

    with pytest.raises(InputError, match="option 'rate' is given twice; keep one"):
        Spec.parse("control:typo?rate=0.1&rate=0.9")
    assert Spec.parse("control:typo?rate=0.1").options == {"rate": "0.1"}


@pytest.mark.parametrize(
    "args, said",
    [
        (["--images-per-prompt", "100000000"], "--images-per-prompt: Input should be less"),
        (["--batch-size", "99999999999"], "--batch-size: Input should be less"),
        (["-m", "control:render?size=60000"], "option 'size': Input should be less"),
    ],
)
def test_sizes_past_any_machine_are_refused_before_the_plan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], said: str
) -> None:
    """A typo'd count planned a dry run for minutes and was killed for memory; a 60,000-pixel
    control passed, wrote the run folder and failed every image."""
    from tests.helpers.cli_runs import invoke_cli

    models = [] if "-m" in args else ["-m", "control:blank"]
    out = tmp_path / "run"
    code, _, err = invoke_cli(["run", *models, *args, "--limit", "2", "--out", out], capsys)
    assert code == 2 and said in err, err
    assert not out.exists()
