"""The test clock of tests/clocks.py: real time, never the same millisecond twice."""

from __future__ import annotations

import threading
from datetime import timedelta

from chalicelib.kernel import clock
from tests.clocks import distinct_milliseconds


def test_every_timestamp_is_a_later_millisecond_than_the_one_before() -> None:
    with distinct_milliseconds():
        stamps = [clock.iso() for _ in range(200)]
    assert stamps == sorted(set(stamps))


def test_it_follows_real_time_and_is_removed_after_the_block() -> None:
    real = clock.now()
    with distinct_milliseconds() as fake:
        patched = clock.now
        moment = clock.now()
    assert patched == fake.now
    assert clock.now is not patched
    assert timedelta(0) <= moment - real.replace(microsecond=real.microsecond // 1000 * 1000) < timedelta(seconds=5)


def test_threads_never_share_a_millisecond() -> None:
    seen: list[str] = []
    lock = threading.Lock()

    def take() -> None:
        for _ in range(50):
            stamp = clock.iso()
            with lock:
                seen.append(stamp)

    with distinct_milliseconds():
        threads = [threading.Thread(target=take) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(set(seen)) == len(seen) == 200
