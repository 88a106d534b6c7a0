"""The image browser's data files hold exactly the report's rows (no browser needed).

``browse/index.js`` and the row and prompt files are read back the way the page reads
them (typed arrays in base64, JSON in script calls) and compared with the results table.
"""

from __future__ import annotations

import base64
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from glyphbench.core.io import write_checksum
from glyphbench.report import write_report
from glyphbench.report.image_browser import APP_FILES, browser_slices
from glyphbench.report.slices import slice_labels
from glyphbench.templates import FOLDER as TEMPLATES
from tests.helpers.report_fixtures import build_run

MODELS = {"toy-good": 0.04, "toy-bad": 0.3, "control:render": 0.0, "control:blank": 1.0}


def read_index(report: Path) -> dict[str, Any]:
    text = (report / "browse" / "index.js").read_text(encoding="utf-8")
    data: dict[str, Any] = json.loads(text.removeprefix("window.GLYPHBENCH_BROWSE = ")[:-2])
    return data


def array(data: dict[str, Any], key: str) -> np.ndarray:
    entry = data["arrays"][key]
    return np.frombuffer(base64.b64decode(entry["data"]), dtype=entry["type"])


def read_files(report: Path, kind: str) -> dict[str, list[Any]]:
    """Every file of ``kind`` (rows, prompts), in order, its columns joined."""
    joined: dict[str, list[Any]] = {}
    files = sorted((report / "browse" / kind).glob("*.js"))
    for number, path in enumerate(files):
        call = re.fullmatch(
            rf'glyphbenchBrowse\.take\("{kind}", (\d+), (.*)\);\n',
            path.read_text(encoding="utf-8"),
            re.S,
        )
        assert call is not None and int(call.group(1)) == number == int(path.stem)
        for name, values in json.loads(call.group(2)).items():
            joined.setdefault(name, []).extend(values)
    return joined


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    root = tmp_path_factory.mktemp("browse")
    run = build_run(root / "run", n_prompts=30, models=MODELS, seeds=(0, 1))
    index = write_report([run], n_boot=20, by=["prompt_type", "char_length"])
    return index.parent, pd.read_parquet(run / "results.parquet")


def test_index_and_files_hold_every_row_in_report_order(built: tuple[Path, pd.DataFrame]) -> None:
    report, frame = built
    data = read_index(report)
    rows, prompts = read_files(report, "rows"), read_files(report, "prompts")
    assert data["n"] == len(frame) == len(rows["ocr"]) == 240
    names = np.array(data["models"])[array(data, "model")]
    summary = pd.read_csv(report / "tables" / "summary.csv")
    assert list(dict.fromkeys(names)) == summary["model"].tolist()  # the report's order
    ids = np.array(prompts["id"])[array(data, "prompt")]
    seeds = np.array(data["keys"]["seed"])[array(data, "key:seed")].astype(int)
    samples = np.array(data["keys"]["sample_index"])[array(data, "key:sample_index")].astype(int)
    keys = list(zip(names, ids, seeds, samples, strict=True))
    assert keys == sorted(keys, key=lambda k: (data["models"].index(k[0]), *k[1:]))
    shown = pd.DataFrame(keys, columns=["model", "prompt_id", "seed", "sample_index"])
    merged = shown.merge(frame, on=["model", "prompt_id", "seed", "sample_index"], how="left")
    assert len(merged) == len(frame) and merged["text"].notna().all()
    assert rows["ocr"] == merged["ocr_text"].fillna("").tolist()
    assert rows["error"] == merged["error"].fillna("").tolist()
    assert rows["image"] == merged["image_path"].fillna("").tolist()
    texts = dict(zip(prompts["id"], prompts["text"], strict=True))
    assert [texts[i] for i in ids] == merged["text"].tolist()
    for metric in data["metrics"]:
        stored = array(data, f"metric:{metric['name']}")
        expected = merged[metric["name"]].to_numpy(dtype="float32")
        np.testing.assert_array_equal(stored, expected)  # NaN where the row failed
    assert data["metrics"][0]["name"] == "ned"  # the primary metric first
    menus = {s["column"]: s["labels"] for s in data["slices"]}
    labels = slice_labels(merged, "char_length").astype(str).to_numpy()
    assert (np.array(menus["char_length"])[array(data, "slice:char_length")] == labels).all()
    outcome = np.array(menus["outcome"])[array(data, "slice:outcome")]
    assert ((outcome == "failed") == (merged["error"] != "").to_numpy()).all()
    assert "seed" in menus  # two seeds: a menu; the report's own slicings come first
    assert list(menus)[:2] == ["prompt_type", "char_length"]
    assert data["runs"] == [{"name": "run", "base": "../"}]


def test_page_is_linked_and_ships_its_app(built: tuple[Path, pd.DataFrame]) -> None:
    report, _ = built
    html = (report / "index.html").read_text(encoding="utf-8")
    assert 'href="browse.html"' in html and 'href="browse.html#model=toy-good"' in html
    page = (report / "browse.html").read_text(encoding="utf-8")
    for name in APP_FILES:
        assert (report / "browse" / name).read_bytes() == (TEMPLATES / name).read_bytes()
        assert f'browse/{name}"' in page
    assert page.count("<label for=") >= page.count("<select ") + page.count("<input ")
    assert all('scope="col"' in th for th in re.findall(r"<th[ >][^>]*", page))


