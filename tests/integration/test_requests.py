"""Match requests and profile requests: creation rules, uniqueness under concurrency, lists,
decisions (incl. a concurrent double decision), outbox events, and listing deletion."""

from __future__ import annotations

import os
from typing import Any

import pytest
from aws_lambda_powertools.utilities.batch.exceptions import BatchProcessingError

from chalicelib.auth.service import Caller
from chalicelib.kernel import errors
from chalicelib.kernel.config import settings
from chalicelib.listings import repository as listings
from chalicelib.match_requests import service
from chalicelib.match_requests.models import MatchRequestCreate, StatusChange
from chalicelib.persistence import outbox, storage
from chalicelib.workflows import handlers, listing_deletion
from chalicelib.workflows import request_decisions as decisions
from scripts import lists_backfill
from tests.integration.conftest import Api, User, make_user
from tests.integration.helpers import (
    Stack,
    assert_error,
    class_stack,  # noqa: F401  (the class-scoped ``stack`` fixture)
    create_listing,
    put_webhook,
)
from tests.integration.request_helpers import (
    accepted_conversation,
    active_listing,
    decide,
    events,
    match_request,
    profile_request,
    run_concurrently,
)
from tests.integration.webhook_helpers import stream_event
from tests.script_modules import load_script

REQUEST_FIELDS = {
    "requestId", "subjectType", "subjectId", "status", "listingId", "listingTitle", "userId", "requesterId",
    "recipientId", "profile", "channels", "message", "reason", "conversationId", "createdAt", "respondedAt",
}
SOCIAL_KEYS = {"x", "linkedin", "github", "instagram", "tiktok", "youtube", "website"}


# --- POST /v1/match-requests ---------------------------------------------------------------


def test_match_request_is_created_pending_with_the_spec_fields(api: Api, alice: User, bob: User) -> None:
    listing = active_listing(api, alice)
    response = match_request(api, bob, listing["id"], ["telegram", "email"], "I would like to apply")
    assert response.status_code == 201, response.json
    body = response.json
    assert set(body) == REQUEST_FIELDS
    assert body["status"] == "PENDING"
    assert body["subjectType"] == "LISTING"
    assert body["listingId"] == body["subjectId"] == listing["id"]
    assert body["listingTitle"] == listing["title"]
    assert body["requesterId"] == bob.user_id
    assert body["recipientId"] == alice.user_id
    assert body["userId"] is None
    assert body["reason"] is None
    assert body["respondedAt"] is None
    assert body["channels"] == ["telegram", "email"]
    assert body["message"] == "I would like to apply"
    assert body["profile"]["displayName"] == "Bob"
    assert body["profile"]["verifiedLevel"] == 0
    assert body["profile"]["country"] == "fr"
    assert set(body["profile"]["socialLinks"]) == SOCIAL_KEYS
    assert body["createdAt"].endswith("Z")


def test_listing_detail_my_request_is_null_then_the_callers_request(api: Api, alice: User, bob: User) -> None:
    listing = active_listing(api, alice)
    assert api.call("GET", f"/v1/listings/{listing['id']}", bob.key).json["myRequest"] is None
    created = match_request(api, bob, listing["id"]).json
    detail = api.call("GET", f"/v1/listings/{listing['id']}", bob.key).json
    assert detail["myRequest"] == created
    assert detail["profile"]["userId"] == alice.user_id
    carol = make_user("Carol")
    assert api.call("GET", f"/v1/listings/{listing['id']}", carol.key).json["myRequest"] is None
    assert api.call("GET", f"/v1/listings/{listing['id']}", alice.key).json["myRequest"] is None


def test_unknown_listing_is_404(api: Api, bob: User) -> None:
    assert_error(match_request(api, bob, "lst_unknown"), 404, "NOT_FOUND")


@pytest.mark.parametrize("status", ["PENDING", "PAUSED"])
def test_listing_that_is_not_active_is_404(api: Api, alice: User, bob: User, status: str) -> None:
    listing = create_listing(api, alice)
    if status == "PAUSED":
        active = active_listing(api, alice)
        assert api.call("PATCH", f"/v1/listings/{active['id']}/status", alice.key, {"status": "PAUSED"}).status_code == 200
        listing = active
    assert_error(match_request(api, bob, listing["id"]), 404, "NOT_FOUND")


