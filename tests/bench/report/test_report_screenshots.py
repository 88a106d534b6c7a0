"""The three reports and the rating app in headless Chromium at 1366 and 1920 px.

Each page is loaded at both widths and must show no horizontal overflow
(``document.documentElement.scrollWidth <= innerWidth``), no "NaN" anywhere in its
text, and (reports) interval cells (``.ci``). Full-page screenshots are saved under
``tests/artifacts/screenshots/`` (ignored by git) for a person to look at.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.helpers.browser import chromium_driver, needs_chromium
from tests.helpers.human_fixtures import launch_app, rated_study
from tests.helpers.paths import TESTS
from tests.helpers.report_pages import _bench_report, _vae_report

pytestmark = [pytest.mark.slow, pytest.mark.timeout(420), needs_chromium]

ARTIFACTS = TESTS / "artifacts" / "screenshots"
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
    study = rated_study(root / "rated")
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
