"""The three reports (benchmark, VAE, human study) as the standard page checkers see them.

html-validate checks the markup of every ``.html`` page of each report (the rules of
``.ci/npm/htmlvalidate.cjs``: the HTML standard and the WCAG techniques it can check) and
must find no error and no warning; axe-core checks each page as headless Chromium shows it
(opened from ``file://``, every ``<details>`` opened so that its contents count) against
WCAG 2.0, 2.1 and 2.2 at levels A and AA, and must find no violation.

Both tools are pinned in ``.ci/npm`` (package.json and its lock) and installed by
``make npm-tools`` into ``build/npm``; ``.ci/run`` installs them where npm is found. Where
they or Chromium are missing, these tests skip, saying why.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.browser import chromium_driver, needs_chromium
from tests.helpers.human_fixtures import rated_study
from tests.helpers.paths import REPO_ROOT
from tests.helpers.report_fixtures import build_run
from tests.helpers.vae_report_fixtures import vae_results

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

REPO = REPO_ROOT
NODE_MODULES = REPO / "build" / "npm" / "node_modules"
HTML_VALIDATE = NODE_MODULES / ".bin" / "html-validate"
AXE = NODE_MODULES / "axe-core" / "axe.min.js"
HTML_VALIDATE_CONFIG = REPO / ".ci" / "npm" / "htmlvalidate.cjs"
#: axe-core's tags for the WCAG success criteria at levels A and AA, versions 2.0 to 2.2.
WCAG_TAGS = ("wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa")
REPORTS = ("bench", "vae", "human", "reader card")

needs_html_validate = pytest.mark.skipif(
    not HTML_VALIDATE.exists() or shutil.which("node") is None,
    reason=f"needs node and html-validate in {NODE_MODULES} (`make npm-tools`)",
)
needs_axe = pytest.mark.skipif(
    not AXE.exists(), reason=f"needs axe-core in {NODE_MODULES} (`make npm-tools`)"
)


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Report name -> the folder of a small real report of that kind."""
    from glyphbench.human_eval.report import write_report as write_human_report
    from glyphbench.human_eval.study import load_study
    from glyphbench.report import write_report as write_bench_report
    from glyphbench.vae_eval.report import write_report as write_vae_report

    root = tmp_path_factory.mktemp("a11y-reports")
    run = build_run(root / "run", n_prompts=16)
    study = load_study(rated_study(root / "rated"))
    return {
        "bench": write_bench_report([run], root / "bench", n_boot=200).parent,
        "vae": write_vae_report(vae_results(), root / "vae").parent,
        "human": write_human_report(study, root / "human", n_boot=200).parent,
        "reader card": _reader_card_page(root / "card"),
    }


def _reader_card_page(folder: Path) -> Path:
    """A reader card's real-image page (glyphbench.calibration.error_page) on 6 real images."""
    from glyphbench.calibration.error_page import PAGE_NAME, error_page
    from glyphbench.calibration.real_set import load_real_set, real_rows, shipped_real_set

    manifest = shipped_real_set()
    if manifest is None:
        pytest.skip("tests/data/real_t2i is not here")
    frame = load_real_set(manifest, limit=6)
    readings = frame["human_reading"].tolist()
    readings[0], readings[1] = "", readings[1][::-1]  # nothing read; a misreading
    page = error_page(real_rows(frame, readings), frame["path"].tolist(), "fixture", "1")
    folder.mkdir(parents=True)
    (folder / PAGE_NAME).write_text(page, encoding="utf-8")
    return folder


def pages(folder: Path) -> list[Path]:
    found = sorted(folder.rglob("*.html"))
    assert found, f"no .html page in {folder}"
    return found


def html_validate(paths: list[Path]) -> list[dict[str, Any]]:
    """html-validate's results (one per file, with its messages) for ``paths``."""
    done = subprocess.run(
        [str(HTML_VALIDATE), "--config", str(HTML_VALIDATE_CONFIG), "--formatter", "json"]
        + [str(p) for p in paths],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr  # 1: problems found; anything else: broken
    results: list[dict[str, Any]] = json.loads(done.stdout or "[]")
    return results


def problems(results: list[dict[str, Any]]) -> list[str]:
    """Each error and warning as ``file:line:column rule: message``."""
    return [
        f"{Path(r['filePath']).name}:{m['line']}:{m['column']} {m['ruleId']}: {m['message']}"
        for r in results
        for m in r["messages"]
    ]


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with chromium_driver(tmp_path_factory.mktemp("profile"), width=1366, height=900) as driver:
        driver.set_script_timeout(120)
        yield driver


#: Ready when loaded and, for pages that draw themselves (the image browser), drawn.
READY = (
    "return document.readyState === 'complete'"
    " && ['ready', undefined].includes(document.body.dataset.state);"
)
RUN_AXE = """
const done = arguments[arguments.length - 1];
axe.run(document, {runOnly: {type: "tag", values: arguments[0]}})
  .then(result => done(result.violations.map(v => ({
    id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.map(n => n.target.join(" ") + ": " + n.failureSummary)}))))
  .catch(error => done([{id: "axe-error", impact: "", help: String(error), nodes: []}]));
"""


def axe_violations(driver: Any, page: str) -> list[dict[str, Any]]:
    """axe-core's WCAG A/AA violations on ``page`` (a URL) with every ``<details>`` open."""
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get("about:blank")
    driver.get(page)
    WebDriverWait(driver, 60).until(lambda d: d.execute_script(READY))
    driver.execute_script("document.querySelectorAll('details').forEach(d => { d.open = true; });")
    driver.execute_script(AXE.read_text(encoding="utf-8"))
    violations: list[dict[str, Any]] = driver.execute_async_script(RUN_AXE, list(WCAG_TAGS))
    return violations


def describe(violations: list[dict[str, Any]]) -> str:
    return "\n".join(
        f"{v['id']} ({v['impact']}): {v['help']}\n    " + "\n    ".join(v["nodes"][:10])
        for v in violations
    )


BROKEN_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>broken</title></head>
<body><main><h1>A page with two faults</h1>
<p style="color:#bbbbbb; background:#ffffff">Grey text on white, 1.9:1.</p>
<img src="missing.png"></main></body></html>
"""


@needs_html_validate
@pytest.mark.parametrize("name", REPORTS)
def test_html_validate_finds_no_problem_on_any_page(reports: dict[str, Path], name: str) -> None:
    found = problems(html_validate(pages(reports[name])))
    assert not found, "\n".join(found)


@needs_chromium
@needs_axe
@pytest.mark.parametrize("name", REPORTS)
def test_axe_finds_no_wcag_violation_on_any_page(
    reports: dict[str, Path], browser: Any, name: str
) -> None:
    for page in pages(reports[name]):
        violations = axe_violations(browser, page.as_uri())
        assert not violations, f"{page.name} of the {name} report:\n{describe(violations)}"


@needs_chromium
@needs_axe
@needs_html_validate
def test_both_checkers_find_the_faults_of_a_broken_page(tmp_path: Path, browser: Any) -> None:
    """The checks above can fail: an image without alt text and grey text on white."""
    page = tmp_path / "broken.html"
    page.write_text(BROKEN_PAGE, encoding="utf-8")
    assert any("wcag/h37" in p for p in problems(html_validate([page])))
    found = {v["id"] for v in axe_violations(browser, page.as_uri())}
    assert {"image-alt", "color-contrast"} <= found, found
