"""A slow-lane message carrying several webhooks' deliveries of one event
(chalicelib/webhooks/delivery/handlers.py, ``handle_lane_batch``): the attempts run one after
another in the message's order; a fault or a held attempt stops the rest and reports the message."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.webhooks.delivery import attempt, handlers, lanes
from chalicelib.webhooks.delivery.envelope import Delivery, Event


class FakeSqs:
    """Records the visibility changes of lane messages."""

    def __init__(self) -> None:
        self.visibility: list[int] = []

    def change_message_visibility(self, QueueUrl: str, ReceiptHandle: str, VisibilityTimeout: int) -> dict[str, Any]:
        self.visibility.append(VisibilityTimeout)
        return {}


@pytest.fixture
def sqs(monkeypatch: pytest.MonkeyPatch) -> FakeSqs:
    fake = FakeSqs()
    monkeypatch.setattr(storage, "client", lambda name: fake)
    return fake


def _shared_record(webhooks: int) -> tuple[dict[str, Any], list[Delivery]]:
    event = Event("evt_1", "message.new", "2026-11-22T00:00:00.000Z", {"text": "hi"}, {})
    members = [Delivery(event, f"whk_{i}", owner_id="usr_a", lane=4 * i, slow=True) for i in range(webhooks)]
    record = {
        "messageId": "m-1", "receiptHandle": "rh-1", "body": lanes.to_message(members[0], members[1:]),
        "attributes": {"MessageGroupId": lanes.group_id(members[0]), "ApproximateReceiveCount": "1"},
        "eventSourceARN": settings().DELIVERY_SLOW_QUEUE_ARN,
    }
    return record, members


def test_a_shared_messages_attempts_run_one_after_another_in_order(sqs: FakeSqs, monkeypatch: pytest.MonkeyPatch) -> None:
    record, members = _shared_record(3)
    made: list[Delivery] = []
    monkeypatch.setattr(attempt, "attempt", lambda delivery, heartbeat=None: made.append(delivery) or attempt.Result.FAILED)
    assert handlers.handle_lane_batch({"Records": [record]}) == {"batchItemFailures": []}
    assert made == members
    # Each attempt's heartbeat holds the message for the lease from its start.
    assert sqs.visibility == [settings().DELIVERY_LEASE_SECONDS] * 3


@pytest.mark.parametrize("fault", [RuntimeError("DynamoDB unavailable"), attempt.Held(12.5)])
def test_a_fault_stops_the_rest_and_reports_the_message(sqs: FakeSqs, monkeypatch: pytest.MonkeyPatch, fault: Exception) -> None:
    record, _ = _shared_record(3)
    made: list[str] = []

    def fake_attempt(delivery: Delivery, heartbeat: Any = None) -> attempt.Result:
        made.append(delivery.webhook_id)
        if delivery.webhook_id == "whk_1":
            raise fault
        return attempt.Result.SENT

    monkeypatch.setattr(attempt, "attempt", fake_attempt)
    assert handlers.handle_lane_batch({"Records": [record]}) == {"batchItemFailures": [{"itemIdentifier": "m-1"}]}
    assert made == ["whk_0", "whk_1"]  # the third waits for the message's return (the first then finds its claim)
    given_back = 13 if isinstance(fault, attempt.Held) else handlers.FAULT_BACKOFF_SECONDS
    assert sqs.visibility[-1] == given_back
