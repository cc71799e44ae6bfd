"""``GET /v1/saved-searches/{id}/matches`` reads about its page: the ``matchedNewest`` index
(``<matchedAt>#<listingId>``, newest first) after a signed key cursor, the page's listings re-read
to keep only still-ACTIVE ones, one page more to count on, and an honest ``total``
(``totalRelation`` ``eq`` when the list ended within the read, else ``gte``) (in-process moto).
"""

from __future__ import annotations

import uuid
from typing import Any

from chalicelib.blocks import api as blocks
from chalicelib.kernel import clock
from chalicelib.kernel.config import settings
from chalicelib.listings import repository as listings
from chalicelib.listings.status import Transition
from chalicelib.persistence import storage
from chalicelib.saved_searches import repository
from chalicelib.saved_searches.records import MatchRecord
from scripts import lists_backfill
from tests.integration.conftest import Api, User
from tests.integration.helpers import assert_error, counting_reads, edited_cursor, table_items, writes_one_at_a_time
from tests.integration.test_list_pages import active_listing
from tests.integration.test_search_round_trips import timed_calls


def saved(api: Api, user: User) -> str:
    response = api.call("POST", "/v1/saved-searches", user.key, {"query": {"category": "jobs"}, "alerts": False})
    assert response.status_code == 201, response.json
    saved_search_id: str = response.json["savedSearchId"]
    return saved_search_id


def record(saved_search_id: str, owner_id: str, listing_id: str, matched_at: str) -> None:
    """Record a match as the percolator does (its conditional Put)."""
    match: MatchRecord = {
        "savedSearchId": saved_search_id, "listingId": listing_id, "ownerId": owner_id, "matchedAt": matched_at,
        "distanceKm": None, "listingVersion": 1, "matchedNewest": repository.match_sort_key(matched_at, listing_id),
    }
    storage.transact([repository.match_op(match)])


def pause(listing_id: str) -> None:
    listings.transition(listings.get(listing_id) or {}, Transition.PAUSE, clock.iso())  # type: ignore[arg-type]


def matches(api: Api, user: User, saved_search_id: str, query: str = "") -> dict[str, Any]:
    response = api.call("GET", f"/v1/saved-searches/{saved_search_id}/matches{query}", user.key)
    assert response.status_code == 200, response.json
    body: dict[str, Any] = response.json
    return body


def active_newest_first(saved_search_id: str) -> list[str]:
    """Brute force: the search's matches whose listing is ACTIVE, newest first, ties by listing id descending."""
    stored = [m for m in table_items(settings().SAVED_SEARCH_MATCHES_TABLE) if m["savedSearchId"] == saved_search_id]
    ordered = sorted(stored, key=lambda m: (m["matchedAt"], m["listingId"]), reverse=True)
    return [m["listingId"] for m in ordered if (listings.get(m["listingId"]) or {}).get("status") == "ACTIVE"]


def walk(api: Api, user: User, saved_search_id: str, page_size: int) -> tuple[list[str], list[dict[str, Any]]]:
    """Follow ``nextCursor`` from the first page: the listing ids in order and every page's envelope."""
    found: list[str] = []
    pages: list[dict[str, Any]] = []
    query = f"?pageSize={page_size}"
    while True:
        page = matches(api, user, saved_search_id, query)
        found += [m["listing"]["id"] for m in page["matches"]]
        pages.append({k: v for k, v in page.items() if k != "matches"} | {"shown": len(page["matches"])})
        if page["nextCursor"] is None:
            return found, pages
        assert len(page["matches"]) == page_size  # never short before the last page
        query = f"?pageSize={page_size}&cursor={page['nextCursor']}"


