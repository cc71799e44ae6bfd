"""The Dashboard's unread badges and live conversations over in-process moto: badges on the list,
read on opening, and the pollers' ETag / If-None-Match (an idle poll is a 304 without a body)."""

from __future__ import annotations

import re
from typing import Any

from tests.integration.conftest import Api, User
from tests.integration.request_helpers import accepted_conversation
from tests.integration.test_dashboard import signed_in

HTMX = {"hx-request": "true"}


def send(api: Api, user: User, conversation_id: str, content: str) -> str:
    response = api.call("POST", f"/v1/conversations/{conversation_id}/messages", user.key, {"content": content})
    assert response.status_code == 201, response.json
    return str(response.json["messageId"])


def unread(api: Api, user: User) -> int:
    return int(api.call("GET", "/v1/me/unread", user.key).json["unreadCount"])


def poller_tag(text: str, poller_id: str) -> str:
    match = re.search(rf'id="{poller_id}"[^>]*hx-headers=\'{{"If-None-Match": "\\"(u\d+-\d+)\\""}}\'', text)
    assert match, text
    return f'"{match.group(1)}"'


def test_list_badges_and_opening_a_conversation_reads_it(api: Api, alice: User, bob: User) -> None:
    _, conversation_id = accepted_conversation(api, alice, bob)
    for text in ("one", "two"):
        send(api, bob, conversation_id, text)
    b = signed_in(api, alice)
    listed = b.get("/dashboard/conversations").text
    assert '<span class="badge unread">2 unread</span>' in listed
    badge = b.get("/dashboard/live/unread", HTMX)
    assert "2<span class=\"visually-hidden\"> unread</span>" in badge.text
    page = b.get(f"/dashboard/conversations/{conversation_id}")
    assert page.status_code == 200
    assert "two" in page.text
    assert unread(api, alice) == 0
    assert "badge unread" not in b.get("/dashboard/conversations").text
    assert unread(api, bob) == 0  # the reader's own view moves only the reader's marker


def test_an_idle_poll_is_a_304_and_a_new_message_arrives_in_the_next(api: Api, alice: User, bob: User) -> None:
    _, conversation_id = accepted_conversation(api, alice, bob)
    send(api, bob, conversation_id, "first")
    b = signed_in(api, alice)
    page = b.get(f"/dashboard/conversations/{conversation_id}").text
    tag = poller_tag(page, "messages-live")
    assert 'of <span id="messages-shown-total">1 message</span>.' in page  # one, not "1 messages"
    path = f"/dashboard/live/conversations/{conversation_id}?after=1"
    assert f'hx-get="/dashboard/live/conversations/{conversation_id}?after=1"' in page
    idle = b.get(path, {**HTMX, "if-none-match": tag})
    assert idle.status_code == 304
    assert idle.text == ""
    assert idle.headers["ETag"] == tag
    assert idle.headers["Content-Security-Policy"]
    send(api, bob, conversation_id, "second <b>news</b>")
    fresh = b.get(path, {**HTMX, "if-none-match": tag})
    assert fresh.status_code == 200
    assert "second &lt;b&gt;news&lt;/b&gt;" in fresh.text
    assert "first" not in fresh.text
    assert f'hx-get="/dashboard/live/conversations/{conversation_id}?after=2"' in fresh.text
    assert "1 new message." in fresh.text
    # The count line above the list takes the newest number and the total; its first number stays.
    assert figures(fresh.text) == [("last", "2"), ("total", "2 messages")]
    assert unread(api, alice) == 0  # shown, so read
    new_tag = poller_tag(fresh.text, "messages-live")
    assert new_tag != tag
    assert fresh.headers["ETag"] == new_tag
    assert b.get(f"/dashboard/live/conversations/{conversation_id}?after=2", {**HTMX, "if-none-match": new_tag}).status_code == 304


def figures(text: str) -> list[tuple[str, str]]:
    """The count line's figures a fragment replaces out of band, in order."""
    return re.findall(r'<span id="messages-shown-(\w+)" hx-swap-oob="innerHTML">([^<]+)</span>', text)


def test_a_conversation_opened_empty_gets_its_count_line_with_the_first_messages(api: Api, alice: User, bob: User) -> None:
    _, conversation_id = accepted_conversation(api, alice, bob)
    b = signed_in(api, alice)
    page = b.get(f"/dashboard/conversations/{conversation_id}").text
    assert re.search(r'<p id="messages-shown"[^>]*></p>', page)  # nothing shown, no line yet
    send(api, bob, conversation_id, "hello")
    send(api, bob, conversation_id, "again")
    fresh = b.get(f"/dashboard/live/conversations/{conversation_id}?after=0", HTMX).text
    line = re.search(r'<p id="messages-shown"[^>]*hx-swap-oob="innerHTML">(.*?)</p>', fresh, re.S)
    assert line is not None
    assert re.sub(r"<[^>]+>", "", line[1]) == "Showing 1–2 of 2 messages."
    assert figures(fresh) == []


