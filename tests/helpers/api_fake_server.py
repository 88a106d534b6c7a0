"""A fake hosted-image-API server on 127.0.0.1 that speaks each provider's documented format.

One threaded ``http.server`` answers, under one port:

* OpenAI Images: ``POST /openai/v1/images/generations`` (``Authorization: Bearer KEY``)
  -> ``{"created", "data": [{"b64_json"}]}``; a refusal is HTTP 400 with
  ``error.code == "moderation_blocked"``;
* BFL: ``POST /bfl/v1/<model>`` (``x-key``) -> ``{"id", "polling_url"}``;
  ``GET /bfl/v1/get_result?id=`` -> ``{"status": "Pending" | "Ready" | "Request
  Moderated" | "Content Moderated", "result": {"sample": URL}}``; ``GET /delivery/<id>.png``;
* Google: ``POST /google/<version>/models/<model>:generateContent`` (``x-goog-api-key``)
  -> ``{"candidates": [{"content": {"parts": [{"inlineData"}]}, "finishReason"}]}``,
  a refusal ``{"promptFeedback": {"blockReason": "SAFETY"}}``; ``...:predict`` (Imagen)
  -> ``{"predictions": [{"bytesBase64Encoded", "mimeType"}]}``, a refusal
  ``{"predictions": [{"raiFilteredReason"}]}``;
* a generic JSON API: ``POST /generic/generate`` -> ``{"output": {"image": base64}}``,
  a refusal HTTP 422 ``{"error": {"type": "content_policy"}}``; ``POST /hostile/generate``
  is the same API keyed by an ``X-Key`` header.

What each request meets is a *plan*: ``server.plan(marker, [action, ...])`` makes the
paid requests whose prompt contains ``marker`` meet the actions in turn (then
``ok``). Actions: ``ok``, ``429`` (with ``Retry-After``), ``500``, ``slow:S`` (sleep S
seconds, then ok), ``malformed`` (HTTP 200, broken JSON), ``refuse``, ``echo-key``
(HTTP 403 whose message repeats the key, as some APIs do), ``pending:N`` (BFL: N
polls answer Pending), ``poll-500`` (BFL: the first poll fails). Hostile echoes
of the key: ``echo-json`` (JSON-escaped, ``\\/`` and ``\\u002b``), ``echo-unicode``
(every character ``\\uXXXX``), ``echo-url`` (URL-encoded), ``echo-base64`` (base64 of
the request's key header value), ``echo-long`` (after 290 characters of text),
``echo-half`` (its first half only), ``echo-refuse`` (a refusal quoting it),
``echo-malformed`` (HTTP 200, broken JSON holding it after 60 characters),
``echo-split:N:SEP`` (in pieces of N characters joined by SEP: ``space``, ``dash``,
``dot``, ``newline`` or ``comma``);
``redirect`` (HTTP 307 to ``redirect_to``, e.g. another server). ``delay`` slows
every paid request. Every request is logged (``server.log``); nothing leaves 127.0.0.1.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import threading
import time
from collections import defaultdict
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

from PIL import Image


def image_png(prompt: str, seed: int, note: str = "") -> bytes:
    """A 32x32 PNG whose colour follows (prompt, seed): different requests, different images;
    ``note`` goes in a text chunk (an API that writes the request's key there)."""
    from PIL.PngImagePlugin import PngInfo

    digest = hashlib.sha256(f"{prompt}|{seed}".encode()).digest()
    buffer = io.BytesIO()
    info = PngInfo()
    if note:
        info.add_text("comment", note)
    image = Image.new("RGB", (32, 32), (digest[0], digest[1], digest[2]))
    image.save(buffer, format="PNG", pnginfo=info)
    return buffer.getvalue()


class FakeApi:
    """The server and what it saw; use as a context manager."""

    def __init__(self, key: str, *, retry_after: str = "0") -> None:
        self.key = key
        self.retry_after = retry_after
        self.delay = 0.0
        self.log: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self.in_flight = 0
        self.max_in_flight = 0
        self.plans: dict[str, list[str]] = {}
        self.tasks: dict[str, dict[str, Any]] = {}
        self.polls: dict[str, int] = defaultdict(int)
        self.redirect_to = ""
        #: Text each image carries in a PNG chunk (``key={key}`` echoes the key there).
        self.image_note = ""
        #: Where BFL's polling URLs point (default: this server); another origin tests
        #: that the key does not follow them there.
        self.polling_base = ""
        self.server = _Server(("127.0.0.1", 0), Handler)
        self.server.api = self
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FakeApi:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    # ---------------------------------------------------------------- plans
    def plan(self, marker: str, actions: list[str], provider: str = "") -> None:
        """Requests whose prompt holds ``marker`` (for ``provider`` if given) meet ``actions``."""
        with self.lock:
            self.plans[f"{provider}|{marker}"] = list(actions)

    def next_action(self, provider: str, prompt: str) -> str:
        with self.lock:
            for key, actions in self.plans.items():
                target, _, marker = key.partition("|")
                if marker in prompt and target in ("", provider) and actions:
                    return actions.pop(0)
        return "ok"

    def record(self, **entry: Any) -> dict[str, Any]:
        with self.lock:
            entry["index"] = len(self.log)
            self.log.append(entry)
        return entry

    def paid(self, provider: str | None = None) -> list[dict[str, Any]]:
        """The generation requests (not polls or downloads), answered or not."""
        with self.lock:
            return [
                e
                for e in self.log
                if e["kind"] == "generate" and (provider is None or e["provider"] == provider)
            ]


class _Server(ThreadingHTTPServer):
    api: FakeApi


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    @property
    def api(self) -> FakeApi:
        return self.server.api

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        return

    # ------------------------------------------------------------ plumbing
    def send_json(self, status: int, data: Any, headers: dict[str, str] | None = None) -> None:
        self.send_bytes(status, json.dumps(data).encode(), "application/json", headers)

    def send_bytes(
        self, status: int, body: bytes, kind: str, headers: dict[str, str] | None = None
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)

    def body(self) -> dict[str, Any]:
        length = int(self.headers.get("Content-Length") or 0)
        data = json.loads(self.rfile.read(length) or b"{}")
        return data if isinstance(data, dict) else {}

    # -------------------------------------------------------------- routes
    def do_POST(self) -> None:
        path = urlsplit(self.path).path
        if path == "/openai/v1/images/generations":
            self.generate("openai", self.headers.get("Authorization") == f"Bearer {self.api.key}")
        elif path.startswith("/bfl/v1/"):
            self.generate("bfl", self.headers.get("x-key") == self.api.key)
        elif path.startswith("/google/") and path.endswith((":generateContent", ":predict")):
            self.generate("google", self.headers.get("x-goog-api-key") == self.api.key)
        elif path == "/generic/generate":
            self.generate("http", self.headers.get("Authorization") == f"Bearer {self.api.key}")
        elif path == "/hostile/generate":
            self.generate("http", self.headers.get("X-Key") == self.api.key)
        else:
            self.send_json(404, {"error": {"message": f"no route {path}"}})

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path == "/bfl/v1/get_result":
            self.bfl_poll(parse_qs(parts.query).get("id", [""])[0])
        elif parts.path.startswith("/delivery/"):
            task_id = parts.path.rsplit("/", 1)[-1].removesuffix(".png")
            self.api.record(
                kind="download",
                provider="bfl",
                path=parts.path,
                key_sent="x-key" in self.headers,
            )
            task = self.api.tasks.get(task_id)
            if task is None:
                self.send_json(404, {"detail": "gone"})
            else:
                self.send_bytes(200, image_png(task["prompt"], task["seed"]), "image/png")
        else:
            self.send_json(404, {"error": {"message": "no route"}})

    # ------------------------------------------------------------ generate
    def generate(self, provider: str, auth_ok: bool) -> None:
        body = self.body()
        prompt, seed = _prompt_and_seed(provider, self.path, body)
        entry = self.api.record(
            kind="generate",
            provider=provider,
            path=urlsplit(self.path).path,
            prompt=prompt,
            seed=seed,
            body=body,
            headers=dict(self.headers.items()),
            auth_ok=auth_ok,
            answered=False,
        )
        with self.api.lock:
            self.api.in_flight += 1
            self.api.max_in_flight = max(self.api.max_in_flight, self.api.in_flight)
        try:
            if self.api.delay:
                time.sleep(self.api.delay)
            if not auth_ok:
                self.send_json(401, {"error": {"message": "bad key", "code": "invalid_api_key"}})
            else:
                self.act(provider, self.api.next_action(provider, prompt), prompt, seed)
        finally:
            with self.api.lock:
                self.api.in_flight -= 1
            entry["answered"] = True

    def act(self, provider: str, action: str, prompt: str, seed: int | None) -> None:
        if action.startswith("slow:"):
            time.sleep(float(action.split(":", 1)[1]))
            action = "ok"
        if action == "429":
            self.send_json(
                429, {"error": {"message": "slow down"}}, {"Retry-After": self.api.retry_after}
            )
        elif action == "500":
            self.send_json(500, {"error": {"message": "internal error"}})
        elif action == "huge":  # an endpoint that sends far more than an image
            self.send_bytes(200, b'{"pad": "' + b"x" * 200_000 + b'"}', "application/json")
        elif action == "malformed":
            self.send_bytes(200, b'{"data": [{"b64_json": "iVBOR', "application/json")
        elif action == "echo-key":
            message = f"Incorrect API key provided: {self.api.key}."
            self.send_json(403, {"error": {"message": message, "code": "invalid_api_key"}})
        elif action.startswith("echo-") or action == "redirect":
            self.hostile(action)
        elif action == "refuse":
            self.refuse(provider)
        else:
            self.succeed(provider, action, prompt, seed if seed is not None else -1)

    def succeed(self, provider: str, action: str, prompt: str, seed: int) -> None:
        note = self.api.image_note.format(key=self.api.key)
        image = base64.b64encode(image_png(prompt, seed, note)).decode()
        if provider == "openai":
            self.send_json(200, {"created": int(time.time()), "data": [{"b64_json": image}]})
        elif provider == "bfl":
            task_id = hashlib.sha256(f"{prompt}|{seed}|{time.time()}".encode()).hexdigest()[:16]
            self.api.tasks[task_id] = {"prompt": prompt, "seed": seed, "action": action}
            polling = f"{self.api.polling_base or self.api.url}/bfl/v1/get_result?id={task_id}"
            self.send_json(200, {"id": task_id, "polling_url": polling})
        elif provider == "google" and self.path.endswith(":predict"):
            prediction = {"bytesBase64Encoded": image, "mimeType": "image/png"}
            self.send_json(200, {"predictions": [prediction]})
        elif provider == "google":
            part = {"inlineData": {"mimeType": "image/png", "data": image}}
            candidate = {"content": {"role": "model", "parts": [part]}, "finishReason": "STOP"}
            self.send_json(200, {"candidates": [candidate]})
        else:
            self.send_json(200, {"output": {"image": image}})

    def hostile(self, action: str) -> None:
        """Answers that repeat the key in the ways APIs (or a hostile server) do."""
        key = self.api.key
        header = next(
            (v for k, v in self.headers.items() if k.lower() in ("authorization", "x-key")), key
        )
        if action == "redirect":
            self.send_json(307, {}, {"Location": self.api.redirect_to})
            return
        if action == "echo-malformed":
            text = '{"data": [{"b64_json": "' + "A" * 40 + key + '", "oops'
            self.send_bytes(200, text.encode(), "application/json")
            return
        echoes = {
            "echo-json": key.replace("/", "\\/").replace("+", "\\u002b"),
            "echo-unicode": "".join(f"\\u{ord(c):04x}" for c in key),
            "echo-url": "".join(f"%{b:02X}" for b in key.encode()),
            "echo-base64": base64.b64encode(header.encode()).decode(),
            "echo-long": "x" * 290 + " " + key,
            "echo-half": key[: len(key) // 2],
            "echo-refuse": key,
        }
        if action.startswith("echo-split:"):
            _, size, name = action.split(":")
            joiner = {"space": " ", "dash": "-", "dot": ".", "newline": "\n", "comma": ", "}[name]
            echoes[action] = joiner.join(
                key[i : i + int(size)] for i in range(0, len(key), int(size))
            )
        text = echoes.get(action, key)
        kind = "content_policy" if action == "echo-refuse" else "invalid_api_key"
        body = '{"error": {"type": "' + kind + '", "message": "bad key ' + text + '."}}'
        self.send_bytes(422 if action == "echo-refuse" else 403, body.encode(), "application/json")

    def refuse(self, provider: str) -> None:
        if provider == "openai":
            error = {
                "message": "Your request was rejected by the safety system.",
                "type": "image_generation_user_error",
                "param": None,
                "code": "moderation_blocked",
            }
            self.send_json(400, {"error": error})
        elif provider == "bfl":
            task_id = f"moderated-{time.time_ns()}"
            self.api.tasks[task_id] = {"prompt": "", "seed": 0, "action": "refuse"}
            self.send_json(
                200,
                {"id": task_id, "polling_url": f"{self.api.url}/bfl/v1/get_result?id={task_id}"},
            )
        elif provider == "google" and self.path.endswith(":predict"):
            filtered = {"raiFilteredReason": "The prompt violates the usage guidelines."}
            self.send_json(200, {"predictions": [filtered]})
        elif provider == "google":
            self.send_json(200, {"promptFeedback": {"blockReason": "SAFETY"}})
        else:
            self.send_json(422, {"error": {"type": "content_policy", "message": "not allowed"}})

    # ----------------------------------------------------------------- BFL
    def bfl_poll(self, task_id: str) -> None:
        task = self.api.tasks.get(task_id)
        self.api.polls[task_id] += 1
        count = self.api.polls[task_id]
        self.api.record(
            kind="poll",
            provider="bfl",
            task=task_id,
            key_ok=self.headers.get("x-key") == self.api.key,
        )
        if task is None:
            self.send_json(200, {"id": task_id, "status": "Task not found", "result": None})
            return
        action = task["action"]
        if action == "poll-500" and count == 1:
            self.send_json(500, {"detail": "poll failed"})
            return
        pending = int(action.split(":", 1)[1]) if action.startswith("pending:") else 0
        if count <= pending:
            self.send_json(
                200, {"id": task_id, "status": "Pending", "result": None, "progress": 0.5}
            )
        elif action == "refuse":
            self.send_json(200, {"id": task_id, "status": "Content Moderated", "result": None})
        else:
            sample = f"{self.api.url}/delivery/{task_id}.png"
            result = {"sample": sample, "prompt": task["prompt"], "seed": task["seed"]}
            self.send_json(200, {"id": task_id, "status": "Ready", "result": result})


def _prompt_and_seed(provider: str, path: str, body: dict[str, Any]) -> tuple[str, int | None]:
    """Where each provider's request carries the prompt and the seed."""
    if provider == "google" and path.endswith(":predict"):
        instance = (body.get("instances") or [{}])[0]
        return str(instance.get("prompt", "")), (body.get("parameters") or {}).get("seed")
    if provider == "google":
        parts = body.get("contents", [{}])[0].get("parts", [{}])
        return str(parts[0].get("text", "")), (body.get("generationConfig") or {}).get("seed")
    return str(body.get("prompt", "")), body.get("seed")
