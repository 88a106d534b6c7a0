"""Nothing read or written outside its folder: a path a file names stays inside the folder
it belongs to (docs/reliability.md, "Paths named by files").

Anyone who sends a run folder can write its tables (and rewrite a table's checksum to
match), so each command that reads, copies or links a file a table, manifest or
metadata file names is given ``../planted.png`` (and a link to a folder outside) and
must refuse it in one line naming the row, exit 2, with nothing written anywhere.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest

from glyphbench.core.errors import InputError
from glyphbench.engine.folder import RunFolder
from glyphbench.run.config import RunConfig
from glyphbench.run.operations import run_benchmark
from glyphbench.run.results import RESULTS
from tests.helpers.cli_runs import run_cli
from tests.helpers.paths import REPO_ROOT
from tests.helpers.runner_helper import prompt_set, register, write_prompts_csv

register()

ESCAPE = "../planted.png"


def generate(out: Path, *, read_later: bool = False) -> pd.DataFrame:
    config = RunConfig.from_mapping(
        {"models": ["control:render?size=64"], "batch_size": 4, "seeds": [0],
         "ocr": "pixelocr", "out": str(out)}
    )  # fmt: skip
    run_benchmark(config, prompt_set=prompt_set(4), progress=False, read_later=read_later)
    return pd.read_parquet(out / RESULTS)


@pytest.fixture(scope="module")
def made(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("contained") / "run"
    generate(out)
    return out


@pytest.fixture
def run(made: Path, tmp_path: Path) -> Path:
    """A fresh copy of the run, two levels down (``../`` lands in a folder of the test's)."""
    copy = tmp_path / "sent" / "run"
    shutil.copytree(made, copy)
    return copy


def plant(run: Path, name: str, rows: list[int] | None = None) -> Path:
    """Rewrite the results table's ``image_path`` (row 2, or ``rows``) to ``name``, with
    a checksum that matches: what anyone sending the folder can do. Places a copy of
    the row's own image where ``name`` leads, so its SHA-256 matches too."""
    table = pd.read_parquet(run / RESULTS)
    rows = [1] if rows is None else rows
    for row in rows:
        source = run / str(table.at[row, "image_path"])
        target = (run / name).resolve()
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)
        table.at[row, "image_path"] = name
    RunFolder(run).write_table(table, RESULTS)  # results.parquet.sha256 rewritten to match
    return (run / name).resolve()


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (outside the ``.locks`` the commands take), by path."""
    return {
        str(path.relative_to(folder)): path.read_bytes()
        for path in sorted(folder.rglob("*"))
        if path.is_file() and ".locks" not in path.parts
    }


def refused(code: int, err: str, *words: str) -> None:
    """Exit 2 and one error line (progress lines of a report may come before it)."""
    errors = [line for line in err.splitlines() if line.startswith("error:")]
    assert code == 2, err
    assert len(errors) == 1 and "Traceback" not in err, err
    assert "leads outside" in errors[0], err
    for word in words:
        assert word in errors[0], err


def test_export_of_a_row_naming_a_file_outside_writes_nothing_outside(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    planted = plant(run, ESCAPE)
    out = run.parent / "exports" / "out"  # OUT/../planted.png would be run.parent/exports
    code, err = run_cli(["export", str(run), "--hf-dataset", str(out)], capsys)
    refused(code, err, "[row 2]", ESCAPE, "results.parquet")
    assert not (out.parent / "planted.png").exists() and not out.exists()
    assert sorted(p.name for p in run.parent.iterdir()) == ["planted.png", "run"]
    assert planted.is_file()


def test_export_through_a_linked_folder_inside_the_run_is_refused(
    run: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A link inside the run to a folder outside: the depth is the sender's choice."""
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (run / "images" / "deep").symlink_to(outside, target_is_directory=True)
    plant(run, "images/deep/planted.png")
    out = tmp_path / "out"
    code, err = run_cli(["export", str(run), "--hf-dataset", str(out)], capsys)
    refused(code, err, "[row 2]", "images/deep/planted.png")
    assert not out.exists() and [p.name for p in outside.iterdir()] == ["planted.png"]


