"""The launched rating app, driven through ``gradio_client`` like a participant's page.

One app is launched for the module (in-process, 127.0.0.1, a free port). Tests
run in file order: the single-participant flow first, the 20 concurrent raters
last (they fill every image to K).
"""

from __future__ import annotations

import os
import sqlite3
import threading
from collections import Counter
from pathlib import Path

import httpx
import pytest

from glyphbench.human_eval.study import create_study
from tests.helpers.human_fixtures import launch_app, make_run

pytestmark = pytest.mark.timeout(240)

N_IMAGES = 30
K = 3
BATCH = 5
RATERS = 20  # 20 x 5 = 100 claims > 30 x 3 = 90 slots: the last raters find little left


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("human_app")
    os.environ["GRADIO_TEMP_DIR"] = str(root / "gradio-cache")
    run = make_run(root / "run")
    study_dir = root / "study"
    create_study(
        [run],
        study_dir,
        n=N_IMAGES,
        min_per_cell=2,
        raters_per_image=K,
        seed=3,
        batch_size=BATCH,
        gold_per_batch=1,
        n_gold=4,
        progress=False,
    )
    auth = root / "admin.txt"
    auth.write_text("# admins\nlead:s3cret-pass\n")
    demo, url = launch_app(study_dir, auth_file=auth)
    yield {"url": url, "study": study_dir, "run": run, "demo": demo}
    demo.close()


def client(url: str, address: str | None = None):
    """A participant's page; ``address``: the client address the app sees (via a local proxy)."""
    from gradio_client import Client

    headers = {"X-Forwarded-For": address} if address else None
    return Client(
        url, verbose=False, download_files=False, analytics_enabled=False, headers=headers
    )


def answer(c, state: dict, prompt_following: str, text_accuracy: str) -> dict:
    return c.predict(
        state["code"], state["image_id"], prompt_following, text_accuracy, api_name="/submit"
    )[-1]


@pytest.mark.slow
def test_flow_start_rate_back_edit_finish_resume(app: dict) -> None:
    from gradio_client.exceptions import AppError

    c = client(app["url"])
    state = c.predict(True, api_name="/start")[-1]
    assert state["screen"] == "item" and state["progress"] == f"0 / {BATCH + 1}"
    assert "model" not in state and state["prompt"]  # the model is never sent to the page
    first = state["image_id"]
    state = answer(c, state, "Yes", "No")
    second = state["image_id"]
    assert state["progress"] == f"1 / {BATCH + 1}" and second != first
    state = answer(c, state, "No", "No")
    third = state["image_id"]

    back = c.predict(state["code"], third, api_name="/back")[-1]
    assert back["image_id"] == second and back["answers"] == {
        "prompt_following": "No",
        "text_accuracy": "No",
    }
    back = c.predict(state["code"], second, api_name="/back")[-1]
    assert back["image_id"] == first
    edited = answer(c, back, "Yes", "Yes")  # edit the first answer; back to the first unrated item
    assert edited["image_id"] == third and edited["progress"] == f"2 / {BATCH + 1}"

    # A fresh client (closed tab) resumes with the code, at the first unrated item.
    other = client(app["url"])
    resumed = other.predict(state["code"], api_name="/resume")[-1]
    assert resumed["image_id"] == third and resumed["done"] == 2
    with pytest.raises(AppError, match="Unknown resume code"):
        other.predict("AAAA-BBBB-CCCC", api_name="/resume")
    with pytest.raises(AppError, match=r"not in your batch|Unknown image"):
        answer(other, {"code": state["code"], "image_id": "0123456789ab"}, "Yes", "Yes")

    done = other.predict(state["code"], api_name="/finish")[-1]
    assert done["screen"] == "done"
    more = other.predict(state["code"], api_name="/more")[-1]  # a second batch on request
    assert more["screen"] == "item" and more["image_id"] not in {first, second}
    assert other.predict(state["code"], api_name="/finish")[-1]["screen"] == "done"
    with sqlite3.connect(Path(app["study"]) / "ratings.sqlite") as db:
        rows = db.execute("SELECT image_id, criterion, value, revisions FROM ratings").fetchall()
    stored = {(i, c): (v, r) for i, c, v, r in rows}
    assert len(rows) == 4
    assert stored[(first, "text_accuracy")] == (1, 1) and stored[(first, "prompt_following")] == (
        1,
        1,
    )
    assert stored[(second, "prompt_following")] == (0, 0)


@pytest.mark.slow
def test_submit_after_finish_is_refused_through_the_api(app: dict) -> None:
    from gradio_client.exceptions import AppError

    c = client(app["url"])
    state = c.predict(True, api_name="/start")[-1]
    rated = state["image_id"]
    answer(c, state, "Yes", "Yes")
    done = c.predict(state["code"], api_name="/finish")[-1]
    assert done["screen"] == "done" and done["message"].startswith("Your answers are saved.")
    with pytest.raises(AppError, match="saved and final"):  # was stored as a revision
        answer(c, {"code": state["code"], "image_id": rated}, "No", "No")
    with sqlite3.connect(Path(app["study"]) / "ratings.sqlite") as db:
        rows = db.execute(
            "SELECT value, revisions FROM ratings WHERE image_id = ? AND participant_id ="
            " (SELECT participant_id FROM participants WHERE resume_code = ?)",
            (rated, state["code"]),
        ).fetchall()
    assert rows == [(1, 0), (1, 0)]


