"""``api:http``: any JSON image API, described by options (and shared HTTP helpers).

A provider without a module of its own is a mapping in the model's options::

    - spec: api:http/seedream-4
      options:
        url: https://example.com/v1/images/generations
        headers: {Authorization: "Bearer {env:ARK_API_KEY}"}
        body: {model: seedream-4-0, prompt: "{prompt}", seed: "{seed}", size: 1024x1024}
        image_field: data.0.b64_json        # dotted path to the image in the answer
        image_format: base64                # base64 | url | auto
        refusal_status: [400]               # statuses that may mean a refusal ...
        refusal_match: "sensitive|policy"   # ... when the answer's text matches this
        refusal_field: error.code           # or a field whose presence means one

In ``url``, ``headers`` and ``body`` strings, ``{prompt}``, ``{seed}`` and
``{model}`` are replaced (a string that is exactly ``"{seed}"`` becomes the number)
and ``{env:NAME}`` by the environment variable NAME: keys are never written in a
config, and a header that looks like a credential must use a placeholder. Only
synchronous APIs fit (one request, the image in its answer); an API that must be
polled needs a provider module (see ``bfl_provider.py``).
"""

from __future__ import annotations

import base64
import json
import os
import re
from typing import Any, ClassVar, Literal
from urllib.parse import urljoin, urlsplit

from pydantic import Field, model_validator

from glyphbench.core.errors import exception_chain
from glyphbench.models.api.core import (
    JsonOptions,
    Provider,
    Session,
    add_provider,
    env_placeholders,
)
from glyphbench.models.api.transport import ApiError, Refusal, one_line, status_error

#: Header names that carry credentials: their values must come from ``{env:NAME}``.
CREDENTIAL_HEADER = re.compile(r"auth|key|token|secret|cookie", re.IGNORECASE)


class HttpOptions(JsonOptions):
    url: str = Field(description="the endpoint (placeholders allowed)")
    method: Literal["POST", "PUT"] = Field(default="POST", description="HTTP method")
    headers: dict[str, str] = Field(
        default_factory=dict, description="request headers; keys as {env:NAME}"
    )
    body: dict[str, Any] = Field(
        default_factory=lambda: {"prompt": "{prompt}"},
        description="JSON body template ({prompt}, {seed}, {model}, {env:NAME})",
    )
    image_field: str = Field(description="dotted path of the image in the answer, e.g. data.0.url")
    image_format: Literal["base64", "url", "auto"] = Field(
        default="auto", description="how the image is given (auto: a URL if it looks like one)"
    )
    refusal_status: list[int] = Field(
        default_factory=list, description="HTTP statuses that mean a refusal (with refusal_match)"
    )
    refusal_match: str | None = Field(
        default=None, description="regular expression on the answer's text meaning a refusal"
    )
    refusal_field: str | None = Field(
        default=None, description="dotted path whose presence in an answer means a refusal"
    )

    #: Where and how to ask, not what: the cache key keeps the model name and the body
    #: (name the model, ``api:http/<name>``, so two endpoints never share entries).
    TRANSPORT: ClassVar[frozenset[str]] = JsonOptions.TRANSPORT | {
        "url",
        "method",
        "headers",
        "image_field",
        "image_format",
        "refusal_status",
        "refusal_match",
        "refusal_field",
    }

    @model_validator(mode="after")
    def _keys_not_literal(self) -> HttpOptions:
        for name, value in self.headers.items():
            if CREDENTIAL_HEADER.search(name) and not env_placeholders(value):
                raise ValueError(
                    f"header {name!r} must take its key from the environment, "
                    f"e.g. 'Bearer {{env:MY_KEY}}', never written in the config"
                )
        if self.refusal_match is not None:
            re.compile(self.refusal_match)
        return self


def env_names(options: HttpOptions) -> list[str]:
    texts = [options.url, *options.headers.values(), json.dumps(options.body)]
    return sorted({name for text in texts for name in env_placeholders(text)})


def fill(template: Any, values: dict[str, Any], *, url: bool = False) -> Any:
    """``template`` with placeholders replaced; ``"{seed}"`` alone keeps the value's type.

    ``url``: the template is a URL, so ``{env:NAME}`` and ``{prompt}`` are percent-encoded
    (a key holding ``&`` or ``/`` must not change the URL's shape).

    >>> fill({"p": "say {prompt}", "s": "{seed}", "n": [1, "{model}"]},
    ...      {"prompt": "hi", "seed": 7, "model": "m"})
    {'p': 'say hi', 's': 7, 'n': [1, 'm']}
    >>> fill("https://x/v1?q={prompt}&s={seed}", {"prompt": "a b&c", "seed": 7}, url=True)
    'https://x/v1?q=a%20b%26c&s=7'
    """
    if isinstance(template, dict):
        return {key: fill(value, values) for key, value in template.items()}
    if isinstance(template, list):
        return [fill(value, values) for value in template]
    if not isinstance(template, str):
        return template
    whole = re.fullmatch(r"\{(prompt|seed|model)\}", template)
    if whole and not url:
        return values[whole.group(1)]
    from urllib.parse import quote

    def encoded(text: str) -> str:
        return quote(text, safe="") if url else text

    env = r"\{env:([A-Za-z_][A-Za-z0-9_]*)\}"
    text = re.sub(env, lambda m: encoded(os.environ.get(m[1], "")), template)
    return re.sub(
        r"\{(prompt|seed|model)\}",
        lambda m: encoded(str(values[m[1]])) if m[1] == "prompt" else str(values[m[1]]),
        text,
    )


