"""Redelivery: one more attempt of an existing delivery, in its webhook's lane (Dashboard "Redeliver").

The new attempt carries the same ``webhook-id`` (receivers deduplicate on it) and the next
attempt number. It goes through the lane and the failure policy like any attempt: it is not
sent while the webhook is inactive, and when it fails, it counts and is retried on the
schedule. An earlier-scheduled retry that later finds its attempt number taken sends nothing.

Each redelivery has an id of its own (``rdl_`` + ULID) in its lane message's deduplication id
(:func:`chalicelib.webhooks.delivery.lanes.deduplication_id`), as a recovery has: its attempt
number may be that of a retry queued and dropped unsent minutes before (the webhook was disabled
meanwhile), and SQS FIFO would otherwise drop the redelivery as that retry's duplicate. Two
redeliveries of the same delivery asked at once get the same attempt number, so the attempt
claim (:mod:`chalicelib.webhooks.delivery.attempt_log`) lets one of them send; the other finds
the number taken and sends nothing.
"""

from __future__ import annotations

from collections.abc import Callable

from chalicelib.kernel import clock
from chalicelib.webhooks.delivery import attempt_log, lanes
from chalicelib.webhooks.delivery.envelope import Delivery


class UnknownDelivery(LookupError):
    """No attempt of that (event, webhook) delivery was ever made (or its log expired, 30 days)."""


def redeliver(webhook_id: str, event_id: str, owner_id: str, lane: int | None = None, slow: bool = False) -> Delivery:
    """Queue the next attempt of delivering ``event_id`` to ``webhook_id`` in the webhook's lane.

    The caller checks that the webhook belongs to the user asking (see
    :func:`chalicelib.webhooks.service.redeliver`).

    Parameters
    ----------
    webhook_id:
        ``whk_...``.
    event_id:
        ``evt_...``, as listed in the delivery log.
    owner_id, lane:
        The webhook's owner and its ``lane`` number (name its lane).
    slow:
        Whether the webhook's circuit breaker is open: the attempt is queued in a slow lane
        (``SlowDeliveryQueue``), never the owner's (a breaker that changes before the attempt
        runs moves it).

    Returns
    -------
    Delivery
        The queued attempt (``attempt`` = the last claimed attempt + 1, ``redelivery_id`` its
        own ``rdl_`` id).

    Raises
    ------
    UnknownDelivery
        No attempt of this delivery exists.
    botocore.exceptions.ClientError, chalicelib.kernel.errors.DependencyUnavailable
        DynamoDB or SQS refusing the call, or unreachable.
    """
    last = attempt_log.last_claim(webhook_id, event_id)
    if last is None:
        raise UnknownDelivery(f"no delivery of {event_id} to {webhook_id}")
    queued = Delivery(last.event, webhook_id, last.attempt + 1, owner_id=owner_id, lane=lane, slow=slow,
                      redelivery_id=clock.new_id("rdl"))
    lanes.enqueue([queued])
    return queued


def redeliver_many(
    webhook_id: str,
    event_ids: list[str],
    owner_id: str,
    lane: int | None = None,
    recovery_id: str | None = None,
    before_enqueue: Callable[[list[Delivery]], None] | None = None,
    slow: bool = False,
) -> list[Delivery]:
    """Queue the next attempt of each of ``event_ids`` to ``webhook_id``, in that order, in the
    webhook's lane (Dashboard "Recover failed deliveries"); each as :func:`redeliver` would: same
    ``webhook-id``, next attempt number. Events without a claim (log expired) are skipped.
    ``recovery_id`` marks each attempt as that recovery's (sent once, counted on it);
    ``before_enqueue`` is called with the attempts about to be queued (the recovery's record);
    ``slow`` (the webhook's circuit breaker is open) queues them in its slow lane.

    Returns
    -------
    list[Delivery]
        The queued attempts.

    Raises
    ------
    chalicelib.webhooks.delivery.lanes.EnqueueFailed, botocore.exceptions.ClientError
        SQS refused some entries (those before the first refused one were queued).
    """
    queued = []
    for event_id in event_ids:
        last = attempt_log.last_claim(webhook_id, event_id)
        if last is not None:
            queued.append(Delivery(last.event, webhook_id, last.attempt + 1, owner_id=owner_id, lane=lane, slow=slow,
                                   recovery_id=recovery_id))
    if before_enqueue is not None:
        before_enqueue(queued)
    lanes.enqueue(queued)
    return queued
