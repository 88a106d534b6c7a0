"""``api:bfl/<model>``: Black Forest Labs' FLUX API (REST, through httpx).

Request: ``POST {base_url}/v1/<model>`` (``flux-pro-1.1``, ``flux-pro-1.1-ultra``,
``flux-kontext-pro``, ``flux-2-pro``...) with header ``x-key`` and a JSON body
(``prompt``, ``seed``, size, ``output_format``, ``safety_tolerance``,
``prompt_upsampling``). Answer: ``{"id", "polling_url"}``; the adapter polls
``polling_url`` (with the key, only on the API's own site) until ``status`` is
``Ready`` and downloads ``result.sample`` (a signed URL: no key sent). ``Request
Moderated`` and ``Content Moderated`` are refusals (BFL bills neither);
``Error``/``Failed``/``Task not found`` are failures. The seed is honoured.

Polls and the download are retried on their own: a submitted task is never
submitted again because a poll failed (that would pay twice).
"""

from __future__ import annotations

import time
from typing import Any, ClassVar

from pydantic import Field

from glyphbench.models.api.core import JsonOptions, Provider, Session, add_provider
from glyphbench.models.api.http_provider import download, origin, read_json, send
from glyphbench.models.api.transport import ApiError, Refusal, one_line, status_error

DEFAULT_BASE_URL = "https://api.bfl.ai"
MODERATED = frozenset({"Request Moderated", "Content Moderated"})
FAILED = frozenset({"Error", "Failed", "Task not found"})


class BflOptions(JsonOptions):
    width: int | None = Field(default=1024, description="pixels, a multiple of 32 (not ultra)")
    height: int | None = Field(default=1024, description="pixels, a multiple of 32 (not ultra)")
    aspect_ratio: str | None = Field(
        default=None, description="e.g. 16:9 (ultra, kontext; then width/height are not sent)"
    )
    output_format: str = Field(default="png", description="png | jpeg")
    safety_tolerance: int | None = Field(default=None, description="0 (strict) .. 6 (permissive)")
    prompt_upsampling: bool = Field(default=False, description="let BFL rewrite the prompt")
    body: dict[str, Any] = Field(default_factory=dict, description="further JSON body fields")
    poll_interval: float = Field(default=0.5, gt=0, description="seconds between polls")
    poll_timeout: float = Field(default=600.0, gt=0, description="seconds to wait for a task")

    TRANSPORT: ClassVar[frozenset[str]] = JsonOptions.TRANSPORT | {
        "poll_interval",
        "poll_timeout",
    }

    def payload(self, prompt: str, seed: int) -> dict[str, Any]:
        body: dict[str, Any] = {"prompt": prompt, "seed": seed}
        if self.aspect_ratio:
            body["aspect_ratio"] = self.aspect_ratio
        else:
            body.update({k: v for k, v in (("width", self.width), ("height", self.height)) if v})
        body["output_format"] = self.output_format
        body["prompt_upsampling"] = self.prompt_upsampling
        if self.safety_tolerance is not None:
            body["safety_tolerance"] = self.safety_tolerance
        return {**body, **self.body}


def connect(options: BflOptions, key: str) -> Any:
    import httpx

    base = (options.base_url or DEFAULT_BASE_URL).rstrip("/")
    return _BflClient(httpx.Client(timeout=options.timeout), base, key)


#: BFL's own domain: its regional API hosts (``api.us1.bfl.ai``) get the key when the
#: base URL is the default one (a polling URL names the region that holds the task).
BFL_SITE = "bfl.ai"


