"""Serving the rating app: checks of the address and port, the process's private folders,
SIGTERM, and :func:`launch` (Gradio's server behind
:class:`glyphbench.human_eval.guard.RequestLimits`).

The page itself is :func:`glyphbench.human_eval.app.build_app`; Gradio and Starlette are imported
only when the server starts, so importing this module is cheap.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from glyphbench.core.durable import HOST_TAG, process_alive
from glyphbench.core.errors import InputError
from glyphbench.human_eval.app import ADMIN_ROUTE, HIDDEN_CSS, SHORTCUTS_JS, build_app, page_theme
from glyphbench.human_eval.guard import (
    LoginGuard,
    RequestLimits,
    ServedHosts,
    device_key,
    rater_login,
    read_auth_file,
)
from glyphbench.human_eval.service import RatingService
from glyphbench.human_eval.study import Study


def exit_on_sigterm() -> None:
    """Make SIGTERM exit like Ctrl-C does, so exit handlers remove the private folders.

    Python's default for SIGTERM ends the process without running ``atexit``; the
    admin's export (ratings with every answer) would stay on disk.
    """
    import signal

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, stop)


#: Gradio's cache folder of one server: ``STUDY/.serve-HOST-PID-RANDOM``.
SERVE_PREFIX = ".serve-"
_SERVE_DIR = re.compile(rf"^{re.escape(SERVE_PREFIX)}(?P<host>[0-9a-f]{{6}})-(?P<pid>\d+)-")


def private_temp_dir(study: Study) -> Path:
    """Gradio's cache for this server (files it serves, the admin CSV): owner-only, removed
    at exit, in the study's folder instead of the shared ``/tmp/gradio``.

    Its name carries this host and process (``.serve-HOST-PID-RANDOM``): the folders a
    server of this host that is gone left (``kill -9``, a power cut) are removed first.
    """
    remove_stale_serve_dirs(study.folder)
    prefix = f"{SERVE_PREFIX}{HOST_TAG}-{os.getpid()}-"
    folder = Path(tempfile.mkdtemp(prefix=prefix, dir=study.folder))
    folder.chmod(0o700)
    atexit.register(shutil.rmtree, folder, True)
    return folder


def remove_stale_serve_dirs(folder: Path) -> list[Path]:
    """Remove the ``.serve-*`` folders in ``folder`` whose server, a process of this host,
    is gone; return them. Another host's (a shared disk) and a live server's are kept."""
    removed = []
    with suppress(OSError):
        for entry in folder.iterdir():
            match = _SERVE_DIR.match(entry.name)
            if match is None or match["host"] != HOST_TAG or not entry.is_dir():
                continue
            if not process_alive(int(match["pid"])):
                shutil.rmtree(entry, ignore_errors=True)
                removed.append(entry)
    return removed


def check_bind(host: str, port: int | None) -> None:
    """InputError (one line) for a port outside 1-65535 or a host that is no address here.

    >>> check_bind("127.0.0.1", 7860)
    >>> check_bind("127.0.0.1", 99999)
    Traceback (most recent call last):
    ...
    glyphbench.core.errors.InputError: --port 99999 is not a port: use 1 to 65535
    """
    import socket

    if port is not None and not 1 <= port <= 65535:
        raise InputError(None, f"--port {port} is not a port: use 1 to 65535")
    try:
        socket.getaddrinfo(host, None)
    except (OSError, UnicodeError) as exc:
        raise InputError(
            None, f"--host {host!r} is not an address or name of this machine ({exc})"
        ) from None


def port_in_use(host: str, port: int | None) -> InputError:
    """The one-line error for a port the server cannot have: it names ``--port``.

    >>> print(port_in_use("127.0.0.1", 7860))
    --port 7860 is in use on 127.0.0.1: stop what holds it, or serve on another (--port 7861)
    >>> print(port_in_use("127.0.0.1", None))
    no free port on 127.0.0.1 for the server: choose one with --port
    """
    if port is None:
        return InputError(None, f"no free port on {host} for the server: choose one with --port")
    other = port + 1 if port < 65535 else port - 1
    return InputError(
        None,
        f"--port {port} is in use on {host}: stop what holds it, or serve on another "
        f"(--port {other})",
    )


def check_port(host: str, port: int | None) -> None:
    """:func:`port_in_use` when ``port`` cannot be bound on ``host`` now (None: Gradio picks)."""
    import socket

    if port is None:
        return
    try:
        info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(info[0], socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            probe.bind(info[4])
    except OSError:
        raise port_in_use(host, port) from None


def launch(
    study: Study,
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    auth_file: str | Path | None = None,
    rater_auth_file: str | Path | None = None,
    block: bool = True,
    quiet: bool = False,
    max_claims_per_address: int | None = None,
    guard: LoginGuard | None = None,
    rater_guard: LoginGuard | None = None,
    trusted_proxies: Sequence[str] = (),
    allowed_hosts: Sequence[str] = (),
) -> Any:
    """Build and launch the app: localhost by default, serving only the study's images.

    ``guard`` and ``rater_guard`` limit the admin's and the raters' logins (default: a
    :class:`LoginGuard` of the auth file's users; the admin's device tokens keyed by the
    study's ``.admin-key``). ``trusted_proxies``: the addresses (or networks) of proxies
    whose X-Forwarded-For names the client; nobody else's is believed.
    ``allowed_hosts``: names besides ``localhost`` and IP addresses that requests may
    give as ``Host`` (:func:`served_names`).
    """
    check_proxies(trusted_proxies)
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    if "GRADIO_TEMP_DIR" not in os.environ:
        os.environ["GRADIO_TEMP_DIR"] = str(private_temp_dir(study))
    if block:
        exit_on_sigterm()
    admin_users = read_auth_file(auth_file) if auth_file else None
    rater_users = read_auth_file(rater_auth_file) if rater_auth_file else None
    if admin_users and guard is None:
        guard = LoginGuard(admin_users, device_key=device_key(study.folder))
    if rater_users and rater_guard is None:
        rater_guard = LoginGuard(rater_users, name="rater")
    service = RatingService(study, max_claims_per_address=max_claims_per_address)
    demo = build_app(study, admin_users=admin_users, service=service, guard=guard)
    demo.queue(default_concurrency_limit=16)
    access = Access(served_names(host, allowed_hosts), tuple(trusted_proxies), rater_guard)
    try:
        _launch(demo, study, host, port, access)
    except OSError as exc:
        if "Cannot find empty port" in str(exc):  # Gradio's words name its own settings
            raise port_in_use(host, port) from None
        raise
    url = str(getattr(demo, "local_url", "") or f"http://{host}:{port}/").rstrip("/")
    if not quiet:
        print(f"raters open {url}/", flush=True)
        if admin_users:
            print(f"the admin page is {url}{ADMIN_ROUTE} (not linked from the raters' page)")
        else:
            print("no admin page: start with --auth-file to have one", flush=True)
    if block:
        demo.block_thread()
    return demo


@dataclass(frozen=True)
class Access:
    """Who may reach the server: the ``Host`` names it answers to, the proxies it
    believes, and the rater logins' guard (None: no rater login)."""

    names: tuple[str, ...]
    trusted_proxies: tuple[str, ...]
    rater_guard: LoginGuard | None


def check_proxies(proxies: Sequence[str]) -> None:
    """InputError (one line) for a ``--trusted-proxy`` that is no address or network.

    >>> check_proxies(["127.0.0.1", "10.0.0.0/8", "::1"])
    >>> check_proxies(["proxy.local"])
    Traceback (most recent call last):
    ...
    glyphbench.core.errors.InputError: --trusted-proxy 'proxy.local' is not an IP address or \
network (e.g. 127.0.0.1 or 10.0.0.0/8)
    """
    import ipaddress

    for proxy in proxies:
        try:
            ipaddress.ip_network(proxy, strict=False)
        except ValueError:
            raise InputError(
                None,
                f"--trusted-proxy {proxy!r} is not an IP address or network "
                "(e.g. 127.0.0.1 or 10.0.0.0/8)",
            ) from None


def served_names(host: str, allowed: Sequence[str] = ()) -> tuple[str, ...]:
    """The host names requests may give (IP addresses and ``localhost`` always pass):
    ``allowed``, the bound host when it is a name, and the machine's own names when the
    server listens on every interface.

    >>> served_names("127.0.0.1", ["study.example.org"])
    ('study.example.org',)
    """
    import ipaddress
    import socket

    names = [*allowed]
    try:
        bound = ipaddress.ip_address(host)
    except ValueError:
        names.append(host)
    else:
        if bound.is_unspecified:  # 0.0.0.0 or ::: reached by the machine's own names too
            names += [socket.gethostname(), socket.getfqdn()]
    return tuple(dict.fromkeys(name.lower() for name in names if name))


def _launch(demo: Any, study: Study, host: str, port: int | None, access: Access) -> None:
    """Gradio's launch, quiet: its own lines (the local URL, the ``share=True`` hint) are
    replaced by :func:`launch`'s, which name this app's addresses and options.

    uvicorn believes X-Forwarded-For from ``FORWARDED_ALLOW_IPS`` (Gradio passes it no
    setting of its own; uvicorn's default, 127.0.0.1, would let any local process name
    any address): set to the trusted proxies while the server is made, then put back.
    """
    from starlette.middleware import Middleware

    private = [study.folder / name for name in ("manifest.parquet", "study.json", ".admin-key")]
    private += list(study.folder.glob("ratings.sqlite*"))
    guard = access.rater_guard
    middleware = [
        Middleware(ServedHosts, allowed=access.names, trusted_proxies=access.trusted_proxies),
        Middleware(RequestLimits),
    ]
    previous = os.environ.get("FORWARDED_ALLOW_IPS")
    os.environ["FORWARDED_ALLOW_IPS"] = ",".join(access.trusted_proxies)
    try:
        demo.launch(
            server_name=host,
            server_port=port,
            auth=rater_login(guard) if guard is not None else None,
            allowed_paths=[str(study.images_dir)],
            blocked_paths=[str(p) for p in private],
            prevent_thread_lock=True,  # the URLs are printed first, then the thread blocks
            quiet=True,
            show_error=True,
            max_file_size=1,  # no uploads (RequestLimits refuses them before Gradio sees them)
            app_kwargs={"middleware": middleware},
            footer_links=[],
            head=SHORTCUTS_JS,
            css=HIDDEN_CSS,
            theme=page_theme(),
            ssr_mode=False,
            mcp_server=False,
        )
    finally:
        if previous is None:
            os.environ.pop("FORWARDED_ALLOW_IPS", None)
        else:
            os.environ["FORWARDED_ALLOW_IPS"] = previous
