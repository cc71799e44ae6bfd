"""The saved searches as the engine's percolator sees them: the spec of a saved search, the spec of
a listing and the matcher (pure logic).

The filing scheme, the entry payload and the candidate lookup are the engine's
(:mod:`chalicelib.search.percolator`, where the keys ``<kind>|<geo>|<word>`` are described);
this module supplies what only the listings domain knows:

* the kind of a saved search, ``<category|*>/<role|*>``, and of a listing (its category or
  ``*`` times its role or ``*``);
* the circle of a saved search (its geo filter with ``radiusKm``) and the points of a listing
  (its location fields);
* the term of a saved search: the rarest (:func:`rarest_term`) of the terms every match must
  hold (:func:`required_terms`: not a stop word that search ignores); the words of a listing
  (its ``searchText``);
* the matcher: the engine's own check of a document against a query
  (:func:`chalicelib.search.engine.matches`, through :func:`chalicelib.listings.search.spec.matches`)
  on the embedded query, or on the term and circle without one.

The saved search itself is then read and verified once more with the same check
(:mod:`chalicelib.saved_searches.percolator`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from chalicelib.categories.registry import all_categories
from chalicelib.kernel import errors
from chalicelib.listings.search.filters import location
from chalicelib.listings.search.query import SearchQuery
from chalicelib.listings.search.spec import LOCATION, Candidate, matches
from chalicelib.listings.search.spec import spec as index_spec
from chalicelib.saved_searches.query import parsed
from chalicelib.search import engine, percolator
from chalicelib.search.percolator import ANY, MAX_COVER_CELLS, Entry, rarest_term
from chalicelib.text_analysis.analyzer import any_stop_word

__all__ = [
    "ANY", "MAX_COVER_CELLS", "Entry", "entry_of", "item_spec", "keys_of", "listing_cells", "lookup_keys", "prefilter",
    "query_spec", "rarest_term", "required_terms", "scope_of",
]


def required_terms(terms: list[str]) -> list[str]:
    """The ``q`` terms every match holds, in any category's language: all but the stop words that
    search ignores (a stop word that is not the last term)."""
    return [t for i, t in enumerate(terms) if i == len(terms) - 1 or not any_stop_word(t)]


def scope_of(posting_key: str) -> str:
    """The category scope of a saved search filed under ``posting_key`` (its category key, or ``*``):
    the category part of the key's kind (every key of a search has the same kind)."""
    return posting_key.split("/", 1)[0]


def query_spec(query: SearchQuery) -> percolator.QuerySpec:
    """How a saved search is filed: its kind, its circle (geo filter with a radius) and its rarest required term."""
    circle = None
    if query.geo is not None and query.geo.radius_km is not None:
        circle = percolator.Circle(query.geo.key, query.geo.lat, query.geo.lng, query.geo.radius_km)
    kind = f"{query.category.key if query.category else ANY}/{query.role or ANY}"
    return percolator.QuerySpec(kind, circle, rarest_term(required_terms(query.terms)))


def keys_of(query: SearchQuery) -> list[str]:
    """Every posting key a saved search is filed under (1 to :data:`MAX_COVER_CELLS`)."""
    return percolator.keys_of(query_spec(query))


def entry_of(params: dict[str, str], owner_id: str) -> Entry:
    """The payload stored with each of the saved search's posting entries.

    Parameters
    ----------
    params:
        The saved search's (validated) query parameters.
    owner_id:
        The saver.
    """
    text = json.dumps(params, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return percolator.entry_of(owner_id, query_spec(parsed(params)), text)


def _points(listing: Mapping[str, Any]) -> list[tuple[str, float, float]]:
    category = all_categories().get(listing["categoryKey"])
    found = []
    for field in category.location_fields() if category else []:
        point = location(listing, field.key)
        if point is not None:
            found.append((field.key, *point))
    return found


def item_spec(listing: Mapping[str, Any]) -> percolator.ItemSpec:
    """How a listing finds its saved searches: its ``2 x 2`` kinds (its category or ``*``, its role
    or ``*``), its location fields' points and its ``searchText`` words."""
    kinds = [f"{c}/{r}" for c in (listing["categoryKey"], ANY) for r in (listing["roleKey"], ANY)]
    return percolator.ItemSpec(kinds, _points(listing), str(listing.get("searchText") or "").split())


def listing_cells(listing: Mapping[str, Any]) -> list[str]:
    """``<fieldKey>:<cell>`` of every location field the listing has, at every precision."""
    return percolator.item_cells(_points(listing))


def lookup_keys(listing: Mapping[str, Any]) -> list[str]:
    """Every posting key whose saved searches may match ``listing`` (an ACTIVE Listings item)."""
    return percolator.lookup_keys(item_spec(listing))


def prefilter(entry: Entry, listing: Candidate) -> bool:
    """True when the posting entry may match ``listing``: not the listing owner's, and the embedded
    query passes the engine's check (:func:`chalicelib.listings.search.spec.matches`); without one,
    the rarest term matches a term of the listing as a last query word would (its widest match) and
    the listing lies within the circle. An embedded query that no longer parses (a category field
    removed, a rule tightened since it was saved) passes: the percolator reads the saved search,
    finds it unparseable too and logs it. No store is read."""
    if entry.owner_id == listing.listing["ownerId"]:
        return False
    if entry.query:
        try:
            query = parsed(json.loads(entry.query))
        except errors.RuleViolation:
            return True
        return matches(query, listing) is not None
    doc = listing.document
    return percolator.term_and_circle_pass(
        entry,
        lambda term: engine.matches(index_spec(), engine.Query((doc.scope,), (term,)), doc, listing.terms) is not None,
        lambda field: doc.point if field in doc.keywords.get(LOCATION, ()) else None,
    )
