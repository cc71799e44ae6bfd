"""One request id finds a delivery's whole story (issue 24): API request -> outbox event -> attempt log and log line."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib import correlation, storage
from chalicelib.config import settings
from tests.integration.conftest import Api, User
from tests.integration.webhook_helpers import create_webhook, fast_delivery_settings, message_event, receiver_factory
from tests.listing_bodies import listing_body


@pytest.fixture
def receivers() -> Iterator[Any]:
    yield from receiver_factory()


def test_an_api_request_writes_its_id_into_the_events_it_adds(api: Api, alice: User) -> None:
    response = api.call("POST", "/v1/listings", alice.key, listing_body(), headers={"X-Request-Id": "req-listing-1"})
    assert response.status_code == 201, response.json
    [item] = [
        storage.from_item(i) for i in storage.dynamodb().scan(TableName=settings().EVENTS_TABLE)["Items"]
    ]  # a test reads the whole (one-event) table; no request path scans
    assert item is not None
    assert item["type"] == "listing.submitted"
    assert item["requestId"] == "req-listing-1"


def test_the_attempt_log_and_log_line_name_the_request_id(
    api: Api, alice: User, bob: User, runner: Any, receivers: Any, monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    fast_delivery_settings(monkeypatch)
    webhook = create_webhook(api, alice, receivers("ok").url)
    with correlation.bound("req-message-7"):  # as the conversation route's request binds it
        message_event(alice, bob)
    with caplog.at_level(logging.INFO):
        runner.drain()
    items = storage.query(settings().DELIVERIES_TABLE, KeyConditionExpression="webhookId = :w",
                          ExpressionAttributeValues=storage.values(w=webhook["id"]))
    attempts = [i for i in items if "deliveryId" in i]
    assert [a["requestId"] for a in attempts] == ["req-message-7"]
    [line] = [r for r in caplog.records if r.getMessage() == "webhook attempt"]
    assert line.__dict__["requestId"] == line.__dict__["correlation_id"] == "req-message-7"
    assert line.__dict__["webhookId"] == webhook["id"]
