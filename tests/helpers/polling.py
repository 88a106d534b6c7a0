"""Wait for a condition with a deadline, instead of sleeping a guessed time.

A test that sleeps "long enough" is slow on a quiet machine and flaky on a busy one;
:func:`wait_until` returns as soon as the condition holds and fails with a message
that says what never happened.

>>> calls = iter([False, False, True])
>>> wait_until(lambda: next(calls), "the third call", timeout=5, interval=0)
>>> wait_until(lambda: False, "nothing", timeout=0.01, interval=0.005)
Traceback (most recent call last):
AssertionError: nothing did not happen within 0.01 s
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from typing import Any


def wait_until(
    condition: Callable[[], object],
    what: str,
    *,
    timeout: float = 120.0,
    interval: float = 0.05,
    process: subprocess.Popen[Any] | None = None,
) -> None:
    """Poll ``condition`` until it is true; fail after ``timeout`` seconds.

    With ``process``, also fail at once when that process ends first (the event
    the test waits for can no longer come).
    """
    deadline = time.monotonic() + timeout
    while not condition():
        if process is not None and process.poll() is not None:
            raise AssertionError(f"{what}: the process ended first (exit {process.returncode})")
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what} did not happen within {timeout:g} s")
        time.sleep(interval)
