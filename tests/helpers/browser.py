"""Headless Debian Chromium for the browser tests (never a downloaded browser).

``chromium_driver(profile_dir, width, height)`` starts Selenium's Chrome driver on
``/usr/bin/chromium`` with ``/usr/bin/chromedriver``, offline: ``SE_OFFLINE``
stops Selenium Manager from fetching anything, and the background-networking
flags stop Chromium from calling out on a machine with no network.
``needs_chromium`` skips a test, with the reason, where either binary is missing.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")

needs_chromium = pytest.mark.skipif(
    not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
    reason=f"needs Debian chromium and chromium-driver ({CHROMIUM}, {CHROMEDRIVER})",
)

FLAGS = (
    "--headless=new",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)


@contextmanager
def chromium_driver(profile_dir: Path, width: int = 1400, height: int = 1000) -> Iterator[Any]:
    """A Selenium driver on the system Chromium with a fresh profile; quit on exit."""
    os.environ["SE_OFFLINE"] = "true"
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (*FLAGS, f"--window-size={width},{height}", f"--user-data-dir={profile_dir}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()