def test_own_listing_is_403(api: Api, alice: User) -> None:
    listing = active_listing(api, alice)
    assert_error(match_request(api, alice, listing["id"]), 403, "FORBIDDEN")


def test_channels_not_connected_by_the_requester_are_a_validation_error(api: Api, alice: User, bob: User) -> None:
    listing = active_listing(api, alice)
    body = assert_error(match_request(api, bob, listing["id"], ["telegram", "discord"]), 400, "VALIDATION_ERROR", "channels")
    assert "discord" in body["details"][0]["issue"]


class TestInvalidBodies:
    """Bodies refused at the edge (nothing written), on one shared stack."""

    @pytest.mark.parametrize(
        ("body", "field"),
        [
            ({"message": "hi", "channels": ["telegram"]}, "listingId"),
            ({"listingId": "x", "channels": ["telegram"]}, "message"),
            ({"listingId": "x", "message": "", "channels": ["telegram"]}, "message"),
            ({"listingId": "x", "message": "   ", "channels": ["telegram"]}, "message"),
            ({"listingId": "x", "message": "a" * 4001, "channels": ["telegram"]}, "message"),
            ({"listingId": "x", "message": "hi", "channels": []}, "channels"),
            ({"listingId": "x", "message": "hi", "channels": ["pigeon"]}, "channels.0"),
            ({"listingId": "x", "message": "hi", "channels": ["telegram"], "extra": 1}, "extra"),
        ],
    )
    def test_invalid_match_request_bodies(self, stack: Stack, body: dict[str, Any], field: str) -> None:
        assert_error(stack.api.call("POST", "/v1/match-requests", stack.bob.key, body), 400, "VALIDATION_ERROR", field)


def test_second_request_for_the_same_listing_is_409(api: Api, alice: User, bob: User) -> None:
    listing = active_listing(api, alice)
    first = match_request(api, bob, listing["id"])
    assert first.status_code == 201
    body = assert_error(match_request(api, bob, listing["id"], message="again"), 409, "CONFLICT")
    assert first.json["requestId"] in body["error"]
    assert len(events(outbox.MATCH_REQUEST_RECEIVED)) == 1


def test_ten_concurrent_identical_requests_create_exactly_one(api: Api, alice: User, bob: User) -> None:
    listing = active_listing(api, alice)
    body = MatchRequestCreate.model_validate({"listingId": listing["id"], "message": "hi", "channels": ["telegram"]})
    caller = Caller(bob.user_id)
    results = run_concurrently(10, lambda _: service.create_match_request(caller, body))
    created = [r for r in results if not isinstance(r, BaseException)]
    conflicts = [r for r in results if isinstance(r, errors.Conflict)]
    assert len(created) == 1, results
    assert len(conflicts) == 9, results
    assert len(events(outbox.MATCH_REQUEST_RECEIVED)) == 1
    mine = api.call("GET", "/v1/match-requests/mine", bob.key).json
    assert mine["total"] == 1
    assert (listings.get(listing["id"]) or {})["requestCount"] == 1


