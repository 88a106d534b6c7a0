"""Property tests give the same verdict on a loaded machine as on a quiet one.

tests/conftest.py loads a Hypothesis profile without a deadline: a property test that
checks results must not fail because one example ran slowly (a CI host under load ran an
example of tests/bench/scoring/test_scoring_metrics.py in 264 ms, over Hypothesis' default 200 ms).
"""

from __future__ import annotations

import time

from hypothesis import given, settings
from hypothesis import strategies as st


def test_the_loaded_profile_has_no_deadline() -> None:
    assert settings().deadline is None


@given(st.integers())
@settings(max_examples=1, database=None)
def test_a_slow_example_is_not_a_failure(number: int) -> None:
    # Slower than the default deadline on any machine: with it, this raised DeadlineExceeded.
    time.sleep(0.25)
    assert isinstance(number, int)
