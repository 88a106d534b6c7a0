"""``glyphbench readers compare RUN A B``: two stored readers of one run, in strict JSON
(a figure that cannot be computed is null, never NaN), and one-line refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli_runs import invoke_cli, run_cli
from tests.helpers.runner_helper import register, write_prompts_csv

register()


def _strict(text: str) -> dict:
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture
def read_twice(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """A run of controls alone read by pixelocr, then re-read by flipocr (both stored)."""
    csv = write_prompts_csv(tmp_path / "prompts.csv", 4)
    out = tmp_path / "run"
    models = "control:render?size=32,control:blank?size=32"
    args = ["run", "-m", models, "--ocr", "pixelocr", "--prompts", f"csv:{csv}", "--out", out]
    code, err = run_cli([*args, "--no-progress"], capsys)
    assert code == 0, err
    code, err = run_cli(["rescore", out, "--ocr", "flipocr", "--no-progress"], capsys)
    assert code == 0, err
    capsys.readouterr()
    return out


def test_two_readers_are_compared_in_strict_json(
    read_twice: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["readers", "compare", read_twice, "pixelocr", "flipocr"]
    code, out, err = invoke_cli(args, capsys)
    assert code == 0, err
    answer = _strict(out)
    assert 0.0 <= answer["agreement"] <= 1.0
    # only controls: no pair of models to rank, so no share of flips (it printed NaN)
    assert answer["rank_flips"] is None


@pytest.mark.parametrize(
    "extra, said",
    [
        (["pixelocr", "pixelocr"], "give two different readers"),
        (["pixelocr", "flipocr", "--metric", "bogus"], "--metric: unknown metric 'bogus'"),
    ],
)
def test_a_bad_comparison_is_one_line(
    read_twice: Path, capsys: pytest.CaptureFixture[str], extra: list[str], said: str
) -> None:
    code, err = run_cli(["readers", "compare", read_twice, *extra], capsys)
    assert code == 2 and said in err and err.count("\n") == 1, err


def test_readers_list_counts_distinct_images_and_compare_counts_rows(
    read_twice: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import pandas as pd

    rows = pd.read_parquet(read_twice / "results.parquet")
    distinct, n_rows = rows["image_sha256"].nunique(), len(rows)
    assert distinct < n_rows  # the blank control's images are one image
    code, out, err = invoke_cli(["readers", "list", read_twice], capsys)
    assert code == 0, err
    lines = sorted(out.splitlines())
    assert [line.split("\t")[:2] for line in lines] == [
        ["flipocr", f"{distinct} distinct images"],
        ["pixelocr", f"{distinct} distinct images"],
    ]
    code, out, err = invoke_cli(["readers", "compare", read_twice, "pixelocr", "flipocr"], capsys)
    assert _strict(out)["images"] == n_rows
