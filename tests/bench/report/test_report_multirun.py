"""Reports over several runs say what differs between them in each row's label."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pandas as pd
import pytest

from glyphbench.report.load import load_runs
from tests.helpers.report_fixtures import build_run


def with_reader(run: Path, reader: str) -> Path:
    meta_path = run / "run.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    meta["protocol"] = {"reader": reader, "seeds": [0], "images_per_prompt": 1}
    meta_path.write_text(json.dumps(meta), encoding="utf-8")
    return run


def test_one_model_read_by_two_readers_is_labelled_by_reader(tmp_path: Path) -> None:
    models = {"m": 0.1, "control:render": 0.0}
    a = with_reader(
        build_run(tmp_path / "a", n_prompts=4, models=models, with_images=False), "easyocr"
    )
    b = with_reader(
        build_run(tmp_path / "b", n_prompts=4, models=models, with_images=False), "rapidocr"
    )
    c = with_reader(
        build_run(tmp_path / "c", n_prompts=4, models=models, with_images=False), "rapidocr"
    )
    frame = load_runs([a, b, c])
    labels = set(frame["model"])
    assert "m [reader easyocr]" in labels
    # Two runs with the same reader: the run's name tells them apart.
    assert {"m [reader rapidocr, b]", "m [reader rapidocr, c]"} <= labels
    assert "control:render [reader easyocr]" in labels


def test_runs_under_one_protocol_keep_the_run_name(tmp_path: Path) -> None:
    models = {"m": 0.1}
    a = with_reader(
        build_run(tmp_path / "a", n_prompts=4, models=models, with_images=False), "easyocr"
    )
    b = with_reader(
        build_run(tmp_path / "b", n_prompts=4, models=models, with_images=False), "easyocr"
    )
    assert set(load_runs([a, b])["model"]) == {"m [a]", "m [b]"}
    assert isinstance(load_runs([a])["model"], pd.Series)


def test_a_model_named_like_another_runs_tagged_label_is_refused(tmp_path: Path) -> None:
    """``m [b]`` of run a and ``m`` of run b (tagged ``m [b]``) were pooled as one model."""
    from glyphbench.core.errors import InputError

    a = build_run(tmp_path / "a", n_prompts=4, models={"m [b]": 0.5, "m": 0.1}, with_images=False)
    b = build_run(tmp_path / "b", n_prompts=4, models={"m": 0.1}, with_images=False)
    with pytest.raises(InputError, match=r"model label 'm \[b\]' names rows of two runs \(a, b\)"):
        load_runs([a, b])


def test_one_run_folder_given_twice_is_refused(tmp_path: Path) -> None:
    from glyphbench.core.errors import InputError

    run = build_run(tmp_path / "a", n_prompts=4, models={"m": 0.1}, with_images=False)
    with pytest.raises(InputError, match="given twice"):
        load_runs([run, tmp_path / "." / "a"])


@pytest.mark.parametrize("empty", [None, " "])
def test_rows_without_a_model_name_and_an_empty_table_are_refused(
    tmp_path: Path, empty: str | None
) -> None:
    from glyphbench.core.errors import InputError
    from glyphbench.core.io import write_checksum, write_table

    run = build_run(tmp_path / "a", n_prompts=4, models={"m": 0.1, "n": 0.2}, with_images=False)
    rows = pd.read_parquet(run / "results.parquet")
    rows["model"] = rows["model"].astype(object)
    rows.loc[5, "model"] = empty
    write_table(rows, run / "results.parquet")
    write_checksum(run / "results.parquet")
    with pytest.raises(InputError, match="row 6: empty 'model' \\(1 rows\\)"):
        load_runs([run])
    write_table(rows.iloc[0:0], run / "results.parquet")
    write_checksum(run / "results.parquet")
    with pytest.raises(InputError, match="no rows: nothing to report"):
        load_runs([run])


@pytest.mark.slow
def test_runs_under_two_readers_are_ranked_apart_and_warned_once(tmp_path: Path) -> None:
    from glyphbench.report.build import write_report

    models = {"m": 0.05, "n": 0.4}
    a = with_reader(
        build_run(tmp_path / "a", n_prompts=8, models=models, with_images=False), "easyocr"
    )
    b = with_reader(
        build_run(tmp_path / "b", n_prompts=8, models=models, with_images=False), "rapidocr"
    )
    page = write_report([a, b], tmp_path / "report", n_boot=50).read_text(encoding="utf-8")
    ranking = pd.read_csv(tmp_path / "report" / "tables" / "ranking.csv")
    assert sorted(ranking["protocol"].unique()) == ["reader easyocr", "reader rapidocr"]
    for protocol, group in ranking.groupby("protocol"):
        assert all(str(model).endswith(f"[{protocol}]") for model in group["model"])
    comparisons = pd.read_csv(tmp_path / "report" / "tables" / "comparisons.csv")
    tag = comparisons["model_a"].str.extract(r"\[(.*)\]")[0]
    assert (tag == comparisons["model_b"].str.extract(r"\[(.*)\]")[0]).all()  # never across
    assert page.count("Protocols differ") == 1
    assert page.index("Protocols differ") < page.index('<section id="summary">')
    assert "reader: easyocr in run a, rapidocr in run b" in page and "'easyocr'" not in page
    assert "<title>glyphbench report: a, b</title>" in page


@pytest.mark.slow
def test_a_controls_only_run_has_no_empty_ranking(tmp_path: Path) -> None:
    from glyphbench.report.build import write_report

    run = build_run(tmp_path / "c", n_prompts=6, models={"control:render": 0.0}, with_images=False)
    page = write_report([run], tmp_path / "report", n_boot=50).read_text(encoding="utf-8")
    assert "Only control models in these runs" in page
    assert "Only one model" not in page and 'id="comparisons"' not in page


@pytest.mark.slow
def test_runs_under_two_readers_warn_in_the_answer_and_keep_each_model_on_its_own_controls(
    tmp_path: Path,
) -> None:
    """A model is never placed on another run's controls (read by another reader), and the
    terminal says the runs are not comparable before any number, as the page does."""
    from rich.console import Console

    from glyphbench.report.build import ANSWER, write_report
    from glyphbench.report.console import print_answer

    a = with_reader(
        build_run(
            tmp_path / "a",
            n_prompts=8,
            models={"m": 0.05, "control:render": 0.0, "control:blank": 1.0},
            with_images=False,
        ),
        "rapidocr",
    )
    b = with_reader(
        build_run(tmp_path / "b", n_prompts=8, models={"n": 0.05}, with_images=False), "easyocr"
    )
    index = write_report([a, b], tmp_path / "report", n_boot=50)
    answer = json.loads((index.parent / ANSWER).read_text(encoding="utf-8"))
    warning = "runs not comparable, protocols differ: reader: rapidocr in run a, easyocr in run b"
    assert answer["warnings"] == [warning]
    placed = {m["model"]: m for m in answer["models"]}
    assert placed["n"]["level"] == "unknown"  # run b has no control of its own
    assert placed["n"]["verdict"] == "no control in its run to compare with"
    assert placed["m"]["level"] != "unknown"  # run a's model is placed on run a's controls
    console = Console(record=True, width=400)  # one line per sentence
    print_answer(answer, console)
    printed = console.export_text()
    assert printed.index(f"warning: {warning}") < printed.index(answer["headline"][0])


def test_the_terminal_prints_labels_with_brackets_whole(tmp_path: Path) -> None:
    """``m [reader easyocr]`` is Rich markup to a console: the label lost its bracket and
    two runs' rows read alike (``m``, ``m``) in the answer and the run's summary table."""
    from rich.console import Console

    from glyphbench.report.build import ANSWER, write_report
    from glyphbench.report.console import print_answer, print_summary

    models = {"m": 0.1, "control:render": 0.0}
    runs = [
        with_reader(build_run(tmp_path / name, n_prompts=6, models=models, with_images=False), r)
        for name, r in (("a", "easyocr"), ("b", "rapidocr"))
    ]
    index = write_report(runs, tmp_path / "report", n_boot=50)
    answer = json.loads((index.parent / ANSWER).read_text(encoding="utf-8"))
    labels = {m["model"] for m in answer["models"]}
    assert "m [reader easyocr]" in labels and "m [reader rapidocr]" in labels
    console = Console(record=True, width=400)
    print_answer(answer, console)
    printed = console.export_text()
    assert all(label in printed for label in labels), printed
    rows = pd.read_parquet(runs[0] / "results.parquet").assign(model="m [reader easyocr]")
    console = Console(record=True, width=400)
    print_summary(rows, console, title="t")
    assert "m [reader easyocr]" in console.export_text()


def test_the_terminal_shows_escape_sequences_as_text_and_the_run_summary_ranks_best_first(
    tmp_path: Path,
) -> None:
    """A label's ``ESC [2J`` reached the terminal raw (it clears the screen); ``run`` and
    ``demo`` printed the answer's rows in the config's order, not best first as ``report``."""
    from rich.console import Console

    from glyphbench.report.build import ANSWER, write_report
    from glyphbench.report.console import print_answer, print_summary

    models = {"worse\x1b[2J": 0.5, "better": 0.02, "control:render": 0.0}
    run = build_run(tmp_path / "run", n_prompts=12, models=models, with_images=False)
    index = write_report([run], tmp_path / "report", n_boot=50)
    answer = json.loads((index.parent / ANSWER).read_text(encoding="utf-8"))
    assert [m["model"] for m in answer["models"]][:2] == ["better", "worse\x1b[2J"]
    for show in (print_answer, print_summary):
        console = Console(record=True, width=400)
        if show is print_answer:
            print_answer(answer, console)
        else:
            print_summary(pd.read_parquet(run / "results.parquet"), console, answer=answer)
        printed = console.export_text()
        assert "\x1b" not in printed and "worse\\u001b[2J" in printed, printed
        table = "\n".join(line for line in printed.splitlines() if "│" in line)
        assert table.index("better") < table.index("worse"), printed


def test_read_rows_without_a_score_are_refused_with_the_fix(tmp_path: Path) -> None:
    """A model whose read rows had no NED dropped out of the means, and the headline said
    "only control models"; failed rows keep having no score."""
    from glyphbench.core.errors import InputError
    from glyphbench.core.io import write_checksum, write_table

    run = build_run(tmp_path / "a", n_prompts=4, models={"m": 0.1, "control:render": 0.0})
    rows = pd.read_parquet(run / "results.parquet")
    rows.loc[rows["model"] == "m", "ned"] = float("nan")
    write_table(rows, run / "results.parquet")
    write_checksum(run / "results.parquet")
    with pytest.raises(InputError, match=r"row 1 \(m\): read but no 'ned' score \(4 such rows\)"):
        load_runs([run])
    rows.loc[rows["model"] == "m", "error"] = "OCR: failed"  # failed rows: no score, as ever
    write_table(rows, run / "results.parquet")
    write_checksum(run / "results.parquet")
    assert len(load_runs([run])) == len(rows)


def _rewrite(run: Path, rows: pd.DataFrame) -> None:
    from glyphbench.core.io import write_checksum, write_table

    write_table(rows, run / "results.parquet")
    write_checksum(run / "results.parquet")


@pytest.mark.parametrize(
    ("value", "said"), [(float("inf"), "inf"), (-0.5, "-0.5"), (1e308, "1e+308")]
)
def test_scores_outside_zero_to_one_are_refused_not_left_out_of_the_mean(
    tmp_path: Path, value: float, said: str
) -> None:
    """An infinite NED was left out of the model's mean while its count kept the row; a
    huge one turned the mean into a 300-digit number."""
    from glyphbench.core.errors import InputError

    run = build_run(tmp_path / "a", n_prompts=4, models={"m": 0.1, "control:render": 0.0})
    rows = pd.read_parquet(run / "results.parquet")
    rows.loc[2, "ned"] = value
    _rewrite(run, rows)
    with pytest.raises(InputError, match=rf"row 3 \(.+\): 'ned' is {re.escape(said)}, outside"):
        load_runs([run])
    rows.loc[2, "error"] = "OCR: failed"  # a failed row's cells are not scores
    _rewrite(run, rows)
    assert len(load_runs([run])) == len(rows)


@pytest.mark.parametrize("column", ["prompt_id", "text"])
def test_rows_without_a_prompt_id_or_text_are_refused(tmp_path: Path, column: str) -> None:
    """A row of no prompt was left out of the paired intervals and changed those of a model
    whose rows were all there."""
    from glyphbench.core.errors import InputError

    run = build_run(tmp_path / "a", n_prompts=4, models={"m": 0.1, "n": 0.2}, with_images=False)
    rows = pd.read_parquet(run / "results.parquet")
    rows[column] = rows[column].astype(object)
    rows.loc[5, column] = None
    _rewrite(run, rows)
    with pytest.raises(InputError, match=rf"row 6: empty '{column}' \(1 rows\)"):
        load_runs([run])


@pytest.mark.parametrize(
    ("label", "is_control", "said"),
    [("Render baseline", True, "is a control"), ("control:render", False, "is not a control")],
)
def test_a_control_labelled_as_a_model_and_the_reverse_are_refused(
    tmp_path: Path, label: str, is_control: bool, said: str
) -> None:
    """A control named "Render baseline" was ranked as the one model and left out of the
    control checks; the report tells controls by their labels."""
    from glyphbench.core.errors import InputError

    run = build_run(tmp_path / "a", n_prompts=4, models={"m": 0.1, "c": 0.0}, with_images=False)
    rows = pd.read_parquet(run / "results.parquet")
    rows["model"] = rows["model"].astype(object).replace({"c": label})
    rows["is_control"] = rows["model"] == label if is_control else False
    _rewrite(run, rows)
    with pytest.raises(InputError, match=f"model '{label}' {said}"):
        load_runs([run])


def test_an_edit_count_is_refused_when_negative_or_infinite_not_above_one(tmp_path: Path) -> None:
    """Algorithm 1 counts edits: 3 is a score, -1 and inf are not."""
    from glyphbench.core.errors import InputError

    run = build_run(tmp_path / "a", n_prompts=4, models={"m": 0.1, "control:render": 0.0})
    rows = pd.read_parquet(run / "results.parquet")
    rows["algorithm1"] = rows["algorithm1"].astype("float64")
    rows.loc[1, "algorithm1"] = 3.0
    _rewrite(run, rows)
    assert len(load_runs([run])) == len(rows)
    for value in (-1.0, float("inf")):
        rows.loc[1, "algorithm1"] = value
        _rewrite(run, rows)
        with pytest.raises(InputError, match=r"'algorithm1' is .+, not a finite count"):
            load_runs([run])
