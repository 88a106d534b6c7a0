"""What every hosted-API call shares: errors, retries with backoff, Retry-After, redaction.

A provider's request either returns image bytes, raises :class:`Refusal` (the
provider's content policy said no: a result, not a failure) or raises
:class:`ApiError` (``retryable`` for 408/409/425/429/5xx, timeouts, dropped
connections and malformed answers). :func:`call_with_retries` retries the
retryable ones with exponential backoff and jitter, waiting what a ``Retry-After``
header asks instead when there is one.

Keys never leave through an error: :class:`Redactor` replaces every secret in a
message, and the adapter passes every message it records through it.

>>> policy = RetryPolicy(retries=3, backoff=1.0, max_backoff=3.0)
>>> [policy.ceiling(attempt) for attempt in range(4)]
[1.0, 2.0, 3.0, 3.0]
>>> policy.delay(0, retry_after=7.0, rng=random.Random(0))
7.0
>>> parse_retry_after({"Retry-After": "2"}), parse_retry_after({"retry-after-ms": "250"})
(2.0, 0.25)
>>> Redactor(["sk-secret-123"]).redact("bad key sk-secret-123 given")
'bad key *** given'
"""

from __future__ import annotations

import email.utils
import random
import re
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

#: HTTP statuses worth another attempt: timeouts, conflicts, rate limits, server errors.
RETRYABLE_STATUS = frozenset({408, 409, 425, 429})


class ApiError(Exception):
    """A request that failed; ``retryable`` when another attempt may succeed."""

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retryable = retryable
        self.retry_after = retry_after


class Refusal(Exception):
    """The provider refused the prompt or withheld the image (content policy)."""


def is_retryable_status(status: int) -> bool:
    """True for statuses worth another attempt.

    >>> [is_retryable_status(s) for s in (400, 401, 429, 500, 503)]
    [False, False, True, True, True]
    """
    return status in RETRYABLE_STATUS or status >= 500


def status_error(status: int, message: str, headers: Mapping[str, str] | None = None) -> ApiError:
    """The :class:`ApiError` for an HTTP error answer (retryable or not, with Retry-After)."""
    text = " ".join(message.split())[:300]
    return ApiError(
        f"HTTP {status}: {text}" if text else f"HTTP {status}",
        status=status,
        retryable=is_retryable_status(status),
        retry_after=parse_retry_after(headers or {}),
    )


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds a ``Retry-After`` (seconds or HTTP date) or ``retry-after-ms`` header asks for."""
    lowered = {str(name).lower(): str(value) for name, value in headers.items()}
    if "retry-after-ms" in lowered:
        try:
            return max(0.0, float(lowered["retry-after-ms"]) / 1000)
        except ValueError:
            pass
    value = lowered.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how long to wait: ``backoff * 2**attempt`` capped, with jitter."""

    retries: int = 4
    backoff: float = 1.0
    max_backoff: float = 60.0
    max_retry_after: float = 300.0  # a longer Retry-After is cut to this

    def ceiling(self, attempt: int) -> float:
        return float(min(self.max_backoff, self.backoff * 2.0**attempt))

    def delay(self, attempt: int, retry_after: float | None, rng: random.Random) -> float:
        """Seconds before attempt ``attempt + 1``: Retry-After when given, else jittered backoff."""
        if retry_after is not None:
            return min(retry_after, self.max_retry_after)
        # "Equal jitter": at least half the ceiling, so a burst of 429s still spreads out.
        ceiling = self.ceiling(attempt)
        return ceiling / 2 + rng.random() * ceiling / 2


def call_with_retries(
    call: Callable[[], T],
    policy: RetryPolicy,
    *,
    sleep: Callable[[float], None] = time.sleep,
    rng: random.Random | None = None,
    on_retry: Callable[[ApiError, float], None] | None = None,
) -> T:
    """``call()``, retried while it raises a retryable :class:`ApiError` (at most ``retries`` more).

    >>> answers = iter([ApiError("busy", retryable=True, retry_after=0.0), "ok"])
    >>> def flaky():
    ...     answer = next(answers)
    ...     if isinstance(answer, Exception):
    ...         raise answer
    ...     return answer
    >>> call_with_retries(flaky, RetryPolicy(retries=1), sleep=lambda s: None)
    'ok'
    """
    rng = rng or random.Random()
    for attempt in range(policy.retries + 1):
        try:
            return call()
        except ApiError as exc:
            if not exc.retryable or attempt == policy.retries:
                raise
            wait = policy.delay(attempt, exc.retry_after, rng)
            if on_retry is not None:
                on_retry(exc, wait)
            sleep(wait)
    raise AssertionError("unreachable: the last attempt returns or raises")


class Redactor:
    """Replaces each secret (keys read from the environment) with ``***`` in a text."""

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        # Longest first, so a secret containing another is replaced whole.
        self.secrets = sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        return text


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line, runs of white space made one space, cut to ``limit``.

    >>> one_line("a\\n  b   c")
    'a b c'
    """
    return re.sub(r"\s+", " ", text).strip()[:limit]
