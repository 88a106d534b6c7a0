"""The runner in-process: config, seeds, jobs, rows, resume, failures, merge, rescore.

OCR here is the fast ``pixelocr`` stand-in (tests/helpers/runner_helper.py); real
EasyOCR on control images is exercised in tests/bench/models/test_controls.py.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from glyphbench.core.errors import InputError
from glyphbench.core.schema import ROW_KEY
from glyphbench.core.seeds import image_seed
from glyphbench.run.config import ModelEntry, RunConfig
from glyphbench.run.image_jobs import Shard, build_jobs
from glyphbench.run.operations import merge_run, plan_run, rescore_run, run_benchmark
from glyphbench.run.results import RESULT_COLUMNS, TIMING_COLUMNS
from tests.helpers.paths import REPO_ROOT
from tests.helpers.runner_helper import PixelOCR, prompt_set, register

register()


def config(tmp_path: Path, **changes) -> RunConfig:
    data = {
        "models": ["control:render?size=64", "control:blank?size=64"],
        "batch_size": 4,
        "seeds": [0, 1],
        "ocr": "pixelocr",
        "out": str(tmp_path / "run"),
    }
    data.update(changes)
    return RunConfig.from_mapping(data)


def run(cfg: RunConfig, n: int = 6, **kwargs):
    return run_benchmark(cfg, prompt_set=prompt_set(n), reader=PixelOCR(), progress=False, **kwargs)


def comparable(rows: pd.DataFrame) -> pd.DataFrame:
    return rows.drop(columns=list(TIMING_COLUMNS)).reset_index(drop=True)


# ----------------------------------------------------------------------------- config
def test_yaml_unknown_key_names_file_and_key(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text("models: [control:render]\nbatch_sise: 2\n")
    with pytest.raises(InputError) as info:
        RunConfig.from_yaml(path)
    assert info.value.source == str(path) and info.value.key == "batch_sise"
    assert "unknown key 'batch_sise'" in str(info.value)


def test_yaml_bad_value_and_bad_yaml(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text("models: [control:render]\nbatch_size: 0\n")
    with pytest.raises(InputError, match="batch_size"):
        RunConfig.from_yaml(path)
    path.write_text("models: [control:render\n")
    with pytest.raises(InputError, match="invalid YAML"):
        RunConfig.from_yaml(path)


def test_model_entry_labels_and_options(tmp_path: Path) -> None:
    folder = tmp_path / "my-pipe"
    folder.mkdir()
    entries = RunConfig.from_mapping(
        {
            "models": [
                "control:render",
                {"spec": "control:typo", "options": {"rate": 0.2, "size": 128}},
                f"diffusers:{folder}",
                {
                    "spec": "diffusers:org/model",
                    "name": "mine",
                    "options": {"safety_checker": False},
                },
            ]
        }
    ).models
    assert [e.label for e in entries] == [
        "control:render",
        "control:typo?rate=0.2&size=128",
        "diffusers:my-pipe",
        "mine",
    ]
    assert entries[1].to_spec().options == {"rate": "0.2", "size": "128"}
    assert entries[3].to_spec().options == {"safety_checker": "false"}
    assert [e.is_control for e in entries] == [True, True, False, False]
    assert entries[1].slug == "control_typo_rate=0.2_size=128"


@pytest.mark.parametrize("seed", [2**63, -(2**63) - 1, 10**23])
def test_a_seed_wider_than_64_bits_is_refused_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], seed: int
) -> None:
    """It passed the config and crashed the run's worker (int64 seed column) with a
    traceback, leaving run.json and images behind."""
    from tests.helpers.cli_errors import glyphbench, one_line

    out = tmp_path / "big"
    args = ["run", "-m", "control:render?size=64", "--prompts", "default", "--sample", "2"]
    code, err = glyphbench([*args, "--seeds", str(seed), "--out", out], capsys)
    assert code == 2 and f"a seed must fit in 64 bits (|seed| < 2**63), not {seed}" in one_line(err)
    assert not out.exists()
    wide = config(tmp_path, seeds=[2**63 - 1, -(2**63)])
    assert wide.generate.seeds == [2**63 - 1, -(2**63)]


def test_duplicate_labels_rejected() -> None:
    with pytest.raises(InputError, match="share the label"):
        RunConfig.from_mapping(
            {
                "models": [
                    "control:blank",
                    {"spec": "control:blank?size=64", "name": "control:blank"},
                ]
            }
        )


def test_run_id_follows_config_not_output_folder(tmp_path: Path) -> None:
    a = config(tmp_path)
    b = config(tmp_path / "elsewhere")
    c = config(tmp_path, seeds=[0, 2])
    assert a.resolved_run_id == b.resolved_run_id != c.resolved_run_id
    assert a.resolved_run_id.startswith("run-")
    assert config(tmp_path, run_id="named").resolved_run_id == "named"


def test_overrides_revalidate(tmp_path: Path) -> None:
    cfg = config(tmp_path).with_overrides(batch_size=2, seeds=[5], limit=None)
    assert (cfg.generate.batch_size, cfg.generate.seeds) == (2, [5])
    with pytest.raises(InputError):
        config(tmp_path).with_overrides(batch_size=-1)


# ------------------------------------------------------------------------ seeds, jobs
@settings(deadline=None)
@given(st.integers(0, 2**31), st.text(min_size=1, max_size=20), st.integers(0, 50))
def test_image_seed_is_stable_and_in_range(seed: int, prompt_id: str, index: int) -> None:
    value = image_seed(seed, prompt_id, index)
    assert value == image_seed(seed, prompt_id, index)
    assert 0 <= value < 2**63
    assert value != image_seed(seed, prompt_id, index + 1)


@settings(deadline=None, max_examples=30)
@given(st.integers(1, 9), st.integers(1, 3), st.integers(1, 3), st.integers(1, 4))
def test_shards_are_disjoint_and_cover_all_jobs(
    n_prompts: int, n_seeds: int, per_prompt: int, count: int
) -> None:
    cfg = RunConfig.from_mapping(
        {
            "models": ["control:render", "control:blank"],
            "seeds": list(range(n_seeds)),
            "images_per_prompt": per_prompt,
        }
    )
    frame = prompt_set(n_prompts).frame
    everything = build_jobs(cfg, frame)
    shards = [build_jobs(cfg, frame, Shard(i, count)) for i in range(count)]
    for label, jobs in everything.items():
        assert len(jobs) == n_prompts * n_seeds * per_prompt
        pieces = [job.key for shard in shards for job in shard[label]]
        assert sorted(pieces) == sorted(job.key for job in jobs)
        assert len(set(pieces)) == len(pieces)


def test_shard_parse() -> None:
    assert Shard.parse("1/3") == Shard(1, 3)
    for bad in ("3/3", "a/2", "1", "-1/2"):
        with pytest.raises(InputError):
            Shard.parse(bad)


# ------------------------------------------------------------------------- a whole run
def test_run_writes_rows_images_and_run_json(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    result = run(cfg)
    rows = result.results
    assert rows is not None
    assert list(rows.columns[: len(RESULT_COLUMNS)]) == list(RESULT_COLUMNS)
    assert len(rows) == 2 * 6 * 2 and not rows.duplicated(list(ROW_KEY)).any()
    assert (rows["error"] == "").all() and rows["is_control"].all()
    assert rows["run_id"].eq(cfg.resolved_run_id).all()
    for row in rows.itertuples():
        data = (result.out / row.image_path).read_bytes()
        assert hashlib.sha256(data).hexdigest() == row.image_sha256
        assert row.image_seed == image_seed(row.seed, row.prompt_id, row.sample_index)
        assert row.image_path.startswith("images/control_")
    # pixelocr reads every blank image the same; render images differ by seed
    blank = rows[rows["model"] == "control:blank?size=64"]
    render = rows[rows["model"] == "control:render?size=64"]
    assert blank["ocr_text"].nunique() == 1 and render["ocr_text"].nunique() == len(render)
    assert json.loads(rows.loc[0, "ocr_pieces"]) == [rows.loc[0, "ocr_text"]]
    meta = json.loads((result.out / "run.json").read_text())
    assert meta["run_id"] == cfg.resolved_run_id and meta["rows"] == 24 and meta["complete"]
    assert meta["prompts"]["content_hash"] == prompt_set(6).content_hash
    assert set(meta["models"]) == {"control:render?size=64", "control:blank?size=64"}
    assert meta["packages"]["pandas"] and meta["started_at"] and meta["finished_at"]
    assert meta["config"]["seeds"] == [0, 1]


def test_rerun_is_a_no_op_and_merge_is_idempotent(tmp_path: Path) -> None:
    cfg = config(tmp_path)
    first = run(cfg)
    again = run(cfg)
    assert again.outcome.rows_written == 0 and again.outcome.skipped == 24
    assert again.results is not None and first.results is not None
    pd.testing.assert_frame_equal(comparable(first.results), comparable(again.results))
    pd.testing.assert_frame_equal(comparable(merge_run(first.out)), comparable(first.results))


def test_a_resume_makes_again_the_image_that_was_deleted(tmp_path: Path) -> None:
    """A row counts as done only while its image is on disk: the resume kept a row naming a
    deleted file, with its old reading and score."""
    cfg = config(tmp_path)
    first = run(cfg)
    assert first.results is not None
    gone = first.results.iloc[3]
    (first.out / gone.image_path).unlink()
    again = run(cfg)
    assert again.outcome.rows_written == 1 and again.outcome.skipped == 23
    assert again.results is not None
    remade = (first.out / gone.image_path).read_bytes()  # the same seed: the same image
    assert hashlib.sha256(remade).hexdigest() == gone.image_sha256
    same = comparable(again.results).drop(columns=["batch_size"])  # remade in a batch of 1
    pd.testing.assert_frame_equal(comparable(first.results).drop(columns=["batch_size"]), same)


def test_merge_says_when_a_shard_is_missing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """merge of a folder where shard 0/2 never ran wrote half the table with no word."""
    from tests.helpers.cli_runs import invoke_cli

    cfg = config(tmp_path)
    run(cfg, shard="1/2")
    code, out, err = invoke_cli(["merge", str(cfg.output.out)], capsys)
    assert code == 0 and "merged 12 rows" in out
    assert "warning: " in err and "incomplete run: 12 of 24 rows made" in err, err
    run(cfg, shard="0/2")
    code, out, err = invoke_cli(["merge", str(cfg.output.out)], capsys)
    assert code == 0 and "merged 24 rows" in out and "incomplete" not in err


def test_a_resume_under_another_run_id_is_refused(tmp_path: Path) -> None:
    """--run-id BBB on a folder of run AAA was ignored without a word (and rows made by the
    resume would have carried the other id). The same command without --run-id resumes AAA:
    the id is not part of the config, so the folder's run.json gives it."""
    run(config(tmp_path, run_id="AAA", seeds=[0]), n=2)
    with pytest.raises(InputError) as info:
        run(config(tmp_path, run_id="BBB", seeds=[0]), n=2)
    assert "this folder's run is named 'AAA'" in str(info.value)
    assert "resume it with --run-id AAA" in str(info.value)
    with pytest.raises(InputError, match="this folder holds a different run"):
        run(config(tmp_path, seeds=[0, 1]), n=2)  # another config: not adopted
    # --dry-run answers as the run does (it said "2 to make" for a folder the run refuses)
    with pytest.raises(InputError, match="this folder holds a different run"):
        plan_run(config(tmp_path, seeds=[0, 1]), prompt_set=prompt_set(2))
    assert plan_run(config(tmp_path, seeds=[0]), prompt_set=prompt_set(2))["run_id"] == "AAA"
    again = run(config(tmp_path, seeds=[0]), n=2)
    assert again.results is not None and again.results["run_id"].eq("AAA").all()


