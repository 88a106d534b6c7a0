"""Hosted image APIs against a fake server on 127.0.0.1 that speaks each provider's format.

Each provider (openai, bfl, google Gemini and Imagen, the generic http mapping) is
driven through its official client where it has one: the right request, retries
on 429 (honouring Retry-After) and 500, timeouts, malformed JSON, slow answers,
refusals as their own outcome, the response cache, bounded concurrency, the
spending cap, and keys that never reach a message.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from glyphbench.core.errors import InputError
from glyphbench.core.registry import PLUGINS
from glyphbench.models import get_model
from glyphbench.models.api.transport import RetryPolicy, parse_retry_after
from glyphbench.models.base import COST_KEY, ImageNotMade, ImageRequest, NotAttempted, RunContext
from glyphbench.models.spend import SpendBudget
from tests.helpers.api_fake_server import FakeApi, image_png

pytest.importorskip("httpx")

KEY = "sk-test-4f1c9e7a-do-not-write-me"
FAST = "backoff=0.01&max_backoff=0.05&timeout=5"


def spec_for(provider: str, fake: FakeApi, extra: str = "") -> str:
    """A spec pointing ``provider`` at the fake server, with fast retries; ``extra``'s
    options replace those (a spec refuses an option given twice)."""
    fast = dict(part.split("=", 1) for part in FAST.split("&"))
    more = dict(part.split("=", 1) for part in extra.split("&") if part)
    tail = "&" + "&".join(f"{k}={v}" for k, v in {**fast, **more}.items())
    return {
        "openai": f"api:openai/gpt-image-1?base_url={fake.url}/openai/v1{tail}",
        "bfl": f"api:bfl/flux-pro-1.1?base_url={fake.url}/bfl&poll_interval=0.01{tail}",
        "gemini": f"api:google/gemini-2.5-flash-image?base_url={fake.url}/google{tail}",
        "imagen": f"api:google/imagen-4.0-generate-001?base_url={fake.url}/google{tail}",
        "http": (
            f"api:http/fake-gen?url={fake.url}/generic/generate"
            "&headers=%7B%22Authorization%22%3A%22Bearer%20%7Benv%3AGLYPH_FAKE_KEY%7D%22%7D"
            "&body=%7B%22prompt%22%3A%22%7Bprompt%7D%22%2C%22seed%22%3A%22%7Bseed%7D%22%7D"
            f"&image_field=output.image&refusal_status=%5B422%5D&refusal_match=content_policy"
            f"{tail}"
        ),
    }[provider]


PROVIDERS = ("openai", "bfl", "gemini", "imagen", "http")
NEEDS = {"openai": "openai", "gemini": "google.genai", "imagen": "google.genai"}


@pytest.fixture(autouse=True)
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "BFL_API_KEY", "GEMINI_API_KEY", "GLYPH_FAKE_KEY"):
        monkeypatch.setenv(name, KEY)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)


@pytest.fixture
def fake() -> Any:
    with FakeApi(KEY) as server:
        yield server


def needs(provider: str) -> None:
    if provider in NEEDS:
        pytest.importorskip(NEEDS[provider])


def requests(*markers: int, seed0: int = 100) -> list[ImageRequest]:
    return [ImageRequest(f"A sign that says 'W{m}' (#{m})", f"W{m}", seed0 + m) for m in markers]


def quiet(model: Any) -> list[float]:
    """Record the adapter's waits instead of sleeping them."""
    waits: list[float] = []
    model.sleep = waits.append
    return waits


def bound(model: Any, tmp_path: Path, *, price: float | None = 0.04, budget: Any = None) -> Any:
    model.bind_run(
        RunContext(tmp_path, "run-test", price_usd=price, budget=budget, cache_dir=tmp_path / "c")
    )
    return model


