"""Where the percolator files a saved search, and which posting lists a listing reads (pure logic).

A percolator inverts search: documents (listings) are matched against stored queries (saved
searches). Each saved search is filed, like a document in an inverted index, under posting
keys built from the filters a matching listing must satisfy exactly, so that evaluating a
listing reads only the posting lists of its own category, role, location and words:

``<category|*>/<role|*>|<geo>|<word>``

* category and role: the saved search's, or ``*`` when it has none;
* geo: when the saved search has a geo filter with ``radiusKm``, one key per geohash cell
  covering the circle (``<fieldKey>:<cell>``), at the finest precision of :data:`PRECISIONS`
  that needs at most :data:`MAX_COVER_CELLS` cells (a listing lies in exactly one cell per
  precision, so it reads one key per precision); ``*`` without a radius or for circles wider
  than the coarsest covering allows;
* word: when the key has no geo cell and the saved search has a ``q`` term, the first
  letter (:data:`WORD_TOKEN_LENGTH`) of its rarest term (:func:`rarest_term`, among the terms
  every match must hold: not a stop word that search ignores); ``*`` otherwise. A listing
  reads the keys of the first letters of its words. One letter, because every way a word
  matches a ``q`` term keeps its first letter (same stem, a correction, a prefix:
  :mod:`chalicelib.text_analysis.analyzer`), while the letters after it may differ. Geo keys carry no word: the circle already narrows them,
  and a word key per cell would multiply the keys a listing reads.

Each posting entry carries a payload that the percolator tests in memory before it reads a
saved search (:func:`prefilter`): the saver, and the whole query when it is short (at most
:data:`MAX_EMBEDDED_QUERY_CHARS` characters of JSON, nearly every saved search), tested with the
search's own filter function; for longer queries the rarest term and the circle. So the saved
searches read are nearly exactly the matches, however many share a posting list. The saved
search itself is then read and verified once more with the same function.

Sources: the percolator (Elasticsearch "percolate" query); geohash (G. Niemeyer, 2008).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from chalicelib.categories.registry import all_categories
from chalicelib.listings.search.filters import evaluate, matches_terms
from chalicelib.listings.search.query import SearchQuery
from chalicelib.saved_searches.query import parsed
from chalicelib.search import geo
from chalicelib.text_analysis.analyzer import any_stop_word

#: Geohash precisions a saved search's circle may be covered at, coarsest first
#: (precision 2 cells are about 1,250 x 625 km, 5 about 4.9 x 4.9 km).
PRECISIONS = (2, 3, 4, 5)
#: Most cells one saved search is filed under (each is one posting update when it is saved).
MAX_COVER_CELLS = 16
#: Longest query (compact JSON) embedded in its posting entries; longer ones embed term and circle only.
MAX_EMBEDDED_QUERY_CHARS = 300
#: Characters of the rarest term that form the word part of a key (the first letter: see above).
WORD_TOKEN_LENGTH = 1
#: The word parts of searches saved before stemming and typos (3 characters). Listings read these
#: keys too, so those searches keep matching until they are saved again (docs/saved-searches.md).
LEGACY_WORD_TOKEN_LENGTH = 3
ANY = "*"
#: km per degree of latitude (mean Earth radius, as in :mod:`chalicelib.search.geo`).
KM_PER_DEGREE = math.pi * geo.EARTH_RADIUS_KM / 180.0


def rarest_term(terms: list[str]) -> str | None:
    """The term used to index a ``q``: the longest term, ties broken by alphabetical order.

    "Rarest" is estimated by length, without corpus statistics: longer words are rarer (Zipf's
    law of abbreviation, G. K. Zipf, "The Psycho-Biology of Language", 1935), and length is
    known when the search is saved, stays fixed while listings come and go, and is the same
    on every machine, so a saved search's keys never move.

    Parameters
    ----------
    terms:
        The folded ``q`` terms (``SearchQuery.terms``).

    Returns
    -------
    str or None
        The chosen term, or ``None`` when ``terms`` is empty.
    """
    return min(terms, key=lambda t: (-len(t), t)) if terms else None


@dataclass(frozen=True)
class Entry:
    """The payload of one posting entry: what is tested before the saved search is read.

    Attributes
    ----------
    owner_id:
        The saver (a listing's owner is never matched with their own saved searches).
    term:
        The rarest ``q`` term, or ``""``: some word of the listing must start with it.
    circle:
        ``(fieldKey, lat, lng, radiusKm)`` of the geo filter with a radius, or ``None``.
    query:
        The saved query as compact JSON (sorted keys), or ``""`` when longer than
        :data:`MAX_EMBEDDED_QUERY_CHARS`.
    """

    owner_id: str
    term: str
    circle: tuple[str, float, float, float] | None
    query: str = ""

    def encode(self) -> str:
        """Compact text form stored in the posting item (``owner|term|field,lat,lng,radius|query``)."""
        circle = "" if self.circle is None else ",".join(str(part) for part in self.circle)
        return f"{self.owner_id}|{self.term}|{circle}|{self.query}"

    @classmethod
    def decode(cls, text: str) -> Entry:
        """Inverse of :meth:`encode` (ids, folded terms and numbers hold no ``|``; the query comes last)."""
        owner_id, term, circle, query = text.split("|", 3)
        if not circle:
            return cls(owner_id, term, None, query)
        field, lat, lng, radius = circle.split(",")
        return cls(owner_id, term, (field, float(lat), float(lng), float(radius)), query)


def _kinds(query: SearchQuery) -> str:
    return f"{query.category.key if query.category else ANY}/{query.role or ANY}"


def cover(query: SearchQuery) -> list[str]:
    """The geo parts of a saved search's keys: ``<fieldKey>:<cell>`` per covering cell, or ``[*]``."""
    if query.geo is None or query.geo.radius_km is None:
        return [ANY]
    for precision in reversed(PRECISIONS):
        if _fewest_cells(query.geo.lat, query.geo.radius_km, precision) > MAX_COVER_CELLS:
            continue  # hopeless: skip enumerating (a wide circle has millions of fine cells)
        cells = geo.covering_cells(query.geo.lat, query.geo.lng, query.geo.radius_km, precision)
        if len(cells) <= MAX_COVER_CELLS:
            return [f"{query.geo.key}:{cell}" for cell in cells]
    return [ANY]


def _fewest_cells(lat: float, radius_km: float, precision: int) -> float:
    """A lower bound of the cells of ``precision`` covering the circle's bounding box.

    Geohash cells of ``precision`` characters span ``180 / 2**floor(5p/2)`` degrees of latitude
    and ``360 / 2**ceil(5p/2)`` of longitude; the box spans ``2r / 111.2`` degrees of latitude and
    at least as many of longitude.
    """
    bits = 5 * precision
    lat_degrees, lng_degrees = 180.0 / 2.0 ** (bits // 2), 360.0 / 2.0 ** (bits - bits // 2)
    span = min(2 * radius_km / KM_PER_DEGREE, 180.0)
    return max(1.0, span / lat_degrees) * max(1.0, span / lng_degrees)


def required_terms(terms: list[str]) -> list[str]:
    """The ``q`` terms every match holds, in any category's language: all but the stop words that
    search ignores (a stop word that is not the last term)."""
    return [t for i, t in enumerate(terms) if i == len(terms) - 1 or not any_stop_word(t)]


def word_token(query: SearchQuery) -> str:
    """The word part of a saved search's keys without a geo cell (``*`` without a term)."""
    term = rarest_term([t for t in required_terms(query.terms) if len(t) >= WORD_TOKEN_LENGTH])
    return term[:WORD_TOKEN_LENGTH] if term else ANY


def keys_of(query: SearchQuery) -> list[str]:
    """Every posting key a saved search is filed under (1 to :data:`MAX_COVER_CELLS`)."""
    cells = cover(query)
    if cells == [ANY]:
        return [f"{_kinds(query)}|{ANY}|{word_token(query)}"]
    return [f"{_kinds(query)}|{cell}|{ANY}" for cell in cells]


def entry_of(params: dict[str, str], owner_id: str) -> Entry:
    """The payload stored with each of the saved search's posting entries.

    Parameters
    ----------
    params:
        The saved search's (validated) query parameters.
    owner_id:
        The saver.
    """
    query = parsed(params)
    circle = None
    if query.geo is not None and query.geo.radius_km is not None:
        circle = (query.geo.key, query.geo.lat, query.geo.lng, query.geo.radius_km)
    text = json.dumps(params, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    return Entry(owner_id, rarest_term(required_terms(query.terms)) or "", circle, text if len(text) <= MAX_EMBEDDED_QUERY_CHARS else "")


def listing_cells(listing: Mapping[str, Any]) -> list[str]:
    """``<fieldKey>:<cell>`` of every location field the listing has, at every precision."""
    category = all_categories().get(listing["categoryKey"])
    meta = listing.get("meta") or {}
    found: list[str] = []
    for field in category.location_fields() if category else []:
        lat, lng = meta.get(f"{field.key}_lat"), meta.get(f"{field.key}_lng")
        if lat and lng:
            found.extend(f"{field.key}:{geo.cell_of(float(lat), float(lng), p)}" for p in PRECISIONS)
    return found


def listing_tokens(listing: Mapping[str, Any]) -> list[str]:
    """The word parts a listing reads: the distinct first letters of its ``searchText`` words, and
    their :data:`LEGACY_WORD_TOKEN_LENGTH`-character prefixes (the keys of older saved searches)."""
    words = str(listing.get("searchText") or "").split()
    return sorted({w[:n] for w in words for n in (WORD_TOKEN_LENGTH, LEGACY_WORD_TOKEN_LENGTH) if len(w) >= n})


def lookup_keys(listing: Mapping[str, Any]) -> list[str]:
    """Every posting key whose saved searches may match ``listing`` (an ACTIVE Listings item).

    ``2 x 2`` kinds (the listing's category or ``*``, its role or ``*``) times: each of its
    cells (:func:`listing_cells`), and ``*`` with each of its word tokens or ``*``.
    """
    kinds = [f"{c}/{r}" for c in (listing["categoryKey"], ANY) for r in (listing["roleKey"], ANY)]
    tails = [f"{cell}|{ANY}" for cell in listing_cells(listing)]
    tails += [f"{ANY}|{token}" for token in [*listing_tokens(listing), ANY]]
    return [f"{kind}|{tail}" for kind in kinds for tail in tails]


def prefilter(entry: Entry, listing: Mapping[str, Any]) -> bool:
    """True when the posting entry may match ``listing``: not the listing owner's, and the embedded
    query passes :func:`~chalicelib.listings.search.filters.evaluate` (without one: the rarest term
    is a word prefix of the listing and the listing lies within the circle). No store is read."""
    if entry.owner_id == listing["ownerId"]:
        return False
    if entry.query:
        return evaluate(parsed(json.loads(entry.query)), listing) is not None
    if entry.term and not matches_terms(listing, [entry.term]):  # as a last term: the widest match of it
        return False
    if entry.circle is not None:
        field, lat, lng, radius = entry.circle
        meta = listing.get("meta") or {}
        point_lat, point_lng = meta.get(f"{field}_lat"), meta.get(f"{field}_lng")
        if not (point_lat and point_lng):
            return False
        if geo.haversine_km(lat, lng, float(point_lat), float(point_lng)) > radius:
            return False
    return True
