"""Events addressed to one webhook (``targetWebhookId``, ``test``) and redelivery into the lane."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.auth.service import Caller
from chalicelib.kernel import errors
from chalicelib.webhooks import service
from chalicelib.webhooks.delivery import handlers, lanes
from tests.integration.conftest import Api, User
from tests.integration.webhook_helpers import (
    create_webhook,
    deliveries,
    emit,
    envelope,
    message_event,
    retry_messages,
    run_lanes,
    stream_event,
    webhook_state,
)
from tests.integration.webhook_receivers import Receiver

#: A 1 s total deadline and retries without delay (tests/integration/conftest.py).
pytestmark = pytest.mark.usefixtures("fast_delivery")


def _delivered(api: Api, alice: User, bob: User, receiver: Receiver) -> tuple[dict[str, Any], dict[str, Any]]:
    """Alice's new webhook to ``receiver`` and a message from Bob delivered to it once (its lanes run)."""
    hook = create_webhook(api, alice, receiver.url)
    item = message_event(alice, bob)
    handlers.handle_outbox_batch(stream_event(item))
    run_lanes()
    return hook, item


def addressed_event(owner: User, webhook_id: str, event_type: str = "message.new") -> dict[str, Any]:
    """An outbox event addressed to one webhook, as the Dashboard's "Send test event" writes it."""
    item = emit(event_type, {"example": True}, {"recipientId": owner.user_id})
    item.update(targetWebhookId=webhook_id, test=True)
    return item


def test_an_addressed_test_event_goes_to_that_webhook_only_marked_test(
    api: Api, alice: User, receivers: Any
) -> None:
    target: Receiver = receivers("ok")
    sibling: Receiver = receivers("ok")
    # subscribed to other events only: a test event is sent because the owner asked for it
    hook = create_webhook(api, alice, target.url, events=["match_request.received"])
    create_webhook(api, alice, sibling.url)
    assert handlers.handle_outbox_batch(stream_event(addressed_event(alice, hook["id"]))) == {"batchItemFailures": []}
    assert run_lanes() == 1
    [request] = target.requests
    assert envelope(request.body)["test"] is True
    assert envelope(request.body)["data"] == {"example": True}
    assert sibling.requests == []
    [logged] = deliveries(api, alice, hook["id"])["deliveries"]
    assert logged["success"] is True


def test_an_addressed_event_goes_nowhere_for_an_inactive_deleted_or_foreign_webhook(
    api: Api, alice: User, bob: User, receivers: Any
) -> None:
    receiver: Receiver = receivers("ok")
    hook = create_webhook(api, alice, receiver.url)
    assert handlers.handle_outbox_batch(stream_event(addressed_event(bob, hook["id"]))) == {"batchItemFailures": []}
    assert api.call("DELETE", f"/v1/webhooks/{hook['id']}", alice.key).status_code == 200
    assert handlers.handle_outbox_batch(stream_event(addressed_event(alice, hook["id"]), first_sequence=200)) == {
        "batchItemFailures": []
    }
    assert run_lanes() == 0
    assert receiver.requests == []


def test_an_addressed_non_test_event_respects_subscriptions(api: Api, alice: User, bob: User, receivers: Any) -> None:
    receiver: Receiver = receivers("ok")
    hook = create_webhook(api, alice, receiver.url, events=["match_request.received"])
    item = emit("message.new", {"content": "x"}, {"recipientId": alice.user_id, "senderId": bob.user_id})
    item["targetWebhookId"] = hook["id"]
    handlers.handle_outbox_batch(stream_event(item))
    assert run_lanes() == 0


def test_redelivery_is_the_next_attempt_with_the_same_webhook_id_and_body(
    api: Api, alice: User, bob: User, receivers: Any
) -> None:
    receiver: Receiver = receivers("ok")
    hook, item = _delivered(api, alice, bob, receiver)
    queued = service.redeliver(Caller(alice.user_id), hook["id"], item["eventId"])
    assert queued.attempt == 2
    assert run_lanes() == 1
    first, second = receiver.requests
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == f"{item['eventId']}_{hook['id']}"
    assert first.body == second.body
    assert [d["attempt"] for d in deliveries(api, alice, hook["id"])["deliveries"]] == [2, 1]
    assert service.redeliver(Caller(alice.user_id), hook["id"], item["eventId"]).attempt == 3


