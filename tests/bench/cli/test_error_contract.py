"""Case 5: malformed input is one line naming the file (and line or key), exit 2.

Every case goes through the console entry point (:func:`glyphbench.cli.main`) in this
process, as a user's command would, and checks the whole of stderr.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.cli_errors import glyphbench, one_line
from tests.helpers.runner_helper import register, write_prompts_csv

register()


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from glyphbench.human_eval.study import create_study
    from tests.helpers.human_fixtures import make_run

    root = tmp_path_factory.mktemp("contract")
    run = make_run(root / "run", per_cell=2, image_size=32)
    create_study([run], root / "study", n=10, min_per_cell=1, n_gold=2, progress=False)
    return root / "study"


def copy_study(study: Path, to: Path) -> Path:
    import shutil

    shutil.copytree(study, to)
    return to


# ----------------------------------------------------------------- the benchmark commands
def test_config_that_is_not_utf8(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "run.yaml"
    config.write_bytes(b"models: [control:blank]\nout: caf\xe9\n")
    code, err = glyphbench(["run", "-c", config], capsys)
    assert code == 2 and f"{config}: not UTF-8" in one_line(err)


def test_out_that_is_a_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    csv = write_prompts_csv(tmp_path / "p.csv", 2)
    (tmp_path / "afile").write_text("x")
    args = ["run", "-m", "control:blank", "--ocr", "pixelocr", "--prompts", f"csv:{csv}"]
    code, err = glyphbench([*args, "--out", tmp_path / "afile"], capsys)
    assert code == 2 and f"{tmp_path / 'afile'}: exists and is not a folder" in one_line(err)


@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]])
def test_out_holding_someone_elses_files_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dry_run: list[str]
) -> None:
    """--out naming a folder of other files (a home or project folder by mistake): exit 2,
    naming an entry and the count, and nothing of a run written among them."""
    out = tmp_path / "home"
    (out / "photos" / ".thumbs").mkdir(parents=True)  # a folder of hidden files only: no one's
    (out / "notes.txt").write_text("mine")
    (out / "photos" / "cat.jpg").write_bytes(b"mine")
    (out / "empty").mkdir()
    csv = write_prompts_csv(tmp_path / "p.csv", 2)
    args = ["run", "-m", "control:blank", "--ocr", "pixelocr", "--prompts", f"csv:{csv}"]
    code, err = glyphbench([*args, "--out", out, *dry_run], capsys)
    assert code == 2
    assert one_line(err) == (
        f"error: {out / 'notes.txt'}: --out holds 2 entries no run wrote, and no run.json: "
        "the run would write its files among them; choose an empty or new --out"
    )
    assert sorted(p.name for p in out.iterdir()) == ["empty", "notes.txt", "photos"]
    assert sorted(p.name for p in (out / "photos").iterdir()) == [".thumbs", "cat.jpg"]


def test_out_holding_the_runs_own_config_and_prompts_is_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A config and its prompt file kept in the run's folder are what the run reads: the
    run goes ahead there, and resumes there."""
    out = tmp_path / "study"
    out.mkdir()
    csv = write_prompts_csv(out / "prompts.csv", 2)
    config = out / "study.yaml"
    config.write_text(f"models: [control:blank]\nprompts: csv:{csv}\nocr: pixelocr\nout: {out}\n")
    for _ in range(2):
        code, err = glyphbench(["run", "--config", config, "--no-progress"], capsys)
        assert code == 0, err
    assert (out / "run.json").is_file() and (out / "results.parquet").is_file()
    assert config.read_text().startswith("models: [control:blank]")


def test_out_holding_an_image_manifest_and_its_images_is_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An images: model's manifest kept in --out lists images beside it: they are what the
    run reads, not a stranger's files."""
    from PIL import Image

    out = tmp_path / "study"
    (out / "pics").mkdir(parents=True)
    csv = write_prompts_csv(out / "prompts.csv", 2)
    lines = ["prompt_id,seed,path"]
    for index in range(2):
        Image.new("RGB", (16, 16), "white").save(out / "pics" / f"{index}.png")
        lines.append(f"p{index:02d},0,pics/{index}.png")
    (out / "made.csv").write_text("\n".join(lines) + "\n")
    args = ["run", "-m", f"images:{out / 'made.csv'}", "--prompts", f"csv:{csv}"]
    code, err = glyphbench([*args, "--ocr", "pixelocr", "--out", out, "--no-progress"], capsys)
    assert code == 0, err
    assert (out / "run.json").is_file()