def build(alice: User, bob: User, saved_search_id: str, count: int, paused_every: int = 0) -> list[str]:
    """``count`` ACTIVE listings of bob matched at colliding times (three per millisecond); every
    ``paused_every``-th one paused afterwards."""
    run = uuid.uuid4().hex[:6]
    ids = []
    with writes_one_at_a_time():  # the seed's transactions are not under test here: the pages' reads are
        for n in range(count):
            listing_id = active_listing(bob.user_id, run, n)
            record(saved_search_id, alice.user_id, listing_id, f"2026-06-01T00:00:{n // 3:02d}.000Z")
            ids.append(listing_id)
        if paused_every:
            for listing_id in ids[::paused_every]:
                pause(listing_id)
    return ids


def test_cursor_pages_are_the_active_matches_newest_first_without_gaps_or_repeats(api: Api, alice: User, bob: User) -> None:
    """The same matches walked at page sizes 1, 4 and 7."""
    search = saved(api, alice)
    build(alice, bob, search, 24, paused_every=3)
    expected = active_newest_first(search)
    assert len(expected) == 16
    for page_size in (1, 4, 7):
        found, pages = walk(api, alice, search, page_size)
        assert found == expected, page_size
        assert len(set(found)) == len(found)
        for number, page in enumerate(pages, start=1):
            seen = (number - 1) * page_size + page["shown"]
            assert page["page"] == number
            if page["totalRelation"] == "eq":
                assert page["total"] == 16
            else:
                assert seen < page["total"] <= 16  # a lower bound, proving the next page
        assert pages[-1]["totalRelation"] == "eq"
        assert pages[-1]["total"] == 16


def test_total_is_exact_when_the_list_ends_within_one_page_more(api: Api, alice: User, bob: User) -> None:
    search = saved(api, alice)
    build(alice, bob, search, 12)
    first = matches(api, alice, search, "?pageSize=5")
    assert (first["total"], first["totalRelation"]) == (10, "gte")  # the page and one more page counted
    second = matches(api, alice, search, f"?pageSize=5&cursor={first['nextCursor']}")
    assert (second["total"], second["totalRelation"]) == (12, "eq")
    wide = matches(api, alice, search, "?pageSize=6")
    assert (wide["total"], wide["totalRelation"]) == (12, "eq")


def test_page_without_cursor_passes_over_the_active_matches_before_it(api: Api, alice: User, bob: User) -> None:
    search = saved(api, alice)
    build(alice, bob, search, 15, paused_every=2)
    expected = active_newest_first(search)
    page = matches(api, alice, search, "?pageSize=2&page=3")
    assert [m["listing"]["id"] for m in page["matches"]] == expected[4:6]
    assert page["page"] == 3
    assert page["nextCursor"] is not None
    # 7: every ACTIVE match was seen (4 passed over, 2 shown, 1 counted past the page); whether the read
    # saw the end of the list too depends on where DynamoDB's Limit cut the last Query ("eq" or "gte").
    assert page["total"] == len(expected)


def test_paused_listings_are_read_past_and_come_back_when_resumed(api: Api, alice: User, bob: User) -> None:
    search = saved(api, alice)
    ids = build(alice, bob, search, 9)
    newest = list(reversed(ids))
    for listing_id in newest[1:7]:
        pause(listing_id)
    page = matches(api, alice, search, "?pageSize=2")
    assert [m["listing"]["id"] for m in page["matches"]] == [newest[0], newest[7]]  # never cut short
    assert (page["total"], page["totalRelation"]) == (3, "eq")
    listings.transition(listings.get(newest[3]) or {}, Transition.RESUME, clock.iso())  # type: ignore[arg-type]
    again = matches(api, alice, search, "?pageSize=2")
    assert [m["listing"]["id"] for m in again["matches"]] == [newest[0], newest[3]]
    # The page, then newest[4..5] (paused: no proof of a next page yet), then newest[6..7]: one ACTIVE
    # match counted and the list not read to its end, so 3 is a lower bound of the 4.
    assert (again["total"], again["totalRelation"]) == (3, "gte")
    assert again["nextCursor"] is not None
    rest = matches(api, alice, search, f"?pageSize=2&cursor={again['nextCursor']}")
    assert [m["listing"]["id"] for m in rest["matches"]] == [newest[7], newest[8]]
    assert (rest["total"], rest["totalRelation"], rest["nextCursor"]) == (4, "eq", None)


