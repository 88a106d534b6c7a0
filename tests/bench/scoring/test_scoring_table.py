"""The metric table: one record per metric, read by score_pairs, the CLI and the docs."""

from __future__ import annotations

import doctest
import json
import math
import subprocess
import sys

import pandas as pd
import pytest

from glyphbench.core.errors import InputError
from glyphbench.scoring import (
    METRICS,
    SCORE_COLUMNS,
    Metric,
    Pair,
    register_metric,
    score_pairs,
)
from glyphbench.scoring.docs import BEGIN, END, markdown
from glyphbench.scoring.table import Derived, MetricTable, Ratio
from tests.helpers.paths import REPO_ROOT
from tests.helpers.scoring_contract import assert_historical_contract


def chars_read(pair: Pair) -> int:
    """Characters the reader returned, untouched.

    >>> chars_read(Pair("Hello", " HELL0 "))
    7
    """
    return len(pair.read_raw)


@pytest.fixture
def toy_metric():
    metric = register_metric(
        Metric(
            "toy_chars_read",
            chars_read,
            label="Characters read",
            higher_is_better=True,
            doc="Characters the reader returned, untouched.",
            family="toy",
            unit="characters",
            dtype="int64",
            summary=True,
        )
    )
    yield metric
    METRICS.remove(metric.name)


def test_a_registered_metric_is_scored_and_listed(toy_metric):
    frame = score_pairs(
        ["Hello", "a", None], ["HELL0 there", "", "x"], families=["glyphbench", "toy"]
    )
    assert list(frame.columns) == [*SCORE_COLUMNS, "toy_chars_read"]
    assert frame["toy_chars_read"].tolist() == [11, 0, 1]
    assert frame["toy_chars_read"].dtype == "int64"
    assert list(score_pairs(["a"], ["abc"], compat="toy").columns) == ["toy_chars_read"]
    # The default columns do not change when another family registers a metric.
    assert list(score_pairs(["a"], ["abc"]).columns) == list(SCORE_COLUMNS)

    assert METRICS.get("toy_chars_read") is toy_metric
    assert "toy" in METRICS.families() and METRICS.compat_names()["toy"] == "toy"
    assert METRICS.columns(["toy"]) == ["toy_chars_read"]
    assert METRICS.labels()["toy_chars_read"] == "Characters read"
    assert METRICS.higher_is_better()["toy_chars_read"] is True
    assert METRICS.summary_names(["toy"]) == ["toy_chars_read"]
    assert "| `toy_chars_read` | Characters read | higher | characters |" in markdown()


def test_docs_hold_exactly_the_generated_table():
    text = (REPO_ROOT / "docs" / "metrics.md").read_text(encoding="utf-8")
    start, end = text.index(BEGIN), text.index(END) + len(END) + 1
    assert text[start:end] == markdown(), (
        "run: python -m glyphbench.scoring.docs --write docs/metrics.md"
    )


def test_every_metric_has_a_label_a_definition_and_a_runnable_example():
    test_sources = " ".join(
        path.read_text(encoding="utf-8", errors="replace")
        for path in (REPO_ROOT / "tests").rglob("*")
        if path.is_file() and path.suffix in (".py", ".jsonl", ".json", ".csv")
    )
    for metric in METRICS.all():
        assert metric.label.strip() and metric.doc.strip(), metric.name
        if not metric.per_image:
            continue
        docstring = getattr(metric.function, "__doc__", None) or ""
        # A worked example in the function's docstring (run below), or the metric's
        # values checked by a test (e.g. a reproduced benchmark's recorded outputs).
        assert ">>>" in docstring or f'"{metric.name}"' in test_sources, metric.name


@pytest.mark.parametrize("name", [m.name for m in METRICS.all() if m.per_image])
def test_metric_examples_run(name):
    function = METRICS.get(name).function
    module = sys.modules[function.__module__]
    finder, runner = doctest.DocTestFinder(recurse=False), doctest.DocTestRunner()
    for test in finder.find(function, name, globs=vars(module)):
        runner.run(test)
    assert runner.failures == 0


def test_table_reproduces_the_historical_constants():
    assert_historical_contract()


def test_score_pairs_dtypes_come_from_the_records():
    frame = score_pairs(["Hello", "Hello"], ["HELL0", "HELL0"])
    assert {c: str(t) for c, t in frame.dtypes.items()} == {
        m.name: m.dtype for m in METRICS.of(["glyphbench"])
    }
    reference = score_pairs(["Hello"], [""], compat="reference")
    assert set(reference.dtypes.astype(str)) == {"int64"}
    vae = score_pairs(["the cat", ""], ["the", "x"], families=["vae"])
    assert vae["wr"].tolist()[0] == 50.0 and math.isnan(vae["wr"].tolist()[1])


def test_bad_records_and_names_are_refused():
    with pytest.raises(ValueError, match="empty label"):
        Metric("x", chars_read, label=" ", higher_is_better=True, doc="d")
    with pytest.raises(ValueError, match="dtype"):
        Metric("x", chars_read, label="X", higher_is_better=True, doc="d", dtype="int8")
    with pytest.raises(ValueError, match="Ratio or Derived"):
        Metric("x", None, label="X", higher_is_better=True, doc="d")
    with pytest.raises(ValueError, match="differs from family 'glyphbench' in label"):
        register_metric(
            Metric("ned", chars_read, label="X", higher_is_better=True, doc="d", family="toy")
        )
    with pytest.raises(InputError, match="unknown metric family 'nope'"):
        score_pairs(["a"], ["a"], families=["nope"])
    with pytest.raises(ValueError, match="unknown compat mode 'paper'"):
        score_pairs(["a"], ["a"], compat="paper")
    with pytest.raises(InputError, match="unknown metric 'nope'"):
        METRICS.get("nope")