# --------------------------------------------------------------------------- formats
@pytest.mark.slow
@pytest.mark.parametrize("provider", PROVIDERS)
def test_each_provider_speaks_its_format(provider: str, fake: FakeApi, tmp_path: Path) -> None:
    needs(provider)
    model = bound(get_model(spec_for(provider, fake)), tmp_path)
    asked = requests(1, 2)
    images = model.generate(asked)
    for image, request in zip(images, asked, strict=True):
        expected = image_png(request.prompt, request.seed if provider != "openai" else -1)
        assert image.getpixel((0, 0)) == _pixel(expected)
        assert image.info[COST_KEY] == 0.04
    paid = fake.paid()
    assert sorted(entry["prompt"] for entry in paid) == sorted(r.prompt for r in asked)
    assert all(entry["auth_ok"] for entry in paid)
    honoured = model.describe()["seed_honoured"]
    assert honoured is (provider != "openai")
    seeds = sorted(entry["seed"] for entry in paid if entry["seed"] is not None)
    assert seeds == ([] if provider == "openai" else [101, 102])  # the image's own seed
    if provider == "openai":
        assert paid[0]["body"]["model"] == "gpt-image-1" and paid[0]["body"]["n"] == 1
        assert "seed_note" in model.describe()


def _pixel(png: bytes) -> tuple[int, ...]:
    import io

    from PIL import Image

    pixel = Image.open(io.BytesIO(png)).convert("RGB").getpixel((0, 0))
    assert isinstance(pixel, tuple)
    return pixel


def test_bfl_polls_until_ready_and_downloads_without_the_key(fake: FakeApi, tmp_path: Path) -> None:
    model = bound(get_model(spec_for("bfl", fake)), tmp_path)
    fake.plan("(#1)", ["pending:3"])
    fake.plan("(#2)", ["poll-500"])
    images = model.generate(requests(1, 2))
    assert all(not isinstance(image, Exception) for image in images)
    assert len(fake.paid()) == 2  # a failed poll never re-submits (it would pay twice)
    polls = [e for e in fake.log if e["kind"] == "poll"]
    assert len(polls) == 4 + 2 and all(e["key_ok"] for e in polls)
    downloads = [e for e in fake.log if e["kind"] == "download"]
    assert len(downloads) == 2 and not any(e["key_sent"] for e in downloads)


def test_bfl_sends_no_key_to_a_polling_url_of_another_origin(
    fake: FakeApi, tmp_path: Path
) -> None:
    """The key went to any host sharing the base's last two labels, whatever its scheme and
    port: here the same address on another port (docs/apis.md: no key to another host)."""
    with FakeApi(fake.key) as elsewhere:
        fake.polling_base = elsewhere.url
        model = bound(get_model(spec_for("bfl", fake, "retries=0")), tmp_path)
        [image] = model.generate(requests(1))
    assert isinstance(image, Exception)  # the other server knows no such task
    assert elsewhere.log and not any(entry.get("key_ok") for entry in elsewhere.log)
    assert all("x-key" not in json.dumps(entry).lower() for entry in elsewhere.log)


def test_an_interrupted_run_sends_no_retry_and_waits_out_no_retry_after(
    fake: FakeApi, tmp_path: Path
) -> None:
    """After SIGTERM a run waited out each Retry-After (20 s) and sent three more paid
    requests before it ended; now the first stop ends every wait and sends nothing more."""
    import signal
    import threading

    fake.retry_after = "20"
    fake.plan("(#1)", ["429"] * 5)
    model = bound(get_model(spec_for("http", fake, "retries=4")), tmp_path)

    def interrupt_when_the_first_request_is_answered() -> None:
        while not fake.paid():
            threading.Event().wait(0.01)
        threading.Event().wait(0.2)  # the adapter is in its Retry-After wait
        # A real signal (Ctrl-C), so the main thread's wait on the pool is interrupted.
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

    threading.Thread(target=interrupt_when_the_first_request_is_answered, daemon=True).start()
    with pytest.raises(KeyboardInterrupt):
        model.generate(requests(1))
    assert len(fake.paid()) == 1  # no retry was sent
    fake.plan("(#2)", ["ok"])  # the same model serves the resumed run as before
    [image] = model.generate(requests(2))
    assert not isinstance(image, Exception), image