@pytest.mark.parametrize("images", ["metadata", "folder"])
def test_vae_eval_out_holding_its_own_images_is_used(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], images: str
) -> None:
    """The image set kept in --out (a folder, or a metadata file with the images beside it)
    is the evaluation's input: --dry-run and the run go ahead."""
    from PIL import Image

    out = tmp_path / "eval"
    folder = out / "set"
    folder.mkdir(parents=True)
    rows = []
    for index in range(2):
        Image.new("RGB", (64, 64), "white").save(folder / f"{index}.png")
        rows.append(json.dumps({"file": f"{index}.png", "text": f"word{index}"}))
    (folder / "metadata.jsonl").write_text("\n".join(rows) + "\n")
    given = folder / "metadata.jsonl" if images == "metadata" else folder
    args = ["vae-eval", "--vae", "identity", "--images", given, "--ocr", "pixelocr"]
    for dry_run in (["--dry-run"], []):
        code, err = glyphbench([*args, "--out", out, *dry_run], capsys)
        assert code == 0, err
    assert (out / "run.json").is_file()


@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]])
def test_vae_eval_out_holding_someone_elses_files_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dry_run: list[str]
) -> None:
    out = tmp_path / "project"
    out.mkdir()
    (out / "paper.tex").write_text("mine")
    args = ["vae-eval", "--vae", "identity", "--images", "default?size=64", "--limit", "2"]
    code, err = glyphbench([*args, "--ocr", "pixelocr", "--out", out, *dry_run], capsys)
    assert code == 2 and one_line(err).startswith(
        f"error: {out / 'paper.tex'}: --out holds 1 entry no vae-eval wrote, and no run.json"
    )
    assert [p.name for p in out.iterdir()] == ["paper.tex"]


@pytest.mark.parametrize(
    "content, problem",
    [("{not json", "malformed JSON"), ("[1, 2]", "expected a JSON object, got array")],
)
def test_corrupt_run_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str, problem: str
) -> None:
    (tmp_path / "run.json").write_text(content)
    for command in (["merge", tmp_path], ["rescore", tmp_path, "--scores-only"]):
        code, err = glyphbench(command, capsys)
        line = one_line(err)
        assert code == 2 and str(tmp_path / "run.json") in line and problem in line


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", "\xff"])
def test_damaged_run_json_is_the_same_line_in_every_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: str
) -> None:
    """report, export and human sample read run.json through one reader: one line, one fix."""
    from glyphbench.core.io import RUN_JSON_DAMAGED
    from tests.helpers.human_fixtures import make_run

    run = make_run(tmp_path / "run", per_cell=1, image_size=32)
    (run / "run.json").write_text(content, encoding="latin-1")
    commands = (
        ["report", run, "--out", tmp_path / "r"],
        ["export", run, "--hf-dataset", tmp_path / "e"],
        ["human", "sample", run, "--out", tmp_path / "s"],
    )
    lines = []
    for command in commands:
        code, err = glyphbench(command, capsys)
        assert code == 2
        lines.append(one_line(err))
    assert lines[0] == lines[1] == lines[2]
    assert lines[0].startswith(f"error: {run / 'run.json'}")
    assert lines[0].endswith(f"; {RUN_JSON_DAMAGED}")
    assert not [name for name in "res" if (tmp_path / name).exists()]


def test_jsonl_line_that_is_not_an_object(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pairs = tmp_path / "pairs.jsonl"
    pairs.write_text('{"expected": "a", "ocr": "a"}\n[1, 2]\n')
    code, err = glyphbench(["score", pairs, "--out", tmp_path / "o.csv"], capsys)
    assert code == 2 and f"{pairs}:2: expected a JSON object, got array" in one_line(err)


@pytest.mark.parametrize(
    "key, shown", [("/x", "[/x]"), ("[bold]x[/bold]", "[[bold]x[/bold]]"), ("a\\", "[a\\]")]
)
def test_keys_are_printed_as_they_are(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], key: str, shown: str
) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(json.dumps({"models": ["control:blank"], key: 1}))
    code, err = glyphbench(["run", "-c", config], capsys)
    assert code == 2 and f"{config} {shown}: unknown key" in one_line(err)


@pytest.mark.parametrize("cell", ["", "   "])
def test_an_empty_text_cell_names_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], cell: str
) -> None:
    csv = tmp_path / "prompts.csv"
    csv.write_text(f"prompt_id,prompt,text\np1,A sign,OPEN\np2,A wall,{cell}\n")
    args = ["run", "-m", "control:blank", "--ocr", "pixelocr", "--prompts", f"csv:{csv}"]
    code, err = glyphbench([*args, "--out", tmp_path / "out"], capsys)
    assert code == 2 and f"{csv}:3: empty text" in one_line(err)
    assert not (tmp_path / "out").exists()


def test_a_bad_flag_value_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = glyphbench(["run", "-m", "control:blank", "--limit", "0"], capsys)
    assert code == 2 and one_line(err).startswith("error: --limit: ")


