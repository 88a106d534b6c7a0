"""The report's image browser (browse.html) on a 10,000-row run, opened as a file:// page.

Headless Chromium opens the static report folder (no server), pages through every row,
and filters by model, slice, score and search text; each count is checked against pandas
on the same table. The time the page takes to open is measured and written to
``tests/artifacts/browser_open.json`` for a person to read, never asserted (the 2 s target
is a benchmark: ``benchmarks/bench_browser.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

from glyphbench.report import write_report
from glyphbench.report.slices import slice_labels
from tests.helpers.browser import chromium_driver, needs_chromium
from tests.helpers.paths import TESTS
from tests.helpers.report_fixtures import build_wide_run

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600), needs_chromium]

ARTIFACTS = TESTS / "artifacts"
HOSTILE = 'A sign <img src=x onerror="window.injected = 1"> that says "open"'
N_PROMPTS = 2000  # x 5 models: 10,000 rows


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, pd.DataFrame]:
    """(browse.html, the results table) of a 10,000-row run's report in RUN/report."""
    run = build_wide_run(tmp_path_factory.mktemp("wide") / "run", n_prompts=N_PROMPTS)
    frame = pd.read_parquet(run / "results.parquet")
    frame.loc[frame["prompt_id"] == "p0000", "prompt"] = HOSTILE  # shown as text, never run
    frame.to_parquet(run / "results.parquet", index=False)
    index = write_report([run], n_boot=20, by=["prompt_type", "char_length"])
    assert len(frame) == 10_000
    return index.parent / "browse.html", frame


@pytest.fixture(scope="module")
def page(
    report: tuple[Path, pd.DataFrame], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    with chromium_driver(tmp_path_factory.mktemp("profile"), width=1366, height=900) as driver:
        driver.set_script_timeout(60)
        yield driver


def open_page(driver: Any, page: Path, fragment: str = "") -> float:
    """Load the page fresh; return the milliseconds it took to show its first rows."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get("about:blank")
    driver.get(page.as_uri() + (f"#{fragment}" if fragment else ""))
    WebDriverWait(driver, 60).until(
        lambda d: d.execute_script("return document.body.dataset.state") == "ready"
    )
    return float(driver.execute_script("return window.glyphbenchBrowse.openMs"))


def after(driver: Any, action: Any) -> int:
    """Do ``action`` and wait for the page it shows; return the number of images matching."""
    from selenium.webdriver.support.ui import WebDriverWait

    before = driver.execute_script("return document.getElementById('status').dataset.renders")
    action()
    WebDriverWait(driver, 60).until(
        lambda d: (
            d.execute_script("return document.getElementById('status').dataset.renders") != before
        )
    )
    return int(driver.execute_script("return document.getElementById('status').dataset.matches"))


def choose(driver: Any, select_id: str, label: str) -> int:
    """Pick the option of ``select_id`` whose text starts with ``label`` (before its count)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    menu = Select(driver.find_element(By.ID, select_id))
    texts = [o.text for o in menu.options]
    wanted = next(t for t in texts if t == label or t.startswith(f"{label} ("))
    return after(driver, lambda: menu.select_by_visible_text(wanted))


def type_into(driver: Any, element_id: str, text: str) -> int:
    from selenium.webdriver.common.by import By

    field = driver.find_element(By.ID, element_id)
    return after(driver, lambda: (field.clear(), field.send_keys(text)))


def shown_keys(driver: Any) -> list[str]:
    return list(
        driver.execute_script(
            "return Array.from(document.querySelectorAll('#images tbody tr'), r => r.dataset.key)"
        )
    )


def slice_id(driver: Any, column: str) -> str:
    return str(
        driver.execute_script(
            "return document.querySelector(`select[data-slice='${arguments[0]}']`).id", column
        )
    )


def keys_of(frame: pd.DataFrame) -> list[str]:
    return [
        f"{m}|{p}|{s}|{i}"
        for m, p, s, i in zip(
            frame["model"], frame["prompt_id"], frame["seed"], frame["sample_index"], strict=True
        )
    ]


def test_every_row_is_reachable_page_by_page(page: Any, report: tuple[Path, pd.DataFrame]) -> None:
    from selenium.webdriver.common.by import By

    browse, frame = report
    times = [open_page(page, browse) for _ in range(3)]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "browser_open.json").write_text(
        json.dumps({"rows": len(frame), "open_ms": times, "page": "browse.html, file://"})
    )
    print(f"browse.html of {len(frame):,} rows opened in {times} ms (first: a cold profile)")
    assert page.execute_script("return document.getElementById('status').dataset.matches") == (
        str(len(frame))
    )
    prompt = page.find_element(By.CSS_SELECTOR, "#images tbody tr .ptext").text
    assert prompt == HOSTILE and page.execute_script("return window.injected") is None
    assert choose(page, "size", "200") == len(frame)
    seen = shown_keys(page)
    pages = int(page.find_element(By.ID, "pages").text.removeprefix("of ").replace(",", ""))
    assert pages == 50
    for _ in range(pages - 1):
        after(page, page.find_element(By.ID, "next").click)
        seen += shown_keys(page)
    assert page.find_element(By.ID, "next").get_attribute("disabled") is not None
    assert len(seen) == len(frame) and set(seen) == set(keys_of(frame))
    assert seen == keys_of(frame.sort_values(["model", "prompt_id"], key=_report_order(frame)))


