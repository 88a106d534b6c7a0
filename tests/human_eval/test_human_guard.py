"""Password files (``--auth-file``, ``--rater-auth-file``) as editors save them."""

from __future__ import annotations

from pathlib import Path

import pytest

from glyphbench.core.errors import InputError
from glyphbench.human_eval.guard import check_password, read_auth_file


def private(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    path.chmod(0o600)
    return path


def test_a_byte_order_mark_and_crlf_lines_are_read_as_the_names_they_are(tmp_path: Path) -> None:
    # Notepad's "UTF-8 with BOM": the first account was "\ufeffalice", and "alice" could
    # not log in
    auth = private(tmp_path / "raters.txt", b"\xef\xbb\xbfalice:pw\r\nbob:pw2\r\n")
    users = read_auth_file(auth)
    assert users == {"alice": "pw", "bob": "pw2"}
    assert check_password(users, "alice", "pw")


def test_a_file_that_is_not_utf8_is_named_with_its_line(tmp_path: Path) -> None:
    auth = private(tmp_path / "admins.txt", b"# admins\nlead:caf\xe9\n")  # latin-1
    with pytest.raises(InputError) as refused:
        read_auth_file(auth)
    assert str(refused.value).startswith(f"{auth}:2: not UTF-8 text")
    assert "save the file as UTF-8" in str(refused.value)
