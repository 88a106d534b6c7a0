"""The reader calibration card: an autocorrecting reader is caught, a faithful one is not."""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from rapidfuzz.distance import Levenshtein
from typer.testing import CliRunner

from glyphbench.calibration.calibrate import (
    calibrate,
    classify_edits,
    control_images,
    faithfulness,
    read_real_set,
    warning,
)
from glyphbench.calibration.long_text import (
    LONG_TEXTS,
    long_text_images,
    long_text_rows,
    long_text_summary,
)
from glyphbench.calibration.reader_error import load_reader_error
from glyphbench.calibration.real_set import (
    RESERVED_REPOSITORIES,
    TUNE_REPOSITORIES,
    load_real_set,
    real_rows,
    real_summary,
    repository_part,
    score_error_table,
    shipped_real_set,
)
from glyphbench.cli.root import app
from glyphbench.core.errors import InputError
from glyphbench.engine.reading import image_digest
from glyphbench.readers.base import Reader, Reading
from tests.helpers.paths import REPO_ROOT

TEXTS = ["Digital Dreamscapes", "Fresh Bread", "Grand Opening Today", "Quiet Library", "Welcome"]


def _frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "prompt_id": [f"p{i}" for i in range(len(TEXTS))],
            "prompt": [f'A sign that says "{text}".' for text in TEXTS],
            "text": TEXTS,
            "lang": "en",
            "kind": ["phrase", "phrase", "phrase", "phrase", "word"],
        }
    )


class Oracle(Reader):
    """Reads exactly what each control image shows (it is told, by pixel digest)."""

    name = "oracle"

    def __init__(self, drawn: dict[str, str], dictionary: Sequence[str] = ()) -> None:
        self.drawn = drawn
        self.dictionary = [word for text in dictionary for word in text.split()]

    @property
    def version(self) -> str:
        return "oracle 1"

    def word(self, word: str) -> str:
        return word

    def read(self, images: Sequence[Any]) -> list[Reading]:
        texts = [self.drawn[image_digest(image)] for image in images]
        return [Reading(" ".join(self.word(w) for w in text.split())) for text in texts]


class Autocorrector(Oracle):
    """Reads what is drawn, then replaces each word by the nearest dictionary word."""

    name = "autocorrector"

    def word(self, word: str) -> str:
        return min(self.dictionary, key=lambda known: Levenshtein.distance(known, word))


def _drawn(rates: Sequence[float]) -> dict[str, str]:
    return {image_digest(i.image): i.drawn for i in control_images(_frame(), rates, size=96)}


def test_an_autocorrecting_reader_has_faithfulness_near_zero_and_a_full_ceiling() -> None:
    rates = (0.1, 0.2)
    card = calibrate(Autocorrector(_drawn(rates), TEXTS), _frame(), rates=rates, size=96)
    overall = card.summary()["overall"]
    assert overall["render_exact"] == 1.0 and overall["render_ned"] == 1.0
    assert overall["typos_corrected"] > 5
    assert overall["typo_faithfulness"] <= 0.1
    assert overall["blank_hallucination"] == 0.0
    assert "corrects misspellings" in card.markdown()


def test_a_faithful_reader_reports_every_typo_as_written(tmp_path: Path) -> None:
    rates = (0.1, 0.2)
    card = calibrate(Oracle(_drawn(rates)), _frame(), rates=rates, size=96)
    overall = card.summary()["overall"]
    assert overall["typo_faithfulness"] == 1.0 and overall["typos_written"] > 5
    assert overall["render_exact"] == 1.0
    path = card.write(tmp_path / "card")
    assert "| en | 20 |" in path.read_text() and (tmp_path / "card" / "card.json").is_file()
    assert warning("oracle", overall["typo_faithfulness"]) is None

    # A new card replaces the folder whole: an earlier card's real-image part is not left
    # beside one that has none (its page would describe another reader's readings).
    for name in ("real_images.csv", "real_images.html"):
        (tmp_path / "card" / name).write_text("an earlier card's\n")
    card.write(tmp_path / "card")
    assert sorted(p.name for p in (tmp_path / "card").iterdir()) == [
        "card.json",
        "card.md",
        "readings.csv",
    ]
    (tmp_path / "card" / "notes.txt").write_text("mine\n")  # not a card's: not deleted
    with pytest.raises(InputError, match=r"notes\.txt: not written by a calibration card"):
        card.write(tmp_path / "card")
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "mine.txt").write_text("mine\n")
    with pytest.raises(InputError, match="not a calibration card folder"):
        card.write(tmp_path / "notes")
    assert (tmp_path / "notes" / "mine.txt").read_text() == "mine\n"


def test_edits_are_classified_one_by_one() -> None:
    # two typos: one read as drawn, one corrected back
    verdicts = classify_edits("fresh bread", "frXsh brexd", "frXsh bread")
    assert verdicts == Counter(written=1, corrected=1)
    assert faithfulness(verdicts) == 0.5
    # a deletion read as drawn, then an insertion corrected away
    assert classify_edits("welcome", "welome", "welome") == Counter(written=1)
    assert classify_edits("welcome", "welcomme", "welcome") == Counter(corrected=1)
    # a case-only typo is invisible after normalisation: nothing to classify
    assert classify_edits("Welcome", "WElcome", "welcome") == Counter()


