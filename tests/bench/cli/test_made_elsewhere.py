"""Items 1 and 9: ``images:`` runs score what is there, and refuse before writing
a folder that names nothing, a manifest that names nothing, or a selection whose images
are mostly missing."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import Result
from PIL import Image
from typer.testing import CliRunner

from glyphbench.cli.root import app
from glyphbench.core.errors import InputError
from glyphbench.prompts import select
from glyphbench.run.config import RunConfig
from glyphbench.run.made_elsewhere import check_files, files_choose_prompts, prompts_named_by_files
from glyphbench.run.operations import plan_run
from glyphbench.run.plan import plan_lines
from tests.helpers.cli_errors import glyphbench, one_line
from tests.helpers.runner_helper import register, write_prompts_csv

register()


def _folder(path: Path, names: list[str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for name in names:
        Image.new("RGB", (16, 16), "white").save(path / name)
    return path


def _in_process(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def test_only_a_config_without_a_selection_lets_the_files_choose(tmp_path: Path) -> None:
    folder = _folder(tmp_path / "made", ["p00.png"])
    bare = RunConfig.from_mapping({"models": [f"images:{folder}"]})
    assert files_choose_prompts(bare.models, bare.selection_given)
    for given in ({"prompts": "default"}, {"limit": 5}, {"where": "lang == 'en'"}):
        chosen = RunConfig.from_mapping({"models": [f"images:{folder}"], **given})
        assert not files_choose_prompts(chosen.models, chosen.selection_given), given
    sampled, batched = bare.with_overrides(sample=3), bare.with_overrides(batch_size=2)
    assert not files_choose_prompts(sampled.models, sampled.selection_given)
    assert files_choose_prompts(batched.models, batched.selection_given)  # not a selection
    drawn = RunConfig.from_mapping({"models": ["control:blank"]})
    assert not files_choose_prompts(drawn.models, drawn.selection_given)


def test_the_files_name_the_prompts_in_the_sources_order(tmp_path: Path) -> None:
    prompts = write_prompts_csv(tmp_path / "p.csv", 8)
    names = ["p05_s0_i0.png", "p01.png", "p03_s0.png", "p03_i1.png", "notes.png"]
    folder = _folder(tmp_path / "made", names)
    config = RunConfig.from_mapping({"models": [f"images:{folder}"], "ocr": "pixelocr"})
    chosen = prompts_named_by_files(config.models, f"csv:{prompts}")
    assert chosen.frame["prompt_id"].tolist() == ["p01", "p03", "p05"]
    assert chosen.meta["selection"] == {"named_by": ["images:made"]}
    nothing = _folder(tmp_path / "junk", ["notes.png", "zzz.png"])
    config = RunConfig.from_mapping({"models": [f"images:{nothing}"], "ocr": "pixelocr"})
    with pytest.raises(InputError, match=r"no file in .*junk names a prompt") as caught:
        prompts_named_by_files(config.models, f"csv:{prompts}")
    assert "2 files not used: notes.png, zzz.png" in str(caught.value)


def test_a_selection_whose_images_are_mostly_missing_is_refused_before_writing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    prompts = write_prompts_csv(tmp_path / "p.csv", 8)
    folder = _folder(tmp_path / "made", ["p00.png", "p01.png", "p02.png"])  # 3 of 8
    out = tmp_path / "run"
    args = ["run", "--models", f"images:{folder}", "--prompts", f"csv:{prompts}"]
    code, said = glyphbench([*args, "--ocr", "pixelocr", "--out", str(out)], capsys)
    line = one_line(said)
    assert code == 2
    assert "5 of 8 expected images have no file (3 found) for 8 prompts" in line
    assert "leave out --prompts to score the prompts the files name" in line
    assert not out.exists()
    plan = _in_process(*args, "--ocr", "pixelocr", "--out", str(out), "--dry-run")
    assert isinstance(plan.exception, InputError)  # the plan says so too
    assert "5 of 8 expected images have no file" in str(plan.exception)
    _folder(folder, ["p03.png", "p04.png"])  # 5 of 8: most are there, the rest are Missing rows
    done = _in_process(*args, "--ocr", "pixelocr", "--out", str(out), "--no-progress")
    assert done.exit_code == 0, done.output
    assert "images: 5 of 8 found" in done.output and "3 missing" in done.output


def test_check_files_counts_seeds_the_files_lack(tmp_path: Path) -> None:
    """No selection: the prompts are named, but seeds 0 and 1 expect twice the files."""
    prompts = write_prompts_csv(tmp_path / "p.csv", 4)
    folder = _folder(tmp_path / "made", ["p00_s0.png", "p01_s0.png"])
    config = RunConfig.from_mapping(
        {"models": [f"images:{folder}"], "ocr": "pixelocr", "seeds": [0, 1]}
    )
    chosen = prompts_named_by_files(config.models, f"csv:{prompts}")
    with pytest.raises(InputError, match="4 of 6 expected images") as caught:
        check_files(config.with_overrides(seeds=[0, 1, 2]), chosen)
    assert "give the --seeds and --images-per-prompt the files were made with" in str(caught.value)
    assert check_files(config, chosen) == {"images:made": {"found": 2, "missing": 2}}


def test_a_folder_or_manifest_naming_nothing_is_refused_by_the_plan_too(tmp_path: Path) -> None:
    """Item 9 (the run itself: tests/bench/cli/test_error_contract.py): the dry-run refuses as the
    run would, and a manifest naming no image of the run is refused like a folder."""
    prompts = write_prompts_csv(tmp_path / "p.csv", 4)
    folder = _folder(tmp_path / "made", ["cat.png", "dog.jpg"])
    args = ["run", "--models", f"images:{folder}", "--prompts", f"csv:{prompts}"]
    plan = _in_process(*args, "--ocr", "pixelocr", "--out", str(tmp_path / "b"), "--dry-run")
    assert isinstance(plan.exception, InputError), plan.output
    assert "2 files not used: cat.png, dog.jpg" in str(plan.exception)
    manifest = tmp_path / "list.csv"
    manifest.write_text("prompt_id,path\nq1,cat.png\n")
    args[2] = f"images:{manifest}"
    listed = _in_process(*args, "--ocr", "pixelocr", "--out", str(tmp_path / "c"))
    assert isinstance(listed.exception, InputError), listed.output
    assert "no row of" in str(listed.exception) and "1 rows not used" in str(listed.exception)
    assert not any((tmp_path / name).exists() for name in "bc")


def test_the_plan_says_which_prompts_the_files_chose(tmp_path: Path) -> None:
    prompts = write_prompts_csv(tmp_path / "p.csv", 6)
    folder = _folder(tmp_path / "made", ["p02.png", "p04.png"])
    config = RunConfig.from_mapping(
        {"models": [f"images:{folder}"], "ocr": "pixelocr", "out": str(tmp_path / "run")}
    )
    chosen = prompts_named_by_files(config.models, f"csv:{prompts}")
    text = "\n".join(plan_lines(plan_run(config, prompt_set=chosen)))
    assert "prompts:  2 from csv:" in text
    assert "those the files of images:made name (no --prompts, --where" in text
    assert select(f"csv:{prompts}").frame["prompt_id"].size == 6  # the source itself is whole
