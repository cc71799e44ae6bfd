"""Webhook delivery end to end (spec §2 "Webhook", §3 "Webhook", §5, §6 "Events", §8; DESIGN §2 "Webhooks").

Real receivers on 127.0.0.1 (:mod:`tests.e2e.receivers`) get the deliveries of the real local
stack (the API over HTTP, moto's DynamoDB stream, the event runner). The local stage allows
http and loopback webhook URLs.

Ordering used as a barrier: the stream consumer queues each event into the lanes of its
webhooks in stream order, and each lane delivers in that order, so once a webhook got a *later*
event, every earlier event of that webhook was delivered, and every earlier event was routed.
"Receiver X got nothing of kind K" is therefore asserted only after X (or a sibling webhook
of the same event) received a later event, with a short wait for X's own lane.
Failure counting is shown without retries (each failure comes from its own event, one event
at a time: with the default 30 s retry delay no retry happens while a test runs). Retries
and the replay of a stream batch run on a stack of their own, started with
``WEBHOOK_RETRY_DELAYS_SECONDS=1,1,1,1``.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable, Iterator
from datetime import datetime
from typing import Any

import boto3
import httpx
import pytest

from tests.e2e.conftest import ROOT, Stack, approve_listing, start_stack, stop_stack, wait_until
from tests.e2e.receivers import Receiver, receivers

pytestmark = pytest.mark.e2e

SOCIAL_KEYS = {"x", "linkedin", "github", "instagram", "tiktok", "youtube", "website"}
MATCH_EVENTS = ("match_request.received", "match_request.accepted", "match_request.rejected")
#: Generous bound for a delivery to a healthy receiver (normally well under a second).
DELIVERY_WAIT = 15.0


# -- helpers ---------------------------------------------------------------------------


@pytest.fixture
def new_receiver() -> Iterator[Callable[..., Receiver]]:
    """Make receivers (``new_receiver("fail")``); all are closed after the test."""
    with receivers() as new:
        yield new


def register(client: httpx.Client, receiver: Receiver, events: list[str] | None = None, name: str | None = None) -> dict[str, Any]:
    """``POST /v1/webhooks`` for ``receiver`` and hand it the secret; returns the created webhook."""
    body: dict[str, Any] = {"url": receiver.url}
    if events is not None:
        body["events"] = events
    if name is not None:
        body["name"] = name
    response = client.post("/v1/webhooks", json=body)
    assert response.status_code == 201, response.text
    created = dict(response.json())
    assert created["secret"].startswith("whsec_")
    receiver.secret = created["secret"]
    return created


def webhook_state(client: httpx.Client, webhook_id: str) -> dict[str, Any]:
    """The webhook as ``GET /v1/webhooks`` lists it (with ``failCount`` and ``active``)."""
    response = client.get("/v1/webhooks")
    assert response.status_code == 200, response.text
    return next(dict(w) for w in response.json()["webhooks"] if w["id"] == webhook_id)


def wait_state(client: httpx.Client, webhook_id: str, fail_count: int, active: bool = True) -> dict[str, Any]:
    """Wait until the webhook shows ``failCount`` and ``active``."""
    def reached() -> dict[str, Any] | None:
        state = webhook_state(client, webhook_id)
        return state if (state["failCount"], state["active"]) == (fail_count, active) else None

    result: dict[str, Any] = wait_until(reached, timeout_seconds=DELIVERY_WAIT, interval=0.2)
    return result


def deliveries(client: httpx.Client, webhook_id: str, count: int) -> list[dict[str, Any]]:
    """Wait until the delivery log of ``webhook_id`` has ``count`` attempts; returns them (newest first)."""
    def logged() -> list[dict[str, Any]] | None:
        response = client.get(f"/v1/webhooks/{webhook_id}/deliveries")
        assert response.status_code == 200, response.text
        page = response.json()
        # the page and its total are two reads: an attempt logged between them is in one only
        return list(page["deliveries"]) if min(page["total"], len(page["deliveries"])) >= count else None

    result: list[dict[str, Any]] = wait_until(logged, timeout_seconds=DELIVERY_WAIT, interval=0.2)
    return result


def received(receiver: Receiver, count: int, timeout: float = DELIVERY_WAIT) -> list[Any]:
    """Wait until ``receiver`` got ``count`` requests; returns them."""
    return list(wait_until(lambda: len(r := receiver.requests) >= count and r, timeout_seconds=timeout, interval=0.05))


def delivery_idle(stack: Stack, retries: bool = False) -> None:
    """Wait until the delivery lanes, owners' and slow (and, with ``retries``, the retry queue) hold no message: none
    visible, in flight or delayed, in the stack's embedded SQS.

    Then every attempt the pipeline had queued has been made: the runner deletes a lane message
    only after its attempt, and a receiver records a request before it answers. This is the
    condition "nothing more is coming" waits on, instead of sleeping. (An event's lane messages
    are queued in one batch, so once a receiver got an event, a wrong delivery of the same event
    to another webhook is already queued.)
    """
    sqs = boto3.client("sqs", endpoint_url=stack.moto_url, region_name="us-east-1",
                       aws_access_key_id="local", aws_secret_access_key="local")
    names = ("DeliveryQueue.fifo", "SlowDeliveryQueue.fifo") + (("DeliveryRetryQueue",) if retries else ())
    urls = [url for url in sqs.list_queues().get("QueueUrls", []) if url.rsplit("/", 1)[-1].endswith(names)]
    assert len(urls) == len(names), urls  # "DeliveryQueue.fifo" also ends "SlowDeliveryQueue.fifo": one URL each
    counts = ["ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible", "ApproximateNumberOfMessagesDelayed"]

    def empty() -> bool:
        return all(
            all(int(value) == 0 for value in sqs.get_queue_attributes(QueueUrl=url, AttributeNames=counts)["Attributes"].values())
            for url in urls
        )

    wait_until(empty, timeout_seconds=DELIVERY_WAIT + 15, interval=0.05)


def body_of(request: Any) -> dict[str, Any]:
    return dict(json.loads(request.body))


def active_listing(stack: Stack, owner: httpx.Client, title: str, webhook_ids: list[str]) -> dict[str, Any]:
    created = owner.post("/v1/listings", json={
        "categoryKey": "mentoring", "roleKey": "mentor", "channels": ["telegram"], "webhookIds": webhook_ids,
        "meta": {"title": title, "description": "<p>Weekly sessions</p>", "location": "Lisbon",
                 "topics": "career", "yearsExperience": "10"},
    })
    assert created.status_code == 201, created.text
    assert created.json()["webhookIds"] == webhook_ids
    return approve_listing(stack, created.json()["id"])


def decide(client: httpx.Client, request_id: str, status: str, reason: str | None = None) -> None:
    body = {"status": status, **({"reason": reason} if reason else {})}
    response = client.patch(f"/v1/match-requests/{request_id}/status", json=body)
    assert response.status_code == 200, response.text


def open_conversation(owner_id: str, owner: httpx.Client, other: httpx.Client) -> str:
    """``other`` sends ``owner`` a profile request, ``owner`` accepts: the conversation's id."""
    sent = other.post("/v1/profile-requests", json={"userId": owner_id, "message": "Let's talk", "channel": "telegram"})
    assert sent.status_code == 201, sent.text
    request_id = sent.json()["requestId"]
    decide(owner, request_id, "ACCEPTED")
    conversations = owner.get("/v1/conversations", params={"subjectType": "PROFILE"}).json()["conversations"]
    return str(next(c["conversationId"] for c in conversations if c["requestId"] == request_id))


