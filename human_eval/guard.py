"""What the rating app lets in (it may face the internet): admin logins, request bodies,
raw inputs.

* logins (the admin's, and the raters' of ``--rater-auth-file``): ``user:password`` lines
  (:func:`read_auth_file`), compared in constant time (:func:`check_password`) and limited
  per account and per client address with growing locks (:class:`LoginGuard`,
  :class:`LoginPolicy`), a browser the lead logged in from exempt from the locks others
  set (device tokens);
* the ``Host`` header must name this server (DNS rebinding), and the client address is
  the socket's peer unless a trusted proxy names another (:class:`ServedHosts`);
* uploads are refused (the app has no upload; Gradio's upload routes and any multipart
  request get 403) and request bodies are capped at :data:`MAX_REQUEST_BYTES` (413):
  :class:`RequestLimits`;
* inputs are read raw and cut to :data:`MAX_TEXT` (:func:`text_input`); prompt text is
  shown as plain text in Markdown (:func:`plain_markdown`).

The app (:mod:`glyphbench.human_eval.app`) and its server (:mod:`glyphbench.human_eval.serve`) use
these.
"""

from __future__ import annotations

import contextvars
import hashlib
import hmac
import ipaddress
import logging
import math
import os
import secrets
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from glyphbench.core.errors import InputError
from glyphbench.core.io import utf8_text
from glyphbench.core.terminal import printable

LOG = logging.getLogger("glyphbench.rating_app")


#: Largest request body accepted (the app's requests are a few hundred bytes).
MAX_REQUEST_BYTES = 64 * 1024

#: Longest text input used (resume codes, image ids, answers are short).
MAX_TEXT = 200

ASGIApp = Callable[..., Awaitable[None]]


