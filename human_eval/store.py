"""Ratings storage: one SQLite file per study, safe under many concurrent raters.

Tables::

    images(image_id PK, is_gold)
    participants(participant_id PK, resume_code UNIQUE, login UNIQUE, created_at,
                 consented_at, finished_at, last_active_at)
    assignments(participant_id, image_id, position, claimed_at, shown_at, done_at,
                closed_at, PK(participant_id, image_id))
    ratings(participant_id, image_id, criterion, value, seconds, created_at, updated_at,
            revisions, UNIQUE(participant_id, image_id, criterion))

Concurrency: WAL journal (readers never block the writer), a busy timeout (a
writer waits instead of failing), one short-lived connection per call (safe
across the app's worker threads), and every read-modify-write in a
``BEGIN IMMEDIATE`` transaction, which takes the write lock up front so two
participants can never claim from the same stale counts.

Balancing: :meth:`Store.claim_batch` gives a participant the non-gold images
with the lowest *load* (completed ratings + live claims by others) that are
still below K, ties broken at random, never an image the participant already
had; with ``overlap`` (a pilot), images some raters who are rating hold come first
(:data:`PILOT_IDLE_S`: an abandoned session's claims do not make a pilot image).
A claim is live while its participant is active: an unrated claim stops
counting ``claim_ttl`` seconds after the participant's last action (default
:data:`DEFAULT_CLAIM_TTL_S`), so a participant who walks away does not starve an
image; Finish releases unrated claims at once, and a participant who comes back
after others completed their images is relieved of them
(:meth:`Store.drop_completed_claims`). :meth:`Store.open_claims` counts a
participant's live unrated claims, for the caps the service applies.

A file that is not a SQLite database (or cannot be opened) is an
:class:`~glyphbench.core.errors.InputError` naming it.
"""

from __future__ import annotations

import random
import secrets
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from glyphbench.core.errors import InputError

#: An unrated claim stops counting this long after its participant's last action.
DEFAULT_CLAIM_TTL_S = 20 * 60.0

SCHEMA = """
CREATE TABLE IF NOT EXISTS images (
    image_id TEXT PRIMARY KEY,
    is_gold INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS participants (
    participant_id TEXT PRIMARY KEY,
    resume_code TEXT NOT NULL UNIQUE,
    login TEXT UNIQUE,
    created_at REAL NOT NULL,
    consented_at REAL,
    finished_at REAL,
    last_active_at REAL
);
CREATE TABLE IF NOT EXISTS assignments (
    participant_id TEXT NOT NULL REFERENCES participants(participant_id),
    image_id TEXT NOT NULL REFERENCES images(image_id),
    position INTEGER NOT NULL,
    claimed_at REAL NOT NULL,
    shown_at REAL,
    done_at REAL,
    closed_at REAL,
    PRIMARY KEY (participant_id, image_id)
);
CREATE INDEX IF NOT EXISTS assignments_image ON assignments(image_id);
CREATE TABLE IF NOT EXISTS ratings (
    participant_id TEXT NOT NULL,
    image_id TEXT NOT NULL,
    criterion TEXT NOT NULL,
    value INTEGER NOT NULL,
    seconds REAL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    revisions INTEGER NOT NULL DEFAULT 0,
    UNIQUE (participant_id, image_id, criterion)
);
"""

#: Resume codes avoid look-alike characters (0/O, 1/I/L) so they survive being copied by hand.
CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"


#: Assignments that count: rated ones, and unrated ones whose participant acted within
#: the claim lifetime (parameter: the oldest activity time that still counts).
LIVE_ASSIGNMENTS = """
    SELECT a.participant_id, a.image_id, a.done_at
    FROM assignments a JOIN participants p ON p.participant_id = a.participant_id
    WHERE a.done_at IS NOT NULL
       OR MAX(a.claimed_at, COALESCE(p.last_active_at, a.claimed_at)) > ?
"""


#: An unrated claim counts towards a pilot's overlap (``overlap``) while its holder is
#: rating: they have rated an image, or acted within this many seconds. A convention, well
#: above the time one image takes in the app (a click per criterion), and far below
#: ``claim_ttl``: a session opened and left holds its claims against K, but never takes
#: the pilot's overlap away from the raters who are rating.
PILOT_IDLE_S = 120.0

