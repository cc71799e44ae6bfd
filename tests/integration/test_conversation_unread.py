"""Unread counts: ``unreadCount`` per conversation, ``POST /v1/conversations/{id}/read`` and
``GET /v1/me/unread`` (exact under concurrent messages, marks and leaves; ETag and 304)."""

from __future__ import annotations

from typing import Any

from chalicelib.auth.service import Caller
from chalicelib.conversations import service
from tests.integration.conftest import Api, User, make_user
from tests.integration.helpers import assert_error
from tests.integration.request_helpers import accepted_conversation, run_concurrently


def send(api: Api, user: User, conversation_id: str, content: str) -> Any:
    response = api.call("POST", f"/v1/conversations/{conversation_id}/messages", user.key, {"content": content})
    assert response.status_code == 201, response.json
    return response.json


def unread(api: Api, user: User) -> int:
    response = api.call("GET", "/v1/me/unread", user.key)
    assert response.status_code == 200, response.json
    return int(response.json["unreadCount"])


def conversation(api: Api, user: User, conversation_id: str) -> Any:
    return api.call("GET", f"/v1/conversations/{conversation_id}", user.key).json


def mark(api: Api, user: User, conversation_id: str, body: dict[str, str] | None = None) -> Any:
    return api.call("POST", f"/v1/conversations/{conversation_id}/read", user.key, body if body is not None else {})


def test_messages_from_the_other_party_are_unread_until_marked(api: Api, alice: User, bob: User) -> None:
    _, conversation_id = accepted_conversation(api, alice, bob)
    assert unread(api, alice) == unread(api, bob) == 0
    first = send(api, bob, conversation_id, "one")
    send(api, bob, conversation_id, "two")
    send(api, alice, conversation_id, "mine")  # the caller's own messages are never unread
    third = send(api, bob, conversation_id, "three")
    assert conversation(api, alice, conversation_id)["unreadCount"] == 3
    assert conversation(api, bob, conversation_id)["unreadCount"] == 1
    listed = api.call("GET", "/v1/conversations", alice.key).json["conversations"]
    assert [c["unreadCount"] for c in listed] == [3]
    assert (unread(api, alice), unread(api, bob)) == (3, 1)

    # Up to the first message: "two" and "three" are still unread (the caller's own is not counted).
    marked = mark(api, alice, conversation_id, {"messageId": first["messageId"]})
    assert marked.status_code == 200, marked.json
    assert marked.json == {"conversationId": conversation_id, "lastReadMessageId": first["messageId"],
                           "unreadCount": 2}
    assert conversation(api, alice, conversation_id)["lastReadMessageId"] == first["messageId"]
    # {} marks up to the newest.
    assert mark(api, alice, conversation_id).json == {"conversationId": conversation_id, "lastReadMessageId": third["messageId"],
                                                      "unreadCount": 0}
    assert unread(api, alice) == 0
    # Backwards too: marking an older message makes the later ones unread again.
    assert mark(api, alice, conversation_id, {"messageId": first["messageId"]}).json["unreadCount"] == 2
    assert unread(api, alice) == 2
    assert unread(api, bob) == 1


def test_marking_rejects_foreign_messages_and_strangers(api: Api, alice: User, bob: User) -> None:
    _, conversation_id = accepted_conversation(api, alice, bob)
    send(api, bob, conversation_id, "hello")
    carol, dave = make_user("Carol"), make_user("Dave")
    _, other_id = accepted_conversation(api, carol, dave)
    foreign = send(api, dave, other_id, "elsewhere")
    assert_error(mark(api, alice, conversation_id, {"messageId": foreign["messageId"]}), 400, "VALIDATION_ERROR", field="messageId")
    assert_error(mark(api, alice, conversation_id, {"messageId": "msg_missing"}), 400, "VALIDATION_ERROR", field="messageId")
    assert_error(mark(api, alice, conversation_id, {"messageId": 5}), 400, "VALIDATION_ERROR", field="messageId")
    assert_error(mark(api, alice, conversation_id, {"other": 1}), 400, "VALIDATION_ERROR")
    assert_error(mark(api, carol, conversation_id), 404, "NOT_FOUND")
    assert unread(api, alice) == 1  # nothing changed


def test_unread_counts_stay_exact_under_concurrent_messages_and_marks(api: Api, alice: User, bob: User) -> None:
    _, conversation_id = accepted_conversation(api, alice, bob)
    _, second_id = accepted_conversation(api, alice, make_user("Carol"))
    second_other = api.call("GET", f"/v1/conversations/{second_id}", alice.key).json["participants"]
    carol_id = next(p["userId"] for p in second_other if p["userId"] != alice.user_id)

    def act(i: int) -> Any:
        if i % 4 == 3:  # Alice marks the first conversation read while messages arrive
            return service.mark_read(Caller(alice.user_id), conversation_id, None)
        sender, target = (Caller(bob.user_id), conversation_id) if i % 2 else (Caller(carol_id), second_id)
        return service.send_message(sender, target, f"m{i}")

    results = run_concurrently(12, act)
    assert all(not isinstance(r, BaseException) for r in results), results
    per_conversation = [conversation(api, alice, c)["unreadCount"] for c in (conversation_id, second_id)]
    # Whatever the order, the total is the sum of the conversations' counts, and each count is the
    # number of messages after the marker.
    assert unread(api, alice) == sum(per_conversation)
    assert per_conversation[1] == 6
    first = conversation(api, alice, conversation_id)
    messages = api.call("GET", f"/v1/conversations/{conversation_id}/messages?pageSize=100", alice.key).json["messages"]
    ids = [m["messageId"] for m in messages]
    after = ids[ids.index(first["lastReadMessageId"]) + 1:] if first["lastReadMessageId"] else ids
    assert per_conversation[0] == len(after)
    service.mark_read(Caller(alice.user_id), conversation_id, None)
    service.mark_read(Caller(alice.user_id), second_id, None)
    assert unread(api, alice) == 0


def test_leaving_takes_the_unread_messages_out_of_the_total(api: Api, alice: User, bob: User) -> None:
    _, conversation_id = accepted_conversation(api, alice, bob)
    for text in ("a", "b"):
        send(api, bob, conversation_id, text)
    assert unread(api, alice) == 2
    assert api.call("DELETE", f"/v1/conversations/{conversation_id}", alice.key).status_code == 200
    assert unread(api, alice) == 0
    assert conversation(api, alice, conversation_id)["unreadCount"] == 0


def test_a_leave_racing_messages_keeps_the_total_exact(api: Api, alice: User, bob: User) -> None:
    _, conversation_id = accepted_conversation(api, alice, bob)

    def act(i: int) -> Any:
        if i == 0:
            return service.leave(Caller(alice.user_id), conversation_id)
        return service.send_message(Caller(bob.user_id), conversation_id, f"m{i}")

    results = run_concurrently(4, act)
    assert not isinstance(results[0], BaseException), results
    assert unread(api, alice) == 0


def test_unread_has_an_etag_and_answers_304_until_a_message_arrives(api: Api, alice: User, bob: User) -> None:
    _, conversation_id = accepted_conversation(api, alice, bob)
    first = api.call("GET", "/v1/me/unread", alice.key)
    tag = first.headers["ETag"]
    assert api.call("GET", "/v1/me/unread", alice.key, headers={"if-none-match": tag}).status_code == 304
    send(api, bob, conversation_id, "new")
    changed = api.call("GET", "/v1/me/unread", alice.key, headers={"if-none-match": tag})
    assert changed.status_code == 200
    assert changed.json == {"unreadCount": 1}
    assert changed.headers["ETag"] != tag
