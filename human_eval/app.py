"""The rating web app (Gradio Blocks) over :class:`human_eval.service.RatingService`.

Screens: instructions + consent -> one image at a time (prompt, one question per
criterion, Back / Submit / Finish, progress "k / n") -> thank-you. The model
behind an image is never sent to the page: images are the study's own copies
named by opaque ids.

Every button is also a named API endpoint (``/start``, ``/resume``, ``/submit``,
``/back``, ``/finish``, ``/more``) running the same handler, so ``gradio_client`` drives
exactly the code path of the page. Each returns, as its last output, a JSON view
of the new state (screen, code, image_id, answers, progress, message).

Admin: a collapsed "Study admin" panel asks for a user name and password that
the server checks against the ``--auth-file`` (``user:password`` lines, compared
in constant time); it shows progress per image and per participant and offers
the export. Gradio's own ``auth=`` would put the whole app (raters included)
behind one login, which is why the admin check is separate. Optional rater
logins (``rater_auth``) use Gradio's ``auth=``; the login then is the
participant id, so logging in again resumes.

Gradio is imported inside :func:`build_app`, so importing this module is cheap.
"""

from __future__ import annotations

import hmac
import os
import tempfile
from pathlib import Path
from typing import Any

from bench.errors import InputError
from human_eval.service import RatingError, RatingService, View
from human_eval.study import Study

#: Components that carry state but are not for the eye.
HIDDEN_CSS = ".gb-hidden { display: none !important; }"