def test_the_cache_keeps_no_key_an_answer_writes_into_its_image(
    fake: FakeApi, tmp_path: Path
) -> None:
    """The cache stored the answer's file as it came, with a text chunk echoing the key;
    it keeps the pixels alone, and a resumed run reads the same image back."""
    fake.image_note = "key={key}"
    model = bound(get_model(spec_for("http", fake)), tmp_path)
    [image] = model.generate(requests(1))
    assert not isinstance(image, Exception), image
    stored = [p.read_bytes() for p in (tmp_path / "c").rglob("*") if p.is_file()]
    assert stored and not any(KEY.encode() in data for data in stored)
    again = bound(get_model(spec_for("http", fake)), tmp_path)
    [cached] = again.generate(requests(1))
    assert len(fake.paid()) == 1 and again.counts["cache_hits"] == 1
    assert not isinstance(cached, Exception) and cached.tobytes() == image.tobytes()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_answer_larger_than_the_cap_is_not_read_and_not_retried(
    provider: str, fake: FakeApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Answer bodies were read whole: 400 MB of JSON took a run to 2 GB. The official
    clients (OpenAI, Google) read inside their own calls: their transport is capped."""
    from glyphbench.models.api import http_provider

    needs(provider)
    monkeypatch.setattr(http_provider, "MAX_ANSWER_BYTES", 50_000)
    fake.plan("(#1)", ["huge"])
    model = bound(get_model(spec_for(provider, fake)), tmp_path)
    [failed] = model.generate(requests(1))
    assert isinstance(failed, ImageNotMade) and "larger than" in failed.row_error
    assert len(fake.paid()) == 1


# --------------------------------------------------------------------------- retries
@pytest.mark.parametrize("provider", PROVIDERS)
def test_retries_429_500_malformed_json_then_succeeds(
    provider: str, fake: FakeApi, tmp_path: Path
) -> None:
    needs(provider)
    fake.retry_after = "3"
    model = bound(get_model(spec_for(provider, fake)), tmp_path)
    waits = quiet(model)
    fake.plan("(#1)", ["429", "500", "malformed"])
    [image] = model.generate(requests(1))
    assert not isinstance(image, Exception), image
    assert len(fake.paid()) == 4
    assert model.counts["retries"] == 3
    assert waits[0] == 3.0  # Retry-After honoured
    policy = RetryPolicy(model.options.retries, 0.01, 0.05)
    for attempt, wait in enumerate(waits[1:], start=1):  # exponential, with jitter
        assert policy.ceiling(attempt) / 2 <= wait <= policy.ceiling(attempt)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_gives_up_after_the_retries_and_caches_nothing(
    provider: str, fake: FakeApi, tmp_path: Path
) -> None:
    needs(provider)
    model = bound(get_model(spec_for(provider, fake, "retries=2")), tmp_path)
    quiet(model)
    fake.plan("(#1)", ["500", "500", "500"])
    [failed] = model.generate(requests(1))
    assert isinstance(failed, ImageNotMade)
    assert failed.row_error.startswith("Generate: ApiError: HTTP 500"), failed.row_error
    assert len(fake.paid()) == 3  # one try and two retries
    [image] = model.generate(requests(1))  # not cached: the next run tries again
    assert not isinstance(image, Exception)
    assert len(fake.paid()) == 4


@pytest.mark.parametrize("provider", ["openai", "bfl", "gemini", "http"])
def test_a_timeout_is_retried_and_a_slow_answer_waited_for(
    provider: str, fake: FakeApi, tmp_path: Path
) -> None:
    needs(provider)
    # Margins of 10x and 3x: a loaded machine (two test processes on two cores) made a
    # 0.2 s answer miss a 0.5 s timeout on BFL's three requests.
    model = bound(get_model(spec_for(provider, fake, "timeout=2")), tmp_path)
    quiet(model)
    fake.plan("(#1)", ["slow:6"])  # longer than the timeout: retried
    fake.plan("(#2)", ["slow:0.2"])  # slow but in time: one request
    first, second = model.generate(requests(1, 2))
    assert not isinstance(first, Exception) and not isinstance(second, Exception)
    prompts = [entry["prompt"] for entry in fake.paid()]
    assert sum("(#1)" in p for p in prompts) == 2
    assert sum("(#2)" in p for p in prompts) == 1


def test_a_client_error_is_not_retried(fake: FakeApi, tmp_path: Path) -> None:
    pytest.importorskip("openai")
    model = bound(get_model(spec_for("openai", fake)), tmp_path)
    fake.plan("(#1)", ["echo-key"])
    [failed] = model.generate(requests(1))
    assert isinstance(failed, ImageNotMade) and "HTTP 403" in failed.row_error
    assert len(fake.paid()) == 1


# --------------------------------------------------------------------------- refusals
@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_refusal_is_its_own_outcome_and_cached(
    provider: str, fake: FakeApi, tmp_path: Path
) -> None:
    needs(provider)
    model = bound(get_model(spec_for(provider, fake)), tmp_path)
    fake.plan("(#1)", ["refuse"])
    refused, made = model.generate(requests(1, 2))
    assert isinstance(refused, ImageNotMade) and not isinstance(made, Exception)
    prefix = "google" if provider in ("gemini", "imagen") else provider
    assert refused.row_error.startswith(f"Refused: {prefix}: "), refused.row_error
    assert refused.cost_usd == 0.0
    before = len(fake.paid())
    again = bound(get_model(spec_for(provider, fake)), tmp_path).generate(requests(1, 2))
    assert len(fake.paid()) == before  # both answers (refusal and image) from the cache
    assert isinstance(again[0], ImageNotMade) and again[0].row_error == refused.row_error
    assert again[1].tobytes() == made.tobytes()


# --------------------------------------------------------------------------- cache, concurrency
def test_the_cache_key_is_prompt_seed_and_image_options(fake: FakeApi, tmp_path: Path) -> None:
    pytest.importorskip("openai")
    bound(get_model(spec_for("openai", fake)), tmp_path).generate(requests(1))
    # Transport options (timeouts, retries, concurrency) do not change the image: cached.
    other_transport = spec_for("openai", fake, "concurrency=2&retries=1")
    bound(get_model(other_transport), tmp_path).generate(requests(1))
    assert len(fake.paid()) == 1
    # Another seed, another image option: asked again.
    bound(get_model(spec_for("openai", fake)), tmp_path).generate(requests(1, seed0=7))
    bound(get_model(spec_for("openai", fake, "quality=low")), tmp_path).generate(requests(1))
    assert len(fake.paid()) == 3


@pytest.mark.slow
def test_concurrency_is_bounded(fake: FakeApi, tmp_path: Path) -> None:
    fake.delay = 0.3
    model = bound(get_model(spec_for("bfl", fake, "concurrency=2")), tmp_path)
    images = model.generate(requests(*range(6)))
    assert len(images) == 6 and fake.max_in_flight == 2


# --------------------------------------------------------------------------- spending cap
def test_the_cap_stops_paid_requests(fake: FakeApi, tmp_path: Path) -> None:
    budget = SpendBudget(0.10)
    model = bound(get_model(spec_for("bfl", fake, "concurrency=1")), tmp_path, budget=budget)
    outputs = model.generate(requests(1, 2, 3, 4))
    assert [isinstance(o, NotAttempted) for o in outputs] == [False, False, True, True]
    assert len(fake.paid()) == 2 and budget.spent_usd == pytest.approx(0.08)
    assert "spending cap reached" in str(outputs[2])
    # Cached images cost nothing new, even past the cap.
    again = bound(get_model(spec_for("bfl", fake)), tmp_path, budget=SpendBudget(0.0))
    assert not isinstance(again.generate(requests(1))[0], Exception)


def test_refusals_and_failures_give_their_reservation_back(fake: FakeApi, tmp_path: Path) -> None:
    budget = SpendBudget(0.05)
    model = bound(
        get_model(spec_for("bfl", fake, "concurrency=1&retries=0")), tmp_path, budget=budget
    )
    fake.plan("(#1)", ["refuse"])
    fake.plan("(#2)", ["500"])
    outputs = model.generate(requests(1, 2, 3))
    assert isinstance(outputs[0], ImageNotMade) and isinstance(outputs[1], ImageNotMade)
    assert not isinstance(outputs[2], Exception)  # the 0.04 still fitted
    assert budget.spent_usd == pytest.approx(0.04)


# --------------------------------------------------------------------------- keys
def test_a_key_in_an_answer_never_reaches_a_message(fake: FakeApi, tmp_path: Path) -> None:
    model = bound(get_model(spec_for("http", fake, "retries=0")), tmp_path)
    fake.plan("(#1)", ["echo-key"])
    [failed] = model.generate(requests(1))
    assert isinstance(failed, ImageNotMade) and "***" in failed.row_error
    assert KEY not in failed.row_error
    assert KEY not in json.dumps(model.describe())


def test_a_missing_key_names_the_variable(monkeypatch: pytest.MonkeyPatch, fake: FakeApi) -> None:
    monkeypatch.delenv("BFL_API_KEY")
    model: Any = get_model(spec_for("bfl", fake))
    with pytest.raises(InputError, match=r"\$BFL_API_KEY"):
        model.load()
    renamed: Any = get_model(spec_for("bfl", fake, "key_env=MY_BFL"))
    monkeypatch.setenv("MY_BFL", KEY)
    renamed.load()
    assert renamed.describe()["key_env"] == ["MY_BFL"]


def test_a_literal_key_in_http_headers_is_refused() -> None:
    spec = (
        'api:http?url=http://127.0.0.1:9/x&image_field=a&headers={"Authorization": "Bearer sk-1"}'
    )
    with pytest.raises(InputError, match="environment"):
        PLUGINS.resolve("models", spec)


# --------------------------------------------------------------------------- options
@pytest.mark.parametrize(
    ("spec", "problem"),
    [
        ("api:nope/x", "unknown api provider 'nope'"),
        ("api:openai", "names no model"),
        ("api:openai/gpt-image-1?steps=4", "unknown option 'steps'"),
        ("api:bfl/flux-pro-1.1?concurrency=0", "concurrency"),
        ("api:http/x?image_field=a", "'url' is required"),
    ],
)
def test_bad_specs_fail_when_resolved(spec: str, problem: str) -> None:
    with pytest.raises(InputError, match=problem):
        PLUGINS.resolve("models", spec)


def test_retry_after_as_an_http_date() -> None:
    import time
    from email.utils import formatdate

    wait = parse_retry_after({"Retry-After": formatdate(time.time() + 30, usegmt=True)})
    assert wait is not None and 25 <= wait <= 31
    assert parse_retry_after({"Retry-After": "soon"}) is None


@pytest.mark.slow
def test_list_shows_the_providers_without_importing_their_clients() -> None:
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from glyphbench.cli.root import app\n"
        "result = CliRunner().invoke(app, ['list', 'models'])\n"
        "assert result.exit_code == 0, result.output\n"
        "for text in ('api:openai/<model> options', 'api:bfl/<model> options', "
        "'api:google/<model> options', 'api:http options', 'poll_interval', 'image_field'):\n"
        "    assert text in result.output, text\n"
        "print(','.join(m for m in ('openai', 'google.genai', 'httpx') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
