"""Geo listing search: the listings of a location filter, nearest first (issue 13 part 5; docs/search.md).

Kept apart from :mod:`chalicelib.listings.search.service` (the newest-first planner); the
service calls :func:`page` when the query has a geo filter and renders the rows it returns.

How a page is read (a best-first walk over geohash cells, as in G. R. Hjaltason and H. Samet,
"Distance browsing in spatial databases", ACM TODS 24(2), 1999, on the Z-order key ranges of
geohash cells):

1. **Covering.** The circle is covered by cells of mixed precision
   (:func:`chalicelib.search.geo.covering`; without ``radiusKm`` the 32 cells of the
   globe). Consecutive cells sharing a partition become one key range (one Query each); every
   range is queued by its nearest possible distance from the center.
2. **Nearest first.** The nearest range is read (``Limit``) from the geo index of each
   category in scope (:mod:`chalicelib.listings.index`) and each listing is verified by
   :func:`chalicelib.listings.search.filters.evaluate` (the one matching rule: role, meta, q,
   radius). When a range holds more than the ``Limit`` (a dense place, or a coarse cell far from
   the center), the unread rest of the cell being read is split into its 32 children and the
   later cells are queued on their own, so dense places are read in finer and finer cells.
3. **Stop.** Once the page is full and the next range cannot hold anything as near as the
   page's last listing, the page is final. Ranges whose farthest point is nearer than a
   cursor's position are never read.
4. **Total.** The walk then goes on, counting matches, until it has read :data:`COUNT_PAGES`
   pages' worth of listings; if it read every range by then ``total`` is exact, otherwise it is
   the matches counted so far and ``totalRelation`` is ``"gte"``.

Order: great-circle (haversine) distance ascending, ties newest first (``createdAt`` then
listing id, descending). A cursor holds the last row's exact distance and newest-first key.
"""

from __future__ import annotations

import functools
import heapq
import itertools
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal

from chalicelib import errors
from chalicelib.categories.registry import all_categories
from chalicelib.listings import repository
from chalicelib.listings.index import geo_partition, newest_key, partition_precision
from chalicelib.listings.records import ListingRecord
from chalicelib.listings.search import filters
from chalicelib.listings.search.query import GeoFilter, SearchQuery
from chalicelib.pagination import Position
from chalicelib.search import geo

#: Pages' worth of listings (``COUNT_PAGES x pageSize``) a search reads at most, page included,
#: to count an exact ``total``; beyond, ``total`` is a lower bound (``totalRelation: "gte"``).
COUNT_PAGES = 5
#: Smallest ``Limit`` of a Query while the page fills (a dense range read in key order wastes
#: at most this many listings before its unread rest is split into finer cells).
MIN_LIMIT = 10
#: A cell whose read stopped at the ``Limit`` is split into its 32 children only when that read
#: returned at least this many of its listings (a dense cell); a sparse one continues as one
#: range (splitting it would cost a Query per nearly empty child).
SPLIT_AFTER = 8
#: Ranges read concurrently (one round trip instead of several; the walk stays nearest first).
WAVE = 4
#: Largest ``Limit`` of one Query.
MAX_LIMIT = 1000
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
        Cursor position after the page's last row (``<distance>|<createdAt>#<id>``).
    read:
        Listings read from the geo indexes (items of the Query responses).
    """

    rows: list[Row]
    total: int
    relation: Literal["eq", "gte"]
    has_more: bool
    last_key: str | None
    read: int


@dataclass(order=True)
class _Range:
    """Consecutive cells of one category's partition, read as one ``geoPoint`` key range."""

    min_km: float
    order: int
    category: str = field(compare=False)
    cells: tuple[geo.Cell, ...] = field(compare=False)
    after: str | None = field(default=None, compare=False)


@functools.cache
def _pool() -> ThreadPoolExecutor:
    """The threads that read a wave's ranges, shared by the searches of this process (a Lambda
    container keeps them between invocations)."""
    return ThreadPoolExecutor(max_workers=WAVE, thread_name_prefix="geo-range")


def _successor(geohash: str) -> str | None:
    """The first geohash prefix after every key that starts with ``geohash`` (``None`` at the end)."""
    while geohash and geohash[-1] == geo.BASE32[-1]:
        geohash = geohash[:-1]
    if not geohash:
        return None
    return geohash[:-1] + geo.BASE32[geo.BASE32.index(geohash[-1]) + 1]


def _contiguous(last: str, following: str) -> bool:
    """Whether cell ``following`` starts exactly where cell ``last`` ends in key order, in the same partition."""
    after = _successor(last)
    return (
        after is not None and following.startswith(after) and set(following[len(after):]) <= {geo.BASE32[0]}
        and last[0] == following[0]
    )


