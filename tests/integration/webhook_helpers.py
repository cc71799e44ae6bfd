"""Helpers of the webhook integration tests: emit outbox events, build stream and SQS events, register webhooks."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from chalicelib.kernel.config import settings
from chalicelib.persistence import outbox, storage
from chalicelib.webhooks.delivery import sender
from tests.closing import closing_all
from tests.integration.conftest import Api, User
from tests.integration.webhook_receivers import Receiver


def use_settings(monkeypatch: pytest.MonkeyPatch, **values: str) -> None:
    """Set environment settings for this test and re-read them now.

    They are read at once on purpose: Chalice's test client patches ``os.environ`` with the
    ``dev`` stage of ``.chalice/config.json`` during each request (ALLOW_INSECURE_WEBHOOKS
    false there), so a first read inside a request would cache the wrong values.
    """
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    settings.cache_clear()
    settings()


def fast_delivery_settings(monkeypatch: pytest.MonkeyPatch, timeout: str = "1", delays: str = "0,0,0") -> None:
    """A 1 s total deadline and immediate retries (the e2e tests use the real 10 s)."""
    use_settings(monkeypatch, WEBHOOK_TIMEOUT_SECONDS=timeout, WEBHOOK_RETRY_DELAYS_SECONDS=delays)


def receiver_factory() -> Iterator[Any]:
    """Body of a fixture that yields ``make(behaviour=..., ...) -> Receiver`` and closes them all."""
    with closing_all(Receiver) as make:
        yield make


def emit(event_type: str, data: dict[str, Any], routing: dict[str, Any]) -> dict[str, Any]:
    """Write one outbox event (as the producing services do) and return its item."""
    op = outbox.event_op(event_type, data, routing)
    storage.transact([op])
    item = storage.from_item(op["Put"]["Item"])
    assert item is not None
    return item


def message_event(recipient: User, sender: User, content: str = "Hello") -> dict[str, Any]:
    """A ``message.new`` event from ``sender`` to ``recipient``."""
    data = {
        "conversationId": "cnv_1", "messageId": "msg_1", "senderId": sender.user_id, "senderName": "Bob",
        "content": content, "isApiSent": True, "createdAt": "2026-11-22T00:00:00.000Z",
    }
    return emit("message.new", data, {"recipientId": recipient.user_id, "senderId": sender.user_id})


def stream_event(*items: dict[str, Any], first_sequence: int = 100) -> dict[str, Any]:
    """A Lambda DynamoDB Streams event inserting ``items`` into the Events table."""
    records = []
    for offset, item in enumerate(items):
        records.append({
            "eventID": f"e{offset}",
            "eventName": "INSERT",
            "eventSource": "aws:dynamodb",
            "awsRegion": "us-east-1",
            "eventSourceARN": settings().EVENTS_STREAM_ARN,
            "dynamodb": {
                "ApproximateCreationDateTime": 1763769600,
                "Keys": {"eventId": {"S": item["eventId"]}},
                "NewImage": storage.to_item(item),
                "SequenceNumber": str(first_sequence + offset),
                "SizeBytes": 100,
                "StreamViewType": "NEW_AND_OLD_IMAGES",
            },
        })
    return {"Records": records}


def _records(url: str, arn: str, max_messages: int) -> list[dict[str, Any]]:
    sqs = storage.client("sqs")
    messages = sqs.receive_message(
        QueueUrl=url, MaxNumberOfMessages=max_messages, WaitTimeSeconds=0, AttributeNames=["All"]
    ).get("Messages", [])
    for message in messages:
        sqs.delete_message(QueueUrl=url, ReceiptHandle=message["ReceiptHandle"])
    return [
        {"messageId": m["MessageId"], "receiptHandle": m["ReceiptHandle"], "body": m["Body"],
         "attributes": m.get("Attributes", {}), "messageAttributes": {}, "md5OfBody": m["MD5OfBody"],
         "eventSource": "aws:sqs", "eventSourceARN": arn, "awsRegion": "us-east-1"}
        for m in messages
    ]


def retry_messages(max_messages: int = 10) -> list[dict[str, Any]]:
    """Receive (and delete) the visible messages of the delivery retry queue, as Lambda SQS records."""
    return _records(settings().DELIVERY_RETRY_QUEUE_URL, settings().DELIVERY_RETRY_QUEUE_ARN, max_messages)


def healthy_lane_messages(max_messages: int = 10) -> list[dict[str, Any]]:
    """Receive (and delete) the visible messages of the owners' lanes (``DeliveryQueue``), as Lambda SQS records."""
    return _records(settings().DELIVERY_QUEUE_URL, settings().DELIVERY_QUEUE_ARN, max_messages)