def test_aggregates_mean_ratio_and_derived():
    table = MetricTable()
    for metric in (
        Metric("hits", lambda p: 0, label="Hits", higher_is_better=True, doc="d", family="t"),
        Metric("words", lambda p: 0, label="Words", higher_is_better=True, doc="d", family="t"),
        Metric("p", lambda p: 0.0, label="P", higher_is_better=True, doc="d", family="t"),
        Metric(
            "pooled",
            None,
            label="Pooled",
            higher_is_better=True,
            doc="d",
            family="t",
            aggregate=Ratio("hits", "words"),
        ),
        Metric(
            "double",
            None,
            label="Double",
            higher_is_better=True,
            doc="d",
            family="t",
            aggregate=Derived(("pooled", "p"), lambda pooled, p: pooled + p),
        ),
    ):
        table.add(metric)
    scores = pd.DataFrame({"hits": [1, 3], "words": [2, 6], "p": [0.25, None]})
    # mean of 1/2 and 3/6 is 0.5, and so is the pooled 4/8; p's mean skips NaN
    assert table.aggregate(scores, ["pooled", "p", "double"]) == {
        "pooled": 0.5,
        "p": 0.25,
        "double": 0.75,
    }
    empty = table.aggregate(scores.iloc[:0], ["pooled", "p"])
    assert all(math.isnan(v) for v in empty.values())


def test_pair_computes_shared_results_once():
    pair = Pair("The  Cat", "the hat")
    assert (pair.expected, pair.read, pair.distance) == ("the cat", "the hat", 1)
    assert {"expected", "read", "distance"} <= set(vars(pair))  # cached on the pair
    assert "lcs" not in vars(pair)  # nothing is computed before a metric asks
    assert Pair("A", "a", None).expected == "A"  # None: texts used as given


def run_score(args: list[str]) -> subprocess.CompletedProcess[str]:
    exe = sys.executable.replace("python", "glyphbench")
    return subprocess.run([exe, "score", *args], capture_output=True, text=True)


@pytest.mark.slow
def test_cli_scores_any_family_and_writes_its_summary(tmp_path):
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("expected,ocr\nthe cat,the hat\nExit,exit\n", encoding="utf-8")
    out, summary = tmp_path / "scores.csv", tmp_path / "summary.json"
    result = run_score(
        [str(pairs), "--out", str(out), "--compat", "vae", "--summary", str(summary)]
    )
    assert result.returncode == 0, result.stderr
    assert pd.read_csv(out).columns.tolist() == ["expected", "ocr", "wr", "pa"]
    # wr: 1 of 2 words, 1 of 1; pa: "cat"~"hat" costs 1 of 6 characters, "exit" 0
    expected = {"wr": (50.0 + 100.0) / 2, "pa": (100.0 * (1 - 1 / 6) + 100.0) / 2}
    assert json.loads(summary.read_text(encoding="utf-8")) == pytest.approx(expected)
    result = run_score([str(pairs), "--out", str(out), "--summary", str(summary)])
    assert result.returncode == 0, result.stderr
    headline = json.loads(summary.read_text(encoding="utf-8"))
    assert list(headline) == METRICS.summary_names() and headline["exact_match"] == 0.5


def test_repeated_pairs_get_the_rows_of_their_first_occurrence():
    expected = ["Hello", "cat", "Hello", "dog", "cat", "Hello"]
    read = ["HELL0", "cart", "HELL0", "", "cart", "Hello"]
    together = score_pairs(expected, read)
    one_by_one = pd.concat([score_pairs([e], [r]) for e, r in zip(expected, read, strict=True)])
    pd.testing.assert_frame_equal(together, one_by_one.reset_index(drop=True))


def test_human_study_places_order_the_copied_and_compared_scores() -> None:
    """A human study's scores are the records' ``study`` / ``human`` places."""
    from glyphbench.scoring.table import Metric

    table = MetricTable()

    def record(name: str, study: int = 0, human: int = 0, family: str = "toy") -> Metric:
        return Metric(
            name, lambda pair: 0.0, name, True, "d", family=family, study=study, human=human
        )

    table.add(record("late", study=3))
    table.add(record("first", study=1, human=2))
    table.add(record("unplaced"))
    table.add(record("second", study=2, human=1))
    table.add(record("second", 2, 1, family="toy-zh"))  # a language variant counts once
    assert table.human_names() == ["first", "second", "late"]
    assert table.human_names(compared=True) == ["second", "first"]
    with pytest.raises(ValueError, match="needs a study place"):
        record("alone", human=1)
    with pytest.raises(ValueError, match="digits -1"):
        Metric("neg", None, "n", True, "d", aggregate=Ratio("a", "b"), digits=-1)


def test_aggregate_column_reads_the_metric_under_another_column_name() -> None:
    from glyphbench.scoring.table import METRICS

    rows = pd.DataFrame({"ned": [0.0, 0.0], "ned_vs_human": [1.0, 0.5]})
    assert METRICS.aggregate_column(rows, "ned", "ned_vs_human") == 0.75
    assert METRICS.aggregate_column(rows, "ned", "ned") == 0.0
    assert math.isnan(METRICS.aggregate_column(rows, "ned", "absent"))
    pooled = pd.DataFrame(
        {"longtext_matched": [1, 3], "longtext_total": [4, 4], "before": [0.1, 0.9]}
    )
    # a pooled aggregate keeps reading its own inputs from the other columns
    assert METRICS.aggregate_column(pooled, "longtext_text_score", "before", "longtext") == 0.5
