"""``glyphbench prompts ...`` end to end, in-process."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from typer.testing import CliRunner

from glyphbench.cli.root import app
from tests.helpers.prompt_sources import write_default
from tests.helpers.prompts_cli import run_main

runner = CliRunner()


@pytest.mark.slow
def test_select_with_config_writes_105(textinvision_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "sel.parquet"
    result = runner.invoke(
        app,
        [
            "prompts",
            "select",
            f"textinvision:{textinvision_dir}",
            "--config",
            str(textinvision_dir / "config.json"),
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    frame = pd.read_parquet(out)
    assert len(frame) == 105
    assert "selected 105 prompts" in result.output


@pytest.mark.slow
def test_validate_json_and_strict(textinvision_dir: Path) -> None:
    result = runner.invoke(
        app, ["prompts", "validate", f"textinvision:{textinvision_dir}", "--json", "--strict"]
    )
    assert result.exit_code == 1
    records = [json.loads(line) for line in result.output.splitlines() if line.strip()]
    kinds = {r["kind"] for r in records}
    assert {
        "ambiguous_slot",
        "mojibake",
        "invisible_char",
        "whitespace",
        "duplicate",
        "category_spelling",
        "stated_mismatch",
    } <= kinds
    assert all(set(r) == {"kind", "file", "line", "key", "detail"} for r in records)
    plain = runner.invoke(app, ["prompts", "validate", f"textinvision:{textinvision_dir}"])
    assert plain.exit_code == 0
    counts = [line.split() for line in plain.output.splitlines() if line.startswith("  ")]
    assert counts[0] == [
        "stated_mismatch",
        str(sum(r["kind"] == "stated_mismatch" for r in records)),
    ]


@pytest.mark.slow
def test_stats_json_and_chart(tmp_path: Path) -> None:
    folder = write_default(tmp_path / "d")
    chart = tmp_path / "chart.png"
    result = runner.invoke(
        app, ["prompts", "stats", f"default:{folder}", "--json", "--chart", str(chart)]
    )
    assert result.exit_code == 0, result.output
    stats = json.loads(result.output)
    assert stats["rows"] == 27
    assert stats["prompt_type"] == {"complex": 8, "real_world": 3, "simple": 16}
    assert list(stats["prompt_type"]) == ["simple", "complex", "real_world"]  # display order
    bins = list(stats["char_length"])
    assert bins == sorted(bins, key=lambda b: int(b.split("-")[0].rstrip("+")))
    assert stats["group"] == {"(none)": 24, "Advertisements": 1, "Posters": 2}
    # 8 texts x 3 templates + 3 real-world texts, each counted once per row
    assert sum(stats["cefr"].values()) == 27
    assert stats["flags"]["has_numbers"] == 3  # "50% OFF" with each of 3 templates
    assert chart.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # the pool shortcut agrees with counting the materialised rows
    export = tmp_path / "all.parquet"
    assert (
        runner.invoke(
            app, ["prompts", "export", f"default:{folder}", "--out", str(export)]
        ).exit_code
        == 0
    )
    direct = json.loads(runner.invoke(app, ["prompts", "stats", str(export), "--json"]).output)
    for key in ("prompt_type", "group", "cefr", "char_length", "word_count", "flags"):
        assert direct[key] == stats[key], key
    table = runner.invoke(app, ["prompts", "stats", f"default:{folder}"])
    assert table.exit_code == 0 and "prompt_type" in table.output


def test_the_chart_is_written_in_the_format_its_name_says(tmp_path: Path) -> None:
    """.svg is SVG; a name of a format not written (.jpg) is refused before anything is
    written (it held PNG bytes)."""
    folder = write_default(tmp_path / "d")
    svg = tmp_path / "chart.svg"
    result = runner.invoke(app, ["prompts", "stats", f"default:{folder}", "--chart", str(svg)])
    assert result.exit_code == 0, result.output
    assert b"<svg" in svg.read_bytes()[:400]
    jpg = tmp_path / "chart.jpg"
    refused = runner.invoke(app, ["prompts", "stats", f"default:{folder}", "--chart", str(jpg)])
    assert "--chart" in str(refused.exception) and ".png, .svg, .pdf" in str(refused.exception)
    assert not jpg.exists()


def test_export_and_show(tmp_path: Path) -> None:
    folder = write_default(tmp_path / "d")
    for suffix in ("parquet", "jsonl", "csv"):
        out = tmp_path / f"all.{suffix}"
        result = runner.invoke(app, ["prompts", "export", f"default:{folder}", "--out", str(out)])
        assert result.exit_code == 0, result.output
    frame = pd.read_parquet(tmp_path / "all.parquet")
    assert len(frame) == 27
    assert {"prompt_id", "cefr", "rare", "kind", "prompt_word_count"} <= set(frame.columns)
    shown = runner.invoke(app, ["prompts", "show", f"default:{folder}", "-n", "3"])
    assert shown.exit_code == 0 and "27 prompts" in " ".join(shown.output.split())  # any width


def test_a_selection_of_no_prompt_is_written_in_every_format(tmp_path: Path) -> None:
    """An empty selection gives a file of the columns and no row; CSV raised a TypeError
    (its carriage-return check could not reduce an empty frame)."""
    folder = write_default(tmp_path / "d")
    for suffix in ("parquet", "jsonl", "csv"):
        out = tmp_path / f"none.{suffix}"
        args = ["prompts", "select", f"default:{folder}", "--where", "char_length > 10**6"]
        result = runner.invoke(app, [*args, "--out", str(out)])
        assert result.exit_code == 0, result.output
        assert "selected 0 prompts" in result.output
    assert pd.read_csv(tmp_path / "none.csv").empty
    assert list(pd.read_csv(tmp_path / "none.csv")) == list(
        pd.read_parquet(tmp_path / "none.parquet")
    )


def test_select_sample_where_cli(tmp_path: Path) -> None:
    folder = write_default(tmp_path / "d")
    out = tmp_path / "s.csv"
    args = [
        "prompts",
        "select",
        f"default:{folder}",
        "--sample",
        "5",
        "--stratify",
        "prompt_type,group",
        "--seed",
        "2",
        "--out",
        str(out),
    ]
    assert runner.invoke(app, args).exit_code == 0
    first = pd.read_csv(out)["prompt_id"].tolist()
    assert runner.invoke(app, args).exit_code == 0
    assert pd.read_csv(out)["prompt_id"].tolist() == first and len(first) == 5
    where = runner.invoke(
        app,
        [
            "prompts",
            "select",
            f"default:{folder}",
            "--where",
            "has_numbers and prompt_type == 'simple'",
            "--out",
            str(out),
        ],
    )
    assert where.exit_code == 0
    assert pd.read_csv(out)["text"].tolist() == ["50% OFF", "50% OFF"]


def test_freq_counts_corpus(tmp_path: Path) -> None:
    folder = write_default(tmp_path / "d")
    corpus = tmp_path / "captions.txt"
    corpus.write_text(
        "A house with a garden\nthe HOUSE\nhousekeeping tips\n50% off everything today\n",
        encoding="utf-8",
    )
    jsonl = tmp_path / "c.jsonl"
    jsonl.write_text('{"caption": "garden party"}\n{"caption": "a garden"}\n', encoding="utf-8")
    out = tmp_path / "freq.parquet"
    result = runner.invoke(
        app,
        [
            "prompts",
            "freq",
            f"default:{folder}",
            "--corpus",
            f"laion={corpus}",
            "--corpus",
            f"mine={jsonl}",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    frame = pd.read_parquet(out)
    by_text = frame.drop_duplicates("text").set_index("text")
    assert by_text.loc["house", "laion_freq"] == 2  # "housekeeping" is not a whole-word match
    assert by_text.loc["garden", "laion_freq"] == 1
    assert by_text.loc["50% OFF", "laion_freq"] == 1
    assert by_text.loc["kerfuffle", "laion_freq"] == 0
    assert by_text.loc["garden", "mine_freq"] == 2
    texts_only = tmp_path / "t.csv"
    result = runner.invoke(
        app,
        [
            "prompts",
            "freq",
            f"default:{folder}",
            "--corpus",
            f"laion={corpus}",
            "--out",
            str(texts_only),
            "--texts-only",
        ],
    )
    assert result.exit_code == 0
    assert dict(pd.read_csv(texts_only).values.tolist())["house"] == 2


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["prompts", "stats", "csv:/nonexistent/file.csv"], "file not found"),
        (
            [
                "prompts",
                "select",
                "default:{dir}",
                "--config",
                "{dir}/bad.json",
                "--out",
                "{dir}/o.csv",
            ],
            ":3: malformed JSON",
        ),
        (
            ["prompts", "select", "csv:{dir}/t.csv?text=nope", "--out", "{dir}/o.csv"],
            "missing column 'nope'",
        ),
        (
            [
                "prompts",
                "select",
                "default:{dir}",
                "--where",
                "no_such_column > 1",
                "--out",
                "{dir}/o.csv",
            ],
            "--where",
        ),
        (
            ["prompts", "freq", "default:{dir}", "--corpus", "laion", "--out", "{dir}/o.csv"],
            "NAME=PATH",
        ),
    ],
)
def test_bad_input_is_one_line_exit_2(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
    needle: str,
) -> None:
    folder = write_default(tmp_path / "d")
    (folder / "bad.json").write_text(
        '{\n "texts": {\n  "char_length_min": {"value": 3} "x"\n}}\n', encoding="utf-8"
    )
    pd.DataFrame({"a": ["x"]}).to_csv(folder / "t.csv", index=False)
    code, _, err = run_main(monkeypatch, capsys, *[a.format(dir=folder) for a in args])
    assert code == 2
    assert needle in err
    assert len(err.strip().splitlines()) == 1


def test_show_sample_shows_a_set_smaller_than_n(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``show --sample`` on fewer than 10 rows shows them all (it said --sample 10 is larger
    than the pool)."""
    csv = tmp_path / "ok.csv"
    csv.write_text('prompt,text\n"a sign ""hi""",hi\n"a mug ""yo""",yo\n', encoding="utf-8")
    from tests.helpers.cli_runs import invoke_cli

    code, out, err = invoke_cli(["prompts", "show", f"csv:{csv}", "--sample"], capsys)
    assert code == 0, err
    shown = " ".join(out.split())  # the console may wrap the title at a long temporary path
    assert "2 prompts" in shown and "hi" in shown and "yo" in shown


