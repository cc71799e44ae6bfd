"""Listings as documents of the search engine: the index spec and the typed engine query of a search.

A listing is searchable while ACTIVE. Its document (:func:`document`): scope = its category;
recency = ``createdAt``; text = its searched fields (``title`` boost 3.0, other text fields 1.5,
rich text (the description) 1.0, a place's name 3.0 as the title, BM25F field boosts); keywords = its role
(``_role``), each filterable select, multiselect option, boolean and number value, and, in the
entries' projection only, its owner (``_owner``, so a page reads its owners with its listings)
and the key of its location field (``_loc``); numbers = its number and integer fields; point = its location. Lists live under
:data:`NAMESPACE` in the SearchIndex table.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from typing import Any

from chalicelib.categories.models import FieldType
from chalicelib.categories.registry import all_categories
from chalicelib.listings import repository, status
from chalicelib.listings.index import location_of
from chalicelib.listings.search.query import SearchQuery, language_of
from chalicelib.persistence import batch_reads
from chalicelib.search import engine
from chalicelib.search.index import Document, IndexSpec, impacts, term_frequencies
from chalicelib.search.store import DynamoStore, search_index
from chalicelib.users import api as users
from chalicelib.users.records import UserRecord

#: The namespace of the listing lists (a new one is filed by ``scripts/search_backfill.py``).
NAMESPACE = "listings.v11"
#: BM25F boost of the title and of each searched field type. A location field names where the
#: listing is, as its title names what it is: a place in the query weighs as a title word there.
TITLE_BOOST = 3.0
BOOSTS = {FieldType.TEXT: 1.5, FieldType.RICHTEXT: 1.0, FieldType.LOCATION: TITLE_BOOST}
#: Average words of a field of each type (BM25F length normalization; realistic listings).
LENGTHS = {FieldType.TEXT: 8.0, FieldType.RICHTEXT: 40.0, FieldType.LOCATION: 2.0}
TITLE_LENGTH = 7.0
#: Filterable field types with keyword lists, and those with number lists.
KEYWORD_TYPES = frozenset({FieldType.SELECT, FieldType.MULTISELECT, FieldType.BOOLEAN, FieldType.NUMBER, FieldType.INTEGER})
NUMBER_TYPES = frozenset({FieldType.NUMBER, FieldType.INTEGER})
ROLE, OWNER, LOCATION = "_role", "_owner", "_loc"
#: Keys of one BatchGetItem (a page's listings and their owners share one when they fit).
MAX_BATCH = 100


def _micros(iso: str) -> int:
    moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return int(moment.timestamp()) * 1_000_000 + moment.microsecond


def document(listing: Mapping[str, Any]) -> Document | None:
    """The document of a Listings item, or ``None`` unless it is ACTIVE."""
    if not status.is_public(str(listing.get("status") or "")):
        return None
    category = all_categories().get(str(listing["categoryKey"]))
    meta: Mapping[str, str] = listing.get("meta") or {}
    keywords: dict[str, tuple[str, ...]] = {ROLE: (str(listing["roleKey"]),), OWNER: (str(listing["ownerId"]),)}
    numbers: dict[str, Decimal] = {}
    text: dict[str, str] = {}
    for field in category.fields if category else ():
        value = meta.get(field.key)
        if value is None:
            continue
        if field.type in BOOSTS:
            text[field.key] = value
        if field.filterable and field.type in KEYWORD_TYPES:
            keywords[field.key] = tuple(value.split(",")) if field.type == FieldType.MULTISELECT else (value,)
        if field.filterable and field.type in NUMBER_TYPES:
            with contextlib.suppress(InvalidOperation):  # validated values are numbers; an odd one has no range entry
                numbers[field.key] = Decimal(value)
    located = location_of(listing)
    if located is not None:
        keywords[LOCATION] = (located[0],)
    return Document(
        id=str(listing["listingId"]), version=int(listing.get("version") or 0), scope=str(listing["categoryKey"]),
        newest=_micros(str(listing["createdAt"])), text=text, keywords=keywords, numbers=numbers,
        point=(located[1], located[2]) if located else None,
    )


@functools.cache
def _field_weights() -> tuple[dict[str, float], dict[str, float]]:
    boosts: dict[str, float] = {}
    lengths: dict[str, float] = {}
    for category in all_categories().values():
        for field in category.fields:
            if field.type in BOOSTS:
                boosts[field.key] = TITLE_BOOST if field.key == "title" else BOOSTS[field.type]
                lengths[field.key] = TITLE_LENGTH if field.key == "title" else LENGTHS[field.type]
    return boosts, lengths


class Owners:
    """The owners of the listings a search loaded (read in the listings' own BatchGetItem)."""

    def __init__(self) -> None:
        self.found: dict[str, UserRecord] = {}
        self.asked: set[str] = set()

    def load(self, entries: Mapping[str, Mapping[str, Any]]) -> dict[str, Mapping[str, Any]]:
        """The ACTIVE listings of ``entries`` (id -> entry projection) with their owners, one BatchGetItem."""
        owner_ids = list(dict.fromkeys(str(o) for e in entries.values() for o in (e.get("kw") or {}).get(OWNER, ())))
        wanted = [o for o in owner_ids if o not in self.asked]
        if len(entries) + len(wanted) > MAX_BATCH:
            wanted = []
        self.asked.update(wanted)
        listing_part, owner_part = repository.read_part(list(entries)), users.read_part(wanted)
        found = batch_reads.read(listing_part, owner_part) if wanted else None
        listings = found.of(listing_part) if found else repository.get_many(list(entries))
        if found:
            self.found.update(found.of(owner_part))
        return {i: item for i, item in listings.items() if status.is_public(item["status"])}


def spec(owners: Owners | None = None) -> IndexSpec:
    """The listing index spec; ``owners`` collects the owners its loads read along."""
    boosts, lengths = _field_weights()
    return IndexSpec(
        namespace=NAMESPACE, boosts=boosts, lengths=lengths, language=language_of, document=document,
        load=(owners or Owners()).load, unlisted=frozenset({OWNER, LOCATION}),
    )


def store() -> DynamoStore:
    """The SearchIndex table as the engine's store."""
    return search_index()


def engine_query(query: SearchQuery) -> engine.Query:
    """The engine's typed query of a parsed listing search."""
    scopes = (query.category.key,) if query.category else tuple(all_categories())
    keywords: list[tuple[str, str]] = [(ROLE, query.role)] if query.role else []
    bounds: dict[str, dict[str, Decimal]] = {}
    for f in query.filters:
        if f.op in ("min", "max"):
            bounds.setdefault(f.key, {})[f.op] = f.bound
        elif f.op == "contains":
            keywords += [(f.key, option) for option in f.value.split(",")]
        else:
            keywords.append((f.key, f.value))
    ranges = tuple(engine.NumberRange(key, b.get("min"), b.get("max")) for key, b in bounds.items())
    near = None
    order: engine.Order = "relevance" if query.ranked else "newest"
    if query.geo is not None:
        keywords.append((LOCATION, query.geo.key))
        near, order = engine.Near(query.geo.lat, query.geo.lng, query.geo.radius_km), "nearest"
    return engine.Query(scopes, tuple(query.terms), tuple(keywords), ranges, near, order)


@dataclass(frozen=True)
class Candidate:
    """An ACTIVE listing as the percolator tests it against many searches: its document and term impacts."""

    listing: Mapping[str, Any]
    document: Document
    terms: Mapping[str, int]


def candidate(listing: Mapping[str, Any]) -> Candidate | None:
    """The listing ready to be tested (:func:`matches`), or ``None`` unless it is ACTIVE."""
    doc = document(listing)
    return None if doc is None else Candidate(listing, doc, impacts(term_frequencies(spec(), doc)))


def matches(query: SearchQuery, listing: Candidate) -> float | None:
    """Whether the listing is a result of ``query``, by the engine's own check
    (:func:`chalicelib.search.engine.matches`; no store is read).

    Returns
    -------
    float or None
        The km from the query's geo centre (0.0 without a geo filter), or ``None`` when the
        listing is not a result.
    """
    return engine.matches(spec(), engine_query(query), listing.document, listing.terms)