def dig(data: Any, path: str) -> Any:
    """The value at a dotted path (list items by index), or None.

    >>> dig({"data": [{"url": "u"}]}, "data.0.url"), dig({"a": 1}, "a.b")
    ('u', None)
    """
    for part in path.split("."):
        if isinstance(data, dict):
            data = data.get(part)
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return None
    return data


def connect(options: Any, key: str) -> Any:
    import httpx

    # Redirects are followed by send() alone, and only within the request's own origin:
    # httpx would carry every header but Authorization (an X-Key, a cookie) to another host.
    return httpx.Client(timeout=options.timeout, follow_redirects=False)


#: The largest answer read (an image, its JSON): a broken or hostile endpoint that sends
#: more would fill the memory (400 MB of JSON took a run to 2 GB, times ``concurrency``).
MAX_ANSWER_BYTES = 128 * 2**20


class AnswerTooLarge(ApiError):
    """An answer over :data:`MAX_ANSWER_BYTES`: final (the endpoint would send it again)."""

    def __init__(self) -> None:
        super().__init__(f"the answer is larger than {MAX_ANSWER_BYTES:,} bytes; not read further")


def bounded(client: Any, method: str, url: str, **kwargs: Any) -> Any:
    """``client.request(...)`` whose body is read only up to :data:`MAX_ANSWER_BYTES`;
    larger is a final :class:`ApiError` (no retry: the endpoint would send it again)."""
    import httpx

    follow = kwargs.pop("follow_redirects", False)
    request = client.build_request(method, url, **kwargs)
    answer = client.send(request, stream=True, follow_redirects=follow)
    try:
        body, size = [], 0
        for chunk in answer.iter_bytes():
            size += len(chunk)
            if size > MAX_ANSWER_BYTES:
                raise AnswerTooLarge()
            body.append(chunk)
    finally:
        answer.close()
    plain = [  # the body is decoded already: no header may ask to decode it again
        (name, value)
        for name, value in answer.headers.multi_items()
        if name.lower() not in ("content-encoding", "content-length", "transfer-encoding")
    ]
    return httpx.Response(
        answer.status_code, headers=plain, content=b"".join(body), request=answer.request
    )


def capped_transport(library: Any = None) -> Any:
    """An httpx transport whose answers stop at :data:`MAX_ANSWER_BYTES` with
    :class:`AnswerTooLarge`: for the clients of the official SDKs (OpenAI, Google), which
    read a body whole inside their own calls, where :func:`bounded` cannot reach.

    ``library`` is the module the client is built on: httpx (the default) or a fork with
    its interface that an SDK may use instead (the OpenAI SDK's client is httpx2's), whose
    clients accept only their own transports (:func:`httpx_library`).
    """
    if library is None:
        import httpx as library

    class CappedStream(library.SyncByteStream):  # type: ignore[misc]
        def __init__(self, inner: Any) -> None:
            self.inner = inner

        def __iter__(self) -> Any:
            size = 0
            for chunk in self.inner:
                size += len(chunk)
                if size > MAX_ANSWER_BYTES:
                    raise AnswerTooLarge()
                yield chunk

        def close(self) -> None:
            self.inner.close()

    class CappedTransport(library.HTTPTransport):  # type: ignore[misc]
        def handle_request(self, request: Any) -> Any:
            answer = super().handle_request(request)
            return library.Response(
                answer.status_code,
                headers=answer.headers,
                stream=CappedStream(answer.stream),
                extensions=answer.extensions,
            )

    return CappedTransport()


def httpx_library(client_class: type) -> Any:
    """The httpx-like module (httpx, httpx2...) that ``client_class`` derives its client from."""
    import importlib

    for base in client_class.__mro__:
        root = base.__module__.split(".")[0]
        if root.startswith("httpx"):
            return importlib.import_module(root)
    raise TypeError(f"{client_class.__name__} is no httpx client")


def too_large(exc: BaseException) -> AnswerTooLarge | None:
    """The :class:`AnswerTooLarge` an SDK wrapped in its own error (its cause), if any."""
    return next((e for e in exception_chain(exc) if isinstance(e, AnswerTooLarge)), None)


