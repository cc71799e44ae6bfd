"""The failure policy without HTTP (the sender is replaced): counting, resets, disabling at 5,
atomic counters under concurrency, the retry schedule, and what an inactive webhook gets."""

from __future__ import annotations

import threading
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from chalicelib.kernel import clock
from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.webhooks import repository, service
from chalicelib.webhooks.delivery import attempt as delivery
from chalicelib.webhooks.delivery import lanes, retries, sender
from chalicelib.webhooks.delivery.attempt import FAILURE_LIMIT, Result
from chalicelib.webhooks.delivery.envelope import Delivery, Event
from chalicelib.webhooks.models import WebhookCreate
from tests.integration.conftest import User
from tests.integration.webhook_helpers import install_fake_sender, retry_messages, sender_outcome, use_settings


class FakeSender:
    """Replaces ``sender.post``: answers with the next queued status (or error) and records calls."""

    def __init__(self) -> None:
        self.answers: list[int | str] = []
        self.calls: list[str] = []
        self._lock = threading.Lock()

    def __call__(self, url: str, body: bytes, headers: dict[str, str], **_: Any) -> sender.Outcome:
        with self._lock:
            self.calls.append(headers["webhook-id"])
            answer = self.answers.pop(0) if self.answers else 200
        return sender_outcome(answer)


