"""Events API rules: a user reads its own events (the recipient's), for 30 days.

* An event belongs to its recipient (``routing.recipientId``, the user whose webhooks it is
  delivered to); anyone else's event, an event without a recipient (internal events) and one
  older than :data:`~chalicelib.persistence.outbox.RECORDED_EVENT_TTL_DAYS` days answer NOT_FOUND, like a
  missing one (no existence oracle).
* Lists are newest first; the key range starts at the retention window, so items DynamoDB's
  TTL has not removed yet are never listed.
* ``listingId`` selects the ``match_request.*`` events about that listing (whose recipient is
  its owner); other names in ``type`` match nothing then (no other event is about a listing).
* An empty time interval (``createdBefore`` not after ``createdAfter``) matches nothing.
* The account erasure rewrites what other users' events say of the erased user
  (:func:`rewrite_data`), as it rewrites the requests and messages those events announced.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from chalicelib.auth.service import Caller
from chalicelib.kernel import clock, errors
from chalicelib.kernel.pagination import PageQuery, Position
from chalicelib.persistence import outbox
from chalicelib.webhooks.catalogue import SUPPORTED_EVENTS
from chalicelib.webhooks.delivery import attempt_log
from chalicelib.webhooks.events_api import repository
from chalicelib.webhooks.events_api.models import Event, EventDelivery, EventDeliveryPage, EventListQuery, EventPage
from chalicelib.webhooks.service import attempt_model

#: The event types ``listingId`` selects among (the events about a listing).
LISTING_EVENTS: tuple[str, ...] = tuple(t for t in SUPPORTED_EVENTS if t.startswith("match_request."))
#: Most seconds between a record's ``createdAt`` and the ``createdAt`` of the event announcing it:
#: the event is written in the transaction that commits the record, within one invocation of the
#: API function, whose timeout (``lambda_timeout`` in ``.chalice/config.json``) this is.
WRITTEN_WITHIN_SECONDS = 30


def to_model(item: outbox.OutboxEvent) -> Event:
    """The API view of an event record: the delivered envelope plus ``id`` and ``createdAt``."""
    return Event(
        id=item["eventId"], event=item["type"], timestamp=item["createdAt"], test=bool(item.get("test")),
        data=item["data"], createdAt=item["createdAt"],
    )


def _window_start() -> str:
    """The oldest ``createdAt`` still listed (ISO 8601 UTC): now minus the retention."""
    return clock.iso(clock.now() - timedelta(days=outbox.RECORDED_EVENT_TTL_DAYS))


def _total(position: Position, skipped: int, listed: int, more: bool) -> tuple[int, str]:
    """``total`` and ``totalRelation`` of a page counted as far as it read: the items before it (a
    cursor's full pages, or those an offset page passed over), its own, and one more when more follow."""
    before = position.offset if position.key is not None else skipped
    return before + listed + (1 if more else 0), ("gte" if more else "eq")


def list_events(caller: Caller, query: EventListQuery) -> EventPage:
    """One page of the caller's events, newest first, filtered by ``query``.

    A page reads at most ``pageSize + 1`` index items per list partition whatever the caller's
    history (one Query each): one partition without ``type`` (``byRecipient``), one per name of
    ``type`` (``byRecipientType``), one per ``match_request.*`` name with ``listingId``
    (``byRecipientListingType``), merged newest first; plus the ``(page - 1) x pageSize`` before
    the page for ``page=N`` without a cursor.

    Raises
    ------
    RuleViolation
        ``cursor`` edited, of another query or another caller (field ``cursor``).
    """
    after, before = query.after_iso(), query.before_iso()
    types = query.types()
    if query.listingId is not None:
        types = [t for t in types if t in LISTING_EVENTS] if types else list(LISTING_EVENTS)
    position = query.position_in("events", caller.user_id)
    if position.key is not None and not repository.SORT_KEY.match(position.key):
        raise errors.RuleViolation.for_field("cursor", "is not a cursor issued by this API", "Invalid cursor")
    lower = max(after or "", _window_start())
    where = repository.partitions(caller.user_id, types, query.listingId)
    skip = 0 if position.key is not None else position.offset
    page = repository.page(where, position.page_size, lower=lower, upper=before, after=position.key, skip=skip)
    total, relation = _total(position, page.skipped, len(page.items), page.more)
    last = page.items[-1].get("recipientSort") if page.items else None
    return EventPage(
        events=[to_model(item) for item in page.items], total=total, totalRelation=relation, page=position.page,
        pageSize=position.page_size, nextCursor=position.next_cursor(page.more and last is not None, last),
    )


def own_event(caller: Caller, event_id: str) -> outbox.OutboxEvent:
    """The caller's event ``event_id`` (within the retention window).

    Raises
    ------
    NotFound
        Unknown, expired, internal, or someone else's.
    """
    item = repository.get(event_id)
    if item is None or item.get("recipientId") != caller.user_id or item["createdAt"] < _window_start():
        raise errors.NotFound(f"Event '{event_id}' not found")
    return item


def get_event(caller: Caller, event_id: str) -> Event:
    """The caller's event ``event_id``.

    Raises
    ------
    NotFound
        Unknown, expired, internal, or someone else's.
    """
    return to_model(own_event(caller, event_id))


def list_deliveries(caller: Caller, event_id: str, query: PageQuery) -> EventDeliveryPage:
    """The delivery attempts of the caller's event ``event_id`` to the caller's webhooks, newest first.

    An event is delivered only to webhooks of its recipient, so every attempt of it is to one of
    the caller's webhooks. A page reads the event and ``pageSize + 1`` attempts (plus the ones
    before it for ``page=N`` without a cursor), from the delivery log (30 UTC days).

    Raises
    ------
    NotFound
        Unknown, expired, internal, or someone else's event.
    RuleViolation
        ``cursor`` edited or of another query (field ``cursor``).
    """
    own_event(caller, event_id)
    position = query.position_in("event.deliveries", f"{caller.user_id}|{event_id}")
    skip = 0 if position.key is not None else position.offset
    page = attempt_log.event_attempts_page(event_id, position.page_size, after=position.key, skip=skip)
    total, relation = _total(position, page.skipped, len(page.attempts), page.more)
    last = page.attempts[-1].get("eventLogKey") if page.attempts else None
    return EventDeliveryPage(
        deliveries=[EventDelivery(**attempt_model(a).model_dump(), webhookId=a["webhookId"]) for a in page.attempts],
        total=total, totalRelation=relation, page=position.page, pageSize=position.page_size,
        nextCursor=position.next_cursor(page.more and last is not None, last),
    )


def rewrite_data(recipient_id: str, event_type: str, written_at: str, match: tuple[str, str], fields: Mapping[str, Any]) -> int:
    """Set ``fields`` in the ``data`` of the event of ``event_type`` to ``recipient_id`` that
    announced a record: the account erasure's part of the events API, so that another user's
    events say of an erased user what the record now says (e.g. "Deleted user").

    Reads one Query of the recipient's events of that type written within
    :data:`WRITTEN_WITHIN_SECONDS` of ``written_at``; nothing when that lies before the retention
    window (the event expired). The claims that keep the event for a redelivery are rewritten too
    (:func:`~chalicelib.webhooks.delivery.attempt_log.rewrite_claimed_data`). Idempotent.

    Parameters
    ----------
    recipient_id:
        The event's recipient (``routing.recipientId``).
    event_type:
        E.g. ``"message.new"``.
    written_at:
        The record's ``createdAt`` (ISO 8601 UTC); its event was written at most
        :data:`WRITTEN_WITHIN_SECONDS` later.
    match:
        ``(name, value)``: the ``data`` field naming the record (e.g. ``("messageId", "msg_...")``).
    fields:
        ``data`` field -> its new value (JSON-ready).

    Returns
    -------
    int
        The events rewritten (0 or 1).
    """
    upper = clock.iso(datetime.fromisoformat(written_at) + timedelta(seconds=WRITTEN_WITHIN_SECONDS))
    lower = max(written_at, _window_start())
    if upper < lower:
        return 0
    name, value = match
    found = [e for e in repository.written_between(recipient_id, event_type, lower, upper) if e["data"].get(name) == value]
    for event in found:
        repository.set_data(event["eventId"], fields)
        attempt_log.rewrite_claimed_data(event["eventId"], fields)
    return len(found)
