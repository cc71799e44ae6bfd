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
    # 12 healthy deliveries in 12 lanes: two sequences of 6 sent at once; then the slow queue's call.
    assert sorted((url, len(entries)) for url, entries in sqs.calls[:2]) == [(config.DELIVERY_QUEUE_URL, 6)] * 2
    assert [(url, len(entries)) for url, entries in sqs.calls[2:]] == [(config.DELIVERY_SLOW_QUEUE_URL, 3)]
    position = {d.webhook_id: i for i, d in enumerate(healthy)}
    for _, entries in sqs.calls[:2]:
        sent = [position[lanes.from_message(e["MessageBody"]).webhook_id] for e in entries]
        assert sent == sorted(sent)  # each call in the given order
    assert sorted(position[lanes.from_message(e["MessageBody"]).webhook_id] for _, es in sqs.calls[:2] for e in es) == list(range(12))
    slow_entries = sqs.calls[2][1]
    assert [lanes.from_message(e["MessageBody"]).webhook_id for e in slow_entries] == [d.webhook_id for d in slow]
    assert all(e["MessageGroupId"].startswith("slow.") for e in slow_entries)
    # The deduplication ids are the deliveries' own, whichever queue they enter.
    assert [e["MessageDeduplicationId"] for e in slow_entries] == [lanes.deduplication_id(d) for d in slow]


def _fan_out(owner: str, webhooks: int, rounds: int = 1) -> list[Delivery]:
    """``rounds`` events of ``owner``, each to its ``webhooks`` webhooks (lane numbers 0..), breakers open."""
    return [
        Delivery(Event(f"evt_{r}", "message.new", "2026-11-22T00:00:00.000Z", {}, {}), f"whk_{n}", 1,
                 owner_id=owner, lane=n, slow=True)
        for r in range(rounds) for n in range(webhooks)
    ]


def test_a_40_webhook_fan_out_is_four_calls_of_one_slow_lane_each(sqs: FakeSqs) -> None:
    deliveries = _fan_out("usr_many", 40)
    plan = lanes.send_plan(deliveries, range(40))
    assert sorted(len(sequence) for sequence in plan) == [10, 10, 10, 10]
    assert all(len({lanes.group_id(deliveries[i]) for i in sequence}) == 1 for sequence in plan)
    lanes.enqueue(deliveries)
    assert sorted(len(entries) for _, entries in sqs.calls) == [10, 10, 10, 10]


def test_up_to_10_deliveries_are_one_call() -> None:
    deliveries = [_delivery(f"whk_{i}", f"usr_{i}") for i in range(10)]
    assert lanes.send_plan(deliveries, range(10)) == [list(range(10))]


def test_a_lanes_messages_stay_in_one_sequence_in_their_order_across_events(sqs: FakeSqs) -> None:
    deliveries = _fan_out("usr_many", 40, rounds=3)  # 120: each slow lane's 30 messages, event by event
    plan = lanes.send_plan(deliveries, range(len(deliveries)))
    assert sorted(i for sequence in plan for i in sequence) == list(range(len(deliveries)))
    assert all(sequence == sorted(sequence) for sequence in plan)
    holder = {lanes.group_id(deliveries[i]): n for n, sequence in enumerate(plan) for i in sequence}
    assert all(holder[lanes.group_id(deliveries[i])] == n for n, sequence in enumerate(plan) for i in sequence)
    lanes.enqueue(deliveries)
    sent: dict[str, list[str]] = {}
    for _, entries in sqs.calls:
        for entry in entries:
            sent.setdefault(entry["MessageGroupId"], []).append(entry["MessageDeduplicationId"])
    for group, ids in sent.items():
        assert ids == [lanes.deduplication_id(d) for d in deliveries if lanes.group_id(d) == group]


def test_a_refused_entry_stops_its_sequence_only(sqs: FakeSqs) -> None:
    deliveries = _fan_out("usr_many", 40, rounds=2)
    refused_group = lanes.group_id(deliveries[0])
    sqs.refuse = frozenset({refused_group})
    with pytest.raises(lanes.EnqueueFailed) as refused:
        lanes.enqueue(deliveries)
    in_group = [i for i, d in enumerate(deliveries) if lanes.group_id(d) == refused_group]
    assert refused.value.failed == in_group  # the refused ones and the rest of their sequence
    queued = {e["MessageDeduplicationId"] for _, entries in sqs.calls for e in entries if e["MessageGroupId"] != refused_group}
    assert queued == {lanes.deduplication_id(d) for i, d in enumerate(deliveries) if i not in in_group}


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
