"""Webhook fan-out rules on plain webhook items: who receives which event (spec §6 "Event kinds";
DESIGN §2 profile requests). ``recipients`` reads webhooks only through its directory, so a
directory over a dict stands in for the table here; tests/integration/test_webhooks_fanout.py
checks the same rules against the table and how many reads a batch makes."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest

from chalicelib.webhooks.catalogue import SUPPORTED_EVENTS
from chalicelib.webhooks.delivery import recipients as fanout
from chalicelib.webhooks.delivery.envelope import Event

EVENT_AT = "2026-11-22T10:00:00.000Z"
BEFORE = "2026-11-22T09:00:00.000Z"
AFTER = "2026-11-22T10:00:00.001Z"


class Directory(fanout.WebhookDirectory):
    """The batch's webhook reads, answered from ``webhooks`` instead of the table."""

    def __init__(self, *webhooks: dict[str, Any]) -> None:
        super().__init__()
        self.webhooks = {w["webhookId"]: w for w in webhooks}

    def by_ids(self, webhook_ids: Iterable[str]) -> list[dict[str, Any]]:
        return [self.webhooks[i] for i in dict.fromkeys(webhook_ids) if i in self.webhooks]

    def by_owner(self, owner_id: str) -> list[dict[str, Any]]:
        return [w for w in self.webhooks.values() if w["ownerId"] == owner_id]


def hook(webhook_id: str, owner: str, events: list[str] | None = None, active: bool = True,
         created_at: str = BEFORE) -> dict[str, Any]:
    return {"webhookId": webhook_id, "ownerId": owner, "events": events or [], "active": active, "createdAt": created_at}


def event(event_type: str, created_at: str = EVENT_AT, **routing: Any) -> Event:
    return Event("evt_1", event_type, created_at, {"x": 1}, routing)


def ids(webhooks: list[dict[str, Any]]) -> set[str]:
    return {w["webhookId"] for w in webhooks}


def test_stored_empty_events_mean_all() -> None:
    assert fanout.subscribed({"active": True, "events": []}, "message.new")
    assert not fanout.subscribed({"active": False, "events": []}, "message.new")


def test_stored_empty_events_leave_the_operational_events_out() -> None:
    assert not fanout.subscribed({"active": True, "events": []}, "webhook.disabled")
    assert fanout.subscribed({"active": True, "events": ["webhook.disabled"]}, "webhook.disabled")


@pytest.mark.parametrize("kind", ["webhook.disabled", "webhook.enabled"])
def test_operational_events_go_to_the_owners_other_active_webhooks_that_name_them(kind: str) -> None:
    directory = Directory(
        hook("about", "alice", events=[kind]), hook("ops", "alice", events=[kind, "message.new"]),
        hook("default", "alice"), hook("ops_off", "alice", events=[kind], active=False), hook("bobs_ops", "bob", events=[kind]),
    )
    assert ids(fanout.recipients(event(kind, recipientId="alice", webhookId="about"), directory)) == {"ops"}


@pytest.mark.parametrize("kind", ["match_request.received", "match_request.accepted", "match_request.rejected"])
def test_match_request_events_go_to_the_bound_active_subscribed_webhooks_of_the_owner(kind: str) -> None:
    directory = Directory(
        hook("bound", "alice"), hook("unbound", "alice"), hook("off", "alice", active=False),
        hook("other_kind", "alice", events=["message.new"]), hook("bobs", "bob"),
    )
    bound = event(kind, recipientId="alice", webhookIds=["bound", "off", "other_kind", "bobs", "gone"])
    assert ids(fanout.recipients(bound, directory)) == {"bound"}


def test_match_request_without_bound_webhooks_goes_nowhere() -> None:
    directory = Directory(hook("a1", "alice"))
    assert fanout.recipients(event("match_request.received", recipientId="alice", webhookIds=[]), directory) == []
    assert fanout.recipients(event("match_request.received", recipientId="alice"), directory) == []


def test_message_new_goes_to_every_active_subscribed_webhook_of_the_recipient_never_the_sender() -> None:
    directory = Directory(hook("a1", "alice"), hook("a2", "alice", events=["message.new"]),
                          hook("a3", "alice", active=False), hook("b1", "bob"))
    assert ids(fanout.recipients(event("message.new", recipientId="alice", senderId="bob"), directory)) == {"a1", "a2"}
    assert fanout.recipients(event("message.new", recipientId="alice", senderId="alice"), directory) == []


@pytest.mark.parametrize("kind", ["profile_request.received", "profile_request.accepted", "profile_request.rejected"])
def test_profile_request_events_go_to_every_active_webhook_of_the_profile_owner(kind: str) -> None:
    directory = Directory(hook("a1", "alice"), hook("a2", "alice", events=["message.new"]), hook("b1", "bob"))
    assert ids(fanout.recipients(event(kind, recipientId="alice"), directory)) == {"a1"}


