"""The ``api`` model: one adapter for every hosted image API, a small record per provider.

``api:<provider>/<model>`` (``api:openai/gpt-image-1``, ``api:bfl/flux-pro-1.1``,
``api:google/gemini-2.5-flash-image``) or ``api:http`` (a JSON mapping in options).
The adapter does what every provider needs; a :class:`Provider` record says only
how to build its client and make one request:

* **keys** come from environment variables only (``key_env`` overrides the
  provider's default names) and are redacted from every message the adapter keeps;
* **concurrency**: a batch's requests run in at most ``concurrency`` threads;
* **retries**: 408/409/425/429/5xx, timeouts and malformed answers are retried
  ``retries`` times with exponential backoff and jitter, or after what
  ``Retry-After`` asks (:mod:`glyphbench.models.api.transport`);
* **cache**: each answer (image or refusal) is stored as soon as it arrives,
  keyed by (provider, model, prompt, seed, image options): a re-run never pays
  twice (:mod:`glyphbench.models.api.cache`);
* **spending cap**: each paid request first reserves its price from the run's
  purse; past the cap the rest are :class:`~glyphbench.models.base.NotAttempted`
  (no row; a re-run with a higher cap makes them);
* **refusals** become ``Refused: <provider>: <reason>`` rows, never a zero score.

Adding a provider: one module ``bench/models/api/<name>_provider.py`` that calls
:func:`add_provider` with its options class and two functions. Providers are records
of the one plug-in registry (:mod:`glyphbench.core.registry`, kind ``providers``), which
imports every module of this package when a provider is first looked up; a name
another module registered already is a :class:`~glyphbench.core.registry.DuplicateName`
error naming both (``replace=True`` overrides on purpose).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import sys
import threading
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import Field, field_validator

from glyphbench.core.errors import InputError
from glyphbench.core.registry import PLUGINS, Options, Spec, missing_modules
from glyphbench.models.api.cache import CacheEntry, ResponseCache, cache_key
from glyphbench.models.api.transport import (
    ApiError,
    Redactor,
    Refusal,
    RetryPolicy,
    call_with_retries,
    one_line,
    remember_secrets,
)
from glyphbench.models.base import (
    COST_KEY,
    ImageNotMade,
    ImageRequest,
    ModelAdapter,
    NotAttempted,
    RunContext,
)
from glyphbench.models.spend import InFlightLedger

if TYPE_CHECKING:
    from PIL import Image

    from glyphbench.models.api.cache import ResponseCache
    from glyphbench.models.spend import InFlightLedger

NAN = float("nan")


class ApiOptions(Options):
    """Options every hosted API takes (transport: they never change the image)."""

    base_url: str | None = Field(
        default=None, description="the API's address (default: the provider's own)"
    )
    key_env: str | None = Field(
        default=None, description="environment variable holding the key (default per provider)"
    )
    timeout: float = Field(default=120.0, gt=0, description="seconds one HTTP request may take")
    retries: int = Field(default=4, ge=0, le=20, description="further attempts after a failure")
    backoff: float = Field(default=1.0, ge=0, description="first retry wait in seconds (doubles)")
    max_backoff: float = Field(default=60.0, ge=0, description="longest wait between attempts")
    concurrency: int = Field(default=4, ge=1, le=64, description="requests in flight at once")
    device: str | None = Field(default=None, description="ignored: the model runs remotely")

    #: Options that do not change the image: left out of the cache key and of describe()'s
    #: request options (a provider adds its own, e.g. polling intervals).
    TRANSPORT: ClassVar[frozenset[str]] = frozenset(
        {"base_url", "key_env", "timeout", "retries", "backoff", "max_backoff", "concurrency"}
        | {"device"}
    )

    def request_options(self) -> dict[str, Any]:
        """The options that shape the image (the cache key's ``options``)."""
        data = self.model_dump(mode="json")
        return {k: v for k, v in data.items() if k not in self.TRANSPORT and v is not None}

    def policy(self) -> RetryPolicy:
        return RetryPolicy(self.retries, self.backoff, self.max_backoff)


def json_mapping(value: Any) -> Any:
    """Field validator helper: YAML mappings reach options as JSON text; parse it back."""
    if isinstance(value, str) and value.strip().startswith(("{", "[")):
        try:
            return json.loads(value)
        except ValueError as exc:
            raise ValueError(f"not valid JSON: {exc}") from None
    return value


class JsonOptions(ApiOptions):
    """Base for options with mapping/list fields: JSON text is parsed before validation."""

    @field_validator("*", mode="before")
    @classmethod
    def _json_text(cls, value: Any) -> Any:
        return json_mapping(value)


@dataclass
class Session:
    """One model's live connection, handed to a provider's ``request`` function."""

    client: Any
    model: str
    options: Any  # the provider's ApiOptions subclass
    policy: RetryPolicy
    sleep: Callable[[float], None]
    counts: Counter[str]
    lock: threading.Lock = field(default_factory=threading.Lock)
    #: True once the run is stopping (Ctrl-C, SIGTERM): no retry, no further poll.
    stopped: Callable[[], bool] = lambda: False

    def count(self, name: str, n: int = 1) -> None:
        with self.lock:
            self.counts[name] += n

    def retry(self, call: Callable[[], Any]) -> Any:
        """Retry ``call`` (a step after the paid request: a poll, a download) on its own.

        Its last failure is final, so the paid request is never sent again for it.
        """
        try:
            return call_with_retries(
                call,
                self.policy,
                sleep=self.sleep,
                on_retry=lambda exc, wait: self.count("retries"),
                stopped=self.stopped,
            )
        except ApiError as exc:
            raise ApiError(str(exc), status=exc.status, retryable=False) from None


@dataclass(frozen=True)
class Provider:
    """One hosted API: how to connect (``connect``) and make one image (``request``).

    ``connect(options, key)`` returns the client (the official one where there is
    one); ``request(session, prompt, seed)`` returns the image file's bytes, raises
    :class:`~glyphbench.models.api.transport.Refusal` or
    :class:`~glyphbench.models.api.transport.ApiError`. ``seed_honoured(model, options)``
    says whether the image's seed reaches the provider.
    """

    name: str
    options: type[ApiOptions]
    key_env: tuple[str, ...]
    connect: Callable[[Any, str], Any]
    request: Callable[[Session, str, int], bytes]
    summary: str
    default_base_url: str
    seed_honoured: Callable[[str, Any], bool]
    seed_note: str = ""
    requires: tuple[str, ...] = ()
    model_required: bool = True
    #: Every variable the options name, all required (``api:http``'s ``{env:NAME}``);
    #: None: the first set variable of ``key_env`` (or the ``key_env`` option) is the key.
    env_names: Callable[[Any], list[str]] | None = None

    def unavailable(self) -> str | None:
        problem = missing_modules(*self.requires)
        return f"{problem}: pip install 'glyphbench[api]'" if problem else None


#: Provider name -> record (live: the registry's ``providers`` kind).
PROVIDERS = PLUGINS.records("providers", Provider)


def add_provider(provider: Provider, *, replace: bool = False) -> Provider:
    """Register a provider (its module calls this at import time).

    A taken name is a :class:`~glyphbench.core.registry.DuplicateName` error naming both
    modules, unless ``replace=True``.
    """
    module = str(sys._getframe(1).f_globals.get("__name__", ""))
    return PLUGINS.add_record(
        "providers",
        provider.name,
        provider,
        summary=provider.summary,
        module=module,
        replace=replace,
    )


def split_target(target: str) -> tuple[Provider, str]:
    """``openai/gpt-image-1`` -> (the openai provider, ``gpt-image-1``); InputError when unknown."""
    name, _, model = target.partition("/")
    provider = PROVIDERS.get(name)
    if provider is None:
        known = ", ".join(sorted(PROVIDERS)) or "none"
        raise InputError(None, f"unknown api provider {name!r} in 'api:{target}'; known: {known}")
    if provider.model_required and not model:
        raise InputError(None, f"api:{target} names no model, e.g. api:{name}/<model>")
    return provider, model


class ApiModel(ModelAdapter):
    """A hosted text-to-image API as a glyphbench model (see the module docstring)."""

    billable = True

    def __init__(self, spec: Spec, provider: Provider, options: ApiOptions) -> None:
        self.spec = spec.text
        self.provider = provider
        self.model = split_target(spec.target)[1] or provider.name
        self.options = options
        self.context: RunContext | None = None
        self.counts: Counter[str] = Counter()
        #: Set when the call to :meth:`generate` is interrupted: retries and polls stop,
        #: and every wait (a Retry-After of minutes) ends at once.
        self._stop = threading.Event()
        self.sleep: Callable[[float], None] = self._pause
        self._session: Session | None = None
        self._cache: ResponseCache | None = None
        self._ledger: InFlightLedger | None = None
        self._redactor = Redactor()

    # ------------------------------------------------------------------ setup
    def bind_run(self, context: RunContext) -> None:
        self.context = context

    def key_names(self) -> tuple[str, ...]:
        """The environment variables the key may come from (names only, never values)."""
        if self.provider.env_names is not None:
            return tuple(self.provider.env_names(self.options))
        return (self.options.key_env,) if self.options.key_env else self.provider.key_env

    def _secrets(self) -> dict[str, str]:
        """Environment name -> value of every secret this model sends (InputError if unset)."""
        names = self.key_names()
        if self.provider.env_names is not None:
            return read_env(names, self.spec)
        for name in names:
            if os.environ.get(name):
                return {name: os.environ[name]}
        raise InputError(None, f"{self.spec}: set the API key in ${' or $'.join(names)}")

    def load(self) -> None:
        """Read the key and build the client (no request is made)."""
        if self._session is not None:
            return
        problem = self.provider.unavailable()
        if problem:
            raise RuntimeError(f"api:{self.provider.name} needs {problem}")
        secrets = self._secrets()
        self._redactor = Redactor(secrets.values())
        remember_secrets(secrets.values())
        key = next(iter(secrets.values()), "")
        client = self.provider.connect(self.options, key)
        self._session = Session(
            client,
            self.model,
            self.options,
            self.options.policy(),
            self.sleep,
            self.counts,
            stopped=self._stop.is_set,
        )
        if self.context is not None and self.context.cache_dir is not None:
            self._cache = ResponseCache(self.context.cache_dir)
            budget = self.context.budget
            if budget is not None:
                # Requests an earlier attempt of this run sent and never heard back from
                # (killed mid-request) may have been billed: the cap counts them.
                self._ledger = InFlightLedger(self.context.cache_dir, f"{self.payer()}|{self.spec}")
                budget.add(self._ledger.lost_usd())

    # --------------------------------------------------------------- generate
    def generate(self, requests: Sequence[ImageRequest]) -> list[Any]:
        """One image (or :class:`ImageNotMade`) per request; requests run concurrently."""
        self.load()
        if not requests:
            return []
        workers = min(self.options.concurrency, len(requests))
        self._stop.clear()
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="glyphbench-api") as pool:
            try:
                return list(pool.map(self._one, requests))
            except BaseException:  # Ctrl-C or SIGTERM in the run: send nothing more
                self._stop.set()  # requests under way finish; their retries and waits do not
                pool.shutdown(wait=False, cancel_futures=True)  # queued ones never start
                raise

    def _pause(self, seconds: float) -> None:
        """Wait ``seconds`` (a backoff, a poll interval), or less if the run stops."""
        self._stop.wait(seconds)

    def _one(self, request: ImageRequest) -> Image.Image | ImageNotMade:

        key = cache_key(
            self.provider.name,
            self.model,
            request.prompt,
            request.seed,
            self.options.request_options(),
        )
        cached = self._cache.get(key) if self._cache is not None else None
        if cached is not None:
            return self._from_cache(cached)
        price = self.context.price_usd if self.context is not None else None
        budget = self.context.budget if self.context is not None else None
        if budget is not None and not budget.reserve(price or 0.0):
            self._count("not_attempted")
            return NotAttempted(budget.reason(), cost_usd=0.0)
        sent = self._ledger.sent(key, price or 0.0) if self._ledger is not None else None
        try:
            image, _answer = self._request(request)
        except BaseException as exc:
            if isinstance(exc, Exception) and self._ledger is not None and sent is not None:
                self._ledger.received(sent)  # an answer (or a failure) came back
            if budget is not None:
                budget.release(price or 0.0)
            return self._failure(exc, key, request)
        if self._ledger is not None and sent is not None:
            self._ledger.received(sent)
        if budget is not None:
            budget.commit(price or 0.0)
        cost = NAN if price is None else price
        self._store(key, request, "image", cost, data=pixels_only(image))
        image.info[COST_KEY] = cost
        return image

    def _request(self, request: ImageRequest) -> tuple[Image.Image, bytes]:
        """Send the request (with retries) and decode the image it returns."""
        session = self._session
        assert session is not None

        def attempt() -> tuple[Image.Image, bytes]:
            self._count("requests")
            data = self.provider.request(session, request.prompt, request.seed)
            return decode_image(data), data

        result: tuple[Image.Image, bytes] = call_with_retries(
            attempt,
            session.policy,
            sleep=self.sleep,
            on_retry=lambda exc, wait: self._count("retries"),
            stopped=self._stop.is_set,
        )
        return result

    def _failure(self, exc: BaseException, key: str, request: ImageRequest) -> ImageNotMade:
        if isinstance(exc, Refusal):
            reason = one_line(self._redactor.redact(str(exc))) or "refused"
            self._count("refusals")
            self._store(key, request, "refused", 0.0, reason=reason)
            return ImageNotMade(f"Refused: {self.provider.name}: {reason}", cost_usd=0.0)
        if not isinstance(exc, Exception):
            raise exc  # KeyboardInterrupt, SystemExit: stop the run
        self._count("errors")
        message = one_line(self._redactor.redact(str(exc)))
        kind = "ApiError" if isinstance(exc, ApiError) else type(exc).__name__
        return ImageNotMade(f"Generate: {kind}: {message}".rstrip(": "), cost_usd=0.0)

    def _from_cache(self, entry: Any) -> Image.Image | ImageNotMade:
        self._count("cache_hits")
        # Paid by this run (a run killed before the row was written): it counts here;
        # paid by another run sharing the cache: this run paid nothing for it.
        same_run = bool(entry.paid_by) and entry.paid_by == self.payer()
        cost = entry.cost_usd if same_run else 0.0
        budget = self.context.budget if self.context is not None else None
        if budget is not None and same_run and cost == cost:
            budget.add(cost)
        if entry.outcome == "refused":
            self._count("refusals")
            return ImageNotMade(f"Refused: {self.provider.name}: {entry.reason}", cost_usd=0.0)
        image = decode_image(entry.data)
        image.info[COST_KEY] = cost
        return image

    def _store(
        self,
        key: str,
        request: ImageRequest,
        outcome: str,
        cost: float,
        *,
        data: bytes = b"",
        reason: str = "",
    ) -> None:
        if self._cache is None:
            return

        about = {
            "provider": self.provider.name,
            "model": self.model,
            "prompt": request.prompt,
            "seed": request.seed,
            "options": self.options.request_options(),
        }
        self._cache.put(key, CacheEntry(outcome, cost, self.payer(), reason, data), about)

    def payer(self) -> str:
        """Who pays here: the run id and its folder (two folders of one config are two runs)."""
        if self.context is None:
            return ""
        return f"{self.context.run_id}@{self.context.root.resolve()}"

    def _count(self, name: str) -> None:
        if self._session is not None:
            self._session.count(name)
        else:
            self.counts[name] += 1

    # --------------------------------------------------------------- describe
    def describe(self) -> dict[str, Any]:
        """What ran: provider, model, endpoint, key variable (never the key), seeds, counts."""
        options = self.options
        context = self.context
        info: dict[str, Any] = {
            "spec": self.spec,
            "is_control": False,
            "provider": self.provider.name,
            "model": self.model,
            "endpoint": options.base_url or self.provider.default_base_url,
            "key_env": list(self.key_names()),
            "seed_honoured": self.provider.seed_honoured(self.model, options),
            "request_options": options.request_options(),
            "concurrency": options.concurrency,
            "timeout_s": options.timeout,
            "retries": options.retries,
            "price_usd": context.price_usd if context is not None else None,
            "cache_dir": str(context.cache_dir) if context and context.cache_dir else None,
            "counts": dict(sorted(self.counts.items())),
        }
        if not info["seed_honoured"]:
            info["seed_note"] = self.provider.seed_note or "the provider takes no seed"
        return info

    def close(self) -> None:
        client = self._session.client if self._session is not None else None
        closer = getattr(client, "close", None)
        if callable(closer):
            with contextlib.suppress(Exception):  # closing is best effort
                closer()