def test_ten_concurrent_identical_posts_through_the_api(
    api: Api, alice: User, bob: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Chalice's test client swaps os.environ for each request; threads can leave it swapped: restore it after.
    monkeypatch.setattr(os, "environ", os.environ)
    listing = active_listing(api, alice)
    statuses = run_concurrently(10, lambda _: match_request(api, bob, listing["id"]).status_code)
    assert sorted(s for s in statuses if isinstance(s, int)) == [201] + [409] * 9, statuses


def test_match_request_received_event_carries_the_spec_payload(api: Api, alice: User, bob: User) -> None:
    webhook = put_webhook(alice, "wh_1")
    listing = active_listing(api, alice, webhookIds=[webhook])
    created = match_request(api, bob, listing["id"], ["email"], "Hello").json
    [event] = events(outbox.MATCH_REQUEST_RECEIVED)
    assert event["data"] == {
        "requestId": created["requestId"],
        "status": "PENDING",
        "listingId": listing["id"],
        "listingTitle": listing["title"],
        "requesterId": bob.user_id,
        "profile": {
            "displayName": "Bob", "verifiedLevel": 0, "country": "fr", "socialLinks": dict.fromkeys(SOCIAL_KEYS),
        },
        "channels": ["email"],
        "message": "Hello",
        "createdAt": created["createdAt"],
    }
    assert event["routing"] == {"recipientId": alice.user_id, "listingId": listing["id"], "webhookIds": [webhook]}


# --- POST /v1/profile-requests --------------------------------------------------------------


def test_profile_request_is_created_with_the_target_and_channel(api: Api, alice: User, bob: User) -> None:
    response = profile_request(api, bob, alice.user_id, "email", "Your profile fits our team")
    assert response.status_code == 201, response.json
    body = response.json
    assert body["subjectType"] == "PROFILE"
    assert body["userId"] == body["subjectId"] == body["recipientId"] == alice.user_id
    assert body["listingId"] is None
    assert body["listingTitle"] is None
    assert body["channels"] == ["email"]
    assert body["status"] == "PENDING"
    [event] = events(outbox.PROFILE_REQUEST_RECEIVED)
    assert event["data"] == {
        "requestId": body["requestId"], "status": "PENDING", "userId": alice.user_id, "requesterId": bob.user_id,
        "profile": body["profile"], "channels": ["email"], "message": "Your profile fits our team",
        "createdAt": body["createdAt"],
    }
    assert event["routing"] == {"recipientId": alice.user_id}
    detail = api.call("GET", f"/v1/profiles/{alice.user_id}", bob.key).json
    assert detail["myProfileRequest"] == body


def test_profile_request_to_oneself_is_403(api: Api, alice: User) -> None:
    body = assert_error(profile_request(api, alice, alice.user_id), 403, "FORBIDDEN")
    assert "yourself" in body["error"]


def test_profile_request_to_unknown_user_is_404(api: Api, bob: User) -> None:
    assert_error(profile_request(api, bob, "usr_unknown"), 404, "NOT_FOUND")


def test_profile_request_policy_is_enforced_with_its_reason(api: Api, alice: User, bob: User) -> None:
    api.call("PATCH", "/v1/me/profile", alice.key, {"requestPolicy": {"acceptingRequests": False}})
    body = assert_error(profile_request(api, bob, alice.user_id), 403, "FORBIDDEN")
    policy = api.call("GET", f"/v1/profiles/{alice.user_id}", bob.key).json["profileRequestPolicy"]
    assert body["error"] == policy["reason"]
    assert policy["canRequest"] is False

    api.call("PATCH", "/v1/me/profile", alice.key, {"requestPolicy": {"acceptingRequests": True, "minVerifiedLevel": 2}})
    body = assert_error(profile_request(api, bob, alice.user_id), 403, "FORBIDDEN")
    assert "level 2" in body["error"]
    verified = make_user("Vera", verifiedLevel=2)
    assert profile_request(api, verified, alice.user_id).status_code == 201


def test_profile_request_channel_must_be_active_for_the_target_and_connected_by_the_requester(
    api: Api, alice: User, bob: User
) -> None:
    assert_error(profile_request(api, bob, alice.user_id, "discord"), 400, "VALIDATION_ERROR", "channel")
    api.call("PUT", "/v1/me/channels/discord", alice.key, {"handle": "alice#1"})
    body = assert_error(profile_request(api, bob, alice.user_id, "discord"), 400, "VALIDATION_ERROR", "channel")
    assert "not connected by you" in body["details"][0]["issue"]
    assert_error(profile_request(api, bob, alice.user_id, "carrier-pigeon"), 400, "VALIDATION_ERROR", "channel")


def test_profile_request_to_a_user_without_channels_is_403(api: Api, bob: User) -> None:
    silent = make_user("Silent", channels={})
    body = assert_error(profile_request(api, bob, silent.user_id), 403, "FORBIDDEN")
    assert "channels" in body["error"]


def test_second_profile_request_is_409(api: Api, alice: User, bob: User) -> None:
    assert profile_request(api, bob, alice.user_id).status_code == 201
    assert_error(profile_request(api, bob, alice.user_id, "email"), 409, "CONFLICT")


def test_profile_request_fails_when_the_policy_changes_before_the_write(
    api: Api, alice: User, bob: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    from chalicelib.users import api as users

    original = users.admits_profile_request_op

    def stale(user_id: str, level: int, channel: str) -> dict[str, Any]:
        api.call("PATCH", "/v1/me/profile", alice.key, {"requestPolicy": {"acceptingRequests": False}})
        return original(user_id, level, channel)

    monkeypatch.setattr(users, "admits_profile_request_op", stale)  # the name the requests service reads
    assert_error(profile_request(api, bob, alice.user_id), 409, "CONFLICT")
    assert events(outbox.PROFILE_REQUEST_RECEIVED) == []




# --- lists ------------------------------------------------------------------------------------


def test_lists_of_sent_and_received_requests(api: Api, alice: User, bob: User) -> None:
    first = active_listing(api, alice)
    second = active_listing(api, alice)
    r1 = match_request(api, bob, first["id"]).json
    r2 = match_request(api, bob, second["id"]).json
    p1 = profile_request(api, bob, alice.user_id).json

    mine = api.call("GET", "/v1/match-requests/mine", bob.key).json
    assert set(mine) == {"requests", "total", "page", "pageSize", "nextCursor"}
    assert [r["requestId"] for r in mine["requests"]] == [p1["requestId"], r2["requestId"], r1["requestId"]]
    profiles = api.call("GET", "/v1/match-requests/mine?subjectType=PROFILE", bob.key).json
    assert [r["requestId"] for r in profiles["requests"]] == [p1["requestId"]]
    only_listings = api.call("GET", "/v1/match-requests/mine?subjectType=LISTING", bob.key).json
    assert only_listings["total"] == 2

    incoming = api.call("GET", "/v1/match-requests/incoming", alice.key).json
    assert incoming["total"] == 3
    assert api.call("GET", "/v1/match-requests/incoming?subjectType=PROFILE", alice.key).json["total"] == 1
    assert api.call("GET", "/v1/match-requests/incoming", bob.key).json["total"] == 0
    assert api.call("GET", "/v1/match-requests/mine", alice.key).json["total"] == 0

    paged = api.call("GET", "/v1/match-requests/mine?page=2&pageSize=2", bob.key).json
    assert (paged["total"], paged["page"], paged["pageSize"]) == (3, 2, 2)
    assert [r["requestId"] for r in paged["requests"]] == [r1["requestId"]]

    decide(api, alice, r1["requestId"], "REJECTED")
    pending = api.call("GET", "/v1/match-requests/mine?status=PENDING", bob.key).json
    assert pending["total"] == 2
    assert_error(api.call("GET", "/v1/match-requests/mine?subjectType=OTHER", bob.key), 400, "VALIDATION_ERROR", "subjectType")


def test_requests_of_a_listing_are_for_its_owner_only(api: Api, alice: User, bob: User) -> None:
    listing = active_listing(api, alice)
    created = match_request(api, bob, listing["id"]).json
    carol = make_user("Carol")
    match_request(api, carol, listing["id"])
    response = api.call("GET", f"/v1/match-requests/listing/{listing['id']}", alice.key)
    assert response.status_code == 200, response.json
    assert response.json["total"] == 2
    assert created["requestId"] in {r["requestId"] for r in response.json["requests"]}
    assert_error(api.call("GET", f"/v1/match-requests/listing/{listing['id']}", bob.key), 403, "FORBIDDEN")
    assert_error(api.call("GET", "/v1/match-requests/listing/lst_unknown", alice.key), 404, "NOT_FOUND")
    pending = create_listing(api, alice)
    assert_error(api.call("GET", f"/v1/match-requests/listing/{pending['id']}", bob.key), 404, "NOT_FOUND")
    assert api.call("GET", f"/v1/match-requests/listing/{pending['id']}", alice.key).json["total"] == 0


def test_one_request_is_readable_by_its_two_parties_only(api: Api, alice: User, bob: User) -> None:
    listing = active_listing(api, alice)
    created = match_request(api, bob, listing["id"]).json
    path = f"/v1/match-requests/{created['requestId']}"
    assert api.call("GET", path, bob.key).json == created
    assert api.call("GET", path, alice.key).json == created
    assert_error(api.call("GET", path, make_user("Carol").key), 404, "NOT_FOUND")
    assert_error(api.call("GET", "/v1/match-requests/req_nope", bob.key), 404, "NOT_FOUND")


# --- decisions --------------------------------------------------------------------------------


def test_accepting_a_match_request_opens_a_conversation(api: Api, alice: User, bob: User) -> None:
    webhook = put_webhook(alice, "wh_2")
    listing = active_listing(api, alice, webhookIds=[webhook])
    created = match_request(api, bob, listing["id"]).json
    response = decide(api, alice, created["requestId"], "ACCEPTED")
    assert response.status_code == 200, response.json
    accepted = response.json
    assert accepted["status"] == "ACCEPTED"
    assert accepted["respondedAt"]
    assert accepted["respondedAt"] >= created["createdAt"]
    assert accepted["conversationId"]
    conversation = api.call("GET", f"/v1/conversations/{accepted['conversationId']}", bob.key).json
    assert conversation["requestId"] == created["requestId"]
    assert conversation["subjectType"] == "LISTING"
    assert conversation["subjectId"] == listing["id"]
    assert api.call("GET", "/v1/match-requests/mine", bob.key).json["requests"][0]["conversationId"] == accepted["conversationId"]
    [event] = events(outbox.MATCH_REQUEST_ACCEPTED)
    assert event["data"] == {
        "requestId": created["requestId"], "status": "ACCEPTED", "listingId": listing["id"],
        "listingTitle": listing["title"], "requesterId": bob.user_id, "respondedAt": accepted["respondedAt"],
    }
    assert event["routing"] == {"recipientId": alice.user_id, "listingId": listing["id"], "webhookIds": [webhook]}


def test_rejecting_with_and_without_a_reason(api: Api, alice: User, bob: User) -> None:
    listing = active_listing(api, alice)
    first = match_request(api, bob, listing["id"]).json
    carol = make_user("Carol")
    second = match_request(api, carol, listing["id"]).json
    rejected = decide(api, alice, first["requestId"], "REJECTED", "Position filled").json
    assert (rejected["status"], rejected["reason"], rejected["conversationId"]) == ("REJECTED", "Position filled", None)
    plain = decide(api, alice, second["requestId"], "REJECTED").json
    assert plain["reason"] is None
    first_event, second_event = events(outbox.MATCH_REQUEST_REJECTED)
    assert first_event["data"] == {
        "requestId": first["requestId"], "status": "REJECTED", "listingId": listing["id"], "listingTitle": listing["title"],
        "requesterId": bob.user_id, "reason": "Position filled", "respondedAt": rejected["respondedAt"],
    }
    assert second_event["data"]["reason"] is None
    assert api.call("GET", "/v1/conversations", bob.key).json["total"] == 0


def test_only_the_recipient_decides(api: Api, alice: User, bob: User) -> None:
    listing = active_listing(api, alice)
    created = match_request(api, bob, listing["id"]).json
    assert_error(decide(api, bob, created["requestId"], "ACCEPTED"), 403, "FORBIDDEN")
    assert_error(decide(api, make_user("Carol"), created["requestId"], "ACCEPTED"), 404, "NOT_FOUND")
    assert_error(decide(api, alice, "req_unknown", "ACCEPTED"), 404, "NOT_FOUND")
    assert_error(decide(api, alice, "not-an-id", "ACCEPTED"), 404, "NOT_FOUND")


def test_decisions_only_from_pending(api: Api, alice: User, bob: User) -> None:
    listing = active_listing(api, alice)
    created = match_request(api, bob, listing["id"]).json
    assert decide(api, alice, created["requestId"], "REJECTED").status_code == 200
    assert_error(decide(api, alice, created["requestId"], "ACCEPTED"), 409, "CONFLICT")
    assert_error(decide(api, alice, created["requestId"], "REJECTED"), 409, "CONFLICT")
    assert len(events(outbox.MATCH_REQUEST_REJECTED)) == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"status": "PENDING"}, "status"),
        ({"status": "ACCEPTED", "reason": "great"}, "reason"),
        ({"status": "REJECTED", "reason": "x" * 501}, "reason"),
        ({"status": "REJECTED", "note": "x"}, "note"),
    ],
)
def test_invalid_decision_bodies(api: Api, alice: User, bob: User, body: dict[str, Any], field: str) -> None:
    listing = active_listing(api, alice)
    created = match_request(api, bob, listing["id"]).json
    response = api.call("PATCH", f"/v1/match-requests/{created['requestId']}/status", alice.key, body)
    assert_error(response, 400, "VALIDATION_ERROR", field)


