"""The nearest-first walk of the search engine: the items of a location filter, nearest first (docs/search.md).

Domain-free: a domain (listings) supplies a :class:`Source` (its scopes, how to read one key
range of its geo index, its matcher, its tie order) and renders the records this returns.

How a page is read (a best-first walk over geohash cells, as in G. R. Hjaltason and H. Samet,
"Distance browsing in spatial databases", ACM TODS 24(2), 1999, on the Z-order key ranges of
geohash cells):

1. **Covering.** The circle is covered by cells of mixed precision
   (:func:`chalicelib.search.geo.covering`; without a radius the 32 cells of the globe).
   Consecutive cells become one key range (one Query each, :func:`runs`); every range is queued
   by its nearest possible distance from the center. Cells wholly nearer than a cursor's
   position are left out.
2. **Ring.** A page after a cursor knows where to look: the cursor carries the outer radius of
   the ring expected to hold the next page (:class:`Cursor`, ``ring_km``: from the density the
   previous page met, times :data:`RING_SAFETY`). A first page measures the density instead:
   the cells holding the center are split down to :data:`FOCUS_PRECISION` first, so the first
   read is the center's cell; a read of such a cell that stops at its ``Limit`` gives matches
   per km² from the part of its key space it covered, and later the matches within the disk
   read completely give it (at least :data:`DENSITY_MATCHES` of them). Once known, the ring
   expected to hold the page is read. A ring: the queued cells meeting it are split until a
   cell's radial extent is at most :data:`RING_CELL_EXTENT` ring widths (at most
   :data:`MAX_RING_CELLS` cells per search), and all of them are read in **one** parallel
   step. When the ring holds the page, this is the last step of the page. One ring per page.
3. **Nearest first.** Otherwise (before the density is known, or a ring that came up short) the
   nearest range is read (``Limit``) and each item verified by the domain's matcher. When a
   range holds more than the ``Limit`` (a dense place, or a coarse cell far from the center),
   the unread rest of the cell being read is split into its 32 children and the later cells
   are queued on their own, so dense places are read in finer and finer cells; while reads
   come back nearly empty, :data:`WAVE` ranges, then twice as many each step (up to
   :data:`MAX_STEP_RANGES`), are read in one parallel step; once the page's k-th match is known
   after a ring, every range nearer than it is read in one step.
4. **Stop.** Once the page is full and the next range cannot hold anything as near as the
   page's last item, the page is final.
5. **Total.** The walk then goes on, counting matches, until it has read :data:`COUNT_PAGES`
   pages' worth of items or taken :data:`COUNT_STEPS` steps; if it read every range by then the
   total is exact, otherwise it is the matches counted so far and the relation is ``"gte"``.

Order: great-circle (haversine) distance ascending, ties by the domain's tie key descending
(newest first for listings).
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Literal

from chalicelib.search import geo

#: Pages' worth of items (``COUNT_PAGES x pageSize``) a search reads at most, page included, to
#: count an exact total; beyond, the total is a lower bound (relation ``"gte"``).
COUNT_PAGES = 5
#: Smallest ``Limit`` of a Query while the page fills (a dense range read in key order wastes
#: at most this many items before its unread rest is split into finer cells).
MIN_LIMIT = 10
#: A cell whose read stopped at the ``Limit`` is split into its 32 children only when that read
#: returned at least this many of its items (a dense cell); a sparse one continues as one range
#: (splitting it would cost a Query per nearly empty child).
SPLIT_AFTER = 8
#: Ranges read concurrently by the adaptive walk once reads come back nearly empty (doubling each
#: step while they stay so).
WAVE = 4
#: Largest ``Limit`` of one Query.
MAX_LIMIT = 1000
#: Threads reading the ranges of one parallel step (a ring is read in one step; botocore's
#: connection pool of :mod:`chalicelib.storage` holds 32).
POOL_THREADS = 16
#: The ring a cursor carries is sized to hold this many pages' worth of matches at the density
#: the previous page met (a Poisson count of mean 1.5 x 20 falls short of 20 about 3 % of the time).
RING_SAFETY = 1.5
#: Most cells of a ring (each a key range; contiguous ones share a Query).
MAX_RING_CELLS = 96
#: Fewest cells a ring may hold in each scope, however many scopes share :data:`MAX_RING_CELLS`.
MIN_RING_CELLS = 48
#: Most ranges of one step of the walk (a sparse place, the ranges nearer than the k-th match
#: after a ring, a counting step).
MAX_STEP_RANGES = 32
#: A first page splits the cells holding the center down to this precision (about 4.9 x 4.9 km)
#: before its first read, so that read measures the density at the center.
FOCUS_PRECISION = 5
#: Matches within the disk read completely that make a density estimate (fewer: too noisy).
DENSITY_MATCHES = 3
#: Smallest ``Limit`` of the ranges of one counting step (more ranges would each stop at once).
COUNT_MIN_LIMIT = 4
#: Most steps of the count after the page.
COUNT_STEPS = 3
#: The cells of a ring are split until their radial extent (farthest minus nearest distance) is at
#: most this many ring widths: finer cells read less outside the ring but cost more Queries.
RING_CELL_EXTENT = 2.0
#: Narrowest ring width (km) the cells of a ring are split down to.
MIN_RING_WIDTH_KM = 0.05

#: A match: ``(distance in km, unrounded; tie key; item)``.
type Match[T] = tuple[float, str, T]


@dataclass(frozen=True)
class Source[T]:
    """What a domain supplies to the walk.

    Attributes
    ----------
    scopes:
        The index partitions families to read (for listings: one geo index per category).
    read:
        ``read(scope, first, last, limit, after) -> (items, last_key)``: up to ``limit`` items of
        ``scope`` whose point lies in the geohash cells from ``first`` to ``last`` (key order,
        inclusive), after index key ``after``; ``last_key`` is the index key of the last item when
        the range may hold more, else ``None`` (one Query).
    distance:
        The matcher: the item's distance in km from the center when it satisfies the query, else ``None``.
    tie:
        Tie key of an item (equal distances sort by it descending).
    point:
        ``(lat, lng)`` of an item in degrees, or ``None``.
    """

    scopes: Sequence[str]
    read: Callable[[str, str, str, int, str | None], tuple[list[T], str | None]]
    distance: Callable[[T], float | None]
    tie: Callable[[T], str]
    point: Callable[[T], tuple[float, float] | None]


@dataclass(frozen=True)
class Cursor:
    """Where the previous page ended: its last row's exact distance (km) and tie key, and the outer
    radius (km) of the ring expected to hold the next page (``None``: unknown, the walk adapts).

    Serialized as ``<distance>|<tie>|<ring_km>`` (``repr`` of the floats); positions of two
    parts (before the ring was carried) still parse."""

    distance: float
    tie: str
    ring_km: float | None = None

    def key(self) -> str:
        """The position string of this cursor."""
        return f"{self.distance!r}|{self.tie}" + (f"|{self.ring_km!r}" if self.ring_km is not None else "")

    @classmethod
    def parse(cls, key: str) -> Cursor:
        """Parse a position string.

        Raises
        ------
        ValueError
            ``key`` is not a position of a geo search.
        """
        parts = key.split("|")
        try:
            distance = float(parts[0])
            ring = float(parts[2]) if len(parts) == 3 else None
        except ValueError:
            distance = math.nan
            ring = None
        if len(parts) not in (2, 3) or not parts[1] or not math.isfinite(distance) or (ring is not None and not math.isfinite(ring)):
            raise ValueError(f"not a geo position: {key!r}")
        return cls(distance, parts[1], ring)


@dataclass(frozen=True)
class Found[T]:
    """One page of a nearest-first search.

    Attributes
    ----------
    rows:
        ``(distance_km, item)`` of the page, nearest first.
    total, relation:
        Matches of the whole search, exact (``"eq"``) or a lower bound (``"gte"``).
    has_more:
        Whether a next page may hold results.
    cursor:
        Position after the page's last row (``None`` when the page is empty).
    read:
        Items read from the index (items of the Query responses).
    steps:
        Sequential steps of the walk (one Query, or the Queries of one parallel step).
    """

    rows: list[tuple[float, T]]
    total: int
    relation: Literal["eq", "gte"]
    has_more: bool
    cursor: Cursor | None
    read: int
    steps: int


@dataclass(order=True)
class _Range:
    """Consecutive cells of one scope, read as one key range."""

    min_km: float
    order: int
    scope: str = field(compare=False)
    cells: tuple[geo.Cell, ...] = field(compare=False)
    after: str | None = field(default=None, compare=False)


@functools.cache
def _pool() -> ThreadPoolExecutor:
    """The threads that read a step's ranges, shared by the searches of this process (a Lambda
    container keeps them between invocations)."""
    return ThreadPoolExecutor(max_workers=POOL_THREADS, thread_name_prefix="geo-range")


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


def cap_radius_km(area_km2: float) -> float:
    """Great-circle radius in km of the spherical cap of ``area_km2`` (inverse of :func:`geo.cap_area_km2`)."""
    ratio = min(1.0, area_km2 / (2 * math.pi * geo.EARTH_RADIUS_KM**2))
    return geo.EARTH_RADIUS_KM * math.acos(max(-1.0, 1.0 - ratio))


def next_ring_km(before_km: float, rows: Sequence[float], page_size: int) -> float | None:
    """Outer radius (km) of the ring expected to hold the next page.

    Parameters
    ----------
    before_km:
        Distance of the row before this page (0 for the first page).
    rows:
        Distances (km) of this page's rows, nearest first.
    page_size:
        Rows of a full page.

    Returns
    -------
    float or None
        The radius whose cap adds :data:`RING_SAFETY` times this page's ring area (scaled to a
        full page) beyond the last row: the density the page met, assumed to hold a little
        farther (``None`` without rows).
    """
    if not rows:
        return None
    last = rows[-1]
    ring_area = geo.cap_area_km2(last) - geo.cap_area_km2(min(before_km, rows[0]))
    return cap_radius_km(geo.cap_area_km2(last) + RING_SAFETY * ring_area * page_size / len(rows))


class _Walk[T]:
    """The best-first walk of one search (see the module docstring)."""

    def __init__(self, source: Source[T], lat: float, lng: float, radius_km: float | None, cursor: Cursor | None) -> None:
        self.source = source
        self.lat, self.lng, self.radius_km = lat, lng, radius_km
        self.cursor = cursor
        self.queue: list[_Range] = []
        self.order = itertools.count()
        self.matches: list[Match[T]] = []
        self.read = 0
        self.steps = 0
        #: Whether this page already read a ring (at most one per page).
        self.ringed = False
        #: Cells a ring may hold per scope (each is read in every scope).
        self.max_ring_cells = max(MIN_RING_CELLS, MAX_RING_CELLS // max(1, len(source.scopes)))
        #: Matches per km² measured by a first read that stopped at its ``Limit`` (:meth:`_density`).
        self.density: float | None = None
        #: Set once the page is final and the walk only counts (see :meth:`count`).
        self.counting = False
        cells = [c for c in geo.covering(lat, lng, radius_km) if self._wanted(c)]
        for run in runs(cells):
            for scope in source.scopes:
                self._push(scope, run)

    def _wanted(self, found: geo.Cell) -> bool:
        """Whether the cell may hold a row of this page: within the radius, not before the cursor."""
        if not geo.reaches(found, self.radius_km):
            return False
        return self.cursor is None or found.max_km + geo.BOUND_MARGIN_KM >= self.cursor.distance

    def _push(self, scope: str, cells: tuple[geo.Cell, ...], after: str | None = None) -> None:
        heapq.heappush(self.queue, _Range(min(c.min_km for c in cells), next(self.order), scope, cells, after))

    def _after_cursor(self, distance: float, tie: str) -> bool:
        if self.cursor is None:
            return True
        return distance > self.cursor.distance or (distance == self.cursor.distance and tie < self.cursor.tie)

    def step(self, limit: int) -> None:
        """Read the nearest queued range (up to ``limit`` items); queue its unread rest, split finer."""
        self.wave([heapq.heappop(self.queue)], limit)

    def wave(self, ranges: list[_Range], limit: int) -> None:
        """Read ``ranges`` (already taken off the queue) in one parallel step, up to ``limit`` items
        each, and take in their items in the given order (so the result never depends on timing)."""
        self.steps += 1
        if len(ranges) == 1:
            self._absorb(ranges[0], *self._fetch(ranges[0], limit))
            return
        fetched = list(_pool().map(lambda r: self._fetch(r, limit), ranges))
        for current, (items, last_point) in zip(ranges, fetched, strict=True):
            self._absorb(current, items, last_point)

    def _fetch(self, current: _Range, limit: int) -> tuple[list[T], str | None]:
        return self.source.read(current.scope, current.cells[0].geohash, current.cells[-1].geohash, limit, current.after)

    def _absorb(self, current: _Range, items: list[T], last_point: str | None) -> None:
        """Count and verify the items read from ``current``; queue its unread rest."""
        self.read += len(items)
        for item in items:
            distance = self.source.distance(item)
            if distance is not None:
                tie = self.source.tie(item)
                if self._after_cursor(distance, tie):
                    self.matches.append((distance, tie, item))
        if last_point is not None:
            if (self.density is None and len(current.cells) == 1 and current.after is None
                    and current.cells[0].precision >= FOCUS_PRECISION):
                self.density = self._density(current.cells[0], last_point, items)
            self._queue_rest(current, last_point, items)

    def _density(self, found: geo.Cell, point: str, read: list[T]) -> float | None:
        """Matches per km² met by a read of cell ``found`` that stopped at its ``Limit`` at key
        ``point``: the items read lie in the part of the cell whose keys come before ``point``, a
        fraction of its key space and about that fraction of its area (its children are equal boxes)."""
        matched = sum(1 for item in read if self.source.distance(item) is not None)
        digits = point[found.precision : geo.POINT_PRECISION]
        fraction = sum(geo.BASE32.index(c) * 32.0 ** -(i + 1) for i, c in enumerate(digits) if c in geo.BASE32)
        area = found.area_km2() * fraction
        return matched / area if matched and area > 0 else None

    def _queue_rest(self, current: _Range, point: str, read: list[T]) -> None:
        """Queue what ``current`` holds after key ``point`` (the last of the items ``read``): the
        later cells, and the rest of the cell holding ``point``, split into its children (the one
        holding ``point`` continues after it) when the read found the cell dense (:data:`SPLIT_AFTER`)."""
        index = next(i for i, c in enumerate(current.cells) if point.startswith(c.geohash))
        holding = current.cells[index]
        if self.counting:  # order no longer matters: the rest as one range
            self._push(current.scope, current.cells[index:], point)
            return
        for later in current.cells[index + 1 :]:
            self._push(current.scope, (later,))
        in_cell = sum(1 for item in read if self._cell(item, holding.precision) == holding.geohash)
        if holding.precision >= geo.POINT_PRECISION or in_cell < SPLIT_AFTER:
            self._push(current.scope, (holding,), point)
            return
        step = point[: holding.precision + 1]
        for child in geo.children(self.lat, self.lng, holding):
            if child.geohash >= step and self._wanted(child):
                self._push(current.scope, (child,), point if child.geohash == step else None)

    def _cell(self, item: T, precision: int) -> str | None:
        located = self.source.point(item)
        return geo.cell_of(*located, precision) if located is not None else None

    def kth_distance(self, k: int) -> float | None:
        """Distance of the ``k``-th nearest match so far (``None`` while fewer are known)."""
        if len(self.matches) < k:
            return None
        return heapq.nsmallest(k, (m[0] for m in self.matches))[-1]

    def ring(self, outer_km: float, need: int) -> None:
        """Read, in one parallel step, every queued cell that reaches the disk of ``outer_km``,
        split first (:meth:`_refine`) against the ring's width (from the cursor's distance, or the
        center, to ``outer_km``); ranges already read part-way are read on as they are."""
        self.ringed = True
        inner = self.cursor.distance if self.cursor is not None else 0.0
        width = max(outer_km - inner, MIN_RING_WIDTH_KM)
        meeting = [r for r in self.queue if r.min_km - geo.BOUND_MARGIN_KM <= outer_km]
        if not meeting:
            return
        self.queue = [r for r in self.queue if r.min_km - geo.BOUND_MARGIN_KM > outer_km]
        heapq.heapify(self.queue)
        ranges = [r for r in meeting if r.after is not None]  # a range read part-way continues as it is
        taken = [r for r in meeting if r.after is None]
        for scope in dict.fromkeys(r.scope for r in taken):
            cells = self._refine({c.geohash: c for r in taken if r.scope == scope for c in r.cells}, outer_km, width)
            ordered = [cells[g] for g in sorted(cells)]
            for run in runs([c for c in ordered if c.min_km - geo.BOUND_MARGIN_KM > outer_km]):
                self._push(scope, run)
            near = [c for c in ordered if c.min_km - geo.BOUND_MARGIN_KM <= outer_km]
            ranges += [_Range(min(c.min_km for c in run), next(self.order), scope, run) for run in runs(near)]
        if ranges:
            self.wave(ranges, min(MAX_LIMIT, max(MIN_LIMIT, need + 1)))

    def _refine(self, cells: dict[str, geo.Cell], outer_km: float, width: float) -> dict[str, geo.Cell]:
        """Split the cells (by geohash) that reach the disk of ``outer_km`` until each one's radial
        extent is at most :data:`RING_CELL_EXTENT` ring widths, largest first, while the cells
        reaching the disk stay within :data:`MAX_RING_CELLS` (shared by the scopes, at least
        :data:`MIN_RING_CELLS` each); children wholly before the cursor are left out."""
        coarse = [(-(c.max_km - c.min_km), c.geohash) for c in cells.values()]
        heapq.heapify(coarse)
        inside = sum(1 for c in cells.values() if c.min_km - geo.BOUND_MARGIN_KM <= outer_km)
        while coarse:
            extent, geohash = heapq.heappop(coarse)
            parent = cells[geohash]
            if (-extent <= RING_CELL_EXTENT * width or parent.precision >= geo.MAX_COVERING_PRECISION
                    or parent.min_km - geo.BOUND_MARGIN_KM > outer_km):
                continue
            split = [c for c in geo.children(self.lat, self.lng, parent) if self._wanted(c)]
            reaching = sum(1 for c in split if c.min_km - geo.BOUND_MARGIN_KM <= outer_km)
            if inside - 1 + reaching > self.max_ring_cells:
                break
            inside += reaching - 1
            del cells[geohash]
            for child in split:
                cells[child.geohash] = child
                heapq.heappush(coarse, (-(child.max_km - child.min_km), child.geohash))
        return cells

    def _first_ring_km(self, need: int) -> float | None:
        """Outer radius (km) of the ring expected to hold the page, from the density measured so far:
        the matches within the disk the walk has read completely (every queued range is farther),
        when there are at least :data:`DENSITY_MATCHES` of them; else the first read of a cell of
        :data:`FOCUS_PRECISION` or finer that stopped at its ``Limit`` (:meth:`_density`)."""
        inner = self.cursor.distance if self.cursor is not None else 0.0
        done = self.queue[0].min_km if self.queue else None
        density = self.density
        if done is not None and done > inner:
            within = sum(1 for m in self.matches if m[0] <= done)
            if within >= DENSITY_MATCHES:
                density = within / (geo.cap_area_km2(done) - geo.cap_area_km2(inner))
        if density is None or density <= 0:
            return None
        return cap_radius_km(geo.cap_area_km2(inner) + RING_SAFETY * need / density)

    def focus(self) -> None:
        """Split the queued cells holding the center down to :data:`FOCUS_PRECISION` (their other
        children queued as runs), so that a first page's first read is local to the center."""
        for _ in range(FOCUS_PRECISION):
            holding = [r for r in self.queue if r.after is None and r.min_km <= 0.0
                       and any(c.min_km <= 0.0 and c.precision < FOCUS_PRECISION for c in r.cells)]
            if not holding:
                return
            self.queue = [r for r in self.queue if r not in holding]
            for current in holding:
                cells: list[geo.Cell] = []
                for found in current.cells:
                    if found.min_km <= 0.0 and found.precision < FOCUS_PRECISION:
                        cells += [c for c in geo.children(self.lat, self.lng, found) if self._wanted(c)]
                    else:
                        cells.append(found)
                for run in runs(cells):
                    self._push(current.scope, run)
            heapq.heapify(self.queue)

    def fill(self, need: int) -> None:
        """Read nearest first until ``need`` matches are known and no queued range can hold a nearer one.

        As soon as a density is known (:meth:`_first_ring_km`) and the page has not read a ring,
        the ring expected to hold the page is read (:meth:`ring`). Otherwise, while reads come
        back nearly empty (fewer than ``MIN_LIMIT / 2`` items per range: a sparse place),
        :data:`WAVE` of the nearest ranges, then twice as many each step, are read at once,
        those that the walk would read next anyway unless they bring nearer matches (all of
        them while fewer than ``need`` matches are known, else those nearer than the
        ``need``-th match); in a dense place ranges are read one by one, so the walk reads
        little past the page.
        """
        width = 1
        while self.queue:
            kth = self.kth_distance(need)
            if kth is not None and self.queue[0].min_km - geo.BOUND_MARGIN_KM > kth:
                return
            if not self.ringed:
                outer = self._first_ring_km(need)
                if outer is not None:
                    self.ring(outer if kth is None else min(outer, kth), need)
                    continue
            ranges = [heapq.heappop(self.queue)]
            # once the page's k-th match is known, every range that may hold a nearer one is read
            # before the page is final: all of them in one step (MAX_STEP_RANGES at most)
            wide = MAX_STEP_RANGES if kth is not None and self.ringed else width
            while self.queue and len(ranges) < wide and (kth is None or self.queue[0].min_km <= kth):
                ranges.append(heapq.heappop(self.queue))
            before = self.read
            self.wave(ranges, min(MAX_LIMIT, max(MIN_LIMIT, need - len(self.matches) + 1)))
            sparse = 2 * (self.read - before) < MIN_LIMIT * len(ranges)
            width = min(MAX_STEP_RANGES, max(WAVE, 2 * width)) if sparse else 1

    def count(self, budget: int) -> None:
        """Go on reading (counting matches) until every range is read, ``budget`` items were read or
        :data:`COUNT_STEPS` steps were taken.

        Order no longer matters here: contiguous queued ranges are joined again (fewer Queries), a
        range stopped by its ``Limit`` continues as one range (no split); the first step reads the
        nearest range with the whole budget left (a dense place ends there), the next ones up to
        :data:`MAX_STEP_RANGES` ranges sharing what is left (at least :data:`COUNT_MIN_LIMIT` each).
        """
        if not self.queue or self.read >= budget:
            return
        self.counting = True
        self._rejoin()
        width = 1
        for _ in range(COUNT_STEPS):
            left = budget - self.read
            if not self.queue or left <= 0:
                return
            ranges = [heapq.heappop(self.queue) for _ in range(min(width, len(self.queue), max(1, left // COUNT_MIN_LIMIT)))]
            self.wave(ranges, min(MAX_LIMIT, max(1, left // len(ranges))))
            width = MAX_STEP_RANGES

    def _rejoin(self) -> None:
        """Join queued ranges that are contiguous in key order (same scope; only the first may
        continue after a key), as :func:`runs` joins the covering's cells."""
        queued = sorted(self.queue, key=lambda r: (r.scope, r.cells[0].geohash))
        self.queue = []
        for current in queued:
            previous = self.queue[-1] if self.queue else None
            if (previous is not None and previous.scope == current.scope and current.after is None
                    and _contiguous(previous.cells[-1].geohash, current.cells[0].geohash)):
                self.queue[-1] = _Range(min(previous.min_km, current.min_km), previous.order, previous.scope,
                                        previous.cells + current.cells, previous.after)
            else:
                self.queue.append(current)
        heapq.heapify(self.queue)

    def ordered(self) -> list[Match[T]]:
        """The matches nearest first, ties by tie key descending."""
        by_tie = sorted(self.matches, key=lambda m: m[1], reverse=True)
        return sorted(by_tie, key=lambda m: m[0])  # stable: equal distances keep the tie order


def page[T](
    source: Source[T], center: tuple[float, float], radius_km: float | None, *, cursor: Cursor | None, offset: int,
    page_size: int,
) -> Found[T]:
    """One page of a nearest-first search.

    Parameters
    ----------
    source:
        The domain's index reader, matcher and tie order.
    center:
        ``(lat, lng)`` in decimal degrees.
    radius_km:
        Great-circle radius in km, or ``None`` (the whole globe).
    cursor:
        The previous page's :attr:`Found.cursor`, or ``None`` for a page by offset.
    offset:
        Rows before this page (``(page - 1) x pageSize``); skipped when there is no cursor.
    page_size:
        Rows of a page.

    Returns
    -------
    Found
        The page's rows, the total and its relation, whether more may follow, and the cursor.
    """
    skip = 0 if cursor else offset
    need = skip + page_size
    walk = _Walk(source, center[0], center[1], radius_km, cursor)
    if cursor is not None and cursor.ring_km is not None and cursor.ring_km > cursor.distance:
        walk.ring(cursor.ring_km if radius_km is None else min(cursor.ring_km, radius_km), need)
    elif cursor is None:
        walk.focus()
    walk.fill(need)
    walk.count(COUNT_PAGES * page_size)
    ordered = walk.ordered()
    chosen = ordered[skip:need]
    total = (offset if cursor else 0) + len(ordered)
    exact = not walk.queue
    has_more = offset + page_size < total if exact else len(ordered) > need or bool(walk.queue)
    before = cursor.distance if cursor is not None else ordered[skip - 1][0] if skip else 0.0
    ring = next_ring_km(before, [m[0] for m in chosen], page_size)
    after = Cursor(chosen[-1][0], chosen[-1][1], ring) if chosen else cursor
    return Found(
        rows=[(distance, item) for distance, _, item in chosen], total=total, relation="eq" if exact else "gte",
        has_more=has_more, cursor=after, read=walk.read, steps=walk.steps,
    )

