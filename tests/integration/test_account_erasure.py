"""``DELETE /v1/me``: the account erasure, its steps on the outbox stream, their idempotency and
resumption, and what is left of the user afterwards (found through the public API)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from chalicelib.auth.service import Caller
from chalicelib.kernel import clock
from chalicelib.kernel.config import settings
from chalicelib.privacy import erasure
from chalicelib.privacy.erasure_records import ErasureStep
from chalicelib.search import index
from chalicelib.webhooks import service as webhooks
from tests.integration.conftest import Api, User, make_user
from tests.integration.helpers import assert_error, create_listing, table_items
from tests.integration.request_helpers import (
    accepted_conversation,
    active_listing,
    events,
    match_request,
    profile_request,
    run_concurrently,
)
from tests.integration.webhook_helpers import create_webhook, envelope, run_lanes

#: A word only the erased user's listing holds, and a misspelling of it the typo search corrects.
UNIQUE_WORD = "xylophonist"
MISSPELLED = "xylophonits"
ALL_STEPS = [s.value for s in ErasureStep]


def _erase(api: Api, user: User) -> dict[str, Any]:
    return api.call_json("DELETE", "/v1/me", user.key, status=202)


def _erasure(api: Api, admin: User, user: User) -> dict[str, Any]:
    return api.call_json("GET", f"/v1/admin/erasures/{user.user_id}", admin.key)


def _listing_ids(api: Api, viewer: User, query: str) -> set[str]:
    response = api.call("GET", f"/v1/listings/search?{query}&pageSize=100", viewer.key)
    assert response.status_code == 200, response.json
    return {item["id"] for item in response.json["listings"]}


def _profile_ids(api: Api, viewer: User, query: str = "") -> set[str]:
    response = api.call("GET", f"/v1/profiles/search?pageSize=100{query}", viewer.key)
    assert response.status_code == 200, response.json
    return {p["userId"] for p in response.json["profiles"]}


def test_delete_me_answers_202_with_the_erasure_and_every_call_after_it_401(api: Api, alice: User) -> None:
    from chalicelib.dashboard import sessions

    session = sessions.sign_in(alice.key)
    body = _erase(api, alice)
    assert body["userId"] == alice.user_id
    assert body["erasureId"].startswith("ers_")
    assert body["status"] == "in_progress"
    assert body["step"] == "keys"
    assert body["stepsCompleted"] == []
    assert body["completedAt"] is None
    for method, path in (("GET", "/v1/me"), ("GET", "/v1/listings/mine"), ("DELETE", "/v1/me")):
        assert_error(api.call(method, path, alice.key), 401, "UNAUTHORIZED")
    assert sessions.resolve(session.session_id) is None  # the Dashboard session ended with its key


def test_administrators_see_the_erasure_progress_and_users_do_not(api: Api, admin: User, alice: User, bob: User,
                                                                  runner: Any) -> None:
    _erase(api, alice)
    listed = api.call("GET", f"/v1/admin/users?id={alice.user_id}", admin.key).json["users"]
    assert [u["erasure"]["step"] for u in listed] == ["keys"]
    assert listed[0]["erasure"]["status"] == "in_progress"
    assert _erasure(api, admin, alice)["status"] == "in_progress"
    assert_error(api.call("GET", f"/v1/admin/erasures/{alice.user_id}", bob.key), 403, "FORBIDDEN")
    assert_error(api.call("GET", f"/v1/admin/erasures/{bob.user_id}", admin.key), 404, "NOT_FOUND")
    bobs = api.call("GET", f"/v1/admin/users?id={bob.user_id}", admin.key).json["users"]
    assert bobs[0]["erasure"] is None
    runner.drain()
    done = _erasure(api, admin, alice)
    assert done["status"] == "completed"
    assert done["step"] is None
    assert done["stepsCompleted"] == ALL_STEPS
    assert done["completedAt"] is not None
    assert api.call("GET", f"/v1/admin/users?id={alice.user_id}", admin.key).json["users"] == []
    audit = api.call("GET", f"/v1/admin/audit-log?action=user.erase&target={alice.user_id}", admin.key).json["entries"]
    assert [(e["actorId"], e["details"]) for e in audit] == [(alice.user_id, {"erasureId": done["erasureId"]})]


def test_concurrent_calls_start_one_erasure(api: Api, admin: User, alice: User, runner: Any) -> None:
    active_listing(api, alice)
    results = run_concurrently(6, lambda _: api.call("DELETE", "/v1/me", alice.key))
    answered = [r for r in results if not isinstance(r, BaseException)]
    assert len(answered) == 6
    accepted = [r for r in answered if r.status_code == 202]
    assert accepted, [r.json for r in answered]
    assert {r.status_code for r in answered} <= {202, 401}  # a call after the keys went: 401
    assert len({r.json["erasureId"] for r in accepted}) == 1
    assert len([i for i in table_items(settings().ERASURES_TABLE) if i["userId"] == alice.user_id]) == 1
    assert len(events("account.erasure_step")) == 1
    runner.drain()
    assert _erasure(api, admin, alice)["status"] == "completed"
    entries = api.call("GET", f"/v1/admin/audit-log?action=user.erase&target={alice.user_id}", admin.key).json["entries"]
    assert len(entries) == 1


def _seed(api: Api, admin: User, alice: User, bob: User, runner: Any) -> dict[str, Any]:
    """Alice with listings (one with a pending request), a webhook, a saved search, a block, a
    conversation with Bob, pending requests she sent and one she received."""
    carol, dave, erin = make_user("Carol"), make_user("Dave"), make_user("Erin")
    unique = active_listing(api, alice, meta={"title": f"Senior {UNIQUE_WORD} wanted"})
    pending_listing = create_listing(api, alice)
    request_on_hers = match_request(api, carol, unique["id"]).json
    _, conversation = accepted_conversation(api, alice, bob)
    for sender, text in ((alice, "hello from alice"), (bob, "hello from bob"), (alice, "bye from alice")):
        assert api.call("POST", f"/v1/conversations/{conversation}/messages", sender.key, {"content": text}).status_code == 201
    carols = active_listing(api, carol)
    sent_to_carol = match_request(api, alice, carols["id"]).json
    profile_to_carol = profile_request(api, alice, carol.user_id).json
    profile_to_alice = profile_request(api, dave, alice.user_id).json
    hook = api.call("POST", "/v1/webhooks", alice.key, {"url": "http://127.0.0.1:9/hook", "events": ["message.new"]})
    assert hook.status_code == 201, hook.json
    saved = api.call("POST", "/v1/saved-searches", alice.key, {"name": "Jobs", "query": {"category": "jobs"}})
    assert saved.status_code == 201, saved.json
    assert api.call("PUT", f"/v1/me/blocks/{erin.user_id}", alice.key).status_code == 200
    assert api.call("PUT", f"/v1/me/blocks/{alice.user_id}", dave.key).status_code == 200  # Dave's own decision
    bobs = active_listing(api, bob, meta={"title": f"Junior {UNIQUE_WORD}s welcome"})
    runner.drain()
    return {"carol": carol, "dave": dave, "erin": erin, "unique": unique, "pending_listing": pending_listing,
            "request_on_hers": request_on_hers, "conversation": conversation, "carols": carols,
            "sent_to_carol": sent_to_carol, "profile_to_carol": profile_to_carol, "profile_to_alice": profile_to_alice,
            "bobs": bobs}


def test_erasure_leaves_nothing_of_the_user_findable_and_the_other_party_keeps_the_conversation(
    api: Api, admin: User, alice: User, bob: User, runner: Any
) -> None:
    seeded = _seed(api, admin, alice, bob, runner)
    carol, dave = seeded["carol"], seeded["dave"]
    assert seeded["unique"]["id"] in _listing_ids(api, carol, f"q={UNIQUE_WORD}")
    assert alice.user_id in _profile_ids(api, carol)
    _erase(api, alice)
    runner.drain()
    assert _erasure(api, admin, alice)["status"] == "completed"

    # Search, detail, typo-corrected search and profile search: nothing of Alice; Bob's listing stays.
    for viewer in (bob, carol):
        assert _listing_ids(api, viewer, f"q={UNIQUE_WORD}") == {seeded["bobs"]["id"]}
        assert seeded["unique"]["id"] not in _listing_ids(api, viewer, f"q={MISSPELLED}")
        assert seeded["unique"]["id"] not in _listing_ids(api, viewer, "category=jobs")
        assert alice.user_id not in _profile_ids(api, viewer)
        assert alice.user_id not in _profile_ids(api, viewer, "&q=Alice")
        for listing in (seeded["unique"], seeded["pending_listing"]):
            assert_error(api.call("GET", f"/v1/listings/{listing['id']}", viewer.key), 404, "NOT_FOUND")
        assert_error(api.call("GET", f"/v1/profiles/{alice.user_id}", viewer.key), 404, "NOT_FOUND")
    assert bob.user_id in _profile_ids(api, carol)

    # Bob keeps the conversation and every message; Alice's are from "Deleted user", and she left.
    conversation = api.call("GET", f"/v1/conversations/{seeded['conversation']}", bob.key).json
    assert conversation["otherLeft"] is True
    names = {p["userId"]: (p["displayName"], p["left"]) for p in conversation["participants"]}
    assert names == {alice.user_id: ("Deleted user", True), bob.user_id: ("Bob", False)}
    assert conversation["lastMessage"]["senderName"] == "Deleted user"
    messages = api.call("GET", f"/v1/conversations/{seeded['conversation']}/messages", bob.key).json["messages"]
    assert [(m["senderName"], m["content"]) for m in messages] == [
        ("Deleted user", "hello from alice"), ("Bob", "hello from bob"), ("Deleted user", "bye from alice"),
    ]
    assert_error(api.call("POST", f"/v1/conversations/{seeded['conversation']}/messages", bob.key,
                          {"content": "still there?"}), 403, "FORBIDDEN")

    # Requests: hers to Carol withdrawn (gone from Carol's list and counts), Dave's to her rejected,
    # Carol's on her deleted listing rejected as for any deletion.
    incoming = api.call("GET", "/v1/match-requests/incoming", carol.key).json
    assert incoming["total"] == len(incoming["requests"]) == 0
    for request in (seeded["sent_to_carol"], seeded["profile_to_carol"]):
        assert_error(api.call("GET", f"/v1/match-requests/{request['requestId']}", carol.key), 404, "NOT_FOUND")
    to_alice = api.call("GET", f"/v1/match-requests/{seeded['profile_to_alice']['requestId']}", dave.key).json
    assert (to_alice["status"], to_alice["reason"]) == ("REJECTED", "account deleted")
    on_hers = api.call("GET", f"/v1/match-requests/{seeded['request_on_hers']['requestId']}", carol.key).json
    assert (on_hers["status"], on_hers["reason"]) == ("REJECTED", "listing deleted")
    sent_by_bob = api.call("GET", "/v1/match-requests/mine", bob.key).json["requests"]
    assert [r["status"] for r in sent_by_bob] == ["ACCEPTED"]  # Bob's own request, kept
    # The withdrawn request left the count Carol's listing deletion checks: she deletes it.
    assert api.call("DELETE", f"/v1/listings/{seeded['carols']['id']}", carol.key).status_code == 200

    # Erin is blocked by nobody any more; Dave's block of Alice stays his (he may lift it).
    assert api.call("GET", "/v1/me/blocks", seeded["erin"].key).json["blocks"] == []
    assert api.call("GET", "/v1/me", seeded["erin"].key).status_code == 200
    assert [b["userId"] for b in api.call("GET", "/v1/me/blocks", dave.key).json["blocks"]] == [alice.user_id]
    assert _table_values_naming(alice.user_id, personal=True) == {}


def test_other_users_events_say_deleted_user_where_the_records_do(api: Api, admin: User, alice: User, bob: User,
                                                                    runner: Any) -> None:
    seeded = _seed(api, admin, alice, bob, runner)
    carol = seeded["carol"]
    _erase(api, alice)
    runner.drain()
    assert _erasure(api, admin, alice)["status"] == "completed"
    received = api.call_json("GET", "/v1/events?type=match_request.received,profile_request.received", carol.key)["events"]
    hers = {e["data"]["requestId"]: e["data"] for e in received if e["data"]["requesterId"] == alice.user_id}
    assert hers.keys() == {seeded["sent_to_carol"]["requestId"], seeded["profile_to_carol"]["requestId"]}
    erased = {"displayName": "Deleted user", "verifiedLevel": 0, "country": None,  # every field the schema requires
              "socialLinks": dict.fromkeys(("x", "linkedin", "github", "instagram", "tiktok", "youtube", "website"))}
    assert [data["profile"] for data in hers.values()] == [erased, erased]
    announced = api.call_json("GET", "/v1/events?type=message.new", bob.key)["events"]
    assert [(e["data"]["senderName"], e["data"]["content"]) for e in announced if e["data"]["senderId"] == alice.user_id] == [
        ("Deleted user", "bye from alice"), ("Deleted user", "hello from alice"),  # newest first; the content stays
    ]
    # No event another user can read names her (her own events are unreadable: her keys are gone).
    others = [i for i in table_items(settings().EVENTS_TABLE) if i.get("recipientId") not in (None, alice.user_id)]
    assert others
    assert not [i for i in others if "Alice" in json.dumps(i.get("data"), default=str)]


@pytest.mark.usefixtures("fast_delivery")
def test_a_redelivery_after_the_erasure_says_deleted_user(api: Api, alice: User, bob: User, runner: Any,
                                                          receivers: Any) -> None:
    receiver = receivers("ok")
    hook = create_webhook(api, bob, receiver.url, events=["message.new"])
    _, conversation = accepted_conversation(api, alice, bob)
    assert api.call("POST", f"/v1/conversations/{conversation}/messages", alice.key, {"content": "hi bob"}).status_code == 201
    runner.drain()
    run_lanes()
    (event,) = api.call_json("GET", "/v1/events?type=message.new", bob.key)["events"]
    _erase(api, alice)
    runner.drain()
    webhooks.redeliver(Caller(bob.user_id), hook["id"], event["id"])
    run_lanes()
    sent = [envelope(r.body)["data"] for r in receiver.requests]
    assert [(d["senderName"], d["content"]) for d in sent] == [("Alice", "hi bob"), ("Deleted user", "hi bob")]


#: Tables that may keep the erased user's id, and why (docs/trust-and-safety.md, "What erasure keeps").
KEPT_BY_POLICY = {
    "ErasuresTable": "the erasure record itself",
    "AuditLogTable": "the user.erase entry (the actor and target are the user id)",
    "EventsTable": "outbox events, removed by their TTL (7 or 30 days); other users' name her Deleted user",
    "ConversationsTable": "the participant id in the other party's conversation (named Deleted user)",
    "MessagesTable": "the sender id of messages the other party keeps",
    "RequestsTable": "decided requests of the other party (the snapshot replaced by Deleted user)",
    "IdempotencyTable": "powertools' records of keyed requests, removed by their TTL (24 h)",
    "RateLimitsTable": "token buckets and daily quota counters, removed by their TTL",
    "DeliveriesTable": "delivery log entries of deleted webhooks, removed by their TTL",
    "BlocksTable": "blocks other users made against the user (theirs to lift)",
    "ReportsTable": "reports the user made or that name them (moderation records)",
}
#: The search engine's table (posting lists, their sizes, the typo dictionary, the indexers'
#: applied versions): search is tested through the API above; what its internals keep is
#: :func:`test_the_search_index_keeps_no_trace_of_an_erased_user`.
SEARCH_TABLE = "SearchIndexTable"


def _table_values_naming(user_id: str, personal: bool) -> dict[str, list[dict[str, Any]]]:
    """Items of every table that hold ``user_id`` anywhere, by table, leaving out the tables the
    policy keeps it in (:data:`KEPT_BY_POLICY`) when ``personal``; a test-only Scan."""
    found: dict[str, list[dict[str, Any]]] = {}
    for name, table in settings().model_dump().items():
        if not name.endswith("_TABLE") or not isinstance(table, str):
            continue
        logical = next((k for k in KEPT_BY_POLICY if table.endswith(k)), None)
        if personal and (logical is not None or table.endswith(SEARCH_TABLE)):
            continue
        hits = [i for i in table_items(table) if user_id in json.dumps(i, default=str)]
        if hits:
            found[table] = hits
    return found


def test_an_account_being_erased_takes_no_new_profile_request(api: Api, alice: User, bob: User, runner: Any) -> None:
    _erase(api, alice)
    assert_error(profile_request(api, bob, alice.user_id), 404, "NOT_FOUND")
    runner.drain()
    assert_error(profile_request(api, bob, alice.user_id), 404, "NOT_FOUND")


def test_a_user_without_data_is_erased_in_every_step(api: Api, admin: User, runner: Any) -> None:
    lone = make_user("Lone")
    _erase(api, lone)
    runner.drain()
    assert _erasure(api, admin, lone)["stepsCompleted"] == ALL_STEPS
    assert _table_values_naming(lone.user_id, personal=True) == {}


def test_a_round_that_fails_is_retried_and_the_erasure_completes(
    api: Api, admin: User, alice: User, bob: User, runner: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, conversation = accepted_conversation(api, alice, bob)
    api.call("POST", f"/v1/conversations/{conversation}/messages", alice.key, {"content": "hi"})
    real = erasure.WORK[ErasureStep.CONVERSATIONS]
    failures = {"left": 2}

    def crashing(user_id: str, position: str | None) -> tuple[bool, str | None]:
        done = real(user_id, position)  # the work commits, then the round dies before its progress
        if failures["left"]:
            failures["left"] -= 1
            raise RuntimeError("the process died after the step's work")
        return done

    monkeypatch.setitem(erasure.WORK, ErasureStep.CONVERSATIONS, crashing)
    _erase(api, alice)
    runner.drain()
    assert failures["left"] == 0
    assert _erasure(api, admin, alice)["stepsCompleted"] == ALL_STEPS
    messages = api.call("GET", f"/v1/conversations/{conversation}/messages", bob.key).json["messages"]
    assert [(m["senderName"], m["content"]) for m in messages] == [("Deleted user", "hi")]


def test_a_stopped_erasure_is_resumed_by_an_administrator(
    api: Api, admin: User, alice: User, runner: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    listing = active_listing(api, alice)

    def down(user_id: str, position: str | None) -> tuple[bool, str | None]:
        raise RuntimeError("a dependency is down")

    monkeypatch.setitem(erasure.WORK, ErasureStep.LISTINGS, down)
    _erase(api, alice)
    runner.drain()  # the round fails past the stream's retries: the chain stops at that step
    stopped = _erasure(api, admin, alice)
    assert (stopped["status"], stopped["step"], stopped["stepsCompleted"]) == ("in_progress", "listings", ["keys"])
    monkeypatch.undo()
    assert api.call("POST", f"/v1/admin/erasures/{alice.user_id}/resume", admin.key).status_code == 202
    assert api.call("POST", f"/v1/admin/erasures/{alice.user_id}/resume", admin.key).status_code == 202  # twice: harmless
    runner.drain()
    assert _erasure(api, admin, alice)["stepsCompleted"] == ALL_STEPS
    assert_error(api.call("GET", f"/v1/listings/{listing['id']}", admin.key), 404, "NOT_FOUND")
    assert_error(api.call("POST", f"/v1/admin/erasures/{alice.user_id}/resume", admin.key), 409, "CONFLICT")


def test_a_duplicate_round_event_runs_nothing(api: Api, alice: User) -> None:
    _erase(api, alice)
    first = erasure.run_round(alice.user_id, 0)
    assert first is not None
    assert first["stepsCompleted"] == ["keys"]
    assert erasure.run_round(alice.user_id, 0) is None  # the round moved on: a replayed event
    assert erasure.run_round(alice.user_id, 5) is None  # not yet due


def test_the_search_index_and_the_counters_keep_no_trace_of_an_erased_user(api: Api, alice: User, runner: Any) -> None:
    """Only the removed profile's tombstone stays, with no data of the user, and DynamoDB's TTL
    deletes it within the stream's 24 hours."""
    active_listing(api, alice, meta={"title": f"Senior {UNIQUE_WORD} wanted"})
    runner.drain()
    _erase(api, alice)
    runner.drain()
    import json

    table = next(t for n, t in settings().model_dump().items() if n == "SEARCH_INDEX_TABLE")
    traces = [i for i in table_items(table) if alice.user_id in json.dumps(i, default=str) or UNIQUE_WORD in json.dumps(i)]
    assert [sorted(i) for i in traces] == [["expiresAt", "gone", "pk", "sk", "v"]]
    assert traces[0]["pk"] == f"profiles.v8|s|{alice.user_id}"
    assert 0 < int(traces[0]["expiresAt"]) - clock.epoch_seconds() <= index.TOMBSTONE_SECONDS
    assert not [i for i in table_items(settings().COUNTERS_TABLE) if alice.user_id in json.dumps(i, default=str)]


