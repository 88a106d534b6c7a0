"""Points 4 and 5: images in a benchmark's own layout, headlines, ``--limit`` per subset.

End to end on the real LongText-Bench files (``../shared/longtext-bench``; skipped
with the reason where absent): ``control:render`` draws the images, they are
renamed as LongText names its files (``{prompt_id}_{k}.png``, k from 1, README of
X-Omni's textbench; ``evaluate_text_reward.py`` parses ``int(fname.split('_')[0])``)
and ``glyphbench run --suite longtext --models images:DIR`` scores them exactly as
the run that made them. The other layouts are checked on constructed folders.
"""

from __future__ import annotations

import io
import shutil
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from rich.console import Console

from glyphbench.core.errors import InputError
from glyphbench.core.registry import Spec
from glyphbench.core.schema import failed_mask
from glyphbench.core.seeds import image_seed
from glyphbench.models.base import ImageRequest, RunContext
from glyphbench.models.images import ImagesModel, ImagesOptions, SuiteImages, match_layout
from glyphbench.scoring import score_pairs
from glyphbench.suites.base import limit_per_subset, resolve_suite
from tests.helpers.paths import SHARED

DATA = SHARED / "longtext-bench"
KEY = ["prompt_id", "seed", "sample_index"]


def glyphbench(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "glyphbench", *args], capture_output=True, text=True, check=False
    )


def _tesseract_reads_chinese() -> bool:
    if shutil.which("tesseract") is None:
        return False
    langs = subprocess.run(["tesseract", "--list-langs"], capture_output=True, text=True).stdout
    return "chi_sim" in langs.split()


# --------------------------------------------------------------------------- LongText end to end


@pytest.mark.slow
def test_longtext_images_folder_in_the_benchmarks_naming_scores_as_the_run_that_made_it(
    tmp_path: Path,
) -> None:
    if not (DATA / "text_prompts.jsonl").exists():
        pytest.skip(f"LongText-Bench prompt files not found at {DATA}")
    if not _tesseract_reads_chinese():
        pytest.skip(
            "tesseract with chi_sim is not installed (apt-get install tesseract-ocr-chi-sim)"
        )
    reader = "tesseract?lang=eng+chi_sim"
    common = ["--suite", "longtext", "--data", str(DATA), "--limit", "2",
              "--images-per-prompt", "2", "--ocr", reader, "--no-progress"]  # fmt: skip
    made = glyphbench("run", *common, "--models", "control:render?size=256",
                      "--out", str(tmp_path / "made"))  # fmt: skip
    assert made.returncode == 0, made.stderr[-3000:]
    # --limit 2 takes from both subsets: 2 English and 2 Chinese prompts, 2 images each.
    before = pd.read_parquet(tmp_path / "made" / "results.parquet")
    assert before.groupby("suite_subset")["prompt_id"].nunique().to_dict() == {"en": 2, "zh": 2}
    # The images renamed as LongText names them: one folder per language (the ids of both
    # files are 0..199), ids padded to 4 digits as X-Omni's README shows, k from 1.
    folder = tmp_path / "my-model"
    for row in before.to_dict("records"):
        name = f"{int(row['benchmark_id']):04d}_{int(row['sample_index']) + 1}.png"
        target = folder / str(row["suite_subset"]) / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(tmp_path / "made" / str(row["image_path"]), target)
    (folder / "0000_1.png").write_bytes(b"")  # at the top: either language's, so not used
    scored = glyphbench("run", *common, "--models", f"images:{folder}",
                        "--out", str(tmp_path / "scored"))  # fmt: skip
    assert scored.returncode == 0, scored.stderr[-3000:]
    said = scored.stdout + scored.stderr  # the images: line goes to the log (stderr)
    assert (
        "images: 8 of 8 found" in said
        and "1 not used (no image of this run by that name): 0000_1.png" in said
    ), said
    after = pd.read_parquet(tmp_path / "scored" / "results.parquet")
    assert not failed_mask(after).any()
    columns = ["ocr_text", "ned", *(c for c in before.columns if c.startswith("longtext_"))]
    assert len(columns) > 2
    left = before.sort_values(KEY).reset_index(drop=True)[KEY + columns]
    right = after.sort_values(KEY).reset_index(drop=True)[KEY + columns]
    pd.testing.assert_frame_equal(left, right)
    # The summary shows the benchmark's headline per language beside glyphbench's metrics
    # (rich wraps the header over lines).
    assert "en: LongText" in scored.stdout and "zh: LongText" in scored.stdout
    report = glyphbench("report", str(tmp_path / "scored"), "--n-boot", "200")
    assert report.returncode == 0, report.stderr[-3000:]
    page = (tmp_path / "scored" / "report" / "index.html").read_text(encoding="utf-8")
    assert "Benchmark headlines" in page and "LongText-Bench zh: LongText text score" in page


