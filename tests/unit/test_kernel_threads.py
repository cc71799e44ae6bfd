"""``chalicelib.kernel.threads.ContextPool``: calls sent together keep the caller's context."""

from __future__ import annotations

import contextvars
import threading

import pytest

from chalicelib.kernel.threads import ContextPool

REQUEST = contextvars.ContextVar[str]("REQUEST", default="none")


def test_map_returns_results_in_order_and_each_call_sees_the_callers_context() -> None:
    pool = ContextPool(workers=4, name="test-map")
    REQUEST.set("req_1")
    assert pool.map(lambda n: (n * 2, REQUEST.get()), [1, 2, 3]) == [(2, "req_1"), (4, "req_1"), (6, "req_1")]


def test_a_calls_change_of_the_context_stays_in_its_copy() -> None:
    pool = ContextPool(workers=2, name="test-copy")
    REQUEST.set("caller")

    def change(value: str) -> str:
        REQUEST.set(value)
        return REQUEST.get()

    assert pool.map(change, ["a", "b"]) == ["a", "b"]
    assert REQUEST.get() == "caller"


def test_one_call_runs_in_the_callers_thread_and_several_on_the_pools() -> None:
    pool = ContextPool(workers=2, name="test-threads")
    assert pool.map(lambda _: threading.current_thread().name, [0]) == [threading.current_thread().name]
    names = pool.map(lambda _: threading.current_thread().name, [0, 1])
    assert all(name.startswith("test-threads") for name in names)


def test_map_raises_the_first_failure_after_every_call_ended() -> None:
    pool = ContextPool(workers=2, name="test-fail")
    release = threading.Event()
    ended: list[int] = []

    def work(n: int) -> int:
        if n == 0:
            raise ValueError("first")
        release.wait(timeout=5)
        ended.append(n)
        return n

    # The failing call ends at once; the slow one is released only after map started waiting.
    threading.Timer(0.05, release.set).start()
    with pytest.raises(ValueError, match="first"):
        pool.map(work, [0, 1])
    assert ended == [1]


def test_submit_keeps_the_context_too() -> None:
    pool = ContextPool(workers=1, name="test-submit")
    REQUEST.set("req_2")
    assert pool.submit(lambda suffix: REQUEST.get() + suffix, "!").result() == "req_2!"
