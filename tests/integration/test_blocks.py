"""Blocking: ``PUT``/``DELETE``/``GET /v1/me/blocks``. While A blocks B, requests and messages
between them are refused (403 ``BLOCKED``) in their own transactions, B's pending requests to A
are rejected without a reason, and neither sees the other's listings or profile (404, left out
of search); unblocking restores visibility only."""

from __future__ import annotations

from typing import Any

from chalicelib.auth.service import Caller
from chalicelib.kernel import errors
from chalicelib.match_requests import service as match_requests_service
from chalicelib.match_requests.models import MatchRequestCreate
from chalicelib.workflows import blocking
from tests.integration.conftest import Api, User, make_user
from tests.integration.helpers import assert_error, counting_reads
from tests.integration.request_helpers import (
    accepted_conversation,
    active_listing,
    decide,
    match_request,
    profile_request,
    run_concurrently,
)


def _block(api: Api, user: User, other: User | str) -> Any:
    other_id = other if isinstance(other, str) else other.user_id
    return api.call("PUT", f"/v1/me/blocks/{other_id}", user.key)


def test_block_is_listed_newest_first_and_repeating_it_answers_the_standing_block(api: Api, alice: User, bob: User) -> None:
    carol = make_user("Carol")
    first = _block(api, alice, bob)
    assert first.status_code == 200
    assert first.json["userId"] == bob.user_id
    assert first.json["displayName"] == "Bob"
    assert _block(api, alice, carol).status_code == 200
    again = _block(api, alice, bob)
    assert again.json == first.json
    listed = api.call("GET", "/v1/me/blocks", alice.key).json
    assert [b["userId"] for b in listed["blocks"]] == [carol.user_id, bob.user_id]
    assert api.call("GET", "/v1/me/blocks", bob.key).json["blocks"] == []  # being blocked is not listed


def test_a_body_on_block_is_refused_by_field_and_blocks_nobody(api: Api, alice: User, bob: User) -> None:
    """The operation takes no body, so a field sent with it is a 400 naming it, not dropped unread."""
    refused = api.call("PUT", f"/v1/me/blocks/{bob.user_id}", alice.key, body={"reason": "spam"})
    body = assert_error(refused, 400, "VALIDATION_ERROR", field="reason")
    assert body["details"] == [{"field": "reason", "issue": "not a field of this operation: it takes no body"}]
    not_an_object = api.call("PUT", f"/v1/me/blocks/{bob.user_id}", alice.key, body=["spam"])
    assert_error(not_an_object, 400, "VALIDATION_ERROR", field="body")
    assert api.call("GET", "/v1/me/blocks", alice.key).json["blocks"] == []
    assert api.call("PUT", f"/v1/me/blocks/{bob.user_id}", alice.key, body={}).status_code == 200


def test_blocks_page_with_a_cursor(api: Api, alice: User) -> None:
    others = [make_user(f"Other {i}") for i in range(5)]
    for other in others:
        _block(api, alice, other)
    api.call("GET", "/v1/me/blocks", alice.key)  # warm the key cache
    seen: list[str] = []
    query = "pageSize=2"
    while True:
        with counting_reads() as reads:
            page = api.call("GET", f"/v1/me/blocks?{query}", alice.key).json
        assert reads.by_operation["Query"] <= 3
        seen += [b["userId"] for b in page["blocks"]]
        if page["nextCursor"] is None:
            break
        query = f"pageSize=2&cursor={page['nextCursor']}"
    assert seen == [o.user_id for o in reversed(others)]


def test_blocking_yourself_or_an_unknown_user_is_a_validation_error(api: Api, alice: User) -> None:
    assert_error(_block(api, alice, alice), 400, "VALIDATION_ERROR", "userId")
    assert_error(_block(api, alice, "usr_ghost"), 400, "VALIDATION_ERROR", "userId")
    assert api.call("GET", "/v1/me/blocks", alice.key).json["blocks"] == []