def test_a_folder_of_rows_without_run_json_is_refused(tmp_path: Path) -> None:
    """With run.json gone there was nothing to compare: another config's rows were mixed
    with the old ones under a new run.json."""
    first = run(config(tmp_path))
    (first.out / "run.json").unlink()
    with pytest.raises(InputError) as info:
        run(config(tmp_path, seeds=[5]))
    assert "run.json: missing, but the folder holds rows (parts/)" in str(info.value)
    assert not (first.out / "run.json").exists()


@pytest.mark.slow
def test_other_config_in_same_folder_is_refused(tmp_path: Path) -> None:
    run(config(tmp_path))
    with pytest.raises(InputError, match="different run"):
        run(config(tmp_path, seeds=[3]))


def test_generation_error_is_local_and_retried_on_resume(tmp_path: Path) -> None:
    marker = tmp_path / "failed-once"
    cfg = config(
        tmp_path,
        models=[f"flaky:render?fail=Bakery&marker={marker}", "control:blank?size=64"],
        seeds=[0],
    )
    first = run(cfg)
    assert first.results is not None
    errors = first.results[first.results["error"] != ""]
    # batch size 4: the first batch (p00..p03) holds 'Bakery' and fails; the rest succeed
    assert sorted(errors["prompt_id"]) == ["p00", "p01", "p02", "p03"]
    assert errors["error"].str.startswith("Generate: ValueError: flaky failure").all()
    assert errors["image_path"].isna().all() and errors["algorithm1"].isna().all()
    assert (first.results["model"] == "control:blank?size=64").sum() == 6
    second = run(cfg)
    assert second.outcome.rows_written == 4
    assert second.results is not None and (second.results["error"] == "").all()
    assert len(second.results) == 12


