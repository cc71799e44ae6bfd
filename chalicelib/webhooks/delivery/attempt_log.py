"""Deliveries table access: attempt claims (no duplicates) and the attempt log (with TTL).

These items share the table (hash ``webhookId``, range ``deliveryKey``):

* ``SENT#<eventId>``: the claim of a delivery, ``{attempt, claimedAt, event, expiresAt}``.
  Attempt 1 is claimed with ``attribute_not_exists`` before sending, attempt n > 1 by moving
  ``attempt`` from n-1 to n; a replayed stream batch or a redelivered message finds the
  claim taken and sends nothing. ``event`` (the lane message of attempt 1, JSON) lets a
  redelivery rebuild the delivery after the outbox item expired.
* ``LOG#<attemptedAt>#<eventId>#<attempt>``: one logged attempt (time, attempt number,
  status code or error class, duration, response body up to 4 KiB). The key sorts by time
  (fixed-width ISO 8601) and is unique, so a descending Query on the ``LOG#`` range lists the
  newest first and a page starts right after the previous page's last key (keyset paging).
  A logged attempt also carries ``eventLogKey`` (``<attemptedAt>#<webhookId>#<attempt>``), the
  sort key of the sparse index ``byEvent`` (partition ``eventId``): the attempts of one event to
  every webhook, newest first (:func:`event_attempts_page`).
* ``HOUR#<YYYY-MM-DDTHH>``: attempts of one UTC hour by outcome (``ok``, ``failed``), written in
  the attempt's transaction and kept :data:`HEALTH_DAYS` + 1 days (TTL): the delivery-health chart.
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

import contextlib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from itertools import islice
from typing import Any

from chalicelib.kernel import clock
from chalicelib.kernel.config import settings
from chalicelib.persistence import queries, storage
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.search import keyset
from chalicelib.webhooks import signing
from chalicelib.webhooks.delivery import lanes, records
from chalicelib.webhooks.delivery.envelope import Delivery
from chalicelib.webhooks.delivery.records import AttemptEntry, AttemptRecord, ClaimRecord

RETENTION_DAYS = 30
_LOG = "LOG#"
#: Upper bound of the ``LOG#`` key range (``~`` sorts after every character of an ISO 8601 time).
_LOG_END = "LOG#~"
#: Range key of the log's counter item (sorts before ``LOG#`` and ``SENT#``: never in their ranges).
COUNTER_KEY = "COUNT"
#: Range key prefix of the per-hour outcome counts (``HOUR#<YYYY-MM-DDTHH>``: ``ok``, ``failed``),
#: the delivery-health chart's source; sorts apart from ``LOG#`` and ``SENT#``.
_HOUR = "HOUR#"
#: Days an hour's counts are kept (TTL one day after): the chart shows the last 7.
HEALTH_DAYS = 7
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


def _now_ms() -> int:
    return int(clock.now().timestamp() * 1000)


def _lease_until(lease_seconds: float) -> int:
    return _now_ms() + int(lease_seconds * 1000)


def _lease_seconds(lease_seconds: float | None) -> float:
    return float(settings().DELIVERY_LEASE_SECONDS if lease_seconds is None else lease_seconds)


def claim(delivery: Delivery, lease_seconds: float | None = None) -> bool:
    """Claim attempt ``delivery.attempt``; ``False`` when it (or a later one) is already taken.

    Attempt 1 creates the claim (with the event, for redelivery); attempt n > 1 moves the
    claim's ``attempt`` from n-1 to n. Either way the claim is leased to the caller for
    ``lease_seconds`` (default ``DELIVERY_LEASE_SECONDS``), ``leaseUntil`` in epoch milliseconds,
    which the attempt's heartbeat extends (:func:`extend_lease`). When this returns ``False``,
    :func:`recover` tells a duplicate from an attempt whose worker died.
    """
    key = {"webhookId": delivery.webhook_id, "deliveryKey": sent_key(delivery.event.event_id)}
    now = clock.iso()
    lease_until = _lease_until(_lease_seconds(lease_seconds))
    try:
        if delivery.attempt == 1:
            item: ClaimRecord = {
                "webhookId": key["webhookId"],
                "deliveryKey": key["deliveryKey"],
                "eventId": delivery.event.event_id,
                "attempt": 1,
                "claimedAt": now,
                "leaseUntil": lease_until,
                "event": lanes.to_message(delivery),
                "expiresAt": _expires_at(),
            }
            storage.put(_table(), item, condition="attribute_not_exists(deliveryKey)")
        else:
            storage.update(
                _table(),
                key,
                "SET attempt = :n, claimedAt = :now, leaseUntil = :lease",
                condition="attempt = :prev",
                ExpressionAttributeValues=storage.values(n=delivery.attempt, prev=delivery.attempt - 1, now=now, lease=lease_until),
            )
    except storage.ConditionFailed:
        return False
    return True


def extend_lease(delivery: Delivery, lease_seconds: float | None = None) -> None:
    """Extend the lease of the claimed attempt ``delivery.attempt`` to ``lease_seconds`` from now (a heartbeat).

    Raises
    ------
    LeaseLost
        The claim moved on (another worker took the attempt over after the lease lapsed).
    """
    try:
        storage.update(
            _table(),
            {"webhookId": delivery.webhook_id, "deliveryKey": sent_key(delivery.event.event_id)},
            "SET leaseUntil = :lease",
            condition="attempt = :n",
            ExpressionAttributeValues=storage.values(n=delivery.attempt, lease=_lease_until(_lease_seconds(lease_seconds))),
        )
    except storage.ConditionFailed:
        raise LeaseLost(f"attempt {delivery.attempt} of {delivery.event.event_id} was taken over") from None


class LeaseLost(Exception):
    """A heartbeat found its attempt's claim taken over by another worker."""


