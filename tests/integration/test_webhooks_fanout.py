"""Fan-out: which webhooks receive which event (spec §6 "Event kinds"; DESIGN §2 profile requests)."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.kernel import clock
from chalicelib.kernel.config import settings
from chalicelib.persistence import storage
from chalicelib.webhooks.catalogue import SUPPORTED_EVENTS
from chalicelib.webhooks.delivery import recipients as fanout
from chalicelib.webhooks.delivery.envelope import Event
from tests.clocks import distinct_milliseconds
from tests.integration.conftest import User
from tests.integration.helpers import aws_calls


def put(owner: User, name: str, events: list[str] | None = None, active: bool = True) -> str:
    webhook_id = clock.new_id("whk")
    now = clock.iso()
    storage.put(settings().WEBHOOKS_TABLE, {
        "webhookId": webhook_id, "ownerId": owner.user_id, "name": name, "url": "http://127.0.0.1:9/",
        "secret": "whsec_dGVzdA==", "events": events or list(SUPPORTED_EVENTS), "active": active, "failCount": 0,
        "createdAt": now, "updatedAt": now,
    })
    return webhook_id


def event(event_type: str, **routing: Any) -> Event:
    return Event(clock.new_id("evt"), event_type, clock.iso(), {"x": 1}, routing)


def names(webhooks: list[dict[str, Any]]) -> set[str]:
    return {w["name"] for w in webhooks}


@pytest.mark.parametrize("kind", ["match_request.received", "match_request.accepted", "match_request.rejected"])
def test_match_request_events_go_to_the_bound_active_subscribed_webhooks_of_the_owner(alice: User, bob: User, kind: str) -> None:
    bound = put(alice, "bound")
    put(alice, "unbound")
    inactive = put(alice, "inactive", active=False)
    other_event = put(alice, "messages only", events=["message.new"])
    foreign = put(bob, "bob's")
    routing = {"recipientId": alice.user_id, "listingId": "lst_1", "webhookIds": [bound, inactive, other_event, foreign, "whk_gone"]}
    assert names(fanout.recipients(event(kind, **routing), fanout.WebhookDirectory())) == {"bound"}


def test_match_request_without_bound_webhooks_goes_nowhere(alice: User) -> None:
    put(alice, "unbound")
    assert fanout.recipients(event("match_request.received", recipientId=alice.user_id, webhookIds=[]), fanout.WebhookDirectory()) == []


def test_message_new_goes_to_every_active_webhook_of_the_recipient_never_the_sender(alice: User, bob: User) -> None:
    put(alice, "a1")
    put(alice, "a2", events=["message.new"])
    put(alice, "a3", events=["match_request.received"])
    put(alice, "a4", active=False)
    put(bob, "sender's")
    found = fanout.recipients(event("message.new", recipientId=alice.user_id, senderId=bob.user_id), fanout.WebhookDirectory())
    assert names(found) == {"a1", "a2"}
    assert fanout.recipients(event("message.new", recipientId=bob.user_id, senderId=bob.user_id), fanout.WebhookDirectory()) == []


@pytest.mark.parametrize("kind", ["profile_request.received", "profile_request.accepted", "profile_request.rejected"])
def test_profile_request_events_go_to_every_active_webhook_of_the_profile_owner(alice: User, bob: User, kind: str) -> None:
    put(alice, "a1")
    put(alice, "a2", events=[kind])
    put(alice, "a3", events=["message.new"])
    put(bob, "requester's")
    assert names(fanout.recipients(event(kind, recipientId=alice.user_id), fanout.WebhookDirectory())) == {"a1", "a2"}


def test_internal_and_unaddressed_events_go_nowhere(alice: User) -> None:
    webhook = put(alice, "a1")
    directory = fanout.WebhookDirectory()
    assert fanout.recipients(event("listing.submitted", recipientId=alice.user_id, webhookIds=[webhook]), directory) == []
    assert fanout.recipients(event("message.new"), directory) == []
    assert fanout.recipients(event("match_request.received", webhookIds=[webhook]), directory) == []


def test_a_batch_reads_each_owner_once(alice: User, bob: User) -> None:
    put(alice, "a1")
    directory = fanout.WebhookDirectory()
    with aws_calls("Query") as queries:
        for _ in range(5):
            fanout.recipients(event("message.new", recipientId=alice.user_id, senderId=bob.user_id), directory)
    assert len(queries) == 1
    assert queries[0]["IndexName"] == "byOwner"




def test_a_webhook_registered_after_the_event_does_not_get_it(alice: User, bob: User) -> None:
    with distinct_milliseconds():  # createdAt has millisecond precision: the webhook is strictly later
        before = event("message.new", recipientId=alice.user_id, senderId=bob.user_id)
        webhook = put(alice, "late")
    assert fanout.recipients(before, fanout.WebhookDirectory()) == []
    bound = event("match_request.received", recipientId=alice.user_id, listingId="lst_1", webhookIds=[webhook])
    assert names(fanout.recipients(bound, fanout.WebhookDirectory())) == {"late"}
    stale = Event(bound.event_id, bound.type, before.created_at, bound.data, bound.routing)
    assert fanout.recipients(stale, fanout.WebhookDirectory()) == []
