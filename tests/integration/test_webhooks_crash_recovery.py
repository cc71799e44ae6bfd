"""Crash recovery and one worker per webhook, on the in-process moto.

* A live worker's heartbeat keeps its lane message invisible past the short lease.
* A worker that stops (its heartbeat stops, it never logs) lets the message reappear after the
  lease; the next worker logs the interrupted attempt and makes the next one: the receiver gets
  each attempt number once.
* While the first worker lives, a copy of its message received by a second worker (the case a
  failed heartbeat opens) sends nothing: the claim's lease gives it back.
* With the runner's growing pool, held receivers each hold one worker and no more, and another
  lane is served meanwhile.

No wall-clock assertions: waits are on conditions (heartbeat rounds, arrivals, messages), with
generous bounds only to end a broken test.
"""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

import pytest

from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.webhooks.delivery import attempt_log, handlers, heartbeat, sender
from chalicelib.webhooks.delivery.attempt_log import sent_key
from tests.integration.conftest import Api, User, make_user
from tests.integration.webhook_helpers import (
    create_webhook,
    deliveries,
    envelope,
    message_event,
    run_lanes,
    stream_event,
    use_settings,
    webhook_state,
)
from tests.integration.webhook_receivers import Receiver
from tests.waiting import wait_until

#: The lease of these tests (seconds): short, so the message reappears soon after its worker stops.
LEASE = 1


class WorkerKilled(BaseException):
    """Ends the "dead" worker's thread like a killed process: no handler code runs after it."""


@pytest.fixture
def heartbeats(monkeypatch: pytest.MonkeyPatch) -> list[heartbeat.Heartbeat]:
    """Every heartbeat the lane handler starts, in order."""
    made: list[heartbeat.Heartbeat] = []
    real = heartbeat.for_lease

    def recording(*args: Any) -> heartbeat.Heartbeat:
        beat = real(*args)
        made.append(beat)
        return beat

    monkeypatch.setattr(heartbeat, "for_lease", recording)
    return made


def _receive(wait_seconds: float = 0.0) -> list[dict[str, Any]]:
    """Receive at most one lane message as a Lambda SQS record, without deleting it (as the mapping);
    polls up to ``wait_seconds`` for one to become visible."""
    deadline = time.monotonic() + wait_seconds
    while True:
        messages = storage.client("sqs").receive_message(
            QueueUrl=settings().DELIVERY_QUEUE_URL, MaxNumberOfMessages=1, AttributeNames=["All"], WaitTimeSeconds=0
        ).get("Messages", [])
        if messages or time.monotonic() >= deadline:
            return [
                {"messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
                 "attributes": m.get("Attributes", {}), "messageAttributes": {}, "md5OfBody": m["MD5OfBody"],
                 "eventSource": "aws:sqs", "eventSourceARN": settings().DELIVERY_QUEUE_ARN, "awsRegion": "us-east-1"}
                for m in messages
            ]
        time.sleep(0.05)


def _delete(record: dict[str, Any]) -> None:
    storage.client("sqs").delete_message(QueueUrl=settings().DELIVERY_QUEUE_URL, ReceiptHandle=record["receiptHandle"])


def _wait(condition: Any, what: str, timeout: float = 20.0) -> None:
    """Wait until ``condition()`` holds (``what`` names it in the failure)."""
    try:
        wait_until(condition, timeout_seconds=timeout, interval=0.02)
    except AssertionError as exc:
        raise AssertionError(f"{what}: {exc}") from None