#: ``error`` of an attempt logged as interrupted: its worker stopped (died, timed out) before the
#: attempt was logged, so whether the receiver got it is unknown.
INTERRUPTED = "interrupted"


@dataclass(frozen=True)
class Recovery:
    """What :func:`recover` found after :func:`claim` refused an attempt.

    Exactly one of: ``duplicate`` (the attempt was made or is superseded: send nothing),
    ``held_seconds`` > 0 (another worker's lease on it is still live: try again after that long),
    ``resumed`` (the attempt's worker died; it is logged as interrupted and this is the next
    attempt, claimed and leased to the caller).
    """

    duplicate: bool = False
    held_seconds: float = 0.0
    resumed: Delivery | None = None


def recover(delivery: Delivery, lease_seconds: float | None = None) -> Recovery:
    """After :func:`claim` refused ``delivery``: was its attempt made, is it being made, or did its worker die?

    An attempt whose claim is still at ``delivery.attempt``, is not in the claim's
    ``loggedAttempts`` and whose lease has lapsed lost its worker (a heartbeat would have
    extended the lease). One transaction then logs it as :data:`INTERRUPTED`, counts it, and
    moves the claim to the next attempt leased to the caller, on the condition that the claim is
    exactly as read (same attempt, same lapsed lease, attempt not logged): of two workers
    recovering at once one wins, and a worker that was only slow (it extends its lease, or logs
    its attempt, first) keeps its attempt. So every attempt number is sent at most once, and the
    interrupted attempt's outcome is never guessed: it adds nothing to ``failCount``.

    Claims written before leases existed (no ``leaseUntil``) are duplicates, as they were.

    Returns
    -------
    Recovery
        See the class.

    Raises
    ------
    botocore.exceptions.ClientError, chalicelib.kernel.errors.DependencyUnavailable
        DynamoDB faults.
    """
    key = {"webhookId": delivery.webhook_id, "deliveryKey": sent_key(delivery.event.event_id)}
    item = storage.get(_table(), key, consistent=True)
    if item is None or "leaseUntil" not in item or int(item["attempt"]) != delivery.attempt:
        return Recovery(duplicate=True)
    if delivery.attempt in {int(n) for n in item.get("loggedAttempts") or ()}:
        return Recovery(duplicate=True)
    lease_until = int(item["leaseUntil"])
    now = _now_ms()
    if lease_until > now:
        return Recovery(held_seconds=(lease_until - now) / 1000)
    nxt = replace(delivery, attempt=delivery.attempt + 1)  # same lane, owner and breaker state
    claimed_at = str(item.get("claimedAt") or clock.iso())
    entry: AttemptEntry = {
        "deliveryId": clock.new_id("dlv"),
        "eventId": delivery.event.event_id,
        "event": delivery.event.type,
        "attempt": delivery.attempt,
        "attemptedAt": claimed_at,
        "messageId": signing.message_id(delivery.event.event_id, delivery.webhook_id),
        "success": False,
        "error": INTERRUPTED,
        "errorDetail": "the worker making this attempt stopped before it finished; attempt "
        f"{nxt.attempt} follows at once (the receiver may have got this one too: same webhook-id)",
        "durationMs": max(0, now - int(datetime.fromisoformat(claimed_at.replace("Z", "+00:00")).timestamp() * 1000)),
        "test": delivery.event.test,
    }
    take = storage.tx_update(
        _table(),
        key,
        "SET attempt = :next, claimedAt = :now, leaseUntil = :lease ADD loggedAttempts :logged",
        condition="attempt = :n AND leaseUntil = :seen",
        ExpressionAttributeValues=storage.values(
            next=nxt.attempt, now=clock.iso(), lease=_lease_until(_lease_seconds(lease_seconds)), n=delivery.attempt,
            seen=lease_until, logged={delivery.attempt},
        ),
    )
    try:
        _log(delivery.webhook_id, entry, extra=[take])
    except storage.TransactionConflict:
        return Recovery(duplicate=True)  # another worker recovered it, or the slow one logged it
    return Recovery(resumed=nxt)


