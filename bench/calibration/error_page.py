"""The real-image part of a calibration card as a page to look at: every image beside what the
person read and what the reader read, the largest benchmark-score errors first.

A reader's mean error says how far it is from a person; the page says *where*: which images,
which kinds of text (a stray detection, a line read out of order, a display font missed). It is
one self-contained HTML file (``real_images.html`` beside ``card.md``): each image is embedded
as a small JPEG thumbnail (:data:`THUMB_SIDE` pixels on its longer side), every text is
escaped, so the page opens anywhere and carries nothing that runs.

Order: images with an intended text by ``score_error`` (|NED(intended, reader) - NED(intended,
person)|, the card's benchmark-score error), largest first; then the images without an
intended text by how far the reading is from the person's (``1 - ned_vs_human``).
"""

from __future__ import annotations

import base64
import html
import io
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from glyphbench.core.images import shrunk_copy

if TYPE_CHECKING:
    import pandas as pd

#: Longer side of an embedded thumbnail, in pixels: enough to read a sign, small enough that
#: a page of 400 images stays a few megabytes.
THUMB_SIDE = 320

#: The page's file name in a card folder.
PAGE_NAME = "real_images.html"

_STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5rem; color: #111; }
table { border-collapse: collapse; width: 100%; }
caption { text-align: left; padding: 0.4rem 0; font-weight: 600; }
th, td { border-top: 1px solid #ccc; padding: 0.4rem; vertical-align: top; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.text { font-family: ui-monospace, monospace; white-space: pre-wrap; max-width: 22rem; }
img { max-width: 320px; height: auto; }
.empty { color: #595959; font-style: italic; }
"""


def page_order(rows: pd.DataFrame) -> list[int]:
    """Positions of ``rows`` in page order (see the module docstring).

    >>> import pandas as pd
    >>> rows = pd.DataFrame({"score_error": [0.1, float("nan"), 0.5, 0.0],
    ...                      "ned_vs_human": [0.9, 0.2, 0.5, 1.0]})
    >>> page_order(rows)
    [2, 0, 3, 1]
    """
    scored = rows["score_error"].notna()
    with_text = rows.loc[scored, "score_error"].sort_values(ascending=False, kind="stable")
    without = (1 - rows.loc[~scored, "ned_vs_human"]).sort_values(ascending=False, kind="stable")
    positions = {label: place for place, label in enumerate(rows.index)}
    return [positions[label] for label in [*with_text.index, *without.index]]


def thumbnail_uri(path: str | Path, side: int = THUMB_SIDE) -> str | None:
    """The image at ``path`` as a ``data:`` URI of a JPEG no larger than ``side`` pixels.

    None when the file is missing or not an image (the page says so in its place).
    """
    shrunk = shrunk_copy(path, side)
    if shrunk is None:
        return None
    buffer = io.BytesIO()
    shrunk[0].save(buffer, format="JPEG", quality=80)
    return "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _text_cell(text: object) -> str:
    value = "" if text is None or text != text else str(text)
    if not value.strip():
        return '<td class="text"><span class="empty">(nothing)</span></td>'
    return f'<td class="text">{html.escape(value)}</td>'


def _number(value: object) -> str:
    return "–" if value is None or value != value else f"{float(str(value)):.3f}"


def _image_cell(image_uri: str | None, alt: str) -> str:
    if image_uri is None:
        return '<td><span class="empty">(image missing or unreadable)</span></td>'
    return f'<td><img src="{image_uri}" alt="{alt}" loading="lazy"></td>'


def _row(line: dict[str, object], image_uri: str | None) -> str:
    where = html.escape(
        f"{line.get('model', '')} · {line.get('source_repo', '')} · "
        f"{line.get('part', '')}, collection {line.get('collection', '') or '–'}"
    )
    alt = html.escape(f"{line.get('file', '')}: output of {line.get('model', '')}", quote=True)
    return (
        "<tr>"
        f"{_image_cell(image_uri, alt)}"
        f"<td>{where}</td>"
        f"{_text_cell(line.get('intended_text'))}"
        f"{_text_cell(line.get('human_reading'))}"
        f"{_text_cell(line.get('reading'))}"
        f'<td class="num">{_number(line.get("score_error"))}</td>'
        f'<td class="num">{_number(line.get("ned_vs_human"))}</td>'
        "</tr>"
    )


def error_page(rows: pd.DataFrame, paths: Sequence[str], reader: str, version: str) -> str:
    """The page (HTML text) of :func:`~glyphbench.calibration.real_set.real_rows` ``rows``
    whose images lie at ``paths`` (one per row, in order), read by ``reader`` ``version``."""
    if len(paths) != len(rows):
        raise ValueError(f"{len(paths)} image paths for {len(rows)} rows")
    order = page_order(rows.reset_index(drop=True))
    records = rows.reset_index(drop=True).to_dict("records")
    errors = rows["score_error"].dropna()
    measured = (
        f"Mean benchmark-score error {errors.mean():.3f} over {errors.size} images with an "
        "intended text"
        if errors.size
        else "No image with an intended text"
    )
    body = "\n".join(_row(records[i], thumbnail_uri(paths[i])) for i in order)
    title = f"Reader {reader} on {len(rows)} real images"
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        f"<title>{html.escape(title)}</title>\n<style>{_STYLE}</style>\n</head>\n<body>\n"
        f"<h1>{html.escape(title)}</h1>\n"
        f"<p>Version: <code>{html.escape(version)}</code>. {measured}. Largest errors first; "
        "score error = |NED(intended, reader) − NED(intended, person)|; the last column is the "
        "reading's NED to the person's reading.</p>\n"
        "<table>\n<caption>Each image with the person's and the reader's reading</caption>\n"
        '<thead><tr><th scope="col">image</th><th scope="col">model · repository · part</th>'
        '<th scope="col">intended text</th><th scope="col">person read</th>'
        '<th scope="col">reader read</th><th scope="col">score error</th>'
        '<th scope="col">NED to person</th></tr></thead>\n'
        f"<tbody>\n{body}\n</tbody>\n</table>\n</body>\n</html>\n"
    )