def say(client: httpx.Client, conversation_id: str, content: str) -> dict[str, Any]:
    response = client.post(f"/v1/conversations/{conversation_id}/messages", json={"content": content})
    assert response.status_code == 201, response.text
    return dict(response.json())


def assert_delivery(request: Any, event: str) -> dict[str, Any]:
    """Headers, both signatures and the envelope of one delivery (spec §6); returns its ``data``."""
    assert request.verified, "X-Webhook-Signature or the Standard Webhooks signature did not verify"
    assert request.headers["content-type"] == "application/json"
    assert request.headers["x-webhook-event"] == event
    assert request.headers["user-agent"].startswith("MatchingService-Webhooks/")
    envelope = body_of(request)
    assert set(envelope) == {"event", "timestamp", "test", "data"}
    assert envelope["event"] == event
    assert envelope["test"] is False
    assert datetime.fromisoformat(envelope["timestamp"].replace("Z", "+00:00")).tzinfo is not None
    return dict(envelope["data"])


def only(receiver: Receiver, event: str) -> dict[str, Any]:
    """The ``data`` of the single delivery of ``event`` to ``receiver`` (checked as a delivery)."""
    matching = [r for r in receiver.requests if r.event == event]
    assert len(matching) == 1, f"{event}: {receiver.events()}"
    return assert_delivery(matching[0], event)


