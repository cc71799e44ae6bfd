"""Listing search (DESIGN §1 "Search").

Candidates come from Queries on the sparse ACTIVE indexes, never a Scan:

* geo filter with ``radiusKm``: the geohash cells covering the circle (:func:`geo.plan_cells`),
  one Query per cell, run concurrently, narrowed to the category/role by the sort key;
* otherwise the category's partition of ``activeByCategory`` (role by sort-key prefix), or
  every category's partition when no category is given.

Meta filters, the ``q`` word-prefix match, haversine distance and sorting run in memory over
the candidates, so ``total`` is exact and the read cost grows with the candidates in the
category or circle, never with the table.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from chalicelib.categories.registry import all_categories
from chalicelib.listings import repository
from chalicelib.listings.models import ListingPage, ListingSearchItem
from chalicelib.listings.search import filters, geo
from chalicelib.listings.search.query import SearchQuery
from chalicelib.listings.service import to_model
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
    """The ACTIVE listings a search must look at, read from the narrowest index."""
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


def search_listings(query: SearchQuery) -> ListingPage:
    """Run a search and return one page of the envelope ``{listings, total, page, pageSize}``.

    Results are nearest first with ``distanceKm`` (km, rounded to 0.01) when a geo filter is
    given (ties newest first), otherwise newest first with ``distanceKm`` null.
    """
    matched: list[tuple[float | None, dict[str, Any]]] = []
    for item in candidates(query):
        match = filters.evaluate(query, item)
        if match is not None:
            matched.append((match.distance_km, item))

    matched.sort(key=lambda pair: pair[1]["createdAt"], reverse=True)
    if query.geo is not None:
        matched.sort(key=lambda pair: pair[0] or 0.0)  # stable: equal distances stay newest first
    page = query.page.slice(matched)
    owners = users.get_users(list({item["ownerId"] for _, item in page}))
    listings = [
        ListingSearchItem(
            **to_model(item, owners.get(item["ownerId"])).model_dump(),
            distanceKm=None if distance is None else round(distance, 2),
        )
        for distance, item in page
    ]
    return ListingPage(listings=listings, total=len(matched), page=query.page.page, pageSize=query.page.pageSize)
