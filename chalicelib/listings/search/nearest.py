"""Geo listing search: the listings of a location filter, nearest first (docs/search.md).

The walk itself is the engine's (:mod:`chalicelib.search.nearest`: covering, rings carried by
the cursor, the best-first walk, the total); this module plugs the listings into it as a
:class:`~chalicelib.search.nearest.Source`: the geo index of each category in scope
(:mod:`chalicelib.listings.index`, read by :func:`chalicelib.listings.repository.geo_range`),
the matcher :func:`chalicelib.listings.search.filters.evaluate` (role, meta, q, radius) and the
newest-first tie order. :mod:`chalicelib.listings.search.service` calls :func:`page` when the
query has a geo filter and renders the rows it returns.

Order: great-circle (haversine) distance ascending, ties newest first (``createdAt`` then
listing id, descending). A cursor holds the last row's exact distance and newest-first key,
and the outer radius of the ring expected to hold the next page.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from chalicelib import errors
from chalicelib.categories.registry import all_categories
from chalicelib.listings import repository
from chalicelib.listings.index import geo_partition, newest_key, partition_precision
from chalicelib.listings.records import ListingRecord
from chalicelib.listings.search import filters
from chalicelib.listings.search.query import SearchQuery
from chalicelib.pagination import Position
from chalicelib.search import nearest as engine
from chalicelib.search.nearest import runs

__all__ = ["GeoPage", "Row", "page", "position_key", "rows_of", "runs"]

#: Above every base-32 character and ``#``: ``<cell>~`` is the last ``geoPoint`` key of a cell.
_KEY_END = "~"
#: One result row: ``(distance in km, unrounded; listing item)``.
Row = tuple[float | None, ListingRecord]


@dataclass(frozen=True)
class GeoPage:
    """One page of a geo search.

    Attributes
    ----------
    rows:
        ``(distance_km, listing)`` of the page, nearest first, as read from the index.
    total, relation:
        Matches of the whole search, exact (``"eq"``) or a lower bound (``"gte"``).
    has_more:
        Whether a next page may hold results.
    last_key:
        Cursor position after the page's last row (``<distance>|<createdAt>#<id>|<ring km>``).
    read:
        Listings read from the geo indexes (items of the Query responses).
    steps:
        Sequential steps of the walk (one Query, or the Queries of one parallel step).
    """

    rows: list[Row]
    total: int
    relation: Literal["eq", "gte"]
    has_more: bool
    last_key: str | None
    read: int
    steps: int


def position_key(distance: float, listing: ListingRecord) -> str:
    """The cursor position of a row: its exact distance (``repr``) and newest-first key (no ring:
    the next page then finds its ring by walking)."""
    return engine.Cursor(distance, newest_key(listing)).key()


def source(query: SearchQuery) -> engine.Source[ListingRecord]:
    """The listings as a source of the nearest-first walk: the geo index of every category in scope
    that has the query's location field, verified by :func:`filters.evaluate`."""
    where = query.geo
    if where is None:
        raise ValueError("source() needs a geo filter")
    categories = [query.category] if query.category else list(all_categories().values())
    scopes = [c.key for c in categories if c.field(where.key) is not None]

    def read(category: str, first: str, last: str, limit: int, after: str | None) -> tuple[list[ListingRecord], str | None]:
        precision = partition_precision(first, last)
        partition = geo_partition(category, where.key, first[:precision])
        return repository.geo_range(precision, partition, first, last + _KEY_END, limit, after)

    def distance(item: ListingRecord) -> float | None:
        found = filters.evaluate(query, item)
        return found.distance_km if found is not None else None

    return engine.Source(scopes=scopes, read=read, distance=distance, tie=newest_key,
                         point=lambda item: filters.location(item, where.key))


def page(query: SearchQuery, position: Position) -> GeoPage:
    """One page of a geo search (``query.geo`` set), nearest first.

    Parameters
    ----------
    query:
        The parsed search; its geo filter gives the center (degrees) and optional radius (km).
    position:
        The page: an offset (``page``) or a cursor position (the previous page's last row).

    Returns
    -------
    GeoPage
        The page's rows (read from the index; the caller re-reads them from the table), the
        total and its relation, whether more may follow, and the cursor position.

    Raises
    ------
    RuleViolation
        The cursor's position is not one of a geo search (field ``cursor``).
    """
    where = query.geo
    if where is None:
        raise ValueError("page() needs a geo filter")
    try:
        cursor = engine.Cursor.parse(position.key) if position.key else None
    except ValueError as exc:
        raise errors.RuleViolation.for_field("cursor", "is not a cursor of this search", "Invalid cursor") from exc
    found = engine.page(source(query), (where.lat, where.lng), where.radius_km, cursor=cursor, offset=position.offset,
                        page_size=position.page_size)
    return GeoPage(
        rows=[(distance, item) for distance, item in found.rows], total=found.total, relation=found.relation,
        has_more=found.has_more, last_key=found.cursor.key() if found.cursor is not None else position.key,
        read=found.read, steps=found.steps,
    )


def rows_of(found: GeoPage, reread: Callable[[list[ListingRecord]], list[ListingRecord]]) -> list[Row]:
    """The page's rows after ``reread`` (the table re-read that drops listings changed since the
    index was read), each with its distance."""
    distance = {item["listingId"]: d for d, item in found.rows}
    return [(distance[item["listingId"]], item) for item in reread([item for _, item in found.rows])]
