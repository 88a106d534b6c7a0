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
    text = one_line(message, 300)
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
    stopped: Callable[[], bool] = lambda: False,
) -> T:
    """``call()``, retried while it raises a retryable :class:`ApiError` (at most ``retries`` more).

    Once ``stopped()`` is true (the run got Ctrl-C or SIGTERM) no retry is sent: each one
    may be billed, and a scheduler's SIGKILL follows its SIGTERM within minutes.

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
            if stopped():
                raise _not_retried(exc) from None
            wait = policy.delay(attempt, exc.retry_after, rng)
            if on_retry is not None:
                on_retry(exc, wait)
            sleep(wait)
            if stopped():  # the stop came while waiting (the wait ends at once then)
                raise _not_retried(exc) from None
    raise AssertionError("unreachable: the last attempt returns or raises")


def _not_retried(exc: ApiError) -> ApiError:
    return ApiError(f"{exc} (not retried: the run is stopping)", status=exc.status)


#: A run of this many characters of a secret (in any encoding) is redacted wherever it appears.
FRAGMENT = 8

#: One unit of an encoded secret in a message: a JSON/Python escape, a URL escape, an HTML
#: entity, or one plain character (delimiters are added to the class unless a secret uses them).
_ESCAPES = (
    r"\\u[0-9a-fA-F]{4}|\\x[0-9a-fA-F]{2}|\\/|%[0-9a-fA-F]{2}"
    r"|&#[0-9]{1,7};|&#[xX][0-9a-fA-F]{1,6};|&[A-Za-z]{2,8};"
)
_DELIMITERS = "\"'<>,;(){}[]`|"


def _unescape(token: str) -> str:
    """``token`` with JSON ``\\uXXXX``/``\\/``, ``\\xXX``, URL and HTML escapes decoded."""
    import html
    from urllib.parse import unquote

    text = re.sub(r"\\u([0-9a-fA-F]{4})", lambda m: chr(int(m[1], 16)), token)
    text = re.sub(r"\\x([0-9a-fA-F]{2})", lambda m: chr(int(m[1], 16)), text)
    text = text.replace("\\/", "/")
    return html.unescape(unquote(text, errors="replace"))


def _base64_cores(secret: bytes) -> set[str]:
    """What base64 of any text holding ``secret`` must contain (3 alignments, 2 alphabets)."""
    import base64

    cores = set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + secret).decode()
        core = encoded[4 if offset else 0 : -4]  # drop the blocks the neighbours change
        cores |= {core, core.replace("+", "-").replace("/", "_")}
    return {core for core in cores if core}


class Redactor:
    """Replaces each secret (keys read from the environment) with ``***`` in a text.

    Not only the exact text: any :data:`FRAGMENT` characters of a secret, plain or
    JSON-escaped (``\\/``, ``\\u002b``), URL-encoded, HTML-escaped, in hex or inside
    base64 (of the secret or of a header value holding it, such as ``Bearer KEY``),
    in any letter case. The whole word holding such a fragment becomes ``***``.
    However a message splits a secret (groups of 7 characters between spaces, one
    character a line, dashes or dots between the pieces), its letters and digits in a
    row still spell :data:`FRAGMENT` of the secret's: every word they span becomes
    ``***``. Keys of the well-known formats (:data:`KEY_PATTERNS`) are redacted too,
    whether or not this process was given them.

    >>> r = Redactor(["sk-ab/cd+ef-0123456789"])
    >>> r.redact('{"error": "bad key sk-ab\\\\/cd\\\\u002bef-0123456789."}')
    '{"error": "bad key ***"}'
    >>> r.redact("key=sk-ab%2Fcd%2Bef-01 and U2stYWIvY2QrZWYtMDEyMzQ1Njc4OQ==")
    '*** and ***'
    >>> r.redact("your key: sk-ab/cd +ef-012 3456789. Try again")
    'your key: *** Try again'
    """

    def __init__(self, secrets: Iterable[str] = ()) -> None:
        # Longest first, so a secret containing another is replaced whole.
        self.secrets = sorted({s for s in secrets if len(s) >= 4}, key=len, reverse=True)
        self.grams: set[str] = set()  # lower-cased fragments of each secret's decoded text
        self.encoded: set[str] = set()  # lower-cased fragments of its base64 and hex forms
        for secret in self.secrets:
            self.grams |= _fragments(secret.lower(), FRAGMENT)
            raw = secret.encode()
            for core in (*_base64_cores(raw), raw.hex()):
                self.encoded |= _fragments(core.lower(), FRAGMENT + FRAGMENT // 3)
        used = "".join(self.secrets)
        self.delimiters = "".join(c for c in _DELIMITERS if c not in used)
        self.token = re.compile(f"(?:{_ESCAPES}|[^\\s{re.escape(self.delimiters)}])+")
        # Letters and digits only, in lower case: what a secret still spells when a
        # message puts spaces, dashes or line breaks between its pieces.
        self.spelled: set[str] = set()
        for secret in self.secrets:
            for form in (secret, *_base64_cores(secret.encode()), secret.encode().hex()):
                letters = _letters(form)
                if len(letters) >= FRAGMENT:
                    self.spelled |= _fragments(letters, FRAGMENT)

    def redact(self, text: str) -> str:
        for secret in self.secrets:
            text = text.replace(secret, "***")
        text = _KEY_FORMATS.sub("***", text)
        if not self.secrets:
            return text
        return self.token.sub(self._word, self._spanning(text))

    def _spanning(self, text: str) -> str:
        """``text`` with every run of words that together spell a fragment made ``***``."""
        if not self.spelled:
            return text
        spelled: list[str] = []  # the letters and digits, escapes decoded, in lower case
        origin: list[tuple[int, int]] = []  # where in ``text`` each one was written
        for unit in _UNIT.finditer(text):
            for char in _letters(_unescape(unit[0]) if len(unit[0]) > 1 else unit[0]):
                spelled.append(char)
                origin.append(unit.span())
        letters = "".join(spelled)
        spans = [
            (origin[i][0], origin[i + FRAGMENT - 1][1])
            for i in range(len(letters) - FRAGMENT + 1)
            if letters[i : i + FRAGMENT] in self.spelled
        ]
        for start, end in reversed(_whole_words(text, spans, self.delimiters)):
            text = text[:start] + "***" + text[end:]
        return text

    def _word(self, match: re.Match[str]) -> str:
        word = match[0]
        if len(word) < FRAGMENT or word == "***":
            return word
        lowered = word.lower()
        if _holds(lowered.replace("\\", ""), self.encoded):
            return "***"
        for _ in range(3):  # escapes of escapes: JSON in JSON, %252B
            decoded = _unescape(word)
            if _holds(decoded.lower().replace("\\", ""), self.grams):
                return "***"
            if decoded == word:
                break
            word = decoded
        return match[0]


#: One written unit of a message for :meth:`Redactor._spanning`: an escape or a character.
_UNIT = re.compile(f"{_ESCAPES}|.", re.DOTALL)

#: Keys of well-known formats, redacted wherever they appear: OpenAI and Anthropic
#: (``sk-``), Google (``AIza``), Hugging Face (``hf_``), Replicate (``r8_``), xAI, Groq,
#: GitHub, AWS access key ids, and any ``Bearer`` token.
KEY_PATTERNS = (
    r"\bsk-[A-Za-z0-9_-]{20,}",
    r"\bAIza[0-9A-Za-z_-]{35}",
    r"\bhf_[A-Za-z0-9]{30,}",
    r"\br8_[A-Za-z0-9]{30,}",
    r"\bxai-[A-Za-z0-9]{20,}",
    r"\bgsk_[A-Za-z0-9]{20,}",
    r"\bgh[pousr]_[A-Za-z0-9]{30,}",
    r"\bAKIA[0-9A-Z]{16}\b",
    r"(?<=[Bb]earer )[A-Za-z0-9._~+/-]{16,}=*",
)
_KEY_FORMATS = re.compile("|".join(KEY_PATTERNS))


def _letters(text: str) -> str:
    """The ASCII letters and digits of ``text``, in lower case."""
    return "".join(c for c in text.lower() if c.isascii() and c.isalnum())


def _whole_words(text: str, spans: list[tuple[int, int]], delimiters: str) -> list[tuple[int, int]]:
    """``spans`` of ``text`` widened to whole words (white space or a delimiter ends one),
    merged."""

    def inside(char: str) -> bool:
        return not char.isspace() and char not in delimiters

    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        while start > 0 and inside(text[start - 1]):
            start -= 1
        while end < len(text) and inside(text[end]):
            end += 1
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(end, merged[-1][1]))
        else:
            merged.append((start, end))
    return merged


def _fragments(text: str, size: int) -> set[str]:
    size = min(size, len(text))
    return {text[i : i + size] for i in range(len(text) - size + 1)}


def _holds(text: str, fragments: set[str]) -> bool:
    sizes = {len(f) for f in fragments}
    return any(text[i : i + n] in fragments for n in sizes for i in range(len(text) - n + 1))


#: Every secret any model of this process has loaded: :func:`one_line` and
#: :func:`status_error` redact with it before they cut a message, so a cut never
#: keeps the start of a key that the whole text would have shown.
KNOWN = Redactor()


def remember_secrets(secrets: Iterable[str]) -> None:
    """Add ``secrets`` to :data:`KNOWN` (a model calls this when it reads its key)."""
    global KNOWN
    KNOWN = Redactor([*KNOWN.secrets, *secrets])


def one_line(text: str, limit: int = 300) -> str:
    """``text`` on one line, runs of white space made one space, known secrets
    redacted (:data:`KNOWN`), then cut to ``limit``.

    >>> one_line("a\\n  b   c")
    'a b c'
    """
    return re.sub(r"\s+", " ", KNOWN.redact(text)).strip()[:limit]