def test_a_dead_workers_delivery_is_taken_over_after_the_lease_once_per_attempt(
    api: Api, alice: User, bob: User, receivers: Any, heartbeats: list[heartbeat.Heartbeat], monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_settings(monkeypatch, DELIVERY_LEASE_SECONDS=str(LEASE), WEBHOOK_TIMEOUT_SECONDS="5", WEBHOOK_RETRY_DELAYS_SECONDS="0,0,0")
    receiver: Receiver = receivers("ok")
    webhook = create_webhook(api, alice, receiver.url)
    item = message_event(alice, bob, content="survives")
    handlers.handle_outbox_batch(stream_event(item))  # one lane message (the lane is worked by hand below)
    [record] = _receive()

    # Worker 1 posts (the receiver gets it and answers) and then "dies" before logging anything.
    dying = threading.Event()
    real_post = sender.post

    def post_then_die(*args: Any, **kwargs: Any) -> sender.Outcome:
        outcome = real_post(*args, **kwargs)
        if threading.current_thread().name == "worker-1":
            dying.wait(60)
            raise WorkerKilled
        return outcome

    monkeypatch.setattr(sender, "post", post_then_die)

    def worker_1() -> None:
        with contextlib.suppress(WorkerKilled):
            handlers.handle_lane_batch({"Records": [record]})

    thread = threading.Thread(target=worker_1, name="worker-1", daemon=True)
    thread.start()
    try:
        assert len(receiver.wait_for(1)) == 1
        [beat] = heartbeats
        # Alive: 6 rounds a quarter lease apart span more than the lease, and the message is still held.
        _wait(lambda: beat.rounds >= 6, "six heartbeat rounds")
        assert _receive() == []

        # A copy received by a second worker while the first lives (its visibility forced to lapse,
        # as a failed heartbeat would) sends nothing and is given back: one worker per webhook.
        storage.client("sqs").change_message_visibility(
            QueueUrl=settings().DELIVERY_QUEUE_URL, ReceiptHandle=record["receiptHandle"], VisibilityTimeout=0
        )
        copy = _receive(wait_seconds=5)
        assert [r["messageId"] for r in copy] == [record["messageId"]]
        assert handlers.handle_lane_batch({"Records": copy}) == {"batchItemFailures": [{"itemIdentifier": record["messageId"]}]}
        assert len(receiver.requests) == 1

        # Worker 1 stops beating (its process is gone): after the lease the message reappears and the
        # next worker takes the delivery over.
        beat.stop()
        result: dict[str, Any] = {"batchItemFailures": ["not yet"]}
        while result["batchItemFailures"]:  # given back (Held) while the lease still ran, then taken over
            retried = _receive(wait_seconds=10)
            assert [r["messageId"] for r in retried] == [record["messageId"]]
            result = handlers.handle_lane_batch({"Records": retried})
        _delete(retried[0])
    finally:
        dying.set()
        thread.join(10)

    first, second = receiver.requests
    assert first.headers["webhook-id"] == second.headers["webhook-id"]  # the receiver can tell it is the same delivery
    assert envelope(second.body)["data"]["content"] == "survives"
    log = deliveries(api, alice, webhook["id"])["deliveries"]
    assert [(d["attempt"], d["success"], d["error"]) for d in log] == [(2, True, None), (1, False, "interrupted")]
    assert webhook_state(api, alice, webhook["id"])["failCount"] == 0  # an interrupted attempt's outcome is not guessed
    claim = storage.get(settings().DELIVERIES_TABLE, {"webhookId": webhook["id"], "deliveryKey": sent_key(log[0]["eventId"])})
    assert claim is not None
    assert (claim["attempt"], set(claim["loggedAttempts"])) == (2, {1, 2})
    assert run_lanes() == 0  # nothing left in the lane


def test_recovery_refuses_a_finished_attempt(api: Api, alice: User, bob: User, receivers: Any,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    use_settings(monkeypatch, DELIVERY_LEASE_SECONDS=str(LEASE), WEBHOOK_TIMEOUT_SECONDS="5")
    receiver: Receiver = receivers("ok")
    create_webhook(api, alice, receiver.url)
    handlers.handle_outbox_batch(stream_event(message_event(alice, bob)))
    [record] = _receive()
    assert handlers.handle_lane_batch({"Records": [record]}) == {"batchItemFailures": []}
    # The same message again (a replay after the lease): attempt 1 is logged, so it is a duplicate.
    from chalicelib.webhooks.delivery import lanes

    delivery = lanes.from_message(record["body"])
    assert attempt_log.recover(delivery).duplicate
    assert handlers.handle_lane_batch({"Records": [record]}) == {"batchItemFailures": []}
    assert len(receiver.requests) == 1


def test_held_receivers_hold_one_worker_each_while_the_pool_serves_other_lanes(
    api: Api, alice: User, bob: User, runner: Any, receivers: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pool starts with 2 workers (a fixed pool of 2 would be held by the first 2 hanging
    receivers); 3 receivers hold their first request open, each with 2 more events queued, and a
    healthy receiver's event written after all 3 are held still arrives, while each held receiver
    got exactly one request (its later events wait in its lane)."""
    from local_stack import lane_pool
    from local_stack import runner as runner_module

    monkeypatch.setattr(runner_module, "LANE_POOL", lane_pool.PoolBounds(maximum=8, spare=2))
    use_settings(monkeypatch, WEBHOOK_TIMEOUT_SECONDS="60", WEBHOOK_RETRY_DELAYS_SECONDS="0,0,0")
    held = [receivers("hold") for _ in range(3)]
    healthy: Receiver = receivers("ok")
    users = [alice, bob, make_user("Cy")]
    for user, receiver in zip(users, held, strict=True):
        create_webhook(api, user, receiver.url)
        for i in range(3):
            message_event(user, bob if user is not bob else alice, content=f"held-{i}")
    runner.start()
    try:
        for receiver in held:
            assert len(receiver.wait_for(1, timeout=30)) == 1
        healthy_user = make_user("Hale")
        create_webhook(api, healthy_user, healthy.url)
        message_event(healthy_user, alice, content="through")
        [arrived] = healthy.wait_for(1, timeout=30)
        assert envelope(arrived.body)["data"]["content"] == "through"
        assert [len(r.requests) for r in held] == [1, 1, 1]  # one worker each; their other events wait
        pool = next(iter(runner.lane_pools.values()))
        assert pool.peak >= 4  # grew past its 2 initial workers: 3 held + the healthy lane
    finally:
        for receiver in held:
            receiver.close()
        runner.stop()

