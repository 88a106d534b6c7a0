"""The rating web app (Gradio Blocks) over :class:`human_eval.service.RatingService`.

Screens: instructions + consent -> one image at a time (prompt, one question per
criterion, Back / Submit / Finish, progress "k / n") -> thank-you. Finish asks
for a confirmation first (it hands the batch's unrated images back); a refused
start or resume is said on the consent screen itself and cleared by the next
success (no toast that outlives it); the image is shown beside the questions at its
own size (a small one enlarged, a wide one fitted to its column), and a click zooms it.
The page is drawn in the machine's own fonts. The model
behind an image is never sent to the page: images are the study's own copies
named by opaque ids.

Every button is also a named API endpoint (``/start``, ``/resume``, ``/submit``,
``/back``, ``/finish``, ``/more``) running the same handler, so ``gradio_client`` drives
exactly the code path of the page. Each returns, as its last output, a JSON view
of the new state (screen, code, image_id, answers, progress, message).

Admin: the "Study admin" page, on its own route :data:`ADMIN_ROUTE` (not linked
from the raters' page), asks for a user name and password that
the server checks against the ``--auth-file`` (``user:password`` lines, compared
in constant time); it shows progress per image and per participant and offers
the export. Gradio's own ``auth=`` would put the whole app (raters included)
behind one login, which is why the admin check is separate. Optional rater
logins (``rater_auth``) use Gradio's ``auth=``; the login then is the
participant id, so logging in again resumes.

Exposure (the app may face the internet):

* admin logins are rate-limited (:class:`LoginGuard`): repeated failures lock the
  address out, and many failures from anywhere lock the panel for everyone, for a while;
* uploads are refused (the app has no upload; Gradio's upload routes and any
  multipart request get 403) and request bodies are capped at
  :data:`MAX_REQUEST_BYTES` (413), see :class:`RequestLimits`;
* inputs are read raw (``preprocess=False``) and checked by the service, so a
  refused request is logged as one line without the input and never as a traceback;
  an unexpected error logs its traceback without the exception's message;
* the admin export is written to one folder per app, removed at exit, and Gradio's
  cache of served files is cleared hourly.

Gradio is imported inside :func:`build_app`, so importing this module is cheap.
"""

from __future__ import annotations

import atexit
import hmac
import logging
import os
import shutil
import tempfile
import threading
import time
import traceback
from collections import deque
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from bench.core.errors import InputError
from human_eval.service import RatingError, RatingService, View
from human_eval.study import Study

LOG = logging.getLogger("glyphbench.rating_app")

#: Largest request body accepted (the app's requests are a few hundred bytes).
MAX_REQUEST_BYTES = 64 * 1024
#: Longest text input used (resume codes, image ids, answers are short).
MAX_TEXT = 200

ASGIApp = Callable[..., Awaitable[None]]

#: Components that carry state but are not for the eye; the image at a size legibility
#: can be judged at.
HIDDEN_CSS = """.gb-hidden { display: none !important; }
.nav-holder { display: none !important; }
#item-image, #item-image .image-container, #item-image .image-frame {
  height: auto !important; max-height: none !important; }
#item-image img { width: auto !important; height: auto !important; max-width: 100% !important;
                  max-height: none !important; min-width: min(384px, 80vw);
                  object-fit: contain; cursor: zoom-in; }
#gb-zoom { display: none; position: fixed; inset: 0; z-index: 2000; overflow: auto;
           background: rgba(0, 0, 0, 0.85); cursor: zoom-out; }
#gb-zoom img { display: block; margin: auto; max-width: none; }
#finish-confirm { border: 1px solid #e0b400; background: #fff8db; border-radius: 6px;
                  padding: 8px; position: fixed; bottom: 24px; left: 50%;
                  transform: translateX(-50%); z-index: 1000; width: min(560px, 90vw);
                  box-shadow: 0 4px 18px rgba(0, 0, 0, 0.25); }
"""
# The image is shown at its own size (never smaller, unless wider than its column; a small
# image is enlarged to 384 px), left of the questions, so Submit stays in view on a 1366x768
# laptop; a click shows it at its own size or larger, filling the window (ZOOM_JS)
# (tests/test_human_app_browser.py::test_rating_page_fits_a_laptop_screen,
# ::test_images_are_shown_at_their_own_size_and_zoom_on_click).

