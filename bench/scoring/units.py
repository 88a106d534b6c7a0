"""Reader units: a glyphbench reader's lines as the unit each peer benchmark's reader returns.

A glyphbench read cell is the reader's output as lines in reading order, joined by
``"\\n"`` (a VLM's answer is one cell as it is). Each benchmark's scorer was written
for its own reader's output, so the cell is converted first
(:class:`glyphbench.scoring.table.ReaderUnits`, one per family, applied by
:func:`glyphbench.scoring.score_pairs`). The conversions here are the building blocks;
each family module registers one with the benchmark line that makes it so, and
``docs/scorers/<name>.md`` ("Reader units") explains it.

Whitespace inside a reading is layout, not text, for most benchmarks: a no-break,
thin or ideographic space between two words separates them like a space does. A
benchmark whose code counts spaces (LeX-Bench splits every box on U+0020 and keeps
the empty tokens) gets each box as its reader returned it instead
(:func:`verbatim_boxes`): real PaddleOCR boxes do carry end and double spaces.

>>> words_per_line("HELLO WORLD\\n\\n OPEN\\u00a024 ")
'HELLO\\nWORLD\\nOPEN\\n24'
>>> boxes("COFFEE\\n\\nTEA  SHOP \\n\\u3000")
'COFFEE\\nTEA SHOP'
>>> one_line("Hello \\n\\nWorld")
'Hello World'
>>> verbatim_boxes("stonup \\n\\n WARMING\\n  \\nKH  LA")
'stonup \\n WARMING\\nKH  LA'
"""

from __future__ import annotations


def words_per_line(read: str) -> str:
    """One whitespace-separated word per line (a word spotter's one detection per word).

    >>> words_per_line("")
    ''
    """
    return "\n".join(read.split())


def boxes(read: str) -> str:
    """One box per non-blank line, its words joined by single ASCII spaces (a line OCR's boxes).

    Lines end at ``\\n``, ``\\r\\n``, ``\\r`` and the other breaks of :meth:`str.splitlines`.

    >>> boxes("  \\n\\t\\n")
    ''
    >>> boxes("ARTI\\u20092021\\r\\nNEW")
    'ARTI 2021\\nNEW'
    """
    return "\n".join(" ".join(words) for words in map(str.split, read.splitlines()) if words)


def verbatim_boxes(read: str) -> str:
    """One box per line that holds text, kept as it is: end and double spaces stay.

    A line of whitespace only holds no text and is no box. A whitespace character other
    than U+0020 (a no-break, thin or ideographic space, a tab) becomes one U+0020, so the
    number of spaces is kept; lines end at the breaks of :meth:`str.splitlines`.

    >>> verbatim_boxes(" \\t\\n\\n")
    ''
    >>> verbatim_boxes("OPEN\\u00a0 24 \\r\\nNEW")
    'OPEN  24 \\nNEW'
    """
    lines = (line for line in read.splitlines() if line.strip())
    return "\n".join("".join(" " if c.isspace() else c for c in line) for line in lines)


def one_line(read: str) -> str:
    """Every word of the cell on one line, single ASCII spaces between (one crop, one string).

    >>> one_line("OPEN\\u3000\\n24")
    'OPEN 24'
    """
    return " ".join(read.split())


def as_answer(read: str) -> str:
    """The cell as it is (a VLM's answer is already the benchmark reader's unit).

    >>> as_answer("Grand\\n\\nOpening ")
    'Grand\\n\\nOpening '
    """
    return read
