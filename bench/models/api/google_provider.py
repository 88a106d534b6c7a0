"""``api:google/<model>``: Gemini image models and Imagen through the official ``google-genai``.

* Gemini image models (``gemini-2.5-flash-image``, ``gemini-3-pro-image-preview``...):
  ``POST {base_url}/v1beta/models/<model>:generateContent`` with
  ``generationConfig.responseModalities=["IMAGE"]`` and ``seed``; the image is the
  first ``inlineData`` part of the first candidate. A refusal is a
  ``promptFeedback.blockReason``, or no image with a safety ``finishReason``
  (``SAFETY``, ``IMAGE_SAFETY``, ``PROHIBITED_CONTENT``...).
* Imagen (``imagen-4.0-generate-001``...): ``:predict`` with ``sampleCount=1`` and
  ``seed`` (the client sends it through Vertex AI, ``vertexai`` on, express mode
  with an API key). A refusal is a prediction with ``raiFilteredReason`` or no
  prediction at all. Imagen ignores the seed while it adds a watermark, so
  ``add_watermark`` defaults to off here.

The key is sent as ``x-goog-api-key`` by the client. Its own retries are off.
"""

from __future__ import annotations

import warnings
from typing import Any

from pydantic import Field

from glyphbench.models.api.core import JsonOptions, Provider, Session, add_provider
from glyphbench.models.api.http_provider import capped_transport, too_large
from glyphbench.models.api.transport import ApiError, Refusal, one_line, status_error

#: finishReason values that mean the image was withheld by a safety filter.
SAFETY_FINISH = frozenset(
    {
        "SAFETY",
        "IMAGE_SAFETY",
        "PROHIBITED_CONTENT",
        "IMAGE_PROHIBITED_CONTENT",
        "BLOCKLIST",
        "SPII",
        "RECITATION",
        "IMAGE_RECITATION",
    }
)


class GoogleOptions(JsonOptions):
    aspect_ratio: str | None = Field(default=None, description="e.g. 1:1, 16:9")
    image_size: str | None = Field(default=None, description="1K | 2K | 4K (models that take it)")
    response_modalities: list[str] = Field(
        default_factory=lambda: ["IMAGE"], description="Gemini: what the answer may hold"
    )
    add_watermark: bool = Field(
        default=False, description="Imagen: SynthID watermark (when on, the seed is ignored)"
    )
    safety_filter_level: str | None = Field(
        default=None, description="Imagen: e.g. BLOCK_ONLY_HIGH"
    )
    person_generation: str | None = Field(default=None, description="Imagen: e.g. ALLOW_ADULT")
    vertexai: bool | None = Field(
        default=None, description="use Vertex AI (default: for imagen-* models only)"
    )
    api_version: str | None = Field(default=None, description="e.g. v1beta (client default)")


def is_imagen(model: str) -> bool:
    return model.startswith("imagen")


def connect(options: GoogleOptions, key: str) -> Any:
    return _GoogleClient(options, key)


class _GoogleClient:
    """One genai.Client per mode (Gemini API, Vertex AI), made on first use."""

    def __init__(self, options: GoogleOptions, key: str) -> None:
        self.options = options
        self.key = key
        self.clients: dict[bool, Any] = {}
        self.transports: list[Any] = []  # our httpx clients: the SDK does not close them

    def get(self, vertexai: bool) -> Any:
        if vertexai not in self.clients:
            import httpx
            from google import genai
            from google.genai import types

            http = types.HttpOptions(
                base_url=self.options.base_url,
                api_version=self.options.api_version,
                timeout=int(self.options.timeout * 1000),
                retry_options=types.HttpRetryOptions(attempts=1),
                # Our own httpx client: no redirects (httpx would carry the x-goog-api-key
                # header to another host), and answers stop at MAX_ANSWER_BYTES (the client
                # reads a body whole). Its own choice of library (httpx or httpx2) varies.
                httpx_client=self._own(
                    httpx.Client(
                        timeout=self.options.timeout,
                        follow_redirects=False,
                        transport=capped_transport(httpx),
                    )
                ),
            )
            self.clients[vertexai] = genai.Client(
                api_key=self.key, vertexai=vertexai, http_options=http
            )
        return self.clients[vertexai]

    def _own(self, client: Any) -> Any:
        self.transports.append(client)
        return client

    def close(self) -> None:
        for client in self.clients.values():
            client.close()
        for http in self.transports:
            http.close()


