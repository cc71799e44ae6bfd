"""Deliveries table access: attempt claims (no duplicates) and the attempt log (with TTL).

Two kinds of items share the table (hash ``webhookId``, range ``deliveryKey``):

* ``SENT#<eventId>``: the claim of a delivery, ``{attempt, claimedAt, event, expiresAt}``.
  Attempt 1 is claimed with ``attribute_not_exists`` before sending, attempt n > 1 by moving
  ``attempt`` from n-1 to n; a replayed stream batch or a redelivered message finds the
  claim taken and sends nothing. ``event`` (the lane message of attempt 1, JSON) lets a
  redelivery rebuild the delivery after the outbox item expired.
* ``LOG#<attemptedAt>#<eventId>#<attempt>``: one logged attempt (time, attempt number,
  status code or error class, duration, response body up to 4 KiB). The key sorts by time,
  so a descending Query on the ``LOG#`` prefix lists the newest first.

Both expire :data:`RETENTION_DAYS` after writing (DynamoDB TTL on ``expiresAt``, epoch seconds).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from itertools import islice
from typing import Any

from chalicelib import clock, storage
from chalicelib.config import settings
from chalicelib.webhooks.delivery import lanes, records
from chalicelib.webhooks.delivery.envelope import Delivery
from chalicelib.webhooks.delivery.records import AttemptEntry, AttemptRecord, ClaimRecord

RETENTION_DAYS = 30
_LOG = "LOG#"


def _table() -> str:
    return settings().DELIVERIES_TABLE


def _expires_at() -> int:
    return clock.epoch_seconds(clock.now() + timedelta(days=RETENTION_DAYS))


def sent_key(event_id: str) -> str:
    """Range key of the send claim of ``event_id``."""
    return f"SENT#{event_id}"


def claim(delivery: Delivery) -> bool:
    """Claim attempt ``delivery.attempt``; ``False`` when it (or a later one) is already taken.

    Attempt 1 creates the claim (with the event, for redelivery); attempt n > 1 moves the
    claim's ``attempt`` from n-1 to n.
    """
    key = {"webhookId": delivery.webhook_id, "deliveryKey": sent_key(delivery.event.event_id)}
    now = clock.iso()
    try:
        if delivery.attempt == 1:
            item: ClaimRecord = {
                "webhookId": key["webhookId"],
                "deliveryKey": key["deliveryKey"],
                "eventId": delivery.event.event_id,
                "attempt": 1,
                "claimedAt": now,
                "event": lanes.to_message(delivery),
                "expiresAt": _expires_at(),
            }
            storage.put(_table(), item, condition="attribute_not_exists(deliveryKey)")
        else:
            storage.update(
                _table(),
                key,
                "SET attempt = :n, claimedAt = :now",
                condition="attempt = :prev",
                ExpressionAttributeValues=storage.values(n=delivery.attempt, prev=delivery.attempt - 1, now=now),
            )
    except storage.ConditionFailed:
        return False
    return True


def last_claim(webhook_id: str, event_id: str) -> Delivery | None:
    """The newest claimed attempt of delivering ``event_id`` to ``webhook_id``, or ``None`` when none was."""
    item = storage.get(_table(), {"webhookId": webhook_id, "deliveryKey": sent_key(event_id)}, consistent=True)
    if item is None or "event" not in item:
        return None
    stored = records.claim(item)
    first = lanes.from_message(stored["event"])
    return Delivery(first.event, webhook_id, stored["attempt"])


def log_attempt(webhook_id: str, entry: AttemptEntry) -> AttemptRecord:
    """Store one attempt of delivering to ``webhook_id``.

    Returns
    -------
    AttemptRecord
        The stored item: ``entry`` with ``webhookId``, ``deliveryKey`` and ``expiresAt``.
    """
    key = f"{_LOG}{entry['attemptedAt']}#{entry['eventId']}#{entry['attempt']:02d}"
    item: AttemptRecord = {**entry, "webhookId": webhook_id, "deliveryKey": key, "expiresAt": _expires_at()}
    storage.put(_table(), item)
    return item


def _log_query(webhook_id: str, **params: Any) -> dict[str, Any]:
    return {
        "KeyConditionExpression": "webhookId = :w AND begins_with(deliveryKey, :log)",
        "ExpressionAttributeValues": storage.values(w=webhook_id, log=_LOG),
        **params,
    }


def count_attempts(webhook_id: str) -> int:
    """How many logged attempts ``webhook_id`` has (Query ``Select=COUNT``, every page)."""
    return storage.query_count(_table(), **_log_query(webhook_id))


def newest_attempts(webhook_id: str, limit: int) -> list[AttemptRecord]:
    """The ``limit`` newest logged attempts of ``webhook_id``, newest first (reads no more than needed)."""
    if limit <= 0:
        return []
    pages: Iterator[dict[str, Any]] = storage.query_pages(
        _table(), **_log_query(webhook_id, ScanIndexForward=False, Limit=min(limit, 1000))
    )
    return [records.attempt(item) for item in islice(pages, limit)]


def get_logged(webhook_id: str, delivery_key: str) -> AttemptRecord | None:
    """One logged attempt by its range key (``LOG#...``), or ``None`` (also for a key of another kind: no read)."""
    if not delivery_key.startswith(_LOG):
        return None
    item = storage.get(_table(), {"webhookId": webhook_id, "deliveryKey": delivery_key})
    return None if item is None else records.attempt(item)
