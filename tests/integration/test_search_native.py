"""Index-native search pages, cursors and exact totals from counters (in-process moto)."""

from __future__ import annotations

import threading
import uuid
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib.kernel import clock
from chalicelib.kernel.config import settings as settings_
from chalicelib.listings import counters, repository
from chalicelib.listings.search.query import parse_search
from chalicelib.listings.search.service import search_listings
from chalicelib.listings.search.spec import NAMESPACE
from chalicelib.listings.status import Transition
from tests.integration.aws_session import Resources, reset
from tests.integration.conftest import Api, User
from tests.integration.helpers import (
    assert_error,
    aws_calls,
    create_listing,
    error_fields,
    index_listings,
    moto_examples,
    newest_first,
    search_reads,
    table_items,
)
from tests.integration.helpers import search_listings as search_page


def _active(api: Api, owner: User, count: int, category: str = "jobs", role: str | None = None) -> list[str]:
    """``count`` listings made ACTIVE through the repository's activation (counters included), oldest first."""
    ids = []
    for _ in range(count):
        listing = create_listing(api, owner, category, role)
        item = repository.get(listing["id"])
        assert item is not None
        repository.transition(item, Transition.APPROVE, clock.iso())
        ids.append(listing["id"])
    index_listings()  # the Listings stream files them in the search index
    return ids


def _all_pages(api: Api, user: User, query: str) -> tuple[list[str], list[dict[str, Any]]]:
    pages = [search_page(api, user, query)]
    while pages[-1]["nextCursor"]:
        pages.append(search_page(api, user, f"{query}&cursor={pages[-1]['nextCursor']}"))
    return [item["id"] for page in pages for item in page["listings"]], pages


def test_cursor_pages_walk_the_category_newest_first_with_exact_totals(api: Api, alice: User, bob: User) -> None:
    jobs = _active(api, alice, 7)
    housing = _active(api, alice, 2, "housing")
    found, pages = _all_pages(api, bob, "category=jobs&pageSize=3")
    assert found == jobs[::-1]
    assert [(p["page"], p["total"], len(p["listings"])) for p in pages] == [(1, 7, 3), (2, 7, 3), (3, 7, 1)]
    everything, _ = _all_pages(api, bob, "pageSize=4")
    assert everything == (jobs + housing)[::-1]
    offset = search_page(api, bob, "category=jobs&pageSize=3&page=2")
    assert [i["id"] for i in offset["listings"]] == jobs[::-1][3:6]
    assert offset["nextCursor"]


def test_a_cursor_page_reads_only_its_page(api: Api, alice: User, bob: User) -> None:
    _active(api, alice, 12)
    first = search_page(api, bob, "category=jobs&pageSize=4")
    with aws_calls("Query") as queries, aws_calls("BatchGetItem") as batches:
        second = search_page(api, bob, f"category=jobs&pageSize=4&cursor={first['nextCursor']}")
    queries = search_reads(queries)  # without the viewer's block set (trust-and-safety.md)
    assert len(second["listings"]) == 4
    # The category's newest-first list, continued after the first page's last key.
    assert {q["ExpressionAttributeValues"][":pk"]["S"] for q in queries} == {f"{NAMESPACE}|jobs|a"}
    assert all("ExclusiveStartKey" in q and q["Limit"] <= 20 for q in queries)
    assert len(batches) <= 2  # the list sizes, then the page's listings with their owners


def test_role_pages_use_the_role_shards(api: Api, alice: User, bob: User) -> None:
    hiring = _active(api, alice, 3, "jobs", "hiring")
    _active(api, alice, 2, "jobs", "seeking")
    result = search_page(api, bob, "category=jobs&role=hiring&pageSize=2")
    assert result["total"] == 3
    assert [i["id"] for i in result["listings"]] == hiring[::-1][:2]


