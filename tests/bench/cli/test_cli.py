"""The glyphbench CLI: instant help without heavy imports, and `score` end to end."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from glyphbench.cli.root import COMMAND_MODULES, app

HEAVY = (
    "torch",
    "diffusers",
    "transformers",
    "easyocr",
    "gradio",
    "onnxruntime",
    "rapidocr_onnxruntime",
)


@pytest.mark.slow
def test_help_imports_no_heavy_library():
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from glyphbench.cli.root import app\n"
        "result = CliRunner().invoke(app, ['--help'])\n"
        "assert result.exit_code == 0, result.output\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"--help imported: {out.stdout.strip()}"


@pytest.mark.slow
def test_list_imports_no_heavy_library():
    """``glyphbench list`` imports every plug-in module: each must stay cheap to import."""
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from glyphbench.cli.root import app\n"
        "result = CliRunner().invoke(app, ['list'])\n"
        "assert result.exit_code == 0, result.output\n"
        "assert 'easyocr' in result.output and 'stratified' in result.output\n"
        f"heavy = [m for m in {HEAVY!r} if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"list imported: {out.stdout.strip()}"


def test_every_command_module_registers_commands():
    result = CliRunner().invoke(app, ["--help"])
    assert result.exit_code == 0
    assert "score" in result.output
    assert len(COMMAND_MODULES) >= 1


def test_console_script_runs():
    exe = sys.executable.replace("python", "glyphbench")
    result = subprocess.run([exe, "--version"], capture_output=True, text=True)
    assert result.returncode == 0 and result.stdout.startswith("glyphbench ")


def run_score(args):
    exe = sys.executable.replace("python", "glyphbench")
    return subprocess.run([exe, "score", *args], capture_output=True, text=True)


@pytest.mark.slow
def test_score_appends_scores_and_keeps_empty_cells_empty(tmp_path):
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("id,text,ocr_text\n1,Hello,HELL0\n2,welcome,\n3,,\n", encoding="utf-8")
    out = tmp_path / "scores.csv"
    result = run_score(
        [str(pairs), "--out", str(out), "--expected-col", "text", "--ocr-col", "ocr_text"]
    )
    assert result.returncode == 0, result.stderr
    frame = pd.read_csv(out, keep_default_na=False)
    assert frame["id"].tolist() == [1, 2, 3]
    assert frame["algorithm1"].tolist() == [1, 7, 0]
    assert "nan" not in out.read_text(encoding="utf-8").lower()


@pytest.mark.slow
def test_score_reference_compat(tmp_path):
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("expected,ocr\nDigital Dreamscapes,Dlgitoi Draseampes\n", encoding="utf-8")
    out = tmp_path / "scores.csv"
    assert run_score([str(pairs), "--out", str(out), "--compat", "reference"]).returncode == 0
    row = pd.read_csv(out).iloc[0]
    assert (row.score_lcs, row.score_levenshtein, row.score_algorithm1) == (13, 7, 7)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("content", "args", "message"),
    [
        (b"expected,other\na,b\n", [], "no column 'ocr' or 'ocr_text'"),
        (b"expected,ocr\ncaf\xe9,cafe\n", [], "not UTF-8"),
        (None, [], "file not found"),
        (b"expected,ocr\na,b\n", ["--compat", "paper"], "--compat"),
    ],
)
def test_score_bad_input_is_one_line_exit_2(tmp_path, content, args, message):
    pairs = tmp_path / "pairs.csv"
    if content is not None:
        pairs.write_bytes(content)
    result = run_score([str(pairs), "--out", str(tmp_path / "o.csv"), *args])
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], result.stderr
    if content is not None and "--compat" not in args:
        assert str(pairs) in lines[0]
    assert not (tmp_path / "o.csv").exists()


def test_list_prints_a_shared_option_schema_once():
    result = CliRunner().invoke(app, ["list", "sources"])
    assert result.exit_code == 0, result.output
    assert result.output.count("your column holding a stable prompt id") == 1
    assert "options: the same as csv" in result.output


def test_a_spec_string_names_its_model_with_name():
    from glyphbench.run.config import ModelEntry

    entry = ModelEntry.model_validate("images:some/folder?name=A")
    assert (entry.label, entry.spec) == ("A", "images:some/folder")
    named = ModelEntry.model_validate({"spec": "images:f?device=cpu&name=t", "name": "kept"})
    assert (named.label, named.to_spec().text) == ("kept", "images:f?device=cpu")


@pytest.mark.parametrize(
    ("entry", "refused"),
    [
        ({"spec": "control:render", "name": "Render baseline"}, "name it 'control:render'"),
        ({"spec": "control:typo?rate=0.3", "name": "control:typo?rate=0.1"}, "rate=0.3"),
        ({"spec": "control:blank", "name": "control:render"}, "name it 'control:blank'"),
        ({"spec": "images:f", "name": "control:render"}, "kept for the controls"),
    ],
)
def test_a_control_is_named_as_the_control_it_is(entry: dict, refused: str) -> None:
    """The report tells a control and its kind by its label: a control named "Render
    baseline" was ranked as a model and left out of the control checks."""
    from pydantic import ValidationError

    from glyphbench.run.config import ModelEntry

    with pytest.raises(ValidationError, match=re.escape(refused)):
        ModelEntry.model_validate(entry)
    size = ModelEntry.model_validate(
        {"spec": "control:typo?rate=0.1&size=256", "name": "control:typo?rate=0.10"}
    )
    assert size.label == "control:typo?rate=0.10"  # the demo's way: its size left out


def test_dataset_card_states_a_licence_and_reads_counts_as_counts():
    from glyphbench.cli.export import dataset_card

    table = pd.DataFrame({"model": ["m"], "ned": [1.0], "lcs_len": [4]})
    card = dataset_card({"run_id": "r"}, table, dropped=0, license_id="cc-by-4.0")
    assert "\nlicense: cc-by-4.0\n" in card and "## Licence" in card
    lcs = next(line for line in card.splitlines() if line.startswith("- `lcs_len`"))
    assert "higher is better" not in lcs and "count of characters" in lcs
    assert "higher is better" in next(line for line in card.splitlines() if "`ned`" in line)
    assert "\nlicense: other\n" in dataset_card({}, table, dropped=0)


@pytest.mark.parametrize("args", [["--out", ""], ["-o", " "], ["--out="]])
def test_an_empty_out_is_refused_not_taken_for_the_current_folder(
    args: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`run --out ""` wrote a whole run among the current folder's files."""
    from tests.helpers.cli_runs import run_cli

    monkeypatch.chdir(tmp_path)
    for command in (
        ["run", "--models", "control:render", "--sample", "2"],
        ["vae-eval", "--vae", "identity"],
    ):
        code, err = run_cli([*command, *args], capsys)
        assert code == 2 and "--out is empty" in err, err
    assert list(tmp_path.iterdir()) == []


def test_a_refused_command_with_json_prints_its_error_as_json_on_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With --json a failure left stdout empty: a script reading JSON got nothing to parse."""
    import json

    from tests.helpers.cli_runs import invoke_cli

    args = ["run", "--models", "control:render", "--sample", "0", "--out", str(tmp_path / "r")]
    code, out, err = invoke_cli([*args, "--json"], capsys)
    assert code == 2 and err.startswith("error: --sample")
    assert json.loads(out) == {"error": err.removeprefix("error: ").strip(), "exit_code": 2}
    code, out, _ = invoke_cli(args, capsys)
    assert code == 2 and out == ""  # without --json: stderr only, as ever
