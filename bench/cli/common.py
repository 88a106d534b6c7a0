"""What the command modules share: help texts that list the plug-ins, the one error line,
and the exit for rows that all failed. A command module imports these from here, never from
another command module."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import typer
from rich.console import Console
from rich.text import Text

# imported for its registrations: SOURCE_HELP lists the prompt sources it registers
import glyphbench.prompts.sources  # noqa: F401
from glyphbench.cli.exit_codes import EVERY_ROW_FAILED, INTERRUPTED, TERMINATED
from glyphbench.core.errors import Terminated
from glyphbench.core.registry import PLUGINS
from glyphbench.core.schema import failed_mask
from glyphbench.core.terminal import printable


def source_kinds() -> str:
    """Every registered prompt source as its usage without options, comma-separated
    (``glyphbench list sources`` has the options): help texts never list old ones.

    >>> "textinvision:DIR" in source_kinds() and "default[:DIR]" in source_kinds()
    True
    """
    return ", ".join(
        str(plugin.usage or plugin.name).split("[?")[0] for plugin in PLUGINS.entries("sources")
    )


SOURCE_HELP = (
    f"Prompt source: {source_kinds()}; ?schema_col=their_col maps a table's columns "
    "(glyphbench list sources)."
)


def readers_help(lead: str) -> str:
    """``lead`` and every registered reader (``glyphbench list readers``), not a typed list."""
    names = ", ".join(plugin.name for plugin in PLUGINS.entries("readers"))
    return f"{lead}: {names} (options: glyphbench list readers)."


def print_error(message: str) -> None:
    """``error: message`` on stderr, on one line, never read as markup, with terminal
    controls from the files it quotes escaped (:func:`~glyphbench.core.terminal.printable`)."""
    line = Text.assemble(("error:", "bold red"), " ", printable(message.replace("\n", " ")))
    Console(stderr=True, highlight=False, soft_wrap=True).print(line)


def fail_when_every_row_failed(rows: Any, what: str) -> None:
    """Exit 1 with the count when ``rows`` is not empty and every row failed."""
    failed = failed_mask(rows)
    if len(rows) and failed.all():
        errors = rows.loc[failed, "error"].astype(str)
        every_row_failed(len(rows), what, errors.iloc[0])


def every_row_failed(count: int, what: str, example: str) -> None:
    """``error: every row of WHAT failed`` and exit 1 (:data:`EVERY_ROW_FAILED`)."""
    detail = f"; e.g. {example}" if example else ""
    print_error(f"every row of {what} failed ({count} of {count}){detail}")
    raise typer.Exit(EVERY_ROW_FAILED)


def _terminate(signum: int, frame: object) -> None:
    raise Terminated


RESUME = "run the same command again to resume"

#: Whether :func:`interruptible` has said why the command stopped: Typer turns a Ctrl-C
#: outside it (a command still importing its libraries) into a silent exit 130, which
#: :func:`glyphbench.cli.root.main` then names.
_stop_said = {"interrupted": False}


def stop_said(reset: bool = False) -> bool:
    """Whether a command said it was interrupted (``reset``: forget it, for a new command)."""
    said = _stop_said["interrupted"]
    if reset:
        _stop_said["interrupted"] = False
    return said


@contextlib.contextmanager
def interruptible(then: str = RESUME) -> Iterator[None]:
    """Ctrl-C: one line saying what ``then`` holds, exit code 130 (no traceback, no "Aborted!").

    SIGTERM ends the command the same way (exit 143): worker pools are shut down and
    their semaphores released, so the multiprocessing resource tracker has no "leaked
    semaphore" to warn about. A command that writes all or nothing (``report``) says
    instead what was left as it was.
    """
    import signal

    previous = signal.getsignal(signal.SIGTERM)
    try:
        signal.signal(signal.SIGTERM, _terminate)
    except ValueError:  # not the main thread (a test calling the command): leave it
        previous = None
    try:
        yield
    except Terminated:  # before KeyboardInterrupt, which it is
        typer.echo(f"terminated: {then}", err=True)
        _stop_said["interrupted"] = True
        raise typer.Exit(TERMINATED) from None
    except KeyboardInterrupt:
        typer.echo(f"interrupted: {then}", err=True)
        _stop_said["interrupted"] = True
        raise typer.Exit(INTERRUPTED) from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
