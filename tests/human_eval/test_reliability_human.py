"""The rating app's second audit: plain-text prompts, sticky finishing,
per-address lockout (the lead's browser never locked out), exports removed on SIGTERM,
spreadsheet-safe CSVs."""

from __future__ import annotations

import html
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from glyphbench.human_eval.guard import LoginGuard, LoginPolicy, LoginRefused, plain_markdown
from glyphbench.human_eval.report import export_ratings
from glyphbench.human_eval.service import RatingError, RatingService
from glyphbench.human_eval.study import create_study, load_study
from tests.helpers.human_fixtures import make_run
from tests.helpers.paths import REPO_ROOT

REPO = REPO_ROOT


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("reliability_human") / "run", image_size=32)


def small_study(run: Path, folder: Path, n: int = 9) -> Path:
    create_study(
        [run], folder, n=n, min_per_cell=1, raters_per_image=1, seed=3, batch_size=n,
        gold_per_batch=0, n_gold=0, progress=False,
    )  # fmt: skip
    return folder


@pytest.mark.parametrize(
    "prompt",
    [
        'A poster with "<b>SALE</b>"',
        "a `code` sign, *stars*, _under_ and [a link](http://x)",
        "# 1. - > <script>alert(1)</script> &amp; \\ back",
        "two\nlines",
    ],
)
def test_prompts_render_as_the_plain_text_they_are(prompt: str) -> None:
    from markdown_it import MarkdownIt

    rendered = MarkdownIt("commonmark").render(plain_markdown(prompt))
    shown = re.sub(r"<[^>]+>", "", re.sub(r"<br\s*/?>\n?", "\n", rendered))
    assert html.unescape(shown).strip() == prompt
    assert "<script" not in rendered and "<b>" not in rendered


def test_rate_more_with_nothing_left_keeps_a_rater_finished(run: Path, tmp_path: Path) -> None:
    service = RatingService(load_study(small_study(run, tmp_path / "study")))
    view = service.start(True)
    answers: dict[str, str | None] = {c: "Yes" for c in service.criteria}
    while view.screen == "item":
        view = service.submit(view.code, view.image_id, answers)
    service.finish(view.code)
    people = service.store.progress_per_participant()
    assert people["finished"].all()
    again = service.more(view.code)  # nothing left to claim
    assert again.screen == "done"
    assert service.store.progress_per_participant()["finished"].all()


def test_admin_lockout_is_per_address_never_for_the_leads_browser() -> None:
    guard = LoginGuard({"lead": "pw"}, policy=LoginPolicy(account_free=10**6))
    token = guard.attempt("10.9.9.9", "lead", "pw")  # the lead's browser, once
    for number in range(40):  # many addresses, a few wrong guesses each
        for _ in range(2):
            with pytest.raises(LoginRefused, match="Wrong"):
                guard.attempt(f"10.0.{number}.1", "lead", "guess")
    guard.attempt("10.9.9.8", "lead", "pw")  # no address is locked out by the others
    for _ in range(5):
        with pytest.raises(LoginRefused):
            guard.attempt("10.9.9.9", "lead", "guess")
    with pytest.raises(LoginRefused, match="Too many"):
        guard.attempt("10.9.9.9", "lead", "pw")
    guard.attempt("10.9.9.9", "lead", "pw", token)  # the lead's browser is not locked out
    default = LoginGuard({"lead": "pw"})  # the default also limits the account as a whole
    for number in range(25):
        with pytest.raises(LoginRefused):
            default.attempt(f"10.1.{number}.1", "lead", "guess")
    with pytest.raises(LoginRefused, match="Too many"):
        default.attempt("10.2.0.1", "lead", "pw")


@pytest.mark.slow
def test_the_admin_export_is_removed_on_sigterm(run: Path, tmp_path: Path) -> None:
    study = small_study(run, tmp_path / "study")
    script = (
        "import sys, time\n"
        "from glyphbench.human_eval.app import ExportFolder\n"
        "from glyphbench.human_eval.serve import exit_on_sigterm\n"
        "exports = ExportFolder(sys.argv[1])\n"
        "(exports.path / 'ratings.csv').write_text('answers')\n"
        "exit_on_sigterm()\n"
        "print(exports.path, flush=True)\n"
        "time.sleep(120)\n"
    )
    env = dict(os.environ, PYTHONPATH=str(REPO))
    server = subprocess.Popen(
        [sys.executable, "-c", script, str(study)], env=env, stdout=subprocess.PIPE, text=True
    )
    assert server.stdout is not None
    folder = Path(server.stdout.readline().strip())
    assert folder.parent == study and (folder / "ratings.csv").is_file()
    assert folder.stat().st_mode & 0o077 == 0  # owner-only
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=60)  # the handler removes the folder before the process exits
    assert not folder.exists()


def test_csv_cells_that_spreadsheets_run_are_neutralised(run: Path, tmp_path: Path) -> None:
    study_dir = small_study(run, tmp_path / "study")
    manifest = pd.read_parquet(study_dir / "manifest.parquet")
    formulas = ['=HYPERLINK("http://x")', "+1", "-2 apples", "@SUM(A1)"]
    manifest["text"] = [formulas[k % 4] for k in range(len(manifest))]  # exported
    manifest.to_parquet(study_dir / "manifest.parquet", index=False)
    service = RatingService(load_study(study_dir))
    view = service.start(True)
    answers: dict[str, str | None] = {c: "Yes" for c in service.criteria}
    while view.screen == "item":
        view = service.submit(view.code, view.image_id, answers)
    path = export_ratings(load_study(study_dir), tmp_path / "ratings.csv")
    cells = [cell for line in path.read_text().splitlines() for cell in line.split(",")]
    assert not [c for c in cells if c.strip('"').startswith(("=", "+", "-", "@"))]
    assert any(c.strip('"').startswith("'=HYPERLINK") for c in cells)


def test_a_finished_raters_answers_are_final(run: Path, tmp_path: Path) -> None:
    service = RatingService(load_study(small_study(run, tmp_path / "study")))
    yes: dict[str, str | None] = {c: "Yes" for c in service.criteria}
    no: dict[str, str | None] = {c: "No" for c in service.criteria}
    view = service.start(True)
    first = view.image_id
    view = service.submit(view.code, first, yes)
    service.finish(view.code)  # "Your answers are saved."
    with pytest.raises(RatingError, match="saved and final"):
        service.submit(view.code, first, no)  # was stored, as revision 1
    with pytest.raises(RatingError, match="saved and final"):
        service.back(view.code, "")
    stored = service.store.ratings_frame()
    assert set(stored["value"]) == {1} and set(stored["revisions"]) == {0}
    # Rate more: the new batch is rated and edited as before, the old answers stay final
    view = service.more(view.code)
    assert view.screen == "item" and view.image_id != first
    second = view.image_id
    view = service.submit(view.code, second, no)
    back = service.back(view.code, view.image_id)
    assert back.image_id == second
    edited = service.submit(view.code, second, yes)  # an edit of this batch: allowed
    back = service.back(edited.code, second)  # the item before is from before Finish
    assert back.image_id == second and "final" in back.message
    with pytest.raises(RatingError, match="saved and final"):
        service.submit(view.code, first, no)