def test_the_dashboard_erases_the_account_only_when_the_display_name_is_typed(
    api: Api, admin: User, alice: User, runner: Any
) -> None:
    from tests.integration.test_dashboard import signed_in

    b = signed_in(api, alice)
    page = b.get("/dashboard/account")
    assert page.status_code == 200
    assert "Type your display name, <strong>Alice</strong>, to confirm" in page.text
    for typed in ("alice", "Alice ", ""):
        refused = b.post("/dashboard/account/erase", {"csrf_token": b.csrf("/dashboard/account"), "confirm_name": typed})
        assert refused.status_code == 400, refused.text
        assert "nothing was erased" in refused.text
    assert api.call("GET", "/v1/me", alice.key).status_code == 200
    assert api.call("GET", f"/v1/admin/erasures/{alice.user_id}", admin.key).status_code == 404
    done = b.post("/dashboard/account/erase", {"csrf_token": b.csrf("/dashboard/account"), "confirm_name": "Alice"})
    assert done.status_code == 303, done.text
    assert done.headers["Location"] == "/dashboard/account/erased"
    assert "Max-Age=0" in done.headers["Set-Cookie"]
    assert "being erased" in b.get("/dashboard/account/erased").text
    assert_error(api.call("GET", "/v1/me", alice.key), 401, "UNAUTHORIZED")
    users_page = signed_in(api, admin).get(f"/dashboard/admin/users?id={alice.user_id}")
    assert "Erasing (keys) since" in users_page.text
    runner.drain()
    assert _erasure(api, admin, alice)["status"] == "completed"