def test_concurrent_double_decision_one_wins(api: Api, alice: User, bob: User) -> None:
    listing = active_listing(api, alice)
    created = match_request(api, bob, listing["id"]).json
    caller = Caller(alice.user_id)
    changes = [StatusChange.model_validate({"status": "ACCEPTED"}), StatusChange.model_validate({"status": "REJECTED", "reason": "no"})]
    results = run_concurrently(2, lambda i: decisions.decide(caller, created["requestId"], changes[i]))
    winners = [r for r in results if not isinstance(r, BaseException)]
    losers = [r for r in results if isinstance(r, errors.Conflict)]
    assert len(winners) == 1, results
    assert len(losers) == 1, results
    stored = api.call("GET", f"/v1/match-requests/{created['requestId']}", bob.key).json
    assert stored["status"] == winners[0].status
    decided = events(outbox.MATCH_REQUEST_ACCEPTED) + events(outbox.MATCH_REQUEST_REJECTED)
    assert len(decided) == 1
    expected_conversations = 1 if stored["status"] == "ACCEPTED" else 0
    assert api.call("GET", "/v1/conversations", bob.key).json["total"] == expected_conversations


def test_profile_request_decisions(api: Api, alice: User, bob: User) -> None:
    created = profile_request(api, bob, alice.user_id).json
    accepted = decide(api, alice, created["requestId"], "ACCEPTED").json
    assert accepted["status"] == "ACCEPTED"
    assert accepted["conversationId"]
    [event] = events(outbox.PROFILE_REQUEST_ACCEPTED)
    assert event["data"] == {
        "requestId": created["requestId"], "status": "ACCEPTED", "userId": alice.user_id,
        "requesterId": bob.user_id, "respondedAt": accepted["respondedAt"],
    }
    assert event["routing"] == {"recipientId": alice.user_id}
    conversations = api.call("GET", "/v1/conversations?subjectType=PROFILE", bob.key).json
    assert [c["conversationId"] for c in conversations["conversations"]] == [accepted["conversationId"]]

    carol = make_user("Carol")
    other = profile_request(api, carol, alice.user_id).json
    rejected = decide(api, alice, other["requestId"], "REJECTED", "Not hiring").json
    [event] = events(outbox.PROFILE_REQUEST_REJECTED)
    assert event["data"] == {
        "requestId": other["requestId"], "status": "REJECTED", "userId": alice.user_id,
        "requesterId": carol.user_id, "reason": "Not hiring", "respondedAt": rejected["respondedAt"],
    }