# -- events, recipients, payloads --------------------------------------------------------


def test_match_request_events_reach_only_bound_subscribed_webhooks(stack: Stack, new_receiver: Callable[..., Receiver]) -> None:
    _, owner = stack.new_user("Wanda Webhook", country="pt")
    bound_rx, unbound_rx, messages_rx = new_receiver(), new_receiver(), new_receiver()
    bound = register(owner, bound_rx)  # events omitted: every supported event
    assert set(MATCH_EVENTS) <= set(bound["events"])
    unbound = register(owner, unbound_rx)
    messages_only = register(owner, messages_rx, events=["message.new"])
    listing = active_listing(stack, owner, "Webhook mentoring", [bound["id"], messages_only["id"]])

    requester_id, requester = stack.new_user(
        "Rhea Requester", channels={"telegram": "@rhea", "discord": "rhea#1"}, country="es", verifiedLevel=2
    )
    patched = requester.patch("/v1/me/profile", json={"socialLinks": {"github": "https://github.com/rhea"}})
    assert patched.status_code == 200, patched.text
    sent = requester.post("/v1/match-requests", json={"listingId": listing["id"], "message": "Mentor me?", "channels": ["discord"]})
    assert sent.status_code == 201, sent.text
    request = sent.json()

    received(bound_rx, 1)
    data = only(bound_rx, "match_request.received")
    assert set(data) == {"requestId", "status", "listingId", "listingTitle", "requesterId", "profile", "channels", "message", "createdAt"}
    assert data["requestId"] == request["requestId"]
    assert data["status"] == "PENDING"
    assert (data["listingId"], data["listingTitle"], data["requesterId"]) == (listing["id"], "Webhook mentoring", requester_id)
    assert (data["channels"], data["message"], data["createdAt"]) == (["discord"], "Mentor me?", request["createdAt"])
    profile = data["profile"]
    assert set(profile) == {"displayName", "verifiedLevel", "country", "socialLinks"}
    assert (profile["displayName"], profile["verifiedLevel"], profile["country"]) == ("Rhea Requester", 2, "es")
    assert type(profile["verifiedLevel"]) is int
    assert set(profile["socialLinks"]) == SOCIAL_KEYS
    assert profile["socialLinks"]["github"] == "https://github.com/rhea"

    decide(owner, request["requestId"], "ACCEPTED")
    received(bound_rx, 2)
    data = only(bound_rx, "match_request.accepted")
    assert set(data) == {"requestId", "status", "listingId", "listingTitle", "requesterId", "respondedAt"}
    assert (data["requestId"], data["status"], data["listingId"]) == (request["requestId"], "ACCEPTED", listing["id"])
    assert (data["listingTitle"], data["requesterId"]) == ("Webhook mentoring", requester_id)
    assert data["respondedAt"] >= request["createdAt"]

    second_id, second = stack.new_user("Sam Second")
    other = second.post("/v1/match-requests", json={"listingId": listing["id"], "message": "Me too", "channels": ["telegram"]})
    assert other.status_code == 201, other.text
    decide(owner, other.json()["requestId"], "REJECTED", reason="Fully booked")
    received(bound_rx, 4)
    data = only(bound_rx, "match_request.rejected")
    assert set(data) == {"requestId", "status", "listingId", "listingTitle", "requesterId", "reason", "respondedAt"}
    assert (data["requestId"], data["status"], data["reason"]) == (other.json()["requestId"], "REJECTED", "Fully booked")
    assert (data["listingId"], data["listingTitle"], data["requesterId"]) == (listing["id"], "Webhook mentoring", second_id)
    # (deliveries of one batch run concurrently, so a receiver may see them in any order)
    assert sorted(bound_rx.events()) == sorted(["match_request.received"] * 2 + ["match_request.accepted", "match_request.rejected"])

    # Barrier: a later message.new reaches every webhook of the owner; by then all match
    # events were delivered, and neither the unbound nor the message-only webhook got one.
    conversation = next(c for c in owner.get("/v1/conversations").json()["conversations"] if c["requestId"] == request["requestId"])
    say(requester, conversation["conversationId"], "Thanks for accepting")
    for receiver in (bound_rx, unbound_rx, messages_rx):
        wait_until(lambda r=receiver: "message.new" in r.events(), timeout_seconds=DELIVERY_WAIT)
    assert unbound_rx.events() == ["message.new"]
    assert messages_rx.events() == ["message.new"]
    assert all(r.verified for r in bound_rx.requests + unbound_rx.requests + messages_rx.requests)
    assert webhook_state(owner, bound["id"])["failCount"] == 0
    assert webhook_state(owner, unbound["id"])["failCount"] == 0


