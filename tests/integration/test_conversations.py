"""Conversations: opened by acceptance, visible to participants only, messages oldest first and
paginated, message.new events, leaving (otherLeft, 403 on send), concurrent sends."""

from __future__ import annotations

from typing import Any

import pytest

from chalicelib.auth.service import Caller
from chalicelib.conversations import service
from chalicelib.persistence import outbox
from tests.integration.conftest import Api, User, make_user
from tests.integration.helpers import assert_error
from tests.integration.request_helpers import (
    accepted_conversation,
    decide,
    events,
    profile_request,
    run_concurrently,
)

CONVERSATION_FIELDS = {
    "conversationId", "subjectType", "subjectId", "requestId", "participants", "otherLeft", "lastMessage",
    "messageCount", "unreadCount", "lastReadMessageId", "createdAt", "updatedAt",
}
MESSAGE_FIELDS = {"messageId", "conversationId", "senderId", "senderName", "content", "isApiSent", "createdAt"}


def send(api: Api, user: User, conversation_id: str, content: str) -> Any:
    return api.call("POST", f"/v1/conversations/{conversation_id}/messages", user.key, {"content": content})


def test_acceptance_opens_a_conversation_for_both_parties(api: Api, alice: User, bob: User) -> None:
    request, conversation_id = accepted_conversation(api, alice, bob)
    for user in (alice, bob):
        listed = api.call("GET", "/v1/conversations", user.key).json
        assert set(listed) == {"conversations", "total", "page", "pageSize", "nextCursor"}
        assert [c["conversationId"] for c in listed["conversations"]] == [conversation_id]
    detail = api.call("GET", f"/v1/conversations/{conversation_id}", bob.key).json
    assert set(detail) == CONVERSATION_FIELDS
    assert detail["subjectType"] == "LISTING"
    assert detail["subjectId"] == request["listingId"]
    assert detail["requestId"] == request["requestId"]
    assert detail["participants"] == [
        {"userId": bob.user_id, "displayName": "Bob", "left": False},
        {"userId": alice.user_id, "displayName": "Alice", "left": False},
    ]
    assert detail["otherLeft"] is False
    assert detail["lastMessage"] is None
    assert detail["messageCount"] == 0


def test_non_participants_get_404(api: Api, alice: User, bob: User) -> None:
    _, conversation_id = accepted_conversation(api, alice, bob)
    carol = make_user("Carol")
    base = f"/v1/conversations/{conversation_id}"
    assert_error(api.call("GET", base, carol.key), 404, "NOT_FOUND")
    assert_error(api.call("GET", f"{base}/messages", carol.key), 404, "NOT_FOUND")
    assert_error(send(api, carol, conversation_id, "hi"), 404, "NOT_FOUND")
    assert_error(api.call("DELETE", base, carol.key), 404, "NOT_FOUND")
    assert_error(api.call("GET", "/v1/conversations/cnv_unknown", alice.key), 404, "NOT_FOUND")
    assert api.call("GET", "/v1/conversations", carol.key).json["total"] == 0


def test_sending_a_message(api: Api, alice: User, bob: User) -> None:
    _, conversation_id = accepted_conversation(api, alice, bob)
    response = send(api, bob, conversation_id, "Hello Alice!")
    assert response.status_code == 201, response.json
    message = response.json
    assert set(message) == MESSAGE_FIELDS
    assert message["senderId"] == bob.user_id
    assert message["senderName"] == "Bob"
    assert message["content"] == "Hello Alice!"
    assert message["isApiSent"] is True
    assert message["conversationId"] == conversation_id
    detail = api.call("GET", f"/v1/conversations/{conversation_id}", alice.key).json
    assert detail["lastMessage"] == message
    assert detail["messageCount"] == 1
    [event] = events(outbox.MESSAGE_NEW)
    assert event["data"] == {k: message[k] for k in MESSAGE_FIELDS}
    assert event["routing"] == {"recipientId": alice.user_id, "senderId": bob.user_id}


@pytest.mark.parametrize("content", ["", "   \n", "x" * 4001])
def test_message_content_must_be_1_to_4000_characters(api: Api, alice: User, bob: User, content: str) -> None:
    _, conversation_id = accepted_conversation(api, alice, bob)
    assert_error(send(api, bob, conversation_id, content), 400, "VALIDATION_ERROR", "content")


def test_message_bodies_are_strict(api: Api, alice: User, bob: User) -> None:
    _, conversation_id = accepted_conversation(api, alice, bob)
    path = f"/v1/conversations/{conversation_id}/messages"
    assert_error(api.call("POST", path, bob.key, {"content": "hi", "isApiSent": False}), 400, "VALIDATION_ERROR", "isApiSent")
    assert send(api, bob, conversation_id, "é" * 4000).status_code == 201


def test_messages_are_oldest_first_and_paginated(api: Api, alice: User, bob: User) -> None:
    _, conversation_id = accepted_conversation(api, alice, bob)
    for i in range(5):
        assert send(api, bob if i % 2 == 0 else alice, conversation_id, f"message {i}").status_code == 201
    path = f"/v1/conversations/{conversation_id}/messages"
    everything = api.call("GET", path, alice.key).json
    assert set(everything) == {"messages", "total", "page", "pageSize", "nextCursor"}
    assert [m["content"] for m in everything["messages"]] == [f"message {i}" for i in range(5)]
    assert [m["senderName"] for m in everything["messages"]] == ["Bob", "Alice", "Bob", "Alice", "Bob"]
    second = api.call("GET", f"{path}?page=2&pageSize=2", bob.key).json
    assert (second["total"], second["page"], second["pageSize"]) == (5, 2, 2)
    assert [m["content"] for m in second["messages"]] == ["message 2", "message 3"]
    assert api.call("GET", f"{path}?page=3&pageSize=2", bob.key).json["messages"][0]["content"] == "message 4"
    assert api.call("GET", f"{path}?page=4&pageSize=2", bob.key).json["messages"] == []