def read_auth_file(path: str | Path) -> dict[str, str]:
    """Parse ``user:password`` lines (blank lines and ``#`` comments ignored; a UTF-8
    byte-order mark, as Windows editors write, dropped; a byte that is not UTF-8 is an
    :class:`InputError` naming the file and its line).

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
    for number, line in enumerate(utf8_text(path).splitlines(), start=1):
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
    """A refused login (wrong password, or locked out); the message says which."""

    def __init__(self, message: str, *, locked: bool = False) -> None:
        super().__init__(message)
        self.locked = locked


@dataclass(frozen=True)
class LoginPolicy:
    """How many failed logins are let through, and how long a lock lasts.

    Failures are counted per (account, client address), per account from every address
    together (a slower limit: rotating addresses buys ``account_free`` guesses, then a
    handful an hour) and per trusted browser (:meth:`LoginGuard.attempt`). The
    ``free``-th failure of a count (``account_free``-th of an account's) locks it for
    ``base_s`` seconds and each later one for twice as long as the one before, at most
    ``max_lock_s``: 1, 2, 4, 8, 15, 15, ... minutes. During a lock attempts are refused
    unchecked (the right password too) and not counted. A count is forgotten
    ``forget_s`` after its last failure; a success clears its (account, address) and
    browser counts, never the account's. The figures follow OWASP's advice (a lock of
    minutes after a few failures, growing; Authentication Cheat Sheet, "Login
    Throttling") and the previous lock of 15 minutes after 5 failures.
    """

    free: int = 5
    account_free: int = 20
    base_s: float = 60.0
    max_lock_s: float = 900.0
    forget_s: float = 3600.0

    def lock_s(self, failures: int, free: int) -> float:
        """Seconds of lock after ``failures`` failures of a count that lets ``free`` through.

        >>> [LoginPolicy().lock_s(n, 5) for n in (4, 5, 6, 7, 8, 9, 10)]
        [0.0, 60.0, 120.0, 240.0, 480.0, 900.0, 900.0]
        """
        if failures < free:
            return 0.0
        return min(self.max_lock_s, self.base_s * 2.0 ** min(failures - free, 30))


@dataclass
class _Count:
    """Failures of one key (a pair, an account or a browser) and its lock."""

    failures: int = 0
    last: float = 0.0
    locked_until: float = 0.0
    refused: int = 0  # attempts refused during the current lock (logged once per lock)


#: Counts kept before the forgotten ones are dropped (a flood of addresses stays bounded).
MAX_COUNTS = 10_000


class LoginGuard:
    """Logins of one kind (``name``: the admin's, the raters') that cannot be guessed.

    :class:`LoginPolicy` limits failures per (account, client address) and per account;
    every failure, lock and refusal during a lock is logged. A success returns a
    *device token* (OWASP's device cookie: an HMAC of the account and a random
    nonce under ``device_key``), which the admin page keeps in the browser; a later
    attempt carrying a valid token of its account is limited by that token's own
    failures only, so strangers' guesses (from the lead's own address too) can slow a
    browser that never logged in, never the lead's.

    >>> now = [0.0]
    >>> guard = LoginGuard({"lead": "pw"}, clock=lambda: now[0])
    >>> token = guard.attempt("10.0.0.1", "lead", "pw")  # the lead, once
    >>> for _ in range(5):
    ...     try:
    ...         guard.attempt("10.0.0.1", "lead", "guess")  # a stranger, same address
    ...     except LoginRefused as exc:
    ...         print(exc)
    Wrong user or password.
    Wrong user or password.
    Wrong user or password.
    Wrong user or password.
    Wrong user or password.
    >>> guard.attempt("10.0.0.1", "lead", "pw")
    Traceback (most recent call last):
    ...
    glyphbench.human_eval.guard.LoginRefused: Too many failed logins; try again in 1 minute(s).
    >>> _ = guard.attempt("10.0.0.1", "lead", "pw", device=token)  # the lead's browser
    >>> _ = guard.attempt("10.0.0.2", "lead", "pw")  # another address
    >>> now[0] += 61
    >>> _ = guard.attempt("10.0.0.1", "lead", "pw")  # the lock has ended
    """

    def __init__(
        self,
        users: dict[str, str],
        *,
        name: str = "admin",
        policy: LoginPolicy | None = None,
        clock: Callable[[], float] = time.monotonic,
        device_key: bytes | None = None,
    ) -> None:
        self.users = users
        self.name = name
        self.policy = policy or LoginPolicy()
        self.clock = clock
        self.device_key = device_key or secrets.token_bytes(32)
        self._counts: dict[tuple[str, ...], _Count] = {}
        self._lock = threading.Lock()

    def attempt(self, address: str | None, user: str, password: str, device: str = "") -> str:
        """A new device token when the login is accepted; :class:`LoginRefused` otherwise.

        ``address`` is the client's (the socket's peer, or what a trusted proxy says);
        ``device`` the token an earlier success gave this browser, if any.
        """
        account = user if user in self.users else ""
        client = client_key(address)
        with self._lock:
            now = self.clock()
            nonce = self._device_nonce(device, account)
            keys = (
                [("device", account, nonce)]
                if nonce
                else [("pair", account, client), ("account", account)]
            )
            for key in keys:
                self._refuse_if_locked(key, now)
            if check_password(self.users, user, password):
                for key in keys[:1]:  # the pair's or the browser's count, never the account's
                    self._counts.pop(key, None)
                return self._new_device(account)
            counted = "; ".join(self._fail(key, now) for key in keys)
        LOG.warning("%s login failed for %s (%s)", self.name, self._account(account), counted)
        raise LoginRefused("Wrong user or password.")

    # -------------------------------------------------------------- counting
    def _count(self, key: tuple[str, ...], now: float) -> _Count:
        count = self._counts.get(key)
        if count is None or (now - count.last > self.policy.forget_s and now >= count.locked_until):
            if len(self._counts) >= MAX_COUNTS:
                self._forget(now)
            count = self._counts[key] = _Count()
        return count

    def _forget(self, now: float) -> None:
        """Drop counts forgotten by the policy; the oldest half if there are still too many."""
        stale = [
            key
            for key, count in self._counts.items()
            if now - count.last > self.policy.forget_s and now >= count.locked_until
        ]
        for key in stale:
            del self._counts[key]
        if len(self._counts) >= MAX_COUNTS:
            oldest = sorted(self._counts, key=lambda key: self._counts[key].last)
            for key in oldest[: len(oldest) // 2]:
                del self._counts[key]

    def _refuse_if_locked(self, key: tuple[str, ...], now: float) -> None:
        count = self._counts.get(key)
        if count is None or now >= count.locked_until:
            return
        wait = count.locked_until - now
        count.refused += 1
        if count.refused == 1:
            LOG.warning(
                "%s login refused for %s %s: locked for %d more s (further attempts are "
                "counted, not logged, until the lock ends)",
                self.name,
                self._account(key[1]),
                self._where(key),
                math.ceil(wait),
            )
        minutes = max(1, math.ceil(wait / 60))
        raise LoginRefused(
            f"Too many failed logins; try again in {minutes} minute(s).", locked=True
        )

    def _fail(self, key: tuple[str, ...], now: float) -> str:
        """Count a failure of ``key``; what it did, for the log line."""
        count = self._count(key, now)
        count.failures += 1
        count.last = now
        free = self.policy.account_free if key[0] == "account" else self.policy.free
        lock = self.policy.lock_s(count.failures, free)
        said = f"{count.failures} {'failure' if count.failures == 1 else 'failures'}"
        if count.refused:
            said += f", {count.refused} attempts refused during the last lock"
            count.refused = 0
        if lock:
            count.locked_until = now + lock
            said += f", locked for {lock:.0f} s"
        return f"{self._where(key)}: {said}"

    @staticmethod
    def _account(account: str) -> str:
        return f"account {account!r}" if account else "an unknown account"

    @staticmethod
    def _where(key: tuple[str, ...]) -> str:
        if key[0] == "pair":
            return f"from {printable(key[2])}"
        return "on its trusted browser" if key[0] == "device" else "from every address"

    # --------------------------------------------------------- device tokens
    def _mac(self, account: str, nonce: str) -> str:
        message = f"{self.name}|{account}|{nonce}".encode()
        return hmac.new(self.device_key, message, hashlib.sha256).hexdigest()[:32]

    def _new_device(self, account: str) -> str:
        nonce = secrets.token_hex(8)
        return f"{nonce}.{self._mac(account, nonce)}"

    def _device_nonce(self, device: str, account: str) -> str:
        """The token's nonce when ``device`` is a valid token of ``account``, else ""."""
        nonce, _, mac = (device or "").partition(".")
        if not account or not nonce or len(device) > 64:
            return ""
        return nonce if hmac.compare_digest(mac, self._mac(account, nonce)) else ""