def test_message_new_goes_to_the_recipient_never_the_sender(stack: Stack, new_receiver: Callable[..., Receiver]) -> None:
    alice_id, alice = stack.new_user("Alice Author")
    bob_id, bob = stack.new_user("Bob Builder")
    conversation_id = open_conversation(alice_id, alice, bob)
    alice_rx, bob_rx = new_receiver(), new_receiver()
    register(alice, alice_rx)
    register(bob, bob_rx)

    first = say(bob, conversation_id, "Hello Alice")
    received(alice_rx, 1)
    data = only(alice_rx, "message.new")
    assert set(data) == {"conversationId", "messageId", "senderId", "senderName", "content", "isApiSent", "createdAt"}
    assert (data["conversationId"], data["messageId"], data["senderId"]) == (conversation_id, first["messageId"], bob_id)
    assert (data["senderName"], data["content"], data["isApiSent"]) == ("Bob Builder", "Hello Alice", True)
    assert data["createdAt"] == first["createdAt"]

    reply = say(alice, conversation_id, "Hi Bob")
    received(bob_rx, 1)
    data = only(bob_rx, "message.new")
    assert (data["messageId"], data["senderId"], data["senderName"]) == (reply["messageId"], alice_id, "Alice Author")

    say(bob, conversation_id, "How are you?")  # barrier for Alice's side
    received(alice_rx, 2)
    # webhooks registered after the profile request got none of its (earlier) events
    assert (alice_rx.events(), bob_rx.events()) == (["message.new"] * 2, ["message.new"])
    assert [body_of(r)["data"]["senderId"] for r in alice_rx.requests] == [bob_id, bob_id]  # not her own reply
    assert [body_of(r)["data"]["senderId"] for r in bob_rx.requests] == [alice_id]  # not his own first message


