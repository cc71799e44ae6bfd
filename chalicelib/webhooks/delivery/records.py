"""The stored shapes of the Deliveries table: what :mod:`chalicelib.webhooks.delivery.attempt_log` returns and takes.

* :class:`AttemptEntry`: one delivery attempt as :mod:`chalicelib.webhooks.delivery.attempt`
  reports it; :class:`AttemptRecord` is the same entry as logged, with its key and expiry.
* :class:`ClaimRecord`: the claim of a delivery (``SENT#<eventId>``), which makes every attempt
  happen at most once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from chalicelib.persistence.record_check import checked


class AttemptEntry(TypedDict):
    """One delivery attempt and its outcome (``None`` values are not stored, hence ``NotRequired``)."""

    #: ``dlv_`` + a ULID: the attempt's id in the delivery log.
    deliveryId: str
    eventId: str
    #: The event type, e.g. ``listing.matched``.
    event: str
    #: 1 for the first attempt, +1 per retry or redelivery.
    attempt: int
    #: ISO 8601 UTC.
    attemptedAt: str
    #: The ``webhook-id`` header (Standard Webhooks), the same for every attempt of one event.
    messageId: str
    #: A 2xx answer arrived in time.
    success: bool
    #: The receiver's HTTP status; absent when no response arrived.
    statusCode: NotRequired[int | None]
    #: The failure class (:mod:`chalicelib.webhooks.delivery.sender`: ``timeout``, ``connection_error``, ...).
    error: NotRequired[str | None]
    errorDetail: NotRequired[str | None]
    #: Wall time of the attempt, milliseconds.
    durationMs: int
    #: The first 4 KiB of the response body (UTF-8, invalid bytes replaced).
    responseBody: NotRequired[str | None]
    #: ISO 8601 UTC from when the scheduled retry of a failed attempt may run (the retry queue's
    #: delay after the failure); absent or ``None`` when no retry follows.
    nextAttemptAt: NotRequired[str | None]
    #: Sent by ``POST /v1/webhooks/{id}/test`` (a test event).
    test: bool
    #: The signed body as sent (shown on demand in the Dashboard's delivery log).
    requestBody: NotRequired[str]
    #: The request's headers as sent (signatures included: HMACs, no secret), shown with the body.
    requestHeaders: NotRequired[dict[str, str]]
    #: The API request that wrote the event (its ``X-Request-Id``; absent for events no request wrote).
    requestId: NotRequired[str]


class AttemptRecord(AttemptEntry):
    """A logged attempt as stored (range key ``LOG#<attemptedAt>#<eventId>#<attempt>``)."""

    webhookId: str
    deliveryKey: str
    #: Unix seconds; the table's TTL attribute.
    expiresAt: int
    #: ``<attemptedAt>#<webhookId>#<attempt>``: the sort key of the ``byEvent`` index (the
    #: attempts of one event); absent on attempts logged before the index existed.
    eventLogKey: NotRequired[str]


class ClaimRecord(TypedDict):
    """The claim of delivering one event to one webhook (range key ``SENT#<eventId>``)."""

    webhookId: str
    deliveryKey: str
    eventId: str
    #: The newest attempt claimed (attempt n > 1 moves it from n-1 to n).
    attempt: int
    #: ISO 8601 UTC of the newest claim.
    claimedAt: str
    #: Epoch milliseconds until which the newest attempt's worker holds it (its heartbeat extends
    #: it); a lapsed lease on an attempt not logged means the worker died. Absent on claims
    #: written before leases existed.
    leaseUntil: NotRequired[int]
    #: The attempt numbers logged (a number set): an attempt claimed and not in it is under way or interrupted.
    loggedAttempts: NotRequired[set[int]]
    #: The lane message of attempt 1 (JSON, :func:`chalicelib.webhooks.delivery.lanes.to_message`),
    #: so a redelivery can rebuild the delivery after the outbox item expired.
    event: str
    #: Unix seconds; the table's TTL attribute.
    expiresAt: int


def attempt(item: Mapping[str, Any]) -> AttemptRecord:
    """The typed record of a logged attempt as read (checked: MalformedRecord naming the field;
    ``attempt``, ``durationMs`` as int; flags as bool)."""
    return checked(
        AttemptRecord,
        {
            **item,
            "attempt": int(item["attempt"]),
            "success": bool(item.get("success")),
            "durationMs": int(item.get("durationMs") or 0),
            "test": bool(item.get("test")),
        },
        "deliveryKey",
    )


def claim(item: Mapping[str, Any]) -> ClaimRecord:
    """The typed record of a claim as read (checked: MalformedRecord naming the field; ``attempt`` as int)."""
    return checked(ClaimRecord, {**item, "attempt": int(item["attempt"])}, "deliveryKey")
