"""The engine's percolator: how a stored query is filed under posting keys, and how an item's keys
find the candidate queries (pure logic; docs/search.md, "Percolator").

A percolator inverts search: documents are matched against stored queries. Each stored query
is filed, like a document in an inverted index, under posting keys built from the filters a
matching item must satisfy exactly, so that evaluating an item reads only the posting lists of
its own kinds, location and words:

``<kind>|<geo>|<word>``

* kind: an opaque facet the domain chooses (listings: ``<category|*>/<role|*>``); an item reads
  every kind it satisfies (:attr:`ItemSpec.kinds`);
* geo: when the query has a circle (:class:`Circle`), one key per geohash cell covering it
  (``<fieldKey>:<cell>``), at the finest precision of :data:`PRECISIONS` that needs at most
  :data:`MAX_COVER_CELLS` cells (an item's point lies in exactly one cell per precision, so it
  reads one key per precision); ``*`` without a circle or for circles wider than the coarsest
  covering allows;
* word: when the key has no geo cell and the query has a required term, its first letter
  (:data:`WORD_TOKEN_LENGTH`); ``*`` otherwise. An item reads the keys of the first letters of
  its words (and their :data:`LEGACY_WORD_TOKEN_LENGTH`-character prefixes, the keys of
  queries filed before). Geo keys carry no word: the circle already narrows them, and a word
  key per cell would multiply the keys an item reads.

Each posting entry carries a payload (:class:`Entry`) that is tested in memory before the
stored query is read: the owner, and the whole query when it is short (at most
:data:`MAX_EMBEDDED_QUERY_CHARS` characters of JSON), tested with the domain's matcher; for
longer queries the term and the circle (:func:`term_and_circle_pass`). The domain supplies
what the engine cannot know: the spec of a query (:class:`QuerySpec`), the spec of an item
(:class:`ItemSpec`) and the matcher.

Sources: the percolator (Elasticsearch "percolate" query); geohash (G. Niemeyer, 2008).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from chalicelib.search import geo

#: Geohash precisions a query's circle may be covered at, coarsest first
#: (precision 2 cells are about 1,250 x 625 km, 5 about 4.9 x 4.9 km).
PRECISIONS = (2, 3, 4, 5)
#: Most cells one query is filed under (each is one posting update when it is saved).
MAX_COVER_CELLS = 16
#: Longest query (compact JSON) embedded in its posting entries; longer ones embed term and circle only.
MAX_EMBEDDED_QUERY_CHARS = 300
#: Characters of the required term that form the word part of a key (the first letter: every way a
#: word matches a term in the text analyzer keeps its first letter, while later letters may differ).
WORD_TOKEN_LENGTH = 1
#: The word parts of queries filed before stemming and typos (3 characters). Items read these keys
#: too, so those queries keep matching until they are saved again.
LEGACY_WORD_TOKEN_LENGTH = 3
#: The wildcard part of a key.
ANY = "*"
#: km per degree of latitude (mean Earth radius, as in :mod:`chalicelib.search.geo`).
KM_PER_DEGREE = math.pi * geo.EARTH_RADIUS_KM / 180.0


@dataclass(frozen=True)
class Circle:
    """A query's location filter with a radius: the location field, its center (degrees) and radius (km)."""

    field: str
    lat: float
    lng: float
    radius_km: float


@dataclass(frozen=True)
class QuerySpec:
    """How a stored query is filed (supplied by the domain).

    Attributes
    ----------
    kind:
        The query's kind facet (``*`` parts for what it leaves open).
    circle:
        Its location filter with a radius, or ``None``.
    term:
        The term every match must hold a word starting with (the domain's choice: the rarest
        required term), or ``None``.
    """

    kind: str
    circle: Circle | None
    term: str | None


@dataclass(frozen=True)
class ItemSpec:
    """How an item finds its candidate queries (supplied by the domain).

    Attributes
    ----------
    kinds:
        Every kind facet the item satisfies (its own and the ``*`` variants).
    points:
        ``(fieldKey, lat, lng)`` of every location the item has (degrees).
    words:
        The item's indexed words (folded).
    """

    kinds: Sequence[str]
    points: Sequence[tuple[str, float, float]]
    words: Sequence[str]


def rarest_term(terms: list[str]) -> str | None:
    """The term used to index a query: the longest term, ties broken by alphabetical order.

    "Rarest" is estimated by length, without corpus statistics: longer words are rarer (Zipf's
    law of abbreviation, G. K. Zipf, "The Psycho-Biology of Language", 1935), and length is
    known when the query is saved, stays fixed while items come and go, and is the same on every
    machine, so a query's keys never move.

    Parameters
    ----------
    terms:
        Folded query terms.

    Returns
    -------
    str or None
        The chosen term, or ``None`` when ``terms`` is empty.
    """
    return min(terms, key=lambda t: (-len(t), t)) if terms else None