def test_profile_request_events_go_to_the_profile_owner(stack: Stack, new_receiver: Callable[..., Receiver]) -> None:
    owner_id, owner = stack.new_user("Polly Profile", country="fr")
    all_rx, messages_rx, requester_rx = new_receiver(), new_receiver(), new_receiver()
    register(owner, all_rx)
    register(owner, messages_rx, events=["message.new"])
    requester_id, requester = stack.new_user("Quinn Querier", country="it")
    register(requester, requester_rx)

    sent = requester.post("/v1/profile-requests", json={"userId": owner_id, "message": "A role for you", "channel": "telegram"})
    assert sent.status_code == 201, sent.text
    request = sent.json()
    received(all_rx, 1)
    data = only(all_rx, "profile_request.received")
    assert (data["requestId"], data["status"], data["requesterId"]) == (request["requestId"], "PENDING", requester_id)
    assert (data["message"], data["channels"], data["createdAt"]) == ("A role for you", ["telegram"], request["createdAt"])
    assert data["profile"]["displayName"] == "Quinn Querier"
    assert set(data["profile"]["socialLinks"]) == SOCIAL_KEYS

    decide(owner, request["requestId"], "ACCEPTED")
    received(all_rx, 2)
    data = only(all_rx, "profile_request.accepted")
    assert (data["requestId"], data["status"], data["requesterId"]) == (request["requestId"], "ACCEPTED", requester_id)
    assert data["respondedAt"]

    second_id, second = stack.new_user("Rory Rejected")
    other = second.post("/v1/profile-requests", json={"userId": owner_id, "message": "Hi", "channel": "telegram"})
    assert other.status_code == 201, other.text
    decide(owner, other.json()["requestId"], "REJECTED", reason="Not looking")
    received(all_rx, 4)
    data = only(all_rx, "profile_request.rejected")
    assert (data["requestId"], data["status"], data["reason"]) == (other.json()["requestId"], "REJECTED", "Not looking")
    assert data["requesterId"] == second_id
    assert sorted(all_rx.events()) == sorted(["profile_request.received"] * 2 + ["profile_request.accepted", "profile_request.rejected"])

    # Barriers: later message.new events to each side; the requester and the message-only
    # webhook got no profile_request.* event.
    conversation_id = next(c["conversationId"] for c in owner.get("/v1/conversations").json()["conversations"]
                           if c["requestId"] == request["requestId"])
    say(requester, conversation_id, "Thanks")
    wait_until(lambda: messages_rx.events() == ["message.new"], timeout_seconds=DELIVERY_WAIT)
    say(owner, conversation_id, "Welcome")
    wait_until(lambda: requester_rx.events() == ["message.new"], timeout_seconds=DELIVERY_WAIT)
    received(all_rx, 5)
    assert all(r.verified for r in all_rx.requests + messages_rx.requests + requester_rx.requests)


# -- failure policy ------------------------------------------------------------------------


def test_fail_count_counts_failures_resets_on_2xx_and_the_log_is_newest_first(
    stack: Stack, new_receiver: Callable[..., Receiver]
) -> None:
    owner_id, owner = stack.new_user("Fiona Flaky")
    _, peer = stack.new_user("Pete Peer")
    conversation_id = open_conversation(owner_id, owner, peer)
    flaky = new_receiver("fail")
    hook = register(owner, flaky, events=["message.new"])
    assert webhook_state(owner, hook["id"])["failCount"] == 0

    say(peer, conversation_id, "one")
    received(flaky, 1)
    wait_state(owner, hook["id"], fail_count=1)
    say(peer, conversation_id, "two")
    received(flaky, 2)
    wait_state(owner, hook["id"], fail_count=2)

    flaky.mode = "ok"
    say(peer, conversation_id, "three")
    received(flaky, 3)
    state = wait_state(owner, hook["id"], fail_count=0)
    assert state["active"] is True

    log = deliveries(owner, hook["id"], 3)
    assert len(log) == 3
    assert [d["attemptedAt"] for d in log] == sorted((d["attemptedAt"] for d in log), reverse=True)
    assert [(d["success"], d["statusCode"], d["attempt"]) for d in log] == [(True, 200, 1), (False, 500, 1), (False, 500, 1)]
    # newest first: the log's message ids are the receiver's webhook-id headers in reverse order
    assert [d["messageId"] for d in log] == [r.webhook_id for r in reversed(flaky.requests)]
    assert [d["event"] for d in log] == ["message.new"] * 3
    assert log[0]["responseBody"] == '{"received":true}'
    assert all(r.verified for r in flaky.requests)


