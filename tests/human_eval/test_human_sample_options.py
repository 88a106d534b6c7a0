"""`glyphbench human sample`: every option checked before anything is written, --out a new
folder, the study written all or nothing, and the batches it takes to fill."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from glyphbench.cli.root import app
from glyphbench.core.errors import InputError
from glyphbench.human_eval import study as study_module
from glyphbench.human_eval.sampling import batches_to_fill
from glyphbench.human_eval.study import create_study, load_study
from tests.helpers.human_fixtures import make_run

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("sample_options") / "run", per_cell=2, image_size=32)


def sample(run: Path, out: Path, **options: Any) -> None:
    settings: dict[str, Any] = {"n": 9, "min_per_cell": 1, "progress": False, **options}
    create_study([run], out, **settings)


def test_a_bad_option_is_one_line_naming_it_exit_2_and_nothing_written(
    run: Path, tmp_path: Path
) -> None:
    # the hostile walk's command: it wrote study.json, the manifest and 30 images, then
    # named a study.json the user never wrote; a rerun with a good value was refused
    out = tmp_path / "s6"
    done = subprocess.run(
        [sys.executable, "-m", "glyphbench", "human", "sample", str(run), "--out", str(out),
         "--include-controls", "--cells", "model", "--n", "10", "--min-per-cell", "1",
         "--gold-per-batch", "-1"],
        capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(REPO)),
    )  # fmt: skip
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == "error: --gold-per-batch -1: must be 0 or more"
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no study, no hidden folder
    sample(run, out, gold_per_batch=2)  # the corrected command goes through


@pytest.mark.parametrize(
    ("option", "value", "said"),
    [
        ("seed", -1, "--seed -1: must be 0 or more"),  # was numpy's traceback
        ("n_gold", -1, "--gold -1: must be 0 or more"),  # was silently 0
        ("gold_per_batch", -1, "--gold-per-batch -1: must be 0 or more"),
        ("n", 0, "--n 0: must be 1 or more"),
        ("min_per_cell", -2, "--min-per-cell -2: must be 0 or more"),
        ("raters_per_image", 0, "--raters-per-image 0: must be 1 or more"),
        ("batch_size", 0, "--batch-size 0: must be 1 or more"),
        ("overlap", 9, "--overlap 9: must be between 0 and --raters-per-image (3)"),
        ("scale", "stars", "--scale 'stars': unknown"),
    ],
)
def test_each_option_is_checked_first(
    run: Path, tmp_path: Path, option: str, value: object, said: str
) -> None:
    with pytest.raises(InputError) as refused:
        sample(run, tmp_path / "study", **{option: value})
    assert str(refused.value).startswith(said)
    assert not list(tmp_path.iterdir())


def test_out_must_be_a_new_or_empty_folder_never_a_run(run: Path, tmp_path: Path) -> None:
    before = sorted(p.name for p in run.iterdir())
    with pytest.raises(InputError, match="is a run folder") as refused:
        sample(run, run)  # the walk put study.json, the manifest and images beside the run's
    assert refused.value.source == str(run)
    assert sorted(p.name for p in run.iterdir()) == before
    mine = tmp_path / "notes"
    mine.mkdir()
    (mine / "todo.txt").write_text("mine")
    with pytest.raises(InputError, match=r"not empty \(todo.txt\)"):
        sample(run, mine)
    assert [p.name for p in mine.iterdir()] == ["todo.txt"]
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="not a folder"):
        sample(run, tmp_path / "file")
    empty = tmp_path / "empty"
    empty.mkdir()
    sample(run, empty)  # an empty folder is as good as a new one
    assert load_study(empty).manifest.shape[0] > 0
    with pytest.raises(InputError, match="already holds a study"):
        sample(run, empty)


@pytest.mark.parametrize("stop", [InputError("x", "disk full"), KeyboardInterrupt()])
def test_a_study_stopped_part_way_leaves_nothing(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stop: BaseException
) -> None:
    def stop_at_the_last_file(*args: Any) -> None:
        raise stop  # the images and the manifest written, study.json not yet

    monkeypatch.setattr(study_module, "write_json", stop_at_the_last_file)
    with pytest.raises(type(stop)):
        sample(run, tmp_path / "study")
    assert not list(tmp_path.iterdir())  # neither the study nor its hidden temporary folder
    monkeypatch.undo()
    sample(run, tmp_path / "study")  # and the same command works afterwards
    assert sorted(p.name for p in tmp_path.iterdir()) == ["study"]


@pytest.mark.parametrize(
    ("n", "k", "batch", "expected"),
    [
        (3, 3, 30, (3, 3)),  # was "about 0 batches of 30"
        (10, 3, 30, (3, 10)),  # was "about 1 batch": each image needs 3 different raters
        (40, 3, 30, (4, 30)),
        (60, 3, 30, (6, 30)),
        (1, 1, 30, (1, 1)),
    ],
)
def test_batches_to_fill_count_k_raters_per_image(
    n: int, k: int, batch: int, expected: tuple[int, int]
) -> None:
    assert batches_to_fill(n, k, batch) == expected


def test_sample_prints_the_batches_it_takes(run: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        ["human", "sample", str(run), "--out", str(tmp_path / "s"), "--cells", "model",
         "--n", "3", "--min-per-cell", "0"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "K=3; 3 batches of 3 images to fill" in result.output
