"""Fair delivery: an owner's webhooks share a bounded set of lanes, a webhook that timed out is
delivered in the slow lanes (its circuit breaker open) until an attempt succeeds, its retries never
re-enter the owner's lanes, and the failure policy stays exact (5 failures, 5 POSTs)."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from typing import Any

import pytest

from chalicelib.auth.service import Caller
from chalicelib.kernel import clock, errors
from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.webhooks import repository, service
from chalicelib.webhooks.delivery import handlers, lanes, sender
from chalicelib.webhooks.delivery.attempt import FAILURE_LIMIT
from chalicelib.webhooks.delivery.envelope import Delivery, Event
from chalicelib.webhooks.models import WebhookCreate
from tests.integration.conftest import User, make_user
from tests.integration.webhook_helpers import (
    healthy_lane_messages,
    install_fake_sender,
    lane_messages,
    message_event,
    retry_messages,
    sender_outcome,
    slow_lane_messages,
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


def _run(groups: list[str], queues: list[tuple[str, str]] | None = None) -> int:
    """Handle lane messages one at a time (recording each one's group, and in ``queues`` its
    webhook and queue, ``healthy`` or ``slow``) until both lane queues are empty."""
    handled = 0
    while records := lane_messages(1):
        groups.append(records[0]["attributes"]["MessageGroupId"])
        if queues is not None:
            kind = "slow" if records[0]["eventSourceARN"] == settings().DELIVERY_SLOW_QUEUE_ARN else "healthy"
            queues += [(d.webhook_id, kind) for d in lanes.from_messages(records[0]["body"])]
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
    assert healthy_lane_messages() == []  # on the slow lanes' queue, not the owners'
    [queued] = slow_lane_messages()
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


def test_an_owners_fan_out_does_not_queue_ahead_of_other_owners_deliveries(
    fake: FakeSender, alice: User, bob: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    hooks = [_webhook(alice, f"a{i}") for i in range(40)]
    others = [make_user(f"Tenant{n}") for n in range(10)]
    for n, tenant in enumerate(others):
        _webhook(tenant, f"t{n}")
    calls: list[list[str]] = []  # the owners of each SendMessageBatch call's entries, in order
    original = lanes.enqueue

    def recording(deliveries: Any) -> None:
        for start in range(0, len(deliveries), lanes.MAX_BATCH):
            calls.append([d.owner_id for d in deliveries[start : start + lanes.MAX_BATCH]])
        original(deliveries)

    monkeypatch.setattr(lanes, "enqueue", recording)
    # alice's event (40 deliveries) is the batch's first record, the 10 tenants' events follow.
    events = [message_event(alice, bob), *(message_event(tenant, bob, f"t{n}") for n, tenant in enumerate(others))]
    assert handlers.handle_outbox_batch(stream_event(*events)) == {"batchItemFailures": []}
    assert len(calls) == 5  # 50 deliveries
    tenants = {t.user_id for t in others}
    assert tenants <= set(calls[0]) | set(calls[1])  # not behind alice's 4 SendMessageBatch calls
    assert calls[0][0] == alice.user_id  # her first delivery keeps its place
    queued: list[dict[str, Any]] = []
    while records := lane_messages(10):
        queued += records
    assert {json.loads(r["body"])["webhookId"] for r in queued} >= set(hooks)
    assert len(queued) == 50


def test_a_refused_entry_reports_the_earliest_record_with_a_delivery_not_queued(
    fake: FakeSender, alice: User, bob: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(3):
        _webhook(alice, f"a{i}")
    _webhook(bob, "b")
    carol = make_user("Carol")
    _webhook(carol, "c")
    # Records 100: bob (1 delivery), 101: alice (3), 102: carol (1); queued bob, alice 1, carol, alice 2, alice 3.
    events = [message_event(bob, alice, "b"), message_event(alice, bob, "a"), message_event(carol, bob, "c")]
    sent: list[str] = []

    def refuse_from_the_third(deliveries: Any) -> None:
        sent.extend(d.owner_id for d in deliveries)
        raise lanes.EnqueueFailed([2, 3, 4])  # carol's and everything after it: alice's second and third too

    monkeypatch.setattr(lanes, "enqueue", refuse_from_the_third)
    assert handlers.handle_outbox_batch(stream_event(*events, first_sequence=100)) == {
        "batchItemFailures": [{"itemIdentifier": "101"}]  # alice's record: Lambda retries it, then carol's
    }
    assert sent == [bob.user_id, alice.user_id, carol.user_id, alice.user_id, alice.user_id]


def test_a_retry_after_a_timeout_waits_in_the_slow_lane_of_its_webhook_also_from_an_earlier_versions_message(
    fake: FakeSender, alice: User, bob: User
) -> None:
    hooks = [_webhook(alice, f"a{i}") for i in range(4)]
    fake.answers["http://127.0.0.1:9/a3"] = ["timeout"]
    item = message_event(alice, bob, "m0")
    legacy = Delivery(Event.from_outbox(item), hooks[3])  # queued by an earlier version: no owner, no lane number
    lanes.enqueue([legacy])
    assert _run([]) == 1
    retry = lanes.from_message(retry_messages(1)[0]["body"])
    stored = repository.get(hooks[3]) or {}
    assert (retry.slow, retry.owner_id, retry.lane) == (True, alice.user_id, stored["lane"])
    # The webhook's later events go to the same slow lane: its slow attempts stay one at a time.
    assert handlers.handle_outbox_batch(stream_event(message_event(alice, bob, "m1"), first_sequence=200)) == {"batchItemFailures": []}
    assert hooks[3] not in {json.loads(r["body"])["webhookId"] for r in healthy_lane_messages()}
    queued = slow_lane_messages()
    assert [r["attributes"]["MessageGroupId"] for r in queued] == [lanes.group_id(retry)]
    assert lanes.group_id(retry) == f"slow.{lanes.slow_lane(retry, settings().DELIVERY_SLOW_LANES)}"


def _depth(url: str) -> int:
    attributes = storage.client("sqs").get_queue_attributes(
        QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"]
    )["Attributes"]
    return int(attributes["ApproximateNumberOfMessages"]) + int(attributes["ApproximateNumberOfMessagesNotVisible"])


def test_an_open_breakers_attempts_and_retries_never_occupy_the_healthy_queue(fake: FakeSender, alice: User, bob: User) -> None:
    hanging = [_webhook(alice, f"hang{i}") for i in range(8)]
    healthy = _webhook(bob, "ok")
    for i in range(8):
        fake.answers[f"http://127.0.0.1:9/hang{i}"] = ["timeout"]
    # The first event: the first attempt in each of the owner's 4 lanes times out and opens its breaker
    # and that of the lane's other webhook (same host), whose message moves to the slow lanes unsent.
    assert handlers.handle_outbox_batch(stream_event(message_event(alice, bob, "m0"))) == {"batchItemFailures": []}
    seen: list[tuple[str, str]] = []
    assert _run([], seen) == 12
    assert [kind for _, kind in seen].count("healthy") == 8  # 4 sent, 4 moved
    assert len({w for w, kind in seen if kind == "slow"}) == 4
    assert all((repository.get(h) or {}).get("breakerOpenedAt") for h in hanging)
    # Later events of the failing owner, their retries included, go to the slow lanes' queue only:
    # the healthy queue holds the other tenant's deliveries and nothing else.
    later = [message_event(alice, bob, f"m{i}") for i in range(1, 4)] + [message_event(bob, alice, "b0")]
    assert handlers.handle_outbox_batch(stream_event(*later, first_sequence=200)) == {"batchItemFailures": []}
    assert _retries_into_lanes() == 8
    config = settings()
    assert _depth(config.DELIVERY_QUEUE_URL) == 1  # bob's delivery
    # 3 events x 4 slow lanes (an event's 2 webhooks in a slow lane share one message), and 8 retries
    # (of each lane's 2, one was moved first: another move count, a message of its own).
    assert _depth(config.DELIVERY_SLOW_QUEUE_URL) == 3 * 4 + 8
    seen.clear()
    _run([], seen)
    while _retries_into_lanes():
        _run([], seen)
    assert [w for w, kind in seen if kind == "healthy"] == [healthy]
    assert {w for w, kind in seen if kind == "slow"} == set(hanging)
    for i, hook in enumerate(hanging):  # the failure policy stays exact
        assert fake.calls.count(f"http://127.0.0.1:9/hang{i}") == FAILURE_LIMIT
        stored = repository.get(hook) or {}
        assert (int(stored["failCount"]), stored["active"]) == (FAILURE_LIMIT, False)
    assert fake.calls.count("http://127.0.0.1:9/ok") == 1


def test_a_redelivery_and_a_recovery_of_an_open_breakers_webhook_are_queued_in_its_slow_lane(
    fake: FakeSender, alice: User, bob: User
) -> None:
    hook = _webhook(alice, "hang")
    fake.answers["http://127.0.0.1:9/hang"] = ["timeout"]
    item = message_event(alice, bob, "m0")
    assert handlers.handle_outbox_batch(stream_event(item)) == {"batchItemFailures": []}
    assert _run([]) == 1
    retry_messages()  # the scheduled retry is not this test's concern
    assert (repository.get(hook) or {}).get("breakerOpenedAt")
    redelivered = service.redeliver(Caller(alice.user_id), hook, str(item["eventId"]))
    assert redelivered.slow
    assert healthy_lane_messages() == []
    [queued] = slow_lane_messages()
    assert queued["attributes"]["MessageGroupId"] == lanes.group_id(redelivered)
    assert queued["attributes"]["MessageDeduplicationId"] == lanes.deduplication_id(redelivered)
    recovered = service.recover_failed(Caller(alice.user_id), hook, clock.now() - timedelta(hours=1))
    assert recovered.queued == 1
    assert healthy_lane_messages() == []
    [queued] = slow_lane_messages()
    assert queued["attributes"]["MessageGroupId"].startswith("slow.")


def test_a_timeout_in_an_owner_lane_opens_the_breakers_of_its_lane_siblings_on_the_same_host(
    fake: FakeSender, alice: User, bob: User
) -> None:
    same_host = [_webhook(alice, f"a{i}") for i in range(8)]  # numbers 0..7: owner lanes 0, 1, 2, 3, 0, 1, 2, 3
    other_host = service.create_webhook(Caller(alice.user_id), WebhookCreate(url="http://localhost:9/x")).id  # lane 0 too
    fake.answers["http://127.0.0.1:9/a0"] = ["timeout"]  # the others answer 200
    assert handlers.handle_outbox_batch(stream_event(message_event(alice, bob, "m0"))) == {"batchItemFailures": []}
    records = healthy_lane_messages(10)
    assert len(records) == 9
    first = next(r for r in records if json.loads(r["body"])["webhookId"] == same_host[0])
    assert handlers.handle_lane_batch({"Records": [first]}) == {"batchItemFailures": []}
    opened = {h for h in [*same_host, other_host] if (repository.get(h) or {}).get("breakerOpenedAt")}
    assert opened == {same_host[0], same_host[4]}  # its lane's sibling on its host, nobody else
    assert int((repository.get(same_host[4]) or {}).get("failCount") or 0) == 0  # opened without a failure
    for record in records:
        if record is not first:
            assert handlers.handle_lane_batch({"Records": [record]}) == {"batchItemFailures": []}
    assert "http://127.0.0.1:9/a4" not in fake.calls  # its owner-lane message moved unsent
    [moved] = slow_lane_messages()
    assert json.loads(moved["body"])["webhookId"] == same_host[4]
    assert handlers.handle_lane_batch({"Records": [moved]}) == {"batchItemFailures": []}
    assert fake.calls.count("http://127.0.0.1:9/a4") == 1  # sent once, from a slow lane
    assert "breakerOpenedAt" not in (repository.get(same_host[4]) or {})  # its first success closed it
    assert len(fake.calls) == 9  # one POST per delivery
    assert handlers.handle_outbox_batch(stream_event(message_event(alice, bob, "m1"), first_sequence=200)) == {"batchItemFailures": []}
    routed = {json.loads(r["body"])["webhookId"] for r in slow_lane_messages()}
    assert routed == {same_host[0]}  # only the timed-out webhook's next event waits in a slow lane


def test_lane_siblings_that_hang_too_get_exactly_5_posts_each(fake: FakeSender, alice: User, bob: User) -> None:
    hooks = [_webhook(alice, f"h{i}") for i in range(5)]  # numbers 0 and 4 share a lane
    for i in range(5):
        fake.answers[f"http://127.0.0.1:9/h{i}"] = ["timeout"]
    for n in range(6):
        assert handlers.handle_outbox_batch(stream_event(message_event(alice, bob, f"m{n}"), first_sequence=100 + n)) == {
            "batchItemFailures": []}
    groups: list[str] = []
    while _run(groups) + _retries_into_lanes():
        pass
    for i, hook in enumerate(hooks):
        assert fake.calls.count(f"http://127.0.0.1:9/h{i}") == FAILURE_LIMIT
        stored = repository.get(hook) or {}
        assert (stored.get("active"), int(stored["failCount"])) == (False, FAILURE_LIMIT)


def test_a_fault_opening_the_lane_siblings_breakers_leaves_the_attempt_its_outcome_and_retry(
    fake: FakeSender, alice: User, bob: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook = _webhook(alice, "hang")
    sibling = [_webhook(alice, f"s{i}") for i in range(4)][-1]  # number 4: the same lane as number 0
    fake.answers["http://127.0.0.1:9/hang"] = ["timeout"]

    def unreachable(owner_id: str) -> list[Any]:
        raise errors.DependencyUnavailable("DynamoDB unreachable")

    assert handlers.handle_outbox_batch(stream_event(message_event(alice, bob, "m0"))) == {"batchItemFailures": []}
    monkeypatch.setattr(repository, "list_by_owner", unreachable)
    records = healthy_lane_messages(10)
    first = next(r for r in records if json.loads(r["body"])["webhookId"] == hook)
    assert handlers.handle_lane_batch({"Records": [first]}) == {"batchItemFailures": []}
    stored = repository.get(hook) or {}
    assert stored.get("breakerOpenedAt")
    assert int(stored["failCount"]) == 1
    assert not (repository.get(sibling) or {}).get("breakerOpenedAt")  # left to its own first timeout
    [retry] = retry_messages()
    assert lanes.from_message(retry["body"]).attempt == 2
