"""``GET /v1/listings/mine`` pages natively: one Query of ``pageSize + 1`` items of the
``ownerNewest`` index after a signed key cursor, ``total`` from the owner's listing counter kept
in the transactions that create and delete listings (in-process moto, over the Chalice test client).
"""

from __future__ import annotations

import uuid
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib.kernel.config import settings as settings_
from chalicelib.listings import owner_list
from chalicelib.persistence import storage
from chalicelib.search import counters as list_counters
from scripts import lists_backfill
from tests.integration.conftest import Api, User, make_user
from tests.integration.helpers import assert_error, counting_reads, create_listing, moto_examples, table_items
from tests.integration.test_list_pages import frozen_clock


def mine(api: Api, user: User, query: str) -> dict[str, Any]:
    """``GET /v1/listings/mine?<query>`` (asserts 200)."""
    response = api.call("GET", f"/v1/listings/mine?{query}", user.key)
    assert response.status_code == 200, response.json
    body: dict[str, Any] = response.json
    return body


def walk(api: Api, user: User, page_size: int) -> tuple[list[str], list[int]]:
    """Follow ``nextCursor`` from the first page: the listing ids in order and every page's ``total``."""
    found: list[str] = []
    totals: list[int] = []
    query = f"pageSize={page_size}"
    while True:
        page = mine(api, user, query)
        found += [listing["id"] for listing in page["listings"]]
        totals.append(page["total"])
        if page["nextCursor"] is None:
            return found, totals
        query = f"pageSize={page_size}&cursor={page['nextCursor']}"


def stored_listing_ids(owner_id: str) -> list[str]:
    """Brute force: the owner's stored listings, newest first, ties in ``createdAt`` by id descending."""
    items = [i for i in table_items(settings_().LISTINGS_TABLE) if i["ownerId"] == owner_id]
    return [i["listingId"] for i in sorted(items, key=lambda i: (i["createdAt"], i["listingId"]), reverse=True)]


def counted(owner_id: str) -> int:
    """The owner's listing counter as stored."""
    return list_counters.read(owner_list.counter_name(owner_id), owner_list.COUNT_ATTRIBUTE)


# --- property: random histories of creates and deletes equal brute force -----------------------


