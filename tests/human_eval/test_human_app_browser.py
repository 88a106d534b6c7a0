"""The rating app in headless Chromium: Finish asks first, the admin page has its
own route behind its password, a refusal is said in place and cleared; images at their own
size with zoom on click, one font."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from glyphbench.human_eval.study import create_study
from tests.helpers.browser import chromium_driver, needs_chromium
from tests.helpers.human_fixtures import launch_app, make_run

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240), needs_chromium]


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[Any]:
    with chromium_driver(tmp_path / "profile", width=1366, height=1000) as driver:
        yield driver


@contextmanager
def serving(tmp_path: Path, image_size: int, auth: Path | None = None) -> Iterator[str]:
    """A small study of ``image_size``-px images, served (with an admin login when ``auth``)."""
    os.environ["GRADIO_TEMP_DIR"] = str(tmp_path / f"gradio-cache-{image_size}")
    run = make_run(tmp_path / f"run-{image_size}", per_cell=2, image_size=image_size)
    study = tmp_path / f"study-{image_size}"
    create_study(
        [run], study, n=9, min_per_cell=1, raters_per_image=2, seed=3, batch_size=3,
        gold_per_batch=0, n_gold=0, progress=False,
    )  # fmt: skip
    demo, url = launch_app(study, auth_file=auth)
    try:
        yield url
    finally:
        demo.close()


@pytest.fixture
def served(tmp_path: Path) -> Iterator[str]:
    """96-px images (smaller than the frame), served with an admin login."""
    auth = tmp_path / "admin.txt"
    auth.write_text("lead:s3cret-pass\n", encoding="utf-8")
    with serving(tmp_path, 96, auth) as url:
        yield url


@pytest.fixture
def served_large(tmp_path: Path) -> Iterator[str]:
    """512-px images (the size of many generators' output, or the demo's 256 x 2)."""
    with serving(tmp_path, 512) as url:
        yield url


def _visible(driver: Any, element_id: str) -> bool:
    """Shown on the page now (asked in one script: Gradio re-renders elements under Selenium)."""
    # Not offsetParent: the Finish question is position:fixed, whose offsetParent is null.
    script = (
        "const e = document.getElementById(arguments[0]);"
        "return !!e && e.getClientRects().length > 0"
        " && getComputedStyle(e).visibility !== 'hidden';"
    )
    return bool(driver.execute_script(script, element_id))


def test_finish_asks_first_and_refusals_clear(browser: Any, served: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 60)
    browser.get(served)
    start = wait.until(ec.element_to_be_clickable((By.ID, "start-btn")))
    start.click()  # without consent: refused, said on the consent screen
    wait.until(lambda d: "consent" in d.find_element(By.ID, "consent-message").text.lower())
    assert not browser.find_elements(By.CSS_SELECTOR, ".toast-item")  # no toast to outlive it
    browser.find_element(By.CSS_SELECTOR, "#consent input[type=checkbox]").click()
    start.click()
    wait.until(lambda d: "0 / 3" in d.find_element(By.ID, "progress").text)
    # the refusal went with the consent screen: nothing of it is left on the page
    assert all(not e.text.strip() for e in browser.find_elements(By.ID, "consent-message"))
    assert "consent" not in browser.find_element(By.TAG_NAME, "body").text.lower()
    assert not _visible(browser, "admin")  # no admin panel on the raters' page
    assert not browser.find_elements(By.XPATH, "//a[contains(@href, 'admin')]")
    assert "Home" not in browser.find_element(By.TAG_NAME, "body").text  # no page links

    # a small image is scaled up to its frame
    image = wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#item-image img")))
    wait.until(lambda d: image.get_property("naturalWidth") > 0)
    shown = browser.execute_script("return arguments[0].getBoundingClientRect().height;", image)
    assert image.get_property("naturalHeight") == 96 and shown > 2 * 96

    # Finish asks; "Keep rating" keeps the batch, "Yes, finish" ends it
    assert not _visible(browser, "finish-confirm")
    browser.find_element(By.ID, "finish-btn").click()
    wait.until(lambda d: _visible(d, "finish-confirm"))
    assert "Finish now?" in browser.find_element(By.ID, "finish-confirm").text
    browser.find_element(By.ID, "finish-cancel").click()
    wait.until(lambda d: not _visible(d, "finish-confirm"))
    assert "0 / 3" in browser.find_element(By.ID, "progress").text
    assert not _visible(browser, "done-screen")
    browser.find_element(By.ID, "finish-btn").click()
    wait.until(ec.element_to_be_clickable((By.ID, "finish-confirm-btn"))).click()
    wait.until(lambda d: "Thank you" in d.find_element(By.ID, "done-message").text)


def test_admin_page_has_its_own_route_behind_its_password(browser: Any, served: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(browser, 60)
    browser.get(served)
    wait.until(ec.element_to_be_clickable((By.ID, "start-btn")))
    assert not browser.find_elements(By.ID, "admin-password")
    assert "admin" not in browser.find_element(By.TAG_NAME, "body").text.lower()

    browser.get(served.rstrip("/") + "/admin")
    password = wait.until(
        ec.visibility_of_element_located((By.CSS_SELECTOR, "#admin-password input"))
    )
    assert not _visible(browser, "start-btn")  # the admin page is not the raters' page
    assert not _visible(browser, "admin-panel")  # before a login: the login alone
    assert "Progress per image" not in browser.find_element(By.TAG_NAME, "body").text
    browser.find_element(By.CSS_SELECTOR, "#admin-user input, #admin-user textarea").send_keys(
        "lead"
    )
    password.send_keys("guess")
    browser.find_element(By.ID, "admin-btn").click()
    wait.until(lambda d: "Wrong user or password" in d.find_element(By.TAG_NAME, "body").text)
    assert "images have" not in browser.find_element(By.TAG_NAME, "body").text
    assert not _visible(browser, "admin-panel")  # no red badges on empty tables
    password.clear()
    password.send_keys("s3cret-pass")
    browser.find_element(By.ID, "admin-btn").click()
    wait.until(lambda d: "images have" in d.find_element(By.TAG_NAME, "body").text)
    wait.until(lambda d: _visible(d, "admin-panel"))


def _in_view(driver: Any, element_id: str) -> bool:
    """The element's whole box lies inside the window, without scrolling."""
    script = (
        "const e = document.getElementById(arguments[0]); if (!e) return false;"
        "const r = e.getBoundingClientRect();"
        "return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight;"
    )
    return bool(driver.execute_script(script, element_id))


