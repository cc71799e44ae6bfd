"""The webhook event catalogue: every event type a webhook can subscribe to (spec §6 "Event kinds").

This is the one registry of webhook event types: registration (``events`` of
``POST /v1/webhooks``), the delivery pipeline (:mod:`chalicelib.webhooks.delivery`), the OpenAPI
document and the Dashboard's test-event choices all read it. A new event type is added here
(and its outbox constant in :mod:`chalicelib.outbox`).
"""

from __future__ import annotations

from chalicelib.outbox import (
    LISTING_MATCHED,
    MATCH_REQUEST_ACCEPTED,
    MATCH_REQUEST_RECEIVED,
    MATCH_REQUEST_REJECTED,
    MESSAGE_NEW,
    PROFILE_REQUEST_ACCEPTED,
    PROFILE_REQUEST_RECEIVED,
    PROFILE_REQUEST_REJECTED,
)

#: Every event a webhook can subscribe to, in documentation order (``events`` of POST /v1/webhooks).
SUPPORTED_EVENTS: tuple[str, ...] = (
    MATCH_REQUEST_RECEIVED,
    MATCH_REQUEST_ACCEPTED,
    MATCH_REQUEST_REJECTED,
    MESSAGE_NEW,
    PROFILE_REQUEST_RECEIVED,
    PROFILE_REQUEST_ACCEPTED,
    PROFILE_REQUEST_REJECTED,
    LISTING_MATCHED,
)
