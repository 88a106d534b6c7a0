"""The report's reader-aware intervals: a calibration card widens every score and comparison
(glyphbench.report.reader_aware), shown in the page, the tables (LaTeX too), report.json and
the console; without a card for the run's reader the report says the error is not measured."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from glyphbench.calibration.reader_error import BEYOND, WITHIN, ReaderError
from glyphbench.cli.root import app
from glyphbench.core.errors import InputError
from glyphbench.report.build import write_report
from tests.helpers.report_fixtures import build_run

CONTROLS = {"control:render": 0.0, "control:typo?rate=0.3": 0.3, "control:blank": 1.0}
MODELS = {"sharp": 0.0, "close": 0.08, "poor": 0.5, **CONTROLS}


def _card(folder: Path, errors: np.ndarray, reader: str = "fixture") -> Path:
    """A card folder as `glyphbench readers calibrate` writes it (its reader-error section)."""
    card = ReaderError(reader, "fixture-1", errors, np.arange(errors.size) % 6, "held-out", "m")
    folder.mkdir(parents=True)
    (folder / "card.json").write_text(
        json.dumps({"reader": reader, "real_images": {"reader_error": card.to_json()}})
    )
    return folder


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("reader-error") / "run"
    return build_run(folder, n_prompts=40, models=MODELS, n_errors=0)


@pytest.mark.slow
def test_a_card_widens_every_interval_and_says_which_differences_survive(
    run: Path, tmp_path: Path
) -> None:
    # the reader under-reads a third of the images by 0.3: 0.1 on average
    errors = np.where(np.arange(60) % 3 == 0, -0.3, 0.0)
    card = _card(tmp_path / "card", errors)
    index = write_report([run], tmp_path / "report", n_boot=300, by=[], reader_card=card)
    report = json.loads((tmp_path / "report" / "report.json").read_text("utf-8"))
    section = report["reader_error"]
    assert section["measured"] and section["source"].startswith("fixture card: n = 60 images")
    assert "held-out part of m" in section["source"] and section["caveats"] == []
    scores = pd.read_csv(tmp_path / "report" / "tables" / "reader_error.csv").set_index("model")
    known = scores.dropna(subset=["reader_lo"])
    assert len(known) == len(MODELS)
    assert (known["reader_lo"] <= known["lo"] + 1e-9).all()
    assert (known["reader_hi"] >= known["hi"] - 1e-9).all()
    # under-reading only: the true score may be up to 0.1 above (a NED stops at 1), never below
    assert ((known["reader_hi"] - known["hi"] > 0.08) | (known["reader_hi"] == 1.0)).all()
    assert (known["reader_hi"] <= 1.0).all() and (known["reader_lo"] >= 0.0).all()
    assert (known["reader_hi"] == 1.0).sum() >= 2  # sharp and render reach the top
    assert ((known["lo"] - known["reader_lo"]) < 0.02).all()
    pairs = pd.read_csv(tmp_path / "report" / "tables" / "reader_comparisons.csv")
    pairs = pairs[pairs["metric"] == "ned"].set_index(["model_a", "model_b"])
    assert pairs.loc[("sharp", "poor"), "reader_verdict"] == BEYOND  # 0.4 apart
    assert pairs.loc[("sharp", "close"), "reader_verdict"] in {WITHIN, "not significant"}
    verdicts = pd.read_csv(tmp_path / "report" / "tables" / "verdicts.csv").set_index("model")
    # poor is 0.1 below typo 30%: significant, but no more than the reader's error
    assert verdicts.loc["poor", "verdict"] == "between blank and typo 30%"
    assert verdicts.loc["poor", "reader_verdict"] == "level with typo 30%"
    tex = (tmp_path / "report" / "tables" / "reader_comparisons.tex").read_text("utf-8")
    assert "sharp" in tex and r"\begin{tabular}" in tex
    html = index.read_text("utf-8")
    section_html = html[html.index('id="reader-error"') : html.index('id="summary"')]
    assert "fixture card: n = 60 images from 6 repositories" in section_html
    assert "beyond the reader" in html[html.index('id="answer"') :]


@pytest.mark.slow
def test_a_reader_without_error_widens_nothing(run: Path, tmp_path: Path) -> None:
    """The reader-aware interval is drawn from the summary's very resamples: a card of a
    reader that never erred gives back the summary's interval."""
    card = _card(tmp_path / "card", np.zeros(30))
    write_report([run], tmp_path / "report", n_boot=300, by=[], reader_card=card)
    scores = pd.read_csv(tmp_path / "report" / "tables" / "reader_error.csv")
    assert np.allclose(scores["reader_lo"], scores["lo"], atol=1e-9)
    assert np.allclose(scores["reader_hi"], scores["hi"], atol=1e-9)


