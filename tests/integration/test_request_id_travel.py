"""One request id finds a delivery's whole story: API request -> outbox event -> attempt log and log line."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.telemetry import correlation
from tests.integration.conftest import Api, User
from tests.integration.helpers import activate, counting_reads, create_listing
from tests.integration.webhook_helpers import create_webhook, fast_delivery_settings, message_event
from tests.listing_bodies import listing_body


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


def test_a_search_request_writes_its_request_and_search_metrics(
    api: Api, alice: User, admin: User, runner: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    listing = create_listing(api, alice)
    log = tmp_path / "metrics.log"
    monkeypatch.setenv("METRICS_LOG", str(log))
    monkeypatch.setenv("POWERTOOLS_METRICS_DISABLED", "false")
    settings.cache_clear()
    try:
        activate(api, admin, runner, listing["id"])
        with counting_reads() as reads:
            response = api.call("GET", "/v1/listings/search?category=jobs", alice.key)
    finally:
        monkeypatch.undo()
        settings.cache_clear()
    assert response.status_code == 200, response.json
    assert [item["id"] for item in response.json["listings"]] == [listing["id"]]
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    [search] = [line for line in lines if "SearchItemsRead" in line]
    assert search["index"] == "listings"
    assert search["SearchItemsRead"] == [float(reads.items)]  # what DynamoDB answered, counted independently
    assert reads.items >= 2  # the listing's index entry and the listing itself at least
    requests = [(line["route"], line["statusClass"]) for line in lines if "Requests" in line]
    assert ("/v1/listings/search", "2xx") in requests
    assert ("/v1/admin/approvals/claims", "2xx") in requests
    assert [line for line in lines if "ApprovalQueueAge" in line], "the claim measured the queue's age"
    assert "listings" in {line["stream"] for line in lines if "IndexerLag" in line}, "the indexer measured its lag"
