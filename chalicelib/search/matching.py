"""The one rule deciding whether a listing matches a search query (no stores imported here).

Search verifies its candidates with :func:`match`; saved searches (the percolator) call
:func:`listing_matches` on a listing that changed. Both see the same semantics: category and
role equal, every ``meta`` filter passes (:meth:`MetaFilter.matches`), every ``q`` term is a
prefix of a word of the listing's ``searchText`` (folded as :func:`chalicelib.text.words`
folds), and with a geo filter the listing has that location and, with ``radiusKm``, lies
within it (haversine, km).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from chalicelib.search import geo
from chalicelib.search.query import SearchQuery


@dataclass(frozen=True)
class Match:
    """A listing that matches: ``distance_km`` from the geo filter's center (``None`` without one)."""

    distance_km: float | None


def location(item: dict[str, Any], key: str) -> tuple[float, float] | None:
    """``(lat, lng)`` of location field ``key`` of a listing item, or ``None`` when it has none."""
    meta = item.get("meta") or {}
    lat, lng = meta.get(f"{key}_lat"), meta.get(f"{key}_lng")
    return (float(lat), float(lng)) if lat and lng else None


def matches_terms(search_text: str, terms: list[str]) -> bool:
    """True when every term is a prefix of some word of ``search_text`` (space separated, folded)."""
    haystack = " " + search_text
    return all(f" {term}" in haystack for term in terms)


def match(query: SearchQuery, item: dict[str, Any]) -> Match | None:
    """The match of listing ``item`` (a listings-table item) for ``query``, or ``None``.

    Status is not checked here: callers pass ACTIVE listings (search re-reads them; the
    percolator runs on activation).
    """
    if query.category is not None and item.get("categoryKey") != query.category.key:
        return None
    if query.role and item.get("roleKey") != query.role:
        return None
    meta = item.get("meta") or {}
    if not all(f.matches(meta) for f in query.filters):
        return None
    if not matches_terms(item.get("searchText", ""), query.terms):
        return None
    if query.geo is None:
        return Match(distance_km=None)
    point = location(item, query.geo.key)
    if point is None:
        return None
    distance = geo.haversine_km(query.geo.lat, query.geo.lng, *point)
    if query.geo.radius_km is not None and distance > query.geo.radius_km:
        return None
    return Match(distance_km=distance)


def listing_matches(query: SearchQuery, item: dict[str, Any]) -> bool:
    """True when listing ``item`` matches ``query`` (see :func:`match`)."""
    return match(query, item) is not None
