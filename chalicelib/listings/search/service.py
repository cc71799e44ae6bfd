"""Listing search (DESIGN §1 "Search", issue 13; docs/search.md).

Two access paths, never a Scan:

* **Newest-first stream** (no geo filter): listings come straight from the write-sharded
  ``activeByCategoryShard`` / ``activeByRoleShard`` indexes of the category (every category
  without one), merged newest first (:mod:`chalicelib.listings.search.merge`) from the cursor's
  position, and each is verified by :func:`chalicelib.listings.search.filters.evaluate`.
  Without ``q`` or ``meta`` filters ``total`` comes from the counters
  (:mod:`chalicelib.listings.search.counters`) and the read stops when the page is full (items
  read ≈ pageSize). With filters the stream goes on counting matches until it has verified
  :data:`READ_BUDGET` listings; if the index still holds more, ``total`` is a lower bound
  (``totalRelation: "gte"``), else it is exact. The page is re-read from the table with one
  BatchGetItem, so it never shows a stale status.
* **Geo** (a location filter): :mod:`chalicelib.listings.search.nearest` (its own module).

Results are nearest first with ``distanceKm`` (km, rounded to 0.01) when a geo filter is
given (ties newest first), otherwise newest first with ``distanceKm`` null.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

from chalicelib.categories.registry import all_categories
from chalicelib.listings import repository
from chalicelib.listings.models import ListingPage, ListingSearchItem
from chalicelib.listings.records import ListingRecord
from chalicelib.listings.search import counters, filters, nearest
from chalicelib.listings.search.index import SHARDS, category_partition, newest_key, role_partition
from chalicelib.listings.search.merge import Fetch, merge_newest
from chalicelib.listings.search.query import SearchQuery
from chalicelib.listings.service import to_model
from chalicelib.listings.status import ListingStatus
from chalicelib.pagination import Position
from chalicelib.users import repository as users

#: Listings a filtered search verifies (beyond its page) before ``total`` becomes a lower bound.
READ_BUDGET = 1000


def _partitions(query: SearchQuery) -> tuple[str, list[str]]:
    """The index and its partitions (every shard) holding the query's category (and role)."""
    category_keys = [query.category.key] if query.category else list(all_categories())
    if query.role:
        return "activeByRoleShard", [role_partition(c, query.role, s) for c in category_keys for s in range(SHARDS)]
    return "activeByCategoryShard", [category_partition(c, s) for c in category_keys for s in range(SHARDS)]


def is_index_native(query: SearchQuery) -> bool:
    """True when the page and its total need no verification (no q, meta or geo filter)."""
    return not query.terms and not query.filters and query.geo is None


@dataclass
class _Streamed:
    items: list[ListingRecord]
    total: int
    relation: Literal["eq", "gte"]
    has_more: bool
    last_key: str | None


def _stream(query: SearchQuery, position: Position) -> _Streamed:
    """One newest-first page of a search without geo filter (see the module docstring)."""
    native = is_index_native(query)
    exact = counters.read_counts([query.category.key] if query.category else list(all_categories()), query.role) if native else None
    skip = 0 if position.key else position.offset
    need = skip + position.page_size
    index, partitions = _partitions(query)
    fetches: list[Fetch] = [functools.partial(repository.newest_page, index, p) for p in partitions]
    entries = merge_newest(fetches, need if native else max(need + 1, READ_BUDGET), position.key, key=newest_key)
    page: list[ListingRecord] = []
    matches = examined = 0
    exhausted = True
    for item in entries:
        examined += 1
        if filters.evaluate(query, item) is None:
            continue
        matches += 1
        if matches <= skip:
            continue
        if matches <= need:
            page.append(item)
            if native and matches == need:
                break  # the counters say whether more follow
        elif examined >= READ_BUDGET:
            exhausted = False  # one match past the page proves there is a next page
            break
    before = position.offset if position.key else 0
    last_key = newest_key(page[-1]) if page else position.key
    if exact is not None:
        return _Streamed(_fresh(query, page), exact, "eq", position.after(exact) and bool(page), last_key)
    return _Streamed(_fresh(query, page), before + matches, "eq" if exhausted else "gte", matches > need, last_key)


def _fresh(query: SearchQuery, page: list[ListingRecord]) -> list[ListingRecord]:
    """The page re-read from the table (one BatchGetItem): a listing paused, edited or deleted
    since the index was read (the index lags by a moment) is left out."""
    found = repository.get_many([item["listingId"] for item in page]) if page else {}
    fresh: list[ListingRecord] = []
    for item in page:
        current = found.get(item["listingId"])
        unchanged = current is not None and current["status"] == ListingStatus.ACTIVE and current.get("version") == item.get("version")
        if unchanged and current is not None and filters.evaluate(query, current) is not None:
            fresh.append(current)
    return fresh


def search_listings(query: SearchQuery) -> ListingPage:
    """Run a search and return one page of ``{listings, total, totalRelation, page, pageSize, nextCursor}``.

    Raises
    ------
    ValidationError
        The cursor is malformed, edited or belongs to another query (field ``cursor``).
    """
    position = query.page.position(query.scope)
    relation: Literal["eq", "gte"] = "eq"
    if query.geo is None:
        streamed = _stream(query, position)
        rows: list[tuple[float | None, ListingRecord]] = [(None, item) for item in streamed.items]
        total, relation = streamed.total, streamed.relation
        next_cursor = position.next_cursor(streamed.has_more, streamed.last_key)
    else:
        found = nearest.page(query, position)
        rows = nearest.rows_of(found, functools.partial(_fresh, query))
        total, relation = found.total, found.relation
        next_cursor = position.next_cursor(found.has_more, found.last_key)
    owners = users.get_users(list({item["ownerId"] for _, item in rows}))
    listings = [
        ListingSearchItem(
            **to_model(item, owners.get(item["ownerId"])).model_dump(),
            distanceKm=None if distance is None else round(distance, 2),
        )
        for distance, item in rows
    ]
    return ListingPage(
        listings=listings, total=total, totalRelation=relation, page=position.page, pageSize=position.page_size,
        nextCursor=next_cursor,
    )
