"""Delivery against real tiny HTTP receivers on 127.0.0.1: signatures, failures, the total deadline
(1 s here; the e2e tests use the real 10 s), slow drips, concurrency, pinning, TLS and replays."""

from __future__ import annotations

import ipaddress
import json
import ssl
from datetime import datetime
from typing import Any

import pytest
import trustme
from standardwebhooks import Webhook as StandardWebhook

from chalicelib.kernel import clock
from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.webhooks import addresses, signing
from chalicelib.webhooks.delivery import handlers, lanes, sender
from tests.integration.conftest import Api, User
from tests.integration.webhook_helpers import (
    create_webhook,
    deliveries,
    emit,
    envelope,
    lane_messages,
    message_event,
    retry_messages,
    run_lanes,
    stream_event,
    use_settings,
    webhook_state,
)
from tests.integration.webhook_receivers import Receiver
from tests.waiting import wait_until

#: A 1 s total deadline and retries without delay (tests/integration/conftest.py).
pytestmark = pytest.mark.usefixtures("fast_delivery")


def test_healthy_receiver_gets_a_signed_envelope_verifiable_both_ways(
    api: Api, alice: User, bob: User, runner: Any, receivers: Any
) -> None:
    receiver: Receiver = receivers("ok")
    webhook = create_webhook(api, alice, receiver.url)
    item = message_event(alice, bob, content="Grüße")
    runner.drain()
    [request] = receiver.wait_for(1)
    assert request.path == "/hook"
    headers = {k.lower(): v for k, v in request.headers.items()}
    assert headers["content-type"] == "application/json"
    assert headers["x-webhook-event"] == "message.new"
    assert headers["user-agent"] == "MatchingService-Webhooks/1.0"
    assert headers["x-webhook-signature"] == signing.hex_signature(webhook["secret"], request.body)
    assert headers["webhook-id"] == f"{item['eventId']}_{webhook['id']}"
    verified = StandardWebhook(webhook["secret"]).verify(request.body, request.headers)
    assert verified == envelope(request.body)
    assert envelope(request.body) == {"event": "message.new", "timestamp": item["createdAt"], "test": False, "data": item["data"]}
    log = deliveries(api, alice, webhook["id"])
    assert log["total"] == 1
    [attempt] = log["deliveries"]
    assert attempt["success"] is True
    assert attempt["statusCode"] == 200
    assert attempt["attempt"] == 1
    assert attempt["eventId"] == item["eventId"]
    assert attempt["event"] == "message.new"
    assert attempt["messageId"] == headers["webhook-id"]
    assert attempt["responseBody"] == '{"ok":true}'
    assert attempt["error"] is None
    assert attempt["durationMs"] >= 0
    # signed at the time the attempt was made and logged (the Standard Webhooks timestamp, seconds)
    attempted_at = datetime.fromisoformat(attempt["attemptedAt"].replace("Z", "+00:00"))
    assert int(headers["webhook-timestamp"]) == clock.epoch_seconds(attempted_at)
    assert webhook_state(api, alice, webhook["id"])["failCount"] == 0


def test_the_polling_runner_delivers_without_a_drain(api: Api, alice: User, bob: User, runner: Any, receivers: Any) -> None:
    """The runner's own polling (not ``drain()``) delivers; how soon is bench/webhooks.py's figure."""
    receiver: Receiver = receivers("ok")
    create_webhook(api, alice, receiver.url)
    runner.start()
    try:
        message_event(alice, bob)
        assert len(receiver.wait_for(1, timeout=60)) == 1
    finally:
        runner.stop()