def _report_order(frame: pd.DataFrame) -> Any:
    """Sort key of report order: models best first by mean NED, controls after them."""
    means = frame[frame["error"] == ""].groupby("model")["ned"].mean()
    models = [m for m in means.sort_values(ascending=False, kind="stable").index if ":" not in m]
    order = {m: i for i, m in enumerate([*models, "control:render"])}
    return lambda column: column.map(order) if column.name == "model" else column


def test_filters_count_what_pandas_counts(page: Any, report: tuple[Path, pd.DataFrame]) -> None:
    browse, frame = report
    open_page(page, browse)
    model = frame["model"] == "gamma"
    assert choose(page, "model", "gamma") == model.sum()
    complex_ = frame["prompt_type"] == "complex"
    assert choose(page, slice_id(page, "prompt_type"), "complex") == (model & complex_).sum()
    band = slice_labels(frame, "char_length").astype(str) == "6-10"  # the report's own bins
    assert choose(page, slice_id(page, "char_length"), "6-10") == (model & complex_ & band).sum()
    # Each menu counts what its choice would show with the other filters kept.
    assert (
        _option_count(page, "model", "beta") == (frame["model"].eq("beta") & complex_ & band).sum()
    )
    assert choose(page, slice_id(page, "char_length"), "all") == (model & complex_).sum()
    # 0.7 is no 32-bit float: a score of exactly 0.7 must still pass a bound of 0.7.
    assert (model & complex_ & frame["ned"].eq(0.7)).any()
    assert type_into(page, "score-min", "0.7") == (model & complex_ & (frame["ned"] >= 0.7)).sum()
    middle = model & complex_ & frame["ned"].between(0.7, 0.9)
    assert type_into(page, "score-max", "0.9") == middle.sum()
    assert 0 < middle.sum() < (model & complex_).sum()
    assert choose(page, "model", "all models") == (complex_ & frame["ned"].between(0.7, 0.9)).sum()
    outcome = slice_id(page, "outcome")
    page.find_element("id", "reset").click()
    assert choose(page, outcome, "failed") == (frame["error"] != "").sum() > 0


def _option_count(driver: Any, select_id: str, label: str) -> int:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    texts = [o.text for o in Select(driver.find_element(By.ID, select_id)).options]
    text = next(t for t in texts if t.startswith(f"{label} ("))
    return int(text.removeprefix(f"{label} (").removesuffix(")").replace(",", ""))


def test_search_sort_and_the_same_prompt_side_by_side(
    page: Any, report: tuple[Path, pd.DataFrame]
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    browse, frame = report
    open_page(page, browse)
    contains = frame["prompt"].str.lower().str.contains("coffee") | frame[
        "text"
    ].str.lower().str.contains("coffee")
    assert type_into(page, "search", "COFFEE") == contains.sum() > 0
    choose(page, "model", "delta")
    assert choose(page, "sort", "NED: worst first") == (contains & frame["model"].eq("delta")).sum()
    ned = page.execute_script(
        "return Array.from(document.querySelectorAll('#images tbody tr'), "
        "r => r.querySelectorAll('td.num')[0].textContent)"
    )
    shown = [float(v) if v != "–" else np.nan for v in ned]
    scored = [v for v in shown if v == v]
    assert scored == sorted(scored) and scored[0] == pytest.approx(
        frame.loc[contains & frame["model"].eq("delta"), "ned"].min(), abs=5e-4
    )
    assert all(v != v for v in shown[len(scored) :])  # failed rows (no score) come last
    header = page.find_element(By.CSS_SELECTOR, "th[data-metric='ned']")
    assert header.get_attribute("aria-sort") == "ascending"
    first = shown_keys(page)[0]
    page.find_element(By.CSS_SELECTOR, "#images tbody tr button.open").click()
    WebDriverWait(page, 30).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, "#detail .side-grid li")
    )
    prompt_id = first.split("|")[1]
    cards = page.find_elements(By.CSS_SELECTOR, "#detail .side-grid li")
    assert len(cards) == frame["prompt_id"].eq(prompt_id).sum() == 5
    assert [c.find_element(By.CLASS_NAME, "card-model").text for c in cards] == [
        "alpha", "beta", "gamma", "delta", "control:render"
    ]  # fmt: skip
    assert "open=" in page.current_url  # the view is in the address: it can be shared


def test_images_load_from_the_run_by_relative_paths(
    page: Any, report: tuple[Path, pd.DataFrame]
) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    browse, _ = report
    open_page(page, browse, "size=25")
    loaded = (
        "return Array.from(document.querySelectorAll('#images tbody img'), "
        "i => [i.complete, i.naturalWidth, i.getAttribute('src')])"
    )
    page.execute_script(
        "document.querySelectorAll('#images tbody img').forEach(i => i.loading = 'eager')"
    )
    WebDriverWait(page, 30).until(lambda d: all(c for c, _, _ in d.execute_script(loaded)))
    images = page.execute_script(loaded)
    assert len(images) == 25 and all(width == 48 for _, width, _ in images)
    assert all(src.startswith("../images/") for _, _, src in images)
    run_dir = str(browse.parent.parent.resolve())
    for path in (browse.parent / "browse").rglob("*.js"):
        assert run_dir not in path.read_text(encoding="utf-8"), path  # no machine path
