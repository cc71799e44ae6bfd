"""The retry schedule of failed deliveries, through the SQS ``DeliveryRetryQueue``.

A failed attempt n (1-based) is retried after ``delays[n-1]`` seconds as long as the webhook is
active; with the default ``WEBHOOK_RETRY_DELAYS_SECONDS="30,120,600"`` a delivery is tried at
most 4 times (after 0 s, 30 s, 2.5 min and 12.5 min). The delay is the message's
``DelaySeconds`` (SQS API reference, SendMessage: 0..900 seconds). A message carries the
whole event, so a retry needs no read of the (expiring) outbox.
"""

from __future__ import annotations

import json
from typing import Any

from chalicelib import storage
from chalicelib.config import settings
from chalicelib.webhooks.events import Delivery, Event

#: SQS ``DelaySeconds`` upper bound (15 minutes).
MAX_DELAY_SECONDS = 900


def delays() -> tuple[int, ...]:
    """The configured delays in seconds, one per retry (``WEBHOOK_RETRY_DELAYS_SECONDS``).

    Raises
    ------
    ValueError
        A value that is not an integer within 0..900.
    """
    raw = settings().WEBHOOK_RETRY_DELAYS_SECONDS
    values = tuple(int(part) for part in raw.split(",") if part.strip())
    if any(not 0 <= v <= MAX_DELAY_SECONDS for v in values):
        raise ValueError(f"WEBHOOK_RETRY_DELAYS_SECONDS values must be within 0..{MAX_DELAY_SECONDS}: {raw!r}")
    return values


def next_delay(failed_attempt: int) -> int | None:
    """Seconds before the retry that follows ``failed_attempt``, or ``None`` when none is left."""
    schedule = delays()
    return schedule[failed_attempt - 1] if failed_attempt <= len(schedule) else None


def to_message(delivery: Delivery) -> str:
    """The JSON body of a retry message."""
    event = delivery.event
    return json.dumps(
        {
            "webhookId": delivery.webhook_id,
            "attempt": delivery.attempt,
            "eventId": event.event_id,
            "type": event.type,
            "createdAt": event.created_at,
            "data": event.data,
        },
        separators=(",", ":"),
    )


def from_message(body: str) -> Delivery:
    """Parse a retry message body (:func:`to_message`).

    Raises
    ------
    ValueError, KeyError
        A malformed message (it is reported as failed and ends in the dead-letter queue).
    """
    raw: dict[str, Any] = json.loads(body)
    event = Event(event_id=str(raw["eventId"]), type=str(raw["type"]), created_at=str(raw["createdAt"]),
                  data=dict(raw["data"]), routing={})
    return Delivery(event=event, webhook_id=str(raw["webhookId"]), attempt=int(raw["attempt"]))


def schedule(delivery: Delivery, delay_seconds: int) -> None:
    """Queue ``delivery`` (already numbered as the next attempt) to run after ``delay_seconds``."""
    storage.client("sqs").send_message(
        QueueUrl=settings().DELIVERY_RETRY_QUEUE_URL,
        MessageBody=to_message(delivery),
        DelaySeconds=min(max(delay_seconds, 0), MAX_DELAY_SECONDS),
    )