@dataclass(frozen=True)
class Entry:
    """The payload of one posting entry: what is tested before the stored query is read.

    Attributes
    ----------
    owner_id:
        The query's owner (an item's owner is never matched with their own queries).
    term:
        The required term, or ``""``: some word of the item must start with it.
    circle:
        ``(fieldKey, lat, lng, radiusKm)`` of the circle, or ``None``.
    query:
        The query as compact JSON (sorted keys), or ``""`` when longer than
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


def entry_of(owner_id: str, spec: QuerySpec, query_json: str) -> Entry:
    """The payload stored with each of a query's posting entries.

    Parameters
    ----------
    owner_id:
        The query's owner.
    spec:
        How the query is filed (its term and circle are embedded).
    query_json:
        The query as compact JSON; embedded when at most :data:`MAX_EMBEDDED_QUERY_CHARS` characters.
    """
    circle = None if spec.circle is None else (spec.circle.field, spec.circle.lat, spec.circle.lng, spec.circle.radius_km)
    return Entry(owner_id, spec.term or "", circle, query_json if len(query_json) <= MAX_EMBEDDED_QUERY_CHARS else "")


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


def cover(circle: Circle | None) -> list[str]:
    """The geo parts of a query's keys: ``<fieldKey>:<cell>`` per covering cell, or ``[*]``."""
    if circle is None:
        return [ANY]
    for precision in reversed(PRECISIONS):
        if _fewest_cells(circle.lat, circle.radius_km, precision) > MAX_COVER_CELLS:
            continue  # hopeless: skip enumerating (a wide circle has millions of fine cells)
        cells = geo.covering_cells(circle.lat, circle.lng, circle.radius_km, precision)
        if len(cells) <= MAX_COVER_CELLS:
            return [f"{circle.field}:{cell}" for cell in cells]
    return [ANY]


def word_token(term: str | None) -> str:
    """The word part of a query's keys without a geo cell (``*`` without a term)."""
    return term[:WORD_TOKEN_LENGTH] if term and len(term) >= WORD_TOKEN_LENGTH else ANY


def keys_of(spec: QuerySpec) -> list[str]:
    """Every posting key a query is filed under (1 to :data:`MAX_COVER_CELLS`)."""
    cells = cover(spec.circle)
    if cells == [ANY]:
        return [f"{spec.kind}|{ANY}|{word_token(spec.term)}"]
    return [f"{spec.kind}|{cell}|{ANY}" for cell in cells]


def item_cells(points: Iterable[tuple[str, float, float]]) -> list[str]:
    """``<fieldKey>:<cell>`` of every point of an item, at every precision of :data:`PRECISIONS`."""
    return [f"{field}:{geo.cell_of(lat, lng, p)}" for field, lat, lng in points for p in PRECISIONS]


def item_tokens(words: Iterable[str]) -> list[str]:
    """The word parts an item reads: the distinct first letters of its words, and their
    :data:`LEGACY_WORD_TOKEN_LENGTH`-character prefixes (the keys of older queries)."""
    return sorted({w[:n] for w in words for n in (WORD_TOKEN_LENGTH, LEGACY_WORD_TOKEN_LENGTH) if len(w) >= n})


def lookup_keys(spec: ItemSpec) -> list[str]:
    """Every posting key whose queries may match the item: each of its kinds times each of its cells
    (:func:`item_cells`), and ``*`` with each of its word tokens or ``*``."""
    tails = [f"{cell}|{ANY}" for cell in item_cells(spec.points)]
    tails += [f"{ANY}|{token}" for token in [*item_tokens(spec.words), ANY]]
    return [f"{kind}|{tail}" for kind in spec.kinds for tail in tails]


def term_and_circle_pass(
    entry: Entry, has_word: Callable[[str], bool], point: Callable[[str], tuple[float, float] | None],
) -> bool:
    """The test of an entry without an embedded query: the item has a word matching the term
    (``has_word``, the domain's rule) and its point of the circle's field (``point``) lies within
    the circle (haversine distance, km)."""
    if entry.term and not has_word(entry.term):
        return False
    if entry.circle is not None:
        field, lat, lng, radius = entry.circle
        located = point(field)
        if located is None or geo.haversine_km(lat, lng, *located) > radius:
            return False
    return True


def candidates(lists: Iterable[Mapping[str, str]], passes: Callable[[Entry], bool]) -> tuple[dict[str, str], int]:
    """The stored queries of the posting lists read whose entry passes the domain's prefilter.

    Parameters
    ----------
    lists:
        The entries of each posting list (shard) read: ``{queryId: encoded Entry}``.
    passes:
        The domain's prefilter of one entry (owner, embedded query or term and circle).

    Returns
    -------
    tuple
        ``{queryId: ownerId}`` of the candidates (each tested once), and the entries seen.
    """
    found: dict[str, str] = {}
    seen = 0
    for entries in lists:
        for query_id, encoded in entries.items():
            seen += 1
            entry = Entry.decode(encoded)
            if query_id not in found and passes(entry):
                found[query_id] = entry.owner_id
    return found, seen
