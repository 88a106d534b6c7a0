"""In headless Chromium at 1366 px: every number of the benchmark
and VAE reports sits under its own header, and no table is wider than its box (the VAE
threshold's evidence cell was one 1,763 px line)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.browser import chromium_driver, needs_chromium
from tests.helpers.report_pages import _bench_report, _vae_report

pytestmark = [pytest.mark.slow, pytest.mark.timeout(420), needs_chromium]

#: Per table: its box's overflow, and each numeric column's header right edge against its
#: cells' right edges (a number under its own header: they line up).
MEASURE = """
const out = [];
const align = el => getComputedStyle(el).textAlign;
document.querySelectorAll('.table-wrap').forEach((wrap, t) => {
  const table = wrap.querySelector('table');
  const heads = Array.from(table.querySelectorAll('thead th'));
  const rows = Array.from(table.querySelectorAll('tbody tr'));
  const misaligned = [];
  let numeric = 0;
  heads.forEach((th, j) => {
    const cells = rows.map(tr => tr.children[j]).filter(c => c && c.tagName === 'TD');
    if (!cells.length || !cells.every(c => align(c) === 'right')) return;
    numeric += 1;  // a column of right-aligned numbers: its header must sit over them
    const right = th.getBoundingClientRect().right;
    if (align(th) !== 'right') misaligned.push(th.textContent.trim());
    cells.forEach(c => {
      if (Math.abs(c.getBoundingClientRect().right - right) > 1.5)
        misaligned.push(th.textContent.trim());
    });
  });
  out.push({table: t, overflow: wrap.scrollWidth - wrap.clientWidth,
            misaligned: Array.from(new Set(misaligned)), numeric: numeric});
});
return out;
"""


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with chromium_driver(tmp_path_factory.mktemp("profile"), width=1366, height=900) as driver:
        yield driver


def measure(browser: Any, page: Path) -> list[dict[str, Any]]:
    browser.get(page.as_uri())
    browser.execute_script("document.querySelectorAll('details').forEach(d => d.open = true);")
    tables: list[dict[str, Any]] = browser.execute_script(MEASURE)
    return tables


def test_bench_report_numbers_sit_under_their_headers_at_1366(browser: Any, tmp_path: Path) -> None:
    tables = measure(browser, _bench_report(tmp_path))
    assert sum(t["numeric"] for t in tables) > 10  # numeric headers are marked as such
    assert [t for t in tables if t["misaligned"]] == []
    assert [t for t in tables if t["overflow"] > 1] == []


def test_vae_report_tables_fit_1366_and_line_up(browser: Any, tmp_path: Path) -> None:
    tables = measure(browser, _vae_report(tmp_path))
    assert sum(t["numeric"] for t in tables) > 10
    assert [t for t in tables if t["overflow"] > 1] == []
    assert [t for t in tables if t["misaligned"]] == []
