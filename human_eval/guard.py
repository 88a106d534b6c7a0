"""What the rating app lets in (it may face the internet): admin logins, request bodies,
raw inputs.

* admin logins: ``user:password`` lines of the ``--auth-file`` (:func:`read_auth_file`),
  compared in constant time (:func:`check_password`) and rate-limited
  (:class:`LoginGuard`): repeated failures lock the address out, and many failures from
  anywhere lock the panel for everyone, for a while;
* uploads are refused (the app has no upload; Gradio's upload routes and any multipart
  request get 403) and request bodies are capped at :data:`MAX_REQUEST_BYTES` (413):
  :class:`RequestLimits`;
* inputs are read raw and cut to :data:`MAX_TEXT` (:func:`text_input`); prompt text is
  shown as plain text in Markdown (:func:`plain_markdown`).

The app (:mod:`glyphbench.human_eval.app`) and its server (:mod:`glyphbench.human_eval.serve`) use
these.
"""

from __future__ import annotations

import hmac
import logging
import os
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from glyphbench.core.errors import InputError

LOG = logging.getLogger("glyphbench.rating_app")


#: Largest request body accepted (the app's requests are a few hundred bytes).
MAX_REQUEST_BYTES = 64 * 1024

#: Longest text input used (resume codes, image ids, answers are short).
MAX_TEXT = 200

ASGIApp = Callable[..., Awaitable[None]]


def read_auth_file(path: str | Path) -> dict[str, str]:
    """Parse ``user:password`` lines (blank lines and ``#`` comments ignored).

    A file that others may read (any group or other permission bit, as ``ssh`` refuses a
    private key) is refused, with the ``chmod`` that fixes it: its passwords guard the
    ratings.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "auth file not found")
    mode = path.stat().st_mode & 0o777
    if os.name == "posix" and mode & 0o077:
        raise InputError(
            path, f"holds passwords but others may read it (mode {mode:o}): chmod 600 {path}"
        )
    users: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        user, sep, password = line.partition(":")
        if not sep or not user or not password:
            raise InputError(path, "expected 'user:password'", line=number)
        users[user] = password
    if not users:
        raise InputError(path, "no 'user:password' lines")
    return users


def check_password(users: dict[str, str], user: str, password: str) -> bool:
    """Constant-time check of one login against the auth file's users."""
    expected = users.get(user or "", "")
    ok = hmac.compare_digest(expected.encode(), (password or "").encode())
    return bool(expected) and ok


#: Characters Markdown (CommonMark) gives a meaning; each is shown as itself when escaped.
_MARKDOWN_PUNCTUATION = set("\\`*_{}[]()#+-.!|~>\"'$%:;=?^")


def plain_markdown(text: str) -> str:
    """``text`` as Markdown that renders as exactly ``text`` (a prompt is shown, not parsed).

    Tag-like text (``<b>``), backticks, emphasis and links stay visible characters:
    Markdown punctuation is backslash-escaped, ``<`` and ``&`` become entities and
    line breaks ``<br>``.

    >>> print(plain_markdown("<b>SALE</b> `code`"))
    &lt;b\\>SALE&lt;/b\\> \\`code\\`
    """
    out = []
    for char in text:
        if char == "<":
            out.append("&lt;")
        elif char == "&":
            out.append("&amp;")
        elif char == "\n":
            out.append("<br>")
        elif char in _MARKDOWN_PUNCTUATION:
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


class LoginRefused(Exception):
    """A refused admin login (wrong password, or locked out); the message says which."""


