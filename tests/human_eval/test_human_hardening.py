"""Stalling, brute force, uploads, logs, exports, races.

One app is launched for the module (20 images, K=2, batches of 5 + 1 gold), as a
hostile or clumsy client would meet it. Addresses are set with X-Forwarded-For, which
this server believes from 127.0.0.1 (``--trusted-proxy 127.0.0.1``, as behind a reverse
proxy on the same host; ``human_fixtures.launch_app``).
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
import uuid
from pathlib import Path

import httpx
import pytest

from glyphbench.human_eval.service import RatingError, RatingService
from glyphbench.human_eval.study import create_study, load_study
from tests.helpers.human_fixtures import launch_app, make_run

pytestmark = pytest.mark.timeout(240)

N_IMAGES, K, BATCH = 20, 2, 5
PASSWORD = "s3cret-pass"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("hardening") / "run", image_size=32)


def new_study(run: Path, folder: Path, **changes: object) -> Path:
    settings: dict = {
        "n": N_IMAGES,
        "min_per_cell": 1,
        "raters_per_image": K,
        "seed": 5,
        "batch_size": BATCH,
        "gold_per_batch": 1,
        "n_gold": 3,
        "progress": False,
        **changes,
    }
    create_study([run], folder, **settings)
    return folder


@pytest.fixture(scope="module")
def app(run: Path, tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("hardening_app")
    os.environ["GRADIO_TEMP_DIR"] = str(root / "gradio-cache")
    study = new_study(run, root / "study")
    auth = root / "admin.txt"
    auth.write_text(f"lead:{PASSWORD}\n")
    demo, url = launch_app(study, auth_file=auth)
    yield {"url": url, "study": study}
    demo.close()


def client(url: str, address: str):
    from gradio_client import Client

    return Client(
        url,
        verbose=False,
        download_files=False,
        analytics_enabled=False,
        headers={"X-Forwarded-For": address},
    )


# ------------------------------------------------------------------------ case 2: stalling
@pytest.mark.slow
def test_a_flood_of_starts_from_one_client_does_not_stall_the_study(app: dict) -> None:
    flood = client(app["url"], "10.6.6.6")
    started = time.monotonic()
    states = [flood.predict(True, api_name="/start")[-1] for _ in range(12)]
    assert time.monotonic() - started < 60
    claimed = [s for s in states if s["screen"] == "item"]
    refused = [s for s in states if s["screen"] == "consent"]
    assert 1 <= len(claimed) <= 2 and len(refused) == 12 - len(claimed)
    assert "Too many unfinished batches" in refused[0]["message"]

    fresh = client(app["url"], "10.1.1.1").predict(True, api_name="/start")[-1]
    assert fresh["screen"] == "item" and fresh["total"] == BATCH + 1

    # one resume code asking for "more" again and again keeps one open batch
    code = claimed[0]["code"]
    for _ in range(5):
        state = flood.predict(code, api_name="/more")[-1]
        assert state["screen"] == "item" and state["total"] == BATCH + 1
    assert "rate the images you have first" in state["message"]


def test_claims_lapse_after_inactivity_and_the_message_is_honest(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import glyphbench.human_eval.store as store_module

    study = load_study(new_study(run, tmp_path / "study", raters_per_image=1))
    clock = [time.time()]
    monkeypatch.setattr(store_module.time, "time", lambda: clock[0])
    service = RatingService(study)
    assert study.config["claim_ttl_seconds"] <= 30 * 60  # minutes, not hours
    first = [service.start(True) for _ in range(4)]  # 4 x 5 claims = all 20 images
    assert all(view.screen == "item" for view in first)
    waiting = service.start(True)
    assert waiting.screen == "review" and "being rated by others" in waiting.message

    # the first participant keeps rating (activity) while the others walk away
    clock[0] += study.config["claim_ttl_seconds"] * 0.75
    view = first[0]
    view = service.submit(view.code, view.image_id, {c: "Yes" for c in study.criterion_names})
    clock[0] += study.config["claim_ttl_seconds"] * 0.5
    late = service.more(waiting.code)
    assert late.screen == "item"  # the idle participants' claims lapsed

    gold = set(study.manifest.loc[study.manifest["is_gold"], "image_id"])

    def ids(code: str) -> set[str]:  # a participant's claimed images, gold items aside
        participant = service._participant(code).participant_id
        return {item.image_id for item in service.store.batch(participant)} - gold

    assert not ids(late.code) & ids(first[0].code)  # the active participant's claims held
    # an idle participant coming back after others rated their image is relieved of it
    taken = next(iter(ids(late.code)))
    service.submit(late.code, taken, {c: "No" for c in study.criterion_names})
    idle = next(v for v in first[1:] if taken in ids(v.code))
    assert service.resume(idle.code).screen == "item"
    assert taken not in ids(idle.code)


# --------------------------------------------------------------------- case 7: exposure
@pytest.mark.slow
def test_admin_login_is_rate_limited_with_lockout(app: dict) -> None:
    from gradio_client.exceptions import AppError

    attacker = client(app["url"], "10.9.9.9")
    messages = []
    for attempt in range(7):
        try:
            attacker.predict("lead", f"guess-{attempt}", api_name="/admin")
        except AppError as exc:
            messages.append(str(exc))
    assert messages[0] == "Wrong user or password."
    assert "Too many failed logins" in messages[-1]
    with pytest.raises(AppError, match="Too many failed logins"):
        attacker.predict("lead", PASSWORD, api_name="/admin")  # even the right password
    summary, *_ = client(app["url"], "10.2.2.2").predict("lead", PASSWORD, api_name="/admin")
    assert "images have 2 ratings" in summary


def test_uploads_and_oversized_bodies_are_refused(app: dict) -> None:
    url = app["url"]
    upload = httpx.post(f"{url}gradio_api/upload", files={"files": ("x.html", b"<script>1")})
    assert upload.status_code == 403
    big = httpx.post(
        f"{url}gradio_api/queue/join",
        content=b"{" + b" " * (2 * 1024 * 1024) + b"}",
        headers={"content-type": "application/json"},
    )
    assert big.status_code == 413

    def chunks():
        for _ in range(200):
            yield b" " * 1024

    streamed = httpx.post(f"{url}gradio_api/queue/join", content=chunks())
    assert streamed.status_code == 413
    assert httpx.get(f"{url}gradio_api/info").status_code == 200  # ordinary requests pass


@pytest.mark.slow
def test_refused_requests_log_no_traceback_and_no_input(
    app: dict, capfd: pytest.CaptureFixture[str]
) -> None:
    from gradio_client.exceptions import AppError

    marker = f"MARK{uuid.uuid4().hex[:8]}"
    c = client(app["url"], "10.3.3.3")
    state = c.predict(True, api_name="/start")[-1]
    capfd.readouterr()
    for call in (
        lambda: c.predict(state["code"], state["image_id"], marker, "Yes", api_name="/submit"),
        lambda: c.predict(marker, api_name="/resume"),
        lambda: c.predict(state["code"], marker, api_name="/back"),
        lambda: c.predict(marker, "Yes", "No", "x", api_name="/submit"),
    ):
        with pytest.raises(AppError):
            call()
    # What is checked is an absence (no traceback, no input echoed), so no event marks
    # its end: the server's threads get a bounded grace to print anything late.
    time.sleep(0.5)
    out, err = capfd.readouterr()
    assert "Traceback" not in out + err
    assert marker not in out + err


def test_admin_exports_reuse_one_folder(app: dict) -> None:
    before = set(Path(tempfile.gettempdir()).glob("glyphbench-export-*"))
    admin = client(app["url"], "10.4.4.4")
    exports = [admin.predict("lead", PASSWORD, api_name="/admin")[-1] for _ in range(3)]
    created = set(Path(tempfile.gettempdir()).glob("glyphbench-export-*")) - before
    assert not created and all(exports)  # in the study's own folder, not /tmp
    folder = app["study"] / ".admin-export"
    assert (folder / "ratings.csv").is_file() and folder.stat().st_mode & 0o077 == 0


# ---------------------------------------------------------------- case 8: submit vs finish
def test_submit_racing_finish_is_a_clear_refusal(run: Path, tmp_path: Path) -> None:
    service = RatingService(load_study(new_study(run, tmp_path / "study")))
    answers = {c: "Yes" for c in service.criteria}
    view = service.start(True)
    real_check = service.store.check_assigned

    def finish_between(participant_id: str, image_id: str) -> None:
        real_check(participant_id, image_id)
        service.finish(view.code)  # another tab presses Finish right after the check

    service.store.check_assigned = finish_between  # type: ignore[method-assign]
    with pytest.raises(RatingError, match="handed back"):
        service.submit(view.code, view.image_id, answers)
    with pytest.raises(RatingError, match=r"handed back|not in your batch"):
        service.back(view.code, view.image_id)


@pytest.mark.slow
def test_submit_and_finish_at_once_never_raise_anything_else(run: Path, tmp_path: Path) -> None:
    service = RatingService(load_study(new_study(run, tmp_path / "study", raters_per_image=9)))
    answers = {c: "No" for c in service.criteria}
    unexpected: list[BaseException] = []
    for _ in range(60):
        view = service.start(True)
        barrier = threading.Barrier(2)

        def act(action, view=view, barrier=barrier) -> None:
            barrier.wait()
            try:
                action(view)
            except RatingError:
                pass
            except BaseException as exc:
                unexpected.append(exc)

        threads = [
            threading.Thread(target=act, args=(lambda v: service.finish(v.code),)),
            threading.Thread(
                target=act, args=(lambda v: service.submit(v.code, v.image_id, answers),)
            ),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert not unexpected, unexpected[:3]


def test_a_report_of_a_study_with_no_ratings_is_refused_and_writes_nothing(
    run: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Exit 2 with one line, and no empty STUDY/report folder left behind to mislead."""
    from tests.helpers.cli_runs import invoke_cli

    study = new_study(run, tmp_path / "study")
    code, _, stderr = invoke_cli(["human", "report", study], capsys)
    assert code == 2 and "no ratings yet" in stderr, stderr
    assert len(stderr.strip().splitlines()) == 1
    assert not (study / "report").exists()
    # export too: it wrote two empty files with exit 0 while stats and report said this
    code, _, stderr = invoke_cli(["human", "export", study], capsys)
    assert code == 2 and "no ratings yet" in stderr, stderr
    assert not (study / "export").exists()