#: Keyboard shortcuts: y/n (or 1-5 on the five-point scale) answer the first
#: unanswered question, Enter submits, b goes back. Typing in a text box is ignored.
SHORTCUTS_JS = """
<script>
(() => {
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
    const key = e.key.toLowerCase();
    if (key === 'enter' && t && t.tagName === 'BUTTON') return;  // the button handles its own Enter
    if (key === 'enter') { const b = button('submit-btn'); if (b) { b.click(); e.preventDefault(); } return; }
    if (key === 'b') { const b = button('back-btn'); if (b) { b.click(); e.preventDefault(); } return; }
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
    """Parse ``user:password`` lines (blank lines and ``#`` comments ignored)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(path, "auth file not found")
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


def build_app(
    study: Study,
    *,
    admin_users: dict[str, str] | None = None,
    service: RatingService | None = None,
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

    with gr.Blocks(title="Image rating", analytics_enabled=False) as demo:
        with gr.Column(visible=True, elem_id="consent-screen") as consent_col:
            gr.Markdown(INSTRUCTIONS.format(questions=questions, keys=keys))
            consent = gr.Checkbox(
                label="I have read the instructions and agree to take part.", elem_id="consent"
            )
            start_btn = gr.Button("Start", variant="primary", elem_id="start-btn")
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
            image = gr.Image(
                type="filepath",
                interactive=False,
                show_label=False,
                format="png",
                height=420,
                buttons=["fullscreen"],
                elem_id="item-image",
            )
            prompt = gr.Markdown(elem_id="prompt")
            radios = [
                gr.Radio(choices=labels, label=c["question"], elem_id=f"q-{c['name']}")
                for c in criteria
            ]
            message = gr.Markdown(elem_id="message")
            gr.Markdown(f"<small>Keyboard: {keys}, Enter submits, B goes back.</small>")
            with gr.Row():
                back_btn = gr.Button("Back", elem_id="back-btn")
                submit_btn = gr.Button("Submit", variant="primary", elem_id="submit-btn")
                finish_btn = gr.Button("Finish", variant="stop", elem_id="finish-btn")
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
            state,
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
                f"**Prompt:** {view.prompt}" if on_item else "",
                *[gr.update(value=a, visible=on_item) for a in answers],
                f"**Progress: {view.progress}**",
                view.message,
                f"### Thank you!\n\n{view.message}\n\nYour code: `{view.code}`",
                view.as_dict(),
            ]

        def shown(make_view: Any) -> list[Any]:
            """Run an action; a refused request becomes a visible error, never a traceback."""
            try:
                view = make_view()
            except RatingError as exc:
                raise gr.Error(str(exc)) from None
            if view.screen == "consent" and view.message:
                gr.Warning(view.message)  # the message box lives on the rating screen
            return render(view)

        def on_start(agree: bool, request: gr.Request) -> list[Any]:
            login = getattr(request, "username", None) if request is not None else None
            return shown(lambda: service.start(bool(agree), login=login))

        # Postponed annotations hide gr.Request from Gradio's injection; name it explicitly.
        on_start.__annotations__["request"] = gr.Request

        def on_resume(code: str) -> list[Any]:
            return shown(lambda: service.resume(code))

        def on_submit(code: str, current: str, *answers: str | None) -> list[Any]:
            named = {c["name"]: a for c, a in zip(criteria, answers, strict=False)}
            return shown(lambda: service.submit(code, current, named))

        def on_back(code: str, current: str) -> list[Any]:
            return shown(lambda: service.back(code, current))

        def on_finish(code: str) -> list[Any]:
            return shown(lambda: service.finish(code))

        def on_more(code: str) -> list[Any]:
            return shown(lambda: service.more(code))

        start_btn.click(on_start, [consent], outputs, api_name="start")
        resume_btn.click(on_resume, [code_in], outputs, api_name="resume")
        submit_btn.click(on_submit, [code_box, image_id, *radios], outputs, api_name="submit")
        back_btn.click(on_back, [code_box, image_id], outputs, api_name="back")
        finish_btn.click(on_finish, [code_box], outputs, api_name="finish")
        more_btn.click(on_more, [code_box], outputs, api_name="more")

        with gr.Accordion("Study admin", open=False, elem_id="admin"):
            if not admin_users:
                gr.Markdown("Admin is off: start the server with `--auth-file`.")
            else:
                with gr.Row():
                    admin_user = gr.Textbox(label="User", elem_id="admin-user")
                    admin_password = gr.Textbox(
                        label="Password", type="password", elem_id="admin-password"
                    )
                admin_btn = gr.Button("Show progress and export", elem_id="admin-btn")
                summary = gr.Markdown()
                per_image = gr.Dataframe(label="Progress per image", interactive=False)
                per_participant = gr.Dataframe(label="Progress per participant", interactive=False)
                export_file = gr.File(label="Ratings export (CSV)", interactive=False)

                def on_admin(user: str, password: str) -> list[Any]:
                    if not check_password(admin_users, user, password):
                        raise gr.Error("Wrong user or password.")
                    return admin_snapshot(study, service)

                admin_btn.click(
                    on_admin,
                    [admin_user, admin_password],
                    [summary, per_image, per_participant, export_file],
                    api_name="admin",
                )
    return demo


def admin_snapshot(study: Study, service: RatingService) -> list[Any]:
    """Summary text, progress tables and a freshly written export CSV (in a temp folder)."""
    from human_eval.report import export_ratings

    store = service.store
    images = store.progress_per_image()
    people = store.progress_per_participant()
    regular = images[~images["is_gold"]]
    complete = int((regular["raters"] >= store.k).sum())
    summary = (
        f"**{complete} / {len(regular)}** images have {store.k} ratings; "
        f"{len(people)} participants, {int(people['finished'].sum())} finished."
    )
    people = people.assign(participant=[f"P{k + 1:03d}" for k in range(len(people))])
    people = people[["participant", "assigned", "done", "finished"]]
    folder = Path(tempfile.mkdtemp(prefix="glyphbench-export-"))
    path = folder / "ratings.csv"
    export_ratings(study, path)
    return [summary, images, people, str(path)]


def launch(
    study: Study,
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    auth_file: str | Path | None = None,
    rater_auth_file: str | Path | None = None,
    block: bool = True,
    quiet: bool = False,
) -> Any:
    """Build and launch the app: localhost by default, serving only the study's images."""
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    admin_users = read_auth_file(auth_file) if auth_file else None
    rater_users = read_auth_file(rater_auth_file) if rater_auth_file else None
    demo = build_app(study, admin_users=admin_users)
    demo.queue(default_concurrency_limit=16)
    private = [study.folder / name for name in ("manifest.parquet", "study.json")]
    private += list(study.folder.glob("ratings.sqlite*"))
    demo.launch(
        server_name=host,
        server_port=port,
        auth=list(rater_users.items()) if rater_users else None,
        allowed_paths=[str(study.images_dir)],
        blocked_paths=[str(p) for p in private],
        prevent_thread_lock=not block,
        quiet=quiet,
        show_error=True,
        footer_links=[],
        head=SHORTCUTS_JS,
        css=HIDDEN_CSS,
        ssr_mode=False,
        mcp_server=False,
    )
    return demo
