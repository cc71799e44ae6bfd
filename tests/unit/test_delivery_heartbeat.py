"""The delivery heartbeat's rounds (chalicelib/webhooks/delivery/heartbeat.py): pure threading, no AWS."""

from __future__ import annotations

import threading

import pytest

from chalicelib.webhooks.delivery.heartbeat import Heartbeat


def test_a_round_runs_every_beat_in_order_and_survives_a_failing_one() -> None:
    calls: list[str] = []

    def failing() -> None:
        calls.append("visibility")
        raise RuntimeError("ReceiptHandleIsInvalid")

    beat = Heartbeat(60, failing)
    beat.add(lambda: calls.append("lease"), first=True)
    beat.add(lambda: calls.append("last"))
    beat.beat()
    assert calls == ["lease", "visibility", "last"]
    assert beat.rounds == 1


def test_the_first_round_runs_on_entry_and_rounds_stop_on_exit() -> None:
    beaten = threading.Semaphore(0)
    with Heartbeat(0.01, beaten.release) as beat:
        assert beat.rounds >= 1  # synchronously on entry
        for _ in range(3):  # the entry round, then two on its thread
            assert beaten.acquire(timeout=10)
        assert beat.running
    assert not beat.running  # exit stopped and joined the thread: no round after it
    assert beat.rounds >= 3  # the entry round and two on the thread


def test_the_interval_must_be_positive() -> None:
    with pytest.raises(ValueError, match="interval must be > 0"):
        Heartbeat(0)


def test_a_faulted_lane_message_backs_off_longer_with_each_receive() -> None:
    from chalicelib.webhooks.delivery.handlers import FAULT_BACKOFF_SECONDS, fault_backoff_seconds

    assert fault_backoff_seconds({"attributes": {"ApproximateReceiveCount": "1"}}) == FAULT_BACKOFF_SECONDS
    assert fault_backoff_seconds({"attributes": {"ApproximateReceiveCount": "4"}}) == 4 * FAULT_BACKOFF_SECONDS
    assert fault_backoff_seconds({}) == FAULT_BACKOFF_SECONDS  # no attributes (tests' records): the first receive
    assert fault_backoff_seconds({"attributes": {"ApproximateReceiveCount": "x"}}) == FAULT_BACKOFF_SECONDS
