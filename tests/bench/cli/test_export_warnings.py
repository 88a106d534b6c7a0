"""``glyphbench export`` of a run that is not whole says so, on stderr and in the card, as
``report`` does: an exported dataset outlives the terminal it was made in."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli_runs import invoke_cli
from tests.helpers.report_fixtures import build_run


def test_an_unfinished_run_is_exported_with_a_warning_in_the_card(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = build_run(tmp_path / "run", n_prompts=4, models={"m": 0.1})
    manifest = run / "run.json"
    meta = json.loads(manifest.read_text(encoding="utf-8"))
    manifest.write_text(json.dumps({**meta, "rows": 4, "expected_rows": 12}), encoding="utf-8")
    out = tmp_path / "export"
    code, _, err = invoke_cli(["export", run, "--hf-dataset", out], capsys)
    assert code == 0, err
    assert "warning: " in err and "incomplete run: 4 of 12 rows made" in err
    card = (out / "README.md").read_text(encoding="utf-8")
    assert "**Warning**:" in card and "incomplete run: 4 of 12 rows made" in card
    finished = tmp_path / "finished"
    manifest.write_text(json.dumps({**meta, "rows": 12, "expected_rows": 12}), encoding="utf-8")
    code, _, err = invoke_cli(["export", run, "--hf-dataset", finished], capsys)
    assert code == 0 and "warning" not in err
    assert "Warning" not in (finished / "README.md").read_text(encoding="utf-8")


def test_the_card_shows_hostile_names_as_text_and_refuses_a_licence_that_is_no_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A model name with a backtick and a line break left its code span (a raw ``<script>``,
    a heading of its own); ``--license`` with a line break added keys to the YAML header."""
    import yaml

    hostile = "m`\n# Injected heading <script>alert(1)</script>"
    run = build_run(tmp_path / "run", n_prompts=3, models={hostile: 0.1, "n": 0.2})
    code, _, err = invoke_cli(
        ["export", run, "--hf-dataset", tmp_path / "x", "--license", "mit\nevil: yes"], capsys
    )
    assert code == 2 and err.startswith("error: --license: 'mit\\nevil: yes' is not a licence id")
    assert not (tmp_path / "x").exists()
    code, _, err = invoke_cli(["export", run, "--hf-dataset", tmp_path / "out"], capsys)
    assert code == 0, err
    card = (tmp_path / "out" / "README.md").read_text(encoding="utf-8")
    header = yaml.safe_load(card.split("---\n")[1])
    assert set(header) == {"pretty_name", "license", "task_categories", "tags"}
    assert "<script" not in card and "\n# Injected" not in card
    assert "| m\\` \\# Injected heading &lt;script&gt;alert(1)&lt;/script&gt; | 3 |" in card


def test_a_push_that_cannot_reach_the_hub_keeps_the_export_and_the_same_command_retries(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A failed upload exited 2 ("user error, nothing written") with the folder written, and
    the same command was then refused: "the export folder exists and is not empty"."""
    pytest.importorskip("huggingface_hub")
    import glyphbench.cli.export as export

    class Offline:
        def create_repo(self, *args: object, **kwargs: object) -> None:
            raise ConnectionError("no route to host")

    monkeypatch.setattr(export, "hub_api", lambda repo: Offline())
    run = build_run(tmp_path / "run", n_prompts=3, models={"m": 0.1})
    out = tmp_path / "export"
    args = ["export", run, "--hf-dataset", out, "--push", "me/results"]
    for _ in range(2):
        code, _, err = invoke_cli(args, capsys)
        assert code == 1 and "cannot reach the hub (no route to host)" in err, err
        assert "run the same command again" in err and (out / "metadata.parquet").is_file()
    (out / "notes.txt").write_text("mine", encoding="utf-8")  # not an export's: kept
    code, _, err = invoke_cli(args, capsys)
    assert code == 2 and "notes.txt" in err and (out / "notes.txt").is_file(), err
