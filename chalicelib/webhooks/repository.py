"""Webhooks table access (item keyed by ``webhookId``; ``byOwner`` index on ``ownerId, createdAt``).

Item shape: :class:`~chalicelib.webhooks.records.WebhookRecord` (what every read returns).
``failCount`` counts consecutive failed delivery attempts; it only changes through atomic
UpdateItem expressions (``ADD``/``SET``), never read-modify-write, so
concurrent deliveries cannot lose an update.
"""

from __future__ import annotations

from collections.abc import Sequence

from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.webhooks.records import WebhookEdit, WebhookRecord, record


def _table() -> str:
    return settings().WEBHOOKS_TABLE


def _key(webhook_id: str) -> dict[str, str]:
    return {"webhookId": webhook_id}


def get_many(webhook_ids: Sequence[str]) -> dict[str, WebhookRecord]:
    """Webhook records by id (BatchGetItem); unknown ids are absent."""
    return {w["webhookId"]: record(w) for w in storage.batch_get(_table(), [{"webhookId": i} for i in webhook_ids])}


def get(webhook_id: str, consistent: bool = False) -> WebhookRecord | None:
    """One webhook record, or ``None`` (``consistent``: a strongly consistent read)."""
    item = storage.get(_table(), _key(webhook_id), consistent=consistent)
    return record(item) if item is not None else None


def create(item: WebhookRecord) -> None:
    """Put a new webhook (the id must be new)."""
    storage.put(_table(), item, condition="attribute_not_exists(webhookId)")


def next_lane_number(owner_id: str) -> int:
    """How many webhooks ``owner_id`` created before this one (0, 1, 2, ...): one atomic ``ADD`` on the
    owner's counter item ``lanes#<ownerId>`` (no ``ownerId`` attribute, so outside ``byOwner``).

    The number spreads an owner's webhooks over its delivery lanes in turn
    (:func:`chalicelib.webhooks.delivery.lanes.group_id`), so its first lanes' worth never share one.
    """
    item = storage.update(_table(), {"webhookId": f"lanes#{owner_id}"}, "ADD webhooks :one",
                          ExpressionAttributeValues=storage.values(one=1))
    return int(item["webhooks"]) - 1


def forget_lane_counter_op(owner_id: str) -> TransactItem:
    """Transaction ``Delete`` of ``owner_id``'s counter item ``lanes#<ownerId>`` (the account erasure,
    once every webhook of the owner is deleted)."""
    return storage.tx_delete(_table(), {"webhookId": f"lanes#{owner_id}"})


def list_by_owner(owner_id: str) -> list[WebhookRecord]:
    """Every webhook of ``owner_id``, newest first (Query on ``byOwner``)."""
    return [record(i) for i in storage.query_index(_table(), "byOwner", "ownerId", owner_id, newest_first=True)]


def delete_owned(webhook_id: str, owner_id: str) -> bool:
    """Delete ``webhook_id`` if ``owner_id`` owns it; ``False`` when missing or someone else's."""
    try:
        storage.delete(_table(), _key(webhook_id), condition="ownerId = :o", ExpressionAttributeValues=storage.values(o=owner_id))
    except storage.ConditionFailed:
        return False
    return True


def add_failure(webhook_id: str, open_breaker_at: str | None = None) -> WebhookRecord | None:
    """``ADD failCount 1`` on an existing, active webhook; the new item, or ``None`` when it is
    deleted or already inactive (nothing counted). ``open_breaker_at`` (ISO 8601 UTC, after a
    timeout) also opens its circuit breaker (``SET breakerOpenedAt``) in the same update."""
    update = "ADD failCount :one" + (" SET breakerOpenedAt = if_not_exists(breakerOpenedAt, :opened)" if open_breaker_at else "")
    values = storage.values(one=1, yes=True, **({"opened": open_breaker_at} if open_breaker_at else {}))
    try:
        return record(storage.update(
            _table(),
            _key(webhook_id),
            update,
            condition="attribute_exists(webhookId) AND active = :yes",
            ExpressionAttributeValues=values,
        ))
    except storage.ConditionFailed:
        return None


