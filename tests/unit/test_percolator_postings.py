"""The percolator's index (pure logic): a saved search is found for every listing it matches.

Property: whenever the engine's check (:func:`chalicelib.listings.search.spec.matches`) says a listing matches a query,
one of the posting keys the query is filed under is among the keys the listing reads, and the
posting entry's payload passes the prefilter. So the index never loses a match; the
integration property test (test_saved_searches_property.py) checks the whole path on moto.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from chalicelib.listings.search.query import parse_search
from chalicelib.listings.search.spec import candidate, matches
from chalicelib.saved_searches import postings
from chalicelib.saved_searches.query import parsed
from tests.unit.saved_search_strategies import listings, queries

#: What the Listings table holds besides the drawn fields while a listing is ACTIVE.
ACTIVE = {"status": "ACTIVE", "version": 1, "createdAt": "2026-01-01T00:00:00.000000Z"}


@given(listing=listings(), query=queries())
def test_a_matching_search_is_always_a_candidate(listing: dict[str, Any], query: dict[str, str]) -> None:
    listing = {**listing, **ACTIVE, "listingId": "lst_1", "ownerId": "usr_owner"}
    search = parsed(query)
    entry = postings.Entry.decode(postings.entry_of(query, "usr_saver").encode())
    ready = candidate(listing)
    assert ready is not None
    found = bool(set(postings.keys_of(search)) & set(postings.lookup_keys(listing))) and postings.prefilter(entry, ready)
    if matches(search, ready) is not None:
        assert found


@given(listing=listings(), query=queries())
def test_the_owner_is_never_a_candidate(listing: dict[str, Any], query: dict[str, str]) -> None:
    listing = {**listing, **ACTIVE, "listingId": "lst_1", "ownerId": "usr_same"}
    ready = candidate(listing)
    assert ready is not None
    assert not postings.prefilter(postings.entry_of(query, "usr_same"), ready)


@given(st.lists(st.sampled_from(["python", "go", "rust", "pythonic", "data"]), min_size=1, max_size=4))
def test_rarest_term_is_the_longest_then_first_alphabetically(terms: list[str]) -> None:
    chosen = postings.rarest_term(terms)
    assert chosen is not None
    assert all(len(chosen) > len(t) or (len(chosen) == len(t) and chosen <= t) for t in terms)
    assert postings.rarest_term(list(reversed(terms))) == chosen


def test_keys_by_kind() -> None:
    assert postings.keys_of(parse_search({})) == ["*/*|*|*"]
    assert postings.keys_of(parse_search({"category": "jobs", "role": "hiring"})) == ["jobs/hiring|*|*"]
    assert postings.keys_of(parse_search({"q": "go pythonista rust"})) == ["*/*|*|p"]  # the first letter: typos keep only it
    assert postings.keys_of(parse_search({"q": "go"})) == ["*/*|*|g"]
    assert postings.keys_of(parse_search({"q": "the go"})) == ["*/*|*|g"]  # a stop word search ignores is never the token
    lisbon = {"meta.location_lat": "38.7223", "meta.location_lng": "-9.1393"}
    cells = postings.keys_of(parse_search({**lisbon, "radiusKm": "25", "q": "python"}))
    assert 1 < len(cells) <= postings.MAX_COVER_CELLS
    assert all(k.startswith("*/*|location:") and k.endswith("|*") and len(k.split("|")[1]) == len("location:") + 4 for k in cells)
    assert postings.keys_of(parse_search({**lisbon, "radiusKm": "15000"})) == ["*/*|*|*"]  # wider than any covering
    assert postings.keys_of(parse_search(lisbon)) == ["*/*|*|*"]  # no radius: sorts only


@given(listing=listings(), query=queries())
def test_the_prefilter_without_an_embedded_query_never_drops_a_match(listing: dict[str, Any], query: dict[str, str]) -> None:
    listing = {**listing, **ACTIVE, "listingId": "lst_1", "ownerId": "usr_owner"}
    full = postings.entry_of(query, "usr_saver")
    bare = postings.Entry(full.owner_id, full.term, full.circle)  # as for a query too long to embed
    ready = candidate(listing)
    assert ready is not None
    if matches(parsed(query), ready) is not None:
        assert postings.prefilter(bare, ready)
    assert postings.prefilter(full, ready) == (matches(parsed(query), ready) is not None)


def test_long_queries_are_not_embedded() -> None:
    short = postings.entry_of({"q": "python"}, "usr_1")
    assert short.query == '{"q":"python"}'
    long_query = {"q": " ".join(["mentoring"] * 40)}
    assert postings.entry_of(long_query, "usr_1").query == ""
    assert postings.entry_of(long_query, "usr_1").term == "mentoring"


def test_entries_round_trip() -> None:
    entry = postings.Entry("usr_1", "pyth", ("location", 38.7223, -9.1393, 25.0), '{"q":"a|b"}')
    assert postings.Entry.decode(entry.encode()) == entry
    assert postings.Entry.decode(postings.Entry("usr_1", "", None).encode()) == postings.Entry("usr_1", "", None)


@given(listing=listings())
def test_an_embedded_query_that_no_longer_parses_passes_to_the_percolators_own_check(listing: dict[str, Any]) -> None:
    """A query saved before a rule changed (here a coordinate with a leading zero, refused since):
    the prefilter lets the percolator read the saved search, which logs it, instead of raising."""
    listing = {**listing, **ACTIVE, "listingId": "lst_1", "ownerId": "usr_owner"}
    stale = '{"category":"mentoring","meta.location_lat":"038.7","meta.location_lng":"-9.1"}'
    ready = candidate(listing)
    assert ready is not None
    assert postings.prefilter(postings.Entry("usr_saver", "", None, stale), ready)
