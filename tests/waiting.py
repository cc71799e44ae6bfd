"""Waiting on conditions, never on time: the one polling helper of the tests."""

from __future__ import annotations

import time
from typing import Any


def wait_until(predicate: Any, timeout_seconds: float = 10, interval: float = 0.1) -> Any:
    """Poll ``predicate()`` until it returns a truthy value and return that value.

    The bound only turns a condition that never holds into a failure (``AssertionError`` after
    ``timeout_seconds``); a test never asserts how long the wait took.
    """
    deadline = time.monotonic() + timeout_seconds
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout_seconds} s")
        time.sleep(interval)
