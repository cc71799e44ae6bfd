"""The outbox: one Events item per domain event, written in the same transaction as the change.

The Events table's stream feeds the consumers (approval enqueuing, webhook delivery), so an
event exists if and only if its change committed. Items expire after :data:`EVENT_TTL_DAYS`
(DynamoDB TTL on ``expiresAt``).

Item shape: ``{eventId, type, createdAt, expiresAt, data: {...}, routing: {...}}`` where
``data`` is the event's payload (spec §6 fields for webhook events) and ``routing`` what the
consumers need to address it (listing id and webhook ids, recipient user id, ...).
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from chalicelib import clock, storage
from chalicelib.config import settings

EVENT_TTL_DAYS = 7

#: Internal event: a listing was created or updated and awaits review.
LISTING_SUBMITTED = "listing.submitted"


def event_op(event_type: str, data: dict[str, Any], routing: dict[str, Any] | None = None) -> dict[str, Any]:
    """A transaction ``Put`` of a new event item.

    Parameters
    ----------
    event_type:
        E.g. ``"match_request.received"`` or :data:`LISTING_SUBMITTED`.
    data:
        The payload, JSON-ready.
    routing:
        Addressing for the consumers (never sent to receivers).
    """
    moment = clock.now()
    item = {
        "eventId": clock.new_id("evt"),
        "type": event_type,
        "createdAt": clock.iso(moment),
        "expiresAt": clock.epoch_seconds(moment + timedelta(days=EVENT_TTL_DAYS)),
        "data": data,
        "routing": routing or {},
    }
    return storage.put_op(settings().EVENTS_TABLE, item, condition="attribute_not_exists(eventId)")
