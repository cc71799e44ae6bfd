"""Realistic sample ``data`` for test events, one per event type, validated by the event's own
payload model (so a sample can never drift from what real events carry).

The models are those of the single event catalogue (:mod:`chalicelib.webhooks.catalogue`);
ids are freshly generated, times are now.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from chalicelib.kernel import clock
from chalicelib.webhooks.catalogue import EVENT_TYPES

#: Every event type's ``data`` model.
DATA_MODELS: dict[str, type[BaseModel]] = {name: entry.data for name, entry in EVENT_TYPES.items()}

_PROFILE = {
    "displayName": "Sample Requester",
    "verifiedLevel": 1,
    "country": "de",
    "socialLinks": {"x": None, "linkedin": "https://www.linkedin.com/in/sample", "github": None, "instagram": None,
                    "tiktok": None, "youtube": None, "website": None},
}


def sample_data(event_type: str, recipient_id: str) -> dict[str, Any]:
    """The sample ``data`` of ``event_type`` addressed to ``recipient_id``, JSON-ready.

    Raises
    ------
    KeyError
        ``event_type`` has no payload model.
    """
    now = clock.iso()
    values: dict[str, Any] = {
        "requestId": clock.new_id("req"),
        "listingId": clock.new_id("lst"),
        "listingTitle": "Sample listing: Backend engineer (Berlin)",
        "requesterId": clock.new_id("usr"),
        "userId": recipient_id,
        "profile": _PROFILE,
        "channels": ["telegram", "email"],
        "message": "Hello! This is a test event sent from the Dashboard.",
        "reason": "Sample rejection reason",
        "createdAt": now,
        "respondedAt": now,
        "conversationId": clock.new_id("cnv"),
        "messageId": clock.new_id("msg"),
        "senderId": clock.new_id("usr"),
        "senderName": "Sample Sender",
        "content": "Hello! This is a test message event sent from the Dashboard.",
        "isApiSent": True,
        "savedSearchId": clock.new_id("ss"),
        "savedSearchName": "Sample saved search: mentors within 25 km of Lisbon",
        "categoryKey": "mentoring",
        "roleKey": "mentor",
        "distanceKm": 3.2,
        "matchedAt": now,
        "webhookId": clock.new_id("whk"),
        "name": "Sample webhook",
        "url": "https://example.com/hooks/sample",
        "disabledReason": "Disabled after 5 consecutive failures",
        "failCount": 5,
        "lastFailure": "HTTP 503",
        "disabledAt": now,
        "enabledAt": now,
    }
    model = DATA_MODELS[event_type]
    return model.model_validate({k: v for k, v in values.items() if k in model.model_fields}).model_dump(mode="json")
