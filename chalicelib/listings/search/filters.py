"""The one decision whether a listing matches a search: used by search and by the saved-search percolator.

Search (:mod:`chalicelib.listings.search.service`) runs it over the candidates it read from the
indexes; the percolator (:mod:`chalicelib.saved_searches.percolator`) runs it over one newly
ACTIVE listing and each candidate saved search. Keeping one function is what makes "a listing
matches a saved search exactly when that search, run afterwards, returns the listing" hold.

This module reads no store: it depends on the parsed :class:`~chalicelib.listings.search.query.SearchQuery`
and on a listing item (the Listings table shape) only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from chalicelib.categories.models import FieldType
from chalicelib.listings.search.query import SearchQuery, language_of
from chalicelib.search import geo
from chalicelib.text_analysis import analyzer


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
    """True when every folded ``q`` term (query order) matches a word of the listing's ``searchText``.

    The analyzer's rule in the listing's category language
    (:func:`chalicelib.text_analysis.analyzer.best_match`): the same word, the same stem, a
    correction within the typo distance, or, for the last term, a word it starts. Stop words
    that are not the last term match anything.
    """
    if not terms:
        return True
    language = language_of(listing["categoryKey"])
    vocab = analyzer.vocabulary(str(listing.get("searchText") or ""), language)
    return all(t.ignored or analyzer.best_match(t, vocab) is not None for t in analyzer.query_terms(terms, language))


#: Filter types an entry's projection holds (:func:`chalicelib.listings.search.postings.projection`).
_PROJECTED = frozenset({FieldType.SELECT, FieldType.MULTISELECT, FieldType.BOOLEAN, FieldType.NUMBER, FieldType.INTEGER})
#: The projection's name of the role (:data:`chalicelib.listings.search.postings.ROLE`).
_ROLE = "_role"


def covered(query: SearchQuery) -> bool:
    """True when :func:`entry_matches` decides the whole query (no ``q`` term, no geo filter, every
    filter of a projected type): a posting entry then needs no listing read to be counted."""
    return not query.terms and query.geo is None and all(f.type in _PROJECTED for f in query.filters)


def entry_matches(query: SearchQuery, data: Mapping[str, str] | None) -> bool:
    """Whether a posting entry's projection (role and filterable values) passes the query's role
    and meta filters of projected types; the others (``q``, geo, unprojected types) are left to
    :func:`evaluate` on the listing. An entry without a projection passes (it is verified later).

    The same rule as :func:`evaluate` (:meth:`MetaFilter.matches` over the projected values),
    so an entry is dropped only when its listing, as filed, fails the query.
    """
    return entry_check(query)(data)


def entry_check(query: SearchQuery) -> Callable[[Mapping[str, str] | None], bool]:
    """:func:`entry_matches` of ``query`` as a function of the projection alone, its projected
    filters picked once (a covered read checks it on every entry it reads)."""
    role = query.role
    checks = [f.matches for f in query.filters if f.type in _PROJECTED]

    def check(data: Mapping[str, str] | None) -> bool:
        if data is None:
            return True
        if role and data.get(_ROLE) != role:
            return False
        for matches in checks:  # noqa: SIM110 (a loop, not all(<generator>): it runs for every entry read)
            if not matches(data):
                return False
        return True

    return check


def entry_fields(query: SearchQuery) -> tuple[str, ...]:
    """The names of an entry's projection that :func:`entry_check` of ``query`` reads (the role's
    and each projected filter's field), so a covered read asks DynamoDB for those values only
    (:func:`chalicelib.search.postings.read`, ``fields``)."""
    names = [_ROLE] if query.role else []
    names += [f.key for f in query.filters if f.type in _PROJECTED]
    return tuple(dict.fromkeys(names))


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
