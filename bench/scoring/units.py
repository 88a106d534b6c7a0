"""Reader units: a glyphbench reader's lines as the unit each peer benchmark's reader returns.

A glyphbench read cell is the reader's output as lines in reading order, joined by
``"\\n"`` (a VLM's answer is one cell as it is). Each benchmark's scorer was written
for its own reader's output, so the cell is converted first
(:class:`bench.scoring.table.ReaderUnits`, one per family, applied by
:func:`bench.scoring.score_pairs`). The conversions here are the building blocks;
each family module registers one with the benchmark line that makes it so, and
``docs/scorers/<name>.md`` ("Reader units") explains it.

Whitespace inside a reading is layout, not text: a no-break, thin or ideographic
space between two words separates them like a space does, and no benchmark's OCR
reader returns a blank box or a box with spaces at its ends.

>>> words_per_line("HELLO WORLD\\n\\n OPEN\\u00a024 ")
'HELLO\\nWORLD\\nOPEN\\n24'
>>> boxes("COFFEE\\n\\nTEA  SHOP \\n\\u3000")
'COFFEE\\nTEA SHOP'
>>> one_line("Hello \\n\\nWorld")
'Hello World'
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
