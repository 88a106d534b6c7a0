"""Whether the model hub answers, asked once and fast, so an offline machine fails in seconds.

huggingface_hub retries a request whose host does not resolve or refuses the
connection, with back-off: loading a model that is not cached took about 25 s
per attempt on a machine without internet (measured for one ``load_config``),
before failing anyway. :func:`hub_reachable` opens one TCP connection to the
hub's endpoint (``HF_ENDPOINT``) with a short timeout and remembers the answer;
loaders pass :func:`offline_kwargs` to ``from_pretrained`` / ``load_config`` so
that, offline, only the local cache is tried and the failure is immediate.

>>> offline_kwargs(reachable=False)
{'local_files_only': True}
>>> offline_kwargs(reachable=True)
{}
"""

from __future__ import annotations

import functools
import socket
from urllib.parse import urlparse

#: Seconds to wait for the hub's TCP handshake.
PROBE_TIMEOUT = 3.0


def endpoint() -> str:
    """The hub endpoint huggingface_hub uses (``HF_ENDPOINT`` or huggingface.co)."""
    from huggingface_hub import constants

    return str(constants.ENDPOINT)


def hub_reachable(url: str | None = None) -> bool:
    """True when the hub accepts a TCP connection (False at once when HF_HUB_OFFLINE is set)."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE:
        return False
    return _connects(url or endpoint())


@functools.lru_cache(maxsize=8)
def _connects(url: str) -> bool:
    parsed = urlparse(url)
    host = parsed.hostname or ""
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    try:
        socket.create_connection((host, port), timeout=PROBE_TIMEOUT).close()
    except OSError:
        return False
    return True


def offline_kwargs(*, reachable: bool | None = None) -> dict[str, bool]:
    """``{"local_files_only": True}`` when the hub is unreachable, else nothing."""
    if reachable is None:
        reachable = hub_reachable()
    return {} if reachable else {"local_files_only": True}


def unreachable_note(source: str) -> str:
    """The reason to give when loading ``source`` failed with the hub unreachable."""
    if hub_reachable():
        return ""
    return f" (the hub {endpoint()} is unreachable, and {source} is not in the local cache)"
