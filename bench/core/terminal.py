"""Text from files made safe to print on a terminal: :func:`printable`.

Prompt texts, file names, keys and error messages come from files someone else wrote.
Printed raw, an escape sequence among them is obeyed by the terminal (``ESC ] 0 ;``
sets the window title, ``ESC [ 2 J`` clears the screen, a carriage return hides what
came before it on the line, a bidirectional override reorders what is shown). Every
command that prints such text passes it through :func:`printable` first, and Rich
prints it as :class:`rich.text.Text` (never as markup, where ``[bold]`` or ``[/x]`` in a
prompt would be obeyed or fail).
"""

from __future__ import annotations

import re

#: Characters a terminal may act on instead of showing: C0 controls (tab and, where
#: asked, newline aside), DEL, C1 controls (U+0080-U+009F: U+009B is a one-character
#: CSI), bidirectional marks and overrides, line and paragraph separators, lone
#: surrogates (a name that is not UTF-8, which printing would fail on), and the invisible
#: characters that make two names print alike ("Model\u200bX" and "ModelX": soft hyphen,
#: zero-width space, word joiner and invisible operators, byte-order mark, Mongolian vowel
#: separator). The zero-width joiners U+200C and U+200D stay: scripts and emoji need them.
_UNSAFE = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f\xad\u061c\u180e\u200b\u200e\u200f\u2028\u2029"
    "\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff\ud800-\udfff"
)
_ONE_LINE = re.compile(f"[{_UNSAFE}\n]")
_LINES = re.compile(f"[{_UNSAFE}]")


def printable(text: str, *, newlines: bool = False) -> str:
    r"""``text`` with every character a terminal could act on written as ``\uXXXX``.

    The escape is JSON's, so the result is still valid JSON when ``text`` is JSON.
    A newline is escaped too unless ``newlines`` (a table cell may hold lines).

    >>> printable("SALE\x1b]0;PWNED\x07\x1b[2J")
    'SALE\\u001b]0;PWNED\\u0007\\u001b[2J'
    >>> printable("two\nlines\r"), printable("two\nlines", newlines=True)
    ('two\\u000alines\\u000d', 'two\nlines')
    >>> printable("营业中 Café\tok")  # letters of any script and tabs are text
    '营业中 Café\tok'
    >>> printable("Mo\u200bdel\ufeffX")  # looks like "ModelX" unescaped
    'Mo\\u200bdel\\ufeffX'
    """
    pattern = _LINES if newlines else _ONE_LINE
    return pattern.sub(lambda match: f"\\u{ord(match[0]):04x}", text)