#: :data:`LIVE_ASSIGNMENTS` with ``rating``: 1 for a rating, and for an unrated claim
#: whose holder is rating (parameters: the claim lifetime's oldest activity time, then
#: :data:`PILOT_IDLE_S`'s).
LIVE_WITH_RATING = """
    SELECT a.participant_id, a.image_id, a.done_at,
           (a.done_at IS NOT NULL OR COALESCE(p.last_active_at, a.claimed_at) > ?
            OR EXISTS (SELECT 1 FROM assignments d
                       WHERE d.participant_id = a.participant_id AND d.done_at IS NOT NULL))
           AS rating
    FROM assignments a JOIN participants p ON p.participant_id = a.participant_id
    WHERE a.done_at IS NOT NULL
       OR MAX(a.claimed_at, COALESCE(p.last_active_at, a.claimed_at)) > ?
"""


class NotAssigned(PermissionError):
    """A participant sent an answer for an image that is not in their batch."""


class AnswerFinal(PermissionError):
    """A participant sent an answer for an image they rated before pressing Finish."""


@dataclass(frozen=True)
class Participant:
    participant_id: str
    resume_code: str


@dataclass(frozen=True)
class Item:
    """One image of a participant's batch."""

    image_id: str
    position: int
    done: bool
    final: bool = False  # rated before the participant pressed Finish: no more edits


def new_resume_code() -> str:
    """A random code like ``K7QM-3XPA-9RTC`` (about 59 bits)."""
    raw = "".join(secrets.choice(CODE_ALPHABET) for _ in range(12))
    return "-".join(raw[i : i + 4] for i in range(0, 12, 4))


def normalise_code(code: str) -> str:
    """Upper-case, dashes re-inserted, so "k7qm3xpa9rtc" finds ``K7QM-3XPA-9RTC``."""
    raw = "".join(ch for ch in code.upper() if ch.isalnum())
    return "-".join(raw[i : i + 4] for i in range(0, len(raw), 4))