@pytest.mark.slow
def test_calibrate_command_writes_the_card_for_tesseract(tmp_path: Path) -> None:
    from glyphbench.readers.tesseract import missing_binary

    if missing_binary():
        pytest.skip("tesseract binary not installed")
    out = tmp_path / "card"
    result = CliRunner().invoke(
        app,
        [
            "readers",
            "calibrate",
            "--reader",
            "tesseract",
            "--out",
            str(out),
            "--per-lang",
            "2",
            "--rates",
            "0.2",
            "--size",
            "128",
            "--no-long",
            "--real-limit",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output
    text = (out / "card.md").read_text()
    assert "Reader calibration card: `tesseract`" in text and "| en |" in text
    assert "| zh |" not in text  # tesseract?lang=eng reads no Chinese: no Chinese prompts
    assert "## Real text-to-image outputs" in text and "## Long text" not in text
    real = pd.read_csv(out / "real_images.csv")
    assert len(real) == 2
    card = load_reader_error(out)  # the errors a report widens its intervals by
    assert (card.reader, card.part) == ("tesseract", "all")
    scored = real[real["score_reader"].notna()]
    assert card.n == len(scored) and card.clusters is not None
    assert card.errors.tolist() == pytest.approx(
        (scored["score_reader"] - scored["score_human"]).tolist(), abs=1e-6
    )


@pytest.mark.slow
def test_calibrate_command_runs_the_tiny_vlm(tmp_path: Path) -> None:
    pytest.importorskip("transformers")
    from glyphbench.readers.tiny_vlm import build_tiny_qwen_vl

    folder = build_tiny_qwen_vl(tmp_path / "tiny-vlm")
    out = tmp_path / "card"
    result = CliRunner().invoke(
        app,
        [
            "readers",
            "calibrate",
            "--reader",
            f"vlm:{folder}?max_new_tokens=4",
            "--out",
            str(out),
            "--per-lang",
            "1",
            "--rates",
            "0.2",
            "--size",
            "64",
            "--no-long",
            "--no-real",
        ],
    )
    assert result.exit_code == 0, result.output
    card = (out / "card.md").read_text()
    assert "| en |" in card and "| zh |" in card  # the VLM reads both


# --------------------------------------------------------------------------- long text


def test_long_text_counts_merged_words_as_lost() -> None:
    images = long_text_images(LONG_TEXTS[:2], ["DejaVuSans", "DejaVuSerif"], [14, 28])
    assert len(images) == 8 and len({i.image.size for i in images}) > 1  # wrapping varies
    exact = long_text_summary(long_text_rows(images, [i.text for i in images]))
    assert exact["overall"]["words_per_word"] == 1.0 and exact["overall"]["word_recall"] == 1.0
    merged = [i.text.replace(" ", "") for i in images]  # a reader that drops every space
    summary = long_text_summary(long_text_rows(images, merged))
    words = sum(len(i.text.split()) for i in images)
    assert summary["overall"]["words_per_word"] == pytest.approx(len(images) / words)  # 1 each
    assert summary["overall"]["word_recall"] == 0.0 and summary["overall"]["ned"] > 0.75
    assert set(summary["by_size"]) == {14, 28} and set(summary["by_font"]) == {
        "DejaVuSans",
        "DejaVuSerif",
    }


def test_rapidocr_reads_large_long_text_with_its_words() -> None:
    pytest.importorskip("rapidocr_onnxruntime")
    from glyphbench.readers import get_reader

    images = long_text_images(LONG_TEXTS[:1], ["DejaVuSans"], [28])
    reading = get_reader("rapidocr").read([images[0].image])[0].text
    rows = long_text_rows(images, [reading])
    assert rows.loc[0, "ned"] > 0.8 and rows.loc[0, "read_words"] >= 1


# --------------------------------------------------------------------------- real images

#: MIT-DeepFloyd: deep-floyd/IF's MIT text with one added condition (real_t2i/SOURCES.md).
LICENCES = {"MIT", "MIT-DeepFloyd", "Apache-2.0", "CC-BY-4.0", "CC0-1.0", "BSD-3-Clause"}


def _real() -> pd.DataFrame:
    manifest = shipped_real_set()
    assert manifest is not None, "tests/data/real_t2i/manifest.csv is missing"
    return load_real_set(manifest)


def _thumbnail(image: Any) -> np.ndarray:
    """A 16 x 16 grey thumbnail less its mean: the same picture re-encoded or rescaled keeps it."""
    from PIL import Image

    grey = np.asarray(image.convert("L").resize((16, 16), Image.BILINEAR), dtype=float)
    return (grey - grey.mean()).ravel()


def _thumbnail_distances(thumbnails: np.ndarray) -> np.ndarray:
    """Mean absolute difference (grey levels) of every two thumbnails; inf on the diagonal.
    Two outputs of one prompt at different settings of one model (flux2.swift's bf16 and
    8-bit runs) lie about 3 apart; one picture saved twice, well under 1."""
    distances = np.abs(thumbnails[:, None, :] - thumbnails[None, :, :]).mean(axis=-1)
    np.fill_diagonal(distances, np.inf)
    return distances


def test_one_picture_saved_again_is_near_its_thumbnail() -> None:
    """The check of the set's well-formedness finds a picture saved again smaller and at lower
    JPEG quality, and tells apart two outputs of one prompt at two settings of one model."""
    import io

    from PIL import Image

    frame = _real()
    paths = frame.set_index("file")["path"]
    with Image.open(paths["images/yonaskolb-flux2swift_01.jpg"]) as image:
        buffer = io.BytesIO()
        image.resize((image.width * 3 // 4, image.height * 3 // 4)).save(buffer, "JPEG", quality=60)
        original = _thumbnail(image)
    with Image.open(buffer) as copy:
        saved_again = _thumbnail(copy)
    with Image.open(paths["images/yonaskolb-flux2swift_02.jpg"]) as image:
        other_setting = _thumbnail(image)
    distances = _thumbnail_distances(np.stack([original, saved_again, other_setting]))
    assert distances[0, 1] < 1.0 <= distances[0, 2]


def test_a_manifest_listing_one_image_twice_names_both_lines(tmp_path: Path) -> None:
    manifest = Path(str(shipped_real_set()))
    frame = pd.read_csv(manifest, dtype=str, keep_default_na=False).head(3)
    (tmp_path / "images").mkdir()
    for file in frame["file"]:
        shutil.copyfile(manifest.parent / file, tmp_path / file)
    shutil.copyfile(manifest.parent / frame["file"][0], tmp_path / "images" / "copy.jpg")
    frame.loc[2, "file"] = "images/copy.jpg"  # the first row's picture under another name
    frame.to_csv(tmp_path / "manifest.csv", index=False)
    with pytest.raises(InputError, match=r"manifest.csv:4: image 'images/copy.jpg' is .* line 2"):
        load_real_set(tmp_path)


def test_the_shipped_real_set_is_well_formed() -> None:
    from PIL import Image

    frame = _real()
    assert len(frame) >= 40 and frame["model"].nunique() >= 4
    assert frame["file"].is_unique and set(frame["licence"]) <= LICENCES
    assert frame["commit"].str.fullmatch("[0-9a-f]{40}").all()
    assert set(frame["setting"]) == {"design", "scene"}
    folder = Path(str(shipped_real_set())).parent
    sources = (folder / "SOURCES.md").read_text(encoding="utf-8")
    assert all(repo in sources for repo in frame["source_repo"].unique())
    sizes, thumbnails = [], []
    for path in frame["path"]:
        with Image.open(path) as image:
            image.load()
            assert max(image.size) <= 1024 and image.mode == "RGB"
            thumbnails.append(_thumbnail(image))
        sizes.append(Path(path).stat().st_size)
    # no picture twice, not even re-encoded or rescaled (the loader refuses the same bytes)
    nearest = _thumbnail_distances(np.stack(thumbnails))
    twins = np.argwhere(np.triu(nearest < 1.0))
    assert not [(frame["file"][i], frame["file"][j]) for i, j in twins]
    # JPEG quality 90 at 1024 px: about 130 KiB an image on average, none over 1 MiB; a budget
    # per image, so that the set may grow while an image saved another way still fails here
    assert sum(sizes) <= len(sizes) * 130 * 2**10 and max(sizes) <= 2**20
    # where the prompt quotes text, the intended text is that text
    known = frame[frame["intended_text"] != ""]
    assert len(known) >= 20 and known["model"].nunique() >= 4
    assert all(
        w in p
        for p, t in zip(known["prompt"], known["intended_text"], strict=True)
        for w in t.split()
    )


def _spaced(text: str) -> str:
    return " ".join(text.split())


def test_the_documented_counts_of_the_real_set_are_those_of_its_manifest() -> None:
    """README, docs/readers.md and SOURCES.md give the set's size as it is now: a row added
    without updating them fails here, not in a reader's hands."""
    frame = _real()
    known = frame[frame["intended_text"] != ""]
    docs = _spaced((REPO_ROOT / "docs" / "readers.md").read_text(encoding="utf-8"))
    readme = _spaced((REPO_ROOT / "README.md").read_text(encoding="utf-8"))
    sources_file = Path(str(shipped_real_set())).parent / "SOURCES.md"
    sources = _spaced(sources_file.read_text(encoding="utf-8"))
    images, models, repos = len(frame), frame["model"].nunique(), frame["source_repo"].nunique()
    assert f"{images} outputs of {models} text-to-image models" in docs
    assert f"({frame['family'].nunique()} model families," in docs
    assert f"from {repos} public repositories" in docs
    settings = frame["setting"].value_counts()
    assert f"`design` ({settings['design']}) or `scene` ({settings['scene']})" in docs
    assert f"on the {len(known)} images whose prompt gives the intended text" in docs
    assert f"({images} images, {len(known)} with intended text;" in docs
    for part, rows in frame.groupby("part"):
        shares = rows["setting"].value_counts()
        cells = [
            part,
            len(rows),
            (rows["intended_text"] != "").sum(),
            rows["source_repo"].nunique(),
            rows["model"].nunique(),
            rows["family"].nunique(),
            f"{shares.get('design', 0)} / {shares.get('scene', 0)}",
        ]
        assert "| " + " | ".join(map(str, cells)) + " |" in docs, part
    assert f"on {images} real text-to-image outputs from {models} models" in readme
    assert sources.startswith(
        f"# Real text-to-image outputs, hand-transcribed {images} images from {models} "
        f"text-to-image models (and settings of them) and {repos} public repositories"
    )


def test_a_bad_manifest_names_its_line(tmp_path: Path) -> None:
    manifest = Path(str(shipped_real_set()))
    frame = pd.read_csv(manifest, dtype=str, keep_default_na=False).head(3)
    for file in frame["file"]:  # a manifest's files lie in its folder (docs/reliability.md)
        (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(manifest.parent / file, tmp_path / file)
    frame["file"] = [str(tmp_path / file) for file in frame["file"]]  # absolute paths inside
    frame.to_csv(tmp_path / "manifest.csv", index=False)
    assert len(load_real_set(tmp_path)) == 3
    bad = frame.copy()
    bad.loc[1, "file"] = "images/missing.jpg"
    bad.to_csv(tmp_path / "manifest.csv", index=False)
    with pytest.raises(InputError, match=r"manifest.csv:3: image 'images/missing.jpg'"):
        load_real_set(tmp_path)
    frame.drop(columns="licence").to_csv(tmp_path / "manifest.csv", index=False)
    with pytest.raises(InputError, match=r"missing column.*licence"):
        load_real_set(tmp_path / "manifest.csv")


@pytest.mark.slow  # scores the whole real set (5 s, growing with it): make test runs it
def test_a_reader_that_reads_like_the_person_scores_perfectly() -> None:
    frame = _real()
    rows = real_rows(frame, frame["human_reading"].tolist())
    assert (rows["ned_vs_human"] == 1.0).all() and (rows["word_recall_vs_human"] == 1.0).all()
    summary = real_summary(rows)
    assert summary["score_mae"] == 0.0 and summary["words_per_word"] == 1.0
    assert summary["spearman"] == pytest.approx(1.0)
    verdicts, pairs = summary["pair_verdicts"], len(summary["pairs"])
    known = frame.loc[frame["intended_text"] != "", "model"].value_counts()
    models = int((known >= 5).sum())  # pairs of models with five prompt-known images or more
    assert pairs == models * (models - 1) // 2 and verdicts["kept"] + verdicts["none"] == pairs
    assert verdicts["invented"] == verdicts["lost"] == verdicts["reversed"] == 0


def test_a_reader_that_reads_nothing_loses_every_model_difference_it_should_keep() -> None:
    frame = _real()
    rows = real_rows(frame, [""] * len(frame))
    summary = real_summary(rows)
    assert summary["ned_vs_human"] == 0.0 and summary["words_per_word"] == 0.0
    scored = rows[rows["score_reader"].notna()]
    assert summary["score_mae"] == pytest.approx(scored["score_human"].mean())
    assert all(pair["reader"]["difference"] == 0.0 for pair in summary["pairs"])
    assert summary["pair_verdicts"]["kept"] == summary["pair_verdicts"]["invented"] == 0


@pytest.mark.slow
def test_the_real_part_with_rapidocr_on_four_images() -> None:
    pytest.importorskip("rapidocr_onnxruntime")
    from glyphbench.readers import get_reader

    frame = load_real_set(str(shipped_real_set()), limit=4)
    assert len(frame) == 4 and frame["model"].nunique() == 4  # one image of each of 4 models
    rows, seconds = read_real_set(get_reader("rapidocr"), frame)
    assert seconds > 0 and rows["reading"].str.len().gt(0).all()
    for column in ("ned_vs_human", "word_recall_vs_human"):
        assert rows[column].between(0, 1).all()
    assert rows["ned_vs_human"].mean() > 0.7  # clean poster text: close to the person
    scored = rows[rows["score_reader"].notna()]
    assert ((scored["score_reader"] - scored["score_human"]).abs() == scored["score_error"]).all()


#: The default reader's readings of the shipped set, a reading cache of the reader sweep
#: (benchmarks/bench_reader_sweep.py says how it is written anew).
STORED_READINGS = REPO_ROOT / "tests" / "data" / "real_t2i" / "readings"
#: How many images the stored readings are checked on in every run (those of the smallest
#: SHA-256, a sample no one picks); GLYPHBENCH_READ_ALL=1 reads the whole set.
READ_NOW = 40


@pytest.fixture(scope="module")
def default_rows(tmp_path_factory: pytest.TempPathFactory) -> pd.DataFrame:
    """The whole shipped real set as the default reader reads it: its stored readings where
    they were read by this reader, reader code and engine versions, else read now (slow)."""
    pytest.importorskip("rapidocr_onnxruntime")
    from benchmarks.bench_reader_sweep import cached_readings
    from glyphbench.readers import DEFAULT_READER

    cache = tmp_path_factory.mktemp("readings")  # read into a copy: the tests write nothing
    for stored in STORED_READINGS.glob("*.json"):
        shutil.copyfile(stored, cache / stored.name)
    frame = _real()
    texts, _, _ = cached_readings(DEFAULT_READER, frame, cache)
    return real_rows(frame, texts)


def _file_sha256(path: str) -> str:
    """The key of an image in a reading cache: the SHA-256 of its file."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _stored_record() -> dict[str, str]:
    files = sorted(STORED_READINGS.glob("*.json"))
    assert len(files) == 1, f"{STORED_READINGS}: one reading cache expected, found {files}"
    return dict(json.loads(files[0].read_text(encoding="utf-8")))


def test_the_stored_readings_are_of_the_default_reader_and_every_image() -> None:
    """The stored readings name the default reader as it is now (version and code) and read
    each image of the set, no other; a change to either asks for them to be written anew."""
    from benchmarks.bench_reader_sweep import reader_code
    from glyphbench.readers import DEFAULT_READER, get_reader

    stored, reader = _stored_record(), get_reader(DEFAULT_READER)
    anew = "write them anew (benchmarks/bench_reader_sweep.py's docstring says how)"
    assert (stored["name"], stored["version"]) == (reader.name, reader.version), anew
    assert stored["code"] == reader_code(), anew
    digests = {_file_sha256(path) for path in _real()["path"]}
    readings = {k for k in stored if k not in ("name", "version", "code", "engines")}
    assert readings == digests, anew


@pytest.mark.slow
def test_the_default_reader_reads_now_what_is_stored() -> None:
    """Forty images of the set (all with GLYPHBENCH_READ_ALL=1), read now the way
    `readers calibrate` reads, give the stored readings exactly. Stored under other engine
    versions, they are not used (the whole-set tests read every image) and not checked."""
    pytest.importorskip("rapidocr_onnxruntime")
    from benchmarks.bench_reader_sweep import reading_record
    from glyphbench.readers import DEFAULT_READER, get_reader

    reader, stored = get_reader(DEFAULT_READER), _stored_record()
    here = reading_record(reader)["engines"]
    if stored["engines"] != here:
        pytest.skip(f"readings stored under {stored['engines']}; here {here}: not used")
    frame = _real().assign(digest=lambda f: f["path"].map(_file_sha256))
    if os.environ.get("GLYPHBENCH_READ_ALL") != "1":
        frame = frame.sort_values("digest").head(READ_NOW)
    rows, _ = read_real_set(reader, frame.reset_index(drop=True))
    differ = [
        (file, stored[digest], reading)
        for file, digest, reading in zip(
            frame["file"], frame["digest"], rows["reading"], strict=True
        )
        if stored[digest] != reading
    ]
    assert not differ, differ


@pytest.mark.slow
def test_the_real_part_with_the_default_reader_on_the_whole_set(default_rows: pd.DataFrame) -> None:
    summary = real_summary(default_rows)
    assert summary["images"] == len(_real()) and 0.5 < summary["ned_vs_human"] <= 1.0
    lo, hi = summary["score_mae_interval"]
    assert lo <= summary["score_mae"] <= hi and 0 <= summary["score_mae"] < 0.3
    parts = {r["part"]: r for r in summary["score_error_by"]["part"]}
    assert parts["all"]["images"] == parts["tune"]["images"] + parts["held-out"]["images"]


#: The default reader's benchmark-score error (mean |NED(intended, reader) - NED(intended,
#: person)|) on the held-out images of the real set's collections 6 to 11 (10 added none),
#: the images collected after its setting was chosen, and its n, as docs/readers.md and the
#: README report them.
REPORT_COLLECTIONS = ("6", "7", "8", "9", "11")
HELD_OUT_SCORE_ERROR = 0.034
HELD_OUT_N = 45
#: The standard deviation of those 45 images' errors, from which docs/readers.md says how many
#: images an interval under 0.04 would need.
HELD_OUT_SD = 0.079
#: The collections of the card glyphbench ships for the default reader (the three collected
#: last, 5 to 7: bench/calibration/default_reader_card.json) and its n.
CARD_COLLECTIONS = ("5", "6", "7")
CARD_N = 44
#: Room for onnxruntime builds that round differently (no reading may change by more).
HELD_OUT_TOLERANCE = 0.005


@pytest.mark.slow
def test_the_default_reader_on_held_out_repositories_is_as_documented(
    default_rows: pd.DataFrame,
) -> None:
    """The default reader, read for real on the held-out images no setting was chosen with."""
    reported = default_rows[default_rows["collection"].isin(REPORT_COLLECTIONS)]
    held_out = score_error_table(reported, "part")
    figure = next(r for r in held_out if r["part"] == "held-out")
    assert figure["images"] == HELD_OUT_N
    assert abs(figure["score_mae"] - HELD_OUT_SCORE_ERROR) <= HELD_OUT_TOLERANCE, figure
    # the card glyphbench ships for the default reader is the measurement on its collections
    from glyphbench.calibration.reader_error import shipped_reader_error

    shipped = shipped_reader_error()
    assert shipped is not None and (shipped.part, shipped.n) == ("held-out", CARD_N)
    carded = default_rows[default_rows["collection"].isin(CARD_COLLECTIONS)]
    held = carded[(carded["part"] == "held-out") & carded["score_reader"].notna()]
    measured = (held["score_reader"] - held["score_human"]).to_numpy()
    assert np.allclose(np.sort(shipped.errors), np.sort(measured), atol=HELD_OUT_TOLERANCE)
    errors = reported.loc[reported["part"] == "held-out", "score_error"].dropna()
    assert abs(float(errors.std(ddof=1)) - HELD_OUT_SD) <= HELD_OUT_TOLERANCE
    root = REPO_ROOT
    for doc in (root / "docs" / "readers.md", root / "README.md"):
        text = doc.read_text(encoding="utf-8")
        assert f"{HELD_OUT_SCORE_ERROR:.3f}" in text and f"n = {HELD_OUT_N}" in text, doc
    readers_page = " ".join((root / "docs" / "readers.md").read_text(encoding="utf-8").split())
    assert f"standard deviation of {HELD_OUT_SD:.3f}" in readers_page


#: A row of docs/readers.md's table of the default reader's error by collection.
COLLECTION_ROW = re.compile(
    r"^\| (?P<collection>\d+|all) \| (?P<images>\d+) \| (?P<repositories>\d+) \| "
    r"(?P<mae>[\d.]+) \[[\d.]+, [\d.]+\] \| (?P<bias>-?[\d.]+) \|",
    re.MULTILINE,
)


@pytest.mark.slow
def test_the_documented_error_of_each_held_out_collection_is_measured(
    default_rows: pd.DataFrame,
) -> None:
    """docs/readers.md's collection-by-collection table is the default reader's card of the
    held-out part, row for row."""
    held_out = default_rows[default_rows["part"] == "held-out"]
    measured = {str(r["collection"]): r for r in score_error_table(held_out, "collection")}
    text = (REPO_ROOT / "docs" / "readers.md").read_text(encoding="utf-8")
    documented = {m["collection"]: m for m in COLLECTION_ROW.finditer(text)}
    assert set(documented) == set(measured), (sorted(documented), sorted(measured))
    for collection, row in measured.items():
        doc = documented[collection]
        assert (int(doc["images"]), int(doc["repositories"])) == (
            row["images"],
            row["repositories"],
        ), collection
        assert abs(float(doc["mae"]) - row["score_mae"]) <= HELD_OUT_TOLERANCE, collection
        assert abs(float(doc["bias"]) - row["score_bias"]) <= HELD_OUT_TOLERANCE, collection


@pytest.mark.slow
def test_reader_aware_intervals_hold_the_person_read_scores_of_held_out_families(
    default_rows: pd.DataFrame, tmp_path: Path
) -> None:
    """The card of the tune part, used on the held-out repositories: its bounds hold the
    reader's over- and under-reading there (the assumption of the widening: each held-out
    mean below the tune card's one-sided 95% limit), and the score a person's reading gives
    each held-out model family lies inside the family's widened interval."""
    from glyphbench.calibration.reader_error import ReaderBounds, from_real_rows
    from glyphbench.core.bootstrap import MIN_UNITS, percentile_interval
    from glyphbench.report.reader_aware import score_resamples

    tune = default_rows[default_rows["part"] == "tune"]
    card_file = tmp_path / "card.json"
    card = from_real_rows(tune, "default", "v", part="tune", manifest="real_t2i")
    card_file.write_text(json.dumps({"real_images": {"reader_error": card.to_json()}}))
    card = load_reader_error(card_file)
    draws = card.bound_resamples(4000, np.random.default_rng(0))
    held_out = from_real_rows(
        default_rows[default_rows["part"] == "held-out"],
        "default",
        "v",
        part="held-out",
        manifest="real_t2i",
    )
    rounding = 1e-12  # a held-out mean may equal a draw's quantile to the last bit
    assert held_out.over <= float(np.quantile(draws[:, 0], 0.95)) + rounding
    assert held_out.under <= float(np.quantile(draws[:, 1], 0.95)) + rounding
    held = default_rows[(default_rows["part"] == "held-out") & default_rows["score_reader"].notna()]
    counts = held["family"].value_counts()
    families = sorted(counts[counts >= MIN_UNITS].index)
    assert len(families) >= 3
    frame = pd.DataFrame(
        {
            "model": held["family"],
            "prompt_id": held["file"],
            "ned": held["score_reader"],
            "error": "",
        }
    )
    frame = frame[frame["model"].isin(families)].reset_index(drop=True)
    boots = score_resamples(frame, "ned", n_boot=2000, seed=0)
    bounds = ReaderBounds.draw(card, families, n_boot=2000, seed=0)
    for family in families:
        person = float(held.loc[held["family"] == family, "score_human"].mean())
        lo, hi = bounds.score(family, boots[family], 0.95)
        assert lo <= person <= hi, (family, person, lo, hi)
        plain = percentile_interval(boots[family])
        assert lo <= float(plain[0]) and float(plain[1]) <= hi  # widened, never narrowed


def test_the_real_set_splits_by_repository_on_its_name_alone() -> None:
    frame = _real()
    parts = frame.groupby("source_repo")["part"].nunique()
    assert (parts == 1).all()  # a repository's images never sit on both sides
    for repository, part in frame.groupby("source_repo")["part"].first().items():
        assert part == repository_part(str(repository))
        if repository in TUNE_REPOSITORIES:
            assert part == "tune"
    # the rule reads the name only: the first byte of its SHA-256 (lower case) below 128
    names = [f"owner{i}/gallery" for i in range(400)]
    held = [n for n in names if repository_part(n) == "held-out"]
    assert all(hashlib.sha256(n.encode()).digest()[0] < 128 for n in held)
    assert 150 < len(held) < 250  # about half
    assert repository_part("Someone/Gallery") == repository_part("someone/gallery")
    assert not set(frame["source_repo"]) & RESERVED_REPOSITORIES
    held_out = load_real_set(str(shipped_real_set()), part="held-out")
    assert set(held_out["file"]) == set(frame.loc[frame["part"] == "held-out", "file"])
    with pytest.raises(ValueError, match="part must be one of tune, held-out"):
        load_real_set(str(shipped_real_set()), part="score")


def test_collections_select_rows_by_when_they_were_added(tmp_path: Path) -> None:
    frame = _real()
    later = load_real_set(str(shipped_real_set()), collections=["3"])
    assert set(later["file"]) == set(frame.loc[frame["collection"] == "3", "file"])
    assert len(later) > 0 and set(later["part"]) == {"held-out"}  # collected held-out only
    both = load_real_set(str(shipped_real_set()), part="tune", collections=["1", "2"])
    assert set(both["collection"]) <= {"1", "2"} and set(both["part"]) == {"tune"}
    # a manifest without the column cannot be cut by it: said, not silently ignored
    manifest = Path(str(shipped_real_set()))
    plain = pd.read_csv(manifest, dtype=str, keep_default_na=False).head(2)
    for file in plain["file"]:  # a manifest's images lie in its folder
        (tmp_path / file).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(manifest.parent / file, tmp_path / file)
    plain.drop(columns="collection").to_csv(tmp_path / "manifest.csv", index=False)
    assert len(load_real_set(tmp_path)) == 2
    with pytest.raises(InputError, match="no 'collection' column"):
        load_real_set(tmp_path, collections=["1"])


def test_a_collection_or_selection_with_no_image_is_an_error_not_an_empty_card() -> None:
    """A mistyped collection would measure nothing and write a card of n = 0: refused with
    the collections there are; a part and collection that share no image likewise."""
    with pytest.raises(InputError, match=r"no collection 99 in it; its collections: 1, 2, 3,"):
        load_real_set(str(shipped_real_set()), collections=["6", "99"])
    with pytest.raises(InputError, match="no image is in part tune and collection 6"):
        load_real_set(str(shipped_real_set()), part="tune", collections=["6"])


@pytest.mark.slow
def test_calibrate_with_an_unknown_collection_says_so_in_one_line(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "glyphbench", "readers", "calibrate", "--real-collection", "99",
         "--no-long", "--out", str(tmp_path / "c")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 2 and "no collection 99 in it" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "c").exists()  # nothing written


def test_a_reserved_repository_is_refused(tmp_path: Path) -> None:
    manifest = Path(str(shipped_real_set()))
    frame = pd.read_csv(manifest, dtype=str, keep_default_na=False).head(2)
    frame["file"] = [str(manifest.parent / f) for f in frame["file"]]
    frame.loc[1, "source_repo"] = "comfyanonymous/ComfyUI_examples"
    frame.to_csv(tmp_path / "manifest.csv", index=False)
    with pytest.raises(InputError, match="kept for a check outside the project") as error:
        load_real_set(tmp_path)
    assert error.value.line == 3


def test_model_families_and_breakdowns_of_the_score_error() -> None:
    frame = _real()
    assert set(frame.loc[frame["model"].str.startswith("FLUX"), "family"]) == {"FLUX"}
    rows = real_rows(frame, frame["human_reading"].tolist())
    misread = (rows["model"] == "TextDiffuser") & rows["score_human"].notna()
    rows.loc[misread, "score_reader"] = 0.0  # misread on purpose
    rows["score_error"] = (rows["score_reader"] - rows["score_human"]).abs()
    table = {r["family"]: r for r in score_error_table(rows, "family")}
    scored = rows[rows["score_reader"].notna()]
    assert table["all"]["images"] == len(scored)
    textdiffuser = scored[scored["family"] == "TextDiffuser"]
    assert table["TextDiffuser"]["images"] == len(textdiffuser) == int(misread.sum())
    assert table["TextDiffuser"]["score_mae"] == pytest.approx(textdiffuser["score_error"].mean())
    lo, hi = table["TextDiffuser"]["interval"]
    assert lo <= table["TextDiffuser"]["score_mae"] <= hi
    assert table["GlyphControl"]["score_mae"] == 0.0
    assert math.isnan(table["GlyphControl"]["interval_by_repository"][0])  # one repository


def test_calibrate_refuses_an_unknown_real_part() -> None:
    args = ["readers", "calibrate", "--reader", "rapidocr", "--out", "never-written"]
    result = CliRunner().invoke(app, [*args, "--real-part", "train"])
    assert result.exit_code == 2 and "must be one of tune, held-out" in result.output
    assert not Path("never-written").exists()


@pytest.mark.slow
def test_calibrate_refuses_a_missing_manifest_before_reading(tmp_path: Path) -> None:
    out = tmp_path / "card"
    args = ["readers", "calibrate", "--reader", "rapidocr", "--out", str(out)]
    result = CliRunner().invoke(app, [*args, "--real", str(tmp_path / "nope.csv")])
    assert isinstance(result.exception, InputError)  # the console script exits 2 on it
    assert "no such real-image manifest" in str(result.exception)
    assert not out.exists()


def test_card_means_are_the_metric_tables_aggregates() -> None:
    """The long-text and real-image figures average NED and word recall with the
    metric table's aggregate (replaced here by a derived one, then restored)."""
    from dataclasses import replace

    from glyphbench.scoring.table import METRICS, Derived

    rows = pd.DataFrame(
        {
            "size": [14, 14, 28],
            "font": ["a", "b", "a"],
            "expected_words": [2, 2, 2],
            "read_words": [2, 1, 2],
            "word_recall": [1.0, 0.5, 0.0],
            "ned": [1.0, 0.8, None],
        }
    )
    assert long_text_summary(rows)["overall"]["ned"] == pytest.approx(0.9)  # NaN skipped
    ned = METRICS.get("ned")
    METRICS.add(replace(ned, aggregate=Derived(("word_recall",), lambda r: r / 2)), replace=True)
    try:
        summary = long_text_summary(rows)
        real = real_summary(
            pd.DataFrame(
                {
                    "model": ["m", "m"],
                    "ned_vs_human": [1.0, 0.0],
                    "word_recall_vs_human": [0.2, 0.4],
                    "word_recall": [0.2, 0.4],  # the derived NED's input
                    "human_words": [1, 1],
                    "read_words": [1, 1],
                    "score_reader": [math.nan, math.nan],
                    "score_human": [math.nan, math.nan],
                    "score_error": [math.nan, math.nan],
                }
            )
        )
    finally:
        METRICS.add(ned, replace=True, place="glyphbench.scoring.glyphbench")
    assert summary["overall"]["ned"] == pytest.approx(0.25)  # mean word recall 0.5, halved
    assert summary["by_size"][28]["ned"] == 0.0
    assert real["ned_vs_human"] == pytest.approx(0.15)
    assert long_text_summary(rows)["overall"]["ned"] == pytest.approx(0.9)


def test_the_error_table_lists_collections_in_number_order() -> None:
    """Collection 11 comes after 9, not between 1 and 2, as a reader of the card expects."""
    rows = pd.DataFrame(
        {
            "collection": ["11", "2", "1", "9", "tune"],
            "source_repo": ["a/a", "b/b", "c/c", "d/d", "e/e"],
            "score_reader": [0.5, 0.6, 0.7, 0.8, 0.9],
            "score_human": [0.5, 0.5, 0.5, 0.5, 0.5],
        }
    )
    rows["score_error"] = (rows["score_reader"] - rows["score_human"]).abs()
    table = score_error_table(rows, "collection")
    assert [r["collection"] for r in table] == ["all", "1", "2", "9", "11", "tune"]
    assert [r["score_bias"] for r in table[1:4]] == pytest.approx([0.2, 0.1, 0.3])


def test_a_table_of_one_part_shows_its_images_once() -> None:
    """A card of the held-out part alone: one row, not "all" and "held-out" with the same
    images and intervals drawn apart; with two parts, "all" stays first."""
    from glyphbench.calibration.calibrate import score_error_markdown

    rows = pd.DataFrame(
        {
            "part": ["held-out"] * 6,
            "source_repo": [f"r/{k}" for k in range(6)],
            "score_reader": [0.5, 0.6, 0.7, 0.8, 0.9, 0.4],
            "score_human": [0.5] * 6,
        }
    )
    rows["score_error"] = (rows["score_reader"] - rows["score_human"]).abs()
    table = score_error_table(rows, "part")
    # the same images, the same figures (the README quotes the part, the card's headline all)
    assert table[1]["interval"] == table[0]["interval"]
    assert table[1]["interval_by_repository"] == table[0]["interval_by_repository"]
    lines = score_error_markdown("part", table)
    assert [line.split("|")[1].strip() for line in lines[4:]] == ["held-out"]
    rows["family"] = ["A", "A", "A", "B", "B", "C"]  # no interval below three images
    by_family = {r["family"]: r for r in score_error_table(rows, "family")}
    assert not math.isnan(by_family["A"]["interval"][0])
    assert math.isnan(by_family["B"]["interval"][0]) and math.isnan(by_family["C"]["interval"][1])
    rows.loc[:2, "part"] = "tune"
    lines = score_error_markdown("part", score_error_table(rows, "part"))
    assert [line.split("|")[1].strip() for line in lines[4:]] == ["all", "held-out", "tune"]


@pytest.mark.parametrize(
    "args",
    [
        ["--size", "0"],  # was a cv2.error traceback
        ["--batch-size", "0"],  # a ValueError traceback
        ["--rates", "abc"],  # a ValueError traceback
        ["--rates", "1.5"],  # a card of a rate control:typo refuses
        ["--per-lang", "0"],  # an error naming --sample, which calibrate does not have
        ["--real-limit", "-1"],  # ran on and on
    ],
    ids=lambda args: " ".join(args),
)
def test_calibrate_refuses_bad_options_in_one_line_before_reading(
    args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from tests.helpers.cli_runs import invoke_cli

    out = tmp_path / "card"
    code, _, err = invoke_cli(["readers", "calibrate", *args, "--out", out], capsys)
    assert code == 2 and err.count("\n") == 1 and args[0] in err, err
    assert not out.exists()


def test_calibrate_without_a_cjk_font_is_one_line_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without a CJK font the Chinese part was a 59-line traceback ending in RuntimeError."""
    from tests.helpers.cli_runs import run_cli

    monkeypatch.setattr("glyphbench.models.controls.cjk_fonts", lambda: ())
    out = tmp_path / "card"
    args = ["readers", "calibrate", "--out", str(out), "--per-lang", "1", "--size", "64"]
    code, err = run_cli([*args, "--rates", "0.2", "--no-long", "--no-real"], capsys)
    assert code == 2 and err.count("\n") == 1, err
    assert "no CJK font found" in err and not out.exists()
