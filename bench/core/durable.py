"""Durable changes to files: flushing, and several files replaced as one step.

:class:`Commit` replaces a set of files of one folder together: a run's results table, its
checksum, run.json and a rescore's part file. The new files are written into a hidden
staging folder beside them (``.commit.<host>-<pid>-<random>.tmp``) and flushed; then the
commit record ``.commit.json`` (naming the staging folder and its files) is put in place
in one step, a hard link made only where no record is (so one commit never replaces
another's): that step is the commit. The staged files are then renamed over
the old ones, and the record and the staging folder are removed.

A process killed before the record is in place leaves the old files, whole, and a
staging folder no record names (deleted by the next commit once its process is gone).
One killed after it leaves a record: :func:`settle` (called before a table or run.json
is read, :mod:`glyphbench.core.io`, and by the next commit) finishes the renames. So
every glyphbench command sees the old files together or the new ones together, never a
mix, and never a table without its checksum. Readers only finish renames; a commit
removes its own record and staging folder, and those a killed process left.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import re
import secrets
import shutil
import socket
import time
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path, PurePath
from types import TracebackType

from glyphbench.core.errors import InputError

#: This host in temporary file names (a short hash: host names may hold dots).
HOST_TAG = hashlib.sha256(socket.gethostname().encode("utf-8")).hexdigest()[:6]
#: Temporary files of other hosts (or of an older glyphbench) are removed after this long.
STALE_TEMP_SECONDS = 3600.0
#: The commit record: its rename into place is the moment a :class:`Commit` happens.
COMMIT_RECORD = ".commit.json"
_STAGE = re.compile(r"^\.commit\.(?P<host>[0-9a-f]{6})-(?P<pid>\d+)-[0-9a-f]{6}\.tmp$")


def sync_folder(folder: str | Path) -> None:
    """Flush a folder's entries (a rename, a new file) to disk; best effort.

    Some file systems (network mounts, Windows) cannot open or sync a folder; their
    own guarantees then apply.
    """
    with suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def sync_file(path: str | Path) -> None:
    """Flush a file's bytes to disk."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def process_alive(pid: int) -> bool:
    """True when process ``pid`` of this host exists (this process included)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError as exc:  # EPERM: alive, someone else's
        return exc.errno == errno.EPERM
    return True


def stale(host: str, pid: int, path: Path, now: float) -> bool:
    """Whether a temporary ``path`` tagged ``host``-``pid`` belongs to nobody any more.

    Of this host: when its process is gone. Of another: when older than
    :data:`STALE_TEMP_SECONDS`.
    """
    if host == HOST_TAG:
        return not process_alive(pid)
    try:
        return now - path.stat().st_mtime > STALE_TEMP_SECONDS
    except OSError:
        return False


class Commit:
    """New versions of files of ``root`` that replace the old ones together (module docstring).

    >>> import tempfile
    >>> root = Path(tempfile.mkdtemp())
    >>> _ = (root / "a.txt").write_text("old a"), (root / "b.txt").write_text("old b")
    >>> with Commit(root) as commit:
    ...     _ = commit.path("a.txt").write_text("new a")
    ...     _ = commit.path("sub/b.txt").write_text("new b")
    >>> (root / "a.txt").read_text(), (root / "sub/b.txt").read_text()
    ('new a', 'new b')
    >>> sorted(p.name for p in root.iterdir())
    ['a.txt', 'b.txt', 'sub']

    An exception inside the block leaves every old file as it was and no staging folder.
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        self.stage = self.root / f".commit.{HOST_TAG}-{os.getpid()}-{secrets.token_hex(3)}.tmp"

    def path(self, name: str) -> Path:
        """Where to write the new ``name`` (a path relative to the folder); every file
        written in the staging folder replaces its namesake when the commit is applied."""
        staged = self.stage / name
        staged.parent.mkdir(parents=True, exist_ok=True)
        return staged

    def __enter__(self) -> Commit:
        settle(self.root, tidy=True)  # a commit a killed process left is finished first
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if kind is None:
            self.apply()
        else:
            shutil.rmtree(self.stage, ignore_errors=True)

    def apply(self) -> None:
        """Flush the staged files, commit (the record's rename), then put them in place."""
        try:
            written = sorted((p for p in self.stage.rglob("*") if p.is_file()), key=_install_order)
            if not written:  # nothing staged (no staging folder either): nothing to commit
                shutil.rmtree(self.stage, ignore_errors=True)
                return
            for path in written:
                sync_file(path)
            for folder in dict.fromkeys(path.parent for path in written):
                sync_folder(folder)
            names = [path.relative_to(self.stage).as_posix() for path in written]
            tmp = self.stage / COMMIT_RECORD
            tmp.write_text(json.dumps({"stage": self.stage.name, "files": names}), "utf-8")
            sync_file(tmp)
            self._put_record(tmp)  # the commit
        except BaseException as exc:  # not committed: the old files stand
            shutil.rmtree(self.stage, ignore_errors=True)
            if isinstance(exc, OSError):
                problem = exc.strerror or str(exc)
                raise InputError(self.root, f"cannot commit: {problem}") from None
            raise
        sync_folder(self.root)
        settle(self.root, tidy=True)  # interrupted here (a signal): the next reader finishes it

    def _put_record(self, tmp: Path) -> None:
        """Put the record in place without replacing another commit's (a hard link is
        made only where no file is): one in the way is finished first."""
        record = self.root / COMMIT_RECORD
        while True:
            try:
                os.link(tmp, record)
                return
            except FileExistsError:
                settle(self.root, tidy=True)
            except OSError:  # a file system without hard links: the rename alone
                os.replace(tmp, record)
                return