class Store:
    """The study's SQLite database (created on first use)."""

    def __init__(
        self,
        path: str | Path,
        *,
        raters_per_image: int,
        claim_ttl: float = DEFAULT_CLAIM_TTL_S,
        busy_timeout_ms: int = 30000,
        overlap: int = 0,
    ) -> None:
        self.path = Path(path)
        self.k = raters_per_image
        self.overlap = min(overlap, raters_per_image)
        self.claim_ttl = claim_ttl
        self.busy_timeout_ms = busy_timeout_ms
        try:
            with self._connect() as db:
                db.execute("PRAGMA journal_mode=WAL")
                db.executescript(SCHEMA)
                columns = {row[1] for row in db.execute("PRAGMA table_info(participants)")}
                if "last_active_at" not in columns:  # a study created by an older glyphbench
                    db.execute("ALTER TABLE participants ADD COLUMN last_active_at REAL")
                columns = {row[1] for row in db.execute("PRAGMA table_info(assignments)")}
                if "closed_at" not in columns:  # likewise
                    db.execute("ALTER TABLE assignments ADD COLUMN closed_at REAL")
        except sqlite3.DatabaseError as exc:
            raise InputError(self.path, f"not a usable ratings database (SQLite: {exc})") from None

    # -- plumbing -------------------------------------------------------------------

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = sqlite3.connect(self.path, timeout=self.busy_timeout_ms / 1000, isolation_level=None)
        try:
            db.execute(f"PRAGMA busy_timeout={int(self.busy_timeout_ms)}")
            db.execute("PRAGMA foreign_keys=ON")
            db.execute("PRAGMA synchronous=NORMAL")  # safe with WAL: a crash loses no committed row
            yield db
        finally:
            db.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """A ``BEGIN IMMEDIATE`` transaction: the write lock is held from the first read."""
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    def add_images(self, image_ids: Iterable[str], gold_ids: Iterable[str] = ()) -> None:
        """Register the study's images (idempotent)."""
        gold = set(gold_ids)
        rows = [(i, int(i in gold)) for i in image_ids]
        rows += [(i, 1) for i in gold if i not in {r[0] for r in rows}]
        with self._write() as db:
            db.executemany("INSERT OR IGNORE INTO images(image_id, is_gold) VALUES (?, ?)", rows)

    # -- participants ---------------------------------------------------------------

    def new_participant(self, login: str | None = None) -> Participant:
        """Create a participant with a fresh resume code (or return the one with ``login``)."""
        with self._write() as db:
            if login:
                row = db.execute(
                    "SELECT participant_id, resume_code FROM participants WHERE login = ?", (login,)
                ).fetchone()
                if row:
                    return Participant(row[0], row[1])
            while True:
                code = new_resume_code()
                if not db.execute(
                    "SELECT 1 FROM participants WHERE resume_code = ?", (code,)
                ).fetchone():
                    break
            participant = Participant(secrets.token_hex(8), code)
            now = time.time()
            db.execute(
                "INSERT INTO participants(participant_id, resume_code, login, created_at,"
                " consented_at, last_active_at) VALUES (?, ?, ?, ?, ?, ?)",
                (participant.participant_id, code, login, now, now, now),
            )
            return participant

    def find_login(self, login: str) -> Participant | None:
        """The participant who logged in as ``login`` before, if any."""
        with self._connect() as db:
            row = db.execute(
                "SELECT participant_id, resume_code FROM participants WHERE login = ?", (login,)
            ).fetchone()
        return Participant(row[0], row[1]) if row else None

    def find_participant(self, resume_code: str) -> Participant | None:
        code = normalise_code(resume_code or "")
        with self._connect() as db:
            row = db.execute(
                "SELECT participant_id, resume_code FROM participants WHERE resume_code = ?",
                (code,),
            ).fetchone()
        return Participant(row[0], row[1]) if row else None

    # -- assignment -----------------------------------------------------------------

    def claim_batch(
        self, participant_id: str, n: int, n_gold: int = 0, seed: int | None = None
    ) -> list[str]:
        """Claim up to ``n`` images (+ ``n_gold`` gold items) for a participant; return their ids.

        The batch is shuffled per participant and appended after any earlier
        batch (positions keep growing). Returns [] when every image has K ratings.
        """
        rng = random.Random(seed if seed is not None else secrets.randbits(64))
        now = time.time()
        live_after = now - self.claim_ttl
        with self._write() as db:
            rows = db.execute(
                f"""
                SELECT i.image_id,
                       COUNT(a.image_id) AS load,
                       COALESCE(SUM(a.rating), 0) AS rated
                FROM images i
                LEFT JOIN ({LIVE_WITH_RATING}) a ON a.image_id = i.image_id
                WHERE i.is_gold = 0
                  AND i.image_id NOT IN (SELECT image_id FROM assignments WHERE participant_id = ?)
                GROUP BY i.image_id
                HAVING load < ?
                """,
                (now - PILOT_IDLE_S, live_after, participant_id, self.k),
            ).fetchall()
            # Lowest load first (random tie-break so parallel participants spread out),
            # except that images on their way to ``overlap`` raters come before new ones.
            keyed = sorted(
                (self._priority(load, rated), rng.random(), image_id)
                for image_id, load, rated in rows
            )
            chosen = [image_id for _, _, image_id in keyed[:n]]
            if chosen and n_gold > 0:
                gold = [
                    r[0]
                    for r in db.execute(
                        "SELECT image_id FROM images WHERE is_gold = 1 AND image_id NOT IN"
                        " (SELECT image_id FROM assignments WHERE participant_id = ?)",
                        (participant_id,),
                    )
                ]
                chosen += rng.sample(sorted(gold), min(n_gold, len(gold)))
            rng.shuffle(chosen)
            start = db.execute(
                "SELECT COALESCE(MAX(position) + 1, 0) FROM assignments WHERE participant_id = ?",
                (participant_id,),
            ).fetchone()[0]
            db.executemany(
                "INSERT INTO assignments(participant_id, image_id, position, claimed_at)"
                " VALUES (?, ?, ?, ?)",
                [(participant_id, image_id, start + i, now) for i, image_id in enumerate(chosen)],
            )
            # A new batch re-opens a finished participant; nothing claimed leaves them finished.
            reopen = "finished_at = NULL, " if chosen else ""
            db.execute(
                f"UPDATE participants SET {reopen}last_active_at = ? WHERE participant_id = ?",
                (now, participant_id),
            )
        return chosen

    def _priority(self, load: int, rated: int | None = None) -> tuple[int, int]:
        """Sort key of an image with ``load`` ratings and live claims: smaller first.

        Overlap first (a pilot): an image that some but fewer than ``overlap`` raters
        who are rating hold (``rated``: its ratings and the claims of raters who are
        rating, :data:`PILOT_IDLE_S`; default ``load``) comes first, the fullest of them
        first, so the first images reach ``overlap`` raters before new ones are opened
        and agreement can be measured early. A session opened and left counts in
        ``load`` only: its images are no pilot's. Without ``overlap`` (0 or 1) this is
        plain lowest-load-first.

        >>> store = Store.__new__(Store); store.overlap = 2
        >>> sorted([0, 1, 2], key=store._priority)
        [1, 0, 2]
        >>> store._priority(1, rated=0)  # held by a left session only: not a pilot's image
        (1, 1)
        """
        rated = load if rated is None else rated
        if 0 < rated < self.overlap:
            return (0, -rated)
        return (1, load)

    def open_claims(self, participant_ids: Iterable[str]) -> int:
        """Live unrated claims held by these participants."""
        ids = list(participant_ids)
        if not ids:
            return 0
        marks = ",".join("?" * len(ids))
        with self._connect() as db:
            row = db.execute(
                f"SELECT COUNT(*) FROM ({LIVE_ASSIGNMENTS}) a"
                f" WHERE a.done_at IS NULL AND a.participant_id IN ({marks})",
                (time.time() - self.claim_ttl, *ids),
            ).fetchone()
        return int(row[0])

    def unrated_claimed_by_others(self, participant_id: str) -> int:
        """Images still short of K ratings that others' live claims fill up right now.

        Nonzero when :meth:`claim_batch` found nothing although the study is not done:
        the images are merely claimed, and come back when those raters finish or leave.
        """
        with self._connect() as db:
            row = db.execute(
                f"""
                SELECT COUNT(*) FROM (
                    SELECT i.image_id,
                           SUM(a.done_at IS NOT NULL) AS done,
                           COUNT(a.image_id) AS load
                    FROM images i LEFT JOIN ({LIVE_ASSIGNMENTS}) a ON a.image_id = i.image_id
                    WHERE i.is_gold = 0 AND i.image_id NOT IN
                        (SELECT image_id FROM assignments WHERE participant_id = ?)
                    GROUP BY i.image_id
                    HAVING COALESCE(done, 0) < ? AND load >= ?
                )
                """,
                (time.time() - self.claim_ttl, participant_id, self.k, self.k),
            ).fetchone()
        return int(row[0])

    def drop_completed_claims(self, participant_id: str) -> int:
        """Release the participant's unrated claims on images others have since completed.

        A participant back after their claims stopped counting would otherwise rate
        images that already have K ratings. Returns how many were released.
        """
        with self._write() as db:
            released = db.execute(
                """
                DELETE FROM assignments
                WHERE participant_id = ? AND done_at IS NULL AND image_id IN (
                    SELECT image_id FROM assignments
                    WHERE done_at IS NOT NULL AND participant_id != ?
                    GROUP BY image_id HAVING COUNT(*) >= ?
                )
                """,
                (participant_id, participant_id, self.k),
            ).rowcount
        return int(released)

    def batch(self, participant_id: str) -> list[Item]:
        """The participant's items in their order."""
        with self._connect() as db:
            rows = db.execute(
                "SELECT image_id, position, done_at IS NOT NULL, closed_at IS NOT NULL"
                " FROM assignments WHERE participant_id = ? ORDER BY position",
                (participant_id,),
            ).fetchall()
        return [Item(r[0], int(r[1]), bool(r[2]), bool(r[3])) for r in rows]

    def check_assigned(self, participant_id: str, image_id: str) -> None:
        """Raise :class:`NotAssigned` unless ``image_id`` is in the participant's batch."""
        with self._connect() as db:
            row = db.execute(
                "SELECT 1 FROM assignments WHERE participant_id = ? AND image_id = ?",
                (participant_id, image_id),
            ).fetchone()
        if not row:
            raise NotAssigned(f"image {image_id!r} is not assigned to this participant")

    def mark_shown(self, participant_id: str, image_id: str) -> None:
        """Start the clock for an item (the time spent is measured on the server)."""
        now = time.time()
        with self._write() as db:
            db.execute(
                "UPDATE assignments SET shown_at = ? WHERE participant_id = ? AND image_id = ?",
                (now, participant_id, image_id),
            )
            db.execute(
                "UPDATE participants SET last_active_at = ? WHERE participant_id = ?",
                (now, participant_id),
            )

    def save_answers(
        self, participant_id: str, image_id: str, answers: Mapping[str, int]
    ) -> float | None:
        """Upsert one row per criterion and mark the item done; return the seconds spent.

        Answering the same item again (after Back) updates the rows in place and
        counts a revision; it never adds rows. Raises :class:`NotAssigned` for an
        image outside the participant's batch and :class:`AnswerFinal` for one rated
        before the participant pressed Finish (those answers are final).
        """
        now = time.time()
        with self._write() as db:
            row = db.execute(
                "SELECT shown_at, closed_at FROM assignments"
                " WHERE participant_id = ? AND image_id = ?",
                (participant_id, image_id),
            ).fetchone()
            if row is None:
                raise NotAssigned(f"image {image_id!r} is not assigned to this participant")
            if row[1] is not None:
                raise AnswerFinal(f"image {image_id!r} was rated before Finish")
            seconds = None if row[0] is None else max(0.0, now - float(row[0]))
            db.executemany(
                """
                INSERT INTO ratings(participant_id, image_id, criterion, value, seconds,
                                    created_at, updated_at)
                VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(participant_id, image_id, criterion) DO UPDATE SET
                    value = excluded.value,
                    seconds = COALESCE(ratings.seconds, 0) + COALESCE(excluded.seconds, 0),
                    updated_at = excluded.updated_at,
                    revisions = ratings.revisions + 1
                """,
                [
                    (participant_id, image_id, c, int(v), seconds, now, now)
                    for c, v in answers.items()
                ],
            )
            db.execute(
                "UPDATE assignments SET done_at = COALESCE(done_at, ?), shown_at = NULL"
                " WHERE participant_id = ? AND image_id = ?",
                (now, participant_id, image_id),
            )
            db.execute(
                "UPDATE participants SET last_active_at = ? WHERE participant_id = ?",
                (now, participant_id),
            )
        return seconds

    def answers(self, participant_id: str, image_id: str) -> dict[str, int]:
        with self._connect() as db:
            rows = db.execute(
                "SELECT criterion, value FROM ratings WHERE participant_id = ? AND image_id = ?",
                (participant_id, image_id),
            ).fetchall()
        return {c: int(v) for c, v in rows}

    def finish(self, participant_id: str) -> int:
        """Mark the participant finished, their answers so far final (:class:`AnswerFinal`),
        and release unrated claims; return how many were released."""
        now = time.time()
        with self._write() as db:
            released = db.execute(
                "DELETE FROM assignments WHERE participant_id = ? AND done_at IS NULL",
                (participant_id,),
            ).rowcount
            db.execute(
                "UPDATE assignments SET closed_at = ?"
                " WHERE participant_id = ? AND closed_at IS NULL",
                (now, participant_id),
            )
            db.execute(
                "UPDATE participants SET finished_at = ? WHERE participant_id = ?",
                (now, participant_id),
            )
        return int(released)

    # -- read-outs ------------------------------------------------------------------

    def ratings_frame(self) -> pd.DataFrame:
        """Every rating: participant_id, image_id, criterion, value, seconds, created_at,
        updated_at, revisions."""
        with self._connect() as db:
            return pd.read_sql_query(
                "SELECT * FROM ratings ORDER BY created_at, participant_id", db
            )

    def participants_frame(self) -> pd.DataFrame:
        with self._connect() as db:
            return pd.read_sql_query(
                "SELECT participant_id, login, created_at, consented_at, finished_at"
                " FROM participants"
                " ORDER BY created_at, participant_id",
                db,
            )

    def progress_per_image(self) -> pd.DataFrame:
        """image_id, is_gold, raters (completed), claimed (live, unrated), target K."""
        with self._connect() as db:
            frame = pd.read_sql_query(
                f"""
                SELECT i.image_id, i.is_gold,
                       SUM(CASE WHEN a.done_at IS NOT NULL THEN 1 ELSE 0 END) AS raters,
                       SUM(CASE WHEN a.image_id IS NOT NULL AND a.done_at IS NULL
                                THEN 1 ELSE 0 END) AS claimed
                FROM images i LEFT JOIN ({LIVE_ASSIGNMENTS}) a ON a.image_id = i.image_id
                GROUP BY i.image_id ORDER BY raters, i.image_id
                """,
                db,
                params=(time.time() - self.claim_ttl,),
            )
        frame[["raters", "claimed"]] = frame[["raters", "claimed"]].fillna(0).astype(int)
        frame["target"] = self.k
        frame["is_gold"] = frame["is_gold"].astype(bool)
        return frame

    def progress_per_participant(self) -> pd.DataFrame:
        """participant_id, assigned, done, finished, median seconds per item."""
        with self._connect() as db:
            frame = pd.read_sql_query(
                """
                SELECT p.participant_id, p.created_at, p.finished_at IS NOT NULL AS finished,
                       COUNT(a.image_id) AS assigned,
                       SUM(CASE WHEN a.done_at IS NOT NULL THEN 1 ELSE 0 END) AS done
                FROM participants p LEFT JOIN assignments a ON a.participant_id = p.participant_id
                GROUP BY p.participant_id ORDER BY p.created_at
                """,
                db,
            )
        frame["done"] = frame["done"].fillna(0).astype(int)
        frame["finished"] = frame["finished"].astype(bool)
        return frame