def runs(cells: Sequence[geo.Cell]) -> list[tuple[geo.Cell, ...]]:
    """Group cells (in key order) into runs of contiguous cells sharing a first character
    (one partition of the precision-1 index at least), each read by one key range."""
    grouped: list[list[geo.Cell]] = []
    for found in cells:
        if grouped and _contiguous(grouped[-1][-1].geohash, found.geohash):
            grouped[-1].append(found)
        else:
            grouped.append([found])
    return [tuple(run) for run in grouped]


def _parse_position(key: str) -> tuple[float, str]:
    distance, _, newest = key.partition("|")
    try:
        return float(distance), newest
    except ValueError as exc:
        raise errors.RuleViolation.for_field("cursor", "is not a cursor of this search", "Invalid cursor") from exc


def position_key(distance: float, listing: ListingRecord) -> str:
    """The cursor position of a row: its exact distance (``repr``) and newest-first key."""
    return f"{distance!r}|{newest_key(listing)}"


class _Walk:
    """The best-first walk of one search (see the module docstring)."""

    def __init__(self, query: SearchQuery, where: GeoFilter, cursor: tuple[float, str] | None) -> None:
        self.query = query
        self.where = where
        self.cursor = cursor
        self.queue: list[_Range] = []
        self.order = itertools.count()
        self.matches: list[tuple[float, str, ListingRecord]] = []
        self.read = 0
        #: Set once the page is final and the walk only counts (see :meth:`count`).
        self.counting = False
        categories = [query.category] if query.category else list(all_categories().values())
        self.categories = [c.key for c in categories if c.field(where.key) is not None]
        cells = [c for c in geo.covering(where.lat, where.lng, where.radius_km) if self._wanted(c)]
        for run in runs(cells):
            for category in self.categories:
                self._push(category, run)

    def _wanted(self, found: geo.Cell) -> bool:
        """Whether the cell may hold a row of this page: within the radius, not before the cursor."""
        if not geo.reaches(found, self.where.radius_km):
            return False
        return self.cursor is None or found.max_km + geo.BOUND_MARGIN_KM >= self.cursor[0]

    def _push(self, category: str, cells: tuple[geo.Cell, ...], after: str | None = None) -> None:
        heapq.heappush(self.queue, _Range(min(c.min_km for c in cells), next(self.order), category, cells, after))

    def _after_cursor(self, distance: float, newest: str) -> bool:
        if self.cursor is None:
            return True
        return distance > self.cursor[0] or (distance == self.cursor[0] and newest < self.cursor[1])

    def step(self, limit: int) -> None:
        """Read the nearest queued range (up to ``limit`` listings); queue its unread rest, split finer."""
        current = heapq.heappop(self.queue)
        self._absorb(current, *self._fetch(current, limit))

    def wave(self, ranges: list[_Range], limit: int) -> None:
        """Read ``ranges`` (already taken off the queue) concurrently, up to ``limit`` listings each,
        and take in their listings in the given order (so the result never depends on timing)."""
        if len(ranges) == 1:
            self._absorb(ranges[0], *self._fetch(ranges[0], limit))
            return
        fetched = list(_pool().map(lambda r: self._fetch(r, limit), ranges))
        for current, (items, last_point) in zip(ranges, fetched, strict=True):
            self._absorb(current, items, last_point)

    def _fetch(self, current: _Range, limit: int) -> tuple[list[ListingRecord], str | None]:
        first, last = current.cells[0].geohash, current.cells[-1].geohash
        precision = partition_precision(first, last)
        partition = geo_partition(current.category, self.where.key, first[:precision])
        return repository.geo_range(precision, partition, first, last + _KEY_END, limit, current.after)

    def _absorb(self, current: _Range, items: list[ListingRecord], last_point: str | None) -> None:
        """Count and verify the listings read from ``current``; queue its unread rest."""
        self.read += len(items)
        for item in items:
            found = filters.evaluate(self.query, item)
            if found is not None and found.distance_km is not None:
                newest = newest_key(item)
                if self._after_cursor(found.distance_km, newest):
                    self.matches.append((found.distance_km, newest, item))
        if last_point is not None:
            self._queue_rest(current, last_point, items)

    def _queue_rest(self, current: _Range, point: str, read: list[ListingRecord]) -> None:
        """Queue what ``current`` holds after key ``point`` (the last of the listings ``read``): the
        later cells, and the rest of the cell holding ``point``, split into its children (the one
        holding ``point`` continues after it) when the read found the cell dense (:data:`SPLIT_AFTER`)."""
        index = next(i for i, c in enumerate(current.cells) if point.startswith(c.geohash))
        holding = current.cells[index]
        if self.counting:  # order no longer matters: the rest as one range
            self._push(current.category, current.cells[index:], point)
            return
        for later in current.cells[index + 1 :]:
            self._push(current.category, (later,))
        in_cell = sum(1 for item in read if geo.cell_of(*self._point(item), holding.precision) == holding.geohash)
        if holding.precision >= geo.POINT_PRECISION or in_cell < SPLIT_AFTER:
            self._push(current.category, (holding,), point)
            return
        step = point[: holding.precision + 1]
        for child in geo.children(self.where.lat, self.where.lng, holding):
            if child.geohash >= step and self._wanted(child):
                self._push(current.category, (child,), point if child.geohash == step else None)

    def _point(self, item: ListingRecord) -> tuple[float, float]:
        located = filters.location(item, self.where.key)
        return located if located is not None else (0.0, 0.0)

    def kth_distance(self, k: int) -> float | None:
        """Distance of the ``k``-th nearest match so far (``None`` while fewer are known)."""
        if len(self.matches) < k:
            return None
        return heapq.nsmallest(k, (m[0] for m in self.matches))[-1]

    def fill(self, need: int) -> None:
        """Read nearest first until ``need`` matches are known and no queued range can hold a nearer one.

        While reads come back nearly empty (fewer than ``MIN_LIMIT / 2`` listings per range: a
        sparse place), up to :data:`WAVE` of the nearest ranges are read at once, those that the
        walk would read next anyway unless they bring nearer matches (all of them while fewer
        than ``need`` matches are known, else those nearer than the ``need``-th match); in a
        dense place ranges are read one by one, so the walk reads little past the page.
        """
        width = 1
        while self.queue:
            kth = self.kth_distance(need)
            if kth is not None and self.queue[0].min_km - geo.BOUND_MARGIN_KM > kth:
                return
            ranges = [heapq.heappop(self.queue)]
            while self.queue and len(ranges) < width and (kth is None or self.queue[0].min_km <= kth):
                ranges.append(heapq.heappop(self.queue))
            before = self.read
            self.wave(ranges, min(MAX_LIMIT, max(MIN_LIMIT, need - len(self.matches) + 1)))
            width = WAVE if 2 * (self.read - before) < MIN_LIMIT * len(ranges) else 1

    def count(self, budget: int) -> None:
        """Go on reading (counting matches) until every range is read or ``budget`` listings were read.

        Order no longer matters here: contiguous queued ranges are joined again (fewer Queries), a
        range stopped by its ``Limit`` continues as one range (no split), and, as in :meth:`fill`,
        ranges are read :data:`WAVE` at a time (the budget left shared) while reads come back
        nearly empty, else one by one with the whole budget left.
        """
        if not self.queue or self.read >= budget:
            return
        self.counting = True
        self._rejoin()
        width = 1
        while self.queue and self.read < budget:
            ranges = [heapq.heappop(self.queue) for _ in range(min(width, len(self.queue), budget - self.read))]
            before = self.read
            self.wave(ranges, min(MAX_LIMIT, (budget - self.read) // len(ranges)))
            width = WAVE if 2 * (self.read - before) < MIN_LIMIT * len(ranges) else 1

    def _rejoin(self) -> None:
        """Join queued ranges that are contiguous in key order (same category; only the first may
        continue after a key), as :func:`runs` joins the covering's cells."""
        queued = sorted(self.queue, key=lambda r: (r.category, r.cells[0].geohash))
        self.queue = []
        for current in queued:
            previous = self.queue[-1] if self.queue else None
            if (previous is not None and previous.category == current.category and current.after is None
                    and _contiguous(previous.cells[-1].geohash, current.cells[0].geohash)):
                self.queue[-1] = _Range(min(previous.min_km, current.min_km), previous.order, previous.category,
                                        previous.cells + current.cells, previous.after)
            else:
                self.queue.append(current)
        heapq.heapify(self.queue)

    def ordered(self) -> list[tuple[float, str, ListingRecord]]:
        """The matches nearest first, ties newest first."""
        by_newest = sorted(self.matches, key=lambda m: m[1], reverse=True)
        return sorted(by_newest, key=lambda m: m[0])  # stable: equal distances stay newest first


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
    cursor = _parse_position(position.key) if position.key else None
    skip = 0 if cursor else position.offset
    need = skip + position.page_size
    walk = _Walk(query, where, cursor)
    walk.fill(need)
    walk.count(COUNT_PAGES * position.page_size)
    ordered = walk.ordered()
    chosen = ordered[skip:need]
    total = (position.offset if cursor else 0) + len(ordered)
    exact = not walk.queue
    has_more = position.after(total) if exact else len(ordered) > need or bool(walk.queue)
    last_key = position_key(chosen[-1][0], chosen[-1][2]) if chosen else position.key
    return GeoPage(
        rows=[(distance, item) for distance, _, item in chosen], total=total, relation="eq" if exact else "gte",
        has_more=has_more, last_key=last_key, read=walk.read,
    )


def rows_of(found: GeoPage, reread: Callable[[list[ListingRecord]], list[ListingRecord]]) -> list[Row]:
    """The page's rows after ``reread`` (the table re-read that drops listings changed since the
    index was read), each with its distance."""
    distance = {item["listingId"]: d for d, item in found.rows}
    return [(distance[item["listingId"]], item) for item in reread([item for _, item in found.rows])]
