"""The outbox: one Events item per domain event, written in the same transaction as the change.

The Events table's stream feeds the consumers (approval enqueuing, webhook delivery), so an
event exists if and only if its change committed. Items expire after :data:`EVENT_TTL_DAYS`
(DynamoDB TTL on ``expiresAt``), or :data:`RECORDED_EVENT_TTL_DAYS` for the events of a user.

An event with a recipient (``routing.recipientId``: every webhook event) is also the record the
events API lists (``GET /v1/events``): the same item carries the keys of the Events table's list
indexes, so the record exists exactly when the outbox entry does (one ``Put`` in the change's
transaction). Its index attributes (see :func:`recorded_keys`):

* ``recipientId`` + ``recipientSort`` (``<createdAt>#<eventId>``): index ``byRecipient``;
* ``recipientType`` (``<recipientId>#<type>``): index ``byRecipientType``;
* ``recipientListingType`` (``<recipientId>#<listingId>#<type>``, ``match_request.*`` events
  only): index ``byRecipientListingType``.

Item shape: ``{eventId, type, createdAt, expiresAt, data: {...}, routing: {...}}`` where
``data`` is the event's payload (spec §6 fields for webhook events) and ``routing`` what the
consumers need to address it (listing id and webhook ids, recipient user id, ...). ``data``
keeps its ``None`` values (stored as DynamoDB NULL, read back as ``None``), so a payload field
the spec lists is always present, null when unset.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import timedelta
from typing import Any, NotRequired, TypedDict

from chalicelib.kernel import clock
from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.persistence.record_check import checked
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.telemetry import correlation

EVENT_TTL_DAYS = 7
#: Days an event of a user (one with ``routing.recipientId``) stays listable by the events API
#: (Stripe keeps ``/v1/events`` for 30 days).
RECORDED_EVENT_TTL_DAYS = 30

#: The Events table's list indexes (see the module docstring).
BY_RECIPIENT_INDEX = "byRecipient"
BY_RECIPIENT_TYPE_INDEX = "byRecipientType"
BY_RECIPIENT_LISTING_TYPE_INDEX = "byRecipientListingType"

#: Internal event: a listing was created or updated and awaits review.
LISTING_SUBMITTED = "listing.submitted"

#: Internal event: a listing became ACTIVE (approval, re-approval after an update, resume);
#: the saved-search percolator consumes it.
LISTING_ACTIVATED = "listing.activated"
#: Webhook event: a newly ACTIVE listing matches a saved search; recipient: the saver.
LISTING_MATCHED = "listing.matched"
#: Internal event: a saved search was deleted (or its match cleanup continues); the saved-search
#: stream consumer removes its stored matches, a bounded number per event.
SAVED_SEARCH_DELETED = "saved_search.deleted"

#: Internal event: the next step of an account erasure is due (``data``: ``userId``, ``round``);
#: the erasure stream consumer runs it (:mod:`chalicelib.privacy.erasure`).
ACCOUNT_ERASURE_STEP = "account.erasure_step"

#: Internal event: a listing was deleted with more PENDING requests than its deleting transaction
#: rejected (``data``: the listing's ``listingId``, ``ownerId``, ``title``, ``webhookIds`` and the
#: rejections' ``respondedAt``); the listing-deletion stream consumer rejects the rest
#: (:mod:`chalicelib.workflows.listing_deletion`).
LISTING_DELETED = "listing.deleted"

#: Webhook events of match requests (spec §6); recipient: the listing owner.
MATCH_REQUEST_RECEIVED = "match_request.received"
MATCH_REQUEST_ACCEPTED = "match_request.accepted"
MATCH_REQUEST_REJECTED = "match_request.rejected"
#: Webhook events of profile requests (DESIGN §2); recipient: the requested profile's owner.
PROFILE_REQUEST_RECEIVED = "profile_request.received"
PROFILE_REQUEST_ACCEPTED = "profile_request.accepted"
PROFILE_REQUEST_REJECTED = "profile_request.rejected"
#: Webhook event of a new message (spec §6); recipient: the other participant.
MESSAGE_NEW = "message.new"
#: Operational webhook events; recipient: the webhook's owner (``routing.webhookId``: the webhook
#: the event is about, which never receives it).
WEBHOOK_DISABLED = "webhook.disabled"
WEBHOOK_ENABLED = "webhook.enabled"


class OutboxEvent(TypedDict):
    """An Events table item as the stream consumers read it (see the module docstring)."""

    #: ``evt_`` + a ULID.
    eventId: str
    #: E.g. :data:`LISTING_SUBMITTED`, :data:`MATCH_REQUEST_RECEIVED`.
    type: str
    #: ISO 8601 UTC of the change.
    createdAt: str
    #: Unix seconds; the table's TTL attribute.
    expiresAt: int
    #: The payload (its ``None`` values kept).
    data: dict[str, Any]
    #: Addressing for the consumers (never sent to receivers).
    routing: dict[str, Any]
    #: The user whose events list holds the event (``routing.recipientId``); absent on internal events.
    recipientId: NotRequired[str]
    #: ``<createdAt>#<eventId>``: the order of the recipient's lists (newest first, unique).
    recipientSort: NotRequired[str]
    #: ``<recipientId>#<type>``: the recipient's list of one event type.
    recipientType: NotRequired[str]
    #: ``<recipientId>#<listingId>#<type>``: the recipient's list of one listing's ``match_request.*`` events.
    recipientListingType: NotRequired[str]
    #: Deliver to this webhook only (a Dashboard test event).
    targetWebhookId: NotRequired[str]
    #: A test event (carried into the delivered envelope).
    test: NotRequired[bool]
    #: The id of the API request whose transaction wrote the event (``X-Request-Id``), carried
    #: to the delivery attempts (:mod:`chalicelib.telemetry.correlation`); absent for work no request bound.
    requestId: NotRequired[str]


def record(item: Mapping[str, Any]) -> OutboxEvent:
    """The typed record of an Events item as read (checked: MalformedRecord naming the field;
    absent ``data``/``routing`` read as empty maps)."""
    return checked(OutboxEvent, {**item, "data": dict(item.get("data") or {}), "routing": dict(item.get("routing") or {})}, "eventId")


def event_op(
    event_type: str, data: dict[str, Any], routing: dict[str, Any] | None = None,
    target_webhook_id: str | None = None, test: bool = False,
) -> TransactItem:
    """A transaction ``Put`` of a new event item.

    Parameters
    ----------
    event_type:
        E.g. ``"match_request.received"`` or :data:`LISTING_SUBMITTED`.
    data:
        The payload, JSON-ready.
    routing:
        Addressing for the consumers (never sent to receivers).
    target_webhook_id:
        Deliver the event to this webhook only (``targetWebhookId``; a Dashboard test event).
    test:
        Mark the event as a test (``test``, carried into the delivered envelope).
    """
    moment = clock.now()
    routing = routing or {}
    event_id = clock.new_id("evt")
    created_at = clock.iso(moment)
    keys = recorded_keys(event_type, event_id, created_at, routing)
    days = RECORDED_EVENT_TTL_DAYS if keys else EVENT_TTL_DAYS
    item: dict[str, Any] = {
        "eventId": event_id,
        "type": event_type,
        "createdAt": created_at,
        "expiresAt": clock.epoch_seconds(moment + timedelta(days=days)),
        "routing": routing,
        **keys,
    }
    if target_webhook_id is not None:
        item["targetWebhookId"] = target_webhook_id
    if test:
        item["test"] = True
    request_id = correlation.current_request_id()
    if request_id is not None:
        item["requestId"] = request_id
    op = storage.tx_put(settings().EVENTS_TABLE, item, condition="attribute_not_exists(eventId)")
    # storage.to_item leaves None out; payloads keep their nulls (e.g. unset socialLinks keys).
    op["Put"]["Item"]["data"] = storage.to_value(data, keep_none=True)
    return op



def recorded_keys(event_type: str, event_id: str, created_at: str, routing: Mapping[str, Any]) -> dict[str, str]:
    """The list-index attributes of an event (empty for an event without ``routing.recipientId``).

    Parameters
    ----------
    event_type, event_id, created_at:
        The event's ``type``, ``eventId`` and ``createdAt`` (ISO 8601 UTC, fixed width, so the
        sort key's string order is time order; the id makes it unique).
    routing:
        The event's addressing: ``recipientId`` and, for ``match_request.*``, ``listingId``.
    """
    recipient = routing.get("recipientId")
    if not recipient:
        return {}
    keys = {
        "recipientId": str(recipient),
        "recipientSort": f"{created_at}#{event_id}",
        "recipientType": f"{recipient}#{event_type}",
    }
    listing_id = routing.get("listingId")
    if listing_id and event_type.startswith("match_request."):
        keys["recipientListingType"] = f"{recipient}#{listing_id}#{event_type}"
    return keys


def event_id_of(op: TransactItem) -> str:
    """The ``eventId`` of an :func:`event_op` item (``evt_...``)."""
    return str(op["Put"]["Item"]["eventId"]["S"])