@pytest.mark.slow
def test_out_of_memory_halves_the_batch(tmp_path: Path) -> None:
    cfg = config(tmp_path, models=["oomy:render"], seeds=[0])
    result = run(cfg, n=5)
    assert result.results is not None
    assert (result.results["error"] == "").all()
    assert result.results["batch_size"].tolist() == [1] * 5
    assert result.outcome.oom_halvings == {"oomy:render": 2}  # 4 -> 2 -> 1


def test_model_that_fails_to_load_is_reported_once(tmp_path: Path, capsys) -> None:
    cfg = config(tmp_path, models=["broken:x", "control:render?size=64"], seeds=[0])
    result = run(cfg, n=3)
    assert result.results is not None
    broken = result.results[result.results["model"] == "broken:x"]
    assert len(broken) == 3 and broken["error"].str.startswith("Load: OSError").all()
    assert (result.results[result.results["model"] != "broken:x"]["error"] == "").all()
    assert capsys.readouterr().err.count("failed to load") == 1
    meta = json.loads((result.out / "run.json").read_text())
    assert "broken:x" in meta["model_errors"] and not meta["complete"]


def test_unknown_model_kind_fails_before_running(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="unknown model kind 'nosuch'"):
        run(config(tmp_path, models=["nosuch:x"]))
    with pytest.raises(InputError, match="option 'rate' is required"):
        run(config(tmp_path, models=["control:typo"]))
    assert not (tmp_path / "run" / "run.json").exists()


