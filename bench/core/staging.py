"""An output folder is all or nothing: written beside its place, then renamed into it.

The report, a reader's calibration card, an exported dataset and a human rating study
are each written this way. :func:`staged_folder` yields an empty temporary folder in the
target's parent (``.NAME.HOST-PID-TOKEN.glyphbench-tmp``); when the block succeeds the
finished folder takes the target's place and the old one is removed. Until then the
old folder is untouched, so a command killed part-way (an error, Ctrl-C, SIGTERM,
kill -9) leaves the old output whole and never a folder of old and new files.

The swap is one ``renameat2(RENAME_EXCHANGE)`` call where Linux offers it (the
target always names a whole folder); elsewhere the old folder is first renamed
aside, then the new one into place (a crash between the two leaves the old folder
whole under its aside name, which the next write puts back). Temporary folders
left by a killed process of this host are removed by the next write of the same target.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import re
import secrets
import shutil
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path

from glyphbench.core.durable import HOST_TAG, process_alive, sync_folder
from glyphbench.core.errors import InputError
from glyphbench.core.io import ensure_folder

#: Suffix of a folder being written and of an old folder being replaced.
TEMP_SUFFIX = ".glyphbench-tmp"
ASIDE_SUFFIX = ".glyphbench-old"

_STAGED = re.compile(
    r"^\.(?P<name>.+)\.(?P<host>[0-9a-f]{6})-(?P<pid>\d+)-[0-9a-f]{6}"
    rf"(?P<kind>{re.escape(TEMP_SUFFIX)}|{re.escape(ASIDE_SUFFIX)})$"
)


def _staged_name(target: Path, suffix: str) -> Path:
    token = secrets.token_hex(3)
    return target.with_name(f".{target.name}.{HOST_TAG}-{os.getpid()}-{token}{suffix}")


def output_folder(target: str | Path) -> Path:
    """The folder an output replaces: absolute, and a symbolic link's own folder (the link
    keeps pointing at the new output, never replaced by a copy of it)."""
    path = Path(os.path.abspath(Path(target).expanduser()))
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def check_replaceable(
    target: Path,
    markers: tuple[str, ...],
    what: str,
    inputs: Sequence[Path] = (),
    owned: tuple[str, ...] | None = None,
) -> None:
    """Refuse to replace a folder that is not a ``what`` (``--out`` naming some other
    folder): only an absent or empty folder, or one holding one of ``markers``, is replaced;
    never one holding the current folder or one of the command's ``inputs`` (a report's
    runs), nor, when ``owned`` names everything a ``what`` writes, one holding anything
    else (notes the user put beside a report): the replacement would delete them.

    >>> import tempfile; folder = Path(tempfile.mkdtemp())
    >>> check_replaceable(folder / "new", ("report.json",), "report")  # absent: fine
    >>> check_replaceable(folder, ("report.json",), "report")          # empty: fine
    >>> _ = (folder / "notes.txt").write_text("mine")
    >>> check_replaceable(folder, ("report.json",), "report")
    Traceback (most recent call last):
    glyphbench.core.errors.InputError: ...: not a report folder (no report.json) ...
    """
    target = output_folder(target)
    real_target = Path(os.path.realpath(target))
    for inside, name in [(Path.cwd(), "the current folder"), *((p, str(p)) for p in inputs)]:
        held = Path(os.path.realpath(inside))
        if held == real_target or real_target in held.parents:
            raise InputError(
                target,
                f"holds {name}, which the {what} would delete (it replaces its whole "
                "folder); choose a new --out outside it",
            )
    if not target.exists():
        return
    if not target.is_dir():
        raise InputError(target, "exists and is not a folder; choose another --out")
    if any(target.iterdir()) and not any((target / m).exists() for m in markers):
        raise InputError(
            target,
            f"not a {what} folder (no {' or '.join(markers) or 'marker file'}) and not empty: "
            f"the {what} replaces its whole folder; choose an empty or new --out",
        )
    if owned is None:
        return
    foreign = sorted(
        entry.name
        for entry in target.iterdir()
        if entry.name not in owned and not entry.name.startswith(".")
    )
    if foreign:
        raise InputError(
            target / foreign[0],
            f"not written by a {what} ({len(foreign)} such in all), and the {what} replaces "
            "its whole folder: move it, or choose another --out",
        )


@contextmanager
def staged_folder(
    target: str | Path,
    markers: tuple[str, ...],
    what: str,
    inputs: Sequence[Path] = (),
    owned: tuple[str, ...] | None = None,
) -> Iterator[Path]:
    """Yield an empty folder beside ``target``; on success it replaces ``target`` whole.

    ``target`` must be absent, empty, or hold one of ``markers`` (a folder of the same
    kind ``what``, :func:`check_replaceable`; no markers: absent or empty only), and hold
    none of ``inputs`` and nothing outside ``owned``. On any exception (KeyboardInterrupt
    and SystemExit included) the temporary folder is removed and ``target`` is left as it
    was.
    """
    target = output_folder(target)
    check_replaceable(target, markers, what, inputs, owned)
    ensure_folder(target.parent)
    remove_stale(target)
    staged = _staged_name(target, TEMP_SUFFIX)
    try:
        staged.mkdir()
    except OSError as exc:
        raise InputError(target.parent, f"cannot write: {exc.strerror or exc}") from None
    try:
        yield staged
        replace_folder(staged, target)
    finally:
        if staged.exists():
            shutil.rmtree(staged, ignore_errors=True)


def replace_folder(staged: Path, target: Path) -> None:
    """Put the finished folder ``staged`` in ``target``'s place; remove the old one."""
    if target.exists() and _exchange(staged, target):
        shutil.rmtree(staged, ignore_errors=True)  # ``staged`` now names the old folder
    elif target.exists():
        aside = _staged_name(target, ASIDE_SUFFIX)
        os.rename(target, aside)
        os.rename(staged, target)
        shutil.rmtree(aside, ignore_errors=True)
    else:
        os.rename(staged, target)
    sync_folder(target.parent)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux ``renameat2`` with ``RENAME_EXCHANGE``); False where
    the system has no such call."""
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name, use_errno=True)
        call = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2  # <fcntl.h> AT_FDCWD, <linux/fs.h> RENAME_EXCHANGE
    call.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    done = call(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange)
    return bool(done == 0)


def remove_stale(target: Path) -> None:
    """Remove the temporary folders of ``target`` that a dead process of this host left;
    an old folder set aside by a process killed mid-swap is put back first."""
    with suppress(OSError):
        for entry in target.parent.iterdir():
            match = _STAGED.match(entry.name)
            if match is None or match["name"] != target.name or match["host"] != HOST_TAG:
                continue
            if process_alive(int(match["pid"])):
                continue
            if match["kind"] == ASIDE_SUFFIX and not target.exists():
                os.rename(entry, target)  # the old folder, back in its place
            else:
                shutil.rmtree(entry, ignore_errors=True)
