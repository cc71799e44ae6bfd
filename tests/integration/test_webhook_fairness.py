"""Fair delivery: an owner's webhooks share a bounded set of lanes, a webhook that timed out is
delivered in the slow lanes (its circuit breaker open) until an attempt succeeds, its retries never
re-enter the owner's lanes, and the failure policy stays exact (5 failures, 5 POSTs)."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest

from chalicelib.auth.service import Caller
from chalicelib.kernel.config import settings
from chalicelib.webhooks import repository, service
from chalicelib.webhooks.delivery import handlers, lanes, sender
from chalicelib.webhooks.delivery.attempt import FAILURE_LIMIT
from chalicelib.webhooks.models import WebhookCreate
from tests.integration.conftest import User
from tests.integration.webhook_helpers import (
    install_fake_sender,
    lane_messages,
    message_event,
    retry_messages,
    sender_outcome,
    stream_event,
)


class FakeSender:
    """Replaces ``sender.post``: answers per webhook URL (``timeout``, a status) and records each call."""

    def __init__(self) -> None:
        self.answers: dict[str, list[int | str]] = {}
        self.calls: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, url: str, body: bytes, headers: dict[str, str], **_: Any) -> sender.Outcome:
        with self._lock:
            self.calls.append(url)
            queue = self.answers.get(url) or [200]
            answer = queue.pop(0) if len(queue) > 1 else queue[0]
        return sender_outcome(answer)


@pytest.fixture
def fake(aws: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> FakeSender:
    return install_fake_sender(monkeypatch, FakeSender(), "0,0,0,0,0")


def _webhook(owner: User, path: str) -> str:
    return service.create_webhook(Caller(owner.user_id), WebhookCreate(url=f"http://127.0.0.1:9/{path}")).id


def _sqs_records(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"messageId": f"r{n}", "receiptHandle": "r", "body": m["body"], "attributes": {}, "messageAttributes": {},
             "md5OfBody": "", "eventSource": "aws:sqs", "eventSourceARN": "arn", "awsRegion": "us-east-1"}
            for n, m in enumerate(messages)]


def _run(groups: list[str]) -> int:
    """Handle lane messages one at a time (recording each one's group) until the lane queue is empty."""
    handled = 0
    while records := lane_messages(1):
        groups.append(records[0]["attributes"]["MessageGroupId"])
        assert handlers.handle_lane_batch({"Records": records}) == {"batchItemFailures": []}
        handled += 1
    return handled


def _retries_into_lanes() -> int:
    """Put the queued retries back into their lanes (the retry consumer); returns how many."""
    queued = retry_messages()
    if queued:
        assert handlers.handle_retry_batch({"Records": _sqs_records(queued)}) == {"batchItemFailures": []}
    return len(queued)


def test_one_owners_40_webhooks_share_its_bounded_lanes(fake: FakeSender, alice: User, bob: User) -> None:
    hooks = [_webhook(alice, f"a{i}") for i in range(40)]
    other = _webhook(bob, "b")
    assert handlers.handle_outbox_batch(stream_event(message_event(alice, bob), message_event(bob, alice))) == {"batchItemFailures": []}
    records = lane_messages()
    records += lane_messages()
    records += lane_messages()
    records += lane_messages()
    records += lane_messages()
    by_webhook = {json.loads(r["body"])["webhookId"]: r["attributes"]["MessageGroupId"] for r in records}
    assert set(by_webhook) == {*hooks, other}
    alice_groups = {by_webhook[h] for h in hooks}
    assert alice_groups <= {f"{alice.user_id}.{n}" for n in range(settings().DELIVERY_OWNER_LANES)}
    assert len(alice_groups) == settings().DELIVERY_OWNER_LANES  # at most 4 workers, whatever 40 receivers do
    assert len({by_webhook[h] for h in hooks[:4]}) == 4  # given in turn: her first 4 webhooks never share a lane
    assert by_webhook[other].startswith(f"{bob.user_id}.")


def test_a_timeout_opens_the_breaker_and_later_attempts_wait_in_the_slow_lanes(fake: FakeSender, alice: User, bob: User) -> None:
    hanging = _webhook(alice, "hang")
    fake.answers["http://127.0.0.1:9/hang"] = ["timeout"]
    assert handlers.handle_outbox_batch(stream_event(message_event(alice, bob, "m0"))) == {"batchItemFailures": []}
    groups: list[str] = []
    assert _run(groups) == 1
    assert groups[0].startswith(f"{alice.user_id}.")  # the first attempt: the owner's lane
    assert (repository.get(hanging) or {}).get("breakerOpenedAt")
    retry = lanes.from_message(retry_messages(1)[0]["body"])
    assert (retry.attempt, retry.slow) == (2, True)  # the retry will not re-enter the owner's lane
    # An event routed while the breaker is open goes straight to a slow lane.
    assert handlers.handle_outbox_batch(stream_event(message_event(alice, bob, "m1"), first_sequence=200)) == {"batchItemFailures": []}
    [queued] = lane_messages()
    assert queued["attributes"]["MessageGroupId"].startswith("slow.")


def test_a_message_in_the_wrong_kind_of_lane_is_moved_unsent(fake: FakeSender, alice: User, bob: User) -> None:
    hook = _webhook(alice, "flaky")
    assert handlers.handle_outbox_batch(stream_event(message_event(alice, bob, "m0"))) == {"batchItemFailures": []}
    repository.add_failure(hook, "2026-11-28T00:00:00.000Z")  # the breaker opened after the event was routed
    groups: list[str] = []
    assert _run(groups) == 2  # moved from the owner's lane, then sent from a slow lane
    assert groups[0].startswith(f"{alice.user_id}.")
    assert groups[1].startswith("slow.")
    assert len(fake.calls) == 1
    stored = repository.get(hook) or {}
    assert "breakerOpenedAt" not in stored
    assert int(stored["failCount"]) == 0
    assert handlers.handle_outbox_batch(stream_event(message_event(alice, bob, "m1"), first_sequence=200)) == {"batchItemFailures": []}
    groups.clear()
    assert _run(groups) == 1
    assert groups[0].startswith(f"{alice.user_id}.")  # closed: back in the owner's lanes


def test_a_hanging_webhook_gets_exactly_5_posts_with_its_retries_in_the_slow_lanes(fake: FakeSender, alice: User, bob: User) -> None:
    hanging = _webhook(alice, "hang")
    healthy = _webhook(bob, "ok")
    fake.answers["http://127.0.0.1:9/hang"] = ["timeout"]
    events = [message_event(alice, bob, f"m{i}") for i in range(3)] + [message_event(bob, alice, "b0")]
    assert handlers.handle_outbox_batch(stream_event(*events)) == {"batchItemFailures": []}
    groups: list[str] = []
    _run(groups)
    while _retries_into_lanes():
        _run(groups)
    assert fake.calls.count("http://127.0.0.1:9/hang") == FAILURE_LIMIT
    assert fake.calls.count("http://127.0.0.1:9/ok") == 1
    stored = repository.get(hanging) or {}
    assert (int(stored["failCount"]), stored["active"]) == (FAILURE_LIMIT, False)
    # after the first timeout, nothing of alice's went through her lanes but quick moves and drains
    assert (repository.get(healthy) or {})["active"] is True
    assert sum(g.startswith("slow.") for g in groups) >= FAILURE_LIMIT - 1
