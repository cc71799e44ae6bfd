"""Spec §1 Listing-seeker, Profile-sourcing and Management flows over HTTP against the local stack."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import pytest

from tests.e2e.conftest import Stack, approve_listing, wait_until

pytestmark = pytest.mark.e2e


def _active_listing(stack: Stack, owner: httpx.Client, title: str) -> dict[str, Any]:
    created = owner.post("/v1/listings", json={
        "categoryKey": "mentoring", "roleKey": "mentor", "channels": ["telegram"],
        "meta": {"title": title, "description": "<p>Weekly sessions</p>", "location": "Lisbon",
                 "topics": "career,leadership", "yearsExperience": "12"},
    })
    assert created.status_code == 201, created.text
    return approve_listing(stack, created.json()["id"])


def _request_for(client: httpx.Client, request_id: str, **params: str) -> dict[str, Any] | None:
    response = client.get("/v1/match-requests/mine", params=params)
    assert response.status_code == 200, response.text
    return next((r for r in response.json()["requests"] if r["requestId"] == request_id), None)


def test_listing_seeker_flow_to_conversation(stack: Stack) -> None:
    owner_id, owner = stack.new_user("Maya Mentor", country="pt")
    listing = _active_listing(stack, owner, "Career mentoring for backend engineers")
    seeker_id, seeker = stack.new_user("Sid Seeker", channels={"telegram": "@sid", "discord": "sid#1"}, country="es")

    detail = seeker.get(f"/v1/listings/{listing['id']}").json()
    assert detail["myRequest"] is None
    assert detail["profile"]["userId"] == owner_id
    assert seeker.get(f"/v1/profiles/{owner_id}").status_code == 200

    not_connected = seeker.post("/v1/match-requests", json={"listingId": listing["id"], "message": "Hi", "channels": ["signal"]})
    assert not_connected.status_code == 400
    assert not_connected.json()["details"][0]["field"] == "channels"

    sent = seeker.post("/v1/match-requests", json={"listingId": listing["id"], "message": "I'd love guidance", "channels": ["discord"]})
    assert sent.status_code == 201, sent.text
    request = sent.json()
    assert (request["status"], request["listingId"], request["requesterId"]) == ("PENDING", listing["id"], seeker_id)
    assert request["profile"]["displayName"] == "Sid Seeker"
    assert seeker.get(f"/v1/listings/{listing['id']}").json()["myRequest"]["requestId"] == request["requestId"]
    again = seeker.post("/v1/match-requests", json={"listingId": listing["id"], "message": "again", "channels": ["discord"]})
    assert (again.status_code, again.json()["code"]) == (409, "CONFLICT")

    assert _request_for(seeker, request["requestId"])["status"] == "PENDING"  # type: ignore[index]
    accepted = owner.patch(f"/v1/match-requests/{request['requestId']}/status", json={"status": "ACCEPTED"})
    assert accepted.status_code == 200, accepted.text
    polled = wait_until(lambda: (r := _request_for(seeker, request["requestId"])) and r["status"] == "ACCEPTED" and r)
    assert polled["respondedAt"]

    conversations = seeker.get("/v1/conversations").json()["conversations"]
    conversation = next(c for c in conversations if c["requestId"] == request["requestId"])
    assert conversation["otherLeft"] is False
    conversation_id = conversation["conversationId"]
    sent_message = seeker.post(f"/v1/conversations/{conversation_id}/messages", json={"content": "Thanks! When can we talk?"})
    assert sent_message.status_code == 201, sent_message.text
    message = sent_message.json()
    assert (message["senderId"], message["senderName"], message["isApiSent"]) == (seeker_id, "Sid Seeker", True)
    owner.post(f"/v1/conversations/{conversation_id}/messages", json={"content": "Tuesday?"})
    history = owner.get(f"/v1/conversations/{conversation_id}/messages").json()
    assert [m["content"] for m in history["messages"]] == ["Thanks! When can we talk?", "Tuesday?"]
    _, stranger = stack.new_user("Stranger")
    assert stranger.get(f"/v1/conversations/{conversation_id}").status_code == 404


def test_profile_sourcing_flow(stack: Stack) -> None:
    target_id, target = stack.new_user("Rita Recruitable", channels={"telegram": "@rita", "email": "rita@example.org"}, country="de")
    patched = target.patch("/v1/me/profile", json={
        "recruiting": {"openToWork": True, "headline": "Senior Rust engineer", "skills": ["rust", "kubernetes"],
                       "seniority": "senior", "roles": ["Backend engineer"], "remote": True},
        "requestPolicy": {"acceptingRequests": True, "minVerifiedLevel": 1},
        "socialLinks": {"github": "https://github.com/rita"},
    })
    assert patched.status_code == 200, patched.text
    bad_link = target.patch("/v1/me/profile", json={"socialLinks": {"myspace": "https://myspace.com/rita"}})
    assert bad_link.status_code == 400

    _, unverified = stack.new_user("Uma Unverified", channels={"telegram": "@uma"})
    recruiter_id, recruiter = stack.new_user("Rob Recruiter", channels={"telegram": "@rob"}, verifiedLevel=2)

    def found() -> bool:  # profile search reads postings, which follow the Users stream (about a second)
        response = recruiter.get("/v1/profiles/search", params={
            "q": "rust", "country": "de", "skills": "rust,kubernetes", "openToWork": "true", "seniority": "senior",
            "channel": "telegram"})
        assert response.status_code == 200, response.text
        return target_id in [p["userId"] for p in response.json()["profiles"]]

    wait_until(found, timeout_seconds=15)

    profile = recruiter.get(f"/v1/profiles/{target_id}").json()
    assert profile["profileRequestPolicy"]["canRequest"] is True
    assert sorted(profile["activeChannels"]) == ["email", "telegram"]
    assert profile["myProfileRequest"] is None
    assert profile["recruiting"]["headline"] == "Senior Rust engineer"

    blocked = unverified.get(f"/v1/profiles/{target_id}").json()["profileRequestPolicy"]
    assert blocked["canRequest"] is False
    assert blocked["requiredVerification"] == 1
    denied = unverified.post("/v1/profile-requests", json={"userId": target_id, "message": "Hi", "channel": "telegram"})
    assert (denied.status_code, denied.json()["code"]) == (403, "FORBIDDEN")

    wrong_channel = recruiter.post("/v1/profile-requests", json={"userId": target_id, "message": "Hi", "channel": "email"})
    assert wrong_channel.status_code == 400  # email is the target's, not connected by the recruiter
    sent = recruiter.post("/v1/profile-requests", json={"userId": target_id, "message": "A role for you", "channel": "telegram"})
    assert sent.status_code == 201, sent.text
    request_id = sent.json()["requestId"]
    assert recruiter.post("/v1/profile-requests", json={"userId": target_id, "message": "x", "channel": "telegram"}).status_code == 409
    assert recruiter.get(f"/v1/profiles/{target_id}").json()["myProfileRequest"]["requestId"] == request_id

    assert _request_for(recruiter, request_id, subjectType="PROFILE") is not None
    assert _request_for(recruiter, request_id, subjectType="LISTING") is None
    incoming = target.get("/v1/match-requests/incoming", params={"subjectType": "PROFILE"}).json()["requests"]
    assert [r["requesterId"] for r in incoming if r["requestId"] == request_id] == [recruiter_id]
    assert target.patch(f"/v1/match-requests/{request_id}/status", json={"status": "ACCEPTED"}).status_code == 200
    conversations = recruiter.get("/v1/conversations", params={"subjectType": "PROFILE"}).json()["conversations"]
    assert [c["requestId"] for c in conversations] == [request_id]
    assert recruiter.get("/v1/conversations", params={"subjectType": "LISTING"}).json()["conversations"] == []


def test_management_flow(stack: Stack) -> None:
    _, owner = stack.new_user("Mona Manager")
    listing = _active_listing(stack, owner, "Leadership mentoring")
    _, first = stack.new_user("First Requester")
    _, second = stack.new_user("Second Requester")
    _, third = stack.new_user("Third Requester")
    ids = []
    for client in (first, second, third):
        sent = client.post("/v1/match-requests", json={"listingId": listing["id"], "message": "Hello", "channels": ["telegram"]})
        assert sent.status_code == 201, sent.text
        ids.append(sent.json()["requestId"])

    mine = owner.get("/v1/listings/mine").json()["listings"]
    assert [(x["id"], x["status"]) for x in mine] == [(listing["id"], "ACTIVE")]
    incoming = owner.get(f"/v1/match-requests/listing/{listing['id']}").json()["requests"]
    assert sorted(r["requestId"] for r in incoming) == sorted(ids)
    assert first.get(f"/v1/match-requests/listing/{listing['id']}").status_code in (403, 404)

    rejected = owner.patch(f"/v1/match-requests/{ids[1]}/status", json={"status": "REJECTED", "reason": "Fully booked"})
    assert rejected.status_code == 200, rejected.text
    assert owner.patch(f"/v1/match-requests/{ids[1]}/status", json={"status": "ACCEPTED"}).status_code == 409
    assert first.patch(f"/v1/match-requests/{ids[0]}/status", json={"status": "ACCEPTED"}).status_code in (403, 404)
    assert owner.patch(f"/v1/match-requests/{ids[0]}/status", json={"status": "ACCEPTED"}).status_code == 200
    conversation = next(c for c in owner.get("/v1/conversations").json()["conversations"] if c["requestId"] == ids[0])
    reply = owner.post(f"/v1/conversations/{conversation['conversationId']}/messages", json={"content": "Welcome aboard"})
    assert reply.status_code == 201

    assert owner.patch(f"/v1/listings/{listing['id']}/status", json={"status": "PAUSED"}).json()["status"] == "PAUSED"
    assert owner.patch(f"/v1/listings/{listing['id']}/status", json={"status": "PAUSED"}).status_code == 409
    assert owner.patch(f"/v1/listings/{listing['id']}/status", json={"status": "ACTIVE"}).json()["status"] == "ACTIVE"
    updated = owner.patch(f"/v1/listings/{listing['id']}", json={"meta": {"title": "Leadership mentoring (new slots)"}})
    assert updated.status_code == 200, updated.text
    assert updated.json()["status"] == "PENDING"

    # Leaving: the other party sees otherLeft and can no longer send (spec §3, §7 rule 2).
    left = first.delete(f"/v1/conversations/{conversation['conversationId']}")
    assert (left.status_code, left.json()) == (200, {"success": True})
    seen = owner.get(f"/v1/conversations/{conversation['conversationId']}").json()
    assert seen["otherLeft"] is True
    blocked = owner.post(f"/v1/conversations/{conversation['conversationId']}/messages", json={"content": "Still there?"})
    assert (blocked.status_code, blocked.json()["code"]) == (403, "FORBIDDEN")

    # Deleting the listing rejects the pending request and keeps the conversation.
    assert owner.delete(f"/v1/listings/{listing['id']}").status_code == 200
    assert owner.get(f"/v1/listings/{listing['id']}").status_code == 404
    third_view = wait_until(lambda: (r := _request_for(third, ids[2])) and r["status"] == "REJECTED" and r)
    assert third_view["reason"] == "listing deleted"
    assert owner.get(f"/v1/conversations/{conversation['conversationId']}").status_code == 200


def test_concurrent_duplicate_requests_create_exactly_one(stack: Stack) -> None:
    _, owner = stack.new_user("Connie Concurrent")
    listing = _active_listing(stack, owner, "Mentoring under load")
    _, seeker = stack.new_user("Dup Seeker")
    body = {"listingId": listing["id"], "message": "Pick me", "channels": ["telegram"]}
    with ThreadPoolExecutor(max_workers=10) as pool:
        statuses = sorted(pool.map(lambda _: seeker.post("/v1/match-requests", json=body).status_code, range(10)))
    assert statuses == [201] + [409] * 9
    mine = seeker.get("/v1/match-requests/mine").json()["requests"]
    assert [r["listingId"] for r in mine].count(listing["id"]) == 1
