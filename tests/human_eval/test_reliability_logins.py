"""Logins that cannot be guessed, driven through the real server on loopback addresses
(docs/reliability.md, "Logins").

Two apps are launched for the module on 127.0.0.1: ``plain`` believes no header (the
client is the socket's peer; a second client speaks from 127.0.0.2, another loopback
address, by binding its socket there) and ``proxied`` believes X-Forwarded-For from
127.0.0.1 (``--trusted-proxy 127.0.0.1``). Their login guards share a clock the tests
move, so locks end without waiting; every loop of requests is bounded.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

import httpx
import pytest

from glyphbench.human_eval.guard import LoginGuard, LoginPolicy, LoginRefused, device_key
from glyphbench.human_eval.study import create_study
from tests.helpers.cli_runs import run_cli
from tests.helpers.human_fixtures import launch_app, make_run

pytestmark = pytest.mark.timeout(300)

ADMINS = {f"lead{n}": f"lead-pass-{n}" for n in range(1, 6)}
RATERS = {f"rater{n}": f"rater-pass-{n}" for n in range(1, 4)}
NOW = [1000.0]
LOGGER = "glyphbench.rating_app"


def clock() -> float:
    return NOW[0]


def auth_file(path: Path, users: dict[str, str]) -> Path:
    path.write_text("".join(f"{user}:{password}\n" for user, password in users.items()))
    path.chmod(0o600)
    return path


def serve(root: Path, *, raters: bool, **options: Any) -> tuple[Any, str]:
    """The app with admin logins, or (``raters``) with rater logins in front of everything."""
    run = make_run(root / "run", image_size=32)
    create_study(
        [run], root / "study", n=9, min_per_cell=1, raters_per_image=1, seed=3, batch_size=9,
        gold_per_batch=0, n_gold=0, progress=False,
    )  # fmt: skip
    if raters:
        options["rater_auth_file"] = auth_file(root / "raters.txt", RATERS)
        options["rater_guard"] = LoginGuard(RATERS, name="rater", clock=clock)
    return launch_app(
        root / "study",
        auth_file=auth_file(root / "admin.txt", ADMINS),
        guard=LoginGuard(ADMINS, clock=clock, device_key=device_key(root / "study")),
        allowed_hosts=["study.example.org"],
        **options,
    )


@pytest.fixture(scope="module")
def app(tmp_path_factory: pytest.TempPathFactory):
    """Four apps: admin or rater logins, believing no header or 127.0.0.1's X-Forwarded-For."""
    root = tmp_path_factory.mktemp("logins")
    os.environ["GRADIO_TEMP_DIR"] = str(root / "gradio-cache")
    served = {}
    for raters in (False, True):
        for name, proxies in (("plain", ()), ("proxied", ("127.0.0.1",))):
            kind = f"{name}-raters" if raters else name
            served[kind] = serve(root / kind, raters=raters, trusted_proxies=proxies)
    yield {kind: url for kind, (_, url) in served.items()}
    for demo, _ in served.values():
        demo.close()


@pytest.fixture
def plain(app: dict[str, str]) -> str:
    return app["plain"]


@pytest.fixture
def proxied(app: dict[str, str]) -> str:
    return app["proxied"]


def http(source: str = "127.0.0.1") -> httpx.Client:
    """A client whose socket speaks from ``source`` (any 127.x.y.z is this machine)."""
    return httpx.Client(transport=httpx.HTTPTransport(local_address=source), timeout=60)


def admin(
    url: str,
    user: str,
    password: str,
    token: str | None = None,
    *,
    source: str = "127.0.0.1",
    headers: dict[str, str] | None = None,
) -> tuple[bool, Any]:
    """The /admin endpoint through Gradio's REST API: (accepted, the outputs or the error)."""
    with http(source) as client:
        started = client.post(
            f"{url}gradio_api/call/admin", json={"data": [user, password, token]}, headers=headers
        )
        started.raise_for_status()
        events = client.get(f"{url}gradio_api/call/admin/{started.json()['event_id']}").text
    kind = events.split("\n", 1)[0].removeprefix("event: ").strip()
    data = json.loads(events.split("data: ", 1)[1].split("\n", 1)[0])
    return kind == "complete", data if kind == "complete" else data.get("error")


def rater_login(
    url: str, user: str, password: str, client: httpx.Client | None = None
) -> httpx.Response:
    if client is not None:
        return client.post(f"{url}login", data={"username": user, "password": password})
    with http() as own:
        return rater_login(url, user, password, own)


def lines(caplog: pytest.LogCaptureFixture, account: str) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == LOGGER and f"account {account!r}" in r.getMessage()
    ]


