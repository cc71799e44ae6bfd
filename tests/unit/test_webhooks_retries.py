"""The lane and retry message of a webhook delivery (what the queues carry round-trips, without
routing) and the retry schedule read from the settings."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace

import pytest

from chalicelib.webhooks.delivery import lanes, retries
from chalicelib.webhooks.delivery.envelope import Delivery, Event


def test_retry_message_round_trip() -> None:
    event = Event("evt_1", "match_request.accepted", "2026-11-22T00:00:00.000Z", {"requestId": "req_1"}, {"recipientId": "u"})
    parsed = lanes.from_message(lanes.to_message(Delivery(event, "whk_1", 3)))
    assert (parsed.event.event_id, parsed.event.type, parsed.event.data, parsed.webhook_id, parsed.attempt) == (
        "evt_1", "match_request.accepted", {"requestId": "req_1"}, "whk_1", 3)
    assert "recipientId" not in json.dumps(lanes.to_message(Delivery(event, "whk_1", 3)))
    assert parsed.event.test is False
    test_event = Event("evt_2", "message.new", "2026-11-22T00:00:00.000Z", {}, {}, test=True)
    assert lanes.from_message(lanes.to_message(Delivery(test_event, "whk_1"))).event.test is True



def test_deduplication_ids_keep_each_asked_for_attempt_apart_from_the_retry_of_its_number() -> None:
    event = Event("evt_1", "message.new", "2026-11-22T00:00:00.000Z", {}, {})
    retry = Delivery(event, "whk_1", 2)
    redelivered = replace(retry, redelivery_id="rdl_1")
    recovered = replace(retry, recovery_id="rcv_1")
    assert lanes.deduplication_id(Delivery(event, "whk_1")) == "evt_1_whk_1"
    assert lanes.deduplication_id(retry) == "evt_1_whk_1.2"
    assert lanes.deduplication_id(redelivered) == "evt_1_whk_1.2.rdl_1"
    assert lanes.deduplication_id(recovered) == "evt_1_whk_1.2.rcv_1"
    assert lanes.deduplication_id(replace(redelivered, hops=1)) == "evt_1_whk_1.2.rdl_1.1"
    # a redelivery's retry keeps the redelivery's id; the message carries it
    parsed = lanes.from_message(lanes.to_message(replace(redelivered, attempt=3)))
    assert (parsed.redelivery_id, parsed.recovery_id) == ("rdl_1", None)
    assert lanes.deduplication_id(parsed) == "evt_1_whk_1.3.rdl_1"


ZERO_ATTEMPT = '{"webhookId":"w","attempt":0,"eventId":"e","type":"t","createdAt":"c","data":{}}'


@pytest.mark.parametrize("body", ["{}", "[]", ZERO_ATTEMPT, "not json"])
def test_malformed_lane_messages_are_rejected(body: str) -> None:
    with pytest.raises((KeyError, TypeError, ValueError)):
        lanes.from_message(body)


def test_retry_schedule_is_configurable_and_validated(set_settings: Callable[..., None]) -> None:
    set_settings(WEBHOOK_RETRY_DELAYS_SECONDS="30,120,600")
    assert retries.delays() == (30, 120, 600)
    assert [retries.next_delay(n) for n in (1, 2, 3, 4)] == [30, 120, 600, None]
    set_settings(WEBHOOK_RETRY_DELAYS_SECONDS="1, 2")
    assert retries.delays() == (1, 2)
    set_settings(WEBHOOK_RETRY_DELAYS_SECONDS="")
    assert retries.next_delay(1) is None
    set_settings(WEBHOOK_RETRY_DELAYS_SECONDS="1000")
    with pytest.raises(ValueError, match=r"0\.\.900"):
        retries.delays()