def client_key(address: str | None) -> str:
    """The client an address stands for: IPv6 addresses by their /64 (one host often holds
    a whole /64), an IPv4 address mapped into IPv6 as itself.

    >>> client_key("2001:db8:1:2:3:4:5:6"), client_key("::ffff:10.0.0.7"), client_key(None)
    ('2001:db8:1:2::/64', '10.0.0.7', 'local')
    """
    if not address:
        return "local"
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address[:64]
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.ip_network(f"{parsed}/64", strict=False))
    return str(parsed)


#: The client address of the request being handled (set by :class:`ServedHosts`), read by
#: the rater login check, which Gradio calls with the user name and password only.
REQUEST_CLIENT: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "glyphbench_request_client", default=None
)


def rater_login(guard: LoginGuard) -> Callable[[str, str], bool]:
    """Gradio's ``auth=`` check for rater logins, limited by ``guard``: a wrong password is
    False (Gradio's "Incorrect credentials"), a locked account or address a 429 saying
    when to try again."""

    def check(user: str, password: str) -> bool:
        from fastapi import HTTPException

        try:
            guard.attempt(REQUEST_CLIENT.get(), user, password)
        except LoginRefused as exc:
            if exc.locked:
                raise HTTPException(status_code=429, detail=str(exc)) from None
            return False
        return True

    return check


