"""The VAE and human reports as a screen reader and a low-vision reader meet them: every
table header says what it heads (``scope``), and every text colour the pages set reads at
WCAG AA contrast (4.5:1) on the page and on a striped row. html-validate (wcag/h63) found
86 and 12 headers without scope; axe-core found grey n/a cells at 2.5:1."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd

from glyphbench.vae_eval.report import write_report
from tests.helpers.human_pages import _page as human_page
from tests.helpers.vae_report_fixtures import vae_rows

#: WCAG 2.1 success criterion 1.4.3: normal text at least 4.5:1.
AA = 4.5
#: The backgrounds text sits on: the card, the striped and the hovered table row
#: (base.html.j2).
BACKGROUNDS = ("#ffffff", "#fafbfc", "#eef5fb")


class _Headers(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scopes: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "th":
            self.scopes.append(dict(attrs).get("scope"))


def _scopes(page: str) -> list[str | None]:
    parser = _Headers()
    parser.feed(page)
    return parser.scopes


def _luminance(colour: str) -> float:
    """WCAG relative luminance of ``#rrggbb``."""
    channels = [int(colour[i : i + 2], 16) / 255 for i in (1, 3, 5)]
    linear = [c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(a: str, b: str) -> float:
    high, low = sorted((_luminance(a), _luminance(b)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def text_colours(page: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Each ``color:`` the page's styles set (variables resolved) -> (colour, the backgrounds
    it is read on: the rule's own, the header's for header text, else the page's)."""
    style = " ".join(re.findall(r"<style>(.*?)</style>", page, flags=re.S))
    variables = dict(re.findall(r"(--[\w-]+)\s*:\s*(#[0-9a-fA-F]{6})", style))
    rules = re.findall(r"([^{}]+)\{([^{}]*)\}", style)

    def colours(body: str, prop: str) -> list[str]:
        values = re.findall(rf"(?<![\w-]){prop}\s*:\s*([^;}}\s!]+)", body)
        resolved = [variables.get(v[4:-1], v) if v.startswith("var(") else v for v in values]
        return [v.lower() for v in resolved if re.fullmatch(r"#[0-9a-fA-F]{6}", v)]

    header = next((colours(b, "background")[0] for sel, b in rules if sel.strip() == "header"), "")
    found = {}
    for selector, body in rules:
        for value in colours(body, "color"):
            own = tuple(colours(body, "background"))
            under = (header,) if selector.strip().startswith("header") else BACKGROUNDS
            found[f"{selector.strip()} -> {value}"] = (value, own or under)
    return found


def _vae_page(tmp_path: Path) -> str:
    rows = vae_rows("taesd:taef2", {48: 100.0, 14: 20.0})
    rows += vae_rows("identity", {48: 100.0, 14: 90.0})
    return write_report(pd.DataFrame(rows), tmp_path).read_text(encoding="utf-8")


def test_every_header_of_the_vae_and_human_reports_has_a_scope(tmp_path: Path) -> None:
    for page in (_vae_page(tmp_path), human_page({"ned": {"tau": 0.5, "p": 0.2}})):
        scopes = _scopes(page)
        assert scopes and all(s in ("col", "row") for s in scopes), scopes


def test_every_text_colour_of_the_pages_meets_aa_contrast(tmp_path: Path) -> None:
    for page in (_vae_page(tmp_path), human_page({"ned": {"tau": 0.5, "p": 0.2}})):
        colours = text_colours(page)
        assert colours  # the parse found the pages' styles
        worst = {
            rule: round(min(contrast(colour, bg) for bg in backgrounds), 2)
            for rule, (colour, backgrounds) in colours.items()
        }
        assert not {rule: ratio for rule, ratio in worst.items() if ratio < AA}, worst