def test_the_list_and_badge_pollers_answer_304_until_a_message_arrives(api: Api, alice: User, bob: User) -> None:
    _, conversation_id = accepted_conversation(api, alice, bob)
    b = signed_in(api, alice)
    tag = poller_tag(b.get("/dashboard/conversations").text, "conversations-live")
    assert b.get("/dashboard/live/conversations", {**HTMX, "if-none-match": tag}).status_code == 304
    badge = b.get("/dashboard/live/unread", HTMX)
    assert badge.headers["ETag"] == tag
    assert "badge unread" not in badge.text
    assert b.get("/dashboard/live/unread", {**HTMX, "if-none-match": tag}).status_code == 304
    send(api, bob, conversation_id, "ping")
    listed = b.get("/dashboard/live/conversations", {**HTMX, "if-none-match": tag})
    assert listed.status_code == 200
    assert '<span class="badge unread">1 unread</span>' in listed.text
    assert 'id="conversations-live"' in listed.text
    assert 'hx-swap-oob="outerHTML"' in listed.text
    assert "1<span class=\"visually-hidden\"> unread</span>" in b.get("/dashboard/live/unread", {**HTMX, "if-none-match": tag}).text


def test_pollers_need_a_session_and_a_valid_after(api: Api, alice: User, bob: User) -> None:
    _, conversation_id = accepted_conversation(api, alice, bob)
    b = signed_in(api, alice)
    assert b.get(f"/dashboard/live/conversations/{conversation_id}?after=x", HTMX).status_code == 400
    assert b.get("/dashboard/live/conversations/cnv_nobody?after=0", HTMX).status_code == 404
    anonymous = api.client.http.get("/dashboard/live/unread", headers=HTMX)
    assert anonymous.status_code == 401


def test_opening_a_conversation_reads_it_when_its_newest_page_shows_only_the_readers_messages(
    api: Api, alice: User, bob: User
) -> None:
    _, conversation_id = accepted_conversation(api, alice, bob)
    for text in ("one", "two"):
        send(api, bob, conversation_id, text)
    send(api, alice, conversation_id, "mine")
    b = signed_in(api, alice)
    assert unread(api, alice) == 2
    page = b.get(f"/dashboard/conversations/{conversation_id}?pageSize=1")  # its newest page: "mine" only
    assert page.status_code == 200
    assert "mine" in page.text
    assert "two" not in page.text
    assert unread(api, alice) == 0


def test_a_poll_from_far_behind_moves_no_read_marker_back(api: Api, alice: User, bob: User, monkeypatch: Any) -> None:
    from chalicelib.conversations import service as conversations

    monkeypatch.setattr(conversations, "MAX_MESSAGES_AFTER", 2)  # a page of the poll: two messages
    _, conversation_id = accepted_conversation(api, alice, bob)
    for n in range(4):
        send(api, bob, conversation_id, f"m{n}")
    b = signed_in(api, alice)
    b.get(f"/dashboard/conversations/{conversation_id}")
    assert unread(api, alice) == 0
    behind = b.get(f"/dashboard/live/conversations/{conversation_id}?after=0", HTMX)  # messages 1-2 of 4
    assert behind.status_code == 200
    assert unread(api, alice) == 0
    caught_up = b.get(f"/dashboard/live/conversations/{conversation_id}?after=2", HTMX)  # 3-4: the newest
    assert caught_up.status_code == 200
    assert unread(api, alice) == 0


def test_an_erased_participant_is_offered_no_block(api: Api, alice: User, bob: User, runner: Any) -> None:
    _, conversation_id = accepted_conversation(api, alice, bob)
    b = signed_in(api, alice)
    assert f"/dashboard/blocks/{bob.user_id}" in b.get(f"/dashboard/conversations/{conversation_id}").text
    assert api.call("DELETE", "/v1/me", bob.key).status_code == 202
    runner.drain()
    page = b.get(f"/dashboard/conversations/{conversation_id}").text
    assert "Deleted user" in page
    assert f"/dashboard/blocks/{bob.user_id}" not in page


def test_a_suspended_participant_is_offered_no_block(api: Api, admin: User, alice: User, bob: User) -> None:
    _, conversation_id = accepted_conversation(api, alice, bob)
    b = signed_in(api, alice)
    report = api.call_json("POST", "/v1/reports", alice.key, {"subjectType": "profile", "subjectId": bob.user_id,
                                                               "reason": "scam"}, status=201)
    api.call_json("POST", f"/v1/admin/reports/{report['reportId']}/decision", admin.key, {"decision": "suspend_user"})
    page = b.get(f"/dashboard/conversations/{conversation_id}")
    assert page.status_code == 200
    assert f"/dashboard/blocks/{bob.user_id}" not in page.text