def device_key(folder: Path) -> bytes:
    """The study's key for device tokens (``FOLDER/.admin-key``, owner-only, made once), so
    a trusted browser stays trusted when the server restarts; delete the file to revoke
    every token."""
    path = folder / ".admin-key"
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        data = path.read_bytes()
        if len(data) >= 32:
            return data
        raise InputError(path, "damaged (shorter than 32 bytes): delete it") from None
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(secrets.token_bytes(32))
    return path.read_bytes()


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


class ServedHosts:
    """ASGI middleware: requests must name this server in ``Host``; keeps the client address.

    A page of another site that gets its name pointed at this machine (DNS rebinding)
    sends that name as ``Host``; such requests get 421 and one log line per name. An IP
    address (any: a rebinding page has a name of its own), ``localhost`` and the names in
    ``allowed`` pass, as do requests without a ``Host`` (no browser sends one).
    X-Forwarded-For is applied by uvicorn from ``trusted_proxies`` only; without any, the
    first request carrying it is logged (it is ignored).
    The client address of each request (uvicorn's: the socket's peer, or what a trusted
    proxy says) is put in :data:`REQUEST_CLIENT` for the rater login check.
    """

    def __init__(
        self, app: ASGIApp, allowed: Iterable[str] = (), trusted_proxies: Iterable[str] = ()
    ) -> None:
        self.app = app
        self.allowed = {"localhost", *(name.lower().rstrip(".") for name in allowed)}
        self.trusted_proxies = tuple(trusted_proxies)
        self.refused: set[str] = set()  # names already logged (bounded)
        self.forwarded_said = False

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers", []))
        host = host_name(headers.get(b"host", b"").decode("latin-1"))
        if host and not self.serves(host):
            self._log_refused(host)
            if scope["type"] == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            else:
                await _reply(send, 421, "this server does not answer to that host name")
            return
        if b"x-forwarded-for" in headers and not self.forwarded_said and not self.trusted_proxies:
            self.forwarded_said = True
            LOG.warning(
                "requests carry X-Forwarded-For, which is ignored: name the proxy that sets "
                "it with --trusted-proxy ADDRESS to tell its clients apart"
            )
        client = scope.get("client")
        token = REQUEST_CLIENT.set(str(client[0]) if client else None)
        try:
            await self.app(scope, receive, send)
        finally:
            REQUEST_CLIENT.reset(token)

    def serves(self, host: str) -> bool:
        """Whether ``host`` (a Host header's name, lower case, no port) names this server."""
        try:
            ipaddress.ip_address(host)
            return True
        except ValueError:
            return host.rstrip(".") in self.allowed

    def _log_refused(self, host: str) -> None:
        if host in self.refused or len(self.refused) >= 100:
            return
        self.refused.add(host)
        LOG.warning(
            "refused requests for host %r: not a name this server answers to (a page of "
            "another site?); if it is yours, serve with --allowed-host %s",
            printable(host[:100]),
            printable(host[:100]),
        )


def host_name(header: str) -> str:
    """The name of a ``Host`` header: lower case, without its port or IPv6 brackets.

    >>> host_name("Study.Example.org:7860"), host_name("[::1]:7860"), host_name("127.0.0.1")
    ('study.example.org', '::1', '127.0.0.1')
    """
    header = header.strip().lower()
    if header.startswith("["):
        return header[1:].partition("]")[0]
    return header.rpartition(":")[0] if header.count(":") == 1 else header


def text_input(value: Any) -> str:
    """A raw text input as the service takes it: a string, at most :data:`MAX_TEXT` long.

    >>> text_input("K7QM-3XPA"), text_input(None), text_input(["x"]), len(text_input("a" * 999))
    ('K7QM-3XPA', '', '', 200)
    """
    return value[:MAX_TEXT] if isinstance(value, str) else ""


def client_address(request: Any) -> str | None:
    """The address a request came from: the socket's peer, or what a proxy named by
    ``--trusted-proxy`` says in X-Forwarded-For (uvicorn applies it; nothing else does)."""
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
