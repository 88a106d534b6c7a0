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