def _start(driver: Any, url: str) -> Any:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(driver, 60)
    driver.get(url)
    wait.until(ec.element_to_be_clickable((By.CSS_SELECTOR, "#consent input[type=checkbox]")))
    driver.find_element(By.CSS_SELECTOR, "#consent input[type=checkbox]").click()
    driver.find_element(By.ID, "start-btn").click()
    wait.until(lambda d: "0 / 3" in d.find_element(By.ID, "progress").text)
    image = wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, "#item-image img")))
    wait.until(lambda d: image.get_property("naturalWidth") > 0)
    return image


@pytest.mark.parametrize("size", [(1366, 768), (1920, 1080)])
def test_rating_page_fits_a_laptop_screen(served: str, tmp_path: Path, size: tuple[int, int]):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    with chromium_driver(tmp_path / "laptop", width=size[0], height=size[1]) as driver:
        wait = WebDriverWait(driver, 60)
        _start(driver, served)
        driver.execute_script("window.scrollTo(0, 0);")
        for element in ("item-image", "submit-btn", "finish-btn"):
            assert _in_view(driver, element), f"{element} is below the fold at {size}"
        driver.find_element(By.ID, "finish-btn").click()
        wait.until(lambda d: _visible(d, "finish-confirm"))
        assert _in_view(driver, "finish-confirm") and _in_view(driver, "finish-confirm-btn")


