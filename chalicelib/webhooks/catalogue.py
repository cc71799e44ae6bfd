"""The webhook event catalogue: every event type, its ``data`` model and its envelope (spec §6).

This is the ONE registry of webhook event types. Everything that needs to know which events
exist reads it: the outbox writers (each domain builds its payload with the model here), the
delivery pipeline (:data:`SUPPORTED_EVENTS`), ``POST /v1/webhooks`` (the ``events`` enum), the
OpenAPI document's top-level ``webhooks`` section (:mod:`chalicelib.openapi.webhooks`), the
docs and the Dashboard's test-event choices. A new event is one :class:`EventType` entry in
:data:`EVENT_TYPES` with its pydantic ``data`` model (and its outbox constant in
:mod:`chalicelib.persistence.outbox`).

Sources: spec §6 "Event kinds" and "Envelope"; DESIGN §2 "Webhooks" (``profile_request.*``
events, ``test`` false on real events). Fields without a value are present as ``null``.

Two kinds of events: the domain events of the spec (requests, messages, matches) and the
*operational* events about the webhooks themselves (``webhook.disabled``, ``webhook.enabled``,
as Svix's operational webhooks). A webhook registered without ``events`` subscribes to
:data:`DEFAULT_EVENTS`, the domain events only: operational events are delivered only to
webhooks that name them (docs/webhook-delivery.md, "Operational events").
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from chalicelib.kernel.json_types import Timestamp
from chalicelib.kernel.model_base import Model
from chalicelib.kernel.profile_summary import ProfileSummary
from chalicelib.persistence import outbox


class MatchRequestReceived(Model):
    """``match_request.received`` data: a new match request about one of the recipient's listings."""

    requestId: str
    status: Literal["PENDING"] = "PENDING"
    listingId: str
    listingTitle: str
    requesterId: str
    profile: ProfileSummary = Field(description="The requester's profile summary when the request was sent")
    channels: list[str] = Field(description="The requester's channels offered for contact")
    message: str
    createdAt: Timestamp


class MatchRequestAccepted(Model):
    """``match_request.accepted`` data: the listing owner accepted the request."""

    requestId: str
    status: Literal["ACCEPTED"] = "ACCEPTED"
    listingId: str
    listingTitle: str
    requesterId: str
    respondedAt: Timestamp


class MatchRequestRejected(Model):
    """``match_request.rejected`` data: the listing owner rejected the request."""

    requestId: str
    status: Literal["REJECTED"] = "REJECTED"
    listingId: str
    listingTitle: str
    requesterId: str
    reason: str | None = None
    respondedAt: Timestamp


class ProfileRequestReceived(Model):
    """``profile_request.received`` data (``userId``: the requested user, the recipient)."""

    requestId: str
    status: Literal["PENDING"] = "PENDING"
    userId: str
    requesterId: str
    profile: ProfileSummary = Field(description="The requester's profile summary when the request was sent")
    channels: list[str]
    message: str
    createdAt: Timestamp


class ProfileRequestAccepted(Model):
    """``profile_request.accepted`` data."""

    requestId: str
    status: Literal["ACCEPTED"] = "ACCEPTED"
    userId: str
    requesterId: str
    respondedAt: Timestamp


class ProfileRequestRejected(Model):
    """``profile_request.rejected`` data."""

    requestId: str
    status: Literal["REJECTED"] = "REJECTED"
    userId: str
    requesterId: str
    reason: str | None = None
    respondedAt: Timestamp


class ListingMatched(Model):
    """``listing.matched`` data: a newly ACTIVE listing matches one of the recipient's saved searches.

    ``distanceKm``: great-circle km from the saved search's geo center, rounded to 0.01 (null
    without a geo filter); ``matchedAt``: ISO 8601 UTC.
    """

    savedSearchId: str
    savedSearchName: str
    listingId: str
    listingTitle: str
    categoryKey: str
    roleKey: str
    distanceKm: float | None = None
    matchedAt: Timestamp


class MessageNew(Model):
    """``message.new`` data: a message in one of the recipient's conversations."""

    conversationId: str
    messageId: str
    senderId: str
    senderName: str
    content: str
    isApiSent: bool
    createdAt: Timestamp


class WebhookDisabled(Model):
    """``webhook.disabled`` data: the failure policy switched one of the recipient's webhooks off.

    ``failCount``: the consecutive failed attempts that did it; ``lastFailure``: the outcome of
    the last of them (``HTTP 500`` or the error, e.g. ``timeout: ...``).
    """

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "webhookId": "whk_01JD3Q5B7N4H2F8K6M0P9R3S1T", "name": "Matching alerts", "url": "https://example.com/hooks/matching",
        "disabledReason": "Disabled after 5 consecutive failures", "failCount": 5, "lastFailure": "HTTP 503",
        "disabledAt": "2026-11-21T23:55:55.123Z",
    }]})
    webhookId: str = Field(description="The webhook switched off (it does not receive this event)")
    name: str
    url: str
    disabledReason: str
    failCount: int = Field(description="Consecutive failed attempts when it was switched off")
    lastFailure: str | None = Field(default=None, description="The failure that switched it off: `HTTP 500` or the error")
    disabledAt: Timestamp