def test_requests_across_a_block_are_refused_both_ways(api: Api, alice: User, bob: User) -> None:
    alices = active_listing(api, alice)
    bobs = active_listing(api, bob)
    _block(api, alice, bob)
    assert_error(match_request(api, bob, alices["id"]), 403, "BLOCKED")
    assert_error(profile_request(api, bob, alice.user_id), 403, "BLOCKED")
    assert_error(match_request(api, alice, bobs["id"]), 403, "BLOCKED")
    assert api.call("GET", "/v1/match-requests/incoming", alice.key).json["total"] == 0
    assert api.call("GET", "/v1/match-requests/mine", bob.key).json["total"] == 0


def test_messages_across_a_block_are_refused_both_ways(api: Api, alice: User, bob: User) -> None:
    _, conversation = accepted_conversation(api, alice, bob)
    _block(api, alice, bob)
    for sender in (bob, alice):
        sent = api.call("POST", f"/v1/conversations/{conversation}/messages", sender.key, {"content": "hello?"})
        assert_error(sent, 403, "BLOCKED")
    assert api.call("GET", f"/v1/conversations/{conversation}/messages", alice.key).json["messages"] == []


def test_a_dashboard_reply_refused_by_a_block_keeps_the_typed_message(api: Api, alice: User, bob: User) -> None:
    """Bob had the conversation open when Alice blocked him: the page comes back (403) with his
    message in its box and the reason under it, not a bare error page."""
    from tests.integration.test_dashboard import signed_in

    _, conversation = accepted_conversation(api, alice, bob)
    b = signed_in(api, bob)
    token = b.csrf(f"/dashboard/conversations/{conversation}")
    api.call("PUT", f"/v1/me/blocks/{bob.user_id}", alice.key)
    refused = b.post(f"/dashboard/conversations/{conversation}/messages", {"csrf_token": token, "content": "my long typed message"})
    assert refused.status_code == 403
    assert "my long typed message</textarea>" in refused.text
    assert 'id="content-error"' in refused.text
    assert api.call("GET", f"/v1/conversations/{conversation}/messages", alice.key).json["total"] == 0


def test_a_dashboard_reply_refused_because_the_other_side_left_keeps_the_typed_message(api: Api, alice: User, bob: User) -> None:
    """Bob had the conversation open when Alice left it: the page comes back (403) with his message
    in its box and the reason under it, and no Send (nothing more can be sent)."""
    from tests.integration.test_dashboard import signed_in

    _, conversation = accepted_conversation(api, alice, bob)
    b = signed_in(api, bob)
    token = b.csrf(f"/dashboard/conversations/{conversation}")
    assert api.call("DELETE", f"/v1/conversations/{conversation}", alice.key).status_code == 200
    refused = b.post(f"/dashboard/conversations/{conversation}/messages", {"csrf_token": token, "content": "typed before she left"})
    assert refused.status_code == 403
    assert "typed before she left</textarea>" in refused.text
    assert 'id="content-error"' in refused.text
    assert 'role="alert"' in refused.text
    assert ">Send</button>" not in refused.text
    assert ">Send</button>" not in b.get(f"/dashboard/conversations/{conversation}").text  # a fresh view: no box at all


def test_pending_requests_of_the_blocked_user_are_rejected_without_a_reason(api: Api, alice: User, bob: User) -> None:
    carol = make_user("Carol")
    listing = active_listing(api, alice)
    pending = match_request(api, bob, listing["id"]).json
    other = match_request(api, carol, listing["id"]).json
    _block(api, alice, bob)
    seen_by_bob = api.call("GET", f"/v1/match-requests/{pending['requestId']}", bob.key).json
    assert seen_by_bob["status"] == "REJECTED"
    assert seen_by_bob.get("reason") is None
    assert api.call("GET", f"/v1/match-requests/{other['requestId']}", carol.key).json["status"] == "PENDING"