#: The page's fonts: the machine's own, one family for every weight. Gradio's default theme
#: loads web fonts in some weights only, so bold text (buttons, **Prompt:**) fell back to
#: another family offline and the page mixed two fonts (issue 33).
SANS = ("system-ui", "-apple-system", "Segoe UI", "Helvetica Neue", "Arial", "sans-serif")
MONO = ("ui-monospace", "SFMono-Regular", "Menlo", "Consolas", "monospace")


def page_theme() -> Any:
    """Gradio's default theme with :data:`SANS` and :data:`MONO`: nothing fetched, one font."""
    import gradio as gr

    return gr.themes.Default(font=list(SANS), font_mono=list(MONO))


#: The admin page's path; raters' pages never link to it.
ADMIN_ROUTE = "/admin"
#: What Finish asks before it hands the batch back.
FINISH_QUESTION = (
    "**Finish now?** Images you have not rated yet go back to other raters. "
    "You can rate more later with your resume code."
)

#: Keyboard shortcuts: y/n (or 1-5 on the five-point scale) answer the first
#: unanswered question, Enter submits, b goes back. Typing in a text box is ignored.
SHORTCUTS_JS = """
<script>
(() => {
  // A click on the image shows it at its own size, or larger to fill the window; a click
  // anywhere or Escape closes it.
  const zoom = () => {
    let box = document.getElementById('gb-zoom');
    if (!box) {
      box = document.createElement('div');
      box.id = 'gb-zoom';
      box.appendChild(document.createElement('img'));
      document.body.appendChild(box);
    }
    return box;
  };
  document.addEventListener('click', (e) => {
    const open = document.getElementById('gb-zoom');
    if (open && open.style.display === 'block') { open.style.display = 'none'; return; }
    const img = e.target && e.target.closest && e.target.closest('#item-image img');
    if (!img || !img.naturalWidth) return;
    const box = zoom(), big = box.querySelector('img');
    const scale = Math.max(1, Math.min(innerWidth / img.naturalWidth,
                                       innerHeight / img.naturalHeight));
    big.src = img.src;
    big.style.width = Math.round(img.naturalWidth * scale) + 'px';
    box.style.display = 'block';
  });
  const button = (id) => {
    const el = document.getElementById(id);
    return el && (el.tagName === 'BUTTON' ? el : el.querySelector('button'));
  };
  const groups = () => Array.from(document.querySelectorAll('[id^="q-"]'))
    .filter((g) => g.querySelector('input[type=radio]') && g.offsetParent !== null);
  document.addEventListener('keydown', (e) => {
    const t = e.target;
    if (t && (t.tagName === 'TEXTAREA' || (t.tagName === 'INPUT' && t.type !== 'radio'))) return;
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    const zoomed = document.getElementById('gb-zoom');
    if (zoomed && zoomed.style.display === 'block') {
      if (e.key === 'Escape') { zoomed.style.display = 'none'; e.preventDefault(); }
      return;
    }
    const key = e.key.toLowerCase();
    if (key === 'enter' && t && t.tagName === 'BUTTON') return;  // the button handles its own Enter
    const press = (id) => { const b = button(id); if (b) { b.click(); e.preventDefault(); } };
    if (key === 'enter') { press('submit-btn'); return; }
    if (key === 'b') { press('back-btn'); return; }
    const open = groups().find((g) => !g.querySelector('input[type=radio]:checked'));
    if (!open) return;
    const inputs = Array.from(open.querySelectorAll('input[type=radio]'));
    let index = -1;
    if (inputs.length === 2) { index = key === 'y' ? 0 : key === 'n' ? 1 : -1; }
    else if (/^[1-9]$/.test(key)) { index = Number(key) - 1; }
    if (index >= 0 && index < inputs.length) { inputs[index].click(); e.preventDefault(); }
  });
})();
</script>
"""