def test_rescore_reocr_and_scores_only(tmp_path: Path) -> None:
    cfg = config(tmp_path, seeds=[0])
    first = run(cfg)
    assert first.results is not None

    class Upper(PixelOCR):
        name = "upper"

        def read(self, images):
            results = super().read(images)
            for r in results:
                r.text = "OPEN"
            return results

    rescored = rescore_run(first.out, reader=Upper(), progress=False)
    assert (rescored["ocr_engine"] == "upper").all() and (rescored["ocr_text"] == "OPEN").all()
    assert rescored.loc[rescored["text"] == "OPEN", "exact_match"].eq(1.0).all()
    assert rescored["image_sha256"].tolist() == first.results["image_sha256"].tolist()
    pd.testing.assert_frame_equal(comparable(merge_run(first.out)), comparable(rescored))
    again = rescore_run(first.out, scores_only=True, progress=False)
    assert (again["ocr_text"] == "OPEN").all()
    meta = json.loads((first.out / "run.json").read_text())
    assert [r["scores_only"] for r in meta["rescores"]] == [False, True]
    with pytest.raises(InputError, match="scores-only"):
        rescore_run(first.out, scores_only=True, reader_spec="easyocr", progress=False)


def test_rescore_keeps_the_reading_of_a_changed_image_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A changed image is not read again; its row keeps what was read from the image as
    generated (a rescore never turns a good row into a failed one)."""
    first = run(config(tmp_path, seeds=[0], models=["control:render?size=64"]))
    assert first.results is not None
    victim = first.out / first.results.loc[0, "image_path"]
    victim.write_bytes(victim.read_bytes() + b"x")
    capsys.readouterr()
    rows = rescore_run(first.out, reader=PixelOCR(), progress=False)
    assert (rows["error"] == "").all()
    kept = rows.set_index("image_path").loc[first.results.loc[0, "image_path"]]
    assert kept["ocr_text"] == first.results.loc[0, "ocr_text"]
    assert "1 images of rows read before are missing or changed" in capsys.readouterr().err


@pytest.mark.slow
def test_dry_run_plan_on_study_config_loads_no_weights(tmp_path: Path) -> None:
    """Planning the real study resolves every model but imports neither torch nor diffusers."""
    study = REPO_ROOT / "configs" / "study.yaml"
    if not study.exists():
        pytest.skip("configs/study.yaml not present")
    out = tmp_path / "planned"
    script = f"""
