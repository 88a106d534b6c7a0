"""Text shown as it is in Markdown: a label, a run id or a reader's identity written into a
report table or a dataset card is text, never markup (no tag, emphasis, link or heading)."""

from __future__ import annotations

from glyphbench.core.terminal import printable


def markdown_text(text: str) -> str:
    r"""``text`` as Markdown that shows it as it is, on one line (a table cell, a list item;
    :func:`glyphbench.report.tables.to_markdown`).

    >>> print(markdown_text("m`\n# <b>[x](y)"))
    m\` \# &lt;b&gt;[x]\(y)
    >>> print(markdown_text("costs $5 and $6 a\u202eb"))  # no math on the hub; no reordering
    costs \$5 and \$6 a\u202eb
    """
    shown = "".join(_MARKDOWN_ESCAPES.get(ch, ch) for ch in text).strip()
    shown = printable(shown)  # bidirectional overrides and invisible characters, as \uXXXX
    return shown.replace("](", "]\\(")  # "[x](url)" no link; "[0.4, 0.6]" left as it reads


#: What Markdown text writes for each character that would be read as markup.
_MARKDOWN_ESCAPES = {
    "&": "&amp;",
    "<": "&lt;",
    ">": "&gt;",
    **{ch: "\\" + ch for ch in "\\`*_|~#$"},  # "$...$" is math on the Hugging Face hub
    **{chr(code): " " for code in [*range(32), 127]},
}
