"""Saved searches on in-process moto: the API, the percolator, alerts and the limit."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from chalicelib.auth.service import Caller
from chalicelib.kernel import clock, errors
from chalicelib.kernel.config import settings
from chalicelib.listings import repository as listings_repository
from chalicelib.listings.status import Transition
from chalicelib.persistence import outbox, storage
from chalicelib.saved_searches import handlers, percolator, repository, service
from chalicelib.saved_searches.models import SavedSearchCreate
from chalicelib.webhooks import signing
from tests.integration.conftest import Api, User, make_user
from tests.integration.helpers import (
    Stack,
    activate,
    assert_error,
    class_stack,  # noqa: F401  (the class-scoped ``stack`` fixture)
    counting_reads,
    create_listing,
    error_fields,
    table_items,
)
from tests.integration.webhook_helpers import create_webhook, envelope, fast_delivery_settings, stream_event
from tests.integration.webhook_receivers import Receiver

LISBON = {"location": "Lisbon", "location_lat": "38.7223", "location_lng": "-9.1393"}
CASCAIS = {"location": "Cascais", "location_lat": "38.6979", "location_lng": "-9.4215"}  # ~25 km west: outside 20
PORTO = {"location": "Porto", "location_lat": "41.1579", "location_lng": "-8.6291"}
MENTORS_NEAR_LISBON = {
    "category": "mentoring", "role": "mentor", "meta.location_lat": "38.7223", "meta.location_lng": "-9.1393", "radiusKm": 25,
}


def save(api: Api, user: User, query: dict[str, Any], name: str | None = "Mentors near Lisbon", alerts: bool = True) -> Any:
    body: dict[str, Any] = {"query": query, "alerts": alerts}
    if name is not None:
        body["name"] = name
    return api.call("POST", "/v1/saved-searches", user.key, body)


def saved(api: Api, user: User, query: dict[str, Any], **options: Any) -> dict[str, Any]:
    response = save(api, user, query, **options)
    assert response.status_code == 201, response.json
    result: dict[str, Any] = response.json
    return result


def matches(api: Api, user: User, saved_search_id: str, query: str = "") -> dict[str, Any]:
    return api.call_json("GET", f"/v1/saved-searches/{saved_search_id}/matches{query}", user.key)


def matched_events() -> list[dict[str, Any]]:
    return [e for e in table_items(settings().EVENTS_TABLE) if e["type"] == outbox.LISTING_MATCHED]


def mentor(api: Api, user: User, place: dict[str, str], title: str = "Python mentor") -> dict[str, Any]:
    return create_listing(api, user, "mentoring", "mentor", meta={"title": title, **place})


# -- API -------------------------------------------------------------------------------------


def test_save_returns_the_search_and_lists_reads_deletes_it(api: Api, alice: User) -> None:
    created = saved(api, alice, MENTORS_NEAR_LISBON)
    assert set(created) == {"savedSearchId", "name", "query", "alerts", "createdAt"}
    assert created["savedSearchId"].startswith("ss_")
    assert created["name"] == "Mentors near Lisbon"
    assert created["alerts"] is True
    assert created["query"] == {k: str(v) for k, v in MENTORS_NEAR_LISBON.items()}
    path = f"/v1/saved-searches/{created['savedSearchId']}"
    assert api.call("GET", path, alice.key).json == created
    listed = api.call("GET", "/v1/saved-searches", alice.key).json
    assert listed == {"savedSearches": [created], "total": 1, "page": 1, "pageSize": 20, "nextCursor": None}
    assert api.call("DELETE", path, alice.key).json == {"id": created["savedSearchId"], "deleted": True}
    assert_error(api.call("GET", path, alice.key), 404, "NOT_FOUND")
    assert_error(api.call("DELETE", path, alice.key), 404, "NOT_FOUND")
    assert api.call("GET", "/v1/saved-searches", alice.key).json["total"] == 0


def test_list_is_newest_first_and_paginated(api: Api, alice: User) -> None:
    ids = [saved(api, alice, {"q": f"word{i}"}, name=f"n{i}")["savedSearchId"] for i in range(5)]
    first = api.call("GET", "/v1/saved-searches?pageSize=2", alice.key).json
    second = api.call("GET", "/v1/saved-searches?pageSize=2&page=2", alice.key).json
    assert first["total"] == 5
    assert [s["savedSearchId"] for s in first["savedSearches"] + second["savedSearches"]] == ids[::-1][:4]


def test_default_name_is_the_query(api: Api, alice: User) -> None:
    assert saved(api, alice, {"category": "jobs", "q": "rust"}, name=None)["name"] == "category=jobs&q=rust"


def test_json_numbers_are_kept_as_a_query_string_writes_them_and_booleans_are_refused(api: Api, alice: User) -> None:
    """A float JSON writes with an exponent is stored in positional notation, which the search's
    parser reads (``1e-05`` was stored as ``1e-05`` and refused by it)."""
    made = saved(api, alice, {"category": "jobs", "meta.salary_min": 0.00001, "meta.salary_max": 1e3})
    assert made["query"] == {"category": "jobs", "meta.salary_min": "0.00001", "meta.salary_max": "1000"}
    refused = api.call("POST", "/v1/saved-searches", alice.key, {"query": {"category": "jobs", "meta.salary_min": True}})
    assert_error(refused, 400, "VALIDATION_ERROR", "query.meta.salary_min")


@pytest.mark.parametrize(("name", "value"), [("meta.salary_min", " 5"), ("category", "jobs "), ("role", " hiring")])
def test_a_value_search_refuses_is_refused_as_sent_not_trimmed(api: Api, alice: User, name: str, value: str) -> None:
    """White space around a value is refused by the search's parser (docs/guide.md): a saved search
    holds the value as sent, so it is refused the same way (it was trimmed and saved)."""
    query = {"category": "jobs", "role": "hiring", name: value}
    assert_error(api.call("POST", "/v1/saved-searches", alice.key, {"query": query, "alerts": False}),
                 400, "VALIDATION_ERROR", f"query.{name}")
    assert api.call("GET", "/v1/saved-searches", alice.key).json["total"] == 0


def test_others_get_404(api: Api, alice: User, bob: User) -> None:
    created = saved(api, alice, MENTORS_NEAR_LISBON)
    path = f"/v1/saved-searches/{created['savedSearchId']}"
    for method, suffix in (("GET", ""), ("DELETE", ""), ("GET", "/matches")):
        assert_error(api.call(method, path + suffix, bob.key), 404, "NOT_FOUND")
    assert api.call("GET", "/v1/saved-searches", bob.key).json["total"] == 0
    assert api.call("GET", path, alice.key).status_code == 200


class TestRefusedQueries:
    """Saves refused without effect (nothing saved: what each asserts), on one shared stack."""

    @pytest.mark.parametrize(
        ("query", "alerts", "field"),
        [
            ({"category": "nope"}, True, "query.category"),
            ({"category": "jobs", "role": "mentor"}, True, "query.role"),
            ({"category": "jobs", "meta.salary_min": "lots"}, True, "query.meta.salary_min"),
            ({"meta.nofield": "x"}, True, "query.meta.nofield"),
            ({"colour": "red"}, True, "query.colour"),
            ({"meta.location_lat": "38.7"}, True, "query.meta.location_lng"),
            ({"radiusKm": "5"}, True, "query.radiusKm"),
            ({"meta.location_lat": "38.7", "meta.location_lng": "-9.1"}, True, "query.radiusKm"),
            ({"meta.location_lat": "91", "meta.location_lng": "-9.1", "radiusKm": "5"}, True, "query.meta.location_lat"),
            ({"meta.location_lat": "38.7", "meta.location_lng": "-9.1", "radiusKm": "05"}, True, "query.radiusKm"),
            ({"meta.location_lat": "38.7", "meta.location_lng": "-9.1", "radiusKm": "+5"}, True, "query.radiusKm"),
            ({"meta.location_lat": "038.7", "meta.location_lng": "-9.1", "radiusKm": 5}, True, "query.meta.location_lat"),
            ({"category": "jobs", "meta.salary_min": "085000"}, True, "query.meta.salary_min"),
            ({"page": "2"}, True, "query.page"),
            ({"cursor": "abc"}, True, "query.cursor"),
        ],
    )
    def test_query_is_validated_by_search_and_named(self, stack: Stack, query: dict[str, Any], alerts: bool, field: str) -> None:
        response = save(stack.api, stack.alice, query, alerts=alerts)
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == [field]
        assert stack.api.call("GET", "/v1/saved-searches", stack.alice.key).json["total"] == 0


def test_geo_without_radius_is_allowed_without_alerts(api: Api, alice: User) -> None:
    created = saved(api, alice, {"meta.location_lat": "38.7", "meta.location_lng": "-9.1"}, alerts=False)
    assert created["alerts"] is False


def test_body_is_validated(api: Api, alice: User) -> None:
    assert error_fields(api.call("POST", "/v1/saved-searches", alice.key, {"query": {}, "extra": 1})) == ["extra"]
    assert error_fields(api.call("POST", "/v1/saved-searches", alice.key, {"name": "x"})) == ["query"]
    assert error_fields(api.call("POST", "/v1/saved-searches", alice.key, {"query": {}, "name": ""})) == ["name"]


def test_the_limit_is_enforced_and_freed_by_deletion(api: Api, alice: User, bob: User, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAVED_SEARCH_LIMIT", "3")
    settings.cache_clear()
    settings()
    ids = [saved(api, alice, {"q": f"w{i}"})["savedSearchId"] for i in range(3)]
    response = save(api, alice, {"q": "one more"})
    body = assert_error(response, 409, "CONFLICT")
    assert "limit of 3 saved searches" in body["error"]
    assert saved(api, bob, {"q": "bob"})  # per user
    assert api.call("DELETE", f"/v1/saved-searches/{ids[0]}", alice.key).status_code == 200
    assert saved(api, alice, {"q": "now it fits"})
    assert_error(save(api, alice, {"q": "not again"}), 409, "CONFLICT")
    assert api.call("GET", "/v1/saved-searches", alice.key).json["total"] == 3


def test_the_limit_holds_under_concurrent_saves(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SAVED_SEARCH_LIMIT", "4")
    settings.cache_clear()
    settings()
    carol = make_user("Carol")
    statuses: list[int] = []

    def one(i: int) -> None:
        # The service directly: Chalice's test client swaps os.environ per request, not thread-safely.
        try:
            service.create_saved_search(Caller(carol.user_id), SavedSearchCreate(query={"q": f"term{i}"}))
            statuses.append(201)
        except errors.Conflict:
            statuses.append(409)

    threads = [threading.Thread(target=one, args=(i,)) for i in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(statuses) == [201] * 4 + [409] * 6
    assert api.call("GET", "/v1/saved-searches", carol.key).json["total"] == 4


# -- percolation and alerts ------------------------------------------------------------------


def test_a_matching_listing_is_recorded_once_and_announced(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    search = saved(api, alice, MENTORS_NEAR_LISBON)
    near = mentor(api, bob, LISBON)
    far = mentor(api, bob, PORTO)
    mentee = create_listing(api, bob, "mentoring", "mentee", meta=LISBON)
    activate(api, admin, runner, near["id"], far["id"], mentee["id"])
    found = matches(api, alice, search["savedSearchId"])
    assert found["total"] == 1
    [match] = found["matches"]
    assert match["listing"]["id"] == near["id"]
    assert match["distanceKm"] == 0.0
    [event] = matched_events()
    assert event["routing"]["recipientId"] == alice.user_id
    assert event["data"] == {
        "savedSearchId": search["savedSearchId"], "savedSearchName": "Mentors near Lisbon", "listingId": near["id"],
        "listingTitle": "Python mentor", "categoryKey": "mentoring", "roleKey": "mentor", "distanceKm": 0.0,
        "matchedAt": match["matchedAt"],
    }


def test_distance_is_km_from_the_center(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    search = saved(api, alice, {**MENTORS_NEAR_LISBON, "radiusKm": 30})
    listing = mentor(api, bob, CASCAIS)
    activate(api, admin, runner, listing["id"])
    [match] = matches(api, alice, search["savedSearchId"])["matches"]
    assert 24 < match["distanceKm"] < 26


def test_without_alerts_matches_are_recorded_but_not_sent(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    search = saved(api, alice, {"category": "mentoring"}, alerts=False)
    listing = mentor(api, bob, LISBON)
    activate(api, admin, runner, listing["id"])
    assert matches(api, alice, search["savedSearchId"])["total"] == 1
    assert matched_events() == []


def test_the_owner_is_never_matched_with_their_own_listing(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    mine = saved(api, alice, {"category": "mentoring"})
    theirs = saved(api, bob, {"category": "mentoring"})
    listing = mentor(api, alice, LISBON)
    activate(api, admin, runner, listing["id"])
    assert matches(api, alice, mine["savedSearchId"])["total"] == 0
    assert matches(api, bob, theirs["savedSearchId"])["total"] == 1
    assert [e["routing"]["recipientId"] for e in matched_events()] == [bob.user_id]


def test_a_block_either_way_keeps_the_listings_out_of_matches_and_alerts(
    api: Api, alice: User, bob: User, admin: User, runner: Any
) -> None:
    carol = make_user("Carol")
    alices = saved(api, alice, {"category": "mentoring"})
    carols = saved(api, carol, {"category": "mentoring"})
    assert api.call("PUT", f"/v1/me/blocks/{alice.user_id}", bob.key).status_code == 200  # bob blocks the searcher
    blocked_then = mentor(api, bob, LISBON)
    activate(api, admin, runner, blocked_then["id"])
    assert matches(api, alice, alices["savedSearchId"])["total"] == 0
    assert [e["routing"]["recipientId"] for e in matched_events()] == [carol.user_id]

    assert api.call("DELETE", f"/v1/me/blocks/{alice.user_id}", bob.key).status_code == 200
    open_now = mentor(api, bob, PORTO)
    activate(api, admin, runner, open_now["id"])
    assert [m["listing"]["id"] for m in matches(api, alice, alices["savedSearchId"])["matches"]] == [open_now["id"]]

    assert api.call("PUT", f"/v1/me/blocks/{bob.user_id}", alice.key).status_code == 200  # the searcher blocks, after the match
    assert matches(api, alice, alices["savedSearchId"]) | {"nextCursor": None} == {
        "matches": [], "total": 0, "totalRelation": "eq", "page": 1, "pageSize": 20, "nextCursor": None,
    }
    assert matches(api, carol, carols["savedSearchId"])["total"] == 2


def test_replayed_stream_records_notify_nothing_new(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    search = saved(api, alice, MENTORS_NEAR_LISBON)
    listing = mentor(api, bob, LISBON)
    activate(api, admin, runner, listing["id"])
    [activated] = [e for e in table_items(settings().EVENTS_TABLE) if e["type"] == outbox.LISTING_ACTIVATED]
    replay = stream_event(activated, activated)
    assert handlers.handle_outbox_batch(replay) == {"batchItemFailures": []}
    assert handlers.handle_outbox_batch(replay) == {"batchItemFailures": []}
    assert len(matched_events()) == 1
    assert matches(api, alice, search["savedSearchId"])["total"] == 1


def test_reapproval_and_resume_of_an_unchanged_match_notify_nothing_new(
    api: Api, alice: User, bob: User, admin: User, runner: Any
) -> None:
    saved(api, alice, MENTORS_NEAR_LISBON)
    listing = mentor(api, bob, LISBON)
    activate(api, admin, runner, listing["id"])
    path = f"/v1/listings/{listing['id']}"
    assert api.call("PATCH", f"{path}/status", bob.key, {"status": "PAUSED"}).status_code == 200
    assert api.call("PATCH", f"{path}/status", bob.key, {"status": "ACTIVE"}).status_code == 200
    runner.drain()
    assert api.call("PATCH", path, bob.key, {"meta": {"description": "<p>Still here</p>"}}).status_code == 200
    activate(api, admin, runner, listing["id"])
    activated = [e for e in table_items(settings().EVENTS_TABLE) if e["type"] == outbox.LISTING_ACTIVATED]
    assert len(activated) == 3  # approval, resume, re-approval
    assert len(matched_events()) == 1


def test_resume_matches_searches_saved_while_paused(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    listing = mentor(api, bob, LISBON)
    activate(api, admin, runner, listing["id"])
    assert api.call("PATCH", f"/v1/listings/{listing['id']}/status", bob.key, {"status": "PAUSED"}).status_code == 200
    search = saved(api, alice, MENTORS_NEAR_LISBON)
    assert api.call("PATCH", f"/v1/listings/{listing['id']}/status", bob.key, {"status": "ACTIVE"}).status_code == 200
    runner.drain()
    assert matches(api, alice, search["savedSearchId"])["total"] == 1
    assert len(matched_events()) == 1


def test_a_search_deleted_before_the_event_is_processed_matches_nothing(
    api: Api, alice: User, bob: User, admin: User, runner: Any
) -> None:
    search = saved(api, alice, MENTORS_NEAR_LISBON)
    kept = saved(api, bob, {"category": "mentoring"})
    listing = mentor(api, make_user("Carol"), LISBON)
    runner.drain()
    from tests.integration.helpers import claim, decide

    [task] = [a for a in claim(api, admin) if a["listingId"] == listing["id"]]
    assert decide(api, admin, task["approvalId"]).status_code == 200  # listing.activated now in the stream
    assert api.call("DELETE", f"/v1/saved-searches/{search['savedSearchId']}", alice.key).status_code == 200
    runner.drain()
    assert [e["data"]["savedSearchId"] for e in matched_events()] == [kept["savedSearchId"]]


def test_a_search_deleted_between_read_and_write_records_nothing(
    api: Api, alice: User, bob: User, admin: User, runner: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    search = saved(api, alice, MENTORS_NEAR_LISBON)
    listing = mentor(api, bob, LISBON)
    original = repository.get_many

    def read_then_delete(keys: Any) -> list[dict[str, Any]]:
        found = original(keys)
        assert api.call("DELETE", f"/v1/saved-searches/{search['savedSearchId']}", alice.key).status_code == 200
        return found

    monkeypatch.setattr(repository, "get_many", read_then_delete)
    activate(api, admin, runner, listing["id"])
    assert matched_events() == []
    assert table_items(settings().SAVED_SEARCH_MATCHES_TABLE) == []


def test_matches_list_only_still_active_listings_newest_first(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    search = saved(api, alice, {"category": "mentoring", "q": "python"})
    first, second, third = (mentor(api, bob, LISBON, title=f"Python mentor {i}") for i in range(3))
    for listing in (first, second, third):
        activate(api, admin, runner, listing["id"])
    assert [m["listing"]["id"] for m in matches(api, alice, search["savedSearchId"])["matches"]] == [
        third["id"], second["id"], first["id"]
    ]
    assert api.call("PATCH", f"/v1/listings/{second['id']}/status", bob.key, {"status": "PAUSED"}).status_code == 200
    page = matches(api, alice, search["savedSearchId"], "?pageSize=1&page=2")
    assert page["total"] == 2
    assert [m["listing"]["id"] for m in page["matches"]] == [first["id"]]


def posting_items() -> list[dict[str, Any]]:
    return [p for p in table_items(settings().PERCOLATOR_TABLE) if p["postingKey"] != repository.SCOPES]


def test_deleted_searches_leave_the_posting_lists(api: Api, alice: User) -> None:
    created = saved(api, alice, MENTORS_NEAR_LISBON)
    postings = posting_items()
    assert postings
    assert all(p["n"] == 1 for p in postings)
    assert api.call("DELETE", f"/v1/saved-searches/{created['savedSearchId']}", alice.key).status_code == 200
    after = posting_items()
    assert all(p["n"] == 0 and not repository.entries(p) for p in after)


def test_each_scope_counts_its_saved_searches(api: Api, alice: User, bob: User) -> None:
    first = saved(api, alice, MENTORS_NEAR_LISBON)
    saved(api, bob, {"category": "mentoring", "q": "python"})
    everywhere = saved(api, alice, {"q": "python"})
    assert repository.scope_counts() == {"mentoring": 2, "*": 1}
    for search, owner in ((first, alice), (everywhere, alice)):
        assert api.call("DELETE", f"/v1/saved-searches/{search['savedSearchId']}", owner.key).status_code == 200
    assert repository.scope_counts() == {"mentoring": 1, "*": 0}


def test_the_recount_restores_counts_missing_from_older_saves(api: Api, alice: User, bob: User) -> None:
    from scripts.saved_search_scopes import recount

    saved(api, alice, MENTORS_NEAR_LISBON)
    saved(api, bob, {"q": "python"})
    storage.dynamodb().delete_item(TableName=settings().PERCOLATOR_TABLE, Key=storage.to_item({"postingKey": repository.SCOPES}))
    assert repository.scope_counts() == {}  # as for searches saved before the count existed
    assert recount() == {"mentoring": 1, "*": 1}
    assert repository.scope_counts() == {"mentoring": 1, "*": 1}


def test_a_refused_save_counts_nothing(api: Api, alice: User) -> None:
    assert save(api, alice, {"category": "mentoring", "meta.location_lat": "38.7"}).status_code == 400
    assert repository.scope_counts() == {}


def test_an_approval_with_no_saved_search_reads_one_item(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    listing = mentor(api, bob, LISBON)
    activate(api, admin, runner, listing["id"])
    with counting_reads() as reads:
        report = percolator.percolate(listing["id"])
    assert (reads.calls, reads.items, report.keys) == (["GetItem"], 0, 0)
    deleted = saved(api, alice, MENTORS_NEAR_LISBON)
    assert api.call("DELETE", f"/v1/saved-searches/{deleted['savedSearchId']}", alice.key).status_code == 200
    with counting_reads() as reads:
        percolator.percolate(listing["id"])
    assert (reads.calls, reads.items) == (["GetItem"], 1)


def test_saved_searches_of_other_categories_are_not_looked_up(
    api: Api, alice: User, bob: User, admin: User, runner: Any
) -> None:
    saved(api, alice, {"category": "jobs"})
    listing = mentor(api, bob, LISBON)
    activate(api, admin, runner, listing["id"])
    with counting_reads() as reads:
        report = percolator.percolate(listing["id"])
    assert reads.calls == ["GetItem", "GetItem"]  # the counts, the listing; no posting list
    assert report.keys == 0


def test_full_posting_shards_spill_and_are_all_read(
    api: Api, bob: User, admin: User, runner: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(repository, "SHARD_CAPACITY", 2)
    savers = [make_user(f"Saver{i}") for i in range(5)]
    ids = [saved(api, user, {"category": "mentoring"})["savedSearchId"] for user in savers]
    shards = sorted(p["postingKey"] for p in posting_items())
    assert shards == ["mentoring/*|*|*#0", "mentoring/*|*|*#1", "mentoring/*|*|*#2"]
    listing = mentor(api, bob, LISBON)
    activate(api, admin, runner, listing["id"])
    assert sorted(e["data"]["savedSearchId"] for e in matched_events()) == sorted(ids)
    assert api.call("DELETE", f"/v1/saved-searches/{ids[-1]}", savers[-1].key).status_code == 200
    report = percolator.percolate(listing["id"])
    assert report.matches == 4
    assert report.recorded == 0


def test_percolation_reads_only_candidate_searches(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    saved(api, alice, MENTORS_NEAR_LISBON)
    for query in ({"category": "jobs"}, {"q": "haskell"}, {**MENTORS_NEAR_LISBON, "meta.location_lat": "52.52",
                                                           "meta.location_lng": "13.405"}):
        saved(api, alice, query)
    listing = mentor(api, bob, LISBON)
    activate(api, admin, runner, listing["id"])
    report = percolator.percolate(listing["id"])
    assert report.candidates == 1
    assert report.matches == 1


# -- delivery --------------------------------------------------------------------------------


def test_the_savers_subscribed_webhooks_receive_a_signed_listing_matched(
    api: Api, alice: User, bob: User, admin: User, runner: Any, receivers: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast_delivery_settings(monkeypatch)
    subscribed: Receiver = receivers("ok")
    other: Receiver = receivers("ok")
    webhook = create_webhook(api, alice, subscribed.url, events=["listing.matched"])
    create_webhook(api, alice, other.url, events=["message.new"])
    search = saved(api, alice, MENTORS_NEAR_LISBON)
    listing = mentor(api, bob, LISBON)
    activate(api, admin, runner, listing["id"])
    runner.drain()
    [request] = subscribed.wait_for(1)
    assert other.requests == []
    headers = {k.lower(): v for k, v in request.headers.items()}
    assert headers["x-webhook-event"] == "listing.matched"
    assert headers["x-webhook-signature"] == signing.hex_signature(webhook["secret"], request.body)
    body = envelope(request.body)
    assert body["event"] == "listing.matched"
    assert body["data"]["savedSearchId"] == search["savedSearchId"]
    assert body["data"]["listingId"] == listing["id"]
    log = api.call("GET", f"/v1/webhooks/{webhook['id']}/deliveries", alice.key).json
    assert [d["event"] for d in log["deliveries"]] == ["listing.matched"]


def test_storage_counter_item_is_not_listed(api: Api, alice: User) -> None:
    saved(api, alice, {"q": "x"})
    items = table_items(settings().SAVED_SEARCHES_TABLE)
    assert {i["savedSearchId"] for i in items} >= {repository.COUNTER}
    assert api.call("GET", "/v1/saved-searches", alice.key).json["total"] == 1
    assert storage.get(settings().SAVED_SEARCHES_TABLE, {"ownerId": alice.user_id, "savedSearchId": repository.COUNTER})


def test_a_search_saved_after_the_activation_does_not_match_it(api: Api, alice: User, bob: User, admin: User, runner: Any) -> None:
    from tests.integration.helpers import claim, decide

    listing = mentor(api, bob, LISBON)
    runner.drain()
    [task] = [a for a in claim(api, admin) if a["listingId"] == listing["id"]]
    assert decide(api, admin, task["approvalId"]).status_code == 200
    search = saved(api, alice, MENTORS_NEAR_LISBON)  # the stream is read only after this
    runner.drain()
    assert matches(api, alice, search["savedSearchId"])["total"] == 0
    assert matched_events() == []


#: One saved search per filter kind, each way, and whether the listing of
#: :func:`test_each_filter_kind_both_ways_through_the_percolator` matches it.
FILTER_KINDS: list[tuple[dict[str, Any], bool]] = [
    ({"category": "mentoring"}, True),
    ({"category": "jobs"}, False),
    ({"category": "mentoring", "role": "mentor"}, True),
    ({"category": "mentoring", "role": "mentee"}, False),
    ({"role": "mentor"}, True),
    ({"q": "pyth"}, True),
    ({"q": "python lisbon"}, True),
    ({"q": "haskell"}, False),
    ({"q": "mentor haskell"}, False),
    ({"category": "mentoring", "meta.topics": "career"}, True),
    ({"category": "mentoring", "meta.topics": "career,data"}, False),
    ({"category": "mentoring", "meta.format": "online"}, True),
    ({"category": "mentoring", "meta.format": "both"}, False),
    ({"category": "mentoring", "meta.yearsExperience_min": "10"}, True),
    ({"category": "mentoring", "meta.yearsExperience_min": "11"}, False),
    ({"category": "mentoring", "meta.yearsExperience_max": "9"}, False),
    ({"category": "mentoring", "meta.hourlyRate": "40"}, True),
    ({"category": "mentoring", "meta.hourlyRate": "41"}, False),
    (MENTORS_NEAR_LISBON, True),
    ({**MENTORS_NEAR_LISBON, "meta.location_lat": "41.1579", "meta.location_lng": "-8.6291"}, False),  # Porto
    ({**MENTORS_NEAR_LISBON, "meta.location_lat": "41.1579", "meta.location_lng": "-8.6291", "radiusKm": 300}, True),
]


def test_each_filter_kind_both_ways_through_the_percolator(api: Api, alice: User, bob: User) -> None:
    """Every search of :data:`FILTER_KINDS` saved, one listing activated and percolated once: it
    matches exactly the searches marked True, and only those are read (the embedded queries decide
    before any saved search is read)."""
    searches = [(service.create_saved_search(Caller(alice.user_id), SavedSearchCreate(query=query)).savedSearchId, expected)
                for query, expected in FILTER_KINDS]
    listing = create_listing(api, bob, "mentoring", "mentor", meta={
        "title": "Python mentor", "format": "online", "hourlyRate": "40", "yearsExperience": "10", **LISBON})
    item = listings_repository.get(listing["id"])
    assert item is not None
    listings_repository.transition(item, Transition.APPROVE, clock.iso(), version=1)
    report = percolator.percolate(listing["id"])
    assert [(query, saved_id in report.matched_ids) for (saved_id, _), (query, _) in zip(searches, FILTER_KINDS, strict=True)] \
        == [(query, expected) for query, expected in FILTER_KINDS]
    assert report.candidates == sum(expected for _, expected in FILTER_KINDS)
