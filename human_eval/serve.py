"""Serving the rating app: checks of the address and port, the process's private folders,
SIGTERM, and :func:`launch` (Gradio's server behind
:class:`glyphbench.human_eval.guard.RequestLimits`).

The page itself is :func:`glyphbench.human_eval.app.build_app`; Gradio and Starlette are imported
only when the server starts, so importing this module is cheap.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
import threading
from pathlib import Path
from typing import Any

from glyphbench.core.errors import InputError
from glyphbench.human_eval.app import ADMIN_ROUTE, HIDDEN_CSS, SHORTCUTS_JS, build_app, page_theme
from glyphbench.human_eval.guard import LoginGuard, RequestLimits, read_auth_file
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


def private_temp_dir(study: Study) -> Path:
    """Gradio's cache for this server (files it serves, the admin CSV): owner-only, removed
    at exit, in the study's folder instead of the shared ``/tmp/gradio``."""
    folder = Path(tempfile.mkdtemp(prefix=".serve-", dir=study.folder))
    folder.chmod(0o700)
    atexit.register(shutil.rmtree, folder, True)
    return folder


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
) -> Any:
    """Build and launch the app: localhost by default, serving only the study's images."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    if "GRADIO_TEMP_DIR" not in os.environ:
        os.environ["GRADIO_TEMP_DIR"] = str(private_temp_dir(study))
    if block:
        exit_on_sigterm()
    admin_users = read_auth_file(auth_file) if auth_file else None
    rater_users = read_auth_file(rater_auth_file) if rater_auth_file else None
    service = RatingService(study, max_claims_per_address=max_claims_per_address)
    demo = build_app(study, admin_users=admin_users, service=service, guard=guard)
    demo.queue(default_concurrency_limit=16)
    try:
        _launch(demo, study, host, port, rater_users)
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


def _launch(
    demo: Any,
    study: Study,
    host: str,
    port: int | None,
    rater_users: dict[str, str] | None,
) -> None:
    """Gradio's launch, quiet: its own lines (the local URL, the ``share=True`` hint) are
    replaced by :func:`launch`'s, which name this app's addresses and options."""
    from starlette.middleware import Middleware

    private = [study.folder / name for name in ("manifest.parquet", "study.json")]
    private += list(study.folder.glob("ratings.sqlite*"))
    demo.launch(
        server_name=host,
        server_port=port,
        auth=list(rater_users.items()) if rater_users else None,
        allowed_paths=[str(study.images_dir)],
        blocked_paths=[str(p) for p in private],
        prevent_thread_lock=True,  # the URLs are printed first, then the thread blocks
        quiet=True,
        show_error=True,
        max_file_size=1,  # no uploads (RequestLimits refuses them before Gradio sees them)
        app_kwargs={"middleware": [Middleware(RequestLimits)]},
        footer_links=[],
        head=SHORTCUTS_JS,
        css=HIDDEN_CSS,
        theme=page_theme(),
        ssr_mode=False,
        mcp_server=False,
    )