def open_breaker(webhook_id: str, opened_at: str) -> bool:
    """Open the circuit breaker of an active webhook whose breaker is closed (``SET breakerOpenedAt``,
    ISO 8601 UTC) without counting a failure; ``True`` when this call opened it.

    Used for the webhooks that share a lane and a host with one that just timed out
    (:func:`chalicelib.webhooks.delivery.attempt.attempt`)."""
    try:
        storage.update(
            _table(),
            _key(webhook_id),
            "SET breakerOpenedAt = :opened",
            condition="attribute_exists(webhookId) AND active = :yes AND attribute_not_exists(breakerOpenedAt)",
            ExpressionAttributeValues=storage.values(opened=opened_at, yes=True),
        )
    except storage.ConditionFailed:
        return False
    return True


#: ``disabledReason`` of a webhook its owner switched off.
DISABLED_BY_OWNER = "Disabled by its owner"


def deactivate(
    webhook_id: str, limit: int, now: str, last_failure: str | None = None, event: TransactItem | None = None
) -> bool:
    """Set ``active`` false when ``failCount`` reached ``limit``; ``True`` when this call did it.

    The same update records when (``disabledAt``), why (``disabledReason``: "Disabled after
    ``limit`` consecutive failures") and, when given, the failure that did it (``lastFailure``,
    e.g. ``HTTP 500``); the Dashboard shows them. ``event`` (the outbox ``Put`` announcing it,
    :func:`chalicelib.webhooks.operational.disabled_event_op`) is written in one
    TransactWriteItems with the update, so it exists exactly when this call switched the webhook off.
    """
    failure = ", lastFailure = :last" if last_failure is not None else ""
    extra = {"last": last_failure} if last_failure is not None else {}
    expression = "SET active = :no, disabledAt = :now, updatedAt = :now, disabledReason = :why" + failure
    condition = "attribute_exists(webhookId) AND active = :yes AND failCount >= :limit"
    values = storage.values(no=False, yes=True, limit=limit, now=now, why=disabled_by_failures(limit), **extra)
    try:
        if event is None:
            storage.update(_table(), _key(webhook_id), expression, condition=condition, ExpressionAttributeValues=values)
        else:
            change = storage.tx_update(_table(), _key(webhook_id), expression, condition, ExpressionAttributeValues=values)
            storage.transact([change, event])
    except (storage.ConditionFailed, storage.TransactionConflict):
        return False
    return True


def disabled_by_failures(limit: int) -> str:
    """The ``disabledReason`` stored when the failure policy switches a webhook off after ``limit`` failures."""
    return f"Disabled after {limit} consecutive failures"


def reset_failures(webhook_id: str) -> bool:
    """``SET failCount = 0`` when it is above 0, closing the circuit breaker (``REMOVE breakerOpenedAt``:
    it opens only with a failure); ``True`` when it changed (``False``: already 0 or gone)."""
    try:
        storage.update(
            _table(),
            _key(webhook_id),
            "SET failCount = :zero REMOVE breakerOpenedAt",
            condition="attribute_exists(webhookId) AND (failCount > :zero OR attribute_exists(breakerOpenedAt))",
            ExpressionAttributeValues=storage.values(zero=0),
        )
    except storage.ConditionFailed:
        return False
    return True


def update_owned(webhook_id: str, owner_id: str, changes: WebhookEdit) -> WebhookRecord | None:
    """``SET`` each of ``changes`` on ``webhook_id`` if ``owner_id`` owns it; the new item, or ``None``
    when it is missing or someone else's (one conditional UpdateItem, no read first)."""
    names = {f"#f{i}": name for i, name in enumerate(changes)}
    values = {f":v{i}": value for i, value in enumerate(changes.values())}
    expression = "SET " + ", ".join(f"#f{i} = :v{i}" for i in range(len(changes)))
    try:
        return record(storage.update(
            _table(),
            _key(webhook_id),
            expression,
            condition="ownerId = :owner",
            ExpressionAttributeNames=names,
            ExpressionAttributeValues=storage.values(owner=owner_id, **{k[1:]: v for k, v in values.items()}),
        ))
    except storage.ConditionFailed:
        return None