def test_images_are_shown_at_their_own_size_and_zoom_on_click(
    served_large: str, tmp_path: Path
) -> None:
    """Legibility is judged on the image's own pixels: at 1366x768 a 512-px
    image is shown at 512 px with Submit still in view; a click shows it larger, filling
    the window; a click or Escape closes it."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import WebDriverWait

    with chromium_driver(tmp_path / "zoom", width=1366, height=768) as driver:
        image = _start(driver, served_large)
        box = driver.execute_script("return arguments[0].getBoundingClientRect();", image)
        assert image.get_property("naturalWidth") == 512
        assert round(box["width"]) >= 512 and round(box["height"]) >= 512  # never shrunk
        driver.execute_script("window.scrollTo(0, 0);")
        assert _in_view(driver, "submit-btn") and _in_view(driver, "finish-btn")
        image.click()
        WebDriverWait(driver, 10).until(lambda d: _visible(d, "gb-zoom"))
        zoomed = driver.execute_script(
            "const i = document.querySelector('#gb-zoom img');"
            "return [i.naturalWidth, i.getBoundingClientRect().width, window.innerHeight];"
        )
        assert zoomed[0] == 512 and zoomed[1] >= min(1366, zoomed[2]) - 1  # fills the window
        driver.find_element(By.TAG_NAME, "body").send_keys(Keys.ESCAPE)
        WebDriverWait(driver, 10).until(lambda d: not _visible(d, "gb-zoom"))
        image.click()
        WebDriverWait(driver, 10).until(lambda d: _visible(d, "gb-zoom"))
        driver.find_element(By.ID, "gb-zoom").click()
        WebDriverWait(driver, 10).until(lambda d: not _visible(d, "gb-zoom"))
        assert "0 / 3" in driver.find_element(By.ID, "progress").text  # nothing was answered


@pytest.fixture
def served_huge(tmp_path: Path) -> Iterator[str]:
    """1024-px images (SDXL's, FLUX's and most current generators' size)."""
    with serving(tmp_path, 1024) as url:
        yield url


def test_a_1024_px_image_is_shown_whole_above_the_fold_and_framed(
    served_huge: str, tmp_path: Path
) -> None:
    """At 1366x768 a 1024-px image ran 19% below the fold; now it is scaled to the window
    (zoom shows its own pixels) with Submit in view, and framed, so a blank image reads as
    an empty picture rather than one that failed to load."""
    with chromium_driver(tmp_path / "huge", width=1366, height=768) as driver:
        image = _start(driver, served_huge)
        driver.execute_script("window.scrollTo(0, 0);")
        assert image.get_property("naturalWidth") == 1024
        box = driver.execute_script(
            "const r = arguments[0].getBoundingClientRect();"
            "return [r.top, r.bottom, window.innerHeight];",
            image,
        )
        assert box[0] >= 0 and box[1] <= box[2], f"image at {box[:2]} in a {box[2]}-px window"
        assert _in_view(driver, "submit-btn") and _in_view(driver, "finish-btn")
        frame = driver.execute_script(
            "const s = getComputedStyle(arguments[0]);"
            "return [s.borderTopWidth, s.borderTopStyle, s.borderTopColor];",
            image,
        )
        assert frame[0] == "1px" and frame[1] == "solid" and frame[2] != "rgb(255, 255, 255)"


def _platform_fonts(driver: Any, selector: str) -> dict[str, int]:
    """The fonts Chromium really drew the matching elements' text with (DevTools), by glyphs."""
    driver.execute_cdp_cmd("DOM.enable", {})
    driver.execute_cdp_cmd("CSS.enable", {})
    root = driver.execute_cdp_cmd("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    nodes = driver.execute_cdp_cmd("DOM.querySelectorAll", {"nodeId": root, "selector": selector})
    used: dict[str, int] = {}
    for node in nodes["nodeIds"]:
        for font in driver.execute_cdp_cmd("CSS.getPlatformFontsForNode", {"nodeId": node})[
            "fonts"
        ]:
            used[font["familyName"]] = used.get(font["familyName"], 0) + font["glyphCount"]
    return used


def test_the_rating_page_is_drawn_in_one_font_offline(served: str, tmp_path: Path) -> None:
    """Gradio's default web font came in two weights only, so bold text (buttons, Prompt:)
    fell back to another family on a machine without network: two fonts on one page."""
    with chromium_driver(tmp_path / "fonts", width=1366, height=768) as driver:
        _start(driver, served)
        used = _platform_fonts(driver, "button, strong, p, span, label, h2")
    assert len(used) == 1, used
