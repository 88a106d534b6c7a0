"""Hostile text in configs and prompt files: configs nested thousands deep or holding a
key twice, and terminal escape sequences in what commands print (docs/reliability.md,
"Hostile text")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.cli_runs import run_cli
from tests.helpers.paths import REPO_ROOT

REPO = REPO_ROOT

#: What a terminal obeys instead of showing: set the title, clear the screen, move the
#: cursor home, colour, a one-character CSI (U+009B), a carriage return and a
#: right-to-left override.
ESCAPES = "\x1b]0;PWNED\x07\x1b[2J\x1b[H\x1b[31m\x9b2J\r\u202e"


def nested_config(tmp_path: Path, depth: int) -> Path:
    config = tmp_path / "deep.yaml"
    config.write_text(f"models: {'[' * depth}control:render{']' * depth}\nprompts: default\n")
    return config


@pytest.mark.parametrize("depth", [2000, 101])
def test_a_config_nested_thousands_deep_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], depth: int
) -> None:
    code, err = run_cli(["run", "-c", str(nested_config(tmp_path, depth)), "--dry-run"], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert "deep.yaml:1: invalid YAML: nested more than 100 levels deep" in err


def test_block_nesting_is_refused_the_same_way(tmp_path: Path) -> None:
    from glyphbench.core.errors import InputError
    from glyphbench.core.yaml_input import yaml_data

    text = "".join(f"{'  ' * level}k{level}:\n" for level in range(300)) + "  " * 300 + "x: 1\n"
    with pytest.raises(InputError, match=r"deep.yaml:\d+: invalid YAML: nested more than 100"):
        yaml_data(text, "deep.yaml")
    # 100 levels (the mapping, 98 lists, the number) still load
    assert yaml_data("a: " + "[" * 98 + "1" + "]" * 98, "ok.yaml")


def test_a_key_given_twice_is_refused_naming_both_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(
        "models:\n  - spec: control:render\n    options:\n      size: 64\n      size: 128\n"
        "prompts: default\n"
    )
    code, err = run_cli(["run", "-c", str(config), "--dry-run"], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert "run.yaml:5: invalid YAML: duplicate key 'size' (also on line 4" in err


def test_duplicate_keys_are_refused_in_every_yaml_the_project_reads(tmp_path: Path) -> None:
    from glyphbench.core.errors import InputError
    from glyphbench.vae_eval.config import load_config

    vaes = tmp_path / "vaes.yaml"
    vaes.write_text("codecs: [identity]\nimages: a\nimages: b\n")
    with pytest.raises(InputError, match=r"vaes.yaml:3: .*duplicate key 'images'"):
        load_config(vaes)


def test_merge_keys_and_shared_anchors_are_not_duplicates() -> None:
    from glyphbench.core.yaml_input import yaml_data

    text = "base: &b {size: 64, rate: 0.1}\nmine:\n  <<: *b\n  size: 128\nsame: *b\n"
    data = yaml_data(text, "ok.yaml")
    assert data["mine"] == {"size": 128, "rate": 0.1} and data["same"] == data["base"]


def prompts_with_escapes(tmp_path: Path) -> Path:
    path = tmp_path / "evil.jsonl"
    rows = [
        {
            "prompt_id": "p1",
            "text": f"SALE{ESCAPES}",
            "prompt": f'A sign that says "SALE{ESCAPES}"',
            "group": f"shops{ESCAPES}",
        },
        {"prompt_id": "p2", "text": "OPEN [/x] [bold]B[/bold]", "prompt": "a [red]sign[/red]"},
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


def glyphbench(*args: str) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, PYTHONPATH=str(REPO), COLUMNS="200")
    return subprocess.run(
        [sys.executable, "-m", "glyphbench", *args], capture_output=True, env=env, timeout=120
    )


def assert_no_terminal_controls(output: bytes) -> None:
    text = output.decode("utf-8")
    controls = [c for c in text if (ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F]
    assert not controls, controls
    assert "\u202e" not in text


def test_prompts_show_prints_escapes_as_text_never_as_controls(tmp_path: Path) -> None:
    shown = glyphbench("prompts", "show", f"jsonl:{prompts_with_escapes(tmp_path)}")
    assert shown.returncode == 0, shown.stderr.decode()
    assert_no_terminal_controls(shown.stdout)
    out = shown.stdout.decode()
    folded = "".join(out.split())  # the table folds long cells over lines
    assert "SALE\\u001b]0;PWNED\\u0007\\u001b[2J" in folded
    assert "[/x]" in out and "[bold]B[/bold]" in out and "[red]sign[/red]" in out  # not markup


@pytest.mark.parametrize("command", [["stats"], ["stats", "--json"], ["validate"]])
def test_other_prompt_commands_escape_text_from_the_file(tmp_path: Path, command: list) -> None:
    shown = glyphbench("prompts", *command, f"jsonl:{prompts_with_escapes(tmp_path)}")
    assert shown.returncode == 0, shown.stderr.decode()
    assert_no_terminal_controls(shown.stdout)
    assert "\\u001b" in shown.stdout.decode() or "\\x1b" in shown.stdout.decode()


def test_an_error_quoting_a_key_from_a_file_escapes_it(tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    escaped = json.dumps(f"bad{ESCAPES}")  # YAML reads JSON's escapes in double quotes
    config.write_text(f"models: [control:render]\n{escaped}: 1\n")
    shown = glyphbench("run", "-c", str(config), "--dry-run")
    assert shown.returncode == 2
    assert_no_terminal_controls(shown.stderr)
    assert shown.stderr.decode().count("\n") == 1 and "bad\\u001b]0;PWNED" in shown.stderr.decode()


def test_a_raw_control_character_in_a_config_names_the_file(tmp_path: Path) -> None:
    config = tmp_path / "raw.yaml"
    config.write_text(f"models: [control:render]\nprompts: default{ESCAPES}\n")
    shown = glyphbench("run", "-c", str(config), "--dry-run")
    assert shown.returncode == 2
    assert_no_terminal_controls(shown.stderr)
    assert "raw.yaml: invalid YAML: unacceptable character #x001b" in shown.stderr.decode()


@pytest.mark.parametrize(
    "content, line, said",
    [
        # an unquoted comma: pandas took the first fields as an index and read "extra" as
        # the prompt and "more" as the text, silently
        ('prompt,text\nA "x",x,extra,more\nB,y\n', 2, "4 fields where the header has 2"),
        ('prompt,text\nB,y\n"C, ""q""","multi\nline"\nA,x,extra\n', 5, "3 fields"),
        ("prompt,text\nB\n", 2, "1 field where the header has 2; give every column a value"),
        ("prompt,text,text\nB,y,z\n", 1, "column 'text' appears twice in the header"),
        (b"prompt,text\nA,caf\xe9\n", 2, "not UTF-8 text (byte 6 of the line"),
    ],
    ids=["more fields", "after a quoted newline", "fewer fields", "repeated column", "latin-1"],
)
def test_a_malformed_csv_is_one_line_naming_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str | bytes, line: int, said: str
) -> None:
    """The row of a CSV pandas would shift, fill or rename is refused with its line, by the
    readers of every table (here: a run's prompts), before anything is written."""
    path = tmp_path / "prompts.csv"
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    out = tmp_path / "run"
    args = ["run", "-m", "control:render?size=32", "--prompts", f"csv:{path}", "--out", str(out)]
    code, err = run_cli(args, capsys)
    assert code == 2 and f"{path}:{line}: " in err and said in err, err
    assert err.count("\n") == 1 and not out.exists()


def test_a_well_formed_csv_reads_as_pandas_reads_it(tmp_path: Path) -> None:
    """Quoted commas, quotes, newlines, a byte-order mark, CRLF and blank lines pass."""
    import pandas as pd

    from glyphbench.core.io import read_table

    path = tmp_path / "ok.csv"
    text = 'prompt,text\r\n"A, b","say ""hi"""\r\n\r\n"multi\nline",x\r\n'
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    frame = read_table(path, text_columns=True)
    assert frame.to_dict("records") == [
        {"prompt": "A, b", "text": 'say "hi"'},
        {"prompt": "multi\nline", "text": "x"},
    ]
    assert frame.equals(pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig"))
