"""What the rating app does, without any web framework: start, resume, submit, back, finish.

The Gradio app (:mod:`glyphbench.human_eval.app`) is a thin skin over :class:`RatingService`;
every page action and every named API endpoint goes through these methods, so
the checks live in one place:

* the participant is known by their resume code (or login), never by a value
  the page could forge;
* an answer is accepted only for an image in that participant's claimed batch;
* answers must be one of the scale's labels, for every criterion.

No one can stall the study by claiming images they do not rate:

* one open batch per participant: "Rate more" claims a new batch only once the
  current one is rated (or handed back with Finish);
* a cap on the live unrated claims of the participants started from one client
  address (``max_claims_per_address`` in study.json; default a quarter of the
  study's ratings, at least one batch); a start beyond it is refused with a message.
  Browsers on the serving machine itself (a loopback address, :func:`is_local`) are
  not capped: a local pilot puts several raters on one machine;
* claims stop counting :data:`~glyphbench.human_eval.store.DEFAULT_CLAIM_TTL_S` after the
  participant's last action, and when nothing can be claimed the message says
  whether the images are done or merely claimed by others for now.

Each method returns a :class:`View`: which screen to show and what is on it.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field
from pathlib import Path

from glyphbench.human_eval.store import AnswerFinal, Item, NotAssigned, Participant, Store
from glyphbench.human_eval.study import Study, open_store

DONE_MESSAGE = "Every image already has enough ratings. Thank you!"


HANDED_BACK = "This image is no longer in your batch: it was handed back when you pressed Finish."
FINAL = (
    "You pressed Finish: the answers you gave before it are saved and final. "
    "Press 'Rate more images' to rate new images."
)
ADDRESS_FULL = (
    "Too many unfinished batches were started from your network address. Resume yours with "
    "its code, or finish it, before starting another."
)


def is_local(address: str | None) -> bool:
    """Whether a client address is this machine's own (loopback: 127.0.0.0/8, ::1).

    >>> is_local("127.0.0.1"), is_local("::1"), is_local("10.0.0.7"), is_local("testclient")
    (True, True, False, False)
    """
    import ipaddress

    try:
        return ipaddress.ip_address(str(address)).is_loopback
    except ValueError:
        return False


class RatingError(Exception):
    """A request the server refuses (unknown code, image outside the batch, bad answer)."""


@dataclass
class View:
    """The state of one participant's page."""

    screen: str  # "consent" | "item" | "review" (all rated, not finished) | "done"
    code: str = ""
    image_id: str = ""
    image_path: str = ""
    prompt: str = ""
    answers: dict[str, str] = field(default_factory=dict)  # criterion -> label
    done: int = 0
    total: int = 0
    message: str = ""

    @property
    def progress(self) -> str:
        return f"{self.done} / {self.total}"

    def as_dict(self) -> dict[str, object]:
        """JSON-friendly view (without the server-side image path)."""
        data = asdict(self)
        data.pop("image_path")
        data["progress"] = self.progress
        return data


