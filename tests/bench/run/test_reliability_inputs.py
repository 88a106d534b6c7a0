"""Bounded, checked inputs (cases 2, 3, 6 and the smaller points of 8).

Config files are bounded (size; YAML aliases), every check `run` makes on a prompt
file is also a finding of `prompts validate`, nothing is written before the checks
pass, file names of any encoding in an `images:` folder are named escaped and the run
is merged, a FIFO there is an unreadable row, a URL's `{env:K}` is percent-encoded, a
JSONL line that is not text is named by line, and a report on an empty results table
points to `glyphbench merge` (docs/reliability.md).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pandas as pd
import pytest

from glyphbench.core.errors import InputError
from glyphbench.core.io import MAX_CONFIG_BYTES, read_table
from tests.helpers.cli_runs import run_cli
from tests.helpers.runner_helper import register, write_prompts_csv

register()


def alias_bomb(depth: int) -> str:
    """A YAML list of 9 values whose every level repeats the one above 9 times."""
    lines = ["      a0: &a0 [x, x, x, x, x, x, x, x, x]"]
    for level in range(1, depth + 1):
        refs = ", ".join([f"*a{level - 1}"] * 9)
        lines.append(f"      a{level}: &a{level} [{refs}]")
    return "\n".join(lines)


def test_a_yaml_alias_bomb_in_free_form_options_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "bomb.yaml"
    config.write_text(
        "models:\n"
        "  - spec: api:http/x\n"
        "    options:\n"
        "      url: http://127.0.0.1:9/v1\n"
        "      image_field: data.0.b64_json\n"
        "      body:\n" + alias_bomb(5).replace("      a", "        a") + "\n"
        "prompts: default\n"
        f"out: {tmp_path / 'out'}\n"
    )
    code, err = run_cli(["run", "-c", str(config), "--dry-run"], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert "bomb.yaml" in err and "aliases expand to more than" in err
    assert not (tmp_path / "out").exists()


def test_a_few_yaml_aliases_still_load(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "ok.yaml"
    config.write_text(
        "models:\n  - {spec: 'control:render', options: &o {size: 32}}\n"
        "  - {spec: 'control:blank', options: *o}\n"
        f"out: {tmp_path / 'out'}\nlimit: 2\n"
    )
    code, err = run_cli(["run", "-c", str(config), "--dry-run"], capsys)
    assert code == 0, err


def test_a_config_file_larger_than_the_limit_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "huge.yaml"
    config.write_text("models: [control:render]\n# " + "x" * MAX_CONFIG_BYTES + "\n")
    code, err = run_cli(["run", "-c", str(config), "--dry-run"], capsys)
    assert code == 2 and err.count("\n") == 1 and "config file too large" in err, err


def test_a_config_stream_longer_than_the_limit_is_refused_without_reading_it_all(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A pipe or a device has no size to check first: /dev/zero grew to 5 GB of memory."""
    code, err = run_cli(["run", "-c", "/dev/zero", "--dry-run"], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert "/dev/zero: config file too large (more than 1,048,576 bytes)" in err


def test_a_repeated_prompt_id_is_a_finding_and_run_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = write_prompts_csv(tmp_path / "prompts.csv", 3)
    frame = pd.read_csv(csv)
    frame.loc[2, "prompt_id"] = frame.loc[0, "prompt_id"]
    frame.to_csv(csv, index=False)
    findings = _validate(csv, capsys)
    assert any(f["kind"] == "duplicate" and "prompt_id" in f["detail"] for f in findings)
    assert any(f["line"] == 4 for f in findings if f["kind"] == "duplicate")
    out_dir = tmp_path / "run"
    args = ["run", "-m", "control:render?size=32", "--prompts", f"csv:{csv}", "--ocr", "pixelocr"]
    code, err = run_cli([*args, "--out", str(out_dir), "--no-progress"], capsys)
    assert code == 2 and "prompt_id values repeat" in err and err.count("\n") == 1, err
    assert not out_dir.exists()


def _validate(csv: Path, capsys: pytest.CaptureFixture[str]) -> list[dict[str, object]]:
    from glyphbench.cli import main

    capsys.readouterr()
    saved = sys.argv
    sys.argv = ["glyphbench", "prompts", "validate", f"csv:{csv}", "--json"]
    try:
        main()
    except SystemExit:
        pass
    finally:
        sys.argv = saved
    return [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]


def made(folder: Path, prompt_ids: list[str]) -> None:
    """A folder of images made elsewhere, one white PNG per prompt id."""
    from PIL import Image

    folder.mkdir()
    for prompt_id in prompt_ids:
        Image.new("RGB", (32, 32), "white").save(folder / f"{prompt_id}.png")


def run_images(folder: Path, out: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    """``run -m images:FOLDER`` on two prompts (p00, p01) into ``out``."""
    csv = write_prompts_csv(folder.parent / "prompts.csv", 2)
    args = ["run", "-m", f"images:{folder}", "--prompts", f"csv:{csv}", "--ocr", "pixelocr"]
    return run_cli([*args, "--out", str(out), "--no-progress"], capsys)


@pytest.mark.skipif(sys.platform != "linux", reason="bytes file names: Linux file systems")
def test_a_file_name_that_is_not_utf8_is_named_escaped_and_the_run_is_merged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "made"
    made(folder, ["p00", "p01"])
    with open(os.path.join(os.fsencode(folder), b"caf\xe9.png"), "wb") as handle:
        handle.write((folder / "p00.png").read_bytes())  # a file no prompt names
    out = tmp_path / "run"
    code, err = run_images(folder, out, capsys)
    assert code == 0, err
    assert "caf\\xe9.png" in err  # listed as not used, escaped
    rows = pd.read_parquet(out / "results.parquet")
    assert len(rows) == 2 and (rows["error"] == "").all()
    meta = json.loads((out / "run.json").read_text(encoding="utf-8"))  # valid UTF-8 JSON
    assert meta["models"]["images:made"]["images"]["extra"] == ["caf\\xe9.png"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs")
def test_a_fifo_in_an_images_folder_is_an_unreadable_row(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "made"
    made(folder, ["p00"])
    os.mkfifo(folder / "p01.png")
    out = tmp_path / "run"
    run_images(folder, out, capsys)
    rows = pd.read_parquet(out / "results.parquet").set_index("prompt_id")
    assert rows.loc["p00", "error"] == ""
    assert rows.loc["p01", "error"] == "Unreadable: p01.png: not a regular file (a FIFO)"


def test_env_placeholders_are_percent_encoded_in_a_url(monkeypatch: pytest.MonkeyPatch) -> None:
    from glyphbench.models.api.http_provider import fill

    monkeypatch.setenv("GB_TEST_KEY", "a&b=c/d e")
    url = fill("https://x.test/v1?key={env:GB_TEST_KEY}&p={prompt}", {"prompt": "hi"}, url=True)
    assert url == "https://x.test/v1?key=a%26b%3Dc%2Fd%20e&p=hi"
    # a header or body keeps the value as it is
    assert fill({"k": "{env:GB_TEST_KEY}"}, {}) == {"k": "a&b=c/d e"}


@pytest.mark.parametrize(
    "line",
    [b'{"prompt_id": "p1", "text": "\\ud800"}', b'{"prompt_id": "p1", "text": "\xed\xa0\x80"}'],
)
def test_a_jsonl_line_with_a_lone_surrogate_names_file_and_line(
    tmp_path: Path, line: bytes
) -> None:
    path = tmp_path / "prompts.jsonl"
    path.write_bytes(b'{"prompt_id": "p0", "text": "ok"}\n\n' + line + b"\n")
    with pytest.raises(InputError) as error:
        read_table(path)
    assert error.value.line == 3 and str(error.value).startswith(f"{path}:3: ")


def test_a_report_on_a_zero_byte_results_table_points_to_merge(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = write_prompts_csv(tmp_path / "prompts.csv", 2)
    out = tmp_path / "run"
    args = ["run", "-m", "control:render?size=32", "--prompts", f"csv:{csv}", "--ocr", "pixelocr"]
    assert run_cli([*args, "--out", str(out), "--no-progress"], capsys)[0] == 0
    (out / "results.parquet").write_bytes(b"")
    code, err = run_cli(["report", str(out), "--out", str(tmp_path / "report")], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert "file is empty" in err and f"glyphbench merge {out}" in err


def test_a_device_typo_or_an_absent_cuda_is_refused_before_the_run_folder_is_made(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--device banana` and `--device cuda` without a GPU became torch's error in failed
    rows of a folder already written (exit 1), and their dry runs said 0."""
    out = tmp_path / "run"
    base = ["run", "--models", f"control:render,diffusers:{tmp_path / 'sd'}", "--sample", "2"]
    code, err = run_cli([*base, "--out", str(out), "--device", "banana"], capsys)
    assert code == 2 and "--device: device 'banana' is not one of auto, cpu" in err, err
    monkeypatch.setattr("glyphbench.run.operations.auto_device", lambda: "cpu")
    for extra in ([], ["--dry-run"]):
        code, err = run_cli([*base, "--out", str(out), "--device", "cuda:1", *extra], capsys)
        assert code == 2 and err.count("\n") == 1 and "no CUDA device is visible" in err, err
    assert not out.exists()
    controls = ["run", "--models", "control:render", "--sample", "2", "--device", "cuda"]
    code, err = run_cli([*controls, "--out", str(out), "--dry-run"], capsys)
    assert code == 0, err  # the controls draw on the CPU: nothing to refuse


def test_a_run_id_too_long_to_be_a_name_is_refused_and_not_echoed_whole(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["run", "--models", "control:render", "--sample", "2", "--out", str(tmp_path / "r")]
    code, err = run_cli([*args, "--run-id", "a" * 5000, "--dry-run"], capsys)
    assert code == 2 and "run_id has 5,000 characters; at most 128" in err, err
    assert len(err) < 300 and not (tmp_path / "r").exists()


def test_a_prompt_file_beside_the_config_but_not_in_the_current_folder_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`prompts: csv:p.csv` in cfg/run.yaml, p.csv beside it, run from the folder above:
    "p.csv: file not found", naming neither the config nor its key."""
    folder = tmp_path / "cfg"
    folder.mkdir()
    (folder / "p.csv").write_text("prompt_id,prompt,text\np1,A sign,OPEN\n", encoding="utf-8")
    (folder / "run.yaml").write_text(
        f"models: [control:render]\nprompts: csv:p.csv\nout: {tmp_path / 'r'}\n", encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    code, err = run_cli(["run", "--config", "cfg/run.yaml", "--dry-run"], capsys)
    assert code == 2 and "cfg/run.yaml [prompts]: p.csv is not in the current folder" in err
    assert "write csv:cfg/p.csv" in err
    monkeypatch.chdir(folder)  # run from the config's folder: found
    code, err = run_cli(["run", "--config", "run.yaml", "--dry-run"], capsys)
    assert code == 0, err


def test_only_diffusers_models_need_the_cuda_device_asked_for(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from glyphbench.core.errors import InputError
    from glyphbench.run.config import RunConfig
    from glyphbench.run.operations import check_device

    monkeypatch.setattr("glyphbench.run.operations.auto_device", lambda: "cpu")

    def config(*models: str) -> RunConfig:
        return RunConfig.from_mapping({"models": list(models), "device": "cuda"})

    check_device(config("control:render", "images:some/folder"))  # no pipeline: nothing to run
    check_device(config(f"diffusers:{tmp_path}?device=cpu"))  # its own device: its load checks
    with pytest.raises(InputError, match="no CUDA device is visible"):
        check_device(config("images:some/folder", f"diffusers:{tmp_path}"))