import json, sys
sys.path.insert(0, {str(REPO_ROOT)!r})
from tests.helpers.runner_helper import prompt_set
from glyphbench.run.config import RunConfig
from glyphbench.run.operations import plan_run
cfg = RunConfig.from_yaml({str(study)!r}).with_overrides(out={str(out)!r})
plan = plan_run(cfg, prompt_set=prompt_set(3))
heavy = [m for m in ("torch", "diffusers") if m in sys.modules]
print(json.dumps({{"plan": plan, "heavy": heavy}}, default=str))
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    plan, cfg = answer["plan"], RunConfig.from_yaml(study)
    assert answer["heavy"] == []
    assert plan["prompts"]["count"] == 3 and not out.exists()
    assert [m["label"] for m in plan["models"]] == [e.label for e in cfg.models]
    jobs = 3 * len(cfg.generate.seeds) * cfg.generate.images_per_prompt
    assert all(m["jobs"] == jobs for m in plan["models"])
    diffusers = [m for m in plan["models"] if m["spec"].startswith("diffusers:")]
    assert diffusers and all(m["describe"].get("loaded") is False for m in diffusers)


def test_dry_run_prices_hosted_models_against_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    """The leaders config's own prices make it cost more than its cap: the plan says so,
    with each hosted model's caveats."""
    from glyphbench.run.operations import plan_run
    from glyphbench.run.plan import plan_lines

    config = REPO_ROOT / "configs" / "leaders-2026.yaml"
    for name in ("OPENAI_API_KEY", "BFL_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BFL_API_KEY", "set")
    cfg = RunConfig.from_yaml(config)
    plan = plan_run(cfg.with_overrides(out="/nonexistent/plan"), prompt_set=prompt_set(50))
    hosted = [m for m in plan["models"] if m["spec"].startswith("api:")]
    per_image = {m["label"]: cfg.api.prices[m["label"]] for m in hosted}
    expected = sum(per_image[m["label"]] * m["remaining"] for m in hosted)
    assert plan["api"]["total_usd"] == pytest.approx(expected, abs=0.01)
    text = "\n".join(plan_lines(plan))
    assert f"about ${expected:,.2f}" in text
    covered = expected <= float(cfg.api.max_usd or 0)
    assert ("covers it" in text) == covered and ("is not enough" in text) != covered
    gpt = next(m for m in hosted if m["label"] == "gpt-image-1")
    assert any("seeds ignored" in c for c in gpt["caveats"])
    assert "key unset: set OPENAI_API_KEY" in gpt["caveats"]
    bfl = next(m for m in hosted if m["label"] == "flux-2-pro")
    assert not any("key unset" in c for c in bfl.get("caveats", []))