# ------------------------------------------------------------------ rater logins
def test_two_hundred_wrong_rater_passwords_are_locked_per_account_and_logged(
    app: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    plain = app["plain-raters"]
    caplog.set_level(logging.INFO, logger=LOGGER)
    with http() as client:
        statuses = [
            rater_login(plain, "rater1", f"guess-{n}", client).status_code for n in range(200)
        ]
    assert statuses[:5] == [400] * 5  # five tries, "Incorrect credentials"
    assert statuses[5:] == [429] * 195  # then refused unchecked
    locked = rater_login(plain, "rater1", RATERS["rater1"])
    assert locked.status_code == 429 and "Too many failed logins" in locked.text
    said = lines(caplog, "rater1")
    assert len(said) == 6, said  # one line per failure, one when refusals begin
    assert said[4].startswith("rater login failed for account 'rater1' (from 127.0.0.1: 5")
    assert "locked for 60 s" in said[4] and "locked for 60 more s" in said[5]
    assert rater_login(plain, "rater2", RATERS["rater2"]).status_code == 200  # others log in
    NOW[0] += 61
    again = rater_login(plain, "rater1", "guess-200")  # one more try after the lock: doubled
    assert again.status_code == 400 and "locked for 120 s" in lines(caplog, "rater1")[-1]
    assert "196 attempts refused" in lines(caplog, "rater1")[-1]  # 195 guesses, 1 right
    NOW[0] += 121
    assert rater_login(plain, "rater1", RATERS["rater1"]).status_code == 200


def test_rater_guesses_from_rotating_addresses_are_limited_per_account(
    app: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    proxied = app["proxied-raters"]
    caplog.set_level(logging.INFO, logger=LOGGER)
    statuses = []
    for n in range(30):  # a proxy this server believes names 30 addresses
        with http() as client:
            answer = client.post(
                f"{proxied}login",
                data={"username": "rater3", "password": f"guess-{n}"},
                headers={"X-Forwarded-For": f"10.7.0.{n}"},
            )
        statuses.append(answer.status_code)
    assert statuses[:20] == [400] * 20 and statuses[20:] == [429] * 10
    assert "from every address: 20 failures, locked for 60 s" in lines(caplog, "rater3")[19]


# ------------------------------------------------------------------- admin logins
def test_rotating_x_forwarded_for_does_not_lift_the_admin_lockout(
    plain: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    answers = [
        admin(plain, "lead2", f"guess-{n}", headers={"X-Forwarded-For": f"10.0.{n}.1"})
        for n in range(30)
    ]
    assert [ok for ok, _ in answers] == [False] * 30
    assert [error for _, error in answers[:5]] == ["Wrong user or password."] * 5
    assert all("Too many failed logins" in error for _, error in answers[5:])
    ok, error = admin(plain, "lead2", ADMINS["lead2"], headers={"X-Forwarded-For": "10.9.9.9"})
    assert not ok and "Too many failed logins" in error  # the right password too
    assert all("from 127.0.0.1" in line for line in lines(caplog, "lead2"))  # the socket's peer
    assert not [line for line in lines(caplog, "lead2") if "10.0." in line]


def test_five_failures_from_a_stranger_do_not_lock_the_lead_out(plain: str) -> None:
    ok, outputs = admin(plain, "lead3", ADMINS["lead3"])  # the lead, earlier, from 127.0.0.1
    assert ok and "ratings" in outputs[0]
    token = outputs[3]  # the device token the page keeps in the browser
    for n in range(30):  # a stranger on another address: 5 tries, then locked
        assert not admin(plain, "lead3", f"guess-{n}", source="127.0.0.2")[0]
    assert "Too many" in admin(plain, "lead3", ADMINS["lead3"], source="127.0.0.2")[1]
    assert admin(plain, "lead3", ADMINS["lead3"])[0]  # the lead's address: not locked
    for n in range(5):  # the stranger on the lead's own address
        assert admin(plain, "lead3", f"again-{n}")[1] == "Wrong user or password."
    assert "Too many" in admin(plain, "lead3", ADMINS["lead3"])[1]  # a new browser waits
    ok, outputs = admin(plain, "lead3", ADMINS["lead3"], token)  # the lead's browser does not
    assert ok and outputs[3]
    forged = token.split(".")[0] + "." + "0" * 32
    assert "Too many" in admin(plain, "lead3", ADMINS["lead3"], forged)[1]  # no forged trust


def test_admin_guesses_from_rotating_addresses_lock_the_account_not_the_leads_browser(
    proxied: str,
) -> None:
    ok, outputs = admin(proxied, "lead4", ADMINS["lead4"])
    assert ok
    token = outputs[3]
    answers = [
        admin(proxied, "lead4", f"guess-{n}", headers={"X-Forwarded-For": f"10.8.{n}.1"})[1]
        for n in range(25)
    ]
    assert answers[:20] == ["Wrong user or password."] * 20
    assert all("Too many" in answer for answer in answers[20:])
    fresh = admin(proxied, "lead4", ADMINS["lead4"], headers={"X-Forwarded-For": "10.9.0.1"})
    assert "Too many" in fresh[1]  # a browser that never logged in waits for the account
    assert admin(proxied, "lead4", ADMINS["lead4"], token)[0]  # the lead's does not


# ------------------------------------------------------------------------- Host
@pytest.mark.parametrize(
    "host, status",
    [
        ("evil.example", 421),
        ("evil.example:7860", 421),
        ("127.0.0.1.nip.io", 421),
        ("localhost", 200),
        ("127.0.0.1:7860", 200),
        ("[::1]:7860", 200),
        ("study.example.org", 200),
        ("STUDY.example.org.", 200),
    ],
)
def test_the_host_header_must_name_this_server(plain: str, host: str, status: int) -> None:
    with http() as client:
        assert client.get(plain, headers={"Host": host}).status_code == status
        joined = client.post(
            f"{plain}gradio_api/call/admin",
            json={"data": ["nobody", "guess", None]},
            headers={"Host": host},
        )
        assert joined.status_code == (421 if status == 421 else 200)


def test_a_rebinding_page_cannot_spend_the_leads_tries(plain: str) -> None:
    for n in range(10):
        with http() as client:
            refused = client.post(
                f"{plain}gradio_api/call/admin",
                json={"data": ["lead5", f"guess-{n}", None]},
                headers={"Host": "attacker.example:7860"},
            )
        assert refused.status_code == 421
    assert admin(plain, "lead5", ADMINS["lead5"])[0]


# -------------------------------------------------------------------- the policy
def test_locks_double_up_to_fifteen_minutes_and_counts_are_forgotten_after_an_hour() -> None:
    now = [0.0]
    guard = LoginGuard({"lead": "pw"}, clock=lambda: now[0])

    def wrong() -> bool:
        """Try a wrong password: True when it was checked (and failed), False when locked."""
        try:
            guard.attempt("10.0.0.1", "lead", "guess")
        except LoginRefused as exc:
            return not exc.locked
        raise AssertionError("a wrong password was accepted")

    assert all(wrong() for _ in range(4))  # four free failures
    for lock in (60, 120, 240, 480, 900, 900):  # the 5th to 10th failures
        assert wrong()
        now[0] += lock - 1
        assert not wrong()  # still locked a second before the end; not counted
        now[0] += 1
    now[0] += 3600  # an hour after the last failure: the count starts again
    assert all(wrong() for _ in range(4))
    guard.attempt("10.0.0.1", "lead", "pw")


def test_a_token_counts_its_own_failures_and_belongs_to_one_account() -> None:
    now = [0.0]
    guard = LoginGuard({"lead": "pw", "other": "pw2"}, clock=lambda: now[0])
    token = guard.attempt("10.0.0.1", "lead", "pw")
    for _ in range(5):
        with pytest.raises(LoginRefused, match="Wrong"):
            guard.attempt("10.0.0.1", "lead", "guess", token)
    with pytest.raises(LoginRefused, match="Too many"):
        guard.attempt("10.0.0.1", "lead", "pw", token)  # a stolen token is limited too
    guard.attempt("10.0.0.1", "lead", "pw")  # the address itself is not locked by it
    for _ in range(5):
        with pytest.raises(LoginRefused):
            guard.attempt("10.0.0.3", "other", "guess")
    with pytest.raises(LoginRefused, match="Too many"):
        guard.attempt("10.0.0.3", "other", "pw2", token)  # lead's token is not other's


def test_a_flood_of_addresses_keeps_the_counts_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    import glyphbench.human_eval.guard as guard_module

    monkeypatch.setattr(guard_module, "MAX_COUNTS", 100)
    now = [0.0]
    guard = LoginGuard({"lead": "pw"}, policy=LoginPolicy(account_free=10**6), clock=lambda: now[0])
    for n in range(1000):
        with pytest.raises(LoginRefused):
            guard.attempt(f"10.1.{n // 250}.{n % 250}", "lead", "guess")
    assert len(guard._counts) <= 101


def test_serve_refuses_a_trusted_proxy_that_is_no_address(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run_cli(
        ["human", "serve", str(tmp_path), "--trusted-proxy", "proxy.local", "--port", "1"],
        capsys,
    )
    assert code == 2 and err.count("\n") == 1
    assert "--trusted-proxy 'proxy.local' is not an IP address or network" in err