def test_a_folder_naming_nothing_of_the_run_says_which_names_it_expects(tmp_path: Path) -> None:
    (tmp_path / "prompt_0.png").write_bytes(b"x")
    model = ImagesModel(Spec.parse(f"images:{tmp_path}"), ImagesOptions())
    context = RunContext(
        root=tmp_path, run_id="r", expected=(("en-7", 0, 0), ("en-7", 0, 1)),
        suite="longtext:en", suite_layout=resolve_suite("longtext:en").layout(),
        benchmark_ids={"en-7": ("en", "7")},
    )  # fmt: skip
    with pytest.raises(InputError) as caught:
        model.bind_run(context)
    problem = str(caught.value)
    assert "no file in" in problem and "LongText-Bench's {id}_{k}.png" in problem
    assert "e.g. 0007_1.png" in problem and "e.g. en-7_s0_i0.png" in problem


# --------------------------------------------------------------------------- other layouts


def _png(path: Path, colour: str, size: tuple[int, int] = (8, 8)) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, colour).save(path)


def test_longtext_single_language_folder_at_the_top_and_numeric_ids(tmp_path: Path) -> None:
    _png(tmp_path / "0007_1.png", "red")
    _png(tmp_path / "7_2.png", "blue")  # int("7") == int("0007"): the same prompt
    _png(tmp_path / "0007_5.png", "green")  # a fifth image the run does not ask for
    suite = SuiteImages(resolve_suite("longtext:en").layout(), {"en-7": ("en", "7")})
    expected = [("en-7", 0, 0), ("en-7", 0, 1), ("en-7", 0, 2), ("en-7", 3, 0)]
    matching = match_layout(tmp_path, expected, suite, first_seed=0)
    assert {k: p.name for k, p in matching.files.items()} == {
        ("en-7", 0, 0): "0007_1.png",
        ("en-7", 0, 1): "7_2.png",
    }
    assert matching.missing == [("en-7", 0, 2), ("en-7", 3, 0)]  # no k=3; the layout has no seed


def test_oneig_model_folder_of_grids_gives_each_cell_and_black_cells_are_missing(
    tmp_path: Path,
) -> None:
    from PIL import Image

    from glyphbench.suites.oneig import tile_grid

    cells = [Image.new("RGB", (16, 16), c) for c in ("red", "green", "blue")]
    tile_grid(cells).save(tmp_path / "000.webp", lossless=True)  # OneIG's padding: a black 4th
    model = ImagesModel(Spec.parse(f"images:{tmp_path}"), ImagesOptions())
    prompts = {"en-000": ("en", "000")}
    expected = tuple(("en-000", 0, index) for index in range(4))
    layout = resolve_suite("oneig-text:en").layout()
    model.bind_run(RunContext(tmp_path, "r", expected=expected, suite="oneig-text:en",
                              suite_layout=layout, benchmark_ids=prompts))  # fmt: skip
    assert model.matching is not None and len(model.matching.cells) == 4
    requests = [ImageRequest("p", "t", image_seed(0, "en-000", index)) for index in range(4)]
    made = model.generate(requests)
    colours = [image.getpixel((8, 8)) for image in made[:3]]
    assert colours == [(255, 0, 0), (0, 128, 0), (0, 0, 255)]
    assert str(made[3]).startswith("Missing: cell 3 of 000.webp is black")