def test_model_entry_rejects_empty_kind() -> None:
    with pytest.raises(InputError):
        RunConfig.from_mapping({"models": [":x"]})
    assert ModelEntry.model_validate("control:blank").label == "control:blank"


# ----------------------------------------------------------------------------- CLI
def test_cli_run_flags_dry_run_and_errors(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from glyphbench.cli.root import app
    from tests.helpers.runner_helper import write_prompts_csv

    csv = write_prompts_csv(tmp_path / "p.csv", 3)
    cli = CliRunner()
    out = tmp_path / "planned"
    args = [
        "run",
        "--models",
        "control:render,control:blank",
        "--prompts",
        f"csv:{csv}",
        "--seeds",
        "0,1",
    ]
    planned = cli.invoke(app, [*args, "--out", str(out), "--dry-run", "--json"])
    assert planned.exit_code == 0, planned.output
    plan = json.loads(planned.stdout)
    assert [m["jobs"] for m in plan["models"]] == [6, 6] and not out.exists()
    # Without --json: a short plan with an estimate, not hundreds of JSON lines.
    short = cli.invoke(app, [*args, "--out", str(out), "--dry-run", "--ocr", "tesseract"])
    assert short.exit_code == 0, short.output
    lines = short.stdout.strip().splitlines()
    assert len(lines) <= 10 and not short.stdout.lstrip().startswith("{")
    assert "images:   12 = 3 prompts x 2 seeds x 1 per prompt x 2 models; 12 to make" in lines[3]
    # 12 images: 12 x 0.02 s to make + 12 x 0.56 s to read (bench/run/plan.py's figures)
    assert lines[-1].startswith(
        "estimate: about 7 s on cpu (device auto): making under 1 s + reading 7 s"
    )
    assert not out.exists()

    missing = cli.invoke(app, ["run", "--prompts", f"csv:{csv}"])
    assert isinstance(missing.exception, InputError) and "--models" in str(missing.exception)
    bad = tmp_path / "bad.yaml"
    bad.write_text("models: [control:render]\nseed: [1]\n")
    wrong = cli.invoke(app, ["run", "--config", str(bad)])
    assert isinstance(wrong.exception, InputError) and wrong.exception.key == "seed"
    seeds = cli.invoke(app, [*args[:-1], "zero"])
    assert isinstance(seeds.exception, InputError) and "--seeds" in str(seeds.exception)


def test_cli_run_then_merge_and_rescore_scores_only(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from glyphbench.cli.root import app
    from tests.helpers.runner_helper import write_prompts_csv

    csv = write_prompts_csv(tmp_path / "p.csv", 2)
    out = tmp_path / "run"
    cli = CliRunner()
    done = cli.invoke(
        app,
        [
            "run",
            "--models",
            "control:blank?size=32",
            "--prompts",
            f"csv:{csv}",
            "--ocr",
            "pixelocr",
            "--out",
            str(out),
            "--no-progress",
        ],
    )
    assert done.exit_code == 0, done.output
    assert (out / "command.txt").read_text().startswith("glyphbench run --models")
    assert cli.invoke(app, ["merge", str(out)]).exit_code == 0
    rescored = cli.invoke(app, ["rescore", str(out), "--scores-only", "--no-progress"])
    assert rescored.exit_code == 0, rescored.output
    assert len(pd.read_parquet(out / "results.parquet")) == 2
