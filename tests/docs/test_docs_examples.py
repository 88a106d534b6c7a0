"""The runnable examples of the docs print what the docs say they print."""

from __future__ import annotations

import contextlib
import io

from tests.helpers.paths import REPO_ROOT

DOCS = REPO_ROOT / "docs"


def _blocks(text: str, start: str) -> tuple[str, str]:
    """The python block after ``start`` and the text block that follows it."""
    at = text.index(start)
    code = text.index("```python\n", at) + len("```python\n")
    code_end = text.index("```", code)
    shown = text.index("```text\n", code_end) + len("```text\n")
    return text[code:code_end], text[shown : text.index("```", shown)]


def test_the_reader_aware_interval_example_of_metrics_md() -> None:
    code, printed = _blocks((DOCS / "metrics.md").read_text("utf-8"), "**Example** (runnable")
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "docs/metrics.md", "exec"), {})
    assert out.getvalue() == printed
