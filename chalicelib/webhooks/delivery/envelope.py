"""The unit of delivery (an outbox event addressed to one webhook) and the envelope it is sent in.

Sources: spec §6 "Envelope"; DESIGN §2 "Webhooks" (``test`` false on real events). The outbox
item (:mod:`chalicelib.persistence.outbox`) carries the spec's ``data`` fields exactly; this module only
wraps them. An outbox item may be addressed to one webhook (``targetWebhookId``) and marked
``test`` (the Dashboard's "Send test event"); ``test`` is carried into the envelope.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Event:
    """One outbox event, as far as delivery needs it.

    Attributes
    ----------
    event_id:
        The outbox ``eventId`` (``evt_...``); with the webhook id it names a delivery.
    type:
        The event name (:data:`chalicelib.webhooks.catalogue.SUPPORTED_EVENTS` for deliverable events).
    created_at:
        ISO 8601 UTC time of the change; the envelope's ``timestamp``.
    data:
        The spec §6 ``data`` object, JSON-ready.
    routing:
        Addressing (``recipientId``, ``webhookIds``, ``senderId``, ``listingId``); never sent.
    test:
        True for a test event (sent as ``"test": true``).
    target_webhook_id:
        The only webhook the event goes to, when it is addressed to one.
    request_id:
        The API request that wrote the event (outbox ``requestId``), logged with every attempt.
    """

    event_id: str
    type: str
    created_at: str
    data: dict[str, Any]
    routing: dict[str, Any]
    test: bool = False
    target_webhook_id: str | None = None
    request_id: str | None = None

    @classmethod
    def from_outbox(cls, item: Mapping[str, Any]) -> Event:
        """Build from an Events table item ``{eventId, type, createdAt, data, routing, test?, targetWebhookId?}``."""
        target = item.get("targetWebhookId")
        request_id = item.get("requestId")
        return cls(
            event_id=str(item["eventId"]),
            type=str(item["type"]),
            created_at=str(item["createdAt"]),
            data=dict(item.get("data") or {}),
            routing=dict(item.get("routing") or {}),
            test=bool(item.get("test")),
            target_webhook_id=str(target) if target else None,
            request_id=str(request_id) if request_id else None,
        )


@dataclass(frozen=True)
class Delivery:
    """One event addressed to one webhook, at an attempt number (1 = the first send).

    ``owner_id`` (the webhook's owner), ``lane`` (the webhook's number among the owner's, ``None``
    for a webhook without one) and ``slow`` (the webhook's circuit breaker was open when the
    delivery was queued) choose its lane (:func:`chalicelib.webhooks.delivery.lanes.group_id`);
    ``hops`` counts the moves between the owner's lanes and the slow lanes (it keeps each move's
    deduplication id its own).

    ``recovery_id``: the attempt was queued by "Recover failed deliveries" (that recovery's id):
    it is made once, never retried, and counted on the recovery as sent or not sent.

    ``redelivery_id``: the attempt was queued by a single "Redeliver" (that request's id), or is
    a retry of such an attempt; it only gives the lane message a deduplication id of its own
    (:func:`chalicelib.webhooks.delivery.lanes.deduplication_id`), never the ``webhook-id``.
    """

    event: Event
    webhook_id: str
    attempt: int = 1
    owner_id: str = ""
    lane: int | None = None
    slow: bool = False
    hops: int = 0
    recovery_id: str | None = None
    redelivery_id: str | None = None


def envelope_body(event: Event) -> bytes:
    """The delivery body: ``{"event", "timestamp", "test", "data"}`` as compact UTF-8 JSON.

    The same event always produces the same bytes, so every attempt of a delivery carries an
    identical, identically signed body.

    Returns
    -------
    bytes
        The exact bytes that are signed and sent.
    """
    envelope = {"event": event.type, "timestamp": event.created_at, "test": event.test, "data": event.data}
    return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
