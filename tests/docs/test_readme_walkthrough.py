"""The README's walkthroughs, run command by command as a new user would.

The commands are read from README.md itself, so the README cannot drift from the CLI.
`human serve` (a server waiting for people) is replaced by four simulated raters on the
serving machine (address 127.0.0.1, as browsers of a local pilot) who answer through the
same rating service the app calls, as people would: text correct where the reader found
it exact, one rater careless.
The images-made-elsewhere path runs its shell lines (`mkdir`, `cp`) in a shell,
and docs/models.md must show the same lines.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from glyphbench.cli.root import app
from tests.helpers.paths import REPO_ROOT

README = REPO_ROOT / "README.md"
MODELS_DOC = README.parent / "docs" / "models.md"
ELSEWHERE = "Images made elsewhere, step by step"


def walkthrough() -> list[list[str]]:
    """The `glyphbench ...` commands of the README block that starts the study from the demo."""
    text = README.read_text(encoding="utf-8")
    block = text.split("A study from the demo", 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    commands = []
    for line in block.splitlines():
        command = re.sub(r"\s+#.*$", "", line).strip()
        if command.startswith("glyphbench "):
            commands.append(shlex.split(command)[1:])
    return commands


def block_lines(path: Path, marker: str) -> list[str]:
    """The lines of the first ```bash block after ``marker`` in ``path``, comments cut."""
    text = path.read_text(encoding="utf-8")
    block = text.split(marker, 1)[1].split("```bash", 1)[1].split("```", 1)[0]
    lines = [re.sub(r"\s+#.*$", "", line).strip() for line in block.splitlines()]
    return [line for line in lines if line and not line.startswith("#")]


def rate_as_local_pilot(study: Path, raters: int = 4) -> None:
    from glyphbench.human_eval.service import RatingService
    from glyphbench.human_eval.study import load_study

    service = RatingService(load_study(study))
    manifest = service.study.manifest.set_index("image_id")
    # the pilot's browsers on one machine start together: their batches are open at once
    # (4 x 32 claims: over the per-address cap of a quarter of the study's 300 ratings)
    views = [service.start(True, client="127.0.0.1") for _ in range(raters)]
    for rater, view in enumerate(views):
        assert view.screen == "item", view.message
        for k in range(200):
            if view.screen != "item":
                break
            row = manifest.loc[view.image_id]
            exact = bool(row["exact_match"] == 1)
            legible = exact if rater != 2 or k % 5 else not exact  # the third errs 1 in 5
            answers = {
                "prompt_following": "No" if row["model"] == "control:blank" else "Yes",
                "text_accuracy": "Yes" if legible else "No",
            }
            view = service.submit(view.code, view.image_id, answers)
        assert view.screen == "review"  # the whole batch rated


@pytest.mark.slow
def test_readme_human_walkthrough_runs_command_by_command(tmp_path: Path) -> None:
    commands = walkthrough()
    assert [c[:2] for c in commands][:2] == [["demo", "--out"], ["human", "sample"]]
    runner = CliRunner()
    here = Path.cwd()
    os.chdir(tmp_path)
    try:
        for args in commands:
            if args[:2] == ["human", "serve"]:
                rate_as_local_pilot(Path(args[2]))
                continue
            result = runner.invoke(app, args)
            assert result.exit_code == 0, f"glyphbench {' '.join(args)}:\n{result.output}"
    finally:
        os.chdir(here)
    assert (tmp_path / "study" / "report" / "index.html").is_file()
    assert (tmp_path / "study" / "export" / "ratings.csv").is_file()
    # the analysis is shown, not n/a: the sample spans the quality the controls set
    import pandas as pd

    manifest = pd.read_parquet(tmp_path / "study" / "manifest.parquet")
    sampled = manifest[~manifest["is_gold"]]
    assert sampled["model"].nunique() == 5 and manifest["is_gold"].sum() > 0
    alignment = pd.read_csv(tmp_path / "study" / "analysis" / "alignment.csv")
    overall = alignment[alignment["model"] == "(all)"].set_index("metric")
    assert overall.loc["ned", "roc_auc"] > 0.7 and overall.loc["algorithm1", "roc_auc"] > 0.7
    ranking = pd.read_csv(tmp_path / "study" / "analysis" / "ranking.csv")
    assert ranking["human_score"].nunique() > 2  # people tell the models apart


@pytest.mark.slow
def test_readme_images_made_elsewhere_runs_as_written(tmp_path: Path) -> None:
    """Select -> make elsewhere -> name -> score, on 10 images: 10 scored rows
    each way (the prompts the files name; the selection file), none failed."""
    import pandas as pd

    from glyphbench.core.schema import failed_mask

    lines = block_lines(README, ELSEWHERE)
    assert lines == block_lines(MODELS_DOC, ELSEWHERE)  # the two docs show one path
    assert lines[0].split()[:3] == ["glyphbench", "prompts", "select"]
    runner = CliRunner()
    here = Path.cwd()
    os.chdir(tmp_path)
    try:
        for line in lines:
            if line.startswith("glyphbench "):
                result = runner.invoke(app, shlex.split(line)[1:])
                assert result.exit_code == 0, f"{line}:\n{result.output}"
            else:  # the shell's part: mkdir, cp
                subprocess.run(line, shell=True, check=True, cwd=tmp_path, timeout=60)
    finally:
        os.chdir(here)
    assert len(list((tmp_path / "out" / "my-model").glob("*.png"))) == 10
    chosen = pd.read_csv(tmp_path / "my-prompts.csv")["prompt_id"].astype(str)
    for run in ("my-model", "my-model-csv"):
        rows = pd.read_parquet(tmp_path / "runs" / run / "results.parquet")
        assert len(rows) == 10 and not failed_mask(rows).any(), run
        assert sorted(rows["prompt_id"].astype(str)) == sorted(chosen)
        assert (rows["model"] == "images:my-model").all()