def failing_beside_healthy(
    stack: Stack, new_receiver: Callable[..., Receiver], owner_name: str, peer_name: str
) -> tuple[httpx.Client, httpx.Client, str, Receiver, Receiver, dict[str, Any]]:
    """A new owner in a conversation with a new peer, with two ``message.new`` webhooks: one to a
    receiver answering 500 and one to a healthy receiver.

    Returns the owner, the peer, the conversation's id, the failing and the healthy receiver, and
    the failing receiver's webhook.
    """
    owner_id, owner = stack.new_user(owner_name)
    _, peer = stack.new_user(peer_name)
    conversation_id = open_conversation(owner_id, owner, peer)
    failing, healthy = new_receiver("fail"), new_receiver()
    hook = register(owner, failing, events=["message.new"])
    register(owner, healthy, events=["message.new"])
    return owner, peer, conversation_id, failing, healthy, hook


def test_five_consecutive_failures_disable_the_webhook_and_nothing_more_is_sent(
    stack: Stack, new_receiver: Callable[..., Receiver]
) -> None:
    owner, peer, conversation_id, failing, healthy, hook = failing_beside_healthy(stack, new_receiver, "Dana Down", "Paul Poster")

    for n in range(1, 6):  # one event at a time: each failure is a first attempt of its own event
        say(peer, conversation_id, f"message {n}")
        received(failing, n)
        wait_state(owner, hook["id"], fail_count=n, active=n < 5)
    assert webhook_state(owner, hook["id"])["active"] is False

    for n in range(6, 8):
        say(peer, conversation_id, f"message {n}")
    received(healthy, 7)  # both later events were delivered to the healthy sibling ...
    delivery_idle(stack)
    assert len(failing.requests) == 5  # ... and not to the disabled webhook
    state = webhook_state(owner, hook["id"])
    assert (state["active"], state["failCount"]) == (False, 5)
    assert len(deliveries(owner, hook["id"], 5)) == 5


def test_hanging_and_dripping_receivers_do_not_delay_a_healthy_one_and_are_cut_off_at_10_s(
    stack: Stack, new_receiver: Callable[..., Receiver]
) -> None:
    _, owner = stack.new_user("Harriet Host")
    healthy_rx, hanging_rx = new_receiver(), new_receiver("hang", hang_seconds=15)
    dripping_rx = new_receiver("drip", drip_interval=1.0, drip_bytes=20)
    healthy = register(owner, healthy_rx, events=list(MATCH_EVENTS))
    hanging = register(owner, hanging_rx, events=list(MATCH_EVENTS))
    dripping = register(owner, dripping_rx, events=list(MATCH_EVENTS))
    listing = active_listing(stack, owner, "Slow receivers", [hanging["id"], dripping["id"], healthy["id"]])
    _, requester = stack.new_user("Ivy Impatient")

    sent = requester.post("/v1/match-requests", json={"listingId": listing["id"], "message": "Hi", "channels": ["telegram"]})
    assert sent.status_code == 201, sent.text
    first = received(healthy_rx, 1, timeout=DELIVERY_WAIT)[0]
    # all three were sent at once: the slow ones are still open while the healthy one is done
    received(hanging_rx, 1, timeout=2)
    received(dripping_rx, 1, timeout=2)
    assert (hanging_rx.in_flight, dripping_rx.in_flight) == (1, 1)
    assert all(r.verified for r in (first, hanging_rx.requests[0], dripping_rx.requests[0]))

    hang_log = deliveries(owner, hanging["id"], 1)[0]
    drip_log = deliveries(owner, dripping["id"], 1)[0]
    for entry in (hang_log, drip_log):
        assert (entry["success"], entry["statusCode"], entry["error"]) == (False, None, "timeout"), entry
    # One deadline for the whole delivery, not per read: the drip (a byte a second, each read far
    # inside any per-read timeout) was cut off before its 20 bytes were out, its connection closed.
    drip = dripping_rx.requests[0]
    wait_until(lambda: drip.ended, timeout_seconds=DELIVERY_WAIT)
    assert drip.bytes_sent < dripping_rx.drip_bytes
    assert wait_state(owner, hanging["id"], fail_count=1)["active"] is True
    assert wait_state(owner, dripping["id"], fail_count=1)["active"] is True
    assert webhook_state(owner, healthy["id"])["failCount"] == 0
    assert healthy_rx.events() == ["match_request.received"]


