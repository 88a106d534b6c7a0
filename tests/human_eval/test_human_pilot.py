"""A local pilot as the README runs it, and what the study's lead sees:
several raters on one machine, the admin's totals, exports with times, readable report
tables, a password file others may read refused, a port in use named as ``--port``."""

from __future__ import annotations

import re
import socket
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from glyphbench.core.errors import InputError
from glyphbench.human_eval.app import ExportFolder, admin_snapshot
from glyphbench.human_eval.guard import read_auth_file
from glyphbench.human_eval.report import anonymised_ratings, export_ratings, render_page
from glyphbench.human_eval.service import ADDRESS_FULL, RatingService
from glyphbench.human_eval.study import Study, create_study, load_study
from tests.helpers.human_fixtures import make_run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("pilot") / "run", per_cell=2)


def new_study(run_dir: Path, out: Path, **options: Any) -> Study:
    settings: dict[str, Any] = {
        "n": 18, "min_per_cell": 2, "raters_per_image": 3, "seed": 5, "batch_size": 6,
        "gold_per_batch": 0, "n_gold": 0, "progress": False,
    }  # fmt: skip
    settings.update(options)
    return create_study([run_dir], out, **settings)


def rate_all(service: RatingService, view: Any) -> Any:
    while view.screen == "item":
        answers = {name: "Yes" for name in service.study.criterion_names}
        view = service.submit(view.code, view.image_id, answers)
    return view


def test_raters_on_the_serving_machine_are_not_capped_others_are(
    run_dir: Path, tmp_path: Path
) -> None:
    study = new_study(run_dir, tmp_path / "study")
    service = RatingService(study, max_claims_per_address=6)  # one batch per address
    for address in ("127.0.0.1", "::1", "127.0.0.2"):  # a local pilot: browsers on one machine
        for _ in range(2):
            view = service.start(True, client=address)
            assert view.screen == "item", view.message
    first = service.start(True, client="10.0.0.9")
    assert first.screen == "item"
    refused = service.start(True, client="10.0.0.9")  # a remote address is still capped
    assert refused.screen == "consent" and refused.message == ADDRESS_FULL
    rate_all(service, first)
    assert service.start(True, client="10.0.0.9").screen == "item"  # its batch was rated


def test_admin_summary_counts_ratings_and_lists_the_images_that_need_them_first(
    run_dir: Path, tmp_path: Path
) -> None:
    study = new_study(run_dir, tmp_path / "study", n_gold=3, gold_per_batch=1)
    service = RatingService(study)
    view = service.start(True)
    for _ in range(4):  # four images rated (gold included, if dealt)
        answers = {name: "Yes" for name in study.criterion_names}
        view = service.submit(view.code, view.image_id, answers)
    summary, images, people, export = admin_snapshot(study, service, ExportFolder(tmp_path))
    done = int(images.loc[~images["is_gold"], "raters"].sum())
    assert 3 <= done <= 4
    assert f"**{done} of 54 ratings** (18 images x 3 raters)" in summary
    assert "images have 3 ratings" in summary and "1 participants" in summary
    regular = images[~images["is_gold"]]
    assert not images["is_gold"].iloc[: len(regular)].any()  # gold items last
    assert list(regular["raters"]) == sorted(regular["raters"])  # fewest ratings first
    assert Path(export).is_file() and len(people) == 1


def test_exports_write_times_not_epoch_seconds(run_dir: Path, tmp_path: Path) -> None:
    study = new_study(run_dir, tmp_path / "study")
    service = RatingService(study)
    rate_all(service, service.start(True))
    csv = pd.read_csv(export_ratings(study, tmp_path / "r.csv"))
    assert csv["created_at"].str.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ").all()
    parquet = pd.read_parquet(export_ratings(study, tmp_path / "r.parquet"))
    assert (
        str(parquet["updated_at"].dtype).startswith("datetime64")
        and parquet["updated_at"].dt.tz is not None
    )
    epoch = anonymised_ratings(study)["created_at"].iloc[0]  # the database keeps seconds
    assert abs(parquet["created_at"].iloc[0].timestamp() - float(epoch)) < 1e-3


def test_the_report_page_says_rater_and_ranking_headers_in_words(
    run_dir: Path, tmp_path: Path
) -> None:
    from glyphbench.human_eval.report import StudyFacts, analyse

    study = new_study(run_dir, tmp_path / "study")
    service = RatingService(study)
    for _ in range(3):
        rate_all(service, service.start(True))
    analysis = analyse(study, n_boot=50)
    page = render_page(analysis, StudyFacts.of(study, anonymised_ratings(study)))
    raters = page.split('id="raters"', 1)[1]
    for snake in ("n_items", "n_gold_answers", "median_seconds", "outlier", "n_images"):
        assert f">{snake}<" not in page, snake
    assert "flagged" in raters and ">no<" in raters and ">False<" not in raters
    assert "rank by people" in page


def test_a_password_file_others_may_read_is_refused_with_the_fix(tmp_path: Path) -> None:
    auth = tmp_path / "admins.txt"
    auth.write_text("lead:pw\n", encoding="utf-8")
    auth.chmod(0o644)
    with pytest.raises(InputError, match=r"others may read it \(mode 644\): chmod 600"):
        read_auth_file(auth)
    auth.chmod(0o600)
    assert read_auth_file(auth) == {"lead": "pw"}


def glyphbench(args: list[str]) -> tuple[int, str]:
    """``glyphbench ARGS`` as a process (the entry point a user runs): exit code and output."""
    import subprocess
    import sys

    from tests.helpers.runner_helper import child_environment

    done = subprocess.run(
        [sys.executable, "-m", "glyphbench", *args],
        capture_output=True,
        text=True,
        env=child_environment(),
        timeout=300,
    )
    return done.returncode, done.stdout + done.stderr


@pytest.mark.slow
def test_serve_refuses_a_world_readable_auth_file_and_a_port_in_use_in_one_line(
    run_dir: Path, tmp_path: Path
) -> None:
    new_study(run_dir, tmp_path / "study")
    auth = tmp_path / "admins.txt"
    auth.write_text("lead:pw\n", encoding="utf-8")
    auth.chmod(0o644)
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        code, said = glyphbench(["human", "serve", str(tmp_path / "study"), "--port", str(port)])
    assert code == 2
    lines = [line for line in said.splitlines() if line.strip()]
    assert len(lines) == 1 and f"--port {port} is in use on 127.0.0.1" in lines[0], lines
    assert "GRADIO_SERVER_PORT" not in said and "launch()" not in said
    code, said = glyphbench(["human", "serve", str(tmp_path / "study"), "--auth-file", str(auth)])
    assert code == 2 and "chmod 600" in said
    assert len([line for line in said.splitlines() if line.strip()]) == 1


@pytest.mark.slow
def test_launch_names_the_port_when_it_is_taken_after_the_check(
    run_dir: Path, tmp_path: Path
) -> None:
    """The race: the port is free at the check and taken when Gradio binds it."""
    from glyphbench.human_eval.serve import launch

    study = new_study(run_dir, tmp_path / "study")
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        with pytest.raises(InputError, match=re.escape(f"--port {port} is in use")):
            launch(study, port=port, block=False, quiet=True)
    assert load_study(tmp_path / "study").folder.is_dir()
