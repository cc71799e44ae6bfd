"""Outbox events of requests: payloads (spec §6 ``data``) and routing, one model per event type.

``data`` holds exactly the spec's fields. ``routing`` tells the webhook consumer whom to
notify: ``recipientId`` (match_request.*: the listing owner; profile_request.*: the requested
user) and, for match_request.*, the ``listingId`` and the listing's ``webhookIds`` at the time
of the event.

Fields without a value are present as ``null`` (e.g. an unset ``socialLinks.x``, or the
``reason`` of a rejection without one): :func:`chalicelib.persistence.outbox.event_op` keeps nulls in
``data``. The ``data`` models live in the event catalogue (:mod:`chalicelib.webhooks.catalogue`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalicelib.kernel.subject_types import SubjectType
from chalicelib.persistence import outbox
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.webhooks.catalogue import data_model

_TYPES = {
    (SubjectType.LISTING, "PENDING"): outbox.MATCH_REQUEST_RECEIVED,
    (SubjectType.LISTING, "ACCEPTED"): outbox.MATCH_REQUEST_ACCEPTED,
    (SubjectType.LISTING, "REJECTED"): outbox.MATCH_REQUEST_REJECTED,
    (SubjectType.PROFILE, "PENDING"): outbox.PROFILE_REQUEST_RECEIVED,
    (SubjectType.PROFILE, "ACCEPTED"): outbox.PROFILE_REQUEST_ACCEPTED,
    (SubjectType.PROFILE, "REJECTED"): outbox.PROFILE_REQUEST_REJECTED,
}


def event_type(request: Mapping[str, Any]) -> str:
    """The event type announcing a request item's current status."""
    return _TYPES[(SubjectType(request["subjectType"]), request["status"])]


def routing(request: Mapping[str, Any], listing: Mapping[str, Any] | None) -> dict[str, Any]:
    """Addressing of a request event; ``listing`` (the current listing item) for LISTING requests."""
    if request["subjectType"] == SubjectType.PROFILE:
        return {"recipientId": request["recipientId"]}
    webhook_ids = list((listing or {}).get("webhookIds") or [])
    return {"recipientId": request["recipientId"], "listingId": request["listingId"], "webhookIds": webhook_ids}


def request_event_op(request: Mapping[str, Any], listing: Mapping[str, Any] | None = None) -> TransactItem:
    """The outbox ``Put`` announcing ``request`` (an item in its new status).

    Parameters
    ----------
    request:
        The request item as written by the same transaction (status PENDING, ACCEPTED or
        REJECTED; ``respondedAt`` and ``reason`` for decisions).
    listing:
        The listing item, for LISTING requests (title and webhook ids at event time).
    """
    kind = event_type(request)
    data = dict(request)
    if listing is not None:
        data["listingTitle"] = listing.get("title", request.get("listingTitle"))
    model = data_model(kind).model_validate(data)
    return outbox.event_op(kind, model.model_dump(mode="json"), routing(request, listing))
