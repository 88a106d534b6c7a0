"""The three reports and the rating app in headless Chromium at 1366 and 1920 px (issue 15).

Each page is loaded at both widths and must show no horizontal overflow
(``document.documentElement.scrollWidth <= innerWidth``), no "NaN" anywhere in its
text, and (reports) interval cells (``.ci``). Full-page screenshots are saved under
``tests/artifacts/screenshots/`` (ignored by git) for a person to look at.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from browser import chromium_driver, needs_chromium
from human_fixtures import launch_app, make_run
from report_fixtures import build_run

pytestmark = [pytest.mark.slow, pytest.mark.timeout(420), needs_chromium]

ARTIFACTS = Path(__file__).resolve().parent / "artifacts" / "screenshots"
WIDTHS = (1366, 1920)


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, str]]:
    """name -> URL of each page: three reports (files) and the rating app (served)."""
    root = tmp_path_factory.mktemp("screens")
    os.environ["GRADIO_TEMP_DIR"] = str(root / "gradio-cache")
    urls = {
        "bench_report": _bench_report(root).as_uri(),
        "vae_report": _vae_report(root).as_uri(),
    }
    study = _rated_study(root)
    from glyphbench.human_eval.report import write_report as write_human_report
    from glyphbench.human_eval.study import load_study

    urls["human_report"] = write_human_report(
        load_study(study), root / "human", n_boot=200
    ).as_uri()
    demo, url = launch_app(study)
    urls["rating_app"] = url
    try:
        yield urls
    finally:
        demo.close()


def _bench_report(root: Path) -> Path:
    from glyphbench.report import write_report

    run = build_run(root / "run_bench", n_prompts=16)
    return write_report([run], root / "bench_report", n_boot=200)


def _vae_report(root: Path) -> Path:
    from glyphbench.vae_eval.report import write_report
    from tests.test_vae_report import _rows

    rows = []
    for k in range(3):  # three images per size and codec, one failed row: a banner
        for vae, loss in (("identity", 0.0), ("taef2", 12.0), ("jpeg?quality=10", 30.0)):
            sizes = {
                48: 100.0 - loss / 2,
                32: 96.0 - loss,
                20: 90.0 - 2 * loss,
                14: 80.0 - 2 * loss,
            }
            for row in _rows(vae, {size: wr - 5 * k for size, wr in sizes.items()}):
                row.update(image_id=f"{row['image_id']}-{k}", psnr_text=25.0, ssim_text=0.8)
                rows.append(row)
    rows[-1].update(error="codec: blank (constant) reconstruction", wr=math.nan, pa=math.nan)
    return write_report(pd.DataFrame(rows), root / "vae")


def _rated_study(root: Path) -> Path:
    """A five-point study rated by seven raters, with images left for the app to show."""
    from glyphbench.human_eval.service import RatingService
    from glyphbench.human_eval.study import create_study, load_study

    run = make_run(root / "run_human", per_cell=3, image_size=160)
    study_dir = root / "study"
    create_study(
        [run], study_dir, n=18, min_per_cell=1, raters_per_image=3, seed=2, batch_size=6,
        gold_per_batch=1, n_gold=4, scale="likert5", progress=False,
    )  # fmt: skip
    study = load_study(study_dir)
    service = RatingService(study)
    truth = dict(zip(study.manifest["image_id"], study.manifest["exact_match"], strict=False))
    labels = list(study.scale)
    for rater in range(7):
        view = service.start(True)
        while view.screen == "item":
            good = bool(truth[view.image_id]) != (rater % 4 == 0)
            answer = labels[-1 - rater % 2] if good else labels[rater % 2]
            answers = {"prompt_following": labels[-1], "text_accuracy": answer}
            view = service.submit(view.code, view.image_id, answers)
        service.finish(view.code)
    return study_dir


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with chromium_driver(tmp_path_factory.mktemp("profile"), width=1366, height=900) as driver:
        yield driver


OVERFLOW = "return [document.documentElement.scrollWidth, window.innerWidth];"
HEIGHT = "return document.documentElement.scrollHeight;"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("name", ["bench_report", "vae_report", "human_report", "rating_app"])
def test_page_fits_has_no_nan_and_shows_intervals(
    browser: Any, pages: dict[str, str], name: str, width: int
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    browser.set_window_size(width, 900)
    browser.get(pages[name])
    wait = WebDriverWait(browser, 60)
    if name == "rating_app":  # show the rating screen, the one raters spend their time on
        wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, "#consent input"))).click()
        browser.find_element(By.ID, "start-btn").click()
        wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#item-image img")))
    else:
        assert browser.find_elements(By.CSS_SELECTOR, "td .ci"), "no interval cell"
    scroll_width, inner_width = browser.execute_script(OVERFLOW)
    assert scroll_width <= inner_width, f"{name} overflows at {width} px: {scroll_width}"
    text = browser.find_element(By.TAG_NAME, "body").text
    assert "NaN" not in text and " nan " not in f" {text.lower()} "
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.set_window_size(width, min(int(browser.execute_script(HEIGHT)) + 150, 12000))
    target = ARTIFACTS / f"{name}-{width}.png"
    browser.save_screenshot(str(target))
    assert target.stat().st_size > 20_000
