"""User-facing errors: one line naming the file, where in it, and what is wrong.

The CLI turns :class:`InputError` into that line on stderr and exit code 2;
every other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pydantic import ValidationError


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

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickled whole, so one raised in a reader process is the same one line here.

        >>> import pickle
        >>> str(pickle.loads(pickle.dumps(InputError("--ocr", "cannot start", key="x"))))
        '--ocr [x]: cannot start'
        """
        return _input_error, (self.source, self.problem, self.line, self.key)

    def __str__(self) -> str:
        where = self.source or ""
        if self.line is not None:
            where += f":{self.line}"
        if self.key is not None:
            where += f" [{self.key}]"
        where = where.strip()
        return f"{where}: {self.problem}" if where else self.problem


def _input_error(source: str | None, problem: str, line: int | None, key: str | None) -> InputError:
    return InputError(source, problem, line=line, key=key)


class Terminated(KeyboardInterrupt):
    """SIGTERM (a scheduler's time limit), raised in the main thread by the commands that
    catch it (``run``, ``rescore``, ``read``, ``demo``, ``vae-eval``, ``report``).

    A KeyboardInterrupt, so every handler that ends a run cleanly on Ctrl-C (the batch
    being written finished, the worker thread stopped before the interpreter goes down)
    ends it on SIGTERM too; as a separate BaseException it passed them by, and the worker
    was still in native code (an ONNX reader) at exit: the process aborted ("terminate
    called without an active exception", exit 134 instead of 143).
    """

    #: The exit code a second signal leaves with (128 + SIGTERM).
    exit_code = 143


class ProcessEnded(ChildProcessError):
    """A process glyphbench started (the image writer, a reader) ended unexpectedly, e.g.
    killed: not a bug of the command, so it is one line (an ``OSError``,
    :func:`user_error`), saying what was kept and how to go on.

    >>> str(user_error(ProcessEnded("the image writer process ended (killed by signal 9)")))
    'the image writer process ended (killed by signal 9)'
    """

    def __init__(self, problem: str) -> None:
        super().__init__(errno.ECHILD, problem)


def ended_how(code: int | None) -> str:
    """How a child process ended, in words, from its exit code (negative: a signal).

    >>> ended_how(-9), ended_how(1), ended_how(None)
    ('killed by signal 9, SIGKILL', 'exit code 1', 'exit code unknown')
    """
    if code is None:
        return "exit code unknown"
    if code < 0:
        import signal

        try:
            name = signal.Signals(-code).name
        except ValueError:
            return f"killed by signal {-code}"
        return f"killed by signal {-code}, {name}"
    return f"exit code {code}"


def validation_error(exc: ValidationError, source: str | Path | None) -> InputError:
    """The first problem of a pydantic validation as a one-line error naming the key.

    An unknown key comes first (it usually explains the rest: ``modles`` makes
    ``models`` missing); a value's message says what was given when it does not already.

    >>> from pydantic import BaseModel, ConfigDict, ValidationError
    >>> class Settings(BaseModel):
    ...     model_config = ConfigDict(extra="forbid")
    ...     limit: int
    ...     ocr: str = "easyocr"
    >>> for data in ({"limit": 1, "limt": 2}, {}, {"limit": 1, "ocr": 7}):
    ...     try:
    ...         Settings.model_validate(data)
    ...     except ValidationError as exc:
    ...         print(validation_error(exc, "run.yaml"))
    run.yaml [limt]: unknown key 'limt'
    run.yaml [limit]: missing required key 'limit'
    run.yaml [ocr]: Input should be a valid string (got 7)
    """
    errors = exc.errors()
    first = next((e for e in errors if e["type"] == "extra_forbidden"), errors[0])
    location = ".".join(str(part) for part in first["loc"])
    if first["type"] == "extra_forbidden":
        problem = f"unknown key {str(first['loc'][-1])!r}"
    elif first["type"] == "missing":
        problem = f"missing required key {str(first['loc'][-1])!r}"
    else:
        message = str(first["msg"]).removeprefix("Value error, ")
        given = first.get("input")
        scalar = isinstance(given, (str, int, float, bool)) or given is None
        shown = scalar and "input" in first and str(given) not in message
        got = repr(given) if len(repr(given)) <= 80 else repr(given)[:60] + "..."  # one line
        problem = f"{message} (got {got})" if shown else message
    return InputError(source, problem, key=location or None)


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    """``exc``, then each exception it was raised from or while handling, each once
    (a chain may loop back).

    >>> try:
    ...     try:
    ...         raise OSError(28, "full")
    ...     except OSError:
    ...         raise ValueError("wrapped") from None
    ... except ValueError as exc:
    ...     [type(e).__name__ for e in exception_chain(exc)]
    ['ValueError', 'OSError']
    """
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def user_error(exc: BaseException) -> InputError | None:
    """The one-line user error an exception stands for, or None for a bug.

    Besides :class:`InputError`: errors of the operating system (a missing or
    unreadable file, a full disk, a read-only folder), of decoding text, and of the
    JSON, YAML, SQLite and Arrow/Parquet readers. Where the exception knows its file
    (``OSError.filename``, a YAML mark) the line names it; the readers in
    :mod:`glyphbench.core.io` and the run folder raise :class:`InputError` with the file already.

    >>> str(user_error(FileNotFoundError(2, "No such file or directory", "runs/x.csv")))
    'runs/x.csv: No such file or directory'
    >>> str(user_error(OSError(28, "No space left on device")))
    'No space left on device'
    >>> import json
    >>> try:
    ...     json.loads('{"a": }')
    ... except ValueError as exc:
    ...     print(user_error(exc))
    malformed JSON (line 1): Expecting value
    >>> print(user_error(UnicodeDecodeError("utf-8", b"\\xff", 0, 1, "invalid start byte")))
    text is not UTF-8 (byte 0: invalid start byte)
    >>> user_error(KeyError("bug")) is None
    True
    """
    if isinstance(exc, InputError):
        return exc
    if isinstance(exc, OSError):
        problem = exc.strerror or str(exc) or type(exc).__name__
        return InputError(exc.filename, problem)
    if isinstance(exc, UnicodeDecodeError):
        return InputError(None, f"text is not UTF-8 (byte {exc.start}: {exc.reason})")
    if isinstance(exc, UnicodeError):
        return InputError(None, f"text encoding: {exc}")
    return _reader_error(exc)


def _reader_error(exc: BaseException) -> InputError | None:
    """JSON, YAML, SQLite and Arrow errors (their modules are looked at only if loaded)."""
    import json
    import sys

    if isinstance(exc, json.JSONDecodeError):
        return InputError(None, f"malformed JSON (line {exc.lineno}): {exc.msg}")
    yaml = sys.modules.get("yaml")
    if yaml is not None and isinstance(exc, yaml.YAMLError):
        mark = getattr(exc, "problem_mark", None)
        name = getattr(mark, "name", None)
        source = name if name and not str(name).startswith("<") else None
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        line = mark.line + 1 if mark is not None else None
        return InputError(source, f"invalid YAML: {problem}", line=line)
    sqlite3 = sys.modules.get("sqlite3")
    if sqlite3 is not None and isinstance(exc, sqlite3.Error):
        return InputError(None, f"SQLite: {exc}")
    pyarrow = sys.modules.get("pyarrow")
    if pyarrow is not None and isinstance(exc, pyarrow.ArrowException):
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return InputError(None, f"cannot read Arrow/Parquet data: {first}")
    return None
