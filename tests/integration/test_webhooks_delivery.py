"""Delivery against real tiny HTTP receivers on 127.0.0.1: signatures, failures, the total deadline
(1 s here; the e2e tests use the real 10 s), slow drips, concurrency, pinning, TLS and replays."""

from __future__ import annotations

import ipaddress
import json
import ssl
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import trustme
from standardwebhooks import Webhook as StandardWebhook

from chalicelib import storage
from chalicelib.config import settings
from chalicelib.webhooks import addresses, handlers, sender, signing
from tests.integration.conftest import Api, User
from tests.integration.webhook_helpers import (
    create_webhook,
    deliveries,
    emit,
    envelope,
    fast_delivery_settings,
    message_event,
    receiver_factory,
    retry_messages,
    stream_event,
    use_settings,
    webhook_state,
)
from tests.integration.webhook_receivers import Receiver


@pytest.fixture
def receivers() -> Iterator[Any]:
    """``receivers(behaviour, **options)`` starts a receiver on 127.0.0.1; all are closed after the test."""
    yield from receiver_factory()


@pytest.fixture(autouse=True)
def fast(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 1 s total deadline and retries without delay."""
    fast_delivery_settings(monkeypatch)


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
    assert abs(int(headers["webhook-timestamp"]) - time.time()) < 10
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
    assert webhook_state(api, alice, webhook["id"])["failCount"] == 0


def test_the_polling_runner_delivers_within_a_second(api: Api, alice: User, bob: User, runner: Any, receivers: Any) -> None:
    receiver: Receiver = receivers("ok")
    create_webhook(api, alice, receiver.url)
    runner.start()
    try:
        written = time.monotonic()
        message_event(alice, bob)
        [request] = receiver.wait_for(1, timeout=5)
        # "About a second" (typically ~0.2 s with 0.1 s polling); the bound only catches a runner
        # that is not polling, with slack for a loaded CI machine. Latency itself is not unit-tested.
        assert request.at - written < 3.0
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
    started = time.monotonic()
    result = handlers.handle_outbox_batch(stream_event(item))
    elapsed = time.monotonic() - started
    assert result == {"batchItemFailures": []}
    # One 1 s deadline in total, however the bytes trickle in (the drip would take 10+ s); the upper
    # bound stays under two deadlines plus slack for moto round trips on a loaded machine.
    assert 0.9 <= elapsed < 3.5, elapsed
    [attempt] = deliveries(api, alice, webhook["id"])["deliveries"]
    assert (attempt["error"], attempt["statusCode"], attempt["success"]) == ("timeout", None, False)
    assert 900 <= attempt["durationMs"] < 3500
    assert webhook_state(api, alice, webhook["id"])["failCount"] == 1


def test_a_hanging_receiver_does_not_delay_the_others(api: Api, alice: User, bob: User, receivers: Any,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    # Ordering, not speed: the healthy receivers finish before the hanging one's deadline, and
    # the batch takes one deadline, not two. 5 s leaves a loaded CI machine plenty of slack.
    use_settings(monkeypatch, WEBHOOK_TIMEOUT_SECONDS="5")
    hanging: Receiver = receivers("hang")
    healthy: list[Receiver] = [receivers("ok") for _ in range(3)]
    hanging_hook = create_webhook(api, alice, hanging.url)
    for receiver in healthy:
        create_webhook(api, alice, receiver.url)
    items = [message_event(alice, bob, content=f"m{i}") for i in range(10)]
    started = time.monotonic()
    worker = threading.Thread(target=handlers.handle_outbox_batch, args=(stream_event(*items),))
    worker.start()
    for receiver in healthy:
        assert len(receiver.wait_for(10, timeout=5)) == 10
    healthy_done = max(r.at for receiver in healthy for r in receiver.requests) - started
    worker.join(20)
    total = time.monotonic() - started
    assert healthy_done < 5.0, healthy_done  # before the hanging receiver's 5 s deadline
    assert 5.0 <= total < 10.0, total  # one deadline for the hanging receiver in the whole batch, not two
    assert len(hanging.requests) == 8  # one wave of its 8 lanes, then postponed/switched off: not 10 attempts
    state = webhook_state(api, alice, hanging_hook["id"])
    assert state["active"] is False
    assert state["failCount"] >= 5  # failures racing the switch-off are counted too


def test_after_a_failure_the_rest_of_the_batch_is_postponed_not_tried(
    api: Api, alice: User, bob: User, receivers: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_settings(monkeypatch, WEBHOOK_PER_RECEIVER_CONCURRENCY="1")
    receiver: Receiver = receivers("ok", status=500)
    webhook = create_webhook(api, alice, receiver.url)
    items = [message_event(alice, bob, content=f"m{i}") for i in range(4)]
    assert handlers.handle_outbox_batch(stream_event(*items)) == {"batchItemFailures": []}
    assert len(receiver.requests) == 1
    assert webhook_state(api, alice, webhook["id"])["failCount"] == 1
    queued = [json.loads(r["body"]) for r in retry_messages()]
    assert sorted((m["eventId"], m["attempt"]) for m in queued) == sorted(
        [(items[0]["eventId"], 2)] + [(i["eventId"], 1) for i in items[1:]]
    )
    receiver.status = 200
    handlers.handle_retry_batch({"Records": [dict(r, body=json.dumps(m)) for r, m in zip(
        [{"messageId": f"m{n}", "receiptHandle": "r", "attributes": {}, "messageAttributes": {}, "md5OfBody": "",
          "eventSource": "aws:sqs", "eventSourceARN": "arn", "awsRegion": "us-east-1"} for n in range(len(queued))],
        queued, strict=True)]})
    assert len(receiver.requests) == 5
    assert {envelope(r.body)["data"]["content"] for r in receiver.requests} == {"m0", "m1", "m2", "m3"}
    assert webhook_state(api, alice, webhook["id"])["failCount"] == 0


def test_replayed_stream_batch_sends_nothing_twice(api: Api, alice: User, bob: User, receivers: Any) -> None:
    receiver: Receiver = receivers("ok")
    webhook = create_webhook(api, alice, receiver.url)
    items = [message_event(alice, bob, content=f"m{i}") for i in range(3)]
    batch = stream_event(*items)
    assert handlers.handle_outbox_batch(batch) == {"batchItemFailures": []}
    assert handlers.handle_outbox_batch(batch) == {"batchItemFailures": []}  # a Lambda retry of the same batch
    time.sleep(0.2)
    assert len(receiver.requests) == 3
    assert deliveries(api, alice, webhook["id"])["total"] == 3


def test_redelivered_retry_message_sends_nothing_twice(api: Api, alice: User, bob: User, receivers: Any) -> None:
    receiver: Receiver = receivers("ok", status=500)
    create_webhook(api, alice, receiver.url)
    handlers.handle_outbox_batch(stream_event(message_event(alice, bob)))
    records = retry_messages()
    assert len(records) == 1
    handlers.handle_retry_batch({"Records": records})
    handlers.handle_retry_batch({"Records": records})  # SQS at-least-once: the same message again
    assert len(receiver.requests) == 2  # the first send and one retry


def test_retries_stop_when_the_webhook_is_deleted(api: Api, alice: User, bob: User, receivers: Any) -> None:
    receiver: Receiver = receivers("ok", status=500)
    webhook = create_webhook(api, alice, receiver.url)
    handlers.handle_outbox_batch(stream_event(message_event(alice, bob)))
    records = retry_messages()
    assert api.call("DELETE", f"/v1/webhooks/{webhook['id']}", alice.key).status_code == 200
    assert handlers.handle_retry_batch({"Records": records}) == {"batchItemFailures": []}
    assert len(receiver.requests) == 1


def test_retry_waits_for_the_configured_delay(api: Api, alice: User, bob: User, receivers: Any,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    use_settings(monkeypatch, WEBHOOK_RETRY_DELAYS_SECONDS="30,120,600")
    receiver: Receiver = receivers("ok", status=500)
    create_webhook(api, alice, receiver.url)
    handlers.handle_outbox_batch(stream_event(message_event(alice, bob)))
    assert retry_messages() == []  # queued with DelaySeconds=30: not visible yet
    attributes = storage.client("sqs").get_queue_attributes(
        QueueUrl=settings().DELIVERY_RETRY_QUEUE_URL, AttributeNames=["ApproximateNumberOfMessagesDelayed"]
    )["Attributes"]
    assert attributes["ApproximateNumberOfMessagesDelayed"] == "1"  # but queued


def test_deliveries_are_deferred_when_the_invocation_is_running_out_of_time(
    api: Api, alice: User, bob: User, receivers: Any
) -> None:
    class Context:
        def __init__(self, millis: int) -> None:
            self.millis = millis

        def get_remaining_time_in_millis(self) -> int:
            return self.millis

    receiver: Receiver = receivers("ok")
    create_webhook(api, alice, receiver.url)
    batch = stream_event(message_event(alice, bob))
    assert handlers.handle_outbox_batch(batch, Context(3_000)) == {"batchItemFailures": [{"itemIdentifier": "100"}]}
    assert receiver.requests == []
    assert handlers.handle_outbox_batch(batch, Context(60_000)) == {"batchItemFailures": []}
    assert len(receiver.wait_for(1)) == 1


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
    runner.drain()
    [request] = bound.wait_for(1)
    assert envelope(request.body)["data"] == data
    assert envelope(request.body)["test"] is False
    time.sleep(0.1)
    assert unbound.requests == []


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
