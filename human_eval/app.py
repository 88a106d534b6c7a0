"""The rating web app (Gradio Blocks) over :class:`glyphbench.human_eval.service.RatingService`.

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
logins (``rater_auth``) use Gradio's ``auth=`` with a check limited like the
admin's (:func:`glyphbench.human_eval.guard.rater_login`); the login then is the
participant id, so logging in again resumes. A successful admin login leaves a
device token in the browser (``gr.BrowserState``), which keeps that browser out of
the locks strangers' guesses set (:class:`glyphbench.human_eval.guard.LoginGuard`).

What the app lets in (admin logins rate-limited, uploads refused, request bodies
capped, inputs read raw) is :mod:`glyphbench.human_eval.guard`; starting the server
(:func:`glyphbench.human_eval.serve.launch`) is :mod:`glyphbench.human_eval.serve`. Inputs are
checked by
the service, so a refused request is logged as one line without the input and never
as a traceback; an unexpected error logs its traceback without the exception's
message; the admin export is written to one folder per app, removed at exit.

Gradio is imported inside :func:`build_app`, so importing this module is cheap.
"""

from __future__ import annotations

import atexit
import hashlib
import hmac
import logging
import shutil
import tempfile
import threading
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

from glyphbench.core.errors import InputError
from glyphbench.human_eval.guard import (
    LoginGuard,
    LoginRefused,
    client_address,
    plain_markdown,
    text_input,
)
from glyphbench.human_eval.report import export_ratings
from glyphbench.human_eval.service import RatingError, RatingService, View
from glyphbench.human_eval.study import Study

LOG = logging.getLogger("glyphbench.rating_app")

#: Components that carry state but are not for the eye; the image at a size legibility
#: can be judged at.
HIDDEN_CSS = """.gb-hidden { display: none !important; }
.nav-holder { display: none !important; }
#item-image, #item-image .image-container, #item-image .image-frame {
  height: auto !important; max-height: none !important; }
#item-image img { width: auto !important; height: auto !important; max-width: 100% !important;
                  max-height: calc(100vh - 90px) !important; min-width: min(384px, 80vw);
                  object-fit: contain; cursor: zoom-in;
                  border: 1px solid #8a93a3; background: #fff; box-sizing: content-box; }
#gb-zoom { display: none; position: fixed; inset: 0; z-index: 2000; overflow: auto;
           background: rgba(0, 0, 0, 0.85); cursor: zoom-out; }
#gb-zoom img { display: block; margin: auto; max-width: none; }
#finish-confirm { border: 1px solid #e0b400; background: #fff8db; border-radius: 6px;
                  padding: 8px; position: fixed; bottom: 24px; left: 50%;
                  transform: translateX(-50%); z-index: 1000; width: min(560px, 90vw);
                  box-shadow: 0 4px 18px rgba(0, 0, 0, 0.25); }
"""

# The image is shown at its own size (never smaller, unless wider than its column or taller
# than the window less the progress row: a 1024-px image at 1366x768 is shown whole, above
# the fold; a small image is enlarged to 384 px), left of the questions, so Submit stays in
# view on a 1366x768 laptop; a click shows it at its own size or larger, filling the window
# (ZOOM_JS). A thin frame marks its edges, so a blank image (a blank control) reads as an
# empty picture, not as one that failed to load; the instructions say such images occur
# (tests/human_eval/test_human_app_browser.py::test_rating_page_fits_a_laptop_screen,
# ::test_images_are_shown_at_their_own_size_and_zoom_on_click).

#: The page's fonts: the machine's own, one family for every weight. Gradio's default theme
#: loads web fonts in some weights only, so bold text (buttons, **Prompt:**) fell back to
#: another family offline and the page mixed two fonts.
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
checks with a known answer. Some images show no text, or nothing at all (a framed
empty picture): that is intended; answer what you see. You can go **Back** to change
your previous answer. You will get a **resume code**: keep it to close the page and continue later.

**Keyboard:** {keys}, **Enter** submits, **B** goes back.

**Consent.** Your answers and the time you spend per image are stored with a
random participant number, never with your name; they are used only to measure
how well automatic scores agree with people, and published only in aggregate or
anonymised. You can stop at any time.
"""


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
            progress = gr.Markdown(elem_id="progress")  # one line above the image
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
                    code_box = gr.Textbox(  # beside the image: the row above it stays one line
                        label="Your resume code (keep it to continue later)",
                        interactive=False,
                        elem_id="code",
                    )
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
            # The browser's device token (LoginGuard), kept in its localStorage.
            storage_key, secret = device_storage(logins)
            device = gr.BrowserState("", storage_key=storage_key, secret=secret)
            # Nothing but the login until a login succeeds: no empty tables, no file box,
            # and so a refused login is its message alone (no output to mark as failed).
            with gr.Column(visible=False, elem_id="admin-panel") as panel:
                summary = gr.Markdown()
                per_image = gr.Dataframe(label="Progress per image", interactive=False)
                per_participant = gr.Dataframe(label="Progress per participant", interactive=False)
                export_file = gr.File(label="Ratings export (CSV)", interactive=False)

            exports = ExportFolder(study.folder)

            def on_admin(
                user: Any, password: Any, request: gr.Request, token: Any = None
            ) -> list[Any]:
                address = client_address(request)
                try:
                    token = logins.attempt(
                        address, text_input(user), text_input(password), text_input(token)
                    )
                except LoginRefused as exc:  # the panel stays hidden: only the message shows
                    raise gr.Error(str(exc), print_exception=False) from None
                summary, images, people, path = guarded(
                    "admin", lambda: admin_snapshot(study, service, exports)
                )
                return [summary, images, people, token, path]

            on_admin.__annotations__["request"] = gr.Request
            admin_btn.click(
                on_admin,
                [admin_user, admin_password, device],
                [summary, per_image, per_participant, device, export_file],
                api_name="admin",
                preprocess=False,
            ).success(lambda: gr.update(visible=True), None, panel, api_name=False)


def device_storage(logins: LoginGuard) -> tuple[str, str]:
    """Where the admin page keeps its device token: a localStorage key and an encryption
    secret derived from the study's key, so they last across restarts and differ per study."""
    derived = hmac.new(logins.device_key, b"admin-page-storage", hashlib.sha256).hexdigest()
    return f"glyphbench-admin-{derived[:12]}", derived[12:44]


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


def admin_snapshot(
    study: Study, service: RatingService, exports: ExportFolder | None = None
) -> list[Any]:
    """Summary text, progress tables and a freshly written export CSV (in ``exports``)."""

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