@pytest.fixture
def fake(aws: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> FakeSender:
    return install_fake_sender(monkeypatch, FakeSender(), "0,0,0")


def new_webhook(owner: User) -> str:
    from chalicelib.auth.service import Caller

    return service.create_webhook(Caller(owner.user_id), WebhookCreate(url="http://127.0.0.1:9/hook")).id


def send(webhook_id: str, attempt: int = 1) -> Result:
    """One attempt, from the lane the webhook's circuit breaker calls for (a slow one after a timeout)."""
    event = Event(clock.new_id("evt"), "message.new", clock.iso(), {"content": "x"}, {})
    slow = bool((repository.get(webhook_id) or {}).get("breakerOpenedAt"))
    if attempt > 1:  # as a retry: the attempts before it were claimed
        for earlier in range(1, attempt):
            assert delivery.attempt_log.claim(Delivery(event, webhook_id, earlier))
    return delivery.attempt(Delivery(event, webhook_id, attempt, slow=slow))


def state(webhook_id: str) -> tuple[int, bool]:
    item = repository.get(webhook_id) or {}
    return int(item.get("failCount") or 0), bool(item.get("active"))


@pytest.mark.parametrize("failure", [500, 404, 301, "timeout", "connection_error", "tls_error", "blocked_address", "dns_error"])
def test_each_kind_of_failure_adds_one(fake: FakeSender, alice: User, failure: int | str) -> None:
    webhook_id = new_webhook(alice)
    fake.answers = [failure]
    assert send(webhook_id) == Result.FAILED
    assert state(webhook_id) == (1, True)


@pytest.mark.parametrize("status", [200, 201, 202, 204, 299])
def test_any_2xx_resets_to_zero(fake: FakeSender, alice: User, status: int) -> None:
    webhook_id = new_webhook(alice)
    fake.answers = [500, "timeout", 503]
    for _ in range(3):
        send(webhook_id)
    assert state(webhook_id) == (3, True)
    fake.answers = [status]
    assert send(webhook_id) == Result.SENT
    assert state(webhook_id) == (0, True)


def test_a_2xx_resets_after_failures_of_other_events(fake: FakeSender, alice: User) -> None:
    webhook_id = new_webhook(alice)
    fake.answers = [500, 500, 500, 200]
    for _ in range(3):
        send(webhook_id)
    assert state(webhook_id) == (3, True)
    event = Event(clock.new_id("evt"), "message.new", clock.iso(), {}, {})
    assert delivery.attempt(Delivery(event, webhook_id)) == Result.SENT
    assert state(webhook_id) == (0, True)


def test_five_consecutive_failures_disable_and_nothing_more_is_sent(fake: FakeSender, alice: User) -> None:
    webhook_id = new_webhook(alice)
    fake.answers = [500] * 10
    for expected in range(1, FAILURE_LIMIT):
        send(webhook_id)
        assert state(webhook_id) == (expected, True)
    send(webhook_id)
    assert state(webhook_id) == (5, False)
    assert send(webhook_id) == Result.DRAINED
    assert len(fake.calls) == 5
    disabled = repository.get(webhook_id) or {}
    assert disabled["disabledAt"].endswith("Z")
    # why and with what: the Dashboard shows them
    assert (disabled["disabledReason"], disabled["lastFailure"]) == ("Disabled after 5 consecutive failures", "HTTP 500")


def test_concurrent_failures_never_lose_an_increment(aws: dict[str, str], alice: User) -> None:
    webhook_id = new_webhook(alice)
    threads = [threading.Thread(target=lambda: [repository.add_failure(webhook_id) for _ in range(5)]) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert state(webhook_id) == (40, True)


def test_concurrent_failing_deliveries_disable_the_webhook(fake: FakeSender, alice: User) -> None:
    webhook_id = new_webhook(alice)
    fake.answers = [500] * 20  # (a timeout would open the breaker: the later attempts would move, unsent)
    events = [Event(clock.new_id("evt"), "message.new", clock.iso(), {}, {}) for _ in range(20)]
    # Lanes never run attempts to one webhook at once; the counters stay exact even if something did.
    threads = [threading.Thread(target=delivery.attempt, args=(Delivery(e, webhook_id),)) for e in events]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    fail_count, active = state(webhook_id)
    assert active is False
    # every failure that raced the switch-off is counted, none is lost; later ones count nothing
    assert FAILURE_LIMIT <= fail_count <= 20
    assert repository.add_failure(webhook_id) is None  # inactive: no more counting


def test_a_failed_attempt_queues_the_next_one_until_the_schedule_ends(fake: FakeSender, alice: User) -> None:
    webhook_id = new_webhook(alice)
    fake.answers = [500] * 4
    send(webhook_id)
    [message] = retry_messages()
    queued = lanes.from_message(message["body"])
    assert (queued.webhook_id, queued.attempt, queued.event.type) == (webhook_id, 2, "message.new")
    send(webhook_id, attempt=4)  # the last retry of the 30,120,600 schedule
    assert retry_messages() == []


def test_each_failed_attempt_logs_when_its_retry_is_due_exactly_by_the_schedule(
    fake: FakeSender, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The schedule is asserted on what the code recorded (the log's ``nextAttemptAt`` and the
    retry queue's ``DelaySeconds``) under a frozen clock, not on wall-clock gaps between arrivals."""
    use_settings(monkeypatch, WEBHOOK_RETRY_DELAYS_SECONDS="30,120,600")
    frozen = datetime(2026, 11, 25, 12, 0, 0, 123_000, tzinfo=UTC)
    monkeypatch.setattr(clock, "now", lambda: frozen)
    sent: list[int] = []
    real_schedule = retries.schedule

    def schedule(next_attempt: Delivery, delay_seconds: int) -> None:
        sent.append(delay_seconds)
        real_schedule(next_attempt, delay_seconds)

    monkeypatch.setattr(retries, "schedule", schedule)
    webhook_id = new_webhook(alice)
    fake.answers = [500] * 4
    event = Event(clock.new_id("evt"), "message.new", clock.iso(), {"content": "x"}, {})
    assert [delivery.attempt(Delivery(event, webhook_id, n)) for n in range(1, 5)] == [Result.FAILED] * 4
    assert sent == [30, 120, 600]  # one retry per failure while the schedule lasts, with its delay
    queue = storage.client("sqs").get_queue_attributes(
        QueueUrl=settings().DELIVERY_RETRY_QUEUE_URL, AttributeNames=["ApproximateNumberOfMessagesDelayed"]
    )
    assert queue["Attributes"]["ApproximateNumberOfMessagesDelayed"] == "3"  # all three held by their delay
    logged = sorted(delivery.attempt_log.newest_attempts(webhook_id, 10), key=lambda entry: entry["attempt"])
    assert [entry["attempt"] for entry in logged] == [1, 2, 3, 4]
    assert [entry.get("nextAttemptAt") for entry in logged] == [
        clock.iso(frozen + timedelta(seconds=30)),
        clock.iso(frozen + timedelta(seconds=120)),
        clock.iso(frozen + timedelta(seconds=600)),
        None,  # the schedule is used up: no retry follows the fourth failure
    ]
    assert state(webhook_id) == (4, True)


def test_no_retry_after_the_failure_that_disables(fake: FakeSender, alice: User) -> None:
    webhook_id = new_webhook(alice)
    fake.answers = [500] * 5
    for _ in range(4):
        send(webhook_id)
    retry_messages(10)
    send(webhook_id)
    assert state(webhook_id) == (5, False)
    assert retry_messages() == []


def test_a_deleted_webhook_drains_without_sending(fake: FakeSender, alice: User) -> None:
    webhook_id = new_webhook(alice)
    repository.delete_owned(webhook_id, alice.user_id)
    event = Event(clock.new_id("evt"), "message.new", clock.iso(), {}, {})
    assert delivery.attempt(Delivery(event, webhook_id)) == Result.DRAINED
    assert fake.calls == []
    assert retry_messages() == []


def test_a_webhook_deleted_during_the_send_counts_nothing_and_gets_no_retry(
    fake: FakeSender, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    webhook_id = new_webhook(alice)

    def deleting_sender(url: str, body: bytes, headers: dict[str, str], **options: Any) -> sender.Outcome:
        repository.delete_owned(webhook_id, alice.user_id)
        return sender.Outcome(500, None, 5, "")

    monkeypatch.setattr(sender, "post", deleting_sender)
    event = Event(clock.new_id("evt"), "message.new", clock.iso(), {}, {})
    assert delivery.attempt(Delivery(event, webhook_id)) == Result.FAILED
    assert repository.get(webhook_id) is None
    assert retry_messages() == []


def test_a_webhook_unsubscribed_since_routing_drains_but_a_test_event_is_still_sent(fake: FakeSender, alice: User) -> None:
    from chalicelib.kernel.config import settings
    from chalicelib.persistence import storage

    webhook_id = new_webhook(alice)
    storage.update(settings().WEBHOOKS_TABLE, {"webhookId": webhook_id}, "SET events = :e",
                   ExpressionAttributeValues=storage.values(e=["match_request.received"]))
    event = Event(clock.new_id("evt"), "message.new", clock.iso(), {}, {})
    assert delivery.attempt(Delivery(event, webhook_id)) == Result.DRAINED
    test_event = Event(clock.new_id("evt"), "message.new", clock.iso(), {}, {}, test=True)
    assert delivery.attempt(Delivery(test_event, webhook_id)) == Result.SENT
    assert len(fake.calls) == 1
