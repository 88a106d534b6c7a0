"""The demo end to end on eight prompts (one per stratum).

Default set, controls, tiny pipeline, the default reader, report.
"""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest


@pytest.mark.slow
def test_demo_on_eight_prompts(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pytest.importorskip("rapidocr_onnxruntime")
    pytest.importorskip("diffusers")
    from glyphbench.cli.demo import TINY_LABEL, run_demo
    from glyphbench.readers import DEFAULT_READER

    run = run_demo(tmp_path / "demo", sample=8, progress=False)  # one per stratum
    rows = pd.read_parquet(run / "results.parquet")
    assert rows["model"].nunique() == 5 and len(rows) == 5 * rows["prompt_id"].nunique()
    assert (rows["error"] == "").all()
    assert rows.loc[rows["model"] == TINY_LABEL, "is_control"].eq(False).all()
    assert rows.loc[rows["model"] != TINY_LABEL, "is_control"].all()
    assert rows["ocr_engine"].eq(DEFAULT_READER).all()  # the one default reader
    meta = json.loads((run / "run.json").read_text())
    assert meta["prompts"]["source"] == "default?lang=en"
    assert meta["models"][TINY_LABEL]["tiny_random"] is True
    out = capsys.readouterr().out
    assert str(run) in out
    assert (tmp_path / "demo" / "report" / "index.html").exists() and "report:" in out
    # the demo ends with the report's answer: each model's NED with its interval (or why none)
    from glyphbench.report.console import metric_cells

    answer = json.loads((tmp_path / "demo" / "report" / "answer.json").read_text())
    tiny = next(m for m in answer["models"] if m["model"] == TINY_LABEL)
    ((value, interval),) = metric_cells(tiny, ["ned"])
    assert value in out and interval and interval in out
    # read by the default reader, whose card ships: each score's interval with its doubt too,
    # inside the range a person's NED can take (where this machine's engines are the card's)
    from glyphbench.calibration.reader_error import shipped_reader_error

    reader, card = answer["reader_error"], shipped_reader_error()
    assert reader["headline"] in " ".join(out.split())  # wrapped to the console's width
    if card is None or not rows["ocr_version"].eq(card.version).all():
        assert not reader["measured"] and "not measured" in reader["headline"].lower()
        return
    assert reader["measured"] and reader["source"].startswith("rapidocr card: n = ")
    assert {s["model"] for s in reader["scores"]} == {m["model"] for m in answer["models"]}
    widened = [s for s in reader["scores"] if s["reader_lo"] is not None]
    assert widened and "with the reader's error [" in out
    for score in widened:
        assert 0.0 <= score["reader_lo"] <= score["lo"] <= score["hi"] <= score["reader_hi"]
        assert score["reader_hi"] <= 1.0 and score["reader_hi"] - score["reader_lo"] > 0


def test_a_sample_the_demo_refuses_writes_nothing(tmp_path: Path) -> None:
    """--sample 3 (under one prompt per stratum) exited 2 after building the tiny model in
    --out: exit 2 means nothing was written."""
    from glyphbench.cli.demo import run_demo
    from glyphbench.core.errors import InputError

    with pytest.raises(InputError, match="--sample 3 is smaller than the floor"):
        run_demo(tmp_path / "demo", sample=3, progress=False)
    assert not (tmp_path / "demo").exists()


@pytest.mark.parametrize("held", ["run.json", "notes.txt"])
def test_a_folder_that_is_no_demo_is_refused_before_anything_is_written(
    tmp_path: Path, held: str
) -> None:
    """`demo --out RUN` replaced that run's own report with the demo's."""
    from glyphbench.cli.demo import check_demo_folder, run_demo
    from glyphbench.core.errors import InputError

    out = tmp_path / "run"
    out.mkdir()
    (out / held).write_text("{}", encoding="utf-8")
    (out / "report").mkdir()
    with pytest.raises(InputError, match=f"not a demo folder \\(it holds {held}\\)"):
        run_demo(out, sample=8, progress=False)
    assert sorted(p.name for p in out.iterdir()) == sorted([held, "report"])
    (out / held).unlink()
    (out / "run").mkdir()
    (out / "run" / "run.json").write_text('{"run_id": "study"}', encoding="utf-8")
    with pytest.raises(InputError, match="its run/ is run 'study'"):
        check_demo_folder(out)
    (out / "run" / "run.json").write_text('{"run_id": "demo"}', encoding="utf-8")
    check_demo_folder(out)  # an earlier demo: resumed
