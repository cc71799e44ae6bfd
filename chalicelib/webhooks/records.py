"""The stored shape of a webhook: what the webhooks repository returns and takes (Webhooks table items)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NotRequired, TypedDict

from chalicelib.persistence.record_check import checked


class WebhookRecord(TypedDict):
    """A webhook registration as stored (DESIGN §2 "Webhooks")."""

    webhookId: str
    ownerId: str
    #: ``None`` only until written (storage leaves ``None`` out); the create model defaults it.
    name: str | None
    #: The receiver's http(s) URL (:mod:`chalicelib.webhooks.addresses` rules).
    url: str
    #: The signing secret (Standard Webhooks ``whsec_`` form, :mod:`chalicelib.webhooks.signing`).
    secret: str
    #: Subscribed event types (:mod:`chalicelib.webhooks.catalogue`); absent or ``None``: every type.
    events: NotRequired[list[str] | None]
    #: False once disabled (by its owner, or after too many consecutive failures).
    active: bool
    #: Consecutive failed delivery attempts; changed only by atomic update expressions.
    failCount: int
    #: ISO 8601 UTC.
    createdAt: str
    updatedAt: str
    #: The webhook's number among its owner's (0, 1, ...): which of the owner's delivery lanes it uses
    #: (absent on webhooks created before lanes were per owner: a hash of the id then).
    lane: NotRequired[int]
    #: ISO 8601 UTC of the timeout that opened the circuit breaker; absent while it is closed (its
    #: deliveries then use the slow lanes, :mod:`chalicelib.webhooks.delivery.lanes`).
    breakerOpenedAt: NotRequired[str]
    disabledAt: NotRequired[str]
    #: Why it was switched off (shown by the Dashboard), e.g. "Disabled after 5 consecutive failures".
    disabledReason: NotRequired[str]
    #: The failure that switched it off: ``HTTP <status>`` or the error class and detail.
    lastFailure: NotRequired[str]
    #: The secret before the last rotation, valid until ``previousSecretExpiresAt`` (24 h after it).
    previousSecret: NotRequired[str]
    previousSecretExpiresAt: NotRequired[str]
    #: The latest "Recover failed deliveries" (:func:`chalicelib.webhooks.repository.start_recovery`):
    #: its id and time, how many attempts it queued, and how many of them were sent (whatever their
    #: outcome) or not sent (the webhook was inactive or gone when their turn came).
    recoveryId: NotRequired[str]
    recoveryAt: NotRequired[str]
    recoveryQueued: NotRequired[int]
    recoverySent: NotRequired[int]
    recoveryNotSent: NotRequired[int]


class WebhookEdit(TypedDict):
    """The fields an owner's edit replaces (the Dashboard's edit form); ``None`` values are stored as NULL."""

    name: str | None
    url: str
    #: ``None``: every event type.
    events: list[str] | None
    #: ISO 8601 UTC.
    updatedAt: str


def record(item: Mapping[str, Any]) -> WebhookRecord:
    """The typed record of a Webhooks item as read (no field needs converting)."""
    return checked(WebhookRecord, item, "webhookId")