class RatingService:
    """The rating flow over one study and its store."""

    def __init__(
        self,
        study: Study,
        store: Store | None = None,
        *,
        max_claims_per_address: int | None = None,
    ) -> None:
        self.study = study
        config = study.config
        self.store = store or open_store(study)
        manifest = study.manifest
        self.store.add_images(
            manifest.loc[~manifest["is_gold"], "image_id"],
            manifest.loc[manifest["is_gold"], "image_id"],
        )
        self.batch_size = int(config["batch_size"])
        self.gold_per_batch = int(config.get("gold_per_batch", 0))
        slots = int((~manifest["is_gold"]).sum()) * self.store.k
        self.max_claims_per_address = int(
            max_claims_per_address
            or config.get("max_claims_per_address")
            or max(self.batch_size + self.gold_per_batch, slots // 4)
        )
        #: client address -> participants started from it (in memory: addresses are not stored)
        self._addresses: dict[str, set[str]] = {}
        self._starting = threading.Lock()
        self.criteria = study.criterion_names
        self.scale = study.scale  # label -> value
        self.labels = {v: k for k, v in self.scale.items()}
        self._prompts = dict(zip(manifest["image_id"], manifest["prompt"], strict=True))
        self._files = {
            image_id: str((study.folder / file).resolve())
            for image_id, file in zip(manifest["image_id"], manifest["file"], strict=True)
        }

    # -- actions --------------------------------------------------------------------

    def start(self, consent: bool, login: str | None = None, client: str | None = None) -> View:
        """A new participant (or the logged-in one): claim a batch and show its first item.

        ``client`` is the request's address: starts from one address together hold at
        most ``max_claims_per_address`` unrated claims (None, or this machine's own
        address: no cap).
        """
        if not consent:
            return View(
                "consent", message="Please read the instructions and tick the consent box first."
            )
        with self._starting:  # check the cap and claim as one step
            holders = self._addresses.get(client, set()) if client else set()
            capped = client and not is_local(client)
            full = capped and self.store.open_claims(holders) >= self.max_claims_per_address
            if full and not (login and self.store.find_login(login)):  # a known login resumes
                return View("consent", message=ADDRESS_FULL)
            participant = self.store.new_participant(login=login or None)
            if client:
                self._addresses.setdefault(client, set()).add(participant.participant_id)
            if not self.store.batch(participant.participant_id):
                self._claim(participant)
        return self._next(participant, after=None)

    def resume(self, code: str) -> View:
        """Continue where the participant left off (first unrated item)."""
        participant = self._participant(code)
        self.store.drop_completed_claims(participant.participant_id)
        items = self.store.batch(participant.participant_id)
        if not items:
            self._claim(participant)
        elif all(item.done for item in items) and self._finished(participant):
            return View(
                "done",
                code=participant.resume_code,
                done=len(items),
                total=len(items),
                message="You already finished; your answers are saved.",
            )
        return self._next(participant, after=None)

    def submit(self, code: str, image_id: str, answers: dict[str, str | None]) -> View:
        """Save the answers for one item (insert or edit) and move to the next unrated one."""
        participant = self._participant(code)
        if not image_id:  # Submit pressed on the "all rated" screen: nothing to save
            return self._next(participant, after=None)
        self._check(participant, image_id)
        missing = [c for c in self.criteria if not answers.get(c)]
        if missing:
            view = self._item(participant, image_id)
            view.answers.update({c: str(v) for c, v in answers.items() if v})
            view.message = "Please answer every question before submitting."
            return view
        values = {}
        for criterion in self.criteria:
            label = str(answers[criterion])
            if label not in self.scale:
                raise RatingError(f"{label!r} is not an answer on this scale")
            values[criterion] = self.scale[label]
        try:
            self.store.save_answers(participant.participant_id, image_id, values)
        except NotAssigned:  # Finish (in another tab) handed it back meanwhile
            raise RatingError(HANDED_BACK) from None
        except AnswerFinal:  # rated, then Finish: a finished rater's answers are final
            raise RatingError(FINAL) from None
        return self._next(participant, after=image_id)

    def back(self, code: str, image_id: str) -> View:
        """Show the item before ``image_id`` (or the last one from the review screen) to edit it."""
        participant = self._participant(code)
        items = self.store.batch(participant.participant_id)
        ids = [item.image_id for item in items]
        if not image_id:
            target = ids[-1] if ids else ""
        else:
            self._check(participant, image_id)
            if image_id not in ids:  # handed back by Finish since the check
                raise RatingError(HANDED_BACK)
            index = ids.index(image_id)
            if index == 0:
                view = self._item(participant, image_id)
                view.message = "This is the first image."
                return view
            target = ids[index - 1]
        if not target:
            return self._next(participant, after=None)
        if items[ids.index(target)].final:  # before Finish: shown no more, never edited
            if not image_id:
                raise RatingError(FINAL)
            view = self._item(participant, image_id)
            view.message = (
                "This is the first image since you pressed Finish; the answers you gave "
                "before it are saved and final."
            )
            return view
        return self._item(participant, target)

    def finish(self, code: str) -> View:
        """End the session: release unrated claims so others can rate them."""
        participant = self._participant(code)
        released = self.store.finish(participant.participant_id)
        items = self.store.batch(participant.participant_id)
        message = "Your answers are saved."
        if released:
            message += f" {released} unrated image(s) were handed back to other raters."
        return View(
            "done",
            code=participant.resume_code,
            done=sum(i.done for i in items),
            total=len(items),
            message=message,
        )

    def more(self, code: str) -> View:
        """Claim another batch once the current one is rated (one open batch per participant)."""
        participant = self._participant(code)
        if self.store.open_claims([participant.participant_id]):
            view = self._next(participant, after=None)
            view.message = "Please rate the images you have first."
            return view
        claimed = self._claim(participant)
        if not claimed:
            items = self.store.batch(participant.participant_id)
            return View(
                "done",
                code=participant.resume_code,
                done=sum(i.done for i in items),
                total=len(items),
                message=self._nothing_left(participant),
            )
        return self._next(participant, after=None)

    # -- helpers --------------------------------------------------------------------

    def _claim(self, participant: Participant) -> list[str]:
        return self.store.claim_batch(
            participant.participant_id, self.batch_size, self.gold_per_batch
        )

    def _nothing_left(self, participant: Participant) -> str:
        """Why no image could be claimed: all done, or the rest merely claimed for now."""
        waiting = self.store.unrated_claimed_by_others(participant.participant_id)
        if not waiting:
            return DONE_MESSAGE
        minutes = max(1, round(self.store.claim_ttl / 60))
        return (
            f"The {waiting} image(s) that still need ratings are being rated by others right "
            f"now. Please try again later: images come back {minutes} minute(s) after their "
            "rater stops."
        )

    def _participant(self, code: str) -> Participant:
        participant = self.store.find_participant(code or "")
        if participant is None:
            raise RatingError("Unknown resume code.")
        return participant

    def _finished(self, participant: Participant) -> bool:
        frame = self.store.participants_frame()
        row = frame[frame["participant_id"] == participant.participant_id]
        return bool(len(row)) and bool(row["finished_at"].notna().iloc[0])

    def _check(self, participant: Participant, image_id: str) -> None:
        if image_id not in self._files:
            raise RatingError("Unknown image.")
        try:
            self.store.check_assigned(participant.participant_id, image_id)
        except PermissionError:
            raise RatingError("This image is not in your batch.") from None

    def _next(self, participant: Participant, after: str | None) -> View:
        items = self.store.batch(participant.participant_id)
        start = 0
        if after is not None:
            start = next((k + 1 for k, item in enumerate(items) if item.image_id == after), 0)
        pending = [i for i in items[start:] if not i.done] or [i for i in items if not i.done]
        if pending:
            return self._item(participant, pending[0].image_id, items)
        done = sum(i.done for i in items)
        message = (
            "All images are rated. Press Finish, or Back to change an answer."
            if items
            else self._nothing_left(participant)
        )
        return View(
            "review", code=participant.resume_code, done=done, total=len(items), message=message
        )

    def _item(
        self, participant: Participant, image_id: str, items: list[Item] | None = None
    ) -> View:
        items = items if items is not None else self.store.batch(participant.participant_id)
        self.store.mark_shown(participant.participant_id, image_id)
        stored = self.store.answers(participant.participant_id, image_id)
        return View(
            "item",
            code=participant.resume_code,
            image_id=image_id,
            image_path=self._files[image_id],
            prompt=str(self._prompts[image_id]),
            answers={c: self.labels[v] for c, v in stored.items() if v in self.labels},
            done=sum(i.done for i in items),
            total=len(items),
        )

    def image_dir(self) -> Path:
        return self.study.images_dir
