"""The ``glyphbench`` command line: one entry point for all four packages.

Each package adds its commands through a ``register(app)`` function in a small
module that imports only typer/rich at top level, so ``glyphbench --help``
answers at once; the heavy libraries load inside the command that needs them.
"""

from __future__ import annotations

import errno
import importlib
import json
import os
import sys
from typing import NoReturn, cast

import typer

from glyphbench import __version__
from glyphbench.cli.common import print_error, stop_said
from glyphbench.cli.exit_codes import INTERRUPTED, NO_SPACE
from glyphbench.core.errors import exception_chain, user_error

app = typer.Typer(
    name="glyphbench",
    help="Measure how well text-to-image models write the text a prompt asks for.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode="rich",
)

#: Modules that add commands; each defines ``register(app: typer.Typer) -> None``.
COMMAND_MODULES = (
    "glyphbench.cli.score",
    "glyphbench.cli.export",
    "glyphbench.cli.run",
    "glyphbench.cli.list",
    "glyphbench.cli.readers",
    "glyphbench.cli.report",
    "glyphbench.cli.prompts",
    "glyphbench.cli.vae",
    "glyphbench.cli.human",
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"glyphbench {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        callback=_version_callback,
        is_eager=True,
        help="Print the version and exit.",
    ),
) -> None:
    """Measure how well text-to-image models write the text a prompt asks for."""


for _name in COMMAND_MODULES:
    importlib.import_module(_name).register(app)


#: A full disk, a full quota.
FULL = (errno.ENOSPC, errno.EDQUOT)


def out_of_space(exc: BaseException) -> bool:
    """Whether ``exc`` is (or was raised while handling) a full disk or quota.

    >>> out_of_space(OSError(errno.ENOSPC, "No space left on device"))
    True
    >>> out_of_space(ValueError("x"))
    False
    """
    return any(
        (isinstance(seen, OSError) and seen.errno in FULL)
        # an image writer process's error reaches the run as its text only
        or any(os.strerror(code) in str(seen) for code in FULL)
        for seen in exception_chain(exc)
    )


def _empty_out(args: list[str]) -> bool:
    """Whether an ``--out``/``-o`` is given as an empty (or blank) string.

    >>> _empty_out(["run", "--out", ""]), _empty_out(["run", "--out="]), _empty_out(["-o", "x"])
    (True, True, False)
    """
    for position, arg in enumerate(args):
        if arg == "--":
            return False
        if arg.startswith("--out="):
            value: str | None = arg.removeprefix("--out=")
        elif arg in ("--out", "-o"):
            value = args[position + 1] if position + 1 < len(args) else None
        else:
            continue
        if value is not None and not value.strip():
            return True
    return False


def _fail(message: str, code: int) -> NoReturn:
    """``error: MESSAGE`` on stderr and exit ``code``; with ``--json``, also the JSON object
    ``{"error": MESSAGE, "exit_code": CODE}`` on stdout, so a script reading it gets JSON."""
    print_error(message)
    if "--json" in sys.argv[1 : sys.argv.index("--") if "--" in sys.argv else None]:
        print(json.dumps({"error": message, "exit_code": code}))
    sys.exit(code)


def main() -> None:
    """Console-script entry point: user errors become one line on stderr and exit 2.

    User errors are :class:`InputError` and the errors of reading or writing files
    (OS, JSON, YAML, SQLite, Arrow, Unicode; see :func:`glyphbench.core.errors.user_error`), and
    the flags Typer itself checks (a non-integer ``--read-workers``, a missing
    argument): one line, not a box; anything else is a bug and keeps its traceback.
    """
    # click's UsageError, as this Typer ships it (typer.BadParameter's base)
    usage_error = cast("type[Exception]", typer.BadParameter.__mro__[1])
    stop_said(reset=True)
    if _empty_out(sys.argv[1:]):  # a path of "" is the current folder: its files mixed in
        _fail("--out is empty; name where to write (e.g. --out runs/first)", 2)
    try:
        code = app(standalone_mode=False)
    except usage_error as exc:  # a flag Typer checks: the same one line, not a box
        if type(exc).__name__ == "NoArgsIsHelpError":
            app()  # no arguments: the help, as always
        _fail(getattr(exc, "format_message", exc.__str__)(), 2)
    except typer.Abort as exc:
        if isinstance(exc.__context__, KeyboardInterrupt):  # click's Abort of a Ctrl-C: the
            raise KeyboardInterrupt from None  # exit 130 a scheduler reads as interrupted
        print("Aborted!", file=sys.stderr)
        sys.exit(1)
    except Exception as exc:
        error = user_error(exc)
        if error is None:
            raise
        if out_of_space(exc):  # not the user's error, and not "nothing written": resumable
            _fail(f"{error}; free space and run the same command again to resume", NO_SPACE)
        _fail(str(error), 2)
    if code == INTERRUPTED and not stop_said(reset=True):  # Typer's silent exit of a Ctrl-C
        print("interrupted", file=sys.stderr)  # in a command still loading its libraries
    if isinstance(code, int) and code:
        sys.exit(code)


if __name__ == "__main__":
    main()