def pixels_only(image: Image.Image) -> bytes:
    """``image``'s pixels as a PNG and nothing else: what the cache keeps of an answer.

    An answer's own file may carry metadata (a text chunk that echoes the request's key,
    its headers); the decoded pixels are all a resumed run reads back.
    """
    from PIL import Image

    bare = Image.frombytes(image.mode, image.size, image.tobytes())  # no info, no ICC profile
    buffer = io.BytesIO()
    bare.save(buffer, format="PNG", compress_level=1)  # fast: a cache, not an archive
    return buffer.getvalue()


def decode_image(data: bytes) -> Image.Image:
    """The RGB image in ``data`` (PNG, JPEG, WebP...); a retryable ApiError when unreadable."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            return image.convert("RGB")
    except (UnidentifiedImageError, OSError, ValueError) as exc:
        problem = f"the answer is not an image ({len(data)} bytes): {exc}"
        raise ApiError(problem, retryable=True) from None


def env_placeholders(text: str) -> list[str]:
    """Environment variable names in ``{env:NAME}`` placeholders.

    >>> env_placeholders("Bearer {env:MY_KEY} {env:OTHER}")
    ['MY_KEY', 'OTHER']
    """
    return re.findall(r"\{env:([A-Za-z_][A-Za-z0-9_]*)\}", text)


def read_env(names: Sequence[str], what: str) -> dict[str, str]:
    """``{name: value}`` for each variable; InputError naming the first unset one."""
    values = {}
    for name in names:
        value = os.environ.get(name)
        if not value:
            raise InputError(None, f"{what}: set ${name} (the key is read from the environment)")
        values[name] = value
    return values