def test_neither_sees_the_others_listings_and_profile_while_the_block_stands(
    api: Api, alice: User, bob: User, runner: Any
) -> None:
    alices = active_listing(api, alice)
    bobs = active_listing(api, bob)
    runner.drain()
    _block(api, alice, bob)
    for viewer, listing, owner in ((bob, alices, alice), (alice, bobs, bob)):
        assert_error(api.call("GET", f"/v1/listings/{listing['id']}", viewer.key), 404, "NOT_FOUND")
        assert_error(api.call("GET", f"/v1/profiles/{owner.user_id}", viewer.key), 404, "NOT_FOUND")
        found = api.call("GET", "/v1/listings/search?category=jobs", viewer.key).json["listings"]
        assert listing["id"] not in [item["id"] for item in found]
        profiles = api.call("GET", "/v1/profiles/search?pageSize=100", viewer.key).json["profiles"]
        assert owner.user_id not in [p["userId"] for p in profiles]
    carol = make_user("Carol")
    found = api.call("GET", "/v1/listings/search?category=jobs", carol.key).json["listings"]
    assert {alices["id"], bobs["id"]} <= {item["id"] for item in found}  # others still see both


def test_the_owners_routes_of_a_listing_answer_as_for_a_missing_one_across_a_block(
    api: Api, alice: User, bob: User
) -> None:
    listing = active_listing(api, alice)
    carol = make_user("Carol")
    owners_routes = (("GET", f"/v1/match-requests/listing/{listing['id']}", None),
                     ("PATCH", f"/v1/listings/{listing['id']}", {"meta": {"title": "Taken over"}}),
                     ("PATCH", f"/v1/listings/{listing['id']}/status", {"status": "PAUSED"}),
                     ("DELETE", f"/v1/listings/{listing['id']}", None))
    for method, path, body in owners_routes:  # a public listing: its existence is no secret
        assert_error(api.call(method, path, carol.key, body), 403, "FORBIDDEN")
    _block(api, bob, alice)
    for method, path, body in owners_routes:
        missing = api.call(method, path.replace(listing["id"], "lst_01M8TJNX812KDJS021GBVVE5Q2"), alice.key, body)
        refused = api.call(method, path, bob.key, body)
        assert_error(refused, 404, "NOT_FOUND")
        assert refused.json["error"] == missing.json["error"].replace("lst_01M8TJNX812KDJS021GBVVE5Q2", listing["id"])
    assert api.call("GET", f"/v1/listings/{listing['id']}", alice.key).json["status"] == "ACTIVE"  # nothing changed


def test_unblocking_restores_visibility_but_not_what_was_rejected(api: Api, alice: User, bob: User, runner: Any) -> None:
    listing = active_listing(api, alice)
    runner.drain()
    pending = match_request(api, bob, listing["id"]).json
    _block(api, alice, bob)
    removed = api.call("DELETE", f"/v1/me/blocks/{bob.user_id}", alice.key)
    assert removed.status_code == 200
    assert removed.json == {"id": bob.user_id, "deleted": True}
    assert api.call("GET", f"/v1/listings/{listing['id']}", bob.key).status_code == 200
    assert api.call("GET", f"/v1/profiles/{alice.user_id}", bob.key).status_code == 200
    assert api.call("GET", f"/v1/match-requests/{pending['requestId']}", bob.key).json["status"] == "REJECTED"
    assert api.call("GET", "/v1/me/blocks", alice.key).json["blocks"] == []
    assert_error(api.call("DELETE", f"/v1/me/blocks/{bob.user_id}", alice.key), 404, "NOT_FOUND")


def test_a_mutual_block_stands_until_both_lift_it(api: Api, alice: User, bob: User) -> None:
    listing = active_listing(api, alice)
    _block(api, alice, bob)
    _block(api, bob, alice)
    assert api.call("DELETE", f"/v1/me/blocks/{bob.user_id}", alice.key).status_code == 200
    assert_error(match_request(api, bob, listing["id"]), 403, "BLOCKED")
    assert [b["userId"] for b in api.call("GET", "/v1/me/blocks", bob.key).json["blocks"]] == [alice.user_id]
    assert api.call("DELETE", f"/v1/me/blocks/{alice.user_id}", bob.key).status_code == 200
    assert match_request(api, bob, listing["id"]).status_code == 201


def test_a_block_can_be_lifted_by_the_blocker_only(api: Api, alice: User, bob: User) -> None:
    _block(api, alice, bob)
    assert_error(api.call("DELETE", f"/v1/me/blocks/{alice.user_id}", bob.key), 404, "NOT_FOUND")
    assert [b["userId"] for b in api.call("GET", "/v1/me/blocks", alice.key).json["blocks"]] == [bob.user_id]


