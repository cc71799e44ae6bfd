"""Which FIFO queue a delivery enters (chalicelib/webhooks/delivery/lanes.py, ``queue_url`` and
``enqueue``): a webhook whose circuit breaker is open, its moved attempts and its retries, on the
slow lanes' queue; every other delivery on the owners' lanes' queue; refused entries reported."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.webhooks.delivery import lanes
from chalicelib.webhooks.delivery.envelope import Delivery, Event


def _delivery(webhook: str, owner: str, slow: bool = False, attempt: int = 1) -> Delivery:
    event = Event("evt_1", "message.new", "2026-11-22T00:00:00.000Z", {}, {})
    return Delivery(event, webhook, attempt, owner_id=owner, lane=0, slow=slow)


class FakeSqs:
    """Records each SendMessageBatch call; refuses the entries whose ``MessageGroupId`` is in ``refuse``."""

    def __init__(self, refuse: frozenset[str] = frozenset()) -> None:
        self.calls: list[tuple[str, list[dict[str, Any]]]] = []
        self.refuse = refuse

    def send_message_batch(self, QueueUrl: str, Entries: list[dict[str, Any]]) -> dict[str, Any]:
        self.calls.append((QueueUrl, Entries))
        failed = [{"Id": e["Id"], "Code": "InternalError", "SenderFault": False} for e in Entries if e["MessageGroupId"] in self.refuse]
        return {"Failed": failed} if failed else {}


@pytest.fixture
def sqs(monkeypatch: pytest.MonkeyPatch) -> FakeSqs:
    fake = FakeSqs()
    monkeypatch.setattr(storage, "client", lambda name: fake)
    return fake


def test_an_open_breaker_routes_to_the_slow_queue_and_a_closed_one_to_the_owners_queue() -> None:
    config = settings()
    assert config.DELIVERY_SLOW_QUEUE_URL != config.DELIVERY_QUEUE_URL
    assert lanes.queue_url(_delivery("whk_a", "usr_a")) == config.DELIVERY_QUEUE_URL
    assert lanes.queue_url(_delivery("whk_a", "usr_a", slow=True)) == config.DELIVERY_SLOW_QUEUE_URL
    # A retry or a move keeps its breaker state: the retry of a timed-out attempt stays slow.
    retry = replace(_delivery("whk_a", "usr_a", slow=True), attempt=2)
    assert lanes.queue_url(retry) == config.DELIVERY_SLOW_QUEUE_URL
    moved = replace(_delivery("whk_a", "usr_a", slow=True), slow=False, hops=1)
    assert lanes.queue_url(moved) == config.DELIVERY_QUEUE_URL


def test_a_mixed_batch_is_split_by_queue_each_in_its_given_order(sqs: FakeSqs) -> None:
    healthy = [_delivery(f"whk_h{i}", f"usr_{i}") for i in range(12)]
    slow = [_delivery(f"whk_s{i}", "usr_x", slow=True) for i in range(3)]
    mixed = [d for pair in zip(healthy, slow + [None] * 9, strict=True) for d in pair if d is not None]
    lanes.enqueue(mixed)
    config = settings()
    assert [(url, len(entries)) for url, entries in sqs.calls] == [
        (config.DELIVERY_QUEUE_URL, 10), (config.DELIVERY_QUEUE_URL, 2), (config.DELIVERY_SLOW_QUEUE_URL, 3)
    ]
    sent_healthy = [lanes.from_message(e["MessageBody"]).webhook_id for _, entries in sqs.calls[:2] for e in entries]
    assert sent_healthy == [d.webhook_id for d in healthy]
    slow_entries = sqs.calls[2][1]
    assert [lanes.from_message(e["MessageBody"]).webhook_id for e in slow_entries] == [d.webhook_id for d in slow]
    assert all(e["MessageGroupId"].startswith("slow.") for e in slow_entries)
    # The deduplication ids are the deliveries' own, whichever queue they enter.
    assert [e["MessageDeduplicationId"] for e in slow_entries] == [lanes.deduplication_id(d) for d in slow]


def test_a_refusal_reports_the_refused_entries_and_every_delivery_left_unsent(sqs: FakeSqs) -> None:
    healthy = [_delivery(f"whk_h{i}", f"usr_{i}") for i in range(3)]
    slow = [_delivery("whk_s", "usr_x", slow=True)]
    batch = [healthy[0], slow[0], healthy[1], healthy[2]]
    sqs.refuse = frozenset({lanes.group_id(healthy[1])})
    with pytest.raises(lanes.EnqueueFailed) as refused:
        lanes.enqueue(batch)
    assert refused.value.failed == [1, 2]  # healthy[1] refused; the slow delivery never sent
    assert [url for url, _ in sqs.calls] == [settings().DELIVERY_QUEUE_URL]


def test_nothing_to_queue_calls_nothing(sqs: FakeSqs) -> None:
    lanes.enqueue([])
    assert sqs.calls == []
