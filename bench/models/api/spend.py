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

import threading


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
