"""User-facing errors: one line naming the file, where in it, and what is wrong.

The CLI turns :class:`InputError` into that line on stderr and exit code 2;
every other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

from pathlib import Path


class InputError(Exception):
    """Bad user input: a file, a flag or a value that glyphbench cannot use.

    >>> str(InputError("pairs.csv", "missing column 'ocr'", line=1))
    "pairs.csv:1: missing column 'ocr'"
    >>> str(InputError("run.yaml", "unknown key 'modles'", key="modles"))
    "run.yaml [modles]: unknown key 'modles'"
    """

    def __init__(
        self,
        source: str | Path | None,
        problem: str,
        *,
        line: int | None = None,
        key: str | None = None,
    ) -> None:
        self.source = None if source is None else str(source)
        self.problem = problem
        self.line = line
        self.key = key
        super().__init__(str(self))

    def __str__(self) -> str:
        where = self.source or ""
        if self.line is not None:
            where += f":{self.line}"
        if self.key is not None:
            where += f" [{self.key}]"
        where = where.strip()
        return f"{where}: {self.problem}" if where else self.problem
