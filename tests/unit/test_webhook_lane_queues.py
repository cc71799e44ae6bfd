"""Which FIFO queue a delivery enters (chalicelib/webhooks/delivery/lanes.py, ``queue_url`` and
``enqueue``): a webhook whose circuit breaker is open, its moved attempts and its retries, on the
slow lanes' queue; every other delivery on the owners' lanes' queue; refused entries reported; an
event's consecutive deliveries in a slow lane share one message (``message_plan``)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.webhooks.delivery import lanes
from chalicelib.webhooks.delivery.envelope import Delivery, Event


def _delivery(webhook: str, owner: str, slow: bool = False, attempt: int = 1, event_id: str = "evt_1", lane: int = 0) -> Delivery:
    event = Event(event_id, "message.new", "2026-11-22T00:00:00.000Z", {}, {})
    return Delivery(event, webhook, attempt, owner_id=owner, lane=lane, slow=slow)


def _sent(calls: list[tuple[str, list[dict[str, Any]]]]) -> dict[str, list[tuple[str, str]]]:
    """The (event id, webhook id) deliveries of every message sent, per message group, in order."""
    sent: dict[str, list[tuple[str, str]]] = {}
    for _, entries in calls:
        for entry in entries:
            members = lanes.from_messages(entry["MessageBody"])
            sent.setdefault(entry["MessageGroupId"], []).extend((d.event.event_id, d.webhook_id) for d in members)
    return sent


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
    slow = [_delivery(f"whk_s{i}", "usr_x", slow=True, event_id=f"evt_s{i}") for i in range(3)]  # 3 events: 3 messages
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


def test_a_40_webhook_fan_out_is_one_call_of_four_slow_lane_messages_of_ten(sqs: FakeSqs) -> None:
    deliveries = _fan_out("usr_many", 40)
    assert sorted(len(m) for m in lanes.message_plan(deliveries, range(40))) == [10, 10, 10, 10]
    assert lanes.send_plan(deliveries, range(40)) == [list(range(40))]
    lanes.enqueue(deliveries)
    ((_, entries),) = sqs.calls
    assert len(entries) == 4
    assert len({e["MessageGroupId"] for e in entries}) == 4
    assert sorted(len(lanes.from_messages(e["MessageBody"])) for e in entries) == [10, 10, 10, 10]


def test_the_same_fan_out_over_owner_lanes_is_four_calls_of_ten_messages(sqs: FakeSqs) -> None:
    deliveries = [replace(d, slow=False) for d in _fan_out("usr_many", 40)]
    assert len(lanes.message_plan(deliveries, range(40))) == 40  # owner lanes never share a message
    plan = lanes.send_plan(deliveries, range(40))
    assert sorted(len(sequence) for sequence in plan) == [10, 10, 10, 10]
    assert all(len({lanes.group_id(deliveries[i]) for i in sequence}) == 1 for sequence in plan)
    lanes.enqueue(deliveries)
    assert sorted(len(entries) for _, entries in sqs.calls) == [10, 10, 10, 10]


def test_up_to_10_deliveries_are_one_call() -> None:
    deliveries = [_delivery(f"whk_{i}", f"usr_{i}") for i in range(10)]
    assert lanes.send_plan(deliveries, range(10)) == [list(range(10))]


def test_a_lanes_deliveries_stay_in_one_sequence_in_their_order_across_events(sqs: FakeSqs) -> None:
    deliveries = _fan_out("usr_many", 40, rounds=3)  # 120: each slow lane's 30 deliveries, event by event
    plan = lanes.send_plan(deliveries, range(len(deliveries)))
    assert sorted(i for sequence in plan for i in sequence) == list(range(len(deliveries)))
    assert all(sequence == sorted(sequence) for sequence in plan)
    holder = {lanes.group_id(deliveries[i]): n for n, sequence in enumerate(plan) for i in sequence}
    assert all(holder[lanes.group_id(deliveries[i])] == n for n, sequence in enumerate(plan) for i in sequence)
    lanes.enqueue(deliveries)
    assert sum(len(entries) for _, entries in sqs.calls) == 12  # one message per event and slow lane
    for group, members in _sent(sqs.calls).items():
        assert members == [(d.event.event_id, d.webhook_id) for d in deliveries if lanes.group_id(d) == group]


def test_a_refused_entry_stops_its_sequence_only(sqs: FakeSqs) -> None:
    deliveries = [replace(d, slow=False) for d in _fan_out("usr_many", 40, rounds=2)]
    refused_group = lanes.group_id(deliveries[0])
    sqs.refuse = frozenset({refused_group})
    with pytest.raises(lanes.EnqueueFailed) as refused:
        lanes.enqueue(deliveries)
    in_group = [i for i, d in enumerate(deliveries) if lanes.group_id(d) == refused_group]
    assert refused.value.failed == in_group  # the refused ones and the rest of their sequence
    queued = {e["MessageDeduplicationId"] for _, entries in sqs.calls for e in entries if e["MessageGroupId"] != refused_group}
    assert queued == {lanes.deduplication_id(d) for i, d in enumerate(deliveries) if i not in in_group}


def test_a_refused_shared_message_reports_every_delivery_it_carries(sqs: FakeSqs) -> None:
    deliveries = _fan_out("usr_many", 40, rounds=2)
    refused_group = lanes.group_id(deliveries[0])
    sqs.refuse = frozenset({refused_group})
    with pytest.raises(lanes.EnqueueFailed) as refused:
        lanes.enqueue(deliveries)
    assert refused.value.failed == [i for i, d in enumerate(deliveries) if lanes.group_id(d) == refused_group]
    sent = _sent(sqs.calls)
    assert sum(len(members) for group, members in sent.items() if group != refused_group) == 60


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


def test_only_an_events_consecutive_slow_deliveries_at_one_attempt_share_a_message() -> None:
    a = [_delivery(f"whk_a{i}", "usr_a", slow=True, lane=4 * i) for i in range(3)]  # one slow lane
    other_owner = _delivery("whk_b", "usr_b", slow=True, event_id="evt_b")
    other_owner = replace(other_owner, lane=(lanes.slow_lane(a[0], 4) - lanes.slow_lane(replace(other_owner, lane=0), 4)) % 4)
    assert lanes.group_id(other_owner) == lanes.group_id(a[0])
    # Another owner's delivery queued between two of them keeps its turn: no message grows past it.
    assert lanes.message_plan([a[0], a[1], other_owner, a[2]], range(4)) == [[0, 1], [2], [3]]
    # Another event, another attempt number, a move or an asked-for attempt: a message of its own.
    retry = replace(a[1], attempt=2)
    moved = replace(a[1], hops=1)
    recovered = replace(a[1], recovery_id="rcv_1")
    redelivered = replace(a[1], redelivery_id="rdl_1")
    later_event = _delivery("whk_a1", "usr_a", slow=True, lane=4, event_id="evt_2")
    for alone in (retry, moved, recovered, redelivered, later_event):
        assert lanes.message_plan([a[0], alone], range(2)) == [[0], [1]]
    # The same webhook twice never shares (two attempts to it are two turns of the lane).
    assert lanes.message_plan([a[0], a[0]], range(2)) == [[0], [1]]


def test_a_shared_message_holds_at_most_ten_deliveries() -> None:
    deliveries = [_delivery(f"whk_{i}", "usr_a", slow=True, lane=4 * i) for i in range(23)]  # 23 in one slow lane
    assert [len(m) for m in lanes.message_plan(deliveries, range(23))] == [10, 10, 3]
    assert lanes.MAX_MESSAGE_DELIVERIES == 10


def test_a_shared_message_round_trips_its_members_in_order_with_an_id_of_its_own() -> None:
    members = [_delivery(f"whk_{i}", "usr_a", slow=True, lane=4 * i) for i in range(3)]
    body = lanes.to_message(members[0], members[1:])
    assert lanes.from_messages(body) == members
    with pytest.raises(KeyError):  # a reader of single deliveries refuses it rather than take its first member
        lanes.from_message(body)
    single = lanes.to_message(members[0])
    assert lanes.from_messages(single) == [members[0]]  # a message of one delivery, as before
    shared_id = lanes.message_deduplication_id(members)
    assert shared_id.startswith(lanes.deduplication_id(members[0]) + "+")
    assert len(shared_id) <= 128
    assert shared_id == lanes.message_deduplication_id(list(members))  # a replayed batch forms the same id
    assert shared_id != lanes.message_deduplication_id(members[:2])
    assert lanes.message_deduplication_id(members[:1]) == lanes.deduplication_id(members[0])
    with pytest.raises(ValueError, match="non-empty list"):
        lanes.from_messages(single[:-1] + ',"webhooks":[]}')
