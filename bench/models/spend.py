"""The run's spending cap: a thread-safe purse that paid requests reserve from first.

Every paid request reserves its price before it is sent; a reservation that would
take the run past the cap fails, and from then on every reservation fails (the
run *stops* at the cap rather than squeezing in a cheaper image later). A request
that comes back with an image commits its reservation; a refusal or a failure
releases it (the cap counts images received: BFL, for one, bills no moderated
request).

>>> purse = SpendBudget(0.10)
>>> purse.reserve(0.04), purse.reserve(0.04), purse.reserve(0.04)
(True, True, False)
>>> purse.commit(0.04); purse.release(0.04)
>>> round(purse.spent_usd, 2), purse.reserve(0.01), purse.stopped
(0.04, False, True)
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import uuid
from pathlib import Path


class SpendBudget:
    """At most ``max_usd`` in all, of which ``spent_usd`` was already spent (earlier attempts)."""

    def __init__(self, max_usd: float, spent_usd: float = 0.0) -> None:
        self.max_usd = float(max_usd)
        self.spent_usd = float(spent_usd)
        self.reserved_usd = 0.0
        self.stopped = False
        self._lock = threading.Lock()

    def reserve(self, price_usd: float) -> bool:
        """Set ``price_usd`` aside for one request; False (and stopped) past the cap."""
        with self._lock:
            if self.stopped:
                return False
            # A small tolerance: 0.1 + 0.2 must fit a cap of 0.3.
            if self.spent_usd + self.reserved_usd + price_usd > self.max_usd + 1e-9:
                self.stopped = True
                return False
            self.reserved_usd += price_usd
            return True

    def commit(self, price_usd: float) -> None:
        """The reserved request was paid."""
        with self._lock:
            self.reserved_usd -= price_usd
            self.spent_usd += price_usd

    def release(self, price_usd: float) -> None:
        """The reserved request was not paid (refused, failed)."""
        with self._lock:
            self.reserved_usd -= price_usd

    def add(self, cost_usd: float) -> None:
        """Money this run spent earlier whose row was not written (served from the cache)."""
        with self._lock:
            self.spent_usd += cost_usd

    def reason(self) -> str:
        """The one line a run prints when it stopped at the cap."""
        return (
            f"spending cap reached: ${self.spent_usd:.2f} of ${self.max_usd:.2f} spent; "
            "raise api.max_usd (or --max-usd) and run again to continue"
        )


class InFlightLedger:
    """A durable note of every paid request sent and every answer received.

    A run killed while requests are in flight cannot know whether the provider billed
    them. Each request is written down (``sent``, its price, flushed to disk) *before*
    it leaves and marked ``received`` when any answer comes back; a later attempt of the
    same run counts the price of every request sent and never answered
    (:meth:`lost_usd`) as spent, so kills cannot take the run past its cap. Lines live
    in ``<cache>/in-flight/<run and model hash>/<pid>-<random>.jsonl``.

    >>> import tempfile
    >>> root = tempfile.mkdtemp()
    >>> first = InFlightLedger(root, "run-1|api:x")
    >>> a, b = first.sent("k1", 0.04), first.sent("k2", 0.04)
    >>> first.received(a)
    >>> InFlightLedger(root, "run-1|api:x", pid=0).lost_usd()  # b was never answered
    0.04
    """

    def __init__(self, cache_dir: str | Path, who: str, *, pid: int | None = None) -> None:
        digest = hashlib.sha256(who.encode("utf-8")).hexdigest()[:16]
        self.folder = Path(cache_dir) / "in-flight" / digest
        self.pid = os.getpid() if pid is None else pid
        self.path = self.folder / f"{self.pid}-{uuid.uuid4().hex[:8]}.jsonl"
        self._lock = threading.Lock()

    def _append(self, record: dict[str, object]) -> None:
        line = (json.dumps(record) + "\n").encode("utf-8")
        with self._lock:
            self.folder.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
            try:
                os.write(fd, line)
                os.fsync(fd)
            finally:
                os.close(fd)

    def sent(self, key: str, price_usd: float) -> str:
        """Note a request about to be sent; its id."""
        ident = uuid.uuid4().hex
        self._append({"id": ident, "key": key, "price_usd": price_usd, "event": "sent"})
        return ident

    def received(self, ident: str) -> None:
        """Note that an answer (image, refusal or error) came back for request ``ident``."""
        self._append({"id": ident, "event": "received"})

    def lost_usd(self) -> float:
        """The price of every request of earlier processes sent and never answered."""
        sent: dict[str, float] = {}
        answered: set[str] = set()
        for path in sorted(self.folder.glob("*.jsonl")) if self.folder.is_dir() else []:
            if path == self.path:
                continue
            for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
                try:
                    record = json.loads(line)
                except ValueError:
                    continue  # a line cut by the kill
                if record.get("event") == "sent":
                    sent[str(record["id"])] = float(record.get("price_usd") or 0.0)
                elif record.get("event") == "received":
                    answered.add(str(record.get("id")))
        return round(sum(price for ident, price in sent.items() if ident not in answered), 9)
