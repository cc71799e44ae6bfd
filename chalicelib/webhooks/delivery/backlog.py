"""The backlog of a webhook whose circuit breaker is open: parked in DynamoDB, one attempt queued.

While a webhook's breaker is open (:mod:`chalicelib.webhooks.delivery.lanes`), its deliveries
wait in the Deliveries table, not in SQS: one item per delivery under the webhook,
``PARKED#<eventId>#<recovery or redelivery id>#<attempt>`` (:func:`parked_key`, so a Query
returns them in event order), holding its lane message. At most one of them, the *head*, is
queued at a time: its id (:func:`head_id`) is the webhook's ``slowHead``. The head's attempts run
in the webhook's slow lane (``SlowDeliveryQueue``) and its retries follow the schedule as any
delivery's; when its attempts end without a success (no retry left, a recovery's single
attempt), the next parked delivery becomes the head (:func:`end_head`); when one succeeds, the
breaker closes and the whole backlog is released into the owner's lanes in event order
(:func:`settle`). When the failure policy switches the webhook off, the backlog is dropped
unsent and unlogged (:func:`drain`), as a disabled webhook's queued deliveries drain. So an open
breaker's backlog costs one queued message, whatever its size: SQS FIFO quotas are per queue, and
the embedded moto of local runs costs more per call the deeper a queue is (Svix likewise
schedules each attempt from its store, not from a queue holding the whole backlog).

Nothing is lost on a fault: a delivery is parked (``Put``) in one TransactWriteItems with the
webhook's ``parkedCount`` (``ADD``, on the condition that the webhook is active), and it leaves
the backlog (``Delete`` with ``ADD -1``) only after it was queued, with its own deduplication id
(a fault in between queues it again, and SQS or the attempt claim drops the copy). A head is
claimed (``slowHead``) before it is queued, on the condition that no other delivery holds that
place or that it is the same head (a retried claim). Whoever parks a delivery, closes a breaker
or ends a head then settles the webhook (:func:`settle`) from a strongly consistent read: an
open breaker without a head gets one, a closed breaker with parked deliveries releases them.
Since every change of the head or the breaker is followed by such a settle, a parked delivery
is never left without one to come.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import timedelta
from typing import Any

from chalicelib.kernel import clock
from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.webhooks import repository
from chalicelib.webhooks.delivery import lanes
from chalicelib.webhooks.delivery.envelope import Delivery
from chalicelib.webhooks.records import WebhookRecord

PREFIX = "PARKED#"
#: Days a parked delivery is kept at most (TTL): a backlog ends within the retry schedule of its
#: webhook's five failures, or is dropped when the webhook is switched off; this bounds the rest
#: (a webhook deleted while its breaker was open).
PARKED_DAYS = 7
#: TransactWriteItems takes at most 100 items (DynamoDB API reference).
MAX_TRANSACTION = 100


def head_id(delivery: Delivery) -> str:
    """The id of ``delivery`` among its webhook's backlog and ``slowHead``, the same for all of its
    attempts: ``<eventId>#<recovery or redelivery id, or "">``."""
    return f"{delivery.event.event_id}#{delivery.recovery_id or delivery.redelivery_id or ''}"


def parked_key(delivery: Delivery) -> str:
    """Range key (``deliveryKey``) of a parked delivery: ``PARKED#<head id>#<attempt, 3 digits>``."""
    return f"{PREFIX}{head_id(delivery)}#{delivery.attempt:03d}"


def _table() -> str:
    return settings().DELIVERIES_TABLE


def _parked_item(delivery: Delivery) -> dict[str, Any]:
    expires = clock.epoch_seconds(clock.now() + timedelta(days=PARKED_DAYS))
    return {"webhookId": delivery.webhook_id, "deliveryKey": parked_key(delivery),
            "message": lanes.to_message(delivery), "expiresAt": expires}


