"""Test clocks for ``chalicelib.kernel.clock``: real time that never repeats a millisecond, and a frozen one.

Timestamps have millisecond precision (``clock.iso``), and several sort keys are ``createdAt``.
Tests that need a well-defined "newest first" used to sleep 2 ms between writes; patching the
clock gives the same guarantee without waiting and without depending on the machine's load.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta

import pytest

from chalicelib.kernel import clock

_ONE_MS = timedelta(milliseconds=1)


class DistinctMilliseconds:
    """``now()`` as ``chalicelib.kernel.clock.now``, but each call at least 1 ms after the previous one.

    It follows real time (so TTLs, expiries and claims behave as in production) and only steps
    ahead when two calls would fall in the same millisecond. Thread-safe.
    """

    def __init__(self) -> None:
        self._real = clock.now
        self._last: datetime | None = None
        self._lock = threading.Lock()

    def now(self) -> datetime:
        """The current UTC time, truncated to the millisecond, strictly later than the last answer."""
        with self._lock:
            moment = self._real()
            moment = moment.replace(microsecond=moment.microsecond // 1000 * 1000)
            if self._last is not None and moment <= self._last:
                moment = self._last + _ONE_MS
            self._last = moment
            return moment


@contextmanager
def distinct_milliseconds() -> Iterator[DistinctMilliseconds]:
    """Patch ``chalicelib.kernel.clock.now`` with a :class:`DistinctMilliseconds` for the block."""
    fake = DistinctMilliseconds()
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(clock, "now", fake.now)
        yield fake


class FrozenClock:
    """``now()`` as ``chalicelib.kernel.clock.now``, standing still at :attr:`moment` until :meth:`advance` moves it.

    For rules that depend on elapsed time (rate limits refill with time, daily quotas reset at
    midnight UTC): a test decides what "now" is instead of waiting for it. Thread-safe.
    """

    def __init__(self, moment: datetime) -> None:
        self.moment = moment
        self._lock = threading.Lock()

    def now(self) -> datetime:
        """The frozen moment (timezone-aware UTC)."""
        with self._lock:
            return self.moment

    def advance(self, seconds: float) -> datetime:
        """Move the clock ``seconds`` forward; returns the new moment."""
        with self._lock:
            self.moment += timedelta(seconds=seconds)
            return self.moment


@contextmanager
def frozen_clock(moment: datetime) -> Iterator[FrozenClock]:
    """Patch ``chalicelib.kernel.clock.now`` with a :class:`FrozenClock` at ``moment`` for the block."""
    fake = FrozenClock(moment)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(clock, "now", fake.now)
        yield fake