def _fail_writes(monkeypatch: pytest.MonkeyPatch, out: Path, error: OSError) -> None:
    """Make every flush (disk full) or rename (read-only) of a file under ``out`` fail."""
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        if error.errno == errno.ENOSPC and str(out) in os.readlink(f"/proc/self/fd/{fd}"):
            raise error
        real_fsync(fd)

    def replace(source: str, target: str) -> None:
        if error.errno == errno.EROFS and str(out) in str(target):
            raise OSError(error.errno, error.strerror, str(target))
        real_replace(source, target)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)


@pytest.mark.slow
@pytest.mark.parametrize(
    "error",
    [
        OSError(errno.ENOSPC, "No space left on device"),
        OSError(errno.EROFS, "Read-only file system"),
    ],
    ids=["disk full", "read-only"],
)
def test_disk_full_and_read_only_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
    error: OSError,
) -> None:  # fmt: skip
    csv = write_prompts_csv(tmp_path / "p.csv", 2)
    out = tmp_path / "out"
    _fail_writes(monkeypatch, out, error)
    args = ["run", "-m", "control:blank", "--ocr", "pixelocr", "--prompts", f"csv:{csv}"]
    code, err = glyphbench([*args, "--out", out, "--no-progress"], capsys)
    line = one_line(err)
    assert str(out) in line and error.strerror in line
    if error.errno == errno.ENOSPC:  # not the user's error: free space, resume (exit 4)
        assert code == 4 and line.endswith("free space and run the same command again to resume")
    else:
        assert code == 2


# ---------------------------------------------------------------------- the VAE evaluation
@pytest.mark.parametrize("spec", ["jpeg?quality=abc", "jpeg??", "identity?x=1", "diffusers:"])
def test_vae_eval_malformed_codec_spec(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], spec: str
) -> None:
    code, err = glyphbench(["vae-eval", "--vae", spec, "--out", tmp_path / "o"], capsys)
    assert code == 2 and one_line(err).startswith("error: --vae: ")
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("dry_run", [[], ["--dry-run"]])
def test_vae_eval_missing_taesd_folder_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], dry_run: list[str]
) -> None:
    """A misspelt taesd: folder is refused before anything is written."""
    args = ["vae-eval", "--vae", "identity", "--vae", f"taesd:{tmp_path / 'taef3'}"]
    code, err = glyphbench([*args, "--limit", "2", "--out", tmp_path / "o", *dry_run], capsys)
    assert code == 2
    assert one_line(err) == f"error: {tmp_path / 'taef3'}: no such folder " + (
        "(taesd:<folder with NAME_encoder.pth and ...>)"
    )
    assert not (tmp_path / "o").exists()


def test_images_folder_naming_nothing_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The files found are named as not used; exit 2; no run folder."""
    from PIL import Image

    prompts = write_prompts_csv(tmp_path / "p.csv", 4)
    (tmp_path / "made").mkdir()
    for name in ("cat.png", "dog.jpg"):
        Image.new("RGB", (8, 8)).save(tmp_path / "made" / name)
    args = ["run", "--models", f"images:{tmp_path / 'made'}", "--prompts", f"csv:{prompts}"]
    code, err = glyphbench([*args, "--ocr", "pixelocr", "--out", tmp_path / "o"], capsys)
    assert code == 2
    line = one_line(err)
    assert "names an image of this run (4 expected)" in line
    assert line.endswith("; 2 files not used: cat.png, dog.jpg")
    assert not (tmp_path / "o").exists()


def test_vae_eval_where_every_row_failed_exits_non_zero(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["vae-eval", "--vae", "identity", "--images", "default?size=64", "--limit", "2"]
    code, err = glyphbench([*args, "--ocr", "ocr_blind", "--out", tmp_path / "o"], capsys)
    assert code == 1 and "every row of the evaluation failed (2 of 2)" in err


# ---------------------------------------------------------------------------- human study
def _garbage_database(folder: Path) -> str:
    (folder / "ratings.sqlite").write_bytes(b"this is not a database" * 100)
    return "ratings.sqlite: not a usable ratings database"


def _study_json_of_a_list(folder: Path) -> str:
    (folder / "study.json").write_text("[1, 2, 3]")
    return "study.json: expected a JSON object, got array"


def _study_json_with_a_wrong_type(folder: Path) -> str:
    config = json.loads((folder / "study.json").read_text())
    (folder / "study.json").write_text(json.dumps({**config, "raters_per_image": "three"}))
    return "study.json [raters_per_image]: expected a number, got 'three'"


def _study_json_missing_a_key(folder: Path) -> str:
    config = json.loads((folder / "study.json").read_text())
    del config["batch_size"]
    (folder / "study.json").write_text(json.dumps(config))
    return "study.json [batch_size]: missing required key 'batch_size'"


def _rating_off_the_scale(folder: Path) -> str:
    from glyphbench.human_eval.service import RatingService
    from glyphbench.human_eval.study import load_study

    service = RatingService(load_study(folder))
    view = service.start(True)
    service.submit(view.code, view.image_id, {c: "Yes" for c in service.criteria})
    with sqlite3.connect(folder / "ratings.sqlite") as db:
        db.execute("UPDATE ratings SET value = 7 WHERE criterion = 'text_accuracy'")
    return "ratings.sqlite: 1 stored rating(s) of 'text_accuracy' = 7, not on the yesno scale"


@pytest.mark.parametrize(
    "damage",
    [
        _garbage_database,
        _study_json_of_a_list,
        _study_json_with_a_wrong_type,
        _study_json_missing_a_key,
        _rating_off_the_scale,
    ],
)
@pytest.mark.parametrize("command", ["stats", "export", "report"])
def test_damaged_study(
    study: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    damage: Callable[[Path], str],
    command: str,
) -> None:
    folder = copy_study(study, tmp_path / "study")
    expected = damage(folder)
    code, err = glyphbench(["human", command, folder, "--out", tmp_path / "out"], capsys)
    assert code == 2 and f"{folder}/{expected}" in one_line(err)
    assert not (tmp_path / "out").exists()


def test_every_empty_text_cell_is_named_at_once_with_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Eight empty cells: the first line, the next five and a count, so one edit mends the
    file (one rerun per row was the way to find them)."""
    csv = tmp_path / "prompts.csv"
    rows = "".join(f"p{k},A wall,{'' if k % 2 else 'OPEN'}\n" for k in range(16))
    csv.write_text(f"prompt_id,prompt,text\n{rows}")
    code, err = glyphbench(["prompts", "validate", f"csv:{csv}"], capsys)
    said = one_line(err)
    assert code == 2 and f"{csv}:3: empty text (also lines 5, 7, 9, 11, 13 and 2 more)" in said
    assert "give each prompt the text it asks to render" in said


