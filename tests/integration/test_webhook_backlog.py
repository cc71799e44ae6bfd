"""The backlog of a webhook whose circuit breaker is open: its deliveries wait parked in the
Deliveries table with one attempt queued at a time; a success releases them into the owner's
lanes in event order; the failure policy stays exact and a switched-off webhook's backlog drains;
a fault while parking or queuing loses nothing."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from chalicelib.auth.service import Caller
from chalicelib.kernel import errors
from chalicelib.webhooks import repository, service
from chalicelib.webhooks.delivery import backlog, handlers, lanes, sender
from chalicelib.webhooks.delivery.attempt import FAILURE_LIMIT
from chalicelib.webhooks.models import WebhookCreate
from tests.integration.conftest import User
from tests.integration.webhook_helpers import (
    install_fake_sender,
    lane_messages,
    message_event,
    retry_messages,
    sender_outcome,
    slow_lane_messages,
    stream_event,
)

URL = "http://127.0.0.1:9/hook"


class Receiver:
    """Replaces ``sender.post``: answers from a script (``timeout`` or a status; the last one repeats)
    and records the ``content`` of each event it was sent, in order."""

    def __init__(self) -> None:
        self.script: list[int | str] = [200]
        self.contents: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, url: str, body: bytes, headers: dict[str, str], **_: Any) -> sender.Outcome:
        with self._lock:
            self.contents.append(json.loads(body)["data"]["content"])
            answer = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        return sender_outcome(answer)


@pytest.fixture
def receiver(aws: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> Receiver:
    return install_fake_sender(monkeypatch, Receiver(), "0,0,0")


def _webhook(owner: User) -> str:
    return service.create_webhook(Caller(owner.user_id), WebhookCreate(url=URL)).id


def _sqs_records(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"messageId": f"r{n}", "receiptHandle": "r", "body": m["body"], "attributes": {}, "messageAttributes": {},
             "md5OfBody": "", "eventSource": "aws:sqs", "eventSourceARN": "arn", "awsRegion": "us-east-1"}
            for n, m in enumerate(messages)]


def _drain_all() -> None:
    """Work the lanes and the retry queue until both are empty (one lane message per invocation)."""
    while True:
        worked = 0
        while records := lane_messages(1):
            assert handlers.handle_lane_batch({"Records": records}) == {"batchItemFailures": []}
            worked += 1
        if queued := retry_messages():
            assert handlers.handle_retry_batch({"Records": _sqs_records(queued)}) == {"batchItemFailures": []}
            worked += 1
        if not worked:
            return


def _route(alice: User, bob: User, contents: list[str], sequence: int) -> None:
    events = [message_event(alice, bob, c) for c in contents]
    assert handlers.handle_outbox_batch(stream_event(*events, first_sequence=sequence)) == {"batchItemFailures": []}


def _parked_count(webhook_id: str) -> int:
    return int((repository.get(webhook_id, consistent=True) or {}).get("parkedCount") or 0)


def test_the_backlog_is_released_in_event_order_after_the_first_success(receiver: Receiver, alice: User, bob: User) -> None:
    hook = _webhook(alice)
    receiver.script = ["timeout", 200]  # the first attempt times out, every later one succeeds
    _route(alice, bob, ["m0"], 100)
    [first] = lane_messages(1)
    assert handlers.handle_lane_batch({"Records": [first]}) == {"batchItemFailures": []}
    stored = repository.get(hook, consistent=True) or {}
    assert stored.get("breakerOpenedAt")
    assert stored.get("slowHead")
    _route(alice, bob, [f"m{i}" for i in range(1, 4)], 200)
    _route(alice, bob, ["m4", "m5"], 300)
    assert slow_lane_messages() == []
    assert lane_messages() == []
    assert [d.event.data["content"] for d in backlog.parked(hook)] == ["m1", "m2", "m3", "m4", "m5"]
    assert _parked_count(hook) == 5
    _drain_all()
    assert receiver.contents == ["m0", "m0", "m1", "m2", "m3", "m4", "m5"]  # the retry closed it; the rest in order, once each
    stored = repository.get(hook, consistent=True) or {}
    assert "breakerOpenedAt" not in stored
    assert "slowHead" not in stored
    assert backlog.parked(hook) == []
    assert _parked_count(hook) == 0


def test_a_hanging_webhooks_backlog_gets_exactly_5_posts_then_drains(receiver: Receiver, alice: User, bob: User) -> None:
    hook = _webhook(alice)
    other = _webhook(bob)  # bob's receiver is the same fake: only its own events reach it after alice's hook is off
    receiver.script = ["timeout"]
    _route(alice, bob, ["m0"], 100)
    [first] = lane_messages(1)
    assert handlers.handle_lane_batch({"Records": [first]}) == {"batchItemFailures": []}
    _route(alice, bob, [f"m{i}" for i in range(1, 6)], 200)
    assert [d.event.data["content"] for d in backlog.parked(hook)] == [f"m{i}" for i in range(1, 6)]
    _drain_all()
    # m0 four times (its attempt and 3 retries), then m1 (the next head) once: 5 consecutive failures.
    assert receiver.contents == ["m0"] * 4 + ["m1"]
    assert len(receiver.contents) == FAILURE_LIMIT
    stored = repository.get(hook, consistent=True) or {}
    assert (stored["active"], int(stored["failCount"])) == (False, FAILURE_LIMIT)
    assert backlog.parked(hook) == []
    assert _parked_count(hook) == 0
    assert (repository.get(other) or {})["active"] is True


def test_a_fault_while_queuing_the_head_loses_nothing(
    receiver: Receiver, alice: User, bob: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = _webhook(alice)
    repository.open_breaker(hook, "2026-11-28T00:00:00.000Z")  # open without a head (as a lane sibling's)
    enqueue = lanes.enqueue
    calls = {"n": 0}

    def flaky(deliveries: Any) -> None:
        calls["n"] += bool(deliveries)
        if calls["n"] == 1 and deliveries:
            raise errors.DependencyUnavailable("SQS unreachable")
        enqueue(deliveries)

    monkeypatch.setattr(lanes, "enqueue", flaky)
    events = [message_event(alice, bob, c) for c in ("m0", "m1")]
    first = handlers.handle_outbox_batch(stream_event(*events))
    assert first["batchItemFailures"]  # the batch is retried (Lambda resumes from the reported record)
    assert [d.event.data["content"] for d in backlog.parked(hook)] == ["m0", "m1"]  # parked; the head not queued
    assert handlers.handle_outbox_batch(stream_event(*events)) == {"batchItemFailures": []}  # the replay
    assert _parked_count(hook) == 1  # m0 queued as the head once; m1 parked once
    _drain_all()
    assert receiver.contents == ["m0", "m1"]
    assert backlog.parked(hook) == []
    assert _parked_count(hook) == 0


def test_a_redelivery_while_the_breaker_is_open_is_sent_after_the_success_in_order(
    receiver: Receiver, alice: User, bob: User
) -> None:
    hook = _webhook(alice)
    receiver.script = ["timeout", 200]
    item = message_event(alice, bob, "m0")
    assert handlers.handle_outbox_batch(stream_event(item)) == {"batchItemFailures": []}
    [first] = lane_messages(1)
    assert handlers.handle_lane_batch({"Records": [first]}) == {"batchItemFailures": []}
    redelivered = service.redeliver(Caller(alice.user_id), hook, str(item["eventId"]))
    assert [d.redelivery_id for d in backlog.parked(hook)] == [redelivered.redelivery_id]
    _route(alice, bob, ["m1"], 200)
    _drain_all()
    # The retry (attempt 2) closes the breaker. The redelivery, asked before that retry was claimed,
    # got the same attempt number: released in order, it finds it claimed and sends nothing (as
    # without a backlog); then m1.
    assert redelivered.attempt == 2
    assert receiver.contents == ["m0", "m0", "m1"]
    assert backlog.parked(hook) == []
    assert _parked_count(hook) == 0
