"""A run's ``where`` (config key or ``--where``) is checked when the config loads, before a dry
run plans or a run writes anything: pandas would run any code the expression names."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli_errors import glyphbench, one_line


def _csv(folder: Path) -> Path:
    csv = folder / "ok.csv"
    csv.write_text('prompt,text\n"a sign ""hi""",hi\n', encoding="utf-8")
    return csv


@pytest.mark.parametrize("nested", [False, True])
def test_a_run_config_where_is_refused_at_load_even_in_a_dry_run(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], nested: bool
) -> None:
    csv = _csv(tmp_path)
    marker = tmp_path / "PWNED3"
    where = f"text.str.len() > @pd.io.common.os.system('id > {marker}')"
    prompts = f"{{source: 'csv:{csv}', where: \"{where}\"}}" if nested else f"'csv:{csv}'"
    config = tmp_path / "evil.yaml"
    config.write_text(
        f"prompts: {prompts}\nmodels: [control:render]\nout: {tmp_path / 'o'}\n"
        + ("" if nested else f'where: "{where}"\n'),
        encoding="utf-8",
    )
    code, err = glyphbench(["run", "--config", config, "--dry-run"], capsys)
    key = "prompts.where" if nested else "where"
    assert code == 2
    assert one_line(err).startswith(f"error: {config} [{key}]: '@' (a reference")
    assert not marker.exists() and not (tmp_path / "o").exists()


def test_a_run_where_flag_is_refused_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = _csv(tmp_path)
    args = ["run", "--prompts", f"csv:{csv}", "-m", "control:render", "--out", tmp_path / "o"]
    code, err = glyphbench([*args, "--where", "text.__class__ == 1", "--dry-run"], capsys)
    assert code == 2 and "'text.__class__' is not allowed" in one_line(err)
    assert not (tmp_path / "o").exists()


def test_a_run_config_where_with_a_runaway_pattern_is_refused_at_load(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = _csv(tmp_path)
    config = tmp_path / "slow.yaml"
    config.write_text(
        f"prompts: 'csv:{csv}'\nmodels: [control:render]\nout: {tmp_path / 'o'}\n"
        "where: \"text.str.contains('(a|aa)+$')\"\n",
        encoding="utf-8",
    )
    code, err = glyphbench(["run", "--config", config, "--dry-run"], capsys)
    line = one_line(err)
    assert code == 2
    assert line.startswith(f"error: {config} [where]: the pattern '(a|aa)+$' repeats a choice")
    assert "a filter may use only" not in line  # the pattern's own fix, not the list of forms
    assert not (tmp_path / "o").exists()