def test_show_names_its_own_option_for_a_negative_count(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    csv = tmp_path / "ok.csv"
    csv.write_text('prompt,text\n"a sign ""hi""",hi\n', encoding="utf-8")
    code, _, err = run_main(monkeypatch, capsys, "prompts", "show", f"csv:{csv}", "-n", "-3")
    assert code == 2 and err.strip() == "error: -n/--n must be >= 0, got -3"


@pytest.mark.parametrize(
    ("name", "content", "said"),
    [
        ("latin.txt", b"hello\ncaf\xe9 caf\xe9\n", "latin.txt:2: not UTF-8 text"),
        ("latin.csv", b"caption\ncaf\xe9\n", "latin.csv: not UTF-8 text"),
        ("cut.txt.gz", None, "cut.txt.gz: cannot read: Compressed file ended"),
        ("plain.gz", b"garbage", "plain.gz: cannot read: Not a gzipped file"),
    ],
)
def test_freq_names_a_corpus_that_is_not_utf8_or_a_damaged_gzip(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    content: bytes | None,
    said: str,
) -> None:
    """A Latin-1 corpus counted "café" 0 times with exit 0 (its bytes were replaced); a
    truncated gzip printed "Aborted!"."""
    import gzip

    folder = write_default(tmp_path / "d")
    corpus = tmp_path / name
    corpus.write_bytes(content if content is not None else gzip.compress(b"a garden\n")[:15])
    out = tmp_path / "freq.csv"
    code, _, err = run_main(
        monkeypatch, capsys, "prompts", "freq", f"default:{folder}", "--corpus",
        f"c={corpus}", "--out", str(out),
    )  # fmt: skip
    assert code == 2 and said in err and err.count("\n") == 1, err
    assert not out.exists()


def test_validate_of_a_source_with_no_prompts_is_refused_as_the_run_refuses_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A header-only CSV gave "0 finding(s)", exit 0, where `run` refuses it."""
    table = tmp_path / "hdr.csv"
    table.write_text("prompt_id,prompt,text\n", encoding="utf-8")
    code, _, err = run_main(monkeypatch, capsys, "prompts", "validate", f"csv:{table}")
    assert code == 2 and "no prompts in this source" in err, err
