"""Deliveries table access: attempt claims (no duplicates) and the attempt log (with TTL).

Two kinds of items share the table (hash ``webhookId``, range ``deliveryKey``):

* ``SENT#<eventId>``: the claim of a delivery, ``{attempt, claimedAt, event, expiresAt}``.
  Attempt 1 is claimed with ``attribute_not_exists`` before sending, attempt n > 1 by moving
  ``attempt`` from n-1 to n; a replayed stream batch or a redelivered message finds the
  claim taken and sends nothing. ``event`` (the lane message of attempt 1, JSON) lets a
  redelivery rebuild the delivery after the outbox item expired.
* ``LOG#<attemptedAt>#<eventId>#<attempt>``: one logged attempt (time, attempt number,
  status code or error class, duration, response body up to 4 KiB). The key sorts by time
  (fixed-width ISO 8601) and is unique, so a descending Query on the ``LOG#`` range lists the
  newest first and a page starts right after the previous page's last key (keyset paging).
* ``COUNT``: the log's counter, one number attribute ``d#<YYYY-MM-DD>`` per UTC day of
  ``attemptedAt``, added to in the same TransactWriteItems as each logged attempt.

The log is *retained by UTC day*: an attempt is listed on its day and the :data:`RETENTION_DAYS`
days after, i.e. until the start of day ``D + RETENTION_DAYS + 1`` (UTC), which is also its
``expiresAt`` (DynamoDB TTL, epoch seconds). DynamoDB never deletes an item before its
``expiresAt`` (it deletes it some time after), so every attempt inside the window is stored and
counted; reads bound the key range to the window (:func:`window_start`), so the items TTL has not
removed yet are neither listed nor counted. That makes ``total`` exact without a stream
consumer: it is the sum of the window's day counts (one GetItem). Claims expire
:data:`RETENTION_DAYS` after writing. (Source for the TTL behaviour: AWS, DynamoDB Developer Guide,
"Time to Live": only items whose TTL time has passed are deleted, typically within a few days,
and expired items not yet deleted still appear in reads.)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from itertools import islice
from typing import Any

from chalicelib import clock, storage
from chalicelib.config import settings
from chalicelib.webhooks.delivery import lanes, records
from chalicelib.webhooks.delivery.envelope import Delivery
from chalicelib.webhooks.delivery.records import AttemptEntry, AttemptRecord, ClaimRecord

RETENTION_DAYS = 30
_LOG = "LOG#"
#: Upper bound of the ``LOG#`` key range (``~`` sorts after every character of an ISO 8601 time).
_LOG_END = "LOG#~"
#: Range key of the log's counter item (sorts before ``LOG#`` and ``SENT#``: never in their ranges).
COUNTER_KEY = "COUNT"
_DAY = "d#"
#: Day attributes removed from the counter with each write once they are this many days or more
#: behind the window (the day that just left it, and a few before, for webhooks with quiet days).
_STALE_DAYS = range(RETENTION_DAYS + 1, RETENTION_DAYS + 8)


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


def _day_of(attempted_at: str) -> date:
    return date.fromisoformat(attempted_at[:10])


def _day_start(day: date) -> datetime:
    return datetime.combine(day, time(), tzinfo=UTC)


def log_expires_at(attempted_at: str) -> int:
    """Unix seconds at which the attempt of ``attempted_at`` (ISO 8601 UTC) leaves the log: the start
    of the UTC day :data:`RETENTION_DAYS` + 1 days after its own day (its TTL ``expiresAt``)."""
    return clock.epoch_seconds(_day_start(_day_of(attempted_at) + timedelta(days=RETENTION_DAYS + 1)))


def window_start(moment: datetime) -> date:
    """The oldest UTC day whose attempts are listed at ``moment``: :data:`RETENTION_DAYS` days before its day."""
    return moment.astimezone(UTC).date() - timedelta(days=RETENTION_DAYS)


def log_attempt(webhook_id: str, entry: AttemptEntry) -> AttemptRecord:
    """Store one attempt of delivering to ``webhook_id`` and count it, in one TransactWriteItems.

    The counter item takes ``+1`` on the attempt's UTC day (``d#<YYYY-MM-DD>``), its ``expiresAt``
    moves to the attempt's, and day attributes older than the window are removed. Attempts to one
    webhook run one at a time in its lane, so the counter item sees no concurrent writers; a
    resent call is applied once (``ClientRequestToken``, :func:`chalicelib.storage.transact`).

    Returns
    -------
    AttemptRecord
        The stored item: ``entry`` with ``webhookId``, ``deliveryKey`` and ``expiresAt``.
    """
    key = f"{_LOG}{entry['attemptedAt']}#{entry['eventId']}#{entry['attempt']:02d}"
    expires_at = log_expires_at(entry["attemptedAt"])
    item: AttemptRecord = {**entry, "webhookId": webhook_id, "deliveryKey": key, "expiresAt": expires_at}
    day = _day_of(entry["attemptedAt"])
    stale = {f"#r{i}": f"{_DAY}{day - timedelta(days=back)}" for i, back in enumerate(_STALE_DAYS)}
    count = storage.update_op(
        _table(),
        {"webhookId": webhook_id, "deliveryKey": COUNTER_KEY},
        "ADD #d :one SET expiresAt = :e REMOVE " + ", ".join(stale),
        ExpressionAttributeNames={"#d": f"{_DAY}{day}", **stale},
        ExpressionAttributeValues=storage.values(one=1, e=expires_at),
    )
    storage.transact([storage.put_op(_table(), item), count])
    return item


def _log_query(webhook_id: str, **params: Any) -> dict[str, Any]:
    return {
        "KeyConditionExpression": "webhookId = :w AND begins_with(deliveryKey, :log)",
        "ExpressionAttributeValues": storage.values(w=webhook_id, log=_LOG),
        **params,
    }


def count_attempts(webhook_id: str, moment: datetime) -> int:
    """How many attempts ``webhook_id``'s log lists at ``moment`` (exact; one GetItem of its counter).

    The sum of the counter's day attributes from :func:`window_start` to ``moment``'s day.
    """
    item = storage.get(_table(), {"webhookId": webhook_id, "deliveryKey": COUNTER_KEY})
    first = f"{_DAY}{window_start(moment)}"
    return sum(int(v) for k, v in (item or {}).items() if k.startswith(_DAY) and k >= first)


@dataclass(frozen=True)
class AttemptPage:
    """One page of a webhook's log: the ``attempts`` (newest first) and whether ``more`` follow."""

    attempts: list[AttemptRecord]
    more: bool


