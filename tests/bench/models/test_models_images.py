"""The ``images:`` model kind: score a folder or a manifest of images made elsewhere."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from glyphbench.core.errors import InputError
from glyphbench.core.schema import failed_mask
from glyphbench.models import get_model
from glyphbench.run.config import RunConfig
from glyphbench.run.operations import run_benchmark
from glyphbench.scoring.frame import text_metrics
from tests.helpers.runner_helper import PixelOCR, prompt_set, register

register()

KEY = ["prompt_id", "seed", "sample_index"]


def _run(tmp_path: Path, model: str, name: str, n: int = 4, reader: object = None, **changes):
    data = {"models": [model], "seeds": [0], "ocr": "pixelocr", "out": str(tmp_path / name)}
    data.update(changes)
    console = Console(file=io.StringIO(), width=400)
    result = run_benchmark(
        RunConfig.from_mapping(data),
        prompt_set=prompt_set(n),
        reader=reader if reader is not None else PixelOCR(),  # type: ignore[arg-type]
        progress=False,
        console=console,
    )
    return result, console.file.getvalue()  # type: ignore[attr-defined]


def _image_folder(run_dir: Path) -> Path:
    (folder,) = (run_dir / "images").iterdir()
    return folder


@pytest.mark.slow
def test_scoring_a_run_folder_reproduces_its_scores_row_for_row(tmp_path: Path) -> None:
    """control:render, then its images as images:, same prompts."""
    from glyphbench.readers import get_reader

    reader = get_reader("tesseract")
    changes = {"ocr": "tesseract", "seeds": [0, 3], "images_per_prompt": 2}
    made, _ = _run(tmp_path, "control:render?size=192", "made", n=3, reader=reader, **changes)
    folder = _image_folder(made.out)
    scored, said = _run(tmp_path, f"images:{folder}", "scored", n=3, reader=reader, **changes)
    assert "12 of 12 found" in said and "nothing missing" in said
    columns = ["ocr_text", *(metric.name for metric in text_metrics())]
    before = made.results.sort_values(KEY).reset_index(drop=True)
    after = scored.results.sort_values(KEY).reset_index(drop=True)
    assert len(after) == 12 and not failed_mask(after).any()
    assert before["ocr_text"].str.strip().str.len().gt(0).any()  # tesseract read something
    pd.testing.assert_frame_equal(before[KEY + columns], after[KEY + columns])
    assert (after["model"] == f"images:{folder.name}").all() and not after["is_control"].any()


def test_missing_unreadable_and_extra_images_are_reported_once(tmp_path: Path) -> None:
    made, _ = _run(tmp_path, "control:render?size=64", "made", n=4)
    folder = _image_folder(made.out)
    (folder / "p00_s0_i0.png").unlink()
    (folder / "p01_s0_i0.png").write_bytes(b"not a png")
    (folder / "stray.png").write_bytes(b"x")
    (folder / "notes.txt").write_text("ignored: not an image suffix")
    scored, said = _run(tmp_path, f"images:{folder}", "scored", n=4)
    rows = scored.results.set_index("prompt_id")
    assert rows.at["p00", "error"].startswith("Missing: no image for p00 seed 0 index 0")
    assert rows.at["p01", "error"].startswith("Unreadable: p01_s0_i0.png")
    assert not failed_mask(rows.loc[["p02", "p03"]]).any()
    summary = [line for line in said.splitlines() if line.startswith("images:")]
    assert len(summary) == 1, said
    assert "3 of 4 found" in summary[0] and "1 missing: p00 seed 0 index 0" in summary[0]
    assert (
        "1 unreadable: p01_s0_i0.png" in summary[0]
        and "1 not used (no image of this run by that name): stray.png" in summary[0]
    )
    manifest = json.loads((scored.out / "run.json").read_text())
    facts = json.dumps(manifest)
    assert '"extra": ["stray.png"]' in facts and "p00 seed 0 index 0" in facts
    assert '"counts": {"missing": 1, "unreadable": 1, "extra": 1}' in facts


def test_short_names_other_suffixes_and_specific_names_first(tmp_path: Path) -> None:
    made, _ = _run(tmp_path, "control:render?size=64", "made", n=3)
    source = _image_folder(made.out)
    folder = tmp_path / "mine"
    folder.mkdir()
    from PIL import Image

    with Image.open(source / "p00_s0_i0.png") as image:
        image.convert("RGB").save(folder / "p00.webp", lossless=True)
    (folder / "p01_i0.png").write_bytes((source / "p01_s0_i0.png").read_bytes())
    (folder / "p02_s0_i0.png").write_bytes((source / "p02_s0_i0.png").read_bytes())
    (folder / "p02.png").write_bytes((source / "p00_s0_i0.png").read_bytes())  # less specific
    scored, said = _run(tmp_path, f"images:{folder}", "scored", n=3)
    assert not failed_mask(scored.results).any()
    assert scored.results["ocr_text"].tolist() == made.results["ocr_text"].tolist()
    assert "1 not used (no image of this run by that name): p02.png" in said


def test_manifest_csv_with_seeds_relative_paths_and_repeats(tmp_path: Path) -> None:
    made, _ = _run(tmp_path, "control:render?size=64", "made", n=2, seeds=[5], images_per_prompt=2)
    folder = _image_folder(made.out)
    manifest = tmp_path / "list.csv"
    rows = [
        f"p00,{folder / 'p00_s5_i0.png'},5",
        f"p00,{folder / 'p00_s5_i1.png'},5",  # no sample_index: the next one, 1
        f"p01,{Path('made') / 'images' / folder.name / 'p01_s5_i0.png'},",  # relative, first seed
        f"p09,{folder / 'p01_s5_i1.png'},5",  # a prompt the run does not have
    ]
    manifest.write_text("prompt_id,path,seed\n" + "\n".join(rows) + "\n")
    scored, said = _run(
        tmp_path, f"images:{manifest}", "scored", n=2, seeds=[5], images_per_prompt=2, device="cpu"
    )  # a --device is accepted (and ignored), as by every model
    table = scored.results.set_index(["prompt_id", "sample_index"])
    assert not failed_mask(table.drop(index=[("p01", 1)])).any()
    assert table.at[("p01", 1), "error"].startswith("Missing: no image for p01 seed 5 index 1")
    expected = made.results.set_index(["prompt_id", "sample_index"])["ocr_text"]
    assert table.at[("p00", 1), "ocr_text"] == expected[("p00", 1)]
    assert "p01_s5_i1.png (p09 seed 5 index 0)" in said and scored.results["model"].iloc[0] == (
        "images:list.csv"
    )


def test_bad_sources_are_one_line_errors(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no image folder or CSV manifest"):
        get_model(f"images:{tmp_path / 'nowhere'}")
    (tmp_path / "a.txt").write_text("x")
    with pytest.raises(InputError, match=r"folder or a \.csv manifest"):
        get_model(f"images:{tmp_path / 'a.txt'}")
    bad = tmp_path / "bad.csv"
    bad.write_text("prompt,file\np00,x.png\n")
    with pytest.raises(InputError, match="missing column 'prompt_id'"):  # before writing
        _run(tmp_path, f"images:{bad}", "bad", n=1)
    assert not (tmp_path / "bad").exists()
    with pytest.raises(InputError, match="needs a target"):
        get_model("images")


@pytest.mark.slow
def test_a_folder_without_a_prompt_selection_scores_the_prompts_its_files_name(
    tmp_path: Path,
) -> None:
    """10 files named by prompts of the 507k-prompt default set.
    Without --prompts the plan and the run take the 10 prompts the files name; with
    --prompts default (507,768 images without a file) the run is refused before writing."""
    from PIL import Image
    from typer.testing import CliRunner

    from glyphbench.cli.root import app
    from glyphbench.prompts import select

    frame = select("default?lang=all", limit=10).frame
    folder = tmp_path / "made"
    folder.mkdir()
    for k, prompt_id in enumerate(frame["prompt_id"]):
        Image.new("RGB", (8, 8)).save(folder / f"{prompt_id}{'_s0' if k % 2 else ''}.png")
    runner = CliRunner()
    base = ["run", "--models", f"images:{folder}", "--ocr", "rapidocr"]
    plan = runner.invoke(app, [*base, "--dry-run", "--out", str(tmp_path / "run")])
    assert plan.exit_code == 0, plan.output
    assert "prompts:  10 from default?lang=all: those the files of images:made name" in plan.output
    assert "10 to make" in plan.output and "without an image file" not in plan.output
    refused = runner.invoke(app, [*base, "--prompts", "default", "--out", str(tmp_path / "all")])
    assert isinstance(refused.exception, InputError), refused.output  # the CLI: exit 2
    problem = str(refused.exception)
    assert "507768 of 507778 expected images have no file (10 found)" in problem
    assert "leave out --prompts to score the prompts the files name" in problem
    assert not (tmp_path / "all").exists()