def test_tampered_cursor_is_a_400_naming_it(api: Api, alice: User, bob: User) -> None:
    _active(api, alice, 3)
    cursor = search_page(api, bob, "category=jobs&pageSize=2")["nextCursor"]
    for tampered in (cursor[:-3] + ("xyz" if not cursor.endswith("xyz") else "abc"), "garbage"):  # edited, not a cursor
        response = api.call("GET", f"/v1/listings/search?category=jobs&pageSize=2&cursor={tampered}", bob.key)
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == ["cursor"], tampered


def test_cursor_of_another_query_or_page_size_is_a_400(api: Api, alice: User, bob: User) -> None:
    _active(api, alice, 3)
    cursor = search_page(api, bob, "category=jobs&pageSize=2")["nextCursor"]
    for query in (f"category=housing&pageSize=2&cursor={cursor}", f"category=jobs&pageSize=3&cursor={cursor}"):
        response = api.call("GET", f"/v1/listings/search?{query}", bob.key)
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == ["cursor"]
    response = api.call("GET", f"/v1/listings/search?category=jobs&pageSize=2&page=5&cursor={cursor}", bob.key)
    assert error_fields(response) == ["page"]


def test_list_routes_return_working_cursors(api: Api, alice: User) -> None:
    for _ in range(3):
        create_listing(api, alice)
    first = api.call("GET", "/v1/listings/mine?pageSize=2", alice.key).json
    second = api.call("GET", f"/v1/listings/mine?pageSize=2&cursor={first['nextCursor']}", alice.key).json
    assert (second["page"], len(second["listings"]), second["nextCursor"]) == (2, 1, None)
    assert {i["id"] for i in first["listings"]}.isdisjoint(i["id"] for i in second["listings"])


def _counts(category: str = "jobs", role: str | None = None) -> int:
    return counters.read_counts([category], role)


def test_totals_follow_pause_resume_update_and_delete(api: Api, alice: User, bob: User) -> None:
    first, second, third = _active(api, alice, 3)
    assert (_counts(), _counts("jobs", "hiring")) == (3, 3)
    assert api.call("PATCH", f"/v1/listings/{first}/status", alice.key, {"status": "PAUSED"}).status_code == 200
    index_listings()
    assert search_page(api, bob, "category=jobs")["total"] == 2
    assert api.call("PATCH", f"/v1/listings/{first}/status", alice.key, {"status": "ACTIVE"}).status_code == 200
    assert api.call("PATCH", f"/v1/listings/{second}", alice.key, {"meta": {"title": "Renamed job"}}).status_code == 200
    assert api.call("DELETE", f"/v1/listings/{third}", alice.key).status_code == 200
    index_listings()
    result = search_page(api, bob, "category=jobs")
    assert (result["total"], [i["id"] for i in result["listings"]]) == (1, [first])
    assert _counts("jobs", "hiring") == 1


def test_the_backfill_moves_the_counters_out_of_the_search_index_table(api: Api, alice: User) -> None:
    """A deployment whose counters were in the SearchIndex table: the backfill writes the exact counts
    into the Counters table and deletes the old items; the posting lists stay."""
    from chalicelib.persistence import storage
    from scripts import search_backfill

    _active(api, alice, 2)
    config = settings_()
    legacy = [i for i in table_items(config.COUNTERS_TABLE) if str(i["pk"]).startswith(search_backfill.COUNTER_PREFIX)]
    for item in legacy:
        storage.delete(config.COUNTERS_TABLE, {"pk": item["pk"], "sk": item["sk"]})
        storage.put(config.SEARCH_INDEX_TABLE, {**item, "n": 7})
    postings = len(table_items(config.SEARCH_INDEX_TABLE))
    assert _counts() == 0
    done = search_backfill.backfill()
    assert done["movedCounters"] == len(legacy) > 0
    assert (_counts(), _counts("jobs", "hiring")) == (2, 2)
    left = table_items(config.SEARCH_INDEX_TABLE)
    assert not [i for i in left if str(i["pk"]).startswith("count#")]
    assert len(left) == postings - done["movedCounters"]
    assert search_backfill.backfill()["movedCounters"] == 0