def test_a_request_sent_while_the_block_is_written_is_refused_or_rejected_never_pending(api: Api, alice: User, bob: User) -> None:
    """Through the services: a Chalice app holds one ``current_request``, so concurrent HTTP calls
    through the in-process test client would race on it rather than on the data."""
    listing = active_listing(api, alice)
    body = MatchRequestCreate.model_validate({"listingId": listing["id"], "message": "Hello", "channels": ["telegram"]})

    def act(index: int) -> Any:
        if index == 0:
            return blocking.block_user(Caller(alice.user_id), bob.user_id)
        return match_requests_service.create_match_request(Caller(bob.user_id), body)

    blocked, sent = run_concurrently(2, act)
    assert not isinstance(blocked, BaseException)
    if isinstance(sent, BaseException):
        assert isinstance(sent, errors.Blocked), sent
    else:
        seen = api.call("GET", f"/v1/match-requests/{sent.requestId}", bob.key).json
        assert seen["status"] == "REJECTED"
    incoming = api.call("GET", "/v1/match-requests/incoming?status=PENDING", alice.key).json
    assert incoming["total"] == 0


def test_a_decision_does_not_reopen_a_rejected_request_after_a_block(api: Api, alice: User, bob: User) -> None:
    listing = active_listing(api, alice)
    pending = match_request(api, bob, listing["id"]).json
    _block(api, alice, bob)
    assert_error(decide(api, alice, pending["requestId"], "ACCEPTED"), 409, "CONFLICT")


def test_the_blocked_user_cannot_accept_the_blockers_pending_request_but_can_reject_it(api: Api, alice: User, bob: User) -> None:
    bobs = active_listing(api, bob)
    first, second = match_request(api, alice, bobs["id"]).json, profile_request(api, alice, bob.user_id).json
    _block(api, alice, bob)  # Alice's own requests to Bob stay PENDING
    assert_error(decide(api, bob, first["requestId"], "ACCEPTED"), 403, "BLOCKED")
    assert api.call("GET", f"/v1/match-requests/{first['requestId']}", alice.key).json["status"] == "PENDING"
    assert api.call("GET", "/v1/conversations", bob.key).json["conversations"] == []
    assert decide(api, bob, second["requestId"], "REJECTED").status_code == 200


def test_the_dashboard_blocks_beside_a_conversation_and_a_request_and_lists_the_blocks(
    api: Api, alice: User, bob: User
) -> None:
    from tests.integration.test_dashboard import signed_in

    _, conversation = accepted_conversation(api, alice, bob)
    carol = make_user("Carol")
    listing = active_listing(api, alice)
    match_request(api, carol, listing["id"])
    b = signed_in(api, alice)
    page = b.get(f"/dashboard/conversations/{conversation}")
    assert f'action="/dashboard/blocks/{bob.user_id}"' in page.text
    assert ">Block Bob<" in page.text
    requests_page = b.get(f"/dashboard/listings/{listing['id']}")
    assert f'action="/dashboard/blocks/{carol.user_id}"' in requests_page.text
    token = b.csrf("/dashboard/blocks")
    assert b.post(f"/dashboard/blocks/{bob.user_id}", {"csrf_token": token}).status_code == 303
    blocked = b.post(f"/dashboard/blocks/{carol.user_id}", {"csrf_token": token})
    assert blocked.status_code == 303
    assert b.get(blocked.headers["Location"]).text.count('role="status"') == 1  # the notice, announced once
    listed = b.get("/dashboard/blocks")
    assert listed.text.index("<strong>Carol</strong>") < listed.text.index("<strong>Bob</strong>")  # newest first
    sent = api.call("POST", f"/v1/conversations/{conversation}/messages", bob.key, {"content": "hi"})
    assert_error(sent, 403, "BLOCKED")
    assert b.post(f"/dashboard/blocks/{bob.user_id}/unblock", {"csrf_token": token}).status_code == 303
    assert "<strong>Bob</strong>" not in b.get("/dashboard/blocks").text
    assert b.post(f"/dashboard/blocks/{alice.user_id}", {"csrf_token": token}).status_code == 400
