"""Study design (sampling, study folder), the ratings store, the rating service and the CLI."""

from __future__ import annotations

import json
import shutil
import sqlite3
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from glyphbench.core.errors import InputError
from glyphbench.human_eval.sampling import SamplingError, allocate, gold_answer, stratified_sample
from glyphbench.human_eval.service import RatingError, RatingService
from glyphbench.human_eval.store import Store
from glyphbench.human_eval.study import Study, create_study, load_study
from tests.helpers.human_fixtures import make_run, rate_by_truth


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_run(tmp_path_factory.mktemp("run") / "run")


def new_study(run_dir: Path, out: Path, **options: Any) -> Study:
    settings: dict[str, Any] = {
        "n": 30,
        "min_per_cell": 2,
        "raters_per_image": 2,
        "seed": 7,
        "batch_size": 6,
        "gold_per_batch": 1,
        "n_gold": 6,
        "progress": False,
    }
    settings.update(options)
    return create_study([run_dir], out, **settings)


# -- allocation and sampling ----------------------------------------------------------


def test_allocate_floor_then_proportional() -> None:
    assert allocate({"a": 10, "b": 30}, n=12, floor=2) == {"a": 4, "b": 8}
    # A small cell is capped at its size and its share goes to the others.
    assert allocate({"small": 3, "big": 97}, n=50, floor=2) == {"small": 3, "big": 47}


@pytest.mark.parametrize(
    ("sizes", "n", "floor", "message"),
    [
        ({"a": 5, "b": 1}, 4, 2, "hold fewer"),
        ({"a": 5, "b": 5}, 3, 2, "below the floor"),
        ({"a": 5, "b": 5}, 11, 1, "more than the 10"),
    ],
)
def test_allocate_clear_errors(sizes: dict[str, int], n: int, floor: int, message: str) -> None:
    with pytest.raises(SamplingError, match=message):
        allocate(sizes, n, floor)


@settings(max_examples=60, deadline=None)
@given(
    st.dictionaries(
        st.text("abcdef", min_size=1, max_size=3), st.integers(3, 60), min_size=1, max_size=8
    ),
    st.integers(0, 3),
    st.data(),
)
def test_allocate_properties(sizes: dict[str, int], floor: int, data: st.DataObject) -> None:
    total = sum(sizes.values())
    n = data.draw(st.integers(floor * len(sizes), total))
    counts = allocate(sizes, n, floor)
    assert sum(counts.values()) == n
    assert all(floor <= counts[c] <= sizes[c] for c in sizes)


def test_stratified_sample_inclusion_probabilities_and_determinism() -> None:
    frame = pd.DataFrame({"model": ["a"] * 20 + ["b"] * 5, "group": ["x", "y"] * 12 + ["x"]})
    sample = stratified_sample(frame, ["model"], n=10, floor=3, seed=1)
    assert len(sample) == 10 and sample.index.is_unique
    for cell, part in sample.groupby("cell"):
        size = (frame["model"] == cell).sum()
        assert (part["inclusion_prob"] == len(part) / size).all()
        assert (part["weight"] * part["inclusion_prob"]).round(12).eq(1).all()
    shuffled = frame.sample(frac=1, random_state=3)
    again = stratified_sample(shuffled, ["model"], n=10, floor=3, seed=1)
    assert sorted(again.index) == sorted(sample.index)  # order of rows does not matter
    other = stratified_sample(frame, ["model"], n=10, floor=3, seed=2)
    assert sorted(other.index) != sorted(sample.index)


def test_gold_answers() -> None:
    assert gold_answer("control:blank") == {"text_accuracy": 0, "prompt_following": 0}
    assert gold_answer("control:render") == {"text_accuracy": 1}
    assert gold_answer("control:typo?rate=0.4", exact_match=False) == {"text_accuracy": 0}
    assert gold_answer("control:typo?rate=0.4", exact_match=True) is None
    assert gold_answer("control:typo?rate=0", exact_match=False) is None
    assert gold_answer("diffusers:x") is None


# -- the study folder -------------------------------------------------------------------