def attempts_page(webhook_id: str, moment: datetime, size: int, after: str | None = None, skip: int = 0) -> AttemptPage:
    """A page of ``size`` attempts of ``webhook_id``'s log as listed at ``moment``, newest first.

    Keyset paging on the table's own key: Queries of the ``LOG#`` range from :func:`window_start`
    (descending, ``Limit`` = what is still wanted, ``skip + size + 1`` in all: the extra item says
    whether more follow) starting after ``after``.

    Parameters
    ----------
    webhook_id:
        The webhook whose log is read.
    moment:
        The time of the request (the retention window ends and starts from it).
    size:
        Attempts per page (1..100).
    after:
        ``deliveryKey`` of the previous page's last attempt (from a cursor); the page starts after it.
    skip:
        Attempts to pass over first (offset pages without a cursor).

    Returns
    -------
    AttemptPage
        At most ``skip + size + 1`` items read, whatever the length of the log. A cursor whose
        position has left the retention window meanwhile gives an empty last page.
    """
    lower = f"{_LOG}{window_start(moment)}"
    if after is not None and not lower <= after < _LOG_END:
        return AttemptPage(attempts=[], more=False)
    wanted = skip + size + 1
    params = _window_query(webhook_id, lower, ScanIndexForward=False)
    if after is not None:
        params["ExclusiveStartKey"] = storage.to_item({"webhookId": webhook_id, "deliveryKey": after})
    found: list[dict[str, Any]] = []
    while len(found) < wanted:
        items, last = storage.query_page(_table(), Limit=wanted - len(found), **params)
        found += items
        if last is None:
            break
        params["ExclusiveStartKey"] = storage.to_item(last)
    return AttemptPage(attempts=[records.attempt(i) for i in found[skip : skip + size]], more=len(found) > skip + size)


def _window_query(webhook_id: str, lower: str, **params: Any) -> dict[str, Any]:
    return {
        "KeyConditionExpression": "webhookId = :w AND deliveryKey BETWEEN :lower AND :upper",
        "ExpressionAttributeValues": storage.values(w=webhook_id, lower=lower, upper=_LOG_END),
        **params,
    }


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
