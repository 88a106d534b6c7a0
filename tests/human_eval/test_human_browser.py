"""A real page in headless Debian Chromium: consent, start, rate by click and by keyboard, finish.

Uses the system ``chromium`` and ``chromedriver`` (never a downloaded browser;
``SE_OFFLINE`` stops Selenium Manager from fetching anything). Skipped, with
the reason, where they are not installed. The screenshot is saved under the
test's tmp folder (its path is printed).
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path

import pytest

from glyphbench.human_eval.study import create_study
from tests.helpers.browser import chromium_driver, needs_chromium
from tests.helpers.human_fixtures import launch_app, make_run

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180), needs_chromium]


@pytest.fixture
def browser(tmp_path: Path):
    with chromium_driver(tmp_path / "profile", width=1200, height=1400) as driver:
        yield driver


def test_rate_through_the_real_page(browser, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    os.environ["GRADIO_TEMP_DIR"] = str(tmp_path / "gradio-cache")
    run = make_run(tmp_path / "run", per_cell=2, image_size=320)
    study_dir = tmp_path / "study"
    create_study(
        [run],
        study_dir,
        n=9,
        min_per_cell=1,
        raters_per_image=2,
        seed=5,
        batch_size=3,
        gold_per_batch=0,
        n_gold=0,
        progress=False,
    )
    demo, url = launch_app(study_dir)
    try:
        wait = WebDriverWait(browser, 60)
        browser.get(url)
        consent = wait.until(
            ec.element_to_be_clickable((By.CSS_SELECTOR, "#consent input[type=checkbox]"))
        )
        assert "Consent" in browser.find_element(By.ID, "consent-screen").text
        consent.click()
        browser.find_element(By.ID, "start-btn").click()

        def progress_is(text: str):
            return lambda d: text in d.find_element(By.ID, "progress").text

        wait.until(progress_is("0 / 3"))
        wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#item-image img")))
        assert "says" in browser.find_element(By.ID, "prompt").text

        def choose(criterion: str, label: str) -> None:
            group = browser.find_element(By.ID, f"q-{criterion}")
            group.find_element(By.XPATH, f".//label[normalize-space()='{label}']").click()

        # Item 1 by clicking.
        choose("prompt_following", "Yes")
        choose("text_accuracy", "No")
        browser.find_element(By.ID, "submit-btn").click()
        wait.until(progress_is("1 / 3"))
        # Item 2 by keyboard: y answers the first question, n the second, Enter submits.
        body = browser.find_element(By.TAG_NAME, "body")
        wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, "[id^=q-] input:checked"))
        body.send_keys("y")
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "[id^=q-] input:checked")) == 1)
        body.send_keys("n")
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "[id^=q-] input:checked")) == 2)
        body.send_keys(Keys.ENTER)
        wait.until(progress_is("2 / 3"))
        # Back shows item 2 with its answers; change one and resubmit (an edit, not a new row).
        browser.find_element(By.ID, "back-btn").click()
        wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "[id^=q-] input:checked")) == 2)
        choose("text_accuracy", "Yes")
        browser.find_element(By.ID, "submit-btn").click()
        wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, "[id^=q-] input:checked"))
        code = browser.find_element(By.CSS_SELECTOR, "#code textarea, #code input").get_attribute(
            "value"
        )
        screenshot = tmp_path / "rating_page.png"
        browser.save_screenshot(str(screenshot))
        print(f"screenshot: {screenshot}")
        browser.find_element(By.ID, "finish-btn").click()  # asks first
        wait.until(ec.element_to_be_clickable((By.ID, "finish-confirm-btn"))).click()
        wait.until(lambda d: "Thank you" in d.find_element(By.ID, "done-message").text)
        browser.save_screenshot(str(tmp_path / "done_page.png"))
    finally:
        demo.close()

    assert screenshot.stat().st_size > 10_000
    with sqlite3.connect(study_dir / "ratings.sqlite") as db:
        rows = db.execute(
            "SELECT r.image_id, r.criterion, r.value, r.revisions, a.position FROM ratings r"
            " JOIN participants p USING (participant_id)"
            " JOIN assignments a ON a.participant_id = r.participant_id AND a.image_id = r.image_id"
            " WHERE p.resume_code = ? ORDER BY a.position, r.criterion",
            (code,),
        ).fetchall()
    assert [(c, v, rev, pos) for _, c, v, rev, pos in rows] == [
        ("prompt_following", 1, 0, 0),
        ("text_accuracy", 0, 0, 0),
        ("prompt_following", 1, 1, 1),
        ("text_accuracy", 1, 1, 1),
    ]