@pytest.mark.slow
def test_server_serves_only_study_images_and_guards_admin(app: dict) -> None:
    from gradio_client.exceptions import AppError

    url = app["url"]
    assert app["demo"].server_name == "127.0.0.1"  # localhost unless --host says otherwise
    study = Path(app["study"])
    image = next((study / "images").iterdir())
    assert httpx.get(f"{url}gradio_api/file={image}").status_code == 200
    for secret in (
        study / "manifest.parquet",
        study / "study.json",
        study / "ratings.sqlite",
        study / ".admin-key",
        Path(app["run"]) / "results.parquet",
        Path("/etc/passwd"),
    ):
        assert httpx.get(f"{url}gradio_api/file={secret}").status_code in (403, 404), secret
    c = client(url)
    with pytest.raises(AppError, match="Wrong user or password"):
        c.predict("lead", "guess", api_name="/admin")
    summary, per_image, _per_participant, device, export = c.predict(
        "lead", "s3cret-pass", api_name="/admin"
    )
    assert device  # the device token the page keeps in the browser (LoginGuard)
    assert "images have 3 ratings" in summary
    assert per_image["headers"][:2] == ["image_id", "is_gold"]
    assert export  # a CSV path served back for download


@pytest.mark.slow
def test_twenty_concurrent_raters_store_every_answer_exactly_once(app: dict) -> None:
    submitted: dict[tuple[str, str, str], int] = {}
    codes: list[str] = []
    lock = threading.Lock()
    errors: list[BaseException] = []
    barrier = threading.Barrier(RATERS)

    def rater(index: int) -> None:
        try:
            c = client(app["url"], f"10.0.0.{index + 1}")  # raters on their own machines
            barrier.wait(timeout=120)  # everyone starts claiming at the same moment
            state = c.predict(True, api_name="/start")[-1]
            with lock:
                codes.append(state["code"])
            while state["screen"] == "item":
                pf = "Yes" if (index + len(submitted)) % 2 else "No"
                ta = "Yes" if hash((index, state["image_id"])) % 3 else "No"
                key = (state["code"], state["image_id"])
                with lock:
                    submitted[(*key, "prompt_following")] = int(pf == "Yes")
                    submitted[(*key, "text_accuracy")] = int(ta == "Yes")
                state = answer(c, state, pf, ta)
            c.predict(state["code"], api_name="/finish")
        except BaseException as exc:  # surfaced below with the thread's failure
            errors.append(exc)

    threads = [threading.Thread(target=rater, args=(k,)) for k in range(RATERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=200)
    assert not errors, errors[:3]
    assert len(codes) == RATERS

    with sqlite3.connect(Path(app["study"]) / "ratings.sqlite") as db:
        rows = db.execute(
            "SELECT p.resume_code, r.image_id, r.criterion, r.value, i.is_gold FROM ratings r"
            " JOIN participants p USING (participant_id) JOIN images i USING (image_id)"
        ).fetchall()
        total_images = db.execute("SELECT COUNT(*) FROM images WHERE is_gold = 0").fetchone()[0]
    stored = Counter((code, image, criterion) for code, image, criterion, _, _ in rows)
    assert max(stored.values()) == 1  # nothing duplicated
    values = {(code, image, criterion): value for code, image, criterion, value, _ in rows}
    for key, value in submitted.items():  # nothing lost, nothing altered
        assert values[key] == value, key
    # Balanced coverage: every sampled image has exactly K raters, none more.
    raters_per_image: Counter[str] = Counter()
    for _code, image, criterion, _, gold in rows:
        if criterion == "text_accuracy" and not gold:
            raters_per_image[image] += 1
    assert len(raters_per_image) == total_images == N_IMAGES
    assert set(raters_per_image.values()) == {K}


@pytest.mark.slow
def test_serve_prints_the_raters_and_the_admin_address(tmp_path: Path, capfd) -> None:
    from glyphbench.human_eval.serve import launch
    from glyphbench.human_eval.study import create_study, load_study
    from tests.helpers.human_fixtures import free_port

    run = make_run(tmp_path / "run", per_cell=1, image_size=64)
    create_study([run], tmp_path / "s", n=9, min_per_cell=1, progress=False)
    auth = tmp_path / "admin.txt"
    auth.write_text("lead:s3cret-pass\n", encoding="utf-8")
    auth.chmod(0o600)
    port = free_port()
    demo = launch(load_study(tmp_path / "s"), port=port, auth_file=auth, block=False)
    try:
        said = capfd.readouterr().out
    finally:
        demo.close()
    assert f"raters open http://127.0.0.1:{port}/" in said
    assert f"the admin page is http://127.0.0.1:{port}/admin" in said
    # Gradio's own lines are not ours: no share=True hint, no second URL line
    assert "share=True" not in said and "Running on" not in said
