"""``GET /v1/me/export``: everything held about the caller in one document, no secret or key
material in it, and reads that grow with the caller's own data, not with other users'."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from tests.integration.conftest import Api, User, make_user
from tests.integration.helpers import counting_reads, create_listing
from tests.integration.request_helpers import accepted_conversation, active_listing, match_request, profile_request


def _export(api: Api, user: User) -> dict[str, Any]:
    return api.call_json("GET", "/v1/me/export", user.key)


def _seed(api: Api, alice: User, bob: User) -> dict[str, Any]:
    listing = active_listing(api, alice)
    pending = create_listing(api, alice)
    _, conversation = accepted_conversation(api, alice, bob)
    for i in range(3):
        api.call("POST", f"/v1/conversations/{conversation}/messages", alice.key if i % 2 else bob.key, {"content": f"m{i}"})
    hook = api.call("POST", "/v1/webhooks", alice.key, {"url": "http://127.0.0.1:9/hook", "events": ["message.new"]}).json
    search = api.call("POST", "/v1/saved-searches", alice.key, {"name": "Jobs", "query": {"category": "jobs"}})
    carol = make_user("Carol")
    sent = profile_request(api, alice, carol.user_id).json
    api.call("PUT", f"/v1/me/blocks/{carol.user_id}", alice.key)
    report = api.call("POST", "/v1/reports", alice.key, {"subjectType": "profile", "subjectId": bob.user_id, "reason": "spam"}).json
    return {"listing": listing, "pending": pending, "conversation": conversation, "hook": hook, "search": search,
            "sent": sent, "carol": carol, "report": report}


def test_the_export_holds_every_part_of_the_callers_data(api: Api, alice: User, bob: User) -> None:
    seeded = _seed(api, alice, bob)
    exported = _export(api, alice)
    assert exported["exportVersion"] == 1
    assert exported["profile"]["userId"] == alice.user_id
    assert {c["key"] for c in exported["channels"]} == {"telegram", "email"}
    assert {(item["id"], item["status"]) for item in exported["listings"]} >= {
        (seeded["listing"]["id"], "ACTIVE"), (seeded["pending"]["id"], "PENDING"),
    }
    assert [r["requestId"] for r in exported["requestsSent"]] == [seeded["sent"]["requestId"]]
    assert [r["requesterId"] for r in exported["requestsReceived"]] == [bob.user_id]
    (conversation,) = exported["conversations"]
    assert conversation["conversation"]["conversationId"] == seeded["conversation"]
    assert [m["content"] for m in conversation["messages"]] == ["m0", "m1", "m2"]
    (hook,) = exported["webhooks"]
    assert hook["webhook"]["id"] == seeded["hook"]["id"]
    assert isinstance(hook["recentDeliveries"], list)
    assert len(exported["savedSearches"]) == (1 if seeded["search"].status_code == 201 else 0)
    assert [b["userId"] for b in exported["blocks"]] == [seeded["carol"].user_id]
    assert [r["reportId"] for r in exported["reports"]] == [seeded["report"]["reportId"]]
    (key,) = exported["apiKeys"]
    key_hash = hashlib.sha256(alice.key.encode()).hexdigest()
    assert len(key["keyId"]) == 16
    assert not key_hash.startswith(key["keyId"])  # a random id, no part of the key's hash
    text = json.dumps(exported)
    assert key_hash[:16] not in text
    assert alice.key not in text  # never key material
    assert seeded["hook"]["secret"] not in text  # never a webhook secret
    assert "keyHash" not in text


def test_another_users_export_holds_only_their_data(api: Api, alice: User, bob: User) -> None:
    _seed(api, alice, bob)
    exported = _export(api, bob)
    assert exported["profile"]["userId"] == bob.user_id
    assert exported["listings"] == []
    assert exported["blocks"] == []
    assert exported["reports"] == []
    assert [r["recipientId"] for r in exported["requestsSent"]] == [alice.user_id]


def test_reads_grow_with_the_callers_data_not_with_other_users(api: Api, alice: User, bob: User) -> None:
    _seed(api, alice, bob)
    _export(api, alice)  # warms the key cache
    with counting_reads() as before:
        _export(api, alice)
    for i in range(4):  # other users' data: listings, requests, conversations
        other = make_user(f"Other {i}")
        listing = active_listing(api, other)
        match_request(api, bob, listing["id"])
        accepted_conversation(api, other, bob)
    with counting_reads() as after:
        _export(api, alice)
    assert after.calls == before.calls
    assert after.items == before.items


def test_a_conversation_the_caller_left_is_exported_with_its_messages(api: Api, alice: User, bob: User) -> None:
    _, conversation = accepted_conversation(api, alice, bob)
    api.call("POST", f"/v1/conversations/{conversation}/messages", bob.key, {"content": "before leaving"})
    api.call_json("DELETE", f"/v1/conversations/{conversation}", bob.key)
    assert api.call_json("GET", "/v1/conversations", bob.key)["conversations"] == []  # the list leaves it out
    (left,) = _export(api, bob)["conversations"]
    assert left["conversation"]["conversationId"] == conversation
    assert [p["left"] for p in left["conversation"]["participants"] if p["userId"] == bob.user_id] == [True]
    assert [m["content"] for m in left["messages"]] == ["before leaving"]
    (kept,) = _export(api, alice)["conversations"]  # the other participant's export holds it too
    assert kept["conversation"]["otherLeft"] is True


def test_conversations_are_exported_in_the_order_of_the_conversations_list(api: Api, alice: User, bob: User) -> None:
    carol = make_user("Carol")
    _, with_bob = accepted_conversation(api, alice, bob)
    _, with_carol = accepted_conversation(api, alice, carol)
    api.call("POST", f"/v1/conversations/{with_bob}/messages", bob.key, {"content": "earlier"})
    api.call("POST", f"/v1/conversations/{with_carol}/messages", carol.key, {"content": "later"})
    api.call_json("DELETE", f"/v1/conversations/{with_bob}", bob.key)  # moves updatedAt, not the activity
    listed = [c["conversationId"] for c in api.call_json("GET", "/v1/conversations", alice.key)["conversations"]]
    assert listed == [with_carol, with_bob]
    assert [c["conversation"]["conversationId"] for c in _export(api, alice)["conversations"]] == listed