def test_create_study_is_self_contained(run_dir: Path, tmp_path: Path) -> None:
    copy = tmp_path / "run"
    shutil.copytree(run_dir, copy)
    study = new_study(copy, tmp_path / "study")
    manifest = study.manifest
    regular = manifest[~manifest["is_gold"]]
    assert len(regular) == 30 and not regular["is_control"].any()
    assert regular.groupby("cell").size().min() >= 2
    assert manifest["image_id"].is_unique
    gold = manifest[manifest["is_gold"]]
    assert len(gold) == 6 and gold["is_control"].all()
    assert {json.loads(a)["text_accuracy"] for a in gold["gold_answer"]} <= {0, 1}
    assert set(gold["model"]) >= {"control:render", "control:blank"}  # dealt over control kinds
    for image_id, model in zip(manifest["image_id"], manifest["model"], strict=False):
        assert len(image_id) == 12 and all(
            part not in image_id for part in ("alpha", "beta", "control")
        )
        assert model  # the model is recorded (for analysis), never in the file name
    config = json.loads((tmp_path / "study" / "study.json").read_text())
    assert config["raters_per_image"] == 2 and config["cells"] == ["group", "model"]
    shutil.rmtree(copy)  # the study never reads outside itself
    reloaded = load_study(tmp_path / "study")
    for image_id in reloaded.manifest["image_id"]:
        path = reloaded.image_file(image_id)
        assert path.is_file() and path.parent == reloaded.images_dir
        assert path.name == f"{image_id}.png"


@pytest.mark.slow
def test_the_manifest_copies_the_scores_the_metric_table_places(
    run_dir: Path, tmp_path: Path
) -> None:
    """The copied scores are the records' ``study`` places (replaced, restored)."""
    from dataclasses import replace

    from glyphbench.scoring.table import METRICS

    def scores(study: Study) -> list[str]:
        columns = list(study.manifest.columns)
        return columns[columns.index("gold_answer") + 1 :]

    assert scores(new_study(run_dir, tmp_path / "before")) == [
        "ned",
        "algorithm1",
        "anls",
        "exact_match",
        "cer",
        "wer",
        "word_f1",
    ]
    cer, edit_distance = METRICS.get("cer"), METRICS.get("edit_distance")
    place = "glyphbench.scoring.glyphbench"
    try:
        METRICS.add(replace(cer, study=0), replace=True)
        METRICS.add(replace(edit_distance, study=8), replace=True)
        after = scores(new_study(run_dir, tmp_path / "after"))
    finally:
        METRICS.add(cer, replace=True, place=place)
        METRICS.add(edit_distance, replace=True, place=place)
    assert after == ["ned", "algorithm1", "anls", "exact_match", "wer", "word_f1", "edit_distance"]


@pytest.mark.slow
def test_create_study_errors(run_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="hold fewer"):
        new_study(run_dir, tmp_path / "a", min_per_cell=5)  # cells hold 4 images
    with pytest.raises(InputError, match="unknown column"):
        new_study(run_dir, tmp_path / "b", cells=["nope"])
    new_study(run_dir, tmp_path / "c")
    with pytest.raises(InputError, match="already holds a study"):
        new_study(run_dir, tmp_path / "c")
    with pytest.raises(InputError, match="not a study folder"):
        load_study(tmp_path / "nothing")


# -- store and service -------------------------------------------------------------------


def test_claims_balance_and_never_repeat(tmp_path: Path) -> None:
    store = Store(tmp_path / "r.sqlite", raters_per_image=2)
    store.add_images([f"i{k}" for k in range(10)], gold_ids=["g1", "g2"])
    people = [store.new_participant() for _ in range(5)]
    batches = [
        store.claim_batch(p.participant_id, 4, n_gold=1, seed=k) for k, p in enumerate(people)
    ]
    regular = [[i for i in b if i.startswith("i")] for b in batches]
    assert [len(b) for b in regular] == [4, 4, 4, 4, 4]
    load = Counter(i for b in regular for i in b)
    assert set(load.values()) == {2} and len(load) == 10  # 20 claims = 10 images x K
    assert all(sum(i.startswith("g") for i in b) == 1 for b in batches)
    # Everyone is full; a sixth participant gets nothing, an earlier one never a repeat.
    late = store.new_participant()
    assert store.claim_batch(late.participant_id, 4) == []
    # Finishing without rating releases the claims to others.
    assert store.finish(people[0].participant_id) == 5
    again = store.claim_batch(late.participant_id, 4)
    assert sorted(again) == sorted(regular[0])