def enable_owned(webhook_id: str, owner_id: str, now: str) -> WebhookRecord | None:
    """Switch ``webhook_id`` on with ``failCount`` 0 (and no ``disabledAt``, reason, last failure or open
    circuit breaker) if ``owner_id`` owns it."""
    try:
        return record(storage.update(
            _table(),
            _key(webhook_id),
            "SET active = :yes, failCount = :zero, updatedAt = :now REMOVE disabledAt, disabledReason, lastFailure, breakerOpenedAt",
            condition="ownerId = :owner",
            ExpressionAttributeValues=storage.values(yes=True, zero=0, now=now, owner=owner_id),
        ))
    except storage.ConditionFailed:
        return None


def enable_inactive_owned(webhook_id: str, owner_id: str, now: str, event: TransactItem) -> bool:
    """:func:`enable_owned` of a webhook that is inactive now, with ``event`` (the outbox ``Put`` of
    ``webhook.enabled``) in the same TransactWriteItems; ``False`` (nothing written) when it is
    missing, someone else's or already active."""
    change = storage.tx_update(
        _table(),
        _key(webhook_id),
        "SET active = :yes, failCount = :zero, updatedAt = :now REMOVE disabledAt, disabledReason, lastFailure",
        "ownerId = :owner AND active = :no",
        ExpressionAttributeValues=storage.values(yes=True, no=False, zero=0, now=now, owner=owner_id),
    )
    try:
        storage.transact([change, event])
    except storage.TransactionConflict:
        return False
    return True


def disable_owned(webhook_id: str, owner_id: str, now: str) -> WebhookRecord | None:
    """Switch ``webhook_id`` off (``failCount`` kept; ``disabledReason`` :data:`DISABLED_BY_OWNER`) if ``owner_id`` owns it."""
    try:
        return record(storage.update(
            _table(),
            _key(webhook_id),
            "SET active = :no, disabledAt = :now, updatedAt = :now, disabledReason = :why REMOVE lastFailure",
            condition="ownerId = :owner",
            ExpressionAttributeValues=storage.values(no=False, now=now, owner=owner_id, why=DISABLED_BY_OWNER),
        ))
    except storage.ConditionFailed:
        return None


def rotate_owned(webhook_id: str, owner_id: str, current: str, new: str, previous_expires_at: str, now: str) -> WebhookRecord | None:
    """Replace the secret ``current`` by ``new``, keeping ``current`` as ``previousSecret`` until
    ``previous_expires_at``; ``None`` when missing, someone else's, or rotated concurrently
    (the condition on the current secret means no rotation is lost or overwritten)."""
    try:
        return record(storage.update(
            _table(),
            _key(webhook_id),
            "SET secret = :new, previousSecret = :current, previousSecretExpiresAt = :expires, updatedAt = :now",
            condition="ownerId = :owner AND secret = :current",
            ExpressionAttributeValues=storage.values(new=new, current=current, expires=previous_expires_at, now=now, owner=owner_id),
        ))
    except storage.ConditionFailed:
        return None


def start_recovery(webhook_id: str, recovery_id: str, at: str, queued: int) -> None:
    """Record a new recovery on the webhook (replacing the previous one's counts): ``queued`` attempts, none sent yet."""
    storage.update(
        _table(),
        _key(webhook_id),
        "SET recoveryId = :id, recoveryAt = :at, recoveryQueued = :queued, recoverySent = :zero, recoveryNotSent = :zero",
        condition="attribute_exists(webhookId)",
        ExpressionAttributeValues=storage.values(id=recovery_id, at=at, queued=queued, zero=0),
    )


def count_recovery(webhook_id: str, recovery_id: str, sent: bool, amount: int = 1) -> bool:
    """``ADD`` ``amount`` to the recovery's sent (``sent``) or not-sent count, if it is still the
    webhook's latest recovery; ``True`` when counted (``False``: a newer recovery, or no webhook)."""
    attribute = "recoverySent" if sent else "recoveryNotSent"
    try:
        storage.update(
            _table(),
            _key(webhook_id),
            f"ADD {attribute} :n",
            condition="recoveryId = :id",
            ExpressionAttributeValues=storage.values(n=amount, id=recovery_id),
        )
    except storage.ConditionFailed:
        return False
    return True