def test_images_are_found_from_a_report_written_elsewhere(tmp_path: Path) -> None:
    first = build_run(tmp_path / "runs" / "a", n_prompts=6, models={"m": 0.1}, run_id="a")
    second = build_run(tmp_path / "runs" / "b", n_prompts=6, models={"m": 0.2}, run_id="b")
    index = write_report([first, second], tmp_path / "shared" / "report", n_boot=10)
    data = read_index(index.parent)
    assert data["runs"] == [
        {"name": "a", "base": "../../runs/a/"},
        {"name": "b", "base": "../../runs/b/"},
    ]
    runs = np.array([r["base"] for r in data["runs"]])[array(data, "run")]
    rows = read_files(index.parent, "rows")
    for base, image in zip(runs, rows["image"], strict=True):
        assert (index.parent / (base + image)).is_file()
    assert sorted(data["models"]) == ["m [a]", "m [b]"]
    assert str(tmp_path) not in (index.parent / "browse" / "index.js").read_text()


def test_a_menu_lists_only_labels_rows_have_and_skips_one_label_attributes() -> None:
    frame = pd.DataFrame(
        {
            "model": ["m"] * 4,
            "prompt_type": pd.Series(["simple", "simple", "complex", None], dtype="string"),
            "lang": pd.Series(["en"] * 4, dtype="string"),
            "has_numbers": pd.Series([True, False, True, None], dtype="boolean"),
            "error": ["", "", "", "boom"],
        }
    )
    menus = {m.column: m for m in browser_slices(frame, {})}
    assert menus["prompt_type"].labels == ["simple", "complex", "(none)"]
    assert menus["prompt_type"].codes.tolist() == [0, 0, 1, 2]
    assert menus["has_numbers"].labels == ["yes", "no", "(none)"]
    assert menus["outcome"].codes.tolist() == [0, 0, 0, 1]
    assert "lang" not in menus  # one label: nothing to filter
    many = pd.DataFrame({"model": "m", "prompt_id": [f"p{i}" for i in range(61)], "error": ""})
    by_prompt = {"prompt_id": slice_labels(many, "prompt_id")}  # `--by prompt_id`
    assert [m.column for m in browser_slices(many, by_prompt)] == []  # 61 labels: no menu


def test_rows_not_read_yet_are_left_out_as_in_every_table(tmp_path: Path) -> None:
    run = build_run(tmp_path / "run", n_prompts=10, models={"m": 0.1, "n": 0.2}, n_errors=0)
    results = pd.read_parquet(run / "results.parquet")
    unread = (results["model"] == "n") & results["prompt_id"].isin(["p0001", "p0002"])
    results.loc[unread, ["ocr_text", *[c for c in ("ned", "exact_match") if c in results]]] = None
    results.to_parquet(run / "results.parquet", index=False)
    write_checksum(run / "results.parquet")  # the table as `run --read-later` leaves it
    index = write_report([run], n_boot=10)
    data = read_index(index.parent)
    per_image = pd.read_csv(index.parent / "tables" / "per_image.csv")
    assert data["n"] == len(per_image) == len(results) - 2
    ids = np.array(read_files(index.parent, "prompts")["id"])[array(data, "prompt")]
    names = np.array(data["models"])[array(data, "model")]
    shown = set(zip(names, ids, strict=True))
    assert ("n", "p0001") not in shown and ("m", "p0001") in shown and ("n", "p0003") in shown
    menus = {s["column"]: s["labels"] for s in data["slices"]}
    codes = array(data, "slice:prompt_type")  # the report's labels, cut to the read rows
    assert len(codes) == data["n"] and sorted(set(codes)) == list(range(len(menus["prompt_type"])))


def test_a_row_without_a_seed_is_browsed_with_an_empty_seed(tmp_path: Path) -> None:
    """A missing seed (pandas' NA in an Int64 column) stopped the report with "boolean value
    of NA is ambiguous"."""
    run = build_run(tmp_path / "run", n_prompts=4, models={"m": 0.1, "n": 0.2}, n_errors=0)
    results = pd.read_parquet(run / "results.parquet")
    results["seed"] = results["seed"].astype("Int64")
    results.loc[3, "seed"] = pd.NA
    results.to_parquet(run / "results.parquet", index=False)
    write_checksum(run / "results.parquet")
    data = read_index(write_report([run], n_boot=10).parent)
    assert data["n"] == len(results)
    seeds = data["keys"]["seed"]
    assert "" in seeds and "0" in seeds


def test_labels_with_dollar_signs_are_drawn_as_text_not_parsed_as_math(tmp_path: Path) -> None:
    """matplotlib reads "$...$" as math: a model or slice named "$\\frac$" stopped the
    report with a ParseSyntaxException."""
    run = build_run(tmp_path / "run", n_prompts=8, models={"m": 0.1, "n": 0.2}, n_errors=0)
    results = pd.read_parquet(run / "results.parquet")
    results["model"] = results["model"].replace({"m": "Model $\\frac$ costs $5"})
    results["group"] = np.where(results.index % 2 == 0, "$\\frac$", "$x")
    results.to_parquet(run / "results.parquet", index=False)
    write_checksum(run / "results.parquet")
    index = write_report([run], n_boot=10)
    figures = "".join(p.read_text(encoding="utf-8") for p in index.parent.rglob("*.svg"))
    assert "Model $\\frac$ costs $5" in figures.replace("&#36;", "$")


def test_a_bidirectional_override_in_a_label_is_shown_escaped_on_the_page(
    tmp_path: Path,
) -> None:
    """A model named with U+202E reversed the rest of the page's sentence about it."""
    run = build_run(tmp_path / "run", n_prompts=8, models={"m": 0.1, "n": 0.2}, n_errors=0)
    results = pd.read_parquet(run / "results.parquet")
    results["model"] = results["model"].replace({"m": "abc\u202egnp.exe\u200b"})
    results.to_parquet(run / "results.parquet", index=False)
    write_checksum(run / "results.parquet")
    page = write_report([run], n_boot=10).read_text(encoding="utf-8")
    assert "\u202e" not in page and "\u200b" not in page
    assert "abc\\u202egnp.exe\\u200b" in page
