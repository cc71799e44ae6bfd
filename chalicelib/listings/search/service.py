"""Listing search (DESIGN §1 "Search", issue 13).

Two access paths, never a Scan:

* **Index-native pages** (category or category + role, or every category, with no ``q``,
  ``meta`` or geo filter): the page's keys come straight from the write-sharded, keys-only
  ``activeByCategoryShard`` / ``activeByRoleShard`` indexes, merged newest first
  (:mod:`chalicelib.listings.search.merge`) from the cursor's position; the page's listings are re-read
  with one BatchGetItem (so a page never shows a stale status) and ``total`` comes from the
  counters (:mod:`chalicelib.listings.search.counters`). Items read ≈ 2 x pageSize + the counter shards.
* **Candidates + verification** (any filter): candidates from the narrowest index (geohash
  cells covering the circle, else the category's partition of ``activeByCategory``), each
  verified by :func:`chalicelib.listings.search.filters.evaluate`, sorted, then sliced; ``total`` is exact.

Results are nearest first with ``distanceKm`` (km, rounded to 0.01) when a geo filter is
given (ties newest first), otherwise newest first with ``distanceKm`` null.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from chalicelib.categories.registry import all_categories
from chalicelib.listings import repository
from chalicelib.listings.models import ListingPage, ListingSearchItem
from chalicelib.listings.search import counters, filters, geo
from chalicelib.listings.search.index import SHARDS, category_partition, newest_key, role_partition
from chalicelib.listings.search.merge import Fetch, merge_newest
from chalicelib.listings.search.query import SearchQuery
from chalicelib.listings.service import to_model
from chalicelib.pagination import Position
from chalicelib.users import repository as users

#: Concurrent Queries per search (cells or category partitions).
QUERY_CONCURRENCY = 8


def _parallel(tasks: Iterable[Callable[[], list[dict[str, Any]]]]) -> list[dict[str, Any]]:
    tasks = list(tasks)
    if len(tasks) == 1:
        return tasks[0]()
    with ThreadPoolExecutor(max_workers=min(QUERY_CONCURRENCY, len(tasks))) as pool:
        results = list(pool.map(lambda task: task(), tasks))
    unique: dict[str, dict[str, Any]] = {}
    for batch in results:
        for item in batch:
            unique[item["listingId"]] = item
    return list(unique.values())


def candidates(query: SearchQuery) -> list[dict[str, Any]]:
    """The ACTIVE listings a filtered search must look at, read from the narrowest index."""
    if query.geo is not None and query.geo.radius_km is not None:
        plan = geo.plan_cells(query.geo.lat, query.geo.lng, query.geo.radius_km)
        if plan is not None:
            precision, cells = plan
            prefix = None
            if query.category is not None:
                prefix = f"{query.category.key}#" + (f"{query.role}#" if query.role else "")
            key = query.geo.key
            return _parallel(functools.partial(repository.query_cell, precision, f"{key}#{cell}", prefix) for cell in cells)
    categories = [query.category] if query.category else list(all_categories().values())
    return _parallel(functools.partial(repository.query_category, c.key, query.role) for c in categories)


def is_index_native(query: SearchQuery) -> bool:
    """True when the page can be read straight from the newest-first indexes (no q, meta or geo)."""
    return not query.terms and not query.filters and query.geo is None


def _shard_fetches(query: SearchQuery) -> list[Fetch]:
    category_keys = [query.category.key] if query.category else list(all_categories())
    if query.role:
        index, partitions = "activeByRoleShard", [role_partition(c, query.role, s) for c in category_keys for s in range(SHARDS)]
    else:
        index, partitions = "activeByCategoryShard", [category_partition(c, s) for c in category_keys for s in range(SHARDS)]
    return [functools.partial(repository.newest_keys, index, p) for p in partitions]


def _native_page(query: SearchQuery, position: Position) -> tuple[list[dict[str, Any]], int, str | None]:
    """The page's ACTIVE listings newest first, the exact total and the last key read."""
    category_keys = [query.category.key] if query.category else list(all_categories())
    total = counters.read_counts(category_keys, query.role)
    skip = 0 if position.key else position.offset
    keys = merge_newest(_shard_fetches(query), skip + position.page_size, position.key)
    page: list[dict[str, Any]] = []
    last_key = position.key
    for _ in range(skip):
        if next(keys, None) is None:
            return [], total, None
    while len(page) < position.page_size:
        wanted = [k for _, k in zip(range(position.page_size - len(page)), keys, strict=False)]
        if not wanted:
            break
        found = repository.get_many([k.rsplit("#", 1)[1] for k in wanted])
        for key in wanted:
            item = found.get(key.rsplit("#", 1)[1])
            # The index lags the table by a moment: a listing paused or edited since is skipped.
            if item is not None and item.get("status") == "ACTIVE" and newest_key(item) == key:
                page.append(item)
        last_key = wanted[-1]
    return page, total, last_key


def search_listings(query: SearchQuery) -> ListingPage:
    """Run a search and return one page of the envelope ``{listings, total, page, pageSize, nextCursor}``.

    Raises
    ------
    ValidationError
        The cursor is malformed, edited or belongs to another query (field ``cursor``).
    """
    position = query.page.position(query.scope)
    if is_index_native(query):
        items, total, last_key = _native_page(query, position)
        rows: list[tuple[float | None, dict[str, Any]]] = [(None, item) for item in items]
        next_cursor = position.next_cursor(position.after(total) and bool(items), last_key)
    else:
        rows, total = _verified(query, position)
        next_cursor = position.next_cursor(position.after(total))
    owners = users.get_users(list({item["ownerId"] for _, item in rows}))
    listings = [
        ListingSearchItem(
            **to_model(item, owners.get(item["ownerId"])).model_dump(),
            distanceKm=None if distance is None else round(distance, 2),
        )
        for distance, item in rows
    ]
    return ListingPage(
        listings=listings, total=total, page=position.page, pageSize=position.page_size, nextCursor=next_cursor
    )


def _verified(query: SearchQuery, position: Position) -> tuple[list[tuple[float | None, dict[str, Any]]], int]:
    """Candidates verified by :func:`filters.evaluate`, sorted; this page's rows and the exact total."""
    matched: list[tuple[float | None, dict[str, Any]]] = []
    for item in candidates(query):
        found = filters.evaluate(query, item)
        if found is not None:
            matched.append((found.distance_km, item))
    matched.sort(key=lambda pair: pair[1]["createdAt"], reverse=True)
    if query.geo is not None:
        matched.sort(key=lambda pair: pair[0] or 0.0)  # stable: equal distances stay newest first
    return position.slice(matched), len(matched)
