"""``glyphbench list``: every plug-in (with its options) and every metric glyphbench knows.

Reads :data:`glyphbench.core.registry.PLUGINS` and :data:`glyphbench.scoring.table.METRICS`, so a
plug-in or metric added in one file shows up here with nothing else to edit.
Importing the plug-in modules is cheap by contract: no torch, diffusers, easyocr,
gradio or onnxruntime is imported (a test checks it).
"""

from __future__ import annotations

import json
import shutil
import textwrap
from collections.abc import Iterable, Sequence
from typing import Any

import typer

from glyphbench.core.errors import InputError
from glyphbench.core.registry import PLUGINS
from glyphbench.scoring.table import METRICS

#: What ``glyphbench list`` can show: the plug-in kinds, then metrics.
SECTIONS = ("models", "readers", "codecs", "sources", "samplers", "suites", "metrics")


def list_command(
    what: str = typer.Argument(
        None, help=f"One of {', '.join(SECTIONS)} (default: all of them).", show_default=False
    ),
    as_json: bool = typer.Option(False, "--json", help="Machine-readable output (JSON)."),
) -> None:
    """List plug-ins with their options (name, type, default, description), or the metrics.

    Example: glyphbench list readers
    """
    sections = _sections(what)
    data = {section: _records(section) for section in sections}
    if as_json:
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return
    width = shutil.get_terminal_size((80, 24)).columns  # COLUMNS, the terminal, else 80
    blocks = [
        _metrics_text(data[s]) if s == "metrics" else _plugins_text(s, data[s], width)
        for s in sections
    ]
    typer.echo("\n\n".join(fit_lines(block, width) for block in blocks))


def _sections(what: str | None) -> Sequence[str]:
    if what is None:
        return SECTIONS
    if what not in SECTIONS:
        raise InputError(None, f"cannot list {what!r}; choose one of: {', '.join(SECTIONS)}")
    return (what,)


def _records(section: str) -> list[dict[str, Any]]:
    if section == "metrics":
        return [
            {
                "name": metric.name,
                "label": metric.label,
                "direction": metric.direction,
                "family": metric.family,
                "doc": metric.doc,
            }
            for metric in METRICS.all()
        ]

    return [plugin.describe() for plugin in PLUGINS.entries(section)]


# --------------------------------------------------------------------------- text


def _plugins_text(kind: str, plugins: list[dict[str, Any]], width: int = 80) -> str:
    lines = [kind]
    if not plugins:
        lines.append("  (none registered)")
    shown: dict[str, str] = {}  # options already printed -> the plug-in they were printed for
    for plugin in plugins:
        lines.append(f"  {plugin['usage']}")
        if plugin["summary"]:
            lines.append(f"      {plugin['summary']}")
        if plugin["suffixes"]:
            lines.append(f"      also a bare path ending in {', '.join(plugin['suffixes'])}")
        if plugin["unavailable"]:
            lines.append(f"      not available here: {plugin['unavailable']}")
        if "targets" in plugin:
            for target, options in plugin["targets"].items():
                lines.append(f"      {plugin['name']}:{target} options:")
                lines.extend(_option_lines(options, width))
        elif plugin["options"]:
            same = shown.get(json.dumps(plugin["options"], sort_keys=True, default=str))
            if same:  # csv:, jsonl:, parquet:, hf: share one schema: print it once
                lines.append(f"      options: the same as {same}")
                continue
            shown[json.dumps(plugin["options"], sort_keys=True, default=str)] = plugin["name"]
            lines.append("      options:")
            lines.extend(_option_lines(plugin["options"], width))
    return "\n".join(lines)


def _option_lines(options: list[dict[str, Any]], width: int = 80) -> list[str]:
    """One aligned line per option; where those run past ``width``, each option's name,
    type and default on a line and its description under it."""
    if not options:
        return ["        (none)"]
    rows = [
        (
            option["name"],
            option["type"],
            _default_text(option),
            option["description"],
        )
        for option in options
    ]
    aligned = [f"        {line}" for line in _aligned(rows)]
    if max(map(len, aligned)) <= width:
        return aligned
    lines = []
    for name, kind, default, description in rows:
        lines.append(f"        {name}  {kind}  {default}")
        lines.append(f"            {description}")
    return lines


def fit_lines(text: str, width: int) -> str:
    """``text`` with every line longer than ``width`` wrapped at spaces, its continuation
    indented four more than the line; a word longer than that (a suite's list of subsets)
    is broken after a ``|``.

    >>> print(fit_lines("  name  a description of several words", 20))
      name a description
          of several
          words
    >>> print(fit_lines("  s[:AAAA|BBBB|CCCC]", 12))
      s[:AAAA|
          BBBB|
          CCCC]
    """
    out = []
    for line in text.splitlines():
        if len(line) <= width:
            out.append(line)
            continue
        indent = " " * (len(line) - len(line.lstrip()))
        words = []
        for word in line.split():
            words += _bar_pieces(word, width - len(indent) - 4)
        out.extend(
            textwrap.wrap(
                " ".join(words),
                width,
                initial_indent=indent,
                subsequent_indent=indent + "    ",
                break_long_words=False,
                break_on_hyphens=False,
            )
        )
    return "\n".join(out).replace(BAR_BREAK + " ", "").replace(BAR_BREAK, "")


#: Marks where :func:`fit_lines` split a word after a ``|`` (removed once wrapped).
BAR_BREAK = "\x00"


def _bar_pieces(word: str, room: int) -> list[str]:
    """``word``, or its pieces ending at a ``|`` when it is longer than ``room``, each piece
    but the last marked with :data:`BAR_BREAK` (joined again where they share a line)."""
    if len(word) <= room or "|" not in word:
        return [word]
    pieces = [part + "|" for part in word.split("|")]
    pieces[-1] = pieces[-1][:-1]
    return [piece + BAR_BREAK for piece in pieces[:-1]] + [pieces[-1]]


def _default_text(option: dict[str, Any]) -> str:
    if option["required"]:
        return "required"
    return "not set" if option["default"] is None else f"default {option['default']!r}"


def _aligned(rows: Iterable[tuple[str, ...]]) -> list[str]:
    """Rows as lines whose columns line up (the last column is left ragged)."""
    rows = list(rows)
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return [
        "  ".join([*(cell.ljust(width) for cell, width in zip(row, widths, strict=False)), row[-1]])
        for row in rows
    ]


def _metrics_text(metrics: list[dict[str, Any]]) -> str:
    if not metrics:
        return "metrics\n  (none registered)"
    rows = [(m["name"], m["label"], m["direction"], f"[{m['family']}]") for m in metrics]
    lines = ["metrics"]
    for line, metric in zip(_aligned(rows), metrics, strict=True):
        lines.append(f"  {line}")
        if metric["doc"]:
            lines.append(f"      {metric['doc']}")
    return "\n".join(lines)


def register(app: typer.Typer) -> None:
    app.command("list")(list_command)
