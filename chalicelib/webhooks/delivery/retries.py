"""The retry schedule of failed deliveries, through the SQS ``DeliveryRetryQueue``.

A failed attempt n (1-based) is retried after ``delays[n-1]`` seconds as long as the webhook is
active; with the default ``WEBHOOK_RETRY_DELAYS_SECONDS="30,120,600"`` a delivery is tried at
most 4 times (after 0 s, 30 s, 2.5 min and 12.5 min). The wait is the retry message's
``DelaySeconds`` on this standard queue (SQS API reference, SendMessage: 0..900 seconds; a FIFO
queue has no per-message delay, so the wait cannot happen in the lane itself). When the delay is
over, the retry consumer puts the attempt back into its webhook's lane
(:mod:`chalicelib.webhooks.delivery.lanes`), behind what the lane holds then, so it never runs
beside another attempt to the same webhook.
"""

from __future__ import annotations

from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.webhooks.delivery.envelope import Delivery
from chalicelib.webhooks.delivery.lanes import to_message

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


def schedule(delivery: Delivery, delay_seconds: int) -> None:
    """Hold ``delivery`` (already numbered as the next attempt) for ``delay_seconds``, then it re-enters its lane."""
    storage.client("sqs").send_message(
        QueueUrl=settings().DELIVERY_RETRY_QUEUE_URL,
        MessageBody=to_message(delivery),
        DelaySeconds=min(max(delay_seconds, 0), MAX_DELAY_SECONDS),
    )