# -- retries and replays: a stack of their own, with 1 s retry delays --------------------------


@pytest.fixture(scope="module")
def fast_stack() -> Iterator[Stack]:
    """A local stack whose failed deliveries are retried after 1 s (at most 4 retries)."""
    running = start_stack({"WEBHOOK_RETRY_DELAYS_SECONDS": "1,1,1,1"})
    yield running
    stop_stack(running)


def test_a_failed_delivery_is_retried_with_the_same_id_until_the_webhook_is_disabled(
    fast_stack: Stack, new_receiver: Callable[..., Receiver]
) -> None:
    owner, peer, conversation_id, failing, healthy, hook = failing_beside_healthy(fast_stack, new_receiver, "Rita Retry", "Sid Sender")

    say(peer, conversation_id, "are you there?")
    attempts = received(failing, 5, timeout=30)  # with the default 30 s delay this would time out
    state = wait_state(owner, hook["id"], fail_count=5, active=False)
    assert state["active"] is False
    assert len({r.webhook_id for r in attempts}) == 1  # stable across retries
    assert len({r.body for r in attempts}) == 1
    assert all(r.verified for r in attempts)

    log = deliveries(owner, hook["id"], 5)
    assert [d["attempt"] for d in log] == [5, 4, 3, 2, 1]  # newest first
    # each retry was made no earlier than the time the failure before it logged as its due time
    oldest_first = log[::-1]
    assert [d["nextAttemptAt"] is not None for d in oldest_first] == [True, True, True, True, False]  # the 5th disabled it
    assert all(later["attemptedAt"] >= earlier["nextAttemptAt"] for earlier, later in itertools.pairwise(oldest_first))
    assert all((d["success"], d["statusCode"]) == (False, 500) for d in log)
    assert {d["messageId"] for d in log} == {attempts[0].webhook_id}

    say(peer, conversation_id, "hello?")
    received(healthy, 2)
    delivery_idle(fast_stack, retries=True)  # no retry left waiting, in flight or queued
    assert len(failing.requests) == 5