def request(session: Session, prompt: str, seed: int) -> bytes:
    options: GoogleOptions = session.options
    vertexai = options.vertexai if options.vertexai is not None else is_imagen(session.model)
    client = session.client.get(vertexai)
    try:
        if is_imagen(session.model):
            return _imagen(client, session.model, prompt, seed, options)
        return _gemini(client, session.model, prompt, seed, options)
    except (ApiError, Refusal):
        raise
    except Exception as exc:
        raise _problem(exc) from None


def _gemini(client: Any, model: str, prompt: str, seed: int, options: GoogleOptions) -> bytes:
    from google.genai import types

    image_config = None
    if options.aspect_ratio or options.image_size:
        image_config = types.ImageConfig(
            aspect_ratio=options.aspect_ratio, image_size=options.image_size
        )
    config = types.GenerateContentConfig(
        response_modalities=options.response_modalities, seed=seed, image_config=image_config
    )
    answer = client.models.generate_content(model=model, contents=prompt, config=config)
    feedback = getattr(answer, "prompt_feedback", None)
    if feedback is not None and getattr(feedback, "block_reason", None):
        raise Refusal(f"prompt blocked: {_name(feedback.block_reason)}")
    candidates = getattr(answer, "candidates", None) or []
    if not candidates:
        raise ApiError("no candidate in the answer", retryable=True)
    candidate = candidates[0]
    parts = getattr(getattr(candidate, "content", None), "parts", None) or []
    for part in parts:
        inline = getattr(part, "inline_data", None)
        if inline is not None and inline.data:
            data: bytes = inline.data
            return data
    finish = _name(getattr(candidate, "finish_reason", None))
    if finish in SAFETY_FINISH:
        raise Refusal(f"image withheld: finishReason {finish}")
    text = " ".join(str(getattr(part, "text", "") or "") for part in parts)
    raise ApiError(f"no image in the answer (finishReason {finish}): {one_line(text, 150)}")


def _imagen(client: Any, model: str, prompt: str, seed: int, options: GoogleOptions) -> bytes:
    from google.genai import types

    config = types.GenerateImagesConfig(
        number_of_images=1,
        seed=None if options.add_watermark else seed,
        add_watermark=options.add_watermark,
        aspect_ratio=options.aspect_ratio,
        image_size=options.image_size,
        include_rai_reason=True,
        safety_filter_level=_enum(types.SafetyFilterLevel, options.safety_filter_level),
        person_generation=_enum(types.PersonGeneration, options.person_generation),
    )
    with warnings.catch_warnings():  # the client marks Imagen deprecated (still served)
        warnings.simplefilter("ignore")
        answer = client.models.generate_images(model=model, prompt=prompt, config=config)
    images = getattr(answer, "generated_images", None) or []
    if not images:
        raise Refusal("no image returned (filtered)")
    first = images[0]
    image = getattr(first, "image", None)
    if image is not None and image.image_bytes:
        data: bytes = image.image_bytes
        return data
    reason = getattr(first, "rai_filtered_reason", None)
    raise Refusal(f"filtered: {one_line(str(reason), 200)}" if reason else "filtered")


def _problem(exc: Exception) -> Exception:
    """The client's exception as an ApiError (retryable or not) or a Refusal."""
    from google.genai import errors

    cap = too_large(exc)  # the client may wrap what its transport raised
    if cap is not None:
        return cap
    if isinstance(exc, errors.APIError):
        message = one_line(str(exc.message or exc), 300)
        if exc.code == 400 and any(w in message.lower() for w in ("safety", "responsible ai")):
            return Refusal(message)
        response = getattr(exc, "response", None)
        headers = dict(getattr(response, "headers", {}) or {})
        return status_error(int(exc.code or 0), message, headers)
    name = type(exc).__name__
    if "Timeout" in name:
        return ApiError("timed out", retryable=True)
    if isinstance(exc, (ValueError, ConnectionError)) or "Connect" in name or "JSON" in name:
        return ApiError(f"{name}: {one_line(str(exc), 200)}", retryable=True)
    return exc


def _enum(kind: Any, value: str | None) -> Any:
    """The client's enum member for ``value`` (None stays None; a bad name is an error)."""
    return None if value is None else kind(value)


def _name(value: Any) -> str:
    return str(getattr(value, "name", value) or "")


add_provider(
    Provider(
        name="google",
        options=GoogleOptions,
        key_env=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        connect=connect,
        request=request,
        summary="Google Gemini image models (generateContent) and Imagen (predict, Vertex AI).",
        default_base_url="https://generativelanguage.googleapis.com",
        seed_honoured=lambda model, options: not (is_imagen(model) and options.add_watermark),
        seed_note="Imagen ignores the seed while add_watermark is on",
        requires=("google.genai",),
    )
)