INSTRUCTIONS = """
## Rating text in generated images

You will see images made by text-to-image systems, one at a time, each with the
prompt it was made from. For each image answer:

{questions}

Take your time; there are no trick questions, except that a few images are
checks with a known answer. You can go **Back** to change your previous answer.
You will get a **resume code**: keep it to close the page and continue later.

**Keyboard:** {keys}, **Enter** submits, **B** goes back.

**Consent.** Your answers and the time you spend per image are stored with a
random participant number, never with your name; they are used only to measure
how well automatic scores agree with people, and published only in aggregate or
anonymised. You can stop at any time.
"""


def read_auth_file(path: str | Path) -> dict[str, str]:
    """Parse ``user:password`` lines (blank lines and ``#`` comments ignored).

    A file that others may read (any group or other permission bit, as ``ssh`` refuses a
    private key) is refused, with the ``chmod`` that fixes it: its passwords guard the
    ratings.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "auth file not found")
    mode = path.stat().st_mode & 0o777
    if os.name == "posix" and mode & 0o077:
        raise InputError(
            path, f"holds passwords but others may read it (mode {mode:o}): chmod 600 {path}"
        )
    users: dict[str, str] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        user, sep, password = line.partition(":")
        if not sep or not user or not password:
            raise InputError(path, "expected 'user:password'", line=number)
        users[user] = password
    if not users:
        raise InputError(path, "no 'user:password' lines")
    return users


def check_password(users: dict[str, str], user: str, password: str) -> bool:
    """Constant-time check of one login against the auth file's users."""
    expected = users.get(user or "", "")
    ok = hmac.compare_digest(expected.encode(), (password or "").encode())
    return bool(expected) and ok


#: Characters Markdown (CommonMark) gives a meaning; each is shown as itself when escaped.
_MARKDOWN_PUNCTUATION = set("\\`*_{}[]()#+-.!|~>\"'$%:;=?^")


def plain_markdown(text: str) -> str:
    """``text`` as Markdown that renders as exactly ``text`` (a prompt is shown, not parsed).

    Tag-like text (``<b>``), backticks, emphasis and links stay visible characters:
    Markdown punctuation is backslash-escaped, ``<`` and ``&`` become entities and
    line breaks ``<br>``.

    >>> print(plain_markdown("<b>SALE</b> `code`"))
    &lt;b\\>SALE&lt;/b\\> \\`code\\`
    """
    out = []
    for char in text:
        if char == "<":
            out.append("&lt;")
        elif char == "&":
            out.append("&amp;")
        elif char == "\n":
            out.append("<br>")
        elif char in _MARKDOWN_PUNCTUATION:
            out.append("\\" + char)
        else:
            out.append(char)
    return "".join(out)


class LoginRefused(Exception):
    """A refused admin login (wrong password, or locked out); the message says which."""


