"""Delivery lanes: the SQS FIFO ``DeliveryQueue``, its message groups bounded per owner, plus slow lanes.

Every (event, webhook) delivery is one message. SQS FIFO hands out the messages of a message
group in order and never one while another of the same group is in flight, while other groups
proceed in parallel (SQS Developer Guide, "FIFO queue message grouping"); Lambda runs at most one
invocation per group. So the groups are the unit of concurrency, and :func:`group_id` chooses
them to make delivery fair (Svix's per-endpoint throttling, Hookdeck's per-destination
concurrency):

* **Owner lanes.** A webhook's deliveries go to one of its owner's ``DELIVERY_OWNER_LANES`` (4)
  groups, ``<ownerId>.<n>``, ``n`` its number among the owner's webhooks (``lane``, given at
  creation) modulo 4, so an owner's first 4 webhooks never share a lane: an owner with 40
  webhooks holds at most 4 lane workers, however many of its receivers hang; each webhook stays
  in one group, so its attempts still run one at a time.
* **Slow lanes.** A webhook whose circuit breaker is open (its last attempt timed out, until one
  succeeds: ``breakerOpenedAt`` on the webhook) is delivered in one of ``DELIVERY_SLOW_LANES``
  (4) groups shared by every such webhook, ``slow.<n>``: all timing-out endpoints together hold
  at most 4 workers, and their retries never re-enter the owners' lanes.

An attempt found in the lane that does not match its webhook's breaker (queued before it opened
or closed) is moved, not sent (:func:`chalicelib.webhooks.delivery.attempt.attempt`): an owner
lane sends only while the breaker is closed and a slow lane only while it is open. Only an
attempt in an owner lane opens the breaker and only one in a slow lane closes it, and each
webhook's attempts are serialized within each kind of lane, so two attempts to one webhook never
overlap and the failure policy stays exact.

``MessageDeduplicationId`` is the delivery's ``webhook-id`` for attempt 1 (a replayed stream
batch enqueues nothing twice within SQS's 5-minute deduplication window; later replays are
absorbed by the attempt claim, :mod:`chalicelib.webhooks.delivery.attempt_log`),
``<webhook-id>.<attempt>`` for the retries, ``.<recovery id>`` or ``.<redelivery id>`` appended
for an attempt an owner asked for (and its retries), and ``.<hops>`` appended for a delivery moved
between the kinds of lane, so that each attempt and move enters once.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import Any

from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
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
    """``webhook-id`` for attempt 1, ``<webhook-id>.<attempt>`` after; an attempt a recovery queued
    appends ``.<recovery id>``, one a single redelivery queued (or its retry) ``.<redelivery id>``,
    and a move between owner and slow lanes ``.<hops>`` (SQS: at most 128 characters).

    A recovery's or a redelivery's attempt has the number of a retry that may have been queued,
    and dropped unsent, minutes before (the webhook was disabled meanwhile): SQS would drop the
    owner's message as that retry's duplicate within its 5-minute deduplication interval, so it
    gets an id of its own. The ``webhook-id`` header the receiver sees is the delivery's, whatever
    the deduplication id (:func:`chalicelib.webhooks.signing.message_id`).
    """
    base = signing.message_id(delivery.event.event_id, delivery.webhook_id)
    asked = delivery.recovery_id or delivery.redelivery_id
    suffix = (f".{asked}" if asked else "") + (f".{delivery.hops}" if delivery.hops else "")
    if suffix:
        return f"{base}.{delivery.attempt}{suffix}"
    return base if delivery.attempt == 1 else f"{base}.{delivery.attempt}"


def _slot(webhook_id: str, lanes: int) -> int:
    """The webhook's fixed lane number among ``lanes`` (SHA-256 of its id: spread evenly, stable everywhere)."""
    return int.from_bytes(hashlib.sha256(webhook_id.encode()).digest()[:8], "big") % lanes


def group_id(delivery: Delivery) -> str:
    """The ``MessageGroupId`` of ``delivery``: ``slow.<n>`` while its webhook's breaker is open, else
    ``<ownerId>.<n>``; a message without an owner (queued by an earlier version) keeps the webhook's own lane."""
    config = settings()
    if delivery.slow:
        return f"slow.{_slot(delivery.webhook_id, config.DELIVERY_SLOW_LANES)}"
    if not delivery.owner_id:
        return delivery.webhook_id
    number = delivery.lane if delivery.lane is not None else _slot(delivery.webhook_id, config.DELIVERY_OWNER_LANES)
    return f"{delivery.owner_id}.{number % config.DELIVERY_OWNER_LANES}"


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
        "ownerId": delivery.owner_id,
        "lane": delivery.lane,
        "slow": delivery.slow,
        "hops": delivery.hops,
    }
    if event.request_id:
        body["requestId"] = event.request_id
    if delivery.recovery_id:
        body["recoveryId"] = delivery.recovery_id
    if delivery.redelivery_id:
        body["redeliveryId"] = delivery.redelivery_id
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
    recovery, redelivery = raw.get("recoveryId"), raw.get("redeliveryId")
    return Delivery(
        event=event, webhook_id=str(raw["webhookId"]), attempt=attempt, owner_id=str(raw.get("ownerId") or ""),
        lane=int(raw["lane"]) if raw.get("lane") is not None else None, slow=bool(raw.get("slow", False)),
        hops=int(raw.get("hops") or 0), recovery_id=str(recovery) if recovery else None,
        redelivery_id=str(redelivery) if redelivery else None,
    )


def enqueue(deliveries: Sequence[Delivery]) -> None:
    """Put ``deliveries`` into their lanes (:func:`group_id`), in the given order (batches of 10).

    Raises
    ------
    EnqueueFailed
        Some entries were refused; the ones before the first refused entry were queued.
    botocore.exceptions.ClientError, chalicelib.kernel.errors.DependencyUnavailable
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
                "MessageGroupId": group_id(delivery),
                "MessageDeduplicationId": deduplication_id(delivery),
            }
            for index, delivery in enumerate(chunk)
        ]
        failed = sorted(int(f["Id"]) + start for f in sqs.send_message_batch(QueueUrl=url, Entries=entries).get("Failed", []))
        if failed:
            raise EnqueueFailed(failed)