def test_two_redeliveries_asked_at_once_make_one_attempt(api: Api, alice: User, bob: User, receivers: Any) -> None:
    receiver: Receiver = receivers("ok")
    hook, item = _delivered(api, alice, bob, receiver)
    caller = Caller(alice.user_id)
    assert service.redeliver(caller, hook["id"], item["eventId"]).attempt == 2
    assert service.redeliver(caller, hook["id"], item["eventId"]).attempt == 2  # the same attempt number
    assert run_lanes() == 2  # two messages (each redelivery's own deduplication id); the attempt claim sends one
    assert len(receiver.requests) == 2
    assert [d["attempt"] for d in deliveries(api, alice, hook["id"])["deliveries"]] == [2, 1]


def test_a_redelivery_after_a_dropped_retry_of_the_same_attempt_number_is_sent(
    api: Api, alice: User, bob: User, receivers: Any
) -> None:
    receiver: Receiver = receivers("ok", status=500)
    hook = create_webhook(api, alice, receiver.url)
    item = message_event(alice, bob)
    handlers.handle_outbox_batch(stream_event(item))
    assert run_lanes() == 1  # attempt 1 fails; attempt 2 is scheduled on the retry queue
    caller = Caller(alice.user_id)
    service.set_active(caller, hook["id"], False)
    [retry] = retry_messages()
    assert handlers.handle_retry_batch({"Records": [retry]}) == {"batchItemFailures": []}
    assert run_lanes() == 1  # the retry (attempt 2) reaches the lane and is dropped unsent: the webhook is off
    assert len(receiver.requests) == 1
    dropped = lanes.from_message(retry["body"])
    assert dropped.attempt == 2
    # Within SQS's 5-minute window a message with the dropped retry's deduplication id is swallowed;
    # moto remembers only the ids of messages still queued and hands it out again. Either way nothing
    # is sent while the webhook is off.
    lanes.enqueue([dropped])
    run_lanes()
    assert len(receiver.requests) == 1

    service.set_active(caller, hook["id"], True)
    receiver.status = 200
    queued = service.redeliver(caller, hook["id"], item["eventId"])
    assert queued.attempt == 2
    assert lanes.deduplication_id(queued) != lanes.deduplication_id(dropped)
    assert run_lanes() == 1
    first, second = receiver.requests
    assert first.headers["webhook-id"] == second.headers["webhook-id"] == f"{item['eventId']}_{hook['id']}"
    assert first.body == second.body
    logged = deliveries(api, alice, hook["id"])["deliveries"]
    assert [(d["attempt"], d["success"]) for d in logged] == [(2, True), (1, False)]


def test_a_failed_redelivery_counts_and_a_redelivery_to_an_inactive_webhook_sends_nothing(
    api: Api, alice: User, bob: User, receivers: Any
) -> None:
    receiver: Receiver = receivers("ok")
    hook, item = _delivered(api, alice, bob, receiver)
    receiver.status = 500
    service.redeliver(Caller(alice.user_id), hook["id"], item["eventId"])
    run_lanes()
    assert webhook_state(api, alice, hook["id"])["failCount"] == 1
    from chalicelib.webhooks import repository

    for _ in range(5):
        repository.add_failure(hook["id"])
    assert repository.deactivate(hook["id"], 5, "2026-11-22T00:00:00.000Z")
    service.redeliver(Caller(alice.user_id), hook["id"], item["eventId"])
    assert run_lanes() == 1  # drained
    assert len(receiver.requests) == 2


def test_redelivery_of_an_unknown_delivery_or_someone_elses_webhook_is_not_found(
    api: Api, alice: User, bob: User, receivers: Any
) -> None:
    receiver: Receiver = receivers("ok")
    hook, item = _delivered(api, alice, bob, receiver)
    with pytest.raises(errors.NotFound):
        service.redeliver(Caller(alice.user_id), hook["id"], "evt_unknown")
    with pytest.raises(errors.NotFound):
        service.redeliver(Caller(bob.user_id), hook["id"], item["eventId"])
    assert run_lanes() == 0