class WebhookEnabled(Model):
    """``webhook.enabled`` data: the owner switched one of its inactive webhooks on again."""

    model_config = ConfigDict(json_schema_extra={"examples": [{
        "webhookId": "whk_01JD3Q5B7N4H2F8K6M0P9R3S1T", "name": "Matching alerts", "url": "https://example.com/hooks/matching",
        "enabledAt": "2026-11-22T08:15:00.000Z",
    }]})
    webhookId: str = Field(description="The webhook switched on (it does not receive this event)")
    name: str
    url: str
    enabledAt: Timestamp


@dataclass(frozen=True)
class EventType:
    """One deliverable event type.

    Attributes
    ----------
    name:
        The event name (``X-Webhook-Event``, the envelope's ``event``), e.g. ``match_request.received``.
    data:
        The pydantic model of the envelope's ``data``.
    summary:
        One line for documentation: when the event happens.
    recipients:
        Whose webhooks receive it.
    operational:
        An event about the webhooks themselves: not in :data:`DEFAULT_EVENTS`.
    """

    name: str
    data: type[BaseModel]
    summary: str
    recipients: str
    operational: bool = False


def _catalogue(*types: EventType) -> dict[str, EventType]:
    return {t.name: t for t in types}


_LISTING_WEBHOOKS = "the webhooks named in the listing's `webhookIds` that are active and subscribed to the event"
_RECIPIENT_WEBHOOKS = "every active webhook of the recipient subscribed to the event"
_OTHER_WEBHOOKS = (
    "every other active webhook of the owner that names the event in its `events` (operational events are not "
    "in the default subscription); always listed by `GET /v1/events`"
)

#: Every deliverable event, in documentation order.
EVENT_TYPES: dict[str, EventType] = _catalogue(
    EventType(outbox.MATCH_REQUEST_RECEIVED, MatchRequestReceived, "A match request about a listing was sent.", _LISTING_WEBHOOKS),
    EventType(outbox.MATCH_REQUEST_ACCEPTED, MatchRequestAccepted, "The listing owner accepted a match request.", _LISTING_WEBHOOKS),
    EventType(outbox.MATCH_REQUEST_REJECTED, MatchRequestRejected, "The listing owner rejected a match request.", _LISTING_WEBHOOKS),
    EventType(outbox.MESSAGE_NEW, MessageNew, "A message arrived in a conversation (from the other participant).", _RECIPIENT_WEBHOOKS),
    EventType(outbox.PROFILE_REQUEST_RECEIVED, ProfileRequestReceived, "A profile request was sent to a user.", _RECIPIENT_WEBHOOKS),
    EventType(outbox.PROFILE_REQUEST_ACCEPTED, ProfileRequestAccepted, "The user accepted a profile request.", _RECIPIENT_WEBHOOKS),
    EventType(outbox.PROFILE_REQUEST_REJECTED, ProfileRequestRejected, "The user rejected a profile request.", _RECIPIENT_WEBHOOKS),
    EventType(
        outbox.LISTING_MATCHED, ListingMatched, "A newly active listing matches one of the recipient's saved searches (with alerts).",
        _RECIPIENT_WEBHOOKS,
    ),
    EventType(
        outbox.WEBHOOK_DISABLED, WebhookDisabled, "The failure policy switched one of the owner's webhooks off.",
        _OTHER_WEBHOOKS, operational=True,
    ),
    EventType(
        outbox.WEBHOOK_ENABLED, WebhookEnabled, "The owner switched one of its inactive webhooks on again.",
        _OTHER_WEBHOOKS, operational=True,
    ),
)

#: The names of :data:`EVENT_TYPES`, in documentation order (the ``events`` a webhook may name).
SUPPORTED_EVENTS: tuple[str, ...] = tuple(EVENT_TYPES)
#: The events of a webhook registered without ``events``: every domain event, no operational one.
DEFAULT_EVENTS: tuple[str, ...] = tuple(name for name, entry in EVENT_TYPES.items() if not entry.operational)


def data_model(event_type: str) -> type[BaseModel]:
    """The ``data`` model of ``event_type``.

    Raises
    ------
    KeyError
        ``event_type`` is not in :data:`EVENT_TYPES`.
    """
    return EVENT_TYPES[event_type].data


def envelope_name(event_type: str) -> str:
    """The schema name of an event's envelope: ``match_request.received`` -> ``MatchRequestReceivedEvent``."""
    return data_model(event_type).__name__ + "Event"


@functools.cache
def envelope_model(event_type: str) -> type[BaseModel]:
    """The pydantic model of the delivered body of ``event_type``.

    ``{"event": <name>, "timestamp": <ISO 8601 UTC of the change>, "test": bool, "data": <data model>}``
    (spec §6 "Envelope"); ``test`` is true only for test events sent on request.
    """
    fields: dict[str, Any] = {
        "event": (Literal[event_type], Field(description="The event name; also in the `X-Webhook-Event` header")),
        "timestamp": (Timestamp, Field(description="When the change happened (ISO 8601 UTC)")),
        "test": (bool, Field(description="true only for a test event sent on request; false for real events")),
        "data": (data_model(event_type), ...),
    }
    return create_model(
        envelope_name(event_type),
        __config__=ConfigDict(title=envelope_name(event_type)),
        __doc__=f"The body of a `{event_type}` delivery. {EVENT_TYPES[event_type].summary}",
        **fields,
    )
