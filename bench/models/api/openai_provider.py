"""``api:openai/<model>``: the OpenAI Images API through the official ``openai`` client.

Request: ``POST {base_url}/images/generations`` with ``model``, ``prompt``, ``n=1``
and the image options set here (GPT image models always answer in base64;
DALL-E models are asked for ``response_format=b64_json``). Answer:
``{"data": [{"b64_json": ...}]}`` (or a ``url``, downloaded without the key).
A refusal is an HTTP 400 whose error ``code`` is ``moderation_blocked`` (GPT image
models) or ``content_policy_violation`` (DALL-E). The API takes no seed: each image
is an independent sample and its seed only names it (recorded by describe()).
The client's own retries are off (``max_retries=0``): the adapter retries.
"""

from __future__ import annotations

import base64
from typing import Any

from pydantic import Field

from glyphbench.models.api.core import ApiOptions, Provider, Session, add_provider
from glyphbench.models.api.http_provider import (
    capped_transport,
    download,
    httpx_library,
    too_large,
)
from glyphbench.models.api.transport import ApiError, Refusal, one_line, status_error

REFUSAL_CODES = frozenset({"moderation_blocked", "content_policy_violation"})


class OpenAIOptions(ApiOptions):
    size: str | None = Field(default="1024x1024", description="e.g. 1024x1024, 1536x1024, auto")
    quality: str | None = Field(
        default=None, description="low | medium | high | auto (GPT image); standard | hd (DALL-E 3)"
    )
    output_format: str | None = Field(default=None, description="png | jpeg | webp (GPT image)")
    moderation: str | None = Field(default=None, description="auto | low (GPT image)")
    background: str | None = Field(default=None, description="opaque | transparent | auto")
    style: str | None = Field(default=None, description="vivid | natural (DALL-E 3)")


def connect(options: OpenAIOptions, key: str) -> Any:
    import openai

    # No redirects: httpx strips only Authorization when one leads to another host.
    # Answers stop at MAX_ANSWER_BYTES (the SDK reads a body whole, inside its own call).
    library = httpx_library(openai.DefaultHttpxClient)
    http = openai.DefaultHttpxClient(
        timeout=options.timeout, follow_redirects=False, transport=capped_transport(library)
    )
    return openai.OpenAI(
        api_key=key,
        base_url=options.base_url or None,
        max_retries=0,
        timeout=options.timeout,
        http_client=http,
    )


def request(session: Session, prompt: str, seed: int) -> bytes:
    import openai

    options: OpenAIOptions = session.options
    names = ("size", "quality", "output_format", "moderation", "background", "style")
    extra = {name: getattr(options, name) for name in names if getattr(options, name)}
    if session.model.startswith("dall-e"):
        extra["response_format"] = "b64_json"
    try:
        answer = session.client.images.generate(model=session.model, prompt=prompt, n=1, **extra)
    except openai.APIStatusError as exc:
        raise _status_problem(exc) from None
    except openai.APITimeoutError:
        raise ApiError(f"timed out after {options.timeout:g} s", retryable=True) from None
    except openai.APIConnectionError as exc:  # the SDK wraps what its transport raised
        raise too_large(exc) or ApiError(
            f"connection failed: {one_line(str(exc))}", retryable=True
        ) from None
    except (openai.APIError, ValueError) as exc:  # an answer it could not read (bad JSON)
        raise ApiError(f"unreadable answer: {one_line(str(exc))}", retryable=True) from None
    return _image_bytes(answer, options.timeout)


def _status_problem(exc: Any) -> Exception:
    code = getattr(exc, "code", None)
    body: dict[str, Any] = exc.body if isinstance(exc.body, dict) else {}
    nested = body.get("error")
    error: dict[str, Any] = nested if isinstance(nested, dict) else body
    message = one_line(str(error.get("message") or getattr(exc, "message", "") or exc))
    if exc.status_code == 400 and code in REFUSAL_CODES:
        return Refusal(f"{code}: {message}")
    return status_error(exc.status_code, message, dict(exc.response.headers))


def _image_bytes(answer: Any, timeout: float) -> bytes:
    items = getattr(answer, "data", None)
    if not isinstance(items, list) or not items:
        raise ApiError("no image in the answer (data is empty)", retryable=True)
    item = items[0]
    if getattr(item, "b64_json", None):
        try:
            return base64.b64decode(item.b64_json, validate=True)
        except ValueError:
            raise ApiError("b64_json is not base64", retryable=True) from None
    if getattr(item, "url", None):
        return download(item.url, timeout)
    raise ApiError("no image in the answer (neither b64_json nor url)", retryable=True)


add_provider(
    Provider(
        name="openai",
        options=OpenAIOptions,
        key_env=("OPENAI_API_KEY",),
        connect=connect,
        request=request,
        summary="OpenAI Images API (gpt-image-1, gpt-image-1-mini, dall-e-3...).",
        default_base_url="https://api.openai.com/v1",
        seed_honoured=lambda model, options: False,
        seed_note="the OpenAI Images API takes no seed: each image is an independent sample",
        requires=("openai",),
    )
)
