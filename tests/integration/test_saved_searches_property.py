"""The percolator's defining property, on moto: a listing matches a saved search
exactly when that search, run afterwards through ``GET /v1/listings/search``'s service, returns
the listing.

Hypothesis draws listings and saved-search queries from small vocabularies (so that both
outcomes are frequent) over every filter kind: category, role, select, multiselect, number and
integer ranges, boolean, ``q`` word prefixes, geo circles (near the antimeridian too). Each
example saves the search, creates and activates the listing through the real paths, runs the
percolator, then runs the search and pages through all its results. The percolator's own
side of it (a matching search is always a candidate) runs with many more examples over plain
values in ``tests/unit/test_percolator_postings.py``.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings

from chalicelib.auth.service import Caller
from chalicelib.kernel import clock
from chalicelib.listings import repository as listings
from chalicelib.listings.models import ListingCreate
from chalicelib.listings.search.query import parse_search
from chalicelib.listings.search.service import search_listings
from chalicelib.listings.service import create_listing
from chalicelib.listings.status import Transition
from chalicelib.saved_searches import percolator, service
from chalicelib.saved_searches.models import SavedSearchCreate
from tests.integration.conftest import make_user
from tests.integration.helpers import index_listings, moto_examples
from tests.unit.saved_search_strategies import listings as listing_items
from tests.unit.saved_search_strategies import queries


def _search_ids(query: dict[str, str]) -> set[str]:
    found: set[str] = set()
    params = {**query, "pageSize": "100"}
    while True:
        page = search_listings(parse_search(params))
        found.update(item.id for item in page.listings)
        if not page.nextCursor:
            return found
        params = {**query, "pageSize": "100", "cursor": page.nextCursor}


def test_a_listing_matches_exactly_when_the_search_run_afterwards_returns_it(aws: dict[str, str]) -> None:
    owner, saver = make_user("Owner"), make_user("Saver")
    outcomes: list[bool] = []

    @settings(max_examples=moto_examples(4), deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(listing=listing_items(), query=queries())
    def check(listing: dict[str, Any], query: dict[str, str]) -> None:
        search = service.create_saved_search(Caller(saver.user_id), SavedSearchCreate(query=query))
        try:
            body = ListingCreate(categoryKey=listing["categoryKey"], roleKey=listing["roleKey"], meta=listing["meta"],
                                 channels=["telegram"])
            created = create_listing(Caller(owner.user_id), body)
            item = listings.get(created.id)
            assert item is not None
            activated_at = clock.iso()
            written = listings.transition(item, Transition.APPROVE, activated_at, version=1)
            # the version the activation wrote, as its listing.activated event carries it
            report = percolator.percolate(created.id, int(written["version"]), activated_at)
            matched = search.savedSearchId in report.matched_ids
            index_listings()  # the search's posting lists follow the Listings stream
            assert matched == (created.id in _search_ids(query)), (query, listing["meta"])
            outcomes.append(matched)
        finally:  # one saved search at a time: the saver stays under the limit
            service.delete_saved_search(Caller(saver.user_id), search.savedSearchId)

    check()
    assert any(outcomes)
    assert not all(outcomes)