def test_report_refuses_a_table_naming_a_file_outside(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plant(run, ESCAPE, rows=[0, 1, 2, 3])  # every row: whichever the gallery shows
    out = run.parent / "report"
    code, err = run_cli(["report", str(run), "--out", str(out), "--n-boot", "20"], capsys)
    refused(code, err, ESCAPE)
    assert not out.exists() and not (run / "report").exists()


def test_human_sample_refuses_a_row_naming_a_file_outside(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plant(run, ESCAPE)
    study = run.parent / "study"
    code, err = run_cli(["human", "sample", str(run), "--out", str(study), "--n", "4"], capsys)
    refused(code, err, "[row 2]", ESCAPE)
    assert not study.exists()


def test_a_study_whose_manifest_names_a_file_outside_is_refused(tmp_path: Path) -> None:
    """The rating app would show (and serve) the file a study's manifest names."""
    import sys

    sys.path.insert(0, str(REPO_ROOT))
    from glyphbench.core.io import write_table
    from glyphbench.human_eval.study import MANIFEST, create_study, load_study
    from tests.helpers.human_fixtures import make_run

    run = make_run(tmp_path / "run", image_size=32)
    study = create_study([run], tmp_path / "study", n=9, min_per_cell=1, progress=False)
    manifest = pd.read_parquet(study.folder / MANIFEST)
    manifest.at[3, "file"] = "../../secret.png"
    write_table(manifest, study.folder / MANIFEST)
    with pytest.raises(InputError, match=r"\[row 4\]: file '../../secret.png' leads outside"):
        load_study(study.folder)


def test_merge_refuses_a_part_file_naming_a_file_outside(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = RunFolder(run)
    rows = pd.read_parquet(run / RESULTS).head(1)
    rows["image_path"] = ESCAPE
    folder.write_part(rows, "shard-0-of-1", "control_render_size_64")  # a newer row
    before = snapshot(run)
    code, err = run_cli(["merge", str(run)], capsys)
    refused(code, err, ESCAPE, "prompt p00 seed 0 sample 0", "parts")
    assert snapshot(run) == before  # table, checksum and run.json as they were


def test_read_refuses_an_unread_row_naming_a_file_outside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "sent" / "run"
    generate(run, read_later=True)
    folder = RunFolder(run)
    rows = pd.read_parquet(run / RESULTS).head(1)
    shutil.copyfile(run / str(rows.at[0, "image_path"]), run.parent / "planted.png")
    rows["image_path"] = ESCAPE
    folder.write_part(rows, "shard-0-of-1", "control_render_size_64")
    before = snapshot(run)
    code, err = run_cli(["read", str(run), "--read-workers", "0", "--no-progress"], capsys)
    refused(code, err, ESCAPE)
    assert snapshot(run) == before and not (run / "readings").exists()


def test_rescore_refuses_a_row_naming_a_file_outside(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plant(run, ESCAPE)
    shutil.rmtree(run / "parts")  # the table is all there is: rescore reads its rows
    before = snapshot(run)
    code, err = run_cli(["rescore", str(run), "--ocr", "pixelocr", "--no-progress"], capsys)
    refused(code, err, "[row 2]", ESCAPE)
    assert snapshot(run) == before


def test_vae_eval_refuses_metadata_naming_a_file_outside(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    images = tmp_path / "set"
    images.mkdir()
    from PIL import Image

    Image.new("RGB", (64, 32), "white").save(images / "a.png")
    Image.new("RGB", (64, 32), "white").save(tmp_path / "planted.png")
    lines = [{"file": "a.png", "text": "A"}, {"file": ESCAPE, "text": "B"}]
    (images / "metadata.jsonl").write_text("\n".join(map(json.dumps, lines)) + "\n")
    out = tmp_path / "vae"
    code, err = run_cli(
        ["vae-eval", "--images", str(images), "--vae", "identity", "--ocr", "pixelocr",
         "--out", str(out)],
        capsys,
    )  # fmt: skip
    refused(code, err, ESCAPE, "metadata.jsonl")
    assert not out.exists()


def test_an_images_manifest_or_folder_naming_a_file_outside_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], made: Path
) -> None:
    image = next((made / "images").rglob("*.png"))
    shutil.copyfile(image, tmp_path / "planted.png")
    sent = tmp_path / "sent"
    sent.mkdir()
    prompts = write_prompts_csv(tmp_path / "prompts.csv", 2)
    first = pd.read_csv(prompts)["prompt_id"][0]
    (sent / "list.csv").write_text(f"prompt_id,path\n{first},{ESCAPE}\n")
    out = tmp_path / "run"
    args = ["run", "--ocr", "pixelocr", "--seeds", "0", "--out", str(out), "--no-progress",
            "--prompts", f"csv:{prompts}"]  # fmt: skip
    code, err = run_cli([*args, "--models", f"images:{sent / 'list.csv'}"], capsys)
    refused(code, err, "[line 2]", ESCAPE)
    assert not out.exists()
    (sent / f"{first}.png").symlink_to(tmp_path / "planted.png")  # a linked file in a folder
    (sent / "list.csv").unlink()
    code, err = run_cli([*args, "--models", f"images:{sent}"], capsys)
    refused(code, err, f"{first}.png")
    assert not out.exists()


def test_a_reader_view_is_never_written_through_a_link_outside(tmp_path: Path, made: Path) -> None:
    from glyphbench.run.reading_store import write_reader_view

    run = tmp_path / "run"
    shutil.copytree(made, run)
    outside = tmp_path / "outside"
    outside.mkdir()
    (run / "readers").symlink_to(outside, target_is_directory=True)
    with pytest.raises(InputError, match="leads outside"):
        write_reader_view(run, "pixelocr")
    assert list(outside.iterdir()) == []


def test_a_run_resumed_in_a_folder_whose_images_link_outside_writes_nothing_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A sent run folder whose ``images/<model>`` links elsewhere: resuming it there
    would write the images through the link."""
    run = tmp_path / "run"
    generate(run)
    model_folder = next((run / "images").iterdir())
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.rmtree(model_folder)
    model_folder.symlink_to(outside, target_is_directory=True)
    shutil.rmtree(run / "parts")  # every image to make again
    (run / RESULTS).unlink()
    config = RunConfig.from_mapping(
        {"models": ["control:render?size=64"], "batch_size": 4, "seeds": [0],
         "ocr": "pixelocr", "out": str(run)}
    )  # fmt: skip
    with pytest.raises(InputError, match=r"folder 'images/control_render_size=64' leads outside"):
        run_benchmark(config, prompt_set=prompt_set(4), progress=False)
    assert list(outside.iterdir()) == []


def test_a_real_image_manifest_naming_a_file_outside_is_refused(tmp_path: Path) -> None:
    from PIL import Image

    from glyphbench.calibration.real_set import MANIFEST_COLUMNS, load_real_set

    Image.new("RGB", (8, 8)).save(tmp_path / "planted.png")
    sent = tmp_path / "sent"
    sent.mkdir()
    row = {column: "x" for column in MANIFEST_COLUMNS} | {"file": ESCAPE}
    pd.DataFrame([row]).to_csv(sent / "manifest.csv", index=False)
    with pytest.raises(InputError, match=r"manifest.csv \[line 2\]: file '../planted.png' leads"):
        load_real_set(sent / "manifest.csv")
