"""The events API end to end: a receiver that was down while three events happened finds all three
through ``GET /v1/events`` and their failed attempts through ``GET /v1/events/{id}/deliveries``
(the real local stack over HTTP, a real receiver on 127.0.0.1)."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Stack, wait_until
from tests.e2e.receivers import Receiver, receivers

pytestmark = pytest.mark.e2e


@pytest.fixture
def new_receiver() -> Iterator[Callable[..., Receiver]]:
    """Make receivers; all are closed after the test."""
    with receivers() as new:
        yield new


def failed_attempts(client: httpx.Client, webhook_id: str) -> int:
    """The webhook's ``failCount`` as ``GET /v1/webhooks`` lists it."""
    listed = client.get("/v1/webhooks")
    assert listed.status_code == 200, listed.text
    return int(next(w for w in listed.json()["webhooks"] if w["id"] == webhook_id)["failCount"])


def test_a_receiver_that_was_down_finds_what_it_missed(stack: Stack, new_receiver: Callable[..., Receiver]) -> None:
    owner_id, owner = stack.new_user("Rita Reconcile", country="de")
    receiver = new_receiver("fail")  # down: every delivery fails with a 500
    created = owner.post("/v1/webhooks", json={"url": receiver.url, "events": ["profile_request.received"]})
    assert created.status_code == 201, created.text
    webhook = created.json()
    receiver.secret = webhook["secret"]
    since = (datetime.now(UTC) - timedelta(seconds=5)).isoformat()  # the last event processed before the outage
    request_ids = []
    for name in ("Una", "Vic", "Wes"):
        _, sender = stack.new_user(f"{name} Sender")
        sent = sender.post("/v1/profile-requests", json={"userId": owner_id, "message": "Hello", "channel": "telegram"})
        assert sent.status_code == 201, sent.text
        request_ids.append(sent.json()["requestId"])
    # Each event's first attempt fails; the next is 30 s away (the default backoff), after this test.
    wait_until(lambda: failed_attempts(owner, webhook["id"]) == 3, timeout_seconds=30, interval=0.2)

    # Back up: list what happened since, newest first, and read each event's delivery attempts.
    listed = owner.get("/v1/events", params={"createdAfter": since, "type": "profile_request.received"})
    assert listed.status_code == 200, listed.text
    events = listed.json()["events"]
    assert [e["data"]["requestId"] for e in events] == request_ids[::-1]
    sent_while_down = {r.headers["webhook-id"]: json.loads(r.body) for r in receiver.requests}
    for event in events:
        message_id = f"{event['id']}_{webhook['id']}"  # webhook-id = <eventId>_<webhookId>
        assert sent_while_down[message_id] == {k: event[k] for k in ("event", "timestamp", "test", "data")}
        assert owner.get(f"/v1/events/{event['id']}").json() == event
        page = owner.get(f"/v1/events/{event['id']}/deliveries")
        assert page.status_code == 200, page.text
        attempts: list[dict[str, Any]] = page.json()["deliveries"]
        assert [(a["webhookId"], a["attempt"], a["success"], a["statusCode"], a["messageId"]) for a in attempts] == [
            (webhook["id"], 1, False, 500, message_id)
        ]
        assert attempts[0]["durationMs"] >= 0
        assert attempts[0]["nextAttemptAt"] is not None  # the retry is still scheduled
    # Another user finds none of them.
    _, stranger = stack.new_user("Sid Stranger")
    assert stranger.get(f"/v1/events/{events[0]['id']}").status_code == 404