def test_failing_receiver_is_retried_counted_and_disabled_at_five(
    api: Api, alice: User, bob: User, runner: Any, receivers: Any
) -> None:
    receiver: Receiver = receivers("ok", status=500, response_body=b"boom")
    webhook = create_webhook(api, alice, receiver.url)
    message_event(alice, bob)
    runner.drain()
    assert len(receiver.wait_for(4)) == 4  # the first send and 3 retries
    assert webhook_state(api, alice, webhook["id"])["failCount"] == 4
    assert webhook_state(api, alice, webhook["id"])["active"] is True
    log = deliveries(api, alice, webhook["id"])
    assert [d["attempt"] for d in log["deliveries"]] == [4, 3, 2, 1]
    assert {d["statusCode"] for d in log["deliveries"]} == {500}
    assert all(d["success"] is False and d["responseBody"] == "boom" for d in log["deliveries"])
    assert len({d["messageId"] for d in log["deliveries"]}) == 1  # webhook-id is stable across retries
    assert len({r.body for r in receiver.requests}) == 1  # and so is the body

    message_event(alice, bob)
    runner.drain()
    state = webhook_state(api, alice, webhook["id"])
    assert (state["failCount"], state["active"]) == (5, False)
    assert len(receiver.requests) == 5  # the fifth failure disabled it: no retry

    message_event(alice, bob)
    runner.drain()
    assert len(receiver.requests) == 5