class LoginGuard:
    """Admin logins with lockout: brute force gets a handful of tries, not thousands.

    ``per_address`` failures from one address within ``window_s`` lock that address
    out for ``lockout_s``; during a lockout even the right password is refused from it.
    Other addresses are never locked out by it: failures from many addresses cannot
    lock the lead out of their own study (issue 25).

    >>> now = [0.0]
    >>> guard = LoginGuard({"lead": "pw"}, per_address=2, clock=lambda: now[0])
    >>> for password in ("a", "b"):
    ...     try:
    ...         guard.attempt("10.0.0.1", "lead", password)
    ...     except LoginRefused as exc:
    ...         print(exc)
    Wrong user or password.
    Wrong user or password.
    >>> guard.attempt("10.0.0.1", "lead", "pw")
    Traceback (most recent call last):
    ...
    glyphbench.human_eval.guard.LoginRefused: Too many failed logins; try again in 15 minute(s).
    >>> guard.attempt("10.0.0.2", "lead", "pw")  # another address
    >>> now[0] += 901
    >>> guard.attempt("10.0.0.1", "lead", "pw")  # the lockout has ended
    """

    def __init__(
        self,
        users: dict[str, str],
        *,
        per_address: int = 5,
        window_s: float = 900.0,
        lockout_s: float = 900.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.users = users
        self.per_address = per_address
        self.window_s = window_s
        self.lockout_s = lockout_s
        self.clock = clock
        self._failures: dict[str, deque[float]] = {}
        self._locked_until: dict[str, float] = {}  # address -> time
        self._lock = threading.Lock()

    def attempt(self, address: str, user: str, password: str) -> None:
        """Return when the login is accepted; raise :class:`LoginRefused` otherwise."""
        with self._lock:
            now = self.clock()
            until = self._locked_until.get(address, 0.0)
            if now < until:
                minutes = max(1, round((until - now) / 60))
                raise LoginRefused(f"Too many failed logins; try again in {minutes} minute(s).")
            if check_password(self.users, user, password):
                self._failures.pop(address, None)
                return
            self._fail(address, now)
        raise LoginRefused("Wrong user or password.")

    def _fail(self, address: str, now: float) -> None:
        recent = self._failures.setdefault(address, deque())
        recent.append(now)
        while recent and recent[0] < now - self.window_s:
            recent.popleft()
        if len(recent) >= self.per_address:
            self._locked_until[address] = now + self.lockout_s
            recent.clear()
        LOG.warning("admin login failed from %s (%d recent)", address, len(recent))


class RequestLimits:
    """ASGI middleware: no uploads, and no request body over ``max_body`` bytes.

    The rating app never takes a file, so Gradio's upload routes (and any multipart
    request) get 403; a body over the cap gets 413, whether it declares its length
    or streams it in chunks.
    """

    BLOCKED = ("/upload", "/process_recording")

    def __init__(self, app: ASGIApp, max_body: int = MAX_REQUEST_BYTES) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {key.lower(): value for key, value in scope.get("headers", [])}
        path = str(scope.get("path", "")).rstrip("/")
        multipart = headers.get(b"content-type", b"").startswith(b"multipart/")
        if multipart or (scope.get("method") == "POST" and path.endswith(self.BLOCKED)):
            await _reply(send, 403, "uploads are disabled")
            return
        declared = headers.get(b"content-length")
        if declared is not None:
            if not declared.isdigit() or int(declared) > self.max_body:
                await _reply(send, 413, "request body too large")
                return
            await self.app(scope, receive, send)
            return
        await self._streamed(scope, receive, send)

    async def _streamed(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        """A body without a declared length: read it (up to the cap), then replay it."""
        if scope.get("method") in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if len(body) > self.max_body:
                await _reply(send, 413, "request body too large")
                return
            if not message.get("more_body"):
                break
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def text_input(value: Any) -> str:
    """A raw text input as the service takes it: a string, at most :data:`MAX_TEXT` long.

    >>> text_input("K7QM-3XPA"), text_input(None), text_input(["x"]), len(text_input("a" * 999))
    ('K7QM-3XPA', '', '', 200)
    """
    return value[:MAX_TEXT] if isinstance(value, str) else ""


def client_address(request: Any) -> str | None:
    """The address a request came from (a proxy on this host may set X-Forwarded-For)."""
    client = getattr(request, "client", None)
    return str(getattr(client, "host", "") or "") or None


async def _reply(send: Any, status: int, text: str) -> None:
    data = text.encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(data)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})
