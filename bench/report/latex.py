r"""LaTeX tables that fit a paper's page: a 5.5-inch text width (NeurIPS, ICLR) by default,
or a template's (:data:`TEX_WIDTHS`, ``report --tex-width``).

A display table (``mean [lo, hi]`` cells, long headers, model names) set as it is
runs off the page. :func:`fit_table` lays it out to fit ``width_pt``:

* a metric header becomes its abbreviation (``NED``, ``EM``), defined in the caption
  from the metric table's labels; other headers wrap onto several lines;
* an interval goes under its mean in smaller type (``0.812`` over ``[0.790, 0.830]``);
* text columns (models, verdicts, lists) wrap in a ``\parbox`` of the width left, with
  break points after ``:``, ``?``, ``=``, ``/``, ``_``, ``,`` so that
  ``control:typo?rate=0.1`` can break;
* a run of letters with no break point wider than a narrow column breaks anywhere, and a
  text cell longer than :data:`MAX_CELL_CHARS` characters is cut (``...``);
* columns that still do not fit go to a second (third...) block of the table, each
  repeating the first column; rows beyond :data:`MAX_LINES` lines of text (every
  block's, wrapped cells counted line by line) go to the next table (``continued``).

Widths are estimated from Computer Modern's character widths at ``\small``, with a
margin; ``tests/bench/report/test_report_latex.py`` compiles every table of a report with pdflatex
at the templates' widths and fails on any overfull box. Only ``booktabs`` and
``amssymb`` are needed (no ``array``, ``makecell`` or ``tabularx``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import pandas as pd

from glyphbench.core.errors import InputError
from glyphbench.report.metric_info import metric_label

#: TeX points per inch (a LaTeX point is 1/72.27 in).
PT_PER_IN = 72.27

#: Text widths of common paper templates, in inches, read from each template's style file:
#: ``report --tex-width NAME`` (a ``-column`` name: one column of a two-column paper, the
#: width of a ``table`` float there; the plain name: ``table*`` across both).
#:
#: * neurips: ``neurips_2024.sty``, geometry ``textwidth=5.5in``;
#: * iclr: ICLR/Master-Template ``iclr2026_conference.sty``, ``\textwidth 5.5 true in``;
#: * icml: ``icml2024.sty``, ``\textwidth 6.75in``, ``\columnsep 0.25in``;
#: * acl: ``acl.sty`` (acl-org/acl-style-files), A4 with ``margin=2.5cm``: 16.0 cm,
#:   ``\columnsep 0.6cm``;
#: * cvpr: cvpr-org/author-kit ``cvpr.sty``, ``\textwidth 6.875in``, ``\columnsep 0.3125in``;
#: * full: 7 in, a letter page with 0.75 in margins.
TEX_WIDTHS: dict[str, float] = {
    "neurips": 5.5,
    "iclr": 5.5,
    "icml": 6.75,
    "icml-column": (6.75 - 0.25) / 2,
    "acl": 16.0 / 2.54,
    "acl-column": (16.0 - 0.6) / 2 / 2.54,
    "cvpr": 6.875,
    "cvpr-column": (6.875 - 0.3125) / 2,
    "full": 7.0,
}
#: The default: the narrowest full text width of the templates above (NeurIPS, ICLR).
DEFAULT_TEX_WIDTH = "neurips"
TEXT_WIDTH_PT = TEX_WIDTHS[DEFAULT_TEX_WIDTH] * PT_PER_IN

#: Units ``--tex-width`` takes, in TeX points.
_UNITS = {"in": PT_PER_IN, "cm": PT_PER_IN / 2.54, "mm": PT_PER_IN / 25.4, "pt": 1.0}


def tex_width_pt(value: str | float | None) -> float:
    """A text width in TeX points from a preset name (:data:`TEX_WIDTHS`) or a length
    (``5.5in``, ``14cm``, ``397pt``); None: the default (5.5 in).

    >>> round(tex_width_pt("neurips"), 2), round(tex_width_pt("acl"), 2)
    (397.48, 455.24)
    >>> round(tex_width_pt("3.25in"), 2), tex_width_pt(None) == tex_width_pt("iclr")
    (234.88, True)
    """

    if value is None:
        return TEXT_WIDTH_PT
    if isinstance(value, int | float):
        return float(value)
    text = value.strip().lower()
    if text in TEX_WIDTHS:
        return TEX_WIDTHS[text] * PT_PER_IN
    match = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(in|cm|mm|pt)", text)
    if match is None:
        names = ", ".join(TEX_WIDTHS)
        raise InputError(
            "--tex-width", f"{value!r} is neither a template ({names}) nor a length like 5.5in"
        )
    width = float(match.group(1)) * _UNITS[match.group(2)]
    if not 2 * PT_PER_IN <= width <= 12 * PT_PER_IN:
        raise InputError("--tex-width", f"{value!r} is not between 2 and 12 inches")
    return width


#: Lines of text (``\small``, about 11pt each) of one table float, every block together,
#: before the rest continues in the next: a 9-inch page less caption and rules.
MAX_LINES = 44
#: ``\tabcolsep`` the tables set (LaTeX's default is 6pt).
COLSEP_PT = 4.0
#: Narrowest width a wrapped text column is given.
MIN_TEXT_PT = 60.0
#: Width of ``\scriptsize`` (cmr7) text relative to ``\small`` (cmr9): 7/9 of the size,
#: but cmr7's letters are drawn wider (a digit is 4.08pt against cmr9's 4.61pt).
SCRIPT_RATIO = 0.9

#: Abbreviations of the report's metric headers (label from the metric table).
ABBREVIATIONS = {
    "ned": "NED",
    "exact_match": "EM",
    "algorithm1": "Alg1",
    "anls": "ANLS",
    "word_f1": "WF1",
    "word_precision": "WP",
    "word_recall": "WR",
    "sentence_acc": "SA",
    "cer": "CER",
    "error_rate": "ErrR",
}

# Approximate advance widths of Computer Modern Roman at 9pt (\small), in points.
_NARROW = set("ijlt.,:;'|!()[]`I ")
_WIDE = set("mwMW%@<>")  # \textless and \textgreater come from the math font, wide


def text_width(text: str, scale: float = 1.0) -> float:
    """Estimated width of ``text`` set in ``\\small`` (times ``scale``), with a 6% margin.

    >>> round(text_width("0.812"), 1), round(text_width("Model"), 1)
    (22.3, 25.7)
    """
    total = 0.0
    for ch in text:
        if ch in _NARROW:
            total += 2.6
        elif ch in _WIDE:
            total += 7.5
        elif ch.isupper():
            total += 6.6
        elif ch.isdigit():
            total += 4.6
        else:
            total += 4.7
    return total * 1.06 * scale


def _break_points(escaped: str) -> str:
    r"""Escaped text with ``\allowbreak{}`` after characters a long name can break at."""
    return re.sub(r"(:|\?|=|/|\\_|,|;)(?!\s)", r"\1\\allowbreak{}", escaped)


@dataclass
class _Column:
    name: str
    header: list[str]  # header lines (plain text)
    numeric: bool
    cells: list[list[str]]  # per row: plain text lines (second line: the interval)
    natural: float = 0.0
    floor: float = 0.0
    width: float = 0.0
    wrap: bool = False


def _split_cell(text: str, numeric: bool) -> list[str]:
    """A numeric cell's mean and its interval (or note) on two lines.

    >>> _split_cell("0.500 [0.400, 0.600]", True), _split_cell("63.00 (n = 1: too few)", True)
    (['0.500', '[0.400, 0.600]'], ['63.00', '(n = 1: too few)'])
    """
    if numeric:
        for mark in (" [", " ("):
            if mark in text:
                head, tail = text.split(mark, 1)
                return [head, mark.strip() + tail]
    return [text]


def _wrap(text: str, width: float) -> list[str]:
    """Words of ``text`` on lines no wider than ``width`` (a longer word keeps its line)."""
    lines: list[str] = []
    for word in text.split():
        if lines and text_width(lines[-1] + " " + word) <= width:
            lines[-1] += " " + word
        else:
            lines.append(word)
    return lines or [""]


#: A run of characters with no break point in it (a long model name, a text to render of
#: one long word) wider than this may break anywhere, into pieces no wider: set whole it
#: ran thousands of points past the page. Below the narrowest wrapped column, with room.
LONG_RUN_PT = 0.8 * MIN_TEXT_PT
_UNBROKEN = re.compile(r"[^\s:?=/_,;]+")


def _runs(text: str) -> list[str]:
    """``text`` cut inside every run without a break point wider than :data:`LONG_RUN_PT`,
    into pieces no wider (the cell joins them with ``\allowbreak{}``).

    >>> _runs("SDXLFinetunedOnTextCaps rank:128")
    ['SDXLFine', 'tunedOnTe', 'xtCaps rank:128']
    """
    pieces, start = [], 0
    for run in _UNBROKEN.finditer(text):
        width = 0.0
        for at in range(run.start(), run.end()):
            width += text_width(text[at])
            if width > LONG_RUN_PT and at > start:
                pieces.append(text[start:at])
                start, width = at, text_width(text[at])
    return [*pieces, text[start:]]


def _token_floor(lines: Sequence[str]) -> float:
    """Width of the longest piece a wrapped cell cannot break (between break points)."""
    pieces = [
        piece
        for line in lines
        for cut in _runs(line)
        for piece in re.split(r"[\s:?=/_,;]", cut)
    ]
    return max((text_width(p + "-") for p in pieces), default=0.0)


def abbreviations() -> dict[str, str]:
    """Metric label (from the metric table) -> its abbreviation, longest label first.

    >>> abbreviations()["NED similarity (1 = exact)"], abbreviations()["Exact match"]
    ('NED', 'EM')
    """

    pairs = {metric_label(name): short for name, short in ABBREVIATIONS.items()}
    return dict(sorted(pairs.items(), key=lambda item: -len(item[0])))


def _header(name: str, abbreviations: Mapping[str, str]) -> str:
    """``name`` with a metric label it starts with abbreviated.

    >>> _header("NED similarity (1 = exact) ↑", {"NED similarity (1 = exact)": "NED"})
    'NED ↑'
    """
    for long, short in abbreviations.items():
        if name.startswith(long):
            return short + name[len(long) :]
    return name


#: A text cell longer than this is cut, "..." marking the cut: a 135-letter word sliced by
#: ``--by text`` took more lines than a page in each block of a narrow column. The
#: CSV and Markdown tables keep every cell whole.
MAX_CELL_CHARS = 80


def _shorten(text: str) -> str:
    """``text``, cut in its middle to :data:`MAX_CELL_CHARS` characters where it is longer
    (the end stays: a label's run tag, ``[reader rapidocr, b]``, tells two runs apart).

    >>> cut = _shorten("m" * 90 + " [reader rapidocr, run-b]")
    >>> cut[-30:], len(cut)
    ('mm... [reader rapidocr, run-b]', 80)
    """
    if len(text) <= MAX_CELL_CHARS:
        return text
    tail = (MAX_CELL_CHARS - 3) // 3
    return text[: MAX_CELL_CHARS - 3 - tail] + "..." + text[-tail:]


def _columns(
    table: pd.DataFrame,
    text_of: Callable[[Any, str], str],
    numeric: Mapping[str, bool],
    abbreviations: Mapping[str, str],
) -> list[_Column]:
    columns = []
    for name in table.columns:
        is_number = numeric[str(name)]
        cells = [_split_cell(text_of(v, str(name)), is_number) for v in table[name]]
        if not is_number:
            cells = [[_shorten(line) for line in cell] for cell in cells]
        body = max(
            (max([text_width(c[0]), *(text_width(x, SCRIPT_RATIO) for x in c[1:])]) for c in cells),
            default=0.0,
        )
        header_text = _header(str(name), abbreviations)
        header = _wrap(header_text, max(body, text_width("Shared"), 40.0))
        head = max(text_width(line) for line in header)
        natural = max(body, head)
        floor = (
            max(_token_floor([line for c in cells for line in c]), head, MIN_TEXT_PT)
            if not is_number
            else natural
        )
        columns.append(
            _Column(str(name), header, is_number, cells, natural, min(floor, natural), natural)
        )
    return columns


def _total(columns: Sequence[_Column]) -> float:
    return sum(c.width + 2 * COLSEP_PT for c in columns)


def _narrow(columns: Sequence[_Column], over: float, floor: Callable[[_Column], float]) -> None:
    """Take ``over`` points from the text columns, widest first, down to ``floor``."""
    for column in sorted(columns, key=lambda c: c.width, reverse=True):
        cut = min(over, column.width - floor(column))
        if over <= 0 or column.numeric or cut <= 0:
            continue
        column.width -= cut
        column.wrap = True
        over -= cut


def _fit(columns: list[_Column], width: float) -> list[list[_Column]]:
    """Columns' widths (text columns narrowed, wrapped) and the blocks they go in."""
    _narrow(columns, _total(columns) - width, lambda c: c.floor)
    if _total(columns) <= width:
        return [columns]
    keys = _key_columns(columns)
    blocks = [[*keys, *part] for part in _parts(columns[len(keys) :], width - _total(keys))]
    for block in blocks:  # a block still too wide: its text columns wrap tighter
        _narrow(block, _total(block) - width, lambda c: min(c.width, MIN_TEXT_PT))
    return blocks


def _parts(columns: Sequence[_Column], budget: float) -> list[list[_Column]]:
    """``columns`` in as few consecutive parts as fit ``budget``, balanced in width."""
    count, used = 1, 0.0  # fewest parts a greedy fill needs
    for column in columns:
        if used and used + _total([column]) > budget:
            count, used = count + 1, 0.0
        used += _total([column])
    target = _total(columns) / count
    parts: list[list[_Column]] = [[]]
    used = 0.0
    for column in columns:
        step = _total([column])
        full = used + step > budget or (used >= target and len(parts) < count)
        if parts[-1] and full:
            parts.append([])
            used = 0.0
        parts[-1].append(column)
        used += step
    return parts


def _lines(column: _Column, row: int) -> int:
    """Lines the cell of ``row`` takes in ``column`` (an interval's second line; wrapping)."""
    cell = column.cells[row]
    if column.numeric or not column.wrap:
        return len(cell)
    return sum(len(_wrap(" ".join(_pieces(line)), column.width)) for line in cell)


def _pieces(line: str) -> list[str]:
    """What a wrapped cell's line can break into: its words, cut after each break point
    and inside long runs (:func:`_runs`); packed as words, a line count errs high."""
    return [
        piece
        for word in line.split()
        for part in re.split(r"(?<=[:?=/_,;])", word)
        for piece in _runs(part)
        if piece
    ]


def _chunks(
    records: list[tuple[int, Any]], blocks: Sequence[Sequence[_Column]]
) -> list[list[tuple[int, Any]]]:
    """The rows in consecutive parts whose lines (all blocks, headers included) fit a page."""
    header = sum(max(len(c.header) + 1 for c in block) for block in blocks)
    chunks: list[list[tuple[int, Any]]] = [[]]
    used = header
    for number, record in records:
        height = sum(max(_lines(c, number) for c in block) for block in blocks)
        if chunks[-1] and used + height > MAX_LINES:
            chunks.append([])
            used = header
        chunks[-1].append((number, record))
        used += height
    return chunks


def _key_columns(columns: Sequence[_Column]) -> list[_Column]:
    """The leading text columns (model, slice) every block repeats: at most two."""
    keys = []
    for column in columns[:2]:
        if column.numeric:
            break
        keys.append(column)
    return keys or list(columns[:1])


def fit_table(
    table: pd.DataFrame,
    caption: str,
    label: str,
    *,
    escape: Callable[[str], str],
    text_of: Callable[[Any, str], str],
    numeric: Mapping[str, bool],
    bold: Callable[[Mapping[str, Any], str], bool],
    width_pt: float = TEXT_WIDTH_PT,
) -> str:
    """``table`` as one or more booktabs ``table`` floats that fit ``width_pt``.

    Headers that start with a metric's label are abbreviated (:func:`abbreviations`) and
    the caption defines each abbreviation used. ``bold(record, column)``: whether that
    cell is set in bold.
    """
    known = abbreviations()
    used = {
        label: short
        for label, short in known.items()
        if any(str(c).startswith(label) for c in table.columns)
    }
    columns = _columns(table, text_of, numeric, used)
    blocks = _fit(columns, width_pt - 4.0)  # a little room for rounding in TeX
    defined = [f"{short}: {label}" for label, short in used.items()]
    caption_text = caption + (" " + "; ".join(defined) + "." if defined else "")
    records = list(enumerate(table.to_dict("records")))
    chunks = _chunks(records, blocks)
    out = []
    for k, rows in enumerate(chunks):
        lines = [r"\begin{table}[tp]", r"\centering", r"\small"]
        lines.append(rf"\setlength{{\tabcolsep}}{{{COLSEP_PT:g}pt}}")
        for b, block in enumerate(blocks):
            if b:
                lines.append(r"\par\medskip")
            lines += _tabular(block, rows, escape, bold)
        more = f" (continued, part {k + 1} of {len(chunks)})" if k else ""
        if len(chunks) > 1 and not k:
            more = f" (part 1 of {len(chunks)})"
        lines.append(rf"\caption{{{escape(caption_text + more)}}}")
        if label and not k:
            lines.append(rf"\label{{{label}}}")
        lines.append(r"\end{table}")
        out.append("\n".join(lines))
    return "\n".join(out) + "\n"


def _tabular(
    block: Sequence[_Column],
    rows: Sequence[tuple[int, Mapping[str, Any]]],
    escape: Callable[[str], str],
    bold: Callable[[Mapping[str, Any], str], bool],
) -> list[str]:
    """One ``tabular`` of ``block``'s columns for ``rows`` (row number, record)."""
    spec = "".join("r" if c.numeric else "l" for c in block)
    lines = [rf"\begin{{tabular}}{{{spec}}}", r"\toprule"]
    heads = []
    for column in block:
        parts = _wrap(" ".join(column.header), column.width) if column.wrap else column.header
        heads.append(_stack([escape(p) for p in parts], "r" if column.numeric else "l", "b"))
    lines.append(" & ".join(_guard(h) for h in heads) + r" \\")
    lines.append(r"\midrule")
    for number, record in rows:
        cells = [
            _cell(column, column.cells[number], escape, bold(record, column.name))
            for column in block
        ]
        lines.append(" & ".join(_guard(c) for c in cells) + r" \\")
    lines += [r"\bottomrule", r"\end{tabular}"]
    return lines


def _stack(parts: Sequence[str], align: str, anchor: str = "t") -> str:
    if len(parts) == 1:
        return parts[0]
    body = r" \\ ".join(_guard(part) for part in parts)
    return rf"\begin{{tabular}}[{anchor}]{{@{{}}{align}@{{}}}}{body}\end{{tabular}}"


def _guard(text: str) -> str:
    r"""``text`` that may follow ``\\`` (a leading ``[`` would be read as its option)."""
    return "{}" + text if text.startswith("[") else text


def _cell(column: _Column, lines: Sequence[str], escape: Callable[[str], str], strong: bool) -> str:
    if column.wrap and not column.numeric:  # break points, and breaks inside long runs
        first = r"\allowbreak{}".join(_break_points(escape(p)) for p in _runs(lines[0]))
    else:
        first = escape(lines[0])
    if strong:
        first = rf"\textbf{{{first}}}"
    if column.numeric:
        rest = [rf"{{\scriptsize {escape(x)}}}" for x in lines[1:]]
        return _stack([first, *rest], "r")
    if column.wrap:
        return rf"\parbox[t]{{{column.width:.1f}pt}}{{\raggedright\hspace{{0pt}}{first}}}"
    return first