# --- listing deletion -------------------------------------------------------------------------


def test_deleting_a_listing_rejects_pending_requests_and_keeps_conversations(api: Api, alice: User, bob: User) -> None:
    accepted, conversation_id = accepted_conversation(api, alice, bob)
    listing_id = accepted["listingId"]
    carol = make_user("Carol")
    pending = match_request(api, carol, listing_id).json
    response = api.call("DELETE", f"/v1/listings/{listing_id}", alice.key)
    assert response.status_code == 200, response.json
    rejected = api.call("GET", f"/v1/match-requests/{pending['requestId']}", carol.key).json
    assert (rejected["status"], rejected["reason"]) == ("REJECTED", "listing deleted")
    assert api.call("GET", f"/v1/match-requests/{accepted['requestId']}", bob.key).json["status"] == "ACCEPTED"
    [event] = events(outbox.MATCH_REQUEST_REJECTED)
    assert event["data"]["requestId"] == pending["requestId"]
    assert event["data"]["reason"] == "listing deleted"
    assert api.call("GET", f"/v1/conversations/{conversation_id}", bob.key).status_code == 200
    sent = api.call("POST", f"/v1/conversations/{conversation_id}/messages", bob.key, {"content": "still here"})
    assert sent.status_code == 201
    assert_error(match_request(api, make_user("Dan"), listing_id), 404, "NOT_FOUND")