def test_internal_and_unaddressed_events_go_nowhere() -> None:
    directory = Directory(hook("a1", "alice"))
    assert "listing.submitted" not in SUPPORTED_EVENTS
    assert fanout.recipients(event("listing.submitted", recipientId="alice", webhookIds=["a1"]), directory) == []
    assert fanout.recipients(event("message.new"), directory) == []
    assert fanout.recipients(event("match_request.received", webhookIds=["a1"]), directory) == []


def test_a_webhook_registered_after_the_event_does_not_get_it() -> None:
    directory = Directory(hook("early", "alice"), hook("late", "alice", created_at=AFTER))
    assert ids(fanout.recipients(event("message.new", recipientId="alice"), directory)) == {"early"}
    assert fanout.existed_at(hook("same_ms", "alice", created_at=EVENT_AT), event("message.new"))
    assert not fanout.existed_at(hook("late", "alice", created_at=AFTER), event("message.new"))


def test_an_addressed_event_goes_only_to_its_webhook_if_active_owned_and_subscribed() -> None:
    directory = Directory(hook("mine", "alice", events=["message.new"]), hook("sibling", "alice"),
                          hook("off", "alice", active=False), hook("bobs", "bob"))

    def addressed(target: str, kind: str = "message.new", test: bool = False) -> set[str]:
        sent = Event("evt_1", kind, EVENT_AT, {}, {"recipientId": "alice"}, test=test, target_webhook_id=target)
        return ids(fanout.recipients(sent, directory))

    assert addressed("mine") == {"mine"}
    assert addressed("off") == set()
    assert addressed("bobs") == set()
    assert addressed("gone") == set()
    assert addressed("mine", kind="profile_request.received") == set()  # not subscribed ...
    assert addressed("mine", kind="profile_request.received", test=True) == {"mine"}  # ... but a test event is sent


def test_a_batchs_owners_are_read_at_once_each_once(monkeypatch: pytest.MonkeyPatch) -> None:
    webhooks = {f"usr_{n}": [hook(f"whk_{n}", f"usr_{n}")] for n in range(12)}
    reads: list[str] = []

    def list_by_owner(owner_id: str) -> list[dict[str, Any]]:
        reads.append(owner_id)
        return webhooks.get(owner_id, [])

    monkeypatch.setattr(fanout.repository, "list_by_owner", list_by_owner)
    directory = fanout.WebhookDirectory()
    directory.by_owners([*webhooks, "usr_0", "usr_none"])
    assert sorted(reads) == sorted([*webhooks, "usr_none"])
    assert ids(directory.by_owner("usr_3")) == {"whk_3"}
    assert directory.by_owner("usr_none") == []
    assert ids(directory.by_ids(["whk_5"])) == {"whk_5"}
    assert len(reads) == 13  # answered from what was read


def test_a_failed_owner_read_raises_and_is_read_again_later(monkeypatch: pytest.MonkeyPatch) -> None:
    failing = {"usr_b"}
    reads: list[str] = []

    def list_by_owner(owner_id: str) -> list[dict[str, Any]]:
        reads.append(owner_id)
        if owner_id in failing:
            raise RuntimeError("read failed")
        return [hook(f"whk_{owner_id}", owner_id)]

    monkeypatch.setattr(fanout.repository, "list_by_owner", list_by_owner)
    directory = fanout.WebhookDirectory()
    with pytest.raises(RuntimeError):
        directory.by_owners(["usr_a", "usr_b", "usr_c"])
    failing.clear()
    assert ids(directory.by_owner("usr_b")) == {"whk_usr_b"}
    assert ids(directory.by_owner("usr_a")) == {"whk_usr_a"}
    assert sorted(reads) == ["usr_a", "usr_b", "usr_b", "usr_c"]


def test_the_owner_read_names_the_events_that_list_an_owners_webhooks() -> None:
    assert fanout.owner_read(event("message.new", recipientId="usr_b", senderId="usr_a")) == "usr_b"
    assert fanout.owner_read(event("message.new", recipientId="usr_a", senderId="usr_a")) is None
    assert fanout.owner_read(event("match_request.received", recipientId="usr_b", webhookIds=["whk_1"])) is None
    assert fanout.owner_read(event("listing.submitted", recipientId="usr_b")) is None
    assert fanout.owner_read(event("message.new")) is None
    addressed = Event("evt_1", "message.new", EVENT_AT, {}, {"recipientId": "usr_b"}, target_webhook_id="whk_1")
    assert fanout.owner_read(addressed) is None