def slow_lane_messages(max_messages: int = 10) -> list[dict[str, Any]]:
    """Receive (and delete) the visible messages of the slow lanes (``SlowDeliveryQueue``), as Lambda SQS records."""
    return _records(settings().DELIVERY_SLOW_QUEUE_URL, settings().DELIVERY_SLOW_QUEUE_ARN, max_messages)


def lane_messages(max_messages: int = 10) -> list[dict[str, Any]]:
    """Receive (and delete) the visible messages of the delivery lanes (both FIFO queues: the
    owners' lanes while they have any, then the slow lanes), as Lambda SQS records."""
    return healthy_lane_messages(max_messages) or slow_lane_messages(max_messages)


def run_lanes() -> int:
    """Make the attempts queued in the lanes, one message per invocation (as the mapping's batch
    size 1), until the lanes are empty; returns how many messages were handled. Retries stay
    on the retry queue."""
    from chalicelib.webhooks.delivery import handlers

    handled = 0
    while records := lane_messages(1):
        assert handlers.handle_lane_batch({"Records": records}) == {"batchItemFailures": []}
        handled += 1
    return handled


def create_webhook(api: Api, user: User, url: str, events: list[str] | None = None, name: str | None = None) -> dict[str, Any]:
    """``POST /v1/webhooks`` (asserts 201) and return the created webhook."""
    body: dict[str, Any] = {"url": url}
    if events is not None:
        body["events"] = events
    if name is not None:
        body["name"] = name
    return api.call_json("POST", "/v1/webhooks", user.key, body, status=201)


def webhook_state(api: Api, user: User, webhook_id: str) -> dict[str, Any]:
    """The webhook as ``GET /v1/webhooks`` lists it (with failCount and active)."""
    response = api.call("GET", "/v1/webhooks", user.key)
    assert response.status_code == 200, response.json
    found: dict[str, Any] = next(w for w in response.json["webhooks"] if w["id"] == webhook_id)
    return found


def deliveries(api: Api, user: User, webhook_id: str, query: str = "") -> dict[str, Any]:
    """``GET /v1/webhooks/{id}/deliveries`` (asserts 200)."""
    return api.call_json("GET", f"/v1/webhooks/{webhook_id}/deliveries{query}", user.key)


def envelope(body: bytes) -> dict[str, Any]:
    """The decoded delivery body."""
    result: dict[str, Any] = json.loads(body)
    return result


def sender_outcome(answer: int | str) -> sender.Outcome:
    """What ``sender.post`` returns for a receiver's status code ``answer``, or for the transport
    error it names (``"timeout"``, ``"connection"``): a fake sender's answer, 5 ms long."""
    if isinstance(answer, str):
        return sender.Outcome(None, answer, 5)
    return sender.Outcome(answer, None, 5, "")


def install_fake_sender[FakeT](monkeypatch: pytest.MonkeyPatch, fake: FakeT, retry_delays: str) -> FakeT:
    """Make ``fake`` (a callable with ``sender.post``'s signature) send every delivery, retried after
    ``retry_delays`` (``WEBHOOK_RETRY_DELAYS_SECONDS``, e.g. ``"0,0,0"``); returns ``fake``."""
    monkeypatch.setattr(sender, "post", fake)
    use_settings(monkeypatch, WEBHOOK_RETRY_DELAYS_SECONDS=retry_delays)
    return fake