def _install_order(path: Path) -> tuple[bool, str, str]:
    """Part files, then each table followed by its checksum, run.json last."""
    return path.name == "run.json", path.as_posix().removesuffix(".sha256"), path.name


def settle(root: str | Path, *, tidy: bool = False) -> bool:
    """Finish a commit a killed process left in ``root``; True when there was one.

    Renames the staged files the record names into place (those still staged: another
    process may be finishing it too). ``tidy`` (a committing process, which holds the
    folder's lock): also removes the record, its staging folder and staging folders of
    ended processes. One ``stat`` when there is nothing to do.
    """
    root = Path(root)
    record = root / COMMIT_RECORD
    if not os.path.lexists(record):
        if tidy:
            _remove_stale_stages(root)
        return False
    stage, names = _read_record(record)
    try:
        for name in names:
            staged, target = root / stage / name, root / name
            if os.path.lexists(staged):
                target.parent.mkdir(parents=True, exist_ok=True)
                with suppress(FileNotFoundError):  # another process put it in place first
                    os.replace(staged, target)
        for folder in dict.fromkeys((root / name).parent for name in names):
            sync_folder(folder)
        if tidy:
            record.unlink(missing_ok=True)
            sync_folder(root)
            shutil.rmtree(root / stage, ignore_errors=True)
            _remove_stale_stages(root)
    except OSError as exc:
        raise InputError(
            record,
            f"an interrupted commit could not be finished ({exc.strerror or exc}); run "
            f"`glyphbench merge {root}` with write access to the folder",
        ) from None
    return True


def _read_record(record: Path) -> tuple[str, list[str]]:
    """The staging folder and file names a record names, each checked to stay in the folder."""
    try:
        data = json.loads(record.read_text(encoding="utf-8"))
        stage, names = data["stage"], data["files"]
        if not isinstance(stage, str) or not _STAGE.match(stage):
            raise ValueError("not a staging folder")
        if not isinstance(names, list) or not all(_plain(name) for name in names):
            raise ValueError("a file name leads outside the folder")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise InputError(
            record, f"not a commit record glyphbench wrote ({exc}); remove it by hand"
        ) from None
    return stage, list(names)


def _plain(name: object) -> bool:
    """A relative name with no ``..``: one a record may name (nothing outside its folder)."""
    if not isinstance(name, str) or not name or "\0" in name:
        return False
    pure = PurePath(name)
    return not pure.is_absolute() and ".." not in pure.parts


def _remove_stale_stages(root: Path) -> None:
    """Delete staging folders of ended processes (never committed: the old files stand)."""
    now = time.time()
    for path in _stages(root):
        match = _STAGE.match(path.name)
        if match and stale(match["host"], int(match["pid"]), path, now):
            shutil.rmtree(path, ignore_errors=True)


def _stages(root: Path) -> Iterator[Path]:
    with suppress(OSError):
        for entry in os.scandir(root):
            if entry.name.startswith(".commit.") and entry.is_dir(follow_symlinks=False):
                yield Path(entry.path)
