"""Geo listing search: the listings of a location filter, nearest first (issue 13 part 5; docs/search.md).

Kept apart from :mod:`chalicelib.listings.search.service` (the newest-first planner) so the two
access paths evolve independently; the service calls :func:`page` when the query has a geo
filter and renders the rows it returns.

Candidates come from the geohash cells covering the circle (or the whole category when there
is no radius or no cell plan), are verified by :func:`chalicelib.listings.search.filters.evaluate`
(the one matching rule), sorted nearest first (ties newest first) and sliced; ``total`` is exact.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor

from chalicelib.categories.registry import all_categories
from chalicelib.listings import repository
from chalicelib.listings.records import ListingRecord
from chalicelib.listings.search import filters, geo
from chalicelib.listings.search.index import SHARDS, category_partition, newest_key, role_partition
from chalicelib.listings.search.query import SearchQuery
from chalicelib.pagination import Position

#: Concurrent Queries per search (cells or category partitions).
QUERY_CONCURRENCY = 8
#: Listings per Query while reading a whole partition.
PARTITION_PAGE = 1000
#: One result row: ``(distance in km, unrounded; listing item)``.
Row = tuple[float | None, ListingRecord]


def _parallel(tasks: Iterable[Callable[[], list[ListingRecord]]]) -> list[ListingRecord]:
    tasks = list(tasks)
    if len(tasks) == 1:
        return tasks[0]()
    with ThreadPoolExecutor(max_workers=min(QUERY_CONCURRENCY, len(tasks))) as pool:
        results = list(pool.map(lambda task: task(), tasks))
    unique: dict[str, ListingRecord] = {}
    for batch in results:
        for item in batch:
            unique[item["listingId"]] = item
    return list(unique.values())


def _whole_partition(index: str, partition: str) -> list[ListingRecord]:
    items: list[ListingRecord] = []
    before: str | None = None
    while True:
        page, more = repository.newest_page(index, partition, before, PARTITION_PAGE)
        items += page
        if not more or not page:
            return items
        before = newest_key(page[-1])


def candidates(query: SearchQuery) -> list[ListingRecord]:
    """The ACTIVE listings a geo search must look at: the covering cells, else the category's shards."""
    if query.geo is not None and query.geo.radius_km is not None:
        plan = geo.plan_cells(query.geo.lat, query.geo.lng, query.geo.radius_km)
        if plan is not None:
            precision, cells = plan
            prefix = None
            if query.category is not None:
                prefix = f"{query.category.key}#" + (f"{query.role}#" if query.role else "")
            key = query.geo.key
            return _parallel(functools.partial(repository.query_cell, precision, f"{key}#{cell}", prefix) for cell in cells)
    category_keys = [query.category.key] if query.category else list(all_categories())
    if query.role:
        index, partitions = "activeByRoleShard", [role_partition(c, query.role, s) for c in category_keys for s in range(SHARDS)]
    else:
        index, partitions = "activeByCategoryShard", [category_partition(c, s) for c in category_keys for s in range(SHARDS)]
    return _parallel(functools.partial(_whole_partition, index, p) for p in partitions)


def page(query: SearchQuery, position: Position) -> tuple[list[Row], int]:
    """One page of a geo search: candidates verified by :func:`filters.evaluate`, nearest first.

    Returns
    -------
    tuple
        ``(rows, total)``: this page's ``(distance_km, listing)`` rows and the exact total.
    """
    matched: list[Row] = []
    for item in candidates(query):
        found = filters.evaluate(query, item)
        if found is not None:
            matched.append((found.distance_km, item))
    matched.sort(key=lambda pair: pair[1]["createdAt"], reverse=True)
    matched.sort(key=lambda pair: pair[0] or 0.0)  # stable: equal distances stay newest first
    return position.slice(matched), len(matched)