class _BflClient:
    """The httpx client, the API's base URL and the key (kept out of every message)."""

    def __init__(self, http: Any, base: str, key: str) -> None:
        self.http = http
        self.base = base
        self.key = key

    def headers(self, url: str) -> dict[str, str]:
        """The key only for the API's own origin (:meth:`same_site`)."""
        return {"accept": "application/json", "x-key": self.key} if self.same_site(url) else {}

    def same_site(self, url: str) -> bool:
        """Whether ``url`` may carry the key: the base URL's own origin (scheme, host and
        port), or, for BFL's own API, one of its regional hosts over HTTPS
        (``api.us1.bfl.ai`` answers for ``api.bfl.ai``: its polling URLs name them).

        A host sharing only the base's last two labels is no longer enough: for a proxy at
        ``bfl-proxy.example.co.uk`` that let the key go to ``attacker.co.uk``, and a
        different scheme or port took it over plain HTTP or to another server.

        >>> client = _BflClient(None, "https://api.bfl.ai", "k")
        >>> [client.same_site(u) for u in ("https://api.us1.bfl.ai/v1/get_result",
        ...  "http://api.bfl.ai/x", "https://api.bfl.ai:8443/x", "https://evil.ai/x")]
        [True, False, False, False]
        >>> proxy = _BflClient(None, "https://bfl-proxy.example.co.uk", "k")
        >>> proxy.same_site("https://attacker.co.uk/poll"), proxy.same_site(proxy.base + "/p")
        (False, True)
        """
        if origin(url) == origin(self.base):
            return True
        scheme, host, port = origin(url)
        official = origin(self.base) == origin(DEFAULT_BASE_URL)
        return official and (scheme, port) == ("https", 443) and host.endswith("." + BFL_SITE)

    def close(self) -> None:
        self.http.close()


def request(session: Session, prompt: str, seed: int) -> bytes:
    options: BflOptions = session.options
    client: _BflClient = session.client
    url = f"{client.base}/v1/{session.model}"
    answer = send(
        client.http, "POST", url, headers=client.headers(url), json=options.payload(prompt, seed)
    )
    if answer.status_code >= 400:
        raise status_error(answer.status_code, answer.text, dict(answer.headers))
    task = read_json(answer)
    if not isinstance(task, dict) or not task.get("id"):
        raise ApiError(f"no task id in the answer: {one_line(str(task), 120)}", retryable=True)
    polling_url = task.get("polling_url") or f"{client.base}/v1/get_result?id={task['id']}"
    sample = _wait(session, polling_url)
    data: bytes = session.retry(lambda: download(sample, options.timeout, client.http))
    return data


def _wait(session: Session, polling_url: str) -> str:
    """Poll until the task is ready; its image URL. Refusals and failures raise."""
    options: BflOptions = session.options
    deadline = time.monotonic() + options.poll_timeout
    while True:
        result = session.retry(lambda: _poll(session, polling_url))
        status = str(result.get("status", ""))
        if status == "Ready":
            sample = (result.get("result") or {}).get("sample")
            if not sample:
                raise ApiError("task Ready without result.sample")
            return str(sample)
        if status in MODERATED:
            details = result.get("details") or result.get("result") or ""
            raise Refusal(f"{status}{': ' + one_line(str(details), 150) if details else ''}")
        if status in FAILED:
            raise ApiError(f"task {status}: {one_line(str(result.get('result') or ''), 150)}")
        if time.monotonic() > deadline:
            raise ApiError(f"task still {status or 'pending'} after {options.poll_timeout:g} s")
        if session.stopped():  # the run is stopping: the task is left (resume pays again)
            raise ApiError("not polled further: the run is stopping", retryable=False)
        session.sleep(options.poll_interval)


def _poll(session: Session, polling_url: str) -> dict[str, Any]:
    client: _BflClient = session.client
    answer = send(client.http, "GET", polling_url, headers=client.headers(polling_url))
    if answer.status_code >= 400:
        raise status_error(answer.status_code, answer.text, dict(answer.headers))
    result = read_json(answer)
    if not isinstance(result, dict):
        raise ApiError("poll answer is not a JSON object", retryable=True)
    return result


add_provider(
    Provider(
        name="bfl",
        options=BflOptions,
        key_env=("BFL_API_KEY",),
        connect=connect,
        request=request,
        summary="Black Forest Labs FLUX API (flux-pro-1.1, flux-pro-1.1-ultra, flux-2-pro...).",
        default_base_url=DEFAULT_BASE_URL,
        seed_honoured=lambda model, options: True,
        requires=("httpx",),
    )
)