def _statuses(api: Api, created: list[dict[str, Any]], requesters: list[User]) -> list[str]:
    return [api.call("GET", f"/v1/match-requests/{r['requestId']}", u.key).json["status"]
            for r, u in zip(created, requesters, strict=True)]


def test_deleting_a_listing_with_many_requests_leaves_the_rest_to_its_event(
    api: Api, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(listing_deletion, "FIRST_CHUNK", 2)
    monkeypatch.setattr(listing_deletion, "CHUNK", 3)
    listing = active_listing(api, alice)
    requesters = [make_user(f"User{i}") for i in range(7)]
    created = [match_request(api, u, listing["id"]).json for u in requesters]
    decide(api, alice, created[0]["requestId"], "REJECTED")
    transactions_run: list[int] = []
    original = storage.transact

    def counting(items: Any) -> None:
        transactions_run.append(len(items))
        original(items)

    monkeypatch.setattr(storage, "transact", counting)
    assert api.call("DELETE", f"/v1/listings/{listing['id']}", alice.key).status_code == 200
    # The deleting transaction: the delete, the ACTIVE listing's search counter (its two copies), the
    # owner's listing counter, the listing.deleted event, the owner's and the listing's request-list
    # counters, two rejections (request, event, requester's list counter).
    assert listing_deletion.FIXED_ITEMS == 5
    assert transactions_run == [5 + 2 + 2 * 3]
    assert _statuses(api, created, requesters) == ["REJECTED"] + ["PENDING"] * 4 + ["REJECTED"] * 2  # newest first
    [deleted] = events("listing.deleted")
    assert deleted["data"] == {"listingId": listing["id"], "ownerId": alice.user_id, "title": listing["title"],
                               "webhookIds": [], "respondedAt": deleted["data"]["respondedAt"]}
    assert handlers.handle_outbox_batch(stream_event(deleted)) == {"batchItemFailures": []}
    assert transactions_run[1:] == [2 + 3 * 3, 2 + 1 * 3]  # chunks of three
    statuses = [api.call("GET", f"/v1/match-requests/{r['requestId']}", u.key).json for r, u in zip(created, requesters, strict=True)]
    assert {s["status"] for s in statuses} == {"REJECTED"}
    assert [s["reason"] for s in statuses[1:]] == ["listing deleted"] * 6
    assert {s["respondedAt"] for s in statuses[1:]} == {deleted["data"]["respondedAt"]}  # the deletion's time
    assert len(events("match_request.rejected")) == 7
    assert handlers.handle_outbox_batch(stream_event(deleted, first_sequence=200)) == {"batchItemFailures": []}
    assert len(transactions_run) == 3  # a replay finds nothing pending
    assert len(events("match_request.rejected")) == 7


def test_a_deletion_within_the_first_chunk_writes_no_listing_deleted_event(api: Api, alice: User, bob: User) -> None:
    listing = active_listing(api, alice)
    match_request(api, bob, listing["id"])
    assert api.call("DELETE", f"/v1/listings/{listing['id']}", alice.key).status_code == 200
    assert events("listing.deleted") == []
    assert api.call("GET", "/v1/match-requests/mine", bob.key).json["requests"][0]["status"] == "REJECTED"


def test_a_later_chunk_skips_a_request_decided_just_before_it(
    api: Api, alice: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(listing_deletion, "FIRST_CHUNK", 0)
    listing = active_listing(api, alice)
    requesters = [make_user(f"Late{i}") for i in range(3)]
    created = [match_request(api, u, listing["id"]).json for u in requesters]
    original = listing_deletion.match_requests.list_for_subject

    def read_then_decided(subject_id: str) -> list[Any]:
        found = original(subject_id)
        if not events("listing.deleted"):  # the consumer's read: the owner decides one right after it
            return found
        stored = storage.get(settings().REQUESTS_TABLE, {"requestId": created[1]["requestId"]}) or {}
        storage.put(settings().REQUESTS_TABLE, {**stored, "status": "ACCEPTED"})
        return found

    monkeypatch.setattr(listing_deletion.match_requests, "list_for_subject", read_then_decided)
    assert api.call("DELETE", f"/v1/listings/{listing['id']}", alice.key).status_code == 200
    [deleted] = events("listing.deleted")
    assert handlers.handle_outbox_batch(stream_event(deleted)) == {"batchItemFailures": []}
    assert _statuses(api, created, requesters) == ["REJECTED", "ACCEPTED", "REJECTED"]


def test_a_chunk_cancelled_for_another_reason_is_retried_by_the_stream(
    api: Api, alice: User, bob: User, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(listing_deletion, "FIRST_CHUNK", 0)
    listing = active_listing(api, alice)
    created = match_request(api, bob, listing["id"]).json
    assert api.call("DELETE", f"/v1/listings/{listing['id']}", alice.key).status_code == 200
    [deleted] = events("listing.deleted")
    original = storage.transact

    def throttled(items: Any) -> None:
        raise storage.TransactionConflict(["None"] * len(items))

    monkeypatch.setattr(storage, "transact", throttled)
    with pytest.raises(BatchProcessingError):  # every record of the batch failed: the stream retries it
        handlers.handle_outbox_batch(stream_event(deleted))
    assert api.call("GET", f"/v1/match-requests/{created['requestId']}", bob.key).json["status"] == "PENDING"
    monkeypatch.setattr(storage, "transact", original)
    assert handlers.handle_outbox_batch(stream_event(deleted)) == {"batchItemFailures": []}
    assert api.call("GET", f"/v1/match-requests/{created['requestId']}", bob.key).json["status"] == "REJECTED"


def test_the_operator_command_finishes_deletions_the_stream_gave_up_on(
    api: Api, alice: User, bob: User, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(listing_deletion, "FIRST_CHUNK", 0)
    listing, other = active_listing(api, alice), active_listing(api, alice)
    created = match_request(api, bob, listing["id"]).json
    kept = match_request(api, bob, other["id"]).json
    assert api.call("DELETE", f"/v1/listings/{listing['id']}", alice.key).status_code == 200
    script = load_script("scripts/finish_listing_deletions.py", "finish_listing_deletions")
    for run in range(2):  # idempotent: the second run rejects nothing
        assert script.main([]) == 0
        assert capsys.readouterr().out.split() == [listing["id"], "1" if run == 0 else "0"]
    assert api.call("GET", f"/v1/match-requests/{created['requestId']}", bob.key).json["status"] == "REJECTED"
    assert api.call("GET", f"/v1/match-requests/{kept['requestId']}", bob.key).json["status"] == "PENDING"


def test_a_listing_whose_request_count_drifted_is_deletable_after_the_lists_backfill(
    api: Api, alice: User, bob: User
) -> None:
    listing = active_listing(api, alice)
    created = match_request(api, bob, listing["id"]).json
    storage.update(settings().LISTINGS_TABLE, {"listingId": listing["id"]}, "SET requestCount = :n",
                   ExpressionAttributeValues=storage.values(n=3))  # counts two requests that no longer exist
    refused = api.call("DELETE", f"/v1/listings/{listing['id']}", alice.key)
    assert_error(refused, 409, "CONFLICT")
    assert refused.headers["Retry-After"] == "1"
    assert lists_backfill.backfill()["recountedListings"] >= 1
    assert (listings.get(listing["id"]) or {})["requestCount"] == 1
    assert lists_backfill.backfill()["recountedListings"] == 0  # settled
    assert api.call("DELETE", f"/v1/listings/{listing['id']}", alice.key).status_code == 200
    assert api.call("GET", f"/v1/match-requests/{created['requestId']}", bob.key).json["status"] == "REJECTED"


def test_deletion_is_cancelled_when_a_request_it_did_not_see_exists(api: Api, alice: User, bob: User) -> None:
    listing = active_listing(api, alice)
    match_request(api, bob, listing["id"])
    stale = {**(listings.get(listing["id"]) or {}), "requestCount": 0}  # as if read before the request
    with pytest.raises(storage.TransactionConflict):
        listing_deletion.delete_listing_rejecting_requests(stale)
    assert listings.get(listing["id"]) is not None
    assert api.call("DELETE", f"/v1/listings/{listing['id']}", alice.key).status_code == 200
    assert api.call("GET", "/v1/match-requests/mine", bob.key).json["requests"][0]["status"] == "REJECTED"


def test_deciding_after_the_listing_was_deleted_is_409(api: Api, alice: User, bob: User) -> None:
    listing = active_listing(api, alice)
    created = match_request(api, bob, listing["id"]).json
    storage.delete(settings().LISTINGS_TABLE, {"listingId": listing["id"]})  # deleted without the cleanup
    assert_error(decide(api, alice, created["requestId"], "ACCEPTED"), 409, "CONFLICT")


# --- transaction retries ----------------------------------------------------------------------










def test_lasting_contention_is_a_retryable_409(api: Api, alice: User, monkeypatch: pytest.MonkeyPatch) -> None:
    listing = active_listing(api, alice)

    def contended(items: Any) -> None:
        raise storage.Contention("busy")

    monkeypatch.setattr(storage, "transact", contended)
    assert_error(api.call("DELETE", f"/v1/listings/{listing['id']}", alice.key), 409, "CONFLICT")