def test_cvtg_type_and_area_folders_without_case_and_the_lex_caption_folder(
    tmp_path: Path,
) -> None:
    _png(tmp_path / "CVTG" / "2" / "12.png", "red")
    _png(tmp_path / "cvtg-style" / "2" / "12.png", "blue")  # README spells it CVTG-style
    selection = resolve_suite("cvtg:2")
    ids = {"CVTG-2-12": ("CVTG/2", "12"), "CVTG-Style-2-12": ("CVTG-Style/2", "12")}
    expected = [("CVTG-2-12", 0, 0), ("CVTG-Style-2-12", 0, 0), ("CVTG-Style-2-12", 0, 1)]
    matching = match_layout(tmp_path, expected, SuiteImages(selection.layout(), ids), first_seed=0)
    assert matching.files[("CVTG-2-12", 0, 0)].parent.parent.name == "CVTG"
    assert matching.files[("CVTG-Style-2-12", 0, 0)].parent.parent.name == "cvtg-style"
    assert matching.missing == [("CVTG-Style-2-12", 0, 1)]  # one image a prompt

    lex = tmp_path / "lex"
    _png(lex / "final_hard" / "enhanced_caption" / "42" / "0003.png", "red")
    _png(lex / "final_hard" / "simple_caption" / "42" / "0003.png", "blue")
    selection = resolve_suite("lex:hard?caption=enhanced")
    matching = match_layout(
        lex,
        [("hard-0003", 0, 0)],
        SuiteImages(selection.layout(), {"hard-0003": ("hard", "0003")}),
        0,
    )
    assert matching.files[("hard-0003", 0, 0)].parts[-3] == "enhanced_caption"


# --------------------------------------------------------------------------- --limit per subset


def test_limit_takes_the_first_n_of_every_subset() -> None:
    from glyphbench.prompts.schema import PromptSet

    frame = pd.DataFrame(
        {
            "prompt_id": [f"en-{i}" for i in range(5)] + [f"zh-{i}" for i in range(3)],
            "prompt": "p",
            "text": "t",
            "suite_subset": ["en"] * 5 + ["zh"] * 3,
        }
    )
    limited = limit_per_subset(PromptSet(frame, source="s", version="v"), 2)
    assert limited.frame["prompt_id"].tolist() == ["en-0", "en-1", "zh-0", "zh-1"]
    selection = limited.meta["selection"]
    assert isinstance(selection, dict) and selection["limit_per"] == "subset"
    assert limit_per_subset(PromptSet(frame, source="s", version="v"), None).frame.shape[0] == 8


def test_limit_on_the_real_longtext_files_runs_both_languages() -> None:
    if not (DATA / "text_prompts.jsonl").exists():
        pytest.skip(f"LongText-Bench prompt files not found at {DATA}")
    from glyphbench.run.config import RunConfig
    from glyphbench.run.operations import load_prompts

    config = RunConfig.from_mapping(
        {"models": ["control:blank"], "suite": {"spec": "longtext", "data": str(DATA)},
         "limit": 8, "ocr": "easyocr"}
    )  # fmt: skip
    chosen = load_prompts(config).frame
    assert chosen.groupby("suite_subset").size().to_dict() == {"en": 8, "zh": 8}


# --------------------------------------------------------------------------- headline in summary


def test_the_run_summary_shows_the_benchmarks_headline_per_subset() -> None:
    from glyphbench.report.console import print_summary
    from glyphbench.report.suites import headline_points
    from glyphbench.scoring.table import METRICS

    texts = ["Fresh Bread daily", "Quiet Hours"]
    reads = ["Fresh Bread", "Quiet Hours"]
    rows = pd.concat(
        [
            pd.DataFrame(
                {
                    "model": "m",
                    "is_control": False,
                    "error": "",
                    "prompt_id": ["a", "b"],
                    "suite": "longtext",
                    "suite_subset": "en",
                }
            ),
            score_pairs(texts, reads, families=["glyphbench", "longtext"]),
        ],
        axis=1,
    )
    headers, values = headline_points(rows)
    assert headers == ["LongText-Bench en: LongText text score ↑"]
    want = METRICS.aggregate(rows, ["longtext_text_score"], "longtext")["longtext_text_score"]
    assert values["m"][headers[0]] == pytest.approx(want) and want == pytest.approx(4 / 5)
    console = Console(file=io.StringIO(), width=250)
    print_summary(rows, console)
    printed = console.file.getvalue()  # type: ignore[attr-defined]
    assert "LongText-Bench en: LongText text score" in printed and "0.800" in printed