def test_upsert_and_assignment_check(tmp_path: Path) -> None:
    store = Store(tmp_path / "r.sqlite", raters_per_image=1)
    store.add_images(["a", "b"])
    p = store.new_participant()
    q = store.new_participant()
    mine = store.claim_batch(p.participant_id, 1)
    theirs = store.claim_batch(q.participant_id, 1)
    store.mark_shown(p.participant_id, mine[0])
    store.save_answers(p.participant_id, mine[0], {"text_accuracy": 1, "prompt_following": 0})
    store.save_answers(p.participant_id, mine[0], {"text_accuracy": 0, "prompt_following": 0})
    frame = store.ratings_frame()
    assert len(frame) == 2
    row = frame.set_index("criterion").loc["text_accuracy"]
    assert row.value == 0 and row.revisions == 1 and row.seconds >= 0
    with pytest.raises(PermissionError):
        store.save_answers(p.participant_id, theirs[0], {"text_accuracy": 1})
    with sqlite3.connect(tmp_path / "r.sqlite") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


def test_service_flow_without_a_browser(run_dir: Path, tmp_path: Path) -> None:
    study = new_study(run_dir, tmp_path / "study")
    service = RatingService(study)
    assert service.start(False).screen == "consent"
    view = service.start(True)
    assert view.screen == "item" and view.total == 7 and view.progress == "0 / 7"
    first = view.image_id
    view = service.submit(view.code, first, {"prompt_following": "Yes", "text_accuracy": "No"})
    second = view.image_id
    assert view.done == 1 and second != first
    incomplete = service.submit(view.code, second, {"prompt_following": "Yes"})
    assert incomplete.image_id == second and "every question" in incomplete.message
    back = service.back(view.code, second)
    assert back.image_id == first and back.answers == {
        "prompt_following": "Yes",
        "text_accuracy": "No",
    }
    edited = service.submit(view.code, first, {"prompt_following": "No", "text_accuracy": "No"})
    assert edited.image_id == second
    with pytest.raises(RatingError, match="not an answer"):
        service.submit(view.code, second, {"prompt_following": "Maybe", "text_accuracy": "No"})
    other = service.start(True)
    # Gold items are shared between batches, so "foreign" must be outside this
    # participant's whole batch, not only outside the two images seen so far.
    mine = {i.image_id for i in service.store.batch(service._participant(view.code).participant_id)}
    foreign = next(
        i.image_id
        for i in service.store.batch(service._participant(other.code).participant_id)
        if i.image_id not in mine
    )
    with pytest.raises(RatingError, match="not in your batch"):
        service.submit(view.code, foreign, {"prompt_following": "No", "text_accuracy": "No"})
    with pytest.raises(RatingError, match="Unknown resume code"):
        service.resume("ZZZZ-ZZZZ-ZZZZ")
    resumed = service.resume(view.code.lower().replace("-", ""))
    assert resumed.image_id == second and resumed.done == 1
    done = service.finish(view.code)
    assert done.screen == "done"
    assert service.resume(view.code).screen == "done"  # finished: nothing more to rate
    more = service.more(view.code)  # a second batch, never an image already rated
    assert more.screen == "item" and (more.done, more.total) == (
        1,
        1 + 7,
    )  # 6 unrated claims released
    assert first not in {
        i.image_id
        for i in service.store.batch(service._participant(view.code).participant_id)
        if not i.done
    }
    # A logged-in rater (Gradio auth) is the same participant each time they log in.
    assert service.start(True, login="ann").code == service.start(True, login="ann").code
    ratings = service.store.ratings_frame()
    mine = ratings[ratings["participant_id"] == service._participant(view.code).participant_id]
    assert len(mine) == 2 and set(mine["value"]) == {0}