def last_claim(webhook_id: str, event_id: str) -> Delivery | None:
    """The newest claimed attempt of delivering ``event_id`` to ``webhook_id``, or ``None`` when none was."""
    item = storage.get(_table(), {"webhookId": webhook_id, "deliveryKey": sent_key(event_id)}, consistent=True)
    if item is None or "event" not in item:
        return None
    stored = records.claim(item)
    first = lanes.from_message(stored["event"])
    return Delivery(first.event, webhook_id, stored["attempt"])


def rewrite_claimed_data(event_id: str, fields: Mapping[str, Any]) -> int:
    """Set ``fields`` in the ``data`` of the event the claims of ``event_id`` keep for redelivery
    (one claim per webhook an attempt of it was logged for: the ``byEvent`` list), so that an
    event rewritten by the account erasure is redelivered as rewritten.

    Returns
    -------
    int
        The claims rewritten (one Query, then a GetItem and an UpdateItem per webhook).
    """
    rewritten = 0
    for webhook_id in sorted({str(i["webhookId"]) for i in storage.query_index(_table(), BY_EVENT.name, BY_EVENT.partition, event_id)}):
        key = {"webhookId": webhook_id, "deliveryKey": sent_key(event_id)}
        item = storage.get(_table(), key, consistent=True)
        if item is None or "event" not in item:
            continue
        first = lanes.from_message(records.claim(item)["event"])
        kept = replace(first, event=replace(first.event, data={**first.event.data, **fields}))
        with contextlib.suppress(storage.ConditionFailed):  # expired meanwhile
            storage.update(_table(), key, "SET #event = :event", condition="attribute_exists(deliveryKey)",
                           ExpressionAttributeNames={"#event": "event"},
                           ExpressionAttributeValues=storage.values(event=lanes.to_message(kept)))
            rewritten += 1
    return rewritten


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
    resent call is applied once (``ClientRequestToken``, :func:`chalicelib.persistence.storage.transact`).
    The delivery's claim records the attempt number in ``loggedAttempts`` (a number set, ``ADD``:
    order-free), which tells :func:`recover` a finished attempt from an interrupted one.

    Returns
    -------
    AttemptRecord
        The stored item: ``entry`` with ``webhookId``, ``deliveryKey`` and ``expiresAt``.
    """
    mark = storage.tx_update(
        _table(),
        {"webhookId": webhook_id, "deliveryKey": sent_key(entry["eventId"])},
        "ADD loggedAttempts :n",
        ExpressionAttributeValues=storage.values(n={entry["attempt"]}),
    )
    return _log(webhook_id, entry, extra=[mark])


def _log(webhook_id: str, entry: AttemptEntry, extra: list[TransactItem]) -> AttemptRecord:
    """The log item's Put, the counter's Update and ``extra`` (the claim's update) in one transaction."""
    key = f"{_LOG}{entry['attemptedAt']}#{entry['eventId']}#{entry['attempt']:02d}"
    expires_at = log_expires_at(entry["attemptedAt"])
    item: AttemptRecord = {
        **entry, "webhookId": webhook_id, "deliveryKey": key, "expiresAt": expires_at,
        "eventLogKey": f"{entry['attemptedAt']}#{webhook_id}#{entry['attempt']:02d}",
    }
    day = _day_of(entry["attemptedAt"])
    stale = {f"#r{i}": f"{_DAY}{day - timedelta(days=back)}" for i, back in enumerate(_STALE_DAYS)}
    count = storage.tx_update(
        _table(),
        {"webhookId": webhook_id, "deliveryKey": COUNTER_KEY},
        "ADD #d :one SET expiresAt = :e REMOVE " + ", ".join(stale),
        ExpressionAttributeNames={"#d": f"{_DAY}{day}", **stale},
        ExpressionAttributeValues=storage.values(one=1, e=expires_at),
    )
    storage.transact([storage.tx_put(_table(), item), count, _hour_op(webhook_id, entry), *extra])
    return item


def _hour_op(webhook_id: str, entry: AttemptEntry) -> TransactItem:
    """``ADD`` 1 to the attempt's outcome (``ok`` or ``failed``) on its UTC hour's stats item."""
    hour = entry["attemptedAt"][:13]  # YYYY-MM-DDTHH
    expires = clock.epoch_seconds(datetime.fromisoformat(hour + ":00:00+00:00") + timedelta(days=HEALTH_DAYS + 1))
    return storage.tx_update(
        _table(),
        {"webhookId": webhook_id, "deliveryKey": f"{_HOUR}{hour}"},
        "ADD #o :one SET expiresAt = :e",
        ExpressionAttributeNames={"#o": "ok" if entry["success"] else "failed"},
        ExpressionAttributeValues=storage.values(one=1, e=expires),
    )


def hourly_outcomes(webhook_id: str, first_hour: datetime, last_hour: datetime) -> dict[str, tuple[int, int]]:
    """``{"YYYY-MM-DDTHH": (succeeded, failed)}`` of ``webhook_id``'s attempts in the UTC hours
    ``first_hour``..``last_hour`` (inclusive; hours without attempts are absent).

    One Query of the hours' stats items (at most one item per hour: 168 for a week).
    """
    items = storage.query(
        _table(),
        KeyConditionExpression="webhookId = :w AND deliveryKey BETWEEN :a AND :b",
        ExpressionAttributeValues=storage.values(
            w=webhook_id, a=f"{_HOUR}{first_hour:%Y-%m-%dT%H}", b=f"{_HOUR}{last_hour:%Y-%m-%dT%H}"
        ),
    )
    return {str(i["deliveryKey"])[len(_HOUR):]: (int(i.get("ok", 0)), int(i.get("failed", 0))) for i in items}


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
    """One page of a log: the ``attempts`` (newest first), whether ``more`` follow, and how many
    attempts were passed over before it (``skipped``: fewer than asked when the log ended first)."""

    attempts: list[AttemptRecord]
    more: bool
    skipped: int = 0


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
    found, _ = queries.query_up_to(_table(), wanted, **params)
    return AttemptPage(
        attempts=[records.attempt(i) for i in found[skip : skip + size]], more=len(found) > skip + size, skipped=min(skip, len(found))
    )


def _event_log_table_key(event_id: str, event_log_key: str) -> dict[str, str]:
    """The table key of the logged attempt at ``eventLogKey`` ``<attemptedAt>#<webhookId>#<attempt>`` of ``event_id``."""
    attempted_at, webhook_id, attempt = event_log_key.split("#")
    if not attempt.isdigit():
        raise ValueError("not an attempt number")
    return {"webhookId": webhook_id, "deliveryKey": f"{_LOG}{attempted_at}#{event_id}#{attempt}"}


#: The attempts of one event, newest first (sparse: logged attempts carry ``eventLogKey``).
BY_EVENT = keyset.ListIndex("byEvent", "eventId", "eventLogKey", _event_log_table_key)


def event_attempts_page(event_id: str, size: int, after: str | None = None, skip: int = 0) -> AttemptPage:
    """A page of ``size`` logged attempts of ``event_id`` (to any webhook), newest first.

    Parameters
    ----------
    event_id:
        The event (``evt_...``).
    size:
        Attempts per page (1..100).
    after:
        ``eventLogKey`` of the previous page's last attempt (a cursor's position), or ``None``.
    skip:
        Attempts to pass over first (offset pages without a cursor).

    Returns
    -------
    AttemptPage
        At most ``skip + size + 1`` index items read (:func:`chalicelib.search.keyset.read_page`).

    Raises
    ------
    RuleViolation
        ``after`` is not an ``eventLogKey`` (field ``cursor``).
    """
    page = keyset.read_page(_table(), BY_EVENT, event_id, size, after=after, skip=skip)
    return AttemptPage(attempts=[records.attempt(i) for i in page.items], more=page.more, skipped=page.skipped)


def _window_query(webhook_id: str, lower: str, upper: str = _LOG_END, **params: Any) -> dict[str, Any]:
    return {
        "KeyConditionExpression": "webhookId = :w AND deliveryKey BETWEEN :lower AND :upper",
        "ExpressionAttributeValues": storage.values(w=webhook_id, lower=lower, upper=upper),
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


#: Most log items one filtered read of the log (:func:`filtered_attempts`) or one recover
#: (:func:`failed_since`) examines: the bound that keeps a request's reads finite whatever the
#: log's length (at most 10 Query pages of 100 items; 30 days of a busy webhook can hold more).
SCAN_BUDGET = 1000


def filtered_attempts(webhook_id: str, moment: datetime, limit: int, success: bool | None = None,
                      event: str | None = None, event_id: str | None = None, since: str | None = None) -> AttemptPage:
    """The ``limit`` newest attempts of ``webhook_id``'s log matching the filters, newest first.

    One Query of the ``LOG#`` range (descending) with a ``FilterExpression`` on ``success`` and
    ``event``, examining at most :data:`SCAN_BUDGET` items (DynamoDB applies ``Limit`` before the
    filter, so the loop reads pages until ``limit`` matches or the budget is spent).

    Parameters
    ----------
    moment:
        The time of the request (the retention window starts from it).
    limit:
        Matching attempts wanted (1..100).
    success:
        ``True``: succeeded attempts only; ``False``: failed only; ``None``: both.
    event:
        An event type (``message.new``), or ``None`` for every type.
    event_id:
        One event's attempts only (``evt_...``), or ``None``.
    since:
        ISO 8601 UTC: attempts at or after it only (the key range starts there), or ``None``.

    Returns
    -------
    AttemptPage
        ``more`` is True when more matching attempts may exist (a further match, or the budget
        ran out before the log did).
    """
    filters: list[str] = []
    values: dict[str, Any] = {}
    if success is not None:
        filters.append("success = :ok")
        values["ok"] = success
    if event:
        filters.append("#event = :event")
        values["event"] = event
    if event_id:
        filters.append("eventId = :eid")
        values["eid"] = event_id
    lower = f"{_LOG}{window_start(moment)}"
    if since is not None:
        lower = max(lower, f"{_LOG}{since}")
    params = _window_query(webhook_id, lower, ScanIndexForward=False)
    if filters:
        params["FilterExpression"] = " AND ".join(filters)
        params["ExpressionAttributeValues"] = {**params["ExpressionAttributeValues"], **storage.values(**values)}
        if event:
            params["ExpressionAttributeNames"] = {"#event": "event"}
    found: list[dict[str, Any]] = []
    examined = 0
    while len(found) <= limit and examined < SCAN_BUDGET:
        page_size = min(100, SCAN_BUDGET - examined)
        items, last = storage.query_page(_table(), Limit=page_size, **params)
        examined += page_size
        found += items
        if last is None:
            return AttemptPage(attempts=[records.attempt(i) for i in found[:limit]], more=len(found) > limit)
        params["ExclusiveStartKey"] = storage.to_item(last)
    return AttemptPage(attempts=[records.attempt(i) for i in found[:limit]], more=True)


@dataclass(frozen=True)
class FailedDeliveries:
    """What :func:`failed_since` found: ``event_ids`` (oldest failure first) and whether the read was
    ``complete`` (False: :data:`SCAN_BUDGET` or the caller's ``limit`` cut it short)."""

    event_ids: list[str]
    complete: bool


def failed_since(webhook_id: str, since: str, limit: int) -> FailedDeliveries:
    """The deliveries to ``webhook_id`` that failed since ``since``: each event with an attempt logged at
    or after ``since`` whose newest logged attempt failed (Svix's "recover": messages that failed
    since a time; a delivery that succeeded on a later attempt is not failed).

    One ascending Query of the log from ``since`` (keyset on the log's time-ordered key), at most
    :data:`SCAN_BUDGET` items.

    Parameters
    ----------
    since:
        ISO 8601 UTC (``2026-11-25T10:00:00.000Z``); clamped to the retention window.
    limit:
        Most deliveries returned.

    Returns
    -------
    FailedDeliveries
        Event ids in the order of their newest failure, oldest first.
    """
    lower = max(f"{_LOG}{since}", f"{_LOG}{window_start(clock.now())}")
    params = _window_query(webhook_id, lower, ScanIndexForward=True)
    outcome: dict[str, bool] = {}  # event id -> its newest attempt succeeded (insertion order: by newest attempt)
    examined = 0
    complete = False
    while examined < SCAN_BUDGET:
        page_size = min(100, SCAN_BUDGET - examined)
        items, last = storage.query_page(_table(), Limit=page_size, **params)
        examined += page_size
        for item in items:
            event_id = str(item["eventId"])
            outcome.pop(event_id, None)  # re-insert: the order follows the newest attempt
            outcome[event_id] = bool(item.get("success"))
        if last is None:
            complete = True
            break
        params["ExclusiveStartKey"] = storage.to_item(last)
    failed = [event_id for event_id, ok in outcome.items() if not ok]
    return FailedDeliveries(event_ids=failed[:limit], complete=complete and len(failed) <= limit)