def park(deliveries: Sequence[Delivery]) -> list[str]:
    """Park ``deliveries`` in their webhooks' backlogs (no SQS message); returns the webhook ids
    whose backlog took them (then :func:`settle` them).

    One TransactWriteItems per up to 100 items, each webhook's deliveries with its
    ``ADD parkedCount``; when one condition fails (a delivery parked before: a replay; a webhook
    switched off or deleted meanwhile), each webhook is parked on its own, and each delivery on
    its own after that: a delivery parked before stays as it is, and a switched-off webhook's
    deliveries are dropped (they would drain in a lane).

    Raises
    ------
    botocore.exceptions.ClientError, chalicelib.kernel.errors.DependencyUnavailable
        DynamoDB refusing the call, or unreachable (nothing of that call is parked).
    """
    by_webhook: dict[str, list[Delivery]] = {}
    for delivery in deliveries:
        by_webhook.setdefault(delivery.webhook_id, []).append(delivery)
    chunks: list[list[str]] = [[]]
    size = 0
    for webhook_id, parked in by_webhook.items():
        if size + len(parked) + 1 > MAX_TRANSACTION and chunks[-1]:
            chunks.append([])
            size = 0
        chunks[-1].append(webhook_id)
        size += len(parked) + 1
    taken: list[str] = []
    for chunk in chunks:
        try:
            storage.transact([op for w in chunk for op in _park_ops(w, by_webhook[w])])
            taken += chunk
        except storage.TransactionConflict:
            taken += [w for w in chunk if _park_one_by_one(w, by_webhook[w])]
    return taken


def _park_ops(webhook_id: str, deliveries: Sequence[Delivery]) -> list[TransactItem]:
    puts = [storage.tx_put(_table(), _parked_item(d), "attribute_not_exists(deliveryKey)") for d in deliveries]
    return [*puts, repository.park_op(webhook_id, len(deliveries))]


def _park_one_by_one(webhook_id: str, deliveries: Sequence[Delivery]) -> bool:
    """Park each delivery on its own; ``False`` when the webhook is switched off or deleted."""
    for delivery in deliveries:
        try:
            storage.transact(_park_ops(webhook_id, [delivery]))
        except storage.TransactionConflict as exc:
            if exc.reasons[1:2] == ["ConditionalCheckFailed"]:
                return False  # inactive or deleted: dropped, as its lane would drain it
            # parked before (a replayed batch or a retried call): it stays as it is
    return True


def parked(webhook_id: str, limit: int | None = None) -> list[Delivery]:
    """The webhook's parked deliveries in event order (strongly consistent Query), at most ``limit``."""
    params: dict[str, Any] = {
        "KeyConditionExpression": "webhookId = :w AND begins_with(deliveryKey, :p)",
        "ExpressionAttributeValues": storage.values(w=webhook_id, p=PREFIX),
        "ConsistentRead": True,
    }
    if limit is not None:
        items, _ = storage.query_page(_table(), Limit=limit, **params)
    else:
        items = storage.query(_table(), **params)
    return [lanes.from_message(str(item["message"])) for item in items]


def unpark(webhook_id: str, deliveries: Sequence[Delivery]) -> None:
    """Take ``deliveries`` out of the backlog (``Delete`` each with ``ADD parkedCount -n``, one
    transaction); any another worker took out already are skipped (then one by one)."""
    if not deliveries:
        return
    deletes = [storage.tx_delete(_table(), {"webhookId": webhook_id, "deliveryKey": parked_key(d)}, "attribute_exists(deliveryKey)")
               for d in deliveries]
    try:
        storage.transact([*deletes, repository.park_op(webhook_id, -len(deliveries))])
    except storage.TransactionConflict:
        if len(deliveries) == 1:
            return  # taken out by another worker (or the webhook is gone)
        for delivery in deliveries:
            unpark(webhook_id, [delivery])


