"""The retry message of a webhook delivery: what the retry queue carries round-trips, without routing."""

from __future__ import annotations

import json

from chalicelib.webhooks import retries
from chalicelib.webhooks.events import Delivery, Event


def test_retry_message_round_trip() -> None:
    event = Event("evt_1", "match_request.accepted", "2026-11-22T00:00:00.000Z", {"requestId": "req_1"}, {"recipientId": "u"})
    parsed = retries.from_message(retries.to_message(Delivery(event, "whk_1", 3)))
    assert (parsed.event.event_id, parsed.event.type, parsed.event.data, parsed.webhook_id, parsed.attempt) == (
        "evt_1", "match_request.accepted", {"requestId": "req_1"}, "whk_1", 3)
    assert "recipientId" not in json.dumps(retries.to_message(Delivery(event, "whk_1", 3)))
