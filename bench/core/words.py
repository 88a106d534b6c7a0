"""Words for messages: a count with its noun agreeing (``1 pair``, ``2 pairs``)."""

from __future__ import annotations


def plural(count: int, noun: str, many: str | None = None) -> str:
    """``count`` and ``noun``, plural unless the count is one (``many``: an irregular plural).

    >>> plural(1, "pair"), plural(0, "cell"), plural(3, "cell"), plural(2, "class", "classes")
    ('1 pair', '0 cells', '3 cells', '2 classes')
    """
    return f"{count} {noun if count == 1 else (many or noun + 's')}"