class LoginGuard:
    """Admin logins with lockout: brute force gets a handful of tries, not thousands.

    ``per_address`` failures from one address within ``window_s`` lock that address
    out for ``lockout_s``; during a lockout even the right password is refused from it.
    Other addresses are never locked out by it: failures from many addresses cannot
    lock the lead out of their own study (issue 25).

    >>> now = [0.0]
    >>> guard = LoginGuard({"lead": "pw"}, per_address=2, clock=lambda: now[0])
    >>> for password in ("a", "b"):
    ...     try:
    ...         guard.attempt("10.0.0.1", "lead", password)
    ...     except LoginRefused as exc:
    ...         print(exc)
    Wrong user or password.
    Wrong user or password.
    >>> guard.attempt("10.0.0.1", "lead", "pw")
    Traceback (most recent call last):
    ...
    human_eval.app.LoginRefused: Too many failed logins; try again in 15 minute(s).
    >>> guard.attempt("10.0.0.2", "lead", "pw")  # another address
    >>> now[0] += 901
    >>> guard.attempt("10.0.0.1", "lead", "pw")  # the lockout has ended
    """

    def __init__(
        self,
        users: dict[str, str],
        *,
        per_address: int = 5,
        window_s: float = 900.0,
        lockout_s: float = 900.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.users = users
        self.per_address = per_address
        self.window_s = window_s
        self.lockout_s = lockout_s
        self.clock = clock
        self._failures: dict[str, deque[float]] = {}
        self._locked_until: dict[str, float] = {}  # address -> time
        self._lock = threading.Lock()

    def attempt(self, address: str, user: str, password: str) -> None:
        """Return when the login is accepted; raise :class:`LoginRefused` otherwise."""
        with self._lock:
            now = self.clock()
            until = self._locked_until.get(address, 0.0)
            if now < until:
                minutes = max(1, round((until - now) / 60))
                raise LoginRefused(f"Too many failed logins; try again in {minutes} minute(s).")
            if check_password(self.users, user, password):
                self._failures.pop(address, None)
                return
            self._fail(address, now)
        raise LoginRefused("Wrong user or password.")

    def _fail(self, address: str, now: float) -> None:
        recent = self._failures.setdefault(address, deque())
        recent.append(now)
        while recent and recent[0] < now - self.window_s:
            recent.popleft()
        if len(recent) >= self.per_address:
            self._locked_until[address] = now + self.lockout_s
            recent.clear()
        LOG.warning("admin login failed from %s (%d recent)", address, len(recent))


class RequestLimits:
    """ASGI middleware: no uploads, and no request body over ``max_body`` bytes.

    The rating app never takes a file, so Gradio's upload routes (and any multipart
    request) get 403; a body over the cap gets 413, whether it declares its length
    or streams it in chunks.
    """

    BLOCKED = ("/upload", "/process_recording")

    def __init__(self, app: ASGIApp, max_body: int = MAX_REQUEST_BYTES) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {key.lower(): value for key, value in scope.get("headers", [])}
        path = str(scope.get("path", "")).rstrip("/")
        multipart = headers.get(b"content-type", b"").startswith(b"multipart/")
        if multipart or (scope.get("method") == "POST" and path.endswith(self.BLOCKED)):
            await _reply(send, 403, "uploads are disabled")
            return
        declared = headers.get(b"content-length")
        if declared is not None:
            if not declared.isdigit() or int(declared) > self.max_body:
                await _reply(send, 413, "request body too large")
                return
            await self.app(scope, receive, send)
            return
        await self._streamed(scope, receive, send)

    async def _streamed(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        """A body without a declared length: read it (up to the cap), then replay it."""
        if scope.get("method") in ("GET", "HEAD", "OPTIONS"):
            await self.app(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            if message["type"] != "http.request":
                break
            body += message.get("body", b"")
            if len(body) > self.max_body:
                await _reply(send, 413, "request body too large")
                return
            if not message.get("more_body"):
                break
        replayed = False

        async def replay() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def _reply(send: Any, status: int, text: str) -> None:
    data = text.encode("utf-8")
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(data)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": data})


def text_input(value: Any) -> str:
    """A raw text input as the service takes it: a string, at most :data:`MAX_TEXT` long.

    >>> text_input("K7QM-3XPA"), text_input(None), text_input(["x"]), len(text_input("a" * 999))
    ('K7QM-3XPA', '', '', 200)
    """
    return value[:MAX_TEXT] if isinstance(value, str) else ""


def client_address(request: Any) -> str | None:
    """The address a request came from (a proxy on this host may set X-Forwarded-For)."""
    client = getattr(request, "client", None)
    return str(getattr(client, "host", "") or "") or None


def build_app(
    study: Study,
    *,
    admin_users: dict[str, str] | None = None,
    service: RatingService | None = None,
    guard: LoginGuard | None = None,
) -> Any:
    """The Gradio Blocks app for ``study`` (not launched)."""
    import gradio as gr

    major = int(gr.__version__.split(".")[0])
    if major < 6:  # head/css moved to launch(), visible="hidden" and Image(buttons=) arrived in 6
        raise InputError(None, f"the rating app needs gradio >= 6 (installed: {gr.__version__})")
    service = service or RatingService(study)
    labels = list(study.scale)
    criteria = study.criteria
    questions = "\n".join(f"{k + 1}. **{c['question']}**" for k, c in enumerate(criteria))
    keys = (
        "**Y** / **N** answer the next question"
        if len(labels) == 2
        else "**1**-**5** answer the next question"
    )

    # delete_cache: files Gradio copied to serve (the export) go after an hour
    with gr.Blocks(
        title="Image rating", analytics_enabled=False, delete_cache=(3600, 3600)
    ) as demo:
        with gr.Column(visible=True, elem_id="consent-screen") as consent_col:
            gr.Markdown(INSTRUCTIONS.format(questions=questions, keys=keys))
            consent = gr.Checkbox(
                label="I have read the instructions and agree to take part.", elem_id="consent"
            )
            start_btn = gr.Button("Start", variant="primary", elem_id="start-btn")
            consent_msg = gr.Markdown(elem_id="consent-message")
            gr.Markdown("**Returning?** Enter your resume code:")
            with gr.Row():
                code_in = gr.Textbox(
                    show_label=False, placeholder="XXXX-XXXX-XXXX", elem_id="resume-code"
                )
                resume_btn = gr.Button("Resume", elem_id="resume-btn")
        with gr.Column(visible=False, elem_id="rating-screen") as rate_col:
            with gr.Row():
                progress = gr.Markdown(elem_id="progress")
                code_box = gr.Textbox(
                    label="Your resume code (keep it to continue later)",
                    interactive=False,
                    elem_id="code",
                )
            with gr.Row(equal_height=False):  # the image beside the questions and buttons
                with gr.Column(scale=2, min_width=320):
                    image = gr.Image(
                        type="filepath",
                        interactive=False,
                        show_label=False,
                        format="png",
                        buttons=["fullscreen"],
                        elem_id="item-image",
                    )
                with gr.Column(scale=1, min_width=300):
                    prompt = gr.Markdown(elem_id="prompt")
                    radios = [
                        gr.Radio(choices=labels, label=c["question"], elem_id=f"q-{c['name']}")
                        for c in criteria
                    ]
                    message = gr.Markdown(elem_id="message")
                    with gr.Row():
                        back_btn = gr.Button("Back", elem_id="back-btn")
                        submit_btn = gr.Button("Submit", variant="primary", elem_id="submit-btn")
                        finish_btn = gr.Button("Finish", variant="stop", elem_id="finish-btn")
                    gr.Markdown(f"<small>Keyboard: {keys}, Enter submits, B goes back.</small>")
            with gr.Column(visible=False, elem_id="finish-confirm") as confirm_col:
                gr.Markdown(FINISH_QUESTION)
                with gr.Row():
                    keep_btn = gr.Button("Keep rating", elem_id="finish-cancel")
                    confirm_btn = gr.Button(
                        "Yes, finish", variant="stop", elem_id="finish-confirm-btn"
                    )
            # The current item travels with each request; the server re-checks it.
            image_id = gr.Textbox(visible="hidden", elem_id="image-id", elem_classes=["gb-hidden"])
        with gr.Column(visible=False, elem_id="done-screen") as done_col:
            done_msg = gr.Markdown(elem_id="done-message")
            more_btn = gr.Button("Rate more images", elem_id="more-btn")
        state = gr.JSON(visible="hidden", elem_id="state", elem_classes=["gb-hidden"])

        outputs = [
            consent_col,
            rate_col,
            done_col,
            code_box,
            image_id,
            image,
            prompt,
            *radios,
            progress,
            message,
            done_msg,
            consent_msg,
            confirm_col,
            state,  # last: the JSON view API callers read
        ]

        def render(view: View) -> list[Any]:
            on_item = view.screen == "item"
            answers = [view.answers.get(c["name"]) for c in criteria]
            return [
                gr.update(visible=view.screen == "consent"),
                gr.update(visible=view.screen in ("item", "review")),
                gr.update(visible=view.screen == "done"),
                view.code,
                view.image_id,
                gr.update(value=view.image_path or None, visible=on_item),
                f"**Prompt:** {plain_markdown(view.prompt)}" if on_item else "",
                *[gr.update(value=a, visible=on_item) for a in answers],
                f"**Progress: {view.progress}**",
                view.message,
                f"### Thank you!\n\n{view.message}\n\nYour code: `{view.code}`",
                # said where the rater looks; the next success clears it
                f"**{view.message}**" if view.screen == "consent" and view.message else "",
                gr.update(visible=False),  # any action closes the Finish question
                view.as_dict(),
            ]

        def shown(action: str, make_view: Callable[[], View]) -> list[Any]:
            """Run an action; a refused request becomes a visible error, never a traceback."""
            return render(guarded(action, make_view))

        def on_start(agree: Any, request: gr.Request) -> list[Any]:
            login = getattr(request, "username", None) if request is not None else None
            address = client_address(request)
            return shown("start", lambda: service.start(agree is True, login, address))

        # Postponed annotations hide gr.Request from Gradio's injection; name it explicitly.
        on_start.__annotations__["request"] = gr.Request

        def on_resume(code: Any) -> list[Any]:
            return shown("resume", lambda: service.resume(text_input(code)))

        def on_submit(code: Any, current: Any, *answers: Any) -> list[Any]:
            named = {
                c["name"]: text_input(a) or None for c, a in zip(criteria, answers, strict=False)
            }
            return shown(
                "submit", lambda: service.submit(text_input(code), text_input(current), named)
            )

        def on_back(code: Any, current: Any) -> list[Any]:
            return shown("back", lambda: service.back(text_input(code), text_input(current)))

        def on_finish(code: Any) -> list[Any]:
            return shown("finish", lambda: service.finish(text_input(code)))

        def on_more(code: Any) -> list[Any]:
            return shown("more", lambda: service.more(text_input(code)))

        # preprocess=False: inputs arrive raw and the service checks them, so a forged
        # value is refused by our message, not by a component's error echoing it.
        start_btn.click(on_start, [consent], outputs, api_name="start", preprocess=False)
        resume_btn.click(on_resume, [code_in], outputs, api_name="resume", preprocess=False)
        submit_btn.click(
            on_submit,
            [code_box, image_id, *radios],
            outputs,
            api_name="submit",
            preprocess=False,
        )
        back_btn.click(on_back, [code_box, image_id], outputs, api_name="back", preprocess=False)
        # Finish only asks; "Yes, finish" hands the batch back (the /finish endpoint)
        finish_btn.click(
            lambda: gr.update(visible=True), None, confirm_col, api_visibility="private"
        )
        keep_btn.click(
            lambda: gr.update(visible=False), None, confirm_col, api_visibility="private"
        )
        confirm_btn.click(on_finish, [code_box], outputs, api_name="finish", preprocess=False)
        more_btn.click(on_more, [code_box], outputs, api_name="more", preprocess=False)

        gr.Navbar(visible=False)  # type: ignore[attr-defined]  # no link to the admin page
    with demo.route("Study admin", ADMIN_ROUTE, show_in_navbar=False):
        admin_panel(study, service, admin_users, guard or LoginGuard(admin_users or {}))
    return demo


def admin_panel(
    study: Study, service: RatingService, admin_users: dict[str, str] | None, logins: LoginGuard
) -> None:
    """The "Study admin" panel (on the admin route of the Blocks being built)."""
    import gradio as gr

    with gr.Column(elem_id="admin"):
        gr.Markdown("## Study admin")
        if not admin_users:
            gr.Markdown("Admin is off: start the server with `--auth-file`.")
        else:
            with gr.Row():
                admin_user = gr.Textbox(label="User", elem_id="admin-user")
                admin_password = gr.Textbox(
                    label="Password", type="password", elem_id="admin-password"
                )
            admin_btn = gr.Button("Show progress and export", elem_id="admin-btn")
            # Nothing but the login until a login succeeds: no empty tables, no file box,
            # and so a refused login is its message alone (no output to mark as failed).
            with gr.Column(visible=False, elem_id="admin-panel") as panel:
                summary = gr.Markdown()
                per_image = gr.Dataframe(label="Progress per image", interactive=False)
                per_participant = gr.Dataframe(label="Progress per participant", interactive=False)
                export_file = gr.File(label="Ratings export (CSV)", interactive=False)

            exports = ExportFolder(study.folder)

            def on_admin(user: Any, password: Any, request: gr.Request) -> list[Any]:
                address = client_address(request) or "local"
                try:
                    logins.attempt(address, text_input(user), text_input(password))
                except LoginRefused as exc:  # the panel stays hidden: only the message shows
                    raise gr.Error(str(exc), print_exception=False) from None
                snapshot: list[Any] = guarded(
                    "admin", lambda: admin_snapshot(study, service, exports)
                )
                return snapshot

            on_admin.__annotations__["request"] = gr.Request
            admin_btn.click(
                on_admin,
                [admin_user, admin_password],
                [summary, per_image, per_participant, export_file],
                api_name="admin",
                preprocess=False,
            ).success(lambda: gr.update(visible=True), None, panel, api_name=False)


def guarded(action: str, run: Callable[[], Any]) -> Any:
    """Run a page action: a refusal is shown without a traceback; a bug logs one, no input.

    The log line of an unexpected error names the action and the exception type and
    gives the traceback's frames, but not the message, which may echo what was sent.
    """
    import gradio as gr

    try:
        return run()
    except RatingError as exc:
        LOG.info("refused %s: %s", action, type(exc).__name__)
        raise gr.Error(str(exc), print_exception=False) from None
    except Exception as exc:
        frames = "".join(traceback.format_tb(exc.__traceback__))
        LOG.error("internal error in %s: %s\n%s", action, type(exc).__name__, frames)
        raise gr.Error(
            "Something went wrong on the server; your saved answers are safe. Please try again.",
            print_exception=False,
        ) from None


#: The admin's export folder inside the study folder (owner-only, removed at exit).
EXPORT_DIR = ".admin-export"


class ExportFolder:
    """One private folder for the admin's export CSV, removed when the process exits.

    In the study's own folder (``STUDY/.admin-export``, mode 0700) when ``root`` is
    given, else a temporary folder. Every admin click rewrites the same file; the folder
    is removed at exit, on SIGTERM too (:func:`exit_on_sigterm`).
    """

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else None
        self._path: Path | None = None
        self._lock = threading.Lock()

    @property
    def path(self) -> Path:
        with self._lock:
            if self._path is None or not self._path.is_dir():
                if self.root is None:
                    self._path = Path(tempfile.mkdtemp(prefix="glyphbench-export-"))
                else:
                    self._path = self.root / EXPORT_DIR
                    self._path.mkdir(mode=0o700, exist_ok=True)
                    self._path.chmod(0o700)
                atexit.register(shutil.rmtree, self._path, True)
            return self._path


def exit_on_sigterm() -> None:
    """Make SIGTERM exit like Ctrl-C does, so exit handlers remove the private folders.

    Python's default for SIGTERM ends the process without running ``atexit``; the
    admin's export (ratings with every answer) would stay on disk.
    """
    import signal

    def stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, stop)


def private_temp_dir(study: Study) -> Path:
    """Gradio's cache for this server (files it serves, the admin CSV): owner-only, removed
    at exit, in the study's folder instead of the shared ``/tmp/gradio``."""
    folder = Path(tempfile.mkdtemp(prefix=".serve-", dir=study.folder))
    folder.chmod(0o700)
    atexit.register(shutil.rmtree, folder, True)
    return folder


def admin_snapshot(
    study: Study, service: RatingService, exports: ExportFolder | None = None
) -> list[Any]:
    """Summary text, progress tables and a freshly written export CSV (in ``exports``)."""
    from human_eval.report import export_ratings

    store = service.store
    images = store.progress_per_image()
    people = store.progress_per_participant()
    regular = images[~images["is_gold"]]
    complete = int((regular["raters"] >= store.k).sum())
    done = int(regular["raters"].clip(upper=store.k).sum())
    summary = (
        f"**{done} of {len(regular) * store.k} ratings** ({len(regular)} images x {store.k}"
        f" raters); **{complete} / {len(regular)}** images have {store.k} ratings; "
        f"{len(people)} participants, {int(people['finished'].sum())} finished."
    )
    # the images that still need raters first, gold items last
    images = images.sort_values(["is_gold", "raters", "claimed", "image_id"], kind="stable")
    people = people.assign(participant=[f"P{k + 1:03d}" for k in range(len(people))])
    people = people[["participant", "assigned", "done", "finished"]]
    path = (exports or ExportFolder()).path / "ratings.csv"
    export_ratings(study, path)
    return [summary, images.reset_index(drop=True), people, str(path)]


def check_bind(host: str, port: int | None) -> None:
    """InputError (one line) for a port outside 1-65535 or a host that is no address here.

    >>> check_bind("127.0.0.1", 7860)
    >>> check_bind("127.0.0.1", 99999)
    Traceback (most recent call last):
    ...
    bench.core.errors.InputError: --port 99999 is not a port: use 1 to 65535
    """
    import socket

    if port is not None and not 1 <= port <= 65535:
        raise InputError(None, f"--port {port} is not a port: use 1 to 65535")
    try:
        socket.getaddrinfo(host, None)
    except (OSError, UnicodeError) as exc:
        raise InputError(
            None, f"--host {host!r} is not an address or name of this machine ({exc})"
        ) from None


def port_in_use(host: str, port: int | None) -> InputError:
    """The one-line error for a port the server cannot have: it names ``--port``.

    >>> print(port_in_use("127.0.0.1", 7860))
    --port 7860 is in use on 127.0.0.1: stop what holds it, or serve on another (--port 7861)
    >>> print(port_in_use("127.0.0.1", None))
    no free port on 127.0.0.1 for the server: choose one with --port
    """
    if port is None:
        return InputError(None, f"no free port on {host} for the server: choose one with --port")
    other = port + 1 if port < 65535 else port - 1
    return InputError(
        None,
        f"--port {port} is in use on {host}: stop what holds it, or serve on another "
        f"(--port {other})",
    )


def check_port(host: str, port: int | None) -> None:
    """:func:`port_in_use` when ``port`` cannot be bound on ``host`` now (None: Gradio picks)."""
    import socket

    if port is None:
        return
    try:
        info = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
        with socket.socket(info[0], socket.SOCK_STREAM) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
            probe.bind(info[4])
    except OSError:
        raise port_in_use(host, port) from None


def launch(
    study: Study,
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    auth_file: str | Path | None = None,
    rater_auth_file: str | Path | None = None,
    block: bool = True,
    quiet: bool = False,
    max_claims_per_address: int | None = None,
    guard: LoginGuard | None = None,
) -> Any:
    """Build and launch the app: localhost by default, serving only the study's images."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    if "GRADIO_TEMP_DIR" not in os.environ:
        os.environ["GRADIO_TEMP_DIR"] = str(private_temp_dir(study))
    if block:
        exit_on_sigterm()
    admin_users = read_auth_file(auth_file) if auth_file else None
    rater_users = read_auth_file(rater_auth_file) if rater_auth_file else None
    service = RatingService(study, max_claims_per_address=max_claims_per_address)
    demo = build_app(study, admin_users=admin_users, service=service, guard=guard)
    demo.queue(default_concurrency_limit=16)
    try:
        _launch(demo, study, host, port, rater_users)
    except OSError as exc:
        if "Cannot find empty port" in str(exc):  # Gradio's words name its own settings
            raise port_in_use(host, port) from None
        raise
    url = str(getattr(demo, "local_url", "") or f"http://{host}:{port}/").rstrip("/")
    if not quiet:
        print(f"raters open {url}/", flush=True)
        if admin_users:
            print(f"the admin page is {url}{ADMIN_ROUTE} (not linked from the raters' page)")
        else:
            print("no admin page: start with --auth-file to have one", flush=True)
    if block:
        demo.block_thread()
    return demo


def _launch(
    demo: Any,
    study: Study,
    host: str,
    port: int | None,
    rater_users: dict[str, str] | None,
) -> None:
    """Gradio's launch, quiet: its own lines (the local URL, the ``share=True`` hint) are
    replaced by :func:`launch`'s, which name this app's addresses and options."""
    from starlette.middleware import Middleware

    private = [study.folder / name for name in ("manifest.parquet", "study.json")]
    private += list(study.folder.glob("ratings.sqlite*"))
    demo.launch(
        server_name=host,
        server_port=port,
        auth=list(rater_users.items()) if rater_users else None,
        allowed_paths=[str(study.images_dir)],
        blocked_paths=[str(p) for p in private],
        prevent_thread_lock=True,  # the URLs are printed first, then the thread blocks
        quiet=True,
        show_error=True,
        max_file_size=1,  # no uploads (RequestLimits refuses them before Gradio sees them)
        app_kwargs={"middleware": [Middleware(RequestLimits)]},
        footer_links=[],
        head=SHORTCUTS_JS,
        css=HIDDEN_CSS,
        theme=page_theme(),
        ssr_mode=False,
        mcp_server=False,
    )