@pytest.mark.parametrize(
    "option, said",
    [
        (["--n-boot", "0"], "--n-boot: must be from 1 to 100,000 resamples, got 0"),
        (["--n-boot", "99999999999"], "--n-boot: must be from 1 to 100,000 resamples"),
        (["--seed", "-1"], "--seed: must be 0 or more, got -1"),  # a numpy traceback
    ],
)
def test_report_bootstrap_options_out_of_range_are_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: list[str], said: str
) -> None:
    from tests.helpers.report_fixtures import build_run

    run = build_run(tmp_path / "run", n_prompts=4, with_images=False)
    code, err = glyphbench(["report", run, "--out", tmp_path / "r", *option], capsys)
    assert code == 2 and one_line(err).startswith(f"error: {said}"), err
    assert not (tmp_path / "r").exists()


# ---------------------------------------------------------------------- Ctrl-C
def test_ctrl_c_before_a_command_handles_it_is_one_line_and_exit_130(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Typer turns a Ctrl-C in a command still loading (outside its own handler) into a
    silent exit 130; the entry point names it. While the command line itself imports, the
    same line and code (not an import traceback)."""
    from glyphbench.cli import prompts as prompts_cli
    from glyphbench.cli import root as root_cli

    def interrupted(*_args: object, **_kwargs: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(prompts_cli, "load_source", interrupted)
    code, err = glyphbench(["prompts", "show", "default"], capsys)
    assert (code, err) == (130, "interrupted\n")

    monkeypatch.setattr(root_cli, "main", interrupted)  # as if still importing
    code, err = glyphbench(["--help"], capsys)
    assert (code, err) == (130, "interrupted\n")


def test_a_ctrl_c_while_a_stopped_command_shuts_down_is_no_traceback() -> None:
    """After a command stopped (exit 130), Python still joins reader pools' threads; a
    Ctrl-C then raised KeyboardInterrupt in the exit handlers ("Exception ignored ...").
    The first now says it is stopping, the second quits at once with the same code."""
    import subprocess
    import sys

    script = (
        "import signal\n"
        "import glyphbench.cli.root as root\n"
        "from glyphbench.cli import main\n"
        "def stopped():\n"
        "    raise SystemExit(130)\n"
        "root.main = stopped\n"
        "try:\n"
        "    main()\n"
        "except SystemExit:\n"
        "    pass\n"
        "handler = signal.getsignal(signal.SIGINT)\n"
        "handler(signal.SIGINT, None)\n"
        "print('still shutting down', flush=True)\n"
        "handler(signal.SIGINT, None)\n"
        "print('not reached')\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 130, done.stderr
    assert done.stdout == "still shutting down\n"
    assert done.stderr == "stopping (Ctrl-C again quits at once)\n"
