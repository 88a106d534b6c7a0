"""benchmarks/second_reading.py: two people's readings of the same real images, and the
default reader against each; docs/readers.md's table is what it computes."""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

import pandas as pd
import pytest

from benchmarks.second_reading import agreement, figures, load_second_readings
from glyphbench.calibration.real_set import load_real_set, real_rows, shipped_real_set
from glyphbench.core.errors import InputError
from tests.helpers.paths import REPO_ROOT

REAL = REPO_ROOT / "tests" / "data" / "real_t2i"

#: A row of docs/readers.md's table of the second reading.
ROW = re.compile(
    r"^\| (?P<reading>second person|default reader) \| (?P<against>first person|second person) "
    r"\| (?P<n>\d+) \| (?P<exact>[\d.]+)% \| (?P<ned>[\d.]+) \| (?P<mae>[\d.]+) "
    r"\[(?P<lo>[\d.]+), (?P<hi>[\d.]+)\] \| \[[\d.]+, [\d.]+\] \| (?P<bias>-?[\d.]+) \|",
    re.MULTILINE,
)


def test_the_second_readings_are_of_held_out_images_the_sample_rule_picks() -> None:
    """The 60 held-out images with intended text of the smallest file SHA-256, each once."""
    rows, second = load_second_readings(REAL)
    assert len(rows) == len(second) == 60 and rows["file"].is_unique
    assert (rows["part"] == "held-out").all() and (rows["intended_text"] != "").all()
    whole = load_real_set(REAL)  # the rule, applied to the whole manifest
    candidates = whole[(whole["part"] == "held-out") & (whole["intended_text"] != "")]
    digests = candidates["path"].map(lambda p: hashlib.sha256(Path(p).read_bytes()).hexdigest())
    assert set(rows["file"]) == set(candidates.loc[digests.sort_values().index[:60], "file"])


def test_a_reading_of_itself_agrees_fully_and_an_empty_one_not_at_all() -> None:
    rows, _ = load_second_readings(REAL)
    same = agreement(real_rows(rows, rows["human_reading"].tolist()))
    assert same["exact"] == 1.0 and same["ned"] == 1.0 and same["score_error"] == 0.0
    empty = agreement(real_rows(rows, [""] * len(rows)))
    assert empty["exact"] == 0.0 and empty["bias"] < 0 and empty["score_error"] > 0.5


def test_a_second_reading_file_naming_an_unknown_image_names_its_line(tmp_path: Path) -> None:
    manifest = Path(str(shipped_real_set()))
    shutil.copytree(manifest.parent / "images", tmp_path / "images")
    shutil.copyfile(manifest, tmp_path / "manifest.csv")
    second = pd.read_csv(REAL / "second_readings.csv", dtype=str, keep_default_na=False)
    second.loc[2, "file"] = "images/nobody.jpg"
    second.to_csv(tmp_path / "second_readings.csv", index=False)
    with pytest.raises(InputError, match=r"second_readings.csv:4: 'images/nobody.jpg'"):
        load_second_readings(tmp_path)


def test_the_documented_agreement_is_what_the_script_computes() -> None:
    pytest.importorskip("rapidocr_onnxruntime")
    measured = figures(REAL, REAL / "readings")
    text = (REPO_ROOT / "docs" / "readers.md").read_text(encoding="utf-8")
    documented = {(m["reading"], m["against"]): m for m in ROW.finditer(text)}
    keys = {
        ("second person", "first person"): "second_person",
        ("default reader", "first person"): "reader_vs_first",
        ("default reader", "second person"): "reader_vs_second",
    }
    assert set(documented) == set(keys)
    for pair, key in keys.items():
        doc, got = documented[pair], measured[key]
        assert int(doc["n"]) == got["images"], pair
        assert float(doc["exact"]) == pytest.approx(100 * got["exact"], abs=0.05), pair
        assert float(doc["ned"]) == pytest.approx(got["ned"], abs=0.0005), pair
        assert float(doc["mae"]) == pytest.approx(got["score_error"], abs=0.0005), pair
        assert float(doc["lo"]) == pytest.approx(got["interval"][0], abs=0.0005), pair
        assert float(doc["hi"]) == pytest.approx(got["interval"][1], abs=0.0005), pair
        assert float(doc["bias"]) == pytest.approx(got["bias"], abs=0.0005), pair