def test_totals_stay_exact_under_concurrent_status_changes(api: Api, alice: User, bob: User) -> None:
    ids = _active(api, alice, 6)
    errors: list[Exception] = []

    def toggle(listing_id: str, rounds: int) -> None:
        try:
            for round_ in range(rounds):
                status = "PAUSED" if round_ % 2 == 0 else "ACTIVE"
                api.call("PATCH", f"/v1/listings/{listing_id}/status", alice.key, {"status": status})
        except Exception as exc:  # noqa: BLE001 - surfaced by the assertion below
            errors.append(exc)

    # Two writers per listing race on the same transitions; the conditions let one of each pair win.
    threads = [threading.Thread(target=toggle, args=(i, 3 + n % 2)) for n, i in enumerate(ids * 2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    statuses = [repository.get(i)["status"] for i in ids]  # type: ignore[index]
    active = statuses.count("ACTIVE")
    assert _counts() == active
    index_listings()
    result = search_page(api, bob, "category=jobs&pageSize=100")
    assert result["total"] == active == len(result["listings"])


# --- property: pages equal a brute-force evaluation -------------------------------------

_ROLES = {"jobs": ["hiring", "seeking"], "housing": ["offering", "seeking"]}


@given(
    plan=st.lists(st.tuples(st.sampled_from(["jobs", "housing"]), st.integers(0, 1), st.booleans()), min_size=0, max_size=14),
    page_size=st.integers(1, 5),
    category=st.sampled_from(["jobs", "housing", None]),
    role_index=st.integers(0, 1) | st.none(),
)
@settings(max_examples=moto_examples(6), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_cursor_pages_equal_brute_force(
    aws: dict[str, str], aws_resources: Resources, plan: list[tuple[str, int, bool]], page_size: int,
    category: str | None, role_index: int | None,
) -> None:
    """Random listings (some paused), any category/role/page size: the pages concatenated are
    the brute-force newest-first list and every page's total is the brute-force count (the
    exact totals of the counters). The same pages over the in-memory store, with many more
    examples: ``tests/unit/test_search_engine_property.py``."""
    reset(aws_resources)  # each example on empty tables: the writes' cost grows with what the tables hold
    run = uuid.uuid4().hex[:8]
    for n, (category_key, role_n, paused) in enumerate(plan):
        now = f"2026-03-01T00:00:{n:02d}.000Z"
        item = {"listingId": f"lst_{run}{n:02d}", "ownerId": "usr_prop", "categoryKey": category_key,
                "roleKey": _ROLES[category_key][role_n], "title": "T", "meta": {"title": "T"}, "channels": [],
                "webhookIds": [], "status": "PENDING", "version": 1, "searchText": "t", "createdAt": now, "updatedAt": now}
        repository.create(item, [])
        written = repository.transition(item, Transition.APPROVE, now)
        if paused:
            repository.transition(written, Transition.PAUSE, now)
    index_listings()  # the search index follows the Listings stream
    role = _ROLES[category][role_index] if category and role_index is not None else None
    params: dict[str, str] = {"pageSize": str(page_size), **({"category": category} if category else {}),
                              **({"role": role} if role else {})}
    stored = table_items(settings_().LISTINGS_TABLE)  # every example's listings: the brute-force truth
    expected = [i["listingId"] for i in newest_first(stored)
                if i["status"] == "ACTIVE" and (category is None or i["categoryKey"] == category)
                and (role is None or i["roleKey"] == role)]
    found: list[str] = []
    cursor: str | None = None
    while True:
        page = search_listings(parse_search({**params, **({"cursor": cursor} if cursor else {})}))
        found += [listing.id for listing in page.listings]
        assert page.total == len(expected)
        cursor = page.nextCursor
        if cursor is None:
            break
    assert found == expected