_REPLAY = textwrap.dedent("""
    import json, os, sys
    from local_stack.__main__ import stage_environment
    from local_stack.resources import create_resources

    os.environ.update(stage_environment("local"))
    os.environ.update(create_resources())

    from app import app, deliver_slow_webhooks, deliver_webhooks, enqueue_webhook_deliveries
    from chalicelib.webhooks.delivery import attempt, lanes
    from local_stack.runner import EventRunner

    seen = {"enqueued": [], "attempts": []}
    enqueue, make_attempt = lanes.enqueue, attempt.attempt

    def observed_enqueue(deliveries):
        seen["enqueued"] += [{"webhookId": d.webhook_id, "eventId": d.event.event_id} for d in deliveries]
        enqueue(deliveries)

    def observed_attempt(delivery, **options):
        result = make_attempt(delivery, **options)
        seen["attempts"].append({"webhookId": delivery.webhook_id, "eventId": delivery.event.event_id, "result": result.value})
        return result

    lanes.enqueue, attempt.attempt = observed_enqueue, observed_attempt
    runner = EventRunner(app)  # a fresh runner: no checkpoint, reads the stream from its start
    runner.streams = [s for s in runner.streams if s.handler is enqueue_webhook_deliveries]
    runner.queues = [q for q in runner.queues if q.handler in (deliver_webhooks, deliver_slow_webhooks)]
    while runner.drain():
        pass
    json.dump(seen, sys.stdout)
""")


def replay_outbox_stream(stack: Stack) -> dict[str, list[dict[str, Any]]]:
    """Run a second event runner against the stack's embedded AWS: the whole outbox stream is
    handed to the webhook handler again (a redelivered batch), then the lanes are drained.
    Returns ``{"enqueued": [...], "attempts": [...]}``: what the replay queued and attempted."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update({"AWS_ENDPOINT_URL": stack.moto_url, "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local",
                "AWS_DEFAULT_REGION": "us-east-1", "POWERTOOLS_LOG_LEVEL": "ERROR"})
    done = subprocess.run([sys.executable, "-c", _REPLAY], cwd=ROOT, env=env, capture_output=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr.decode()[-4000:]
    lines = done.stdout.decode().strip().splitlines()
    result: dict[str, list[dict[str, Any]]] = json.loads(lines[-1])
    return result


def test_a_replayed_stream_batch_delivers_nothing_twice(fast_stack: Stack, new_receiver: Callable[..., Receiver]) -> None:
    owner_id, owner = fast_stack.new_user("Olga Once")
    rx = new_receiver()
    hook = register(owner, rx)
    listing = active_listing(fast_stack, owner, "Exactly once", [hook["id"]])
    _, seeker = fast_stack.new_user("Sven Seeker")
    sent = seeker.post("/v1/match-requests", json={"listingId": listing["id"], "message": "Hi", "channels": ["telegram"]})
    assert sent.status_code == 201, sent.text
    decide(owner, sent.json()["requestId"], "ACCEPTED")
    _, recruiter = fast_stack.new_user("Rex Recruiter")
    conversation_id = open_conversation(owner_id, owner, recruiter)
    say(recruiter, conversation_id, "first")
    say(recruiter, conversation_id, "second")
    expected = ["match_request.received", "match_request.accepted", "profile_request.received", "profile_request.accepted",
                "message.new", "message.new"]
    wait_until(lambda: sorted(rx.events()) == sorted(expected), timeout_seconds=DELIVERY_WAIT)
    delivered = [r.webhook_id for r in rx.requests]
    assert len(set(delivered)) == len(expected)

    log = deliveries(owner, hook["id"], len(expected))
    assert sorted(d["messageId"] for d in log) == sorted(delivered)

    replay = replay_outbox_stream(fast_stack)
    mine = [a for a in replay["enqueued"] if a["webhookId"] == hook["id"]]
    # the replay re-routed every one of these events into the lane again ...
    assert sorted(a["eventId"] for a in mine) == sorted(d["eventId"] for d in log)
    # ... where FIFO deduplication (webhook-id) absorbed them, or a claim found them attempted
    assert {a["result"] for a in replay["attempts"] if a["webhookId"] == hook["id"]} <= {"duplicate"}

    delivery_idle(fast_stack)  # anything the replay had queued has been attempted by now
    ids = [r.webhook_id for r in rx.requests]
    assert sorted(ids) == sorted(delivered)
    assert len(ids) == len(set(ids)) == len(expected)
    assert webhook_state(owner, hook["id"])["failCount"] == 0