def test_a_page_reads_about_its_size_not_every_match(api: Api, alice: User, bob: User) -> None:
    """35 matches (more than the page and the one page counted past it): a page of 10 via cursor
    reads the search, 20 match items, their 20 listings and the page's owner, in four calls."""
    search = saved(api, alice)
    build(alice, bob, search, 35)
    first = matches(api, alice, search, "?pageSize=10")
    with counting_reads() as reads:
        page = matches(api, alice, search, f"?pageSize=10&cursor={first['nextCursor']}")
    assert [m["listing"]["id"] for m in page["matches"]] == active_newest_first(search)[10:20]
    assert (page["total"], page["totalRelation"]) == (30, "gte")
    assert reads.calls == ["GetItem", "Query", "BatchGetItem", "BatchGetItem"]  # search, matches, listings, owners
    assert reads.by_operation["Query"] == 20
    assert reads.items <= 1 + 20 + 20 + 10


def test_the_block_set_is_read_alongside_the_saved_search_not_after_it(api: Api, alice: User, bob: User) -> None:
    """A page whose viewer's block set is not cached makes one call more, in no more round trips.

    Each side is measured three times and keeps its fewest round trips: a thread scheduled late can
    only split a parallel step in two, never join two sequential calls (as ``bench/search.py``)."""
    search = saved(api, alice)
    build(alice, bob, search, 3)

    def measure(cached: bool) -> tuple[int, int]:
        matches(api, alice, search)  # caches the block set
        if not cached:
            blocks.forget_hidden()
        with timed_calls() as calls:
            matches(api, alice, search)
        return len(calls.spans), calls.round_trips()

    warm = [measure(cached=True) for _ in range(3)]
    cold = [measure(cached=False) for _ in range(3)]
    assert {calls for calls, _ in cold} == {calls + 1 for calls, _ in warm}
    assert min(trips for _, trips in cold) == min(trips for _, trips in warm)


def test_edited_or_foreign_cursors_are_rejected_naming_cursor(api: Api, alice: User, bob: User) -> None:
    search = saved(api, alice)
    other = saved(api, alice)
    build(alice, bob, search, 5)
    cursor = matches(api, alice, search, "?pageSize=2")["nextCursor"]
    assert cursor is not None
    edited = edited_cursor(cursor)
    for path in (
        f"/v1/saved-searches/{search}/matches?pageSize=2&cursor={edited}",
        f"/v1/saved-searches/{search}/matches?pageSize=3&cursor={cursor}",
        f"/v1/saved-searches/{other}/matches?pageSize=2&cursor={cursor}",
        f"/v1/saved-searches/{search}/matches?pageSize=2&cursor=garbage",
    ):
        assert_error(api.call("GET", path, alice.key), 400, "VALIDATION_ERROR", "cursor")
    assert_error(api.call("GET", f"/v1/saved-searches/{search}/matches?pageSize=2&cursor={cursor}", bob.key), 404, "NOT_FOUND")


def test_backfill_indexes_matches_written_before(api: Api, alice: User, bob: User) -> None:
    search = saved(api, alice)
    build(alice, bob, search, 4)
    table = settings().SAVED_SEARCH_MATCHES_TABLE
    for item in table_items(table):  # as if written before the matchedNewest index
        storage.put(table, {k: v for k, v in item.items() if k != "matchedNewest"})
    assert matches(api, alice, search)["matches"] == []
    done = lists_backfill.backfill()
    assert (done["matches"], done["reindexedMatches"]) == (4, 4)
    found, _ = walk(api, alice, search, 3)
    assert found == active_newest_first(search)
    assert lists_backfill.backfill()["reindexedMatches"] == 0  # idempotent