# -- the CLI (sample -> simulated ratings -> stats / export / report) -------------------------


@pytest.mark.slow
def test_cli_end_to_end(run_dir: Path, tmp_path: Path) -> None:
    from glyphbench.cli.root import app

    runner = CliRunner()
    study_dir = tmp_path / "study"
    result = runner.invoke(
        app,
        [
            "human",
            "sample",
            str(run_dir),
            "--n",
            "27",
            "--min-per-cell",
            "3",
            "--raters-per-image",
            "3",
            "--batch-size",
            "9",
            "--gold",
            "6",
            "--seed",
            "1",
            "--out",
            str(study_dir),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "27 images in 9 cells + 6 gold" in result.output
    study = load_study(study_dir)
    service = RatingService(study)
    for view in rate_by_truth(service, raters=9):
        assert view.screen == "review" and view.done == view.total == 9 + 2  # batch + gold
        assert service.submit(view.code, "", {}).screen == "review"  # Submit with nothing shown
        service.finish(view.code)
    images = service.store.progress_per_image()
    assert (images.loc[~images["is_gold"], "raters"] == 3).all()  # every image reached K, none over

    result = runner.invoke(app, ["human", "stats", str(study_dir), "--n-boot", "200"])
    assert result.exit_code == 0, result.output
    agreement = pd.read_csv(study_dir / "analysis" / "agreement.csv")
    assert set(agreement["criterion"]) == {"prompt_following", "text_accuracy"}
    assert (agreement["n_images"] == 27).all() and (agreement["n_ratings"] == 81).all()
    alignment = pd.read_csv(study_dir / "analysis" / "alignment.csv")
    overall = alignment[(alignment.metric == "ned") & (alignment.model == "(all)")].iloc[0]
    assert overall.roc_auc > 0.5  # two of three raters follow the exact-match truth
    ranking = pd.read_csv(study_dir / "analysis" / "ranking.csv")
    assert set(ranking["metric"]) == {"ned", "algorithm1"} and len(ranking) == 6  # 3 models each
    assert (
        "Kendall tau NED similarity (1 = exact) " in result.output
        and "nan" not in result.output.lower()
    )
    assert "Automatic scores vs people" in result.output  # the page's table, not a raw frame

    result = runner.invoke(app, ["human", "export", str(study_dir)])
    assert result.exit_code == 0, result.output
    exported = pd.read_parquet(study_dir / "export" / "ratings.parquet")
    csv = pd.read_csv(study_dir / "export" / "ratings.csv")
    assert len(exported) == len(csv) == len(service.store.ratings_frame())
    assert set(exported["rater_id"]) == {f"R{k:03d}" for k in range(1, 10)}
    assert "participant_id" not in exported.columns and "resume_code" not in exported.columns

    result = runner.invoke(app, ["human", "report", str(study_dir), "--n-boot", "100"])
    assert result.exit_code == 0, result.output
    html = (study_dir / "report" / "index.html").read_text()
    assert (
        "Krippendorff&#39;s alpha" in html
        and "data:image/png;base64" in html
        and "Kendall tau" in html
    )

    bad = runner.invoke(
        app,
        [
            "human",
            "sample",
            str(run_dir),
            "--n",
            "10",
            "--min-per-cell",
            "3",
            "--out",
            str(tmp_path / "bad"),
        ],
    )
    assert bad.exit_code != 0 and isinstance(bad.exception, InputError)


def test_five_point_scale_and_controls_in_sample(run_dir: Path, tmp_path: Path) -> None:
    study = new_study(
        run_dir,
        tmp_path / "study",
        scale="likert5",
        include_controls=True,
        n=36,
        cells=["model"],
        min_per_cell=6,
        n_gold=3,
    )
    manifest = study.manifest
    assert manifest.loc[~manifest["is_gold"], "is_control"].sum() == 18  # 3 controls x 6
    gold_rows = manifest[manifest["is_gold"]]
    sampled = manifest[~manifest["is_gold"]]
    assert not set(zip(gold_rows["model"], gold_rows["prompt_id"], strict=False)) & set(
        zip(sampled["model"], sampled["prompt_id"], strict=False)
    )
    service = RatingService(study)
    view = service.start(True)
    with pytest.raises(RatingError):
        service.submit(view.code, view.image_id, {"prompt_following": "Yes", "text_accuracy": "No"})
    view = service.submit(
        view.code, view.image_id, {"prompt_following": "5 (yes)", "text_accuracy": "2"}
    )
    assert view.done == 1
    assert set(service.store.ratings_frame()["value"]) == {5, 2}


# -- pilots: overlap first ------------------------------------------------------------------


def _pilot_ratings(run_dir: Path, out: Path, overlap: int) -> pd.DataFrame:
    """Two raters, 10 answers each, through the rating service; the study's analysis table."""
    from glyphbench.human_eval.report import analyse

    study = new_study(
        run_dir, out, raters_per_image=3, overlap=overlap, batch_size=12, gold_per_batch=0
    )
    service = RatingService(study)
    for _ in range(2):
        view = service.start(True)
        for k in range(10):
            answer = "Yes" if k % 3 else "No"
            view = service.submit(
                view.code, view.image_id, {"prompt_following": answer, "text_accuracy": answer}
            )
    return analyse(load_study(out), n_boot=50, seed=0).agreement


@pytest.mark.slow
def test_overlap_first_gives_a_two_rater_pilot_an_agreement(run_dir: Path, tmp_path: Path) -> None:
    pilot = _pilot_ratings(run_dir, tmp_path / "pilot", overlap=2)
    row = pilot.set_index("criterion").loc["text_accuracy"]
    assert row["n_images"] >= 8  # the second rater was given the first rater's images
    assert row["krippendorff_alpha"] == row["krippendorff_alpha"]  # a number, not NaN
    # Breadth first (the default) the same pilot shares no image: nothing to agree on.
    breadth = _pilot_ratings(run_dir, tmp_path / "breadth", overlap=0)
    assert (breadth["n_images"] == 0).all()


@pytest.mark.slow
def test_an_abandoned_session_does_not_take_the_pilot_overlap_from_two_raters(
    run_dir: Path, tmp_path: Path
) -> None:
    """A session opened and left (its claims live for claim_ttl) and then two raters who
    rate: the two share their images (before, the first rater was given the abandoned
    session's images and the second fresh ones: 0 shared)."""
    from glyphbench.human_eval.report import analyse
    from glyphbench.human_eval.store import PILOT_IDLE_S

    out = tmp_path / "pilot"
    study = new_study(run_dir, out, raters_per_image=3, overlap=2, batch_size=12, gold_per_batch=0)
    service = RatingService(study)
    left = service.start(True)  # claims a batch, then nothing more
    with sqlite3.connect(service.store.path) as db:  # the session went quiet a while ago
        past = time.time() - 2 * PILOT_IDLE_S
        db.execute("UPDATE participants SET last_active_at = ?", (past,))
        db.execute("UPDATE assignments SET claimed_at = ?", (past,))
    assert service.store.open_claims([service._participant(left.code).participant_id]) == 12
    rated: list[set[str]] = []
    for _ in range(2):
        view = service.start(True)
        images = set()
        for k in range(10):
            images.add(view.image_id)
            answer = "Yes" if k % 3 else "No"
            view = service.submit(
                view.code, view.image_id, {"prompt_following": answer, "text_accuracy": answer}
            )
        rated.append(images)
    assert len(rated[0] & rated[1]) >= 8, rated
    agreement = analyse(load_study(out), n_boot=50, seed=0).agreement
    assert (agreement["n_images"] >= 8).all()


def test_overlap_cannot_exceed_raters_per_image(run_dir: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="--overlap"):
        new_study(run_dir, tmp_path / "s", raters_per_image=2, overlap=3)