@pytest.mark.slow
def test_without_a_card_for_its_reader_the_report_says_the_error_is_not_measured(
    run: Path, tmp_path: Path
) -> None:
    write_report([run], tmp_path / "plain", n_boot=100, by=[])
    plain = json.loads((tmp_path / "plain" / "report.json").read_text("utf-8"))["reader_error"]
    assert not plain["measured"]
    assert plain["source"] == "reader error not measured: no calibration card for fixture"
    html = (tmp_path / "plain" / "index.html").read_text("utf-8")
    assert "Reader error not measured: no calibration card for fixture" in html
    assert not (tmp_path / "plain" / "tables" / "reader_error.csv").exists()
    # a card given for runs none of which its reader read is refused, and nothing written
    other = _card(tmp_path / "card", np.full(10, -0.1), reader="rapidocr")
    with pytest.raises(InputError) as refused:
        write_report([run], tmp_path / "other", n_boot=100, by=[], reader_card=other)
    assert str(refused.value).startswith(
        "--reader-card: the card is for rapidocr, and no row of these runs was read by it "
        "(they were read by fixture)"
    )
    assert not (tmp_path / "other").exists()


@pytest.mark.slow
def test_report_prints_the_reader_error_and_refuses_a_card_without_one(
    run: Path, tmp_path: Path
) -> None:
    card = _card(tmp_path / "card", np.where(np.arange(60) % 3 == 0, -0.3, 0.0))
    args = ["report", str(run), "--out", str(tmp_path / "r"), "--n-boot", "200", "--by", ""]
    result = CliRunner().invoke(app, [*args, "--reader-card", str(card)])
    assert result.exit_code == 0, result.output
    assert "With the reader's error counted (fixture card: n = 60 images" in result.output
    assert "sharp vs poor: significant, and beyond the reader's error" in result.output
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "card.json").write_text(json.dumps({"reader": "fixture"}))
    refused = CliRunner().invoke(app, [*args, "--reader-card", str(tmp_path / "empty")])
    assert refused.exit_code != 0 and "no reader error" in str(refused.exception)


@pytest.mark.slow
def test_the_shipped_card_widens_only_rows_read_by_its_very_reader(
    run: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from glyphbench.calibration import reader_error

    shipped = _card(tmp_path / "shipped", np.where(np.arange(60) % 3 == 0, -0.3, 0.0))
    monkeypatch.setattr(reader_error, "SHIPPED_CARD", shipped / "card.json")
    write_report([run], tmp_path / "same", n_boot=100, by=[])
    same = json.loads((tmp_path / "same" / "report.json").read_text("utf-8"))["reader_error"]
    assert same["measured"], same
    assert same["source"].startswith("fixture card: n = 60 images")
    data = json.loads((shipped / "card.json").read_text("utf-8"))
    data["real_images"]["reader_error"]["version"] = "fixture-2"
    (shipped / "card.json").write_text(json.dumps(data))
    write_report([run], tmp_path / "other", n_boot=100, by=[])
    other = json.loads((tmp_path / "other" / "report.json").read_text("utf-8"))["reader_error"]
    assert not other["measured"]
    assert "glyphbench's card is for fixture version 'fixture-2'" in other["source"]


def test_a_score_without_an_interval_says_so_rather_than_not_measured(tmp_path: Path) -> None:
    """Below MIN_UNITS prompts no interval is drawn, reader-aware or not: the console line
    says that, not that the card's reader error was not measured."""
    few = build_run(tmp_path / "few", n_prompts=3, models={"sharp": 0.0, "poor": 0.5}, n_errors=0)
    card = _card(tmp_path / "card", np.where(np.arange(60) % 3 == 0, -0.3, 0.0))
    args = ["report", str(few), "--out", str(tmp_path / "r"), "--n-boot", "50", "--by", ""]
    result = CliRunner().invoke(app, [*args, "--reader-card", str(card)])
    assert result.exit_code == 0, result.output
    said = " ".join(result.output.split())  # wrapped to the console's width
    assert said.count("with the reader's error: no interval (fewer than 5 prompts)") == 2, said
    assert "not measured" not in said