@given(
    plan=st.lists(st.tuples(st.booleans(), st.integers(0, 2)), max_size=10),
    page_size=st.integers(1, 3),
)
@settings(max_examples=moto_examples(6), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_cursor_pages_equal_brute_force_over_creates_and_deletes(
    api: Api, plan: list[tuple[bool, int]], page_size: int
) -> None:
    """Random creates (at colliding ``createdAt``) and deletes of one owner's listings: the cursor
    pages concatenate to the brute-force list, every page's total is its length, the counter is
    exact, and ``page=2`` without a cursor is the second slice."""
    run = uuid.uuid4().hex[:6]
    owner = make_user(f"Owner{run}")
    other = make_user(f"Other{run}")
    now = ["2026-05-01T00:00:00.000Z"]
    alive: list[str] = []
    with frozen_clock(now):
        create_listing(api, other, meta={"title": "Not mine"})
        for create, slot in plan:
            if create or not alive:
                now[0] = f"2026-05-01T00:00:0{slot}.000Z"
                alive.append(create_listing(api, owner, meta={"title": f"L{slot}"})["id"])
            else:
                gone = alive.pop(slot % len(alive))
                assert api.call("DELETE", f"/v1/listings/{gone}", owner.key).status_code == 200
    truth = stored_listing_ids(owner.user_id)
    assert sorted(truth) == sorted(alive)
    found, totals = walk(api, owner, page_size)
    assert found == truth
    assert set(totals) == {len(truth)}
    assert counted(owner.user_id) == len(truth)
    offset = mine(api, owner, f"pageSize={page_size}&page=2")
    assert [listing["id"] for listing in offset["listings"]] == truth[page_size : 2 * page_size]
    assert offset["total"] == len(truth)


# --- totals ------------------------------------------------------------------------------------


def test_total_is_exact_after_create_and_delete_and_a_repeated_delete_counts_once(api: Api, alice: User) -> None:
    ids = [create_listing(api, alice, meta={"title": f"L{n}"})["id"] for n in range(3)]
    assert mine(api, alice, "pageSize=1")["total"] == 3
    assert api.call("DELETE", f"/v1/listings/{ids[1]}", alice.key).status_code == 200
    assert api.call("DELETE", f"/v1/listings/{ids[1]}", alice.key).status_code == 404
    page = mine(api, alice, "pageSize=1")
    assert page["total"] == 2 == counted(alice.user_id)
    assert [listing["id"] for listing in page["listings"]] == stored_listing_ids(alice.user_id)[:1]
    assert sorted(stored_listing_ids(alice.user_id)) == sorted([ids[0], ids[2]])


# --- cost: items read follow the page ------------------------------------------------------------


def test_a_page_reads_page_size_plus_one_items_and_two_calls_whatever_the_list_length(api: Api, alice: User) -> None:
    ids = [create_listing(api, alice, meta={"title": f"L{n}"})["id"] for n in range(12)]
    first = mine(api, alice, "pageSize=3")
    with counting_reads() as reads:
        second = mine(api, alice, f"pageSize=3&cursor={first['nextCursor']}")
    assert sorted(ids) == sorted(stored_listing_ids(alice.user_id))
    assert [listing["id"] for listing in second["listings"]] == stored_listing_ids(alice.user_id)[3:6]
    assert second["total"] == 12
    # The route resolves the caller's API key first (one GetItem), then: the page's Query
    # (pageSize + 1 items) and one BatchGetItem of the owner and the counter.
    listing_reads = [c for c in reads.calls if c != "GetItem"]
    assert listing_reads == ["Query", "BatchGetItem"], reads.calls
    assert reads.items <= 3 + 1 + 2 + reads.calls.count("GetItem"), reads.items


# --- cursors --------------------------------------------------------------------------------------


def test_a_tampered_or_foreign_cursor_is_refused_naming_cursor(api: Api, alice: User, bob: User) -> None:
    for n in range(3):
        create_listing(api, alice, meta={"title": f"L{n}"})
    cursor = mine(api, alice, "pageSize=1")["nextCursor"]
    assert cursor is not None
    tampered = cursor[:-2] + ("AA" if not cursor.endswith("AA") else "BB")
    assert_error(api.call("GET", f"/v1/listings/mine?pageSize=1&cursor={tampered}", alice.key), 400, "VALIDATION_ERROR", "cursor")
    assert_error(api.call("GET", f"/v1/listings/mine?pageSize=1&cursor={cursor}", bob.key), 400, "VALIDATION_ERROR", "cursor")
    assert_error(api.call("GET", f"/v1/listings/mine?pageSize=2&cursor={cursor}", alice.key), 400, "VALIDATION_ERROR", "cursor")


# --- backfill ---------------------------------------------------------------------------------------


def test_backfill_indexes_and_counts_listings_written_before(api: Api, alice: User) -> None:
    ids = [create_listing(api, alice, meta={"title": f"L{n}"})["id"] for n in range(3)]
    config = settings_()
    # As if written before: no ownerNewest attribute, no counter.
    for item in table_items(config.LISTINGS_TABLE):
        storage.put(config.LISTINGS_TABLE, {k: v for k, v in item.items() if k != owner_list.SORT})
    storage.delete(config.COUNTERS_TABLE, list_counters.key(owner_list.counter_name(alice.user_id)))
    assert mine(api, alice, "pageSize=10") == {"listings": [], "total": 0, "page": 1, "pageSize": 10, "nextCursor": None}
    done = lists_backfill.backfill()
    assert (done["listings"], done["reindexedListings"]) == (3, 3)
    found, totals = walk(api, alice, 2)
    assert found == stored_listing_ids(alice.user_id)
    assert sorted(found) == sorted(ids)
    assert set(totals) == {3}
    assert lists_backfill.backfill()["reindexedListings"] == 0  # idempotent
