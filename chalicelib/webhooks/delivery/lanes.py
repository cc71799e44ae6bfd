"""Per-webhook delivery lanes: the SQS FIFO ``DeliveryQueue``, one message group per webhook.

Every (event, webhook) delivery is one message with ``MessageGroupId`` = the webhook id. SQS
FIFO hands out the messages of a group in order and never one while another of the same group
is in flight, while other groups proceed in parallel (SQS Developer Guide, "FIFO queue message
grouping"): so deliveries to one webhook run one at a time in event order, and a hanging
receiver holds only its own lane. ``MessageDeduplicationId`` is the delivery's ``webhook-id``
for attempt 1 (a replayed stream batch enqueues nothing twice within SQS's 5-minute
deduplication window; later replays are absorbed by the attempt claim,
:mod:`chalicelib.webhooks.delivery.attempt_log`) and ``<webhook-id>.<attempt>`` for the
retries and redeliveries that re-enter the lane, so that each attempt number enters once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from chalicelib import storage
from chalicelib.config import settings
from chalicelib.webhooks import signing
from chalicelib.webhooks.delivery.envelope import Delivery, Event

#: SendMessageBatch takes at most 10 entries (SQS API reference).
MAX_BATCH = 10


class EnqueueFailed(Exception):
    """SQS refused some entries of a batch; ``failed`` are their indexes in the given sequence."""

    def __init__(self, failed: list[int]) -> None:
        super().__init__(f"{len(failed)} deliveries were not queued")
        self.failed = failed


def deduplication_id(delivery: Delivery) -> str:
    """``webhook-id`` for attempt 1, ``<webhook-id>.<attempt>`` after, ``<webhook-id>.<attempt>.<recovery id>``
    for an attempt a recovery queued (SQS: at most 128 characters).

    A recovery's attempt has the number of a retry that may have been queued, and dropped unsent,
    minutes before (the webhook was disabled meanwhile): SQS would drop the recovery's message as
    that retry's duplicate within its 5-minute deduplication interval, so it gets an id of its own.
    """
    base = signing.message_id(delivery.event.event_id, delivery.webhook_id)
    if delivery.recovery_id:
        return f"{base}.{delivery.attempt}.{delivery.recovery_id}"
    return base if delivery.attempt == 1 else f"{base}.{delivery.attempt}"


def to_message(delivery: Delivery) -> str:
    """The JSON body of a lane (or retry) message: the whole event, so no outbox read is needed."""
    event = delivery.event
    body: dict[str, Any] = {
        "webhookId": delivery.webhook_id,
        "attempt": delivery.attempt,
        "eventId": event.event_id,
        "type": event.type,
        "createdAt": event.created_at,
        "data": event.data,
        "test": event.test,
    }
    if event.request_id:
        body["requestId"] = event.request_id
    if delivery.recovery_id:
        body["recoveryId"] = delivery.recovery_id
    return json.dumps(body, separators=(",", ":"), ensure_ascii=False)


def from_message(body: str) -> Delivery:
    """Parse a message body written by :func:`to_message`.

    Raises
    ------
    ValueError, KeyError, TypeError
        A malformed message (reported failed; it ends in the dead-letter queue).
    """
    raw: dict[str, Any] = json.loads(body)
    event = Event(
        event_id=str(raw["eventId"]),
        type=str(raw["type"]),
        created_at=str(raw["createdAt"]),
        data=dict(raw["data"]),
        routing={},
        test=bool(raw.get("test", False)),
        request_id=str(raw["requestId"]) if raw.get("requestId") else None,
    )
    attempt = int(raw["attempt"])
    if attempt < 1:
        raise ValueError(f"attempt must be >= 1, got {attempt}")
    recovery = raw.get("recoveryId")
    return Delivery(event=event, webhook_id=str(raw["webhookId"]), attempt=attempt,
                    recovery_id=str(recovery) if recovery else None)


def enqueue(deliveries: Sequence[Delivery]) -> None:
    """Put ``deliveries`` into their webhooks' lanes, in the given order (batches of 10).

    Raises
    ------
    EnqueueFailed
        Some entries were refused; the ones before the first refused entry were queued.
    botocore.exceptions.ClientError, chalicelib.errors.DependencyUnavailable
        SQS refusing the call, or unreachable.
    """
    url = settings().DELIVERY_QUEUE_URL
    sqs = storage.client("sqs")
    for start in range(0, len(deliveries), MAX_BATCH):
        chunk = deliveries[start : start + MAX_BATCH]
        entries = [
            {
                "Id": str(index),
                "MessageBody": to_message(delivery),
                "MessageGroupId": delivery.webhook_id,
                "MessageDeduplicationId": deduplication_id(delivery),
            }
            for index, delivery in enumerate(chunk)
        ]
        failed = sorted(int(f["Id"]) + start for f in sqs.send_message_batch(QueueUrl=url, Entries=entries).get("Failed", []))
        if failed:
            raise EnqueueFailed(failed)
