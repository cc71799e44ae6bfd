"""A listing search's filters evaluated directly on a Listings item, without an index.

Search and the saved-search percolator both decide with the engine's checks (the projection
check and the word match of :mod:`chalicelib.search.engine`; the percolator through
:func:`chalicelib.listings.search.spec.matches`); this module states the same rules over the
item's own fields (``searchText``, ``meta``) and is the brute-force reference the search tests
and benchmarks compare the engine against.
:func:`location` is also how the percolator finds a listing's points to look up.

This module reads no store: it depends on the parsed :class:`~chalicelib.listings.search.query.SearchQuery`
and on a listing item (the Listings table shape) only.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chalicelib.listings.search.query import SearchQuery, language_of
from chalicelib.search import analysis, geo


@dataclass(frozen=True)
class Match:
    """A listing passes a query.

    Attributes
    ----------
    distance_km:
        Great-circle (haversine) km from the query's geo center to the listing's location
        field, unrounded; ``None`` when the query has no geo filter.
    """

    distance_km: float | None


def location(listing: Mapping[str, Any], key: str) -> tuple[float, float] | None:
    """``(lat, lng)`` in degrees of the listing's location field ``key``, or ``None`` when unset."""
    meta = listing.get("meta") or {}
    lat, lng = meta.get(f"{key}_lat"), meta.get(f"{key}_lng")
    return (float(lat), float(lng)) if lat and lng else None


def matches_terms(listing: Mapping[str, Any], terms: list[str]) -> bool:
    """True when every folded ``q`` word (query order) matches a term of the listing's ``searchText``
    by the engine's rule (:func:`chalicelib.search.analysis.kind`: its stem, for the last word a
    term it starts or that starts it, or a term one typo from its stem, two for a long word), in
    the category's language. Stop words that are not the last word are ignored.
    """
    if not terms:
        return True
    language = language_of(listing["categoryKey"])
    held = set(analysis.terms_of(str(listing.get("searchText") or ""), language))
    return all(any(analysis.kind(word, term) is not None for term in held) for word in analysis.query_words(terms, language))


def evaluate(query: SearchQuery, listing: Mapping[str, Any]) -> Match | None:
    """Whether ``listing`` (a Listings item: categoryKey, roleKey, meta, searchText) passes ``query``.

    Checks, cheapest first: category, role, every meta filter, every ``q`` term (word prefix),
    and the geo filter (location field set; within ``radiusKm`` when given). Status is not
    checked: callers pass ACTIVE listings.

    Returns
    -------
    Match or None
        The match with its distance in km, or ``None`` when the listing does not pass.
    """
    if query.category is not None and listing["categoryKey"] != query.category.key:
        return None
    if query.role and listing["roleKey"] != query.role:
        return None
    meta = listing.get("meta") or {}
    if not all(f.matches(meta) for f in query.filters) or not matches_terms(listing, query.terms):
        return None
    if query.geo is None:
        return Match(distance_km=None)
    point = location(listing, query.geo.key)
    if point is None:
        return None
    distance = geo.haversine_km(query.geo.lat, query.geo.lng, *point)
    if query.geo.radius_km is not None and distance > query.geo.radius_km:
        return None
    return Match(distance_km=distance)