def settle(webhook_ids: Sequence[str]) -> None:
    """Give each webhook's backlog its next step, from a strongly consistent read: an active
    webhook with an open breaker and no head gets its oldest parked delivery queued as the head
    (:func:`pump`); one with a closed breaker and parked deliveries releases them into its owner's
    lanes in event order (:func:`release`). Inactive or deleted webhooks are left alone (the
    failure policy drains a backlog; a webhook's owner switching it on again releases it with
    its next event).

    Raises
    ------
    botocore.exceptions.ClientError, chalicelib.kernel.errors.DependencyUnavailable
        DynamoDB or SQS refusing the call, or unreachable (settling again is safe).
    """
    if not webhook_ids:
        return
    for webhook in repository.get_many(list(dict.fromkeys(webhook_ids)), consistent=True).values():
        if not webhook.get("active"):
            continue
        if webhook.get("breakerOpenedAt"):
            if not webhook.get("slowHead"):
                pump(webhook)
        elif int(webhook.get("parkedCount") or 0) > 0:
            release(webhook)


def pump(webhook: WebhookRecord) -> bool:
    """Queue the oldest parked delivery of ``webhook`` (breaker open) in its slow lane as its head:
    claim ``slowHead`` for it, send it, then take it out of the backlog. ``False`` when nothing
    is parked or another head holds the place."""
    oldest = parked(webhook["webhookId"], limit=1)
    if not oldest:
        return False
    head = oldest[0]
    if not repository.claim_head(webhook["webhookId"], head_id(head)):
        return False
    lanes.enqueue([replace(head, owner_id=webhook["ownerId"], lane=webhook.get("lane"), slow=True)])
    unpark(webhook["webhookId"], [head])
    return True


def release(webhook: WebhookRecord) -> int:
    """Queue every parked delivery of ``webhook`` (breaker closed) in its owner lane, in event
    order (batches of 10, each taken out of the backlog once queued). Returns how many."""
    backlog = parked(webhook["webhookId"])
    for start in range(0, len(backlog), lanes.MAX_BATCH):
        chunk = backlog[start : start + lanes.MAX_BATCH]
        lanes.enqueue([replace(d, owner_id=webhook["ownerId"], lane=webhook.get("lane"), slow=False) for d in chunk])
        unpark(webhook["webhookId"], chunk)
    return len(backlog)


def drain(webhook_id: str) -> int:
    """Drop every parked delivery of a webhook the failure policy switched off (unsent, unlogged);
    returns how many."""
    backlog = parked(webhook_id)
    for start in range(0, len(backlog), MAX_TRANSACTION - 1):
        unpark(webhook_id, backlog[start : start + MAX_TRANSACTION - 1])
    return len(backlog)


def end_head(webhook_id: str, delivery: Delivery) -> None:
    """The attempts of ``delivery``, its webhook's head, ended without a success: give the place to
    the next parked delivery (``REMOVE slowHead``, then :func:`settle`)."""
    if repository.end_head(webhook_id, head_id(delivery)):
        settle([webhook_id])


def route(deliveries: Sequence[Delivery], parking: frozenset[str] = frozenset()) -> None:
    """Queue ``deliveries`` (:func:`chalicelib.webhooks.delivery.lanes.enqueue`) except those of a
    webhook with an open breaker (``slow``) or named in ``parking`` (a closed breaker whose backlog
    is not released yet: its deliveries must not overtake it), which are parked and settled.

    Raises
    ------
    chalicelib.webhooks.delivery.lanes.EnqueueFailed
        As :func:`chalicelib.webhooks.delivery.lanes.enqueue`, indexes in the queued ones' order.
    botocore.exceptions.ClientError, chalicelib.kernel.errors.DependencyUnavailable
        DynamoDB or SQS refusing the call, or unreachable.
    """
    waiting = [d for d in deliveries if d.slow or d.webhook_id in parking]
    lanes.enqueue([d for d in deliveries if not (d.slow or d.webhook_id in parking)])
    if waiting:
        settle(park(waiting))