def test_a_success_resets_the_fail_count(api: Api, alice: User, bob: User, runner: Any, receivers: Any,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    use_settings(monkeypatch, WEBHOOK_RETRY_DELAYS_SECONDS="")  # no retries: one attempt per event
    receiver: Receiver = receivers("ok", status=503)
    webhook = create_webhook(api, alice, receiver.url)
    for _ in range(3):
        message_event(alice, bob)
    runner.drain()
    assert webhook_state(api, alice, webhook["id"])["failCount"] == 3
    receiver.status = 204
    message_event(alice, bob)
    runner.drain()
    assert webhook_state(api, alice, webhook["id"])["failCount"] == 0


def test_redirects_are_not_followed_and_fail(api: Api, alice: User, bob: User, runner: Any, receivers: Any,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    use_settings(monkeypatch, WEBHOOK_RETRY_DELAYS_SECONDS="")
    receiver: Receiver = receivers("redirect")
    webhook = create_webhook(api, alice, receiver.url)
    message_event(alice, bob)
    runner.drain()
    assert [r.path for r in receiver.wait_for(1)] == ["/hook"]
    [attempt] = deliveries(api, alice, webhook["id"])["deliveries"]
    assert (attempt["statusCode"], attempt["success"]) == (302, False)
    assert webhook_state(api, alice, webhook["id"])["failCount"] == 1


@pytest.mark.parametrize("behaviour", ["hang", "drip", "drip_headers"])
def test_total_deadline_covers_hanging_and_slow_drip_receivers(
    api: Api, alice: User, bob: User, receivers: Any, monkeypatch: pytest.MonkeyPatch, behaviour: str
) -> None:
    use_settings(monkeypatch, WEBHOOK_RETRY_DELAYS_SECONDS="")
    receiver: Receiver = receivers(behaviour, drip_interval=0.05)
    webhook = create_webhook(api, alice, receiver.url)
    item = message_event(alice, bob)
    assert handlers.handle_outbox_batch(stream_event(item)) == {"batchItemFailures": []}
    [record] = lane_messages()
    result = handlers.handle_lane_batch({"Records": [record]})
    assert result == {"batchItemFailures": []}
    # One 1 s deadline in total, however the bytes trickle in: the drips would run for hours (a byte
    # or a header byte every 0.05 s, each read far inside any per-read timeout), so the attempt ending
    # as a timeout, with the receiver's answer incomplete, is the deadline at work.
    [attempt] = deliveries(api, alice, webhook["id"])["deliveries"]
    assert (attempt["error"], attempt["statusCode"], attempt["success"]) == ("timeout", None, False)
    assert webhook_state(api, alice, webhook["id"])["failCount"] == 1


def test_a_hanging_receiver_does_not_delay_the_others(api: Api, alice: User, bob: User, runner: Any, receivers: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Ordering, not speed: with the runner's concurrent lane consumers, every healthy delivery
    is made while the hanging receiver's first attempt is still open, and the hanging receiver
    gets one request at a time, 5 in all (then it is switched off and its lane drains).

    Proved by causality, not by a wall-clock bound (a 2 s bound failed at load 15-40): the
    hanging receiver holds its first request open until the test releases it, and the test
    releases it only after all 18 healthy deliveries arrived and while no attempt of the hanging
    webhook is logged yet (an attempt is logged when it ends), with a 60 s deadline nothing
    here reaches. A lane that waited for that attempt could deliver nothing before the release.
    The later attempts run under a 2 s deadline, one at a time (the receiver counts the
    connections the sender still holds when each request arrives).
    """
    use_settings(monkeypatch, WEBHOOK_TIMEOUT_SECONDS="60", WEBHOOK_RETRY_DELAYS_SECONDS="0,0,0")
    hanging: Receiver = receivers("hold")
    healthy: list[Receiver] = [receivers("ok") for _ in range(3)]
    hanging_hook = create_webhook(api, bob, hanging.url)
    for receiver in healthy:
        create_webhook(api, alice, receiver.url)
    for i in range(6):
        message_event(bob, alice, content=f"h{i}")
        message_event(alice, bob, content=f"m{i}")
    runner.start()
    try:
        for receiver in healthy:
            assert len(receiver.wait_for(6, timeout=30)) == 6
        # Every healthy delivery was made while the hanging webhook's first attempt was open:
        assert len(hanging.wait_for(1)) == 1  # its first request arrived and is held (not released yet)
        assert deliveries(api, bob, hanging_hook["id"])["total"] == 0  # ... and that attempt has not ended
        use_settings(monkeypatch, WEBHOOK_TIMEOUT_SECONDS="2")  # the next attempts hang into a 2 s deadline
        hanging.release()
        assert len(hanging.wait_for(5, timeout=60)) == 5
        wait_until(lambda: not webhook_state(api, bob, hanging_hook["id"])["active"], timeout_seconds=60)
    finally:
        runner.stop()
    assert hanging.max_in_flight == 1  # one at a time: each attempt began after the one before had ended
    state = webhook_state(api, bob, hanging_hook["id"])
    assert (state["failCount"], state["active"]) == (5, False)
    assert len(hanging.requests) == 5
    assert [envelope(r.body)["data"]["content"] for r in healthy[0].requests] == [f"m{i}" for i in range(6)]  # event order


def test_a_failing_lane_keeps_event_order_and_the_policy_exact(api: Api, alice: User, bob: User, receivers: Any) -> None:
    receiver: Receiver = receivers("ok", status=500)
    webhook = create_webhook(api, alice, receiver.url)
    items = [message_event(alice, bob, content=f"m{i}") for i in range(12)]
    assert handlers.handle_outbox_batch(stream_event(*items)) == {"batchItemFailures": []}
    assert run_lanes() == 12
    # m0..m4 failed in order; the fifth failure switched the webhook off; m5..m11 drained unsent
    assert [envelope(r.body)["data"]["content"] for r in receiver.requests] == [f"m{i}" for i in range(5)]
    state = webhook_state(api, alice, webhook["id"])
    assert (state["failCount"], state["active"]) == (5, False)
    queued = [json.loads(r["body"]) for r in retry_messages()]
    assert sorted((m["eventId"], m["attempt"]) for m in queued) == sorted((i["eventId"], 2) for i in items[:4])
    assert handlers.handle_retry_batch({"Records": [
        {"messageId": f"r{n}", "receiptHandle": "r", "body": json.dumps(m), "attributes": {}, "messageAttributes": {},
         "md5OfBody": "", "eventSource": "aws:sqs", "eventSourceARN": "arn", "awsRegion": "us-east-1"}
        for n, m in enumerate(queued)]}) == {"batchItemFailures": []}
    assert run_lanes() == 4  # the retries re-entered the lane, and drained: the webhook is off
    assert len(receiver.requests) == 5
    assert deliveries(api, alice, webhook["id"])["total"] == 5


def test_the_stream_consumer_only_queues_one_message_per_event_and_webhook(
    api: Api, alice: User, bob: User, receivers: Any
) -> None:
    first: Receiver = receivers("ok")
    second: Receiver = receivers("ok")
    hooks = [create_webhook(api, alice, first.url), create_webhook(api, alice, second.url)]
    items = [message_event(alice, bob, content=f"m{i}") for i in range(3)]
    assert handlers.handle_outbox_batch(stream_event(*items)) == {"batchItemFailures": []}
    assert first.requests == []  # nothing is sent by the stream consumer
    assert second.requests == []
    records = lane_messages()
    seen = {(json.loads(r["body"])["webhookId"], json.loads(r["body"])["eventId"]) for r in records}
    assert seen == {(h["id"], i["eventId"]) for h in hooks for i in items}
    for record in records:
        delivery = lanes.from_message(record["body"])
        assert delivery.owner_id == alice.user_id
        assert record["attributes"]["MessageGroupId"] == lanes.group_id(delivery)  # one of alice's owner lanes
        assert record["attributes"]["MessageGroupId"].startswith(f"{alice.user_id}.")
        assert record["attributes"]["MessageDeduplicationId"] == f"{delivery.event.event_id}_{delivery.webhook_id}"


def test_a_refused_enqueue_reports_the_first_record_of_the_failed_delivery(
    api: Api, alice: User, bob: User, receivers: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    receiver: Receiver = receivers("ok")
    create_webhook(api, alice, receiver.url)
    items = [message_event(alice, bob, content=f"m{i}") for i in range(3)]

    def refuse_from_second(deliveries: Any) -> None:
        raise lanes.EnqueueFailed([1, 2])

    monkeypatch.setattr(lanes, "enqueue", refuse_from_second)
    assert handlers.handle_outbox_batch(stream_event(*items, first_sequence=100)) == {
        "batchItemFailures": [{"itemIdentifier": "101"}]
    }


def test_replayed_stream_batch_sends_nothing_twice(api: Api, alice: User, bob: User, receivers: Any) -> None:
    receiver: Receiver = receivers("ok")
    webhook = create_webhook(api, alice, receiver.url)
    items = [message_event(alice, bob, content=f"m{i}") for i in range(3)]
    batch = stream_event(*items)
    assert handlers.handle_outbox_batch(batch) == {"batchItemFailures": []}
    assert run_lanes() == 3
    assert handlers.handle_outbox_batch(batch) == {"batchItemFailures": []}  # a Lambda retry of the same batch
    # SQS's FIFO de-duplication (webhook-id, 5 minutes) drops the replay's lane messages; moto forgets
    # the id of a deleted message and hands them out again: the delivery claims absorb them then.
    run_lanes()
    assert len(receiver.requests) == 3
    assert deliveries(api, alice, webhook["id"])["total"] == 3


def test_a_lane_message_received_twice_sends_once(api: Api, alice: User, bob: User, receivers: Any) -> None:
    receiver: Receiver = receivers("ok")
    create_webhook(api, alice, receiver.url)
    handlers.handle_outbox_batch(stream_event(message_event(alice, bob)))
    records = lane_messages()
    assert handlers.handle_lane_batch({"Records": records}) == {"batchItemFailures": []}
    assert handlers.handle_lane_batch({"Records": records}) == {"batchItemFailures": []}  # at-least-once
    assert len(receiver.requests) == 1


def test_redelivered_retry_message_sends_nothing_twice(api: Api, alice: User, bob: User, receivers: Any) -> None:
    receiver: Receiver = receivers("ok", status=500)
    create_webhook(api, alice, receiver.url)
    handlers.handle_outbox_batch(stream_event(message_event(alice, bob)))
    run_lanes()
    records = retry_messages()
    assert len(records) == 1
    handlers.handle_retry_batch({"Records": records})
    handlers.handle_retry_batch({"Records": records})  # SQS at-least-once: the same message again
    run_lanes()
    assert len(receiver.requests) == 2  # the first send and one retry


def test_retries_stop_when_the_webhook_is_deleted(api: Api, alice: User, bob: User, receivers: Any) -> None:
    receiver: Receiver = receivers("ok", status=500)
    webhook = create_webhook(api, alice, receiver.url)
    handlers.handle_outbox_batch(stream_event(message_event(alice, bob)))
    run_lanes()
    records = retry_messages()
    assert api.call("DELETE", f"/v1/webhooks/{webhook['id']}", alice.key).status_code == 200
    assert handlers.handle_retry_batch({"Records": records}) == {"batchItemFailures": []}
    assert run_lanes() == 1  # drained
    assert len(receiver.requests) == 1


def test_retry_waits_for_the_configured_delay(api: Api, alice: User, bob: User, receivers: Any,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    use_settings(monkeypatch, WEBHOOK_RETRY_DELAYS_SECONDS="30,120,600")
    receiver: Receiver = receivers("ok", status=500)
    create_webhook(api, alice, receiver.url)
    handlers.handle_outbox_batch(stream_event(message_event(alice, bob)))
    run_lanes()
    assert retry_messages() == []  # queued with DelaySeconds=30: not visible yet
    attributes = storage.client("sqs").get_queue_attributes(
        QueueUrl=settings().DELIVERY_RETRY_QUEUE_URL, AttributeNames=["ApproximateNumberOfMessagesDelayed"]
    )["Attributes"]
    assert attributes["ApproximateNumberOfMessagesDelayed"] == "1"  # but queued


def test_a_lane_fault_holds_the_rest_of_its_lane_only(aws: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    from chalicelib.webhooks.delivery import attempt

    calls: list[str] = []

    def flaky(delivery: Any, **options: Any) -> attempt.Result:
        calls.append(delivery.webhook_id)
        if delivery.webhook_id == "whk_a" and len([c for c in calls if c == "whk_a"]) == 1:
            raise RuntimeError("DynamoDB unreachable")
        return attempt.Result.SENT

    monkeypatch.setattr(attempt, "attempt", flaky)
    event = {"eventId": "evt_1", "type": "message.new", "createdAt": "2026-11-22T00:00:00.000Z", "data": {}}

    def record(n: int, lane: str) -> dict[str, Any]:
        body = json.dumps({**event, "eventId": f"evt_{n}", "webhookId": lane, "attempt": 1})
        return {"messageId": f"m{n}", "body": body, "attributes": {"MessageGroupId": lane}}

    batch = {"Records": [record(1, "whk_a"), record(2, "whk_b"), record(3, "whk_a"), record(4, "whk_b")]}
    assert handlers.handle_lane_batch(batch) == {"batchItemFailures": [{"itemIdentifier": "m1"}, {"itemIdentifier": "m3"}]}
    assert calls == ["whk_a", "whk_b", "whk_b"]


def test_match_request_events_reach_only_the_listing_webhooks(api: Api, alice: User, bob: User, runner: Any,
                                                              receivers: Any) -> None:
    bound: Receiver = receivers("ok")
    unbound: Receiver = receivers("ok")
    bound_hook = create_webhook(api, alice, bound.url)
    create_webhook(api, alice, unbound.url)
    data = {"requestId": "req_1", "status": "PENDING", "listingId": "lst_1", "listingTitle": "Backend engineer",
            "requesterId": bob.user_id, "profile": {"displayName": "Bob", "verifiedLevel": 1, "country": "fr", "socialLinks": {}},
            "channels": ["telegram"], "message": "Hi", "createdAt": "2026-11-22T00:00:00.000Z"}
    emit("match_request.received", data, {"recipientId": alice.user_id, "listingId": "lst_1", "webhookIds": [bound_hook["id"]]})
    runner.drain()  # synchronous: returns when nothing is left to handle, every attempt made
    assert runner.drain() == 0
    [request] = bound.wait_for(1)
    assert envelope(request.body)["data"] == data
    assert envelope(request.body)["test"] is False
    assert unbound.requests == []  # a receiver records a request before it answers


def test_connection_is_pinned_to_the_checked_address_with_the_host_name_kept(
    api: Api, alice: User, bob: User, runner: Any, receivers: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    receiver: Receiver = receivers("ok")
    lookups: list[str] = []

    def resolve(host: str, port: int) -> list[Any]:
        lookups.append(host)
        return [ipaddress.ip_address("127.0.0.1")]

    monkeypatch.setattr(addresses, "getaddrinfo", resolve)
    create_webhook(api, alice, f"http://hooks.example.test:{receiver.port}/hook")
    message_event(alice, bob)
    runner.drain()
    [request] = receiver.wait_for(1)
    assert request.headers["Host"] == f"hooks.example.test:{receiver.port}"
    assert lookups == ["hooks.example.test", "hooks.example.test"]  # at registration and again at delivery


def test_a_host_that_now_resolves_to_a_private_address_is_blocked_at_delivery(
    api: Api, alice: User, bob: User, runner: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_settings(monkeypatch, WEBHOOK_RETRY_DELAYS_SECONDS="")
    answers = iter([["127.0.0.1"], ["10.0.0.8"]])  # DNS rebinding between registration and delivery
    monkeypatch.setattr(addresses, "getaddrinfo", lambda host, port: [ipaddress.ip_address(a) for a in next(answers)])
    webhook = create_webhook(api, alice, "http://rebind.example.test:9/hook")
    message_event(alice, bob)
    runner.drain()
    [attempt] = deliveries(api, alice, webhook["id"])["deliveries"]
    assert attempt["error"] == "blocked_address"
    assert "10.0.0.8" in attempt["errorDetail"]
    assert webhook_state(api, alice, webhook["id"])["failCount"] == 1


# -- TLS: connect to the pinned IP, verify the certificate against the host name -------------------------

@pytest.fixture
def tls_receiver(receivers: Any, monkeypatch: pytest.MonkeyPatch) -> tuple[Receiver, ssl.SSLContext]:
    authority = trustme.CA()
    server = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("hooks.example.test").configure_cert(server)
    client = ssl.create_default_context()
    authority.configure_trust(client)
    monkeypatch.setattr(addresses, "getaddrinfo", lambda host, port: [ipaddress.ip_address("127.0.0.1")])
    return receivers("ok", tls=server), client


def test_tls_uses_the_host_name_for_sni_and_verification(tls_receiver: tuple[Receiver, ssl.SSLContext]) -> None:
    receiver, client = tls_receiver
    outcome = sender.post(f"https://hooks.example.test:{receiver.port}/hook", b"{}", {"Content-Type": "application/json"},
                          timeout=2, allow_insecure=True, ssl_context=client)
    assert outcome.ok, outcome
    assert receiver.requests[0].headers["Host"] == f"hooks.example.test:{receiver.port}"


def test_tls_certificate_for_another_name_fails(tls_receiver: tuple[Receiver, ssl.SSLContext]) -> None:
    receiver, client = tls_receiver
    outcome = sender.post(f"https://other.example.test:{receiver.port}/hook", b"{}", {}, timeout=2, allow_insecure=True,
                          ssl_context=client)
    assert (outcome.ok, outcome.error) == (False, "tls_error")
    assert receiver.requests == []


def test_connection_refused_is_a_connection_error() -> None:
    outcome = sender.post("http://127.0.0.1:9/hook", b"{}", {}, timeout=1, allow_insecure=True)
    assert (outcome.ok, outcome.error, outcome.status_code) == (False, "connection_error", None)


def test_an_unresolvable_host_is_a_dns_error() -> None:
    outcome = sender.post("https://no-such-host.invalid/hook", b"{}", {}, timeout=2, allow_insecure=False)
    assert (outcome.ok, outcome.error) == (False, "dns_error")


def test_large_response_bodies_are_cut_at_4_kib(receivers: Any) -> None:
    receiver: Receiver = receivers("ok", response_body=b"x" * 100_000)
    outcome = sender.post(receiver.url, b"{}", {}, timeout=2, allow_insecure=True)
    assert outcome.ok
    assert outcome.response_body == "x" * 4096