def download(url: str, timeout: float, client: Any = None) -> bytes:
    """GET an image URL (no key is sent: providers hand out signed URLs)."""
    import httpx

    try:
        if client is not None:
            answer = bounded(client, "GET", url, timeout=timeout, follow_redirects=True)
        else:
            with httpx.Client() as own:
                answer = bounded(own, "GET", url, timeout=timeout, follow_redirects=True)
    except httpx.TimeoutException:
        raise ApiError(f"image download timed out after {timeout:g} s", retryable=True) from None
    except httpx.TransportError as exc:
        raise ApiError(f"image download failed: {one_line(str(exc))}", retryable=True) from None
    if answer.status_code != 200:
        raise status_error(answer.status_code, "image download failed", dict(answer.headers))
    content: bytes = answer.content
    return content


#: Same-origin redirects followed by :func:`send` before it gives up.
MAX_REDIRECTS = 5


def origin(url: str) -> tuple[str, str, int | None]:
    """(scheme, host, port) of ``url``, the port made explicit.

    >>> origin("https://API.example.com/v1") == origin("https://api.example.com:443/x")
    True
    """
    parts = urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    return parts.scheme.lower(), (parts.hostname or "").lower(), parts.port or default


def send(client: Any, method: str, url: str, **kwargs: Any) -> Any:
    """One HTTP request; transport failures become retryable :class:`ApiError` s.

    A redirect is followed only to the request's own origin (scheme, host, port), its
    headers (keys) and body kept; a redirect elsewhere is a final :class:`ApiError`, so
    no credential header ever reaches another host.
    """
    import httpx

    for _ in range(MAX_REDIRECTS + 1):
        try:
            answer = bounded(client, method, url, follow_redirects=False, **kwargs)
        except httpx.TimeoutException:
            raise ApiError("timed out", retryable=True) from None
        except httpx.TransportError as exc:
            raise ApiError(f"connection failed: {one_line(str(exc))}", retryable=True) from None
        location = answer.headers.get("location") if answer.is_redirect else None
        if location is None:
            return answer
        target = urljoin(url, location)
        if origin(target) != origin(url):
            host = origin(target)[1] or "?"
            raise ApiError(
                f"HTTP {answer.status_code}: redirected to another host ({one_line(host, 80)}); "
                "not followed, so the key is not sent there"
            )
        url = target
    raise ApiError(f"more than {MAX_REDIRECTS} redirects")


def read_json(answer: Any) -> Any:
    """The answer's JSON; malformed JSON is a retryable :class:`ApiError`."""
    try:
        return answer.json()
    except ValueError:
        raise ApiError(
            f"malformed JSON in the answer: {one_line(answer.text, 80)!r}", retryable=True
        ) from None


def request(session: Session, prompt: str, seed: int) -> bytes:
    options: HttpOptions = session.options
    values = {"prompt": prompt, "seed": seed, "model": session.model}
    answer = send(
        session.client,
        options.method,
        fill(options.url, values, url=True),
        headers=fill(options.headers, values),
        json=fill(options.body, values),
    )
    if answer.status_code >= 400:
        if answer.status_code in options.refusal_status and _matches(options, answer.text):
            raise Refusal(f"HTTP {answer.status_code}: {one_line(answer.text, 200)}")
        raise status_error(answer.status_code, answer.text, dict(answer.headers))
    data = read_json(answer)
    if options.refusal_field and dig(data, options.refusal_field) not in (None, False, ""):
        raise Refusal(one_line(str(dig(data, options.refusal_field)), 200))
    if options.refusal_match and not options.refusal_status and _matches(options, answer.text):
        raise Refusal(one_line(answer.text, 200))
    return _image(session, options, dig(data, options.image_field))


def _matches(options: HttpOptions, text: str) -> bool:
    return options.refusal_match is None or re.search(options.refusal_match, text) is not None


def _image(session: Session, options: HttpOptions, value: Any) -> bytes:
    if not isinstance(value, str) or not value:
        raise ApiError(f"no image at {options.image_field!r} in the answer", retryable=True)
    is_url = value.startswith(("http://", "https://"))
    if options.image_format == "url" or (options.image_format == "auto" and is_url):
        return download(value, options.timeout, session.client)
    try:
        return base64.b64decode(value.split(",", 1)[-1], validate=True)  # data: URLs too
    except ValueError:
        raise ApiError(f"{options.image_field!r} is not base64", retryable=True) from None


add_provider(
    Provider(
        name="http",
        options=HttpOptions,
        key_env=(),
        connect=connect,
        request=request,
        summary="Any JSON image API: URL, headers with {env:NAME} keys, a body template, "
        "where the image is, how a refusal looks.",
        default_base_url="(the url option)",
        seed_honoured=lambda model, options: "{seed}" in json.dumps(options.body),
        seed_note="the body template has no {seed}: the provider gets no seed",
        requires=("httpx",),
        model_required=False,
        env_names=env_names,
    )
)
