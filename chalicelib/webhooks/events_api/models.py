"""Events API models: the query of ``GET /v1/events``, an event, and the pages."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import AwareDatetime, Field, field_validator

from chalicelib.kernel import clock
from chalicelib.kernel.json_types import Timestamp
from chalicelib.kernel.model_base import Model
from chalicelib.kernel.pagination import PageQuery, SearchEnvelope
from chalicelib.webhooks.catalogue import SUPPORTED_EVENTS
from chalicelib.webhooks.models import DeliveryAttempt

#: An RFC 3339 date-time (ISO 8601 with seconds and an offset; upper-case ``T`` and ``Z``; years
#: 0001..9999, no leap second: what Python's datetime represents).
DATE_TIME_PATTERN = (
    r"^([1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])"
    r"T([01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](\.[0-9]{1,9})?(Z|[+-]([01][0-9]|2[0-3]):[0-5][0-9])$"
)


def _types_pattern() -> str:
    choice = "|".join(name.replace(".", r"\.") for name in SUPPORTED_EVENTS)
    return f"^({choice})(,({choice}))*$"


class EventListQuery(PageQuery):
    """Query of ``GET /v1/events``: every filter optional, all of them applied together.

    ``createdAfter`` / ``createdBefore`` bound ``createdAt`` to the half-open interval
    ``[createdAfter, createdBefore)`` (ISO 8601 with an offset). ``createdAt`` has milliseconds, so
    a bound between two milliseconds is read as the next one: ``createdAfter=...13.694999Z``
    leaves out an event of ``...13.694Z`` and ``createdBefore=...13.6945Z`` keeps it.
    """

    type: str | None = Field(
        default=None, max_length=1024, pattern=_types_pattern(),
        description="One or more event names, comma-separated (e.g. `match_request.received,message.new`)",
    )
    createdAfter: AwareDatetime | None = Field(
        default=None, json_schema_extra={"pattern": DATE_TIME_PATTERN},
        description="Events created at or after this time (ISO 8601 with an offset, e.g. `2026-11-21T23:55:55Z`)",
    )
    createdBefore: AwareDatetime | None = Field(
        default=None, json_schema_extra={"pattern": DATE_TIME_PATTERN},
        description="Events created strictly before this time (ISO 8601 with an offset)",
    )
    listingId: str | None = Field(
        default=None, min_length=1, max_length=128, pattern="^[A-Za-z0-9_-]+$",
        description="The `match_request.*` events about this listing of the caller (other event names of `type` match nothing)",
    )

    @field_validator("createdAfter", "createdBefore", mode="before")
    @classmethod
    def _date_time_text(cls, value: object) -> object:
        # Only the RFC 3339 text: pydantic alone would also read a number as Unix seconds.
        if value is not None and not (isinstance(value, str) and re.fullmatch(DATE_TIME_PATTERN, value)):
            raise ValueError("must be an ISO 8601 date and time with an offset, e.g. 2026-11-21T23:55:55Z")
        return value

    @field_validator("type")
    @classmethod
    def _distinct(cls, value: str | None) -> str | None:
        return None if value is None else ",".join(dict.fromkeys(value.split(",")))

    def types(self) -> list[str]:
        """The event names of ``type`` (distinct, in the order given); empty without the filter."""
        return self.type.split(",") if self.type else []

    def after_iso(self) -> str | None:
        """``createdAfter`` as the service writes times (ISO 8601 UTC, milliseconds, rounded up), or ``None``."""
        return None if self.createdAfter is None else clock.iso(_next_millisecond(_utc(self.createdAfter)))

    def before_iso(self) -> str | None:
        """``createdBefore`` as the service writes times (rounded up likewise), or ``None``."""
        return None if self.createdBefore is None else clock.iso(_next_millisecond(_utc(self.createdBefore)))


def _next_millisecond(moment: datetime) -> datetime:
    """``moment`` rounded up to a whole millisecond (the precision of ``createdAt``); the last
    representable moment stays as it is."""
    rest = moment.microsecond % 1000
    try:
        return moment + timedelta(microseconds=(1000 - rest) % 1000)
    except OverflowError:
        return moment


def _utc(moment: datetime) -> datetime:
    """``moment`` in UTC; a time whose UTC date falls outside years 1..9999 (e.g. ``0001-01-01T00:00+05:00``)
    becomes the first or last representable moment, which bounds the same events."""
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        return (datetime.min if moment.year < 5000 else datetime.max).replace(tzinfo=UTC)


class Event(Model):
    """One event: exactly the body its webhook deliveries carry (``event``, ``timestamp``, ``test``,
    ``data``) plus its ``id`` and ``createdAt``.

    Every delivery of the event has ``webhook-id`` = ``<id>_<webhookId>``, so the part before
    ``_whk_`` of a delivery's ``webhook-id`` names its event.
    """

    id: str = Field(description="The event id (`evt_...`); a delivery's `webhook-id` is `<id>_<webhookId>`")
    event: str = Field(description="The event name (the webhook section's operation of the same name gives `data`)",
                       json_schema_extra={"enum": list(SUPPORTED_EVENTS)})
    timestamp: Timestamp = Field(description="When the change happened (ISO 8601 UTC); as in the delivered body")
    test: bool = Field(description="true only for a test event sent on request")
    data: dict[str, Any] = Field(description="The event's `data`, exactly as delivered (schema: the `webhooks` section)")
    createdAt: Timestamp = Field(description="When the event was recorded (ISO 8601 UTC; equal to `timestamp`)")


class EventPage(SearchEnvelope):
    """``GET /v1/events``: the caller's events of the last 30 days, newest first. ``total`` counts
    the events up to the end of this page, a lower bound (``totalRelation: "gte"``) while more follow."""

    events: list[Event]


class EventDelivery(DeliveryAttempt):
    """One delivery attempt of an event, to one of the caller's webhooks (as the delivery log shows it)."""

    webhookId: str


class EventDeliveryPage(SearchEnvelope):
    """``GET /v1/events/{eventId}/deliveries``: the attempts to deliver the event, newest first.
    ``total`` counts the attempts up to the end of this page, a lower bound while more follow."""

    deliveries: list[EventDelivery]