def test_conversations_are_listed_by_recent_activity_and_subject_type(api: Api, alice: User, bob: User) -> None:
    _, first = accepted_conversation(api, alice, bob)
    _, second = accepted_conversation(api, alice, bob)
    created = profile_request(api, alice, bob.user_id).json
    third = decide(api, bob, created["requestId"], "ACCEPTED").json["conversationId"]
    listed = api.call("GET", "/v1/conversations", alice.key).json
    assert [c["conversationId"] for c in listed["conversations"]] == [third, second, first]
    send(api, bob, first, "bump")
    listed = api.call("GET", "/v1/conversations", alice.key).json
    assert [c["conversationId"] for c in listed["conversations"]] == [first, third, second]
    profile_only = api.call("GET", "/v1/conversations?subjectType=PROFILE", alice.key).json
    assert [c["conversationId"] for c in profile_only["conversations"]] == [third]
    listing_only = api.call("GET", "/v1/conversations?subjectType=LISTING&pageSize=1", alice.key).json
    assert listing_only["total"] == 2
    assert [c["conversationId"] for c in listing_only["conversations"]] == [first]


def test_leaving_a_conversation(api: Api, alice: User, bob: User) -> None:
    _, conversation_id = accepted_conversation(api, alice, bob)
    send(api, alice, conversation_id, "before")
    response = api.call("DELETE", f"/v1/conversations/{conversation_id}", bob.key)
    assert response.status_code == 200, response.json
    assert response.json == {"success": True}
    other = api.call("GET", f"/v1/conversations/{conversation_id}", alice.key).json
    assert other["otherLeft"] is True
    assert {p["userId"]: p["left"] for p in other["participants"]} == {alice.user_id: False, bob.user_id: True}
    assert api.call("GET", "/v1/conversations", alice.key).json["conversations"][0]["otherLeft"] is True
    assert api.call("GET", "/v1/conversations", bob.key).json["total"] == 0
    own_view = api.call("GET", f"/v1/conversations/{conversation_id}", bob.key).json
    assert own_view["otherLeft"] is False
    assert_error(send(api, alice, conversation_id, "are you there?"), 403, "FORBIDDEN")
    assert_error(send(api, bob, conversation_id, "one more thing"), 403, "FORBIDDEN")
    history = api.call("GET", f"/v1/conversations/{conversation_id}/messages", alice.key).json
    assert [m["content"] for m in history["messages"]] == ["before"]
    assert api.call("DELETE", f"/v1/conversations/{conversation_id}", bob.key).json == {"success": True}
    assert len(events(outbox.MESSAGE_NEW)) == 1


def test_concurrent_messages_all_get_a_place(api: Api, alice: User, bob: User) -> None:
    _, conversation_id = accepted_conversation(api, alice, bob)
    callers = [Caller(alice.user_id), Caller(bob.user_id)]
    results = run_concurrently(6, lambda i: service.send_message(callers[i % 2], conversation_id, f"m{i}"))
    assert all(not isinstance(r, BaseException) for r in results), results
    listed = api.call("GET", f"/v1/conversations/{conversation_id}/messages", alice.key).json
    assert listed["total"] == 6
    assert sorted(m["content"] for m in listed["messages"]) == [f"m{i}" for i in range(6)]
    assert len(events(outbox.MESSAGE_NEW)) == 6


def test_a_leave_racing_a_message_never_lets_the_message_through(api: Api, alice: User, bob: User) -> None:
    _, conversation_id = accepted_conversation(api, alice, bob)

    def act(i: int) -> Any:
        if i == 0:
            return service.leave(Caller(bob.user_id), conversation_id)
        return service.send_message(Caller(alice.user_id), conversation_id, "racing")

    left, sent = run_concurrently(2, act)
    assert not isinstance(left, BaseException)
    detail = api.call("GET", f"/v1/conversations/{conversation_id}", alice.key).json
    assert detail["otherLeft"] is True
    assert detail["messageCount"] == (0 if isinstance(sent, BaseException) else 1)
    assert len(events(outbox.MESSAGE_NEW)) == detail["messageCount"]


def test_overlong_ids_are_404_without_a_read(api: Api, alice: User) -> None:
    long = "x" * 3000
    paths = [
        ("GET", f"/v1/conversations/{long}"), ("GET", f"/v1/conversations/{long}/messages"),
        ("DELETE", f"/v1/conversations/{long}"), ("GET", f"/v1/profiles/{long}"), ("GET", f"/v1/match-requests/{long}"),
        ("GET", f"/v1/match-requests/req_{long}"), ("GET", f"/v1/match-requests/listing/{long}"),
    ]
    for method, path in paths:
        assert_error(api.call(method, path, alice.key), 404, "NOT_FOUND")
    assert_error(send(api, alice, long, "hi"), 404, "NOT_FOUND")
    body = {"status": "ACCEPTED"}
    assert_error(api.call("PATCH", f"/v1/match-requests/req_{long}_abcdefghijklmnopqrst/status", alice.key, body), 404, "NOT_FOUND")
