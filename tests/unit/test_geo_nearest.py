"""The nearest-first walk of geo search (the engine's ``chalicelib.search.nearest`` with the listings'
source ``chalicelib.listings.search.nearest``) over an in-memory geo index (pure: the one repository
call is replaced by a sorted list), checked against brute force
(:func:`chalicelib.listings.search.filters.evaluate` over every listing, sorted by distance then
newest first) for every page through cursor positions, with hypothesis."""

from __future__ import annotations

import bisect
import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from chalicelib.listings.index import GEO_PARTITION_PRECISIONS, geo_index, index_attributes, newest_key
from chalicelib.listings.search import filters, nearest
from chalicelib.listings.search.query import parse_search
from chalicelib.pagination import Position
from chalicelib.search import geo
from chalicelib.search import nearest as engine

ROLES = {"jobs": ["hiring", "seeking"], "housing": ["offering", "seeking"]}


class Index:
    """The three geo indexes in memory: ``(partition attribute, value) -> sorted [(geoPoint, item)]``."""

    def __init__(self, items: list[dict[str, Any]]) -> None:
        self.partitions: dict[tuple[str, str], list[tuple[str, dict[str, Any]]]] = {}
        for item in items:
            for precision in GEO_PARTITION_PRECISIONS:
                attribute = geo_index(precision)[1]
                if attribute in item:
                    self.partitions.setdefault((attribute, item[attribute]), []).append((item["geoPoint"], item))
        for rows in self.partitions.values():
            rows.sort(key=lambda row: row[0])
        self.reads: list[tuple[str, str, int]] = []  # (partition, low, items returned)

    def geo_range(self, precision: int, partition: str, low: str, high: str, limit: int,
                  after: str | None = None) -> tuple[list[dict[str, Any]], str | None]:
        rows = self.partitions.get((geo_index(precision)[1], partition), [])
        keys = [k for k, _ in rows]
        start = bisect.bisect_right(keys, after) if after is not None else bisect.bisect_left(keys, low)
        start = max(start, bisect.bisect_left(keys, low))
        end = bisect.bisect_right(keys, high)
        chosen = [item for _, item in rows[start:min(end, start + limit)]]
        self.reads.append((partition, low, len(chosen)))
        # As DynamoDB: a LastEvaluatedKey whenever the Limit was reached, even if nothing follows.
        return chosen, (chosen[-1]["geoPoint"] if len(chosen) == limit and chosen else None)


def make_items(seed: int, count: int, clustered: bool) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    items = []
    for i in range(count):
        category = rng.choice(sorted(ROLES))
        if clustered:
            lat, lng = rng.choice([(52.52, 13.4), (48.85, 2.35), (-33.9, 151.2), (0.0, 179.99)])
            lat, lng = lat + rng.gauss(0, 0.05), ((lng + rng.gauss(0, 0.05) + 180) % 360) - 180
        else:
            lat, lng = rng.uniform(-89.9, 89.9), rng.uniform(-180, 180)
        created = f"2026-01-01T00:00:{rng.randrange(3):02d}.000Z"  # many equal times: ties by id
        item: dict[str, Any] = {
            "listingId": f"lst_{i:04d}", "categoryKey": category, "roleKey": rng.choice(ROLES[category]),
            "createdAt": created, "searchText": "", "version": 1,
            "meta": {"location": "x", "location_lat": f"{lat:.5f}", "location_lng": f"{lng:.5f}"},
        }
        if rng.random() < 0.1:
            item["meta"] = {"location": "x"}  # no coordinates: never in a geo result
        item.update(index_attributes(item))
        items.append(item)
    return items


def brute_force(items: list[dict[str, Any]], params: dict[str, str]) -> list[str]:
    query = parse_search(params)
    found = [(m.distance_km, newest_key(i), i["listingId"]) for i in items if (m := filters.evaluate(query, i)) is not None]
    found.sort(key=lambda f: f[1], reverse=True)
    found.sort(key=lambda f: f[0])
    return [f[2] for f in found]


def pages(params: dict[str, str], page_size: int) -> Iterator[nearest.GeoPage]:
    """Every page of a search, following the cursor position as a client follows ``nextCursor``."""
    query = parse_search(params)
    position = Position(scope="s", page=1, page_size=page_size)
    while True:
        found = nearest.page(query, position)
        yield found
        if not found.has_more:
            return
        position = Position(scope="s", page=position.page + 1, page_size=page_size, key=found.last_key)


@pytest.fixture
def index(monkeypatch: pytest.MonkeyPatch) -> Any:
    def install(items: list[dict[str, Any]]) -> Index:
        fake = Index(items)
        monkeypatch.setattr(nearest.repository, "geo_range", fake.geo_range)
        return fake

    return install


queries = st.fixed_dictionaries(
    {"center": st.sampled_from([(52.52, 13.4), (48.0, 10.0), (-33.9, 151.2), (0.0, -179.99), (89.95, 0.0), (-10.0, -60.0)]),
     "radius": st.one_of(st.none(), st.sampled_from(["0.5", "5", "25", "300", "2500", "20038"])),
     "category": st.sampled_from([None, "jobs", "housing"]),
     "role": st.sampled_from([None, "seeking"])},
)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 10_000), clustered=st.booleans(), spec=queries, page_size=st.sampled_from([1, 3, 7, 20]),
       min_limit=st.sampled_from([2, 10]), count_pages=st.sampled_from([1, 10]), split_after=st.sampled_from([2, 8]),
       wave=st.sampled_from([1, 4]), ring_cells=st.sampled_from([4, 96]), safety=st.sampled_from([0.3, 1.5, 4.0]),
       count_steps=st.sampled_from([1, 3]), focus=st.sampled_from([3, 5, 7]), density_matches=st.sampled_from([1, 3]))
def test_every_page_through_cursors_equals_brute_force(
    seed: int, clustered: bool, spec: dict[str, Any], page_size: int, min_limit: int, count_pages: int, split_after: int,
    wave: int, ring_cells: int, safety: float, count_steps: int, focus: int, density_matches: int,
) -> None:
    items = make_items(seed, 120, clustered)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(engine, "MIN_LIMIT", min_limit)
        patch.setattr(engine, "SPLIT_AFTER", split_after)
        patch.setattr(engine, "WAVE", wave)
        patch.setattr(engine, "COUNT_PAGES", count_pages)
        patch.setattr(engine, "MAX_RING_CELLS", ring_cells)
        patch.setattr(engine, "MIN_RING_CELLS", ring_cells)
        patch.setattr(engine, "RING_SAFETY", safety)
        patch.setattr(engine, "COUNT_STEPS", count_steps)
        patch.setattr(engine, "FOCUS_PRECISION", focus)
        patch.setattr(engine, "DENSITY_MATCHES", density_matches)
        patch.setattr(nearest.repository, "geo_range", Index(items).geo_range)
        _compare(items, spec, page_size)


def _compare(items: list[dict[str, Any]], spec: dict[str, Any], page_size: int) -> None:
    params = {"meta.location_lat": str(spec["center"][0]), "meta.location_lng": str(spec["center"][1])}
    for name in ("radius", "category", "role"):
        if spec[name] is not None:
            params["radiusKm" if name == "radius" else name] = spec[name]
    expected = brute_force(items, params)
    seen: list[str] = []
    for found in pages(params, page_size):
        seen += [item["listingId"] for _, item in found.rows]
        assert len(found.rows) <= page_size
        if found.relation == "eq":
            assert found.total == len(expected)
        else:
            assert len(seen) <= found.total <= len(expected)
        assert len(seen) <= len(expected) + page_size  # never loops
    assert seen == expected


def test_offset_pages_equal_the_cursor_pages(index: Any) -> None:
    items = make_items(3, 150, clustered=True)
    index(items)
    params = {"meta.location_lat": "52.5", "meta.location_lng": "13.4", "radiusKm": "40"}
    expected = brute_force(items, params)
    query = parse_search(params)
    for number in (1, 2, 3):
        found = nearest.page(query, Position(scope="s", page=number, page_size=5))
        assert [i["listingId"] for _, i in found.rows] == expected[(number - 1) * 5 : number * 5]


def test_ranges_are_read_nearest_first_and_the_walk_stops_when_nothing_nearer_is_left(
    index: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(engine, "MIN_LIMIT", 3)
    monkeypatch.setattr(engine, "SPLIT_AFTER", 2)
    items = make_items(5, 400, clustered=False)
    index(items)
    query = parse_search({"meta.location_lat": "20", "meta.location_lng": "30"})  # no radius: rings over the globe
    assert query.geo is not None
    walk = engine._Walk(nearest.source(query), 20.0, 30.0, None, None)
    order: list[float] = []
    while walk.queue:
        kth = walk.kth_distance(10)
        if kth is not None and walk.queue[0].min_km - geo.BOUND_MARGIN_KM > kth:
            break
        order.append(walk.queue[0].min_km)
        walk.step(3)
    assert order == sorted(order)  # rings: never a farther range before a nearer one
    kth = walk.kth_distance(10)
    assert kth is not None
    assert all(r.min_km > kth for r in walk.queue)  # the stop: every unread range is farther than the 10th match
    nearest_ten = brute_force(items, {"meta.location_lat": "20", "meta.location_lng": "30"})[:10]
    assert [i["listingId"] for *_, i in walk.ordered()[:10]] == nearest_ten
    assert walk.read < len(items) / 2  # and it did not read the globe to find them


def test_a_cursor_skips_ranges_wholly_before_it(index: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(engine, "COUNT_PAGES", 0)  # no counting: compare what filling the page reads
    items = make_items(8, 600, clustered=False)
    index(items)
    query = parse_search({"meta.location_lat": "0", "meta.location_lng": "0"})
    first = nearest.page(query, Position(scope="s", page=1, page_size=20))
    assert first.has_more
    assert first.last_key is not None
    by_cursor = nearest.page(query, Position(scope="s", page=2, page_size=20, key=first.last_key))
    by_offset = nearest.page(query, Position(scope="s", page=2, page_size=20))
    expected = brute_force(items, {"meta.location_lat": "0", "meta.location_lng": "0"})
    assert [i["listingId"] for _, i in by_cursor.rows] == [i["listingId"] for _, i in by_offset.rows] == expected[20:40]
    assert by_cursor.read < by_offset.read  # ranges wholly nearer than the cursor are not read again


def test_a_malformed_cursor_position_is_a_validation_error(index: Any) -> None:
    from chalicelib.errors import RuleViolation

    index([])
    query = parse_search({"meta.location_lat": "0", "meta.location_lng": "0"})
    with pytest.raises(RuleViolation):
        nearest.page(query, Position(scope="s", page=2, page_size=20, key="2026-01-01T00:00:00.000Z#lst_1"))


def test_a_cursor_carries_the_ring_that_holds_the_next_page(index: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """On evenly spread data the ring a cursor carries holds the next page: one parallel step reads it."""
    monkeypatch.setattr(engine, "COUNT_PAGES", 0)  # no counting: the steps of the page alone
    rng = random.Random(4)
    items = [item for item in make_items(9, 900, clustered=False) if item["meta"].get("location_lat")]
    for item in items:  # about 800 listings within 4 degrees of (0, 0), half of them jobs
        item["meta"]["location_lat"] = f"{rng.uniform(-4, 4):.5f}"
        item["meta"]["location_lng"] = f"{rng.uniform(-4, 4):.5f}"
        item.update(index_attributes(item))
    index(items)
    params = {"category": "jobs", "meta.location_lat": "0", "meta.location_lng": "0"}
    expected = brute_force(items, params)
    query = parse_search(params)
    position = Position(scope="s", page=1, page_size=20)
    steps: list[int] = []  # of the cursor pages
    for number in range(1, 8):
        found = nearest.page(query, position)
        assert [i["listingId"] for _, i in found.rows] == expected[(number - 1) * 20 : number * 20]
        assert found.last_key is not None
        cursor = engine.Cursor.parse(found.last_key)
        assert cursor.ring_km is not None
        assert cursor.ring_km > cursor.distance  # the next ring starts where this page ended
        if number > 1:
            steps.append(found.steps)
        position = Position(scope="s", page=number + 1, page_size=20, key=found.last_key)
    # the ring holds the page (one parallel step) or comes up a little short (one more step)
    assert max(steps) <= 2
    assert steps.count(1) >= len(steps) // 2


def test_a_cursor_without_a_ring_still_pages(index: Any) -> None:
    """Positions written before the ring was carried (``<distance>|<tie>``) still page exactly."""
    items = make_items(6, 300, clustered=True)
    index(items)
    params = {"meta.location_lat": "52.5", "meta.location_lng": "13.4", "radiusKm": "40"}
    expected = brute_force(items, params)
    query = parse_search(params)
    first = nearest.page(query, Position(scope="s", page=1, page_size=5))
    distance, item = first.rows[-1]
    old = nearest.position_key(distance, item)
    assert old.count("|") == 1
    second = nearest.page(query, Position(scope="s", page=2, page_size=5, key=old))
    assert [i["listingId"] for _, i in second.rows] == expected[5:10]


@pytest.mark.parametrize("key", ["1.0|x|2.0|3", "nan|2026#lst_1", "1.0|", "1.0|2026#lst_1|inf", "far|2026#lst_1"])
def test_a_cursor_position_of_another_shape_is_rejected(key: str) -> None:
    with pytest.raises(ValueError, match="not a geo position"):
        engine.Cursor.parse(key)


def test_a_first_page_in_a_dense_cluster_reads_the_ring_its_center_cell_measures(
    index: Any, monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first read is the center's precision-5 cell; stopped at its ``Limit`` it gives the density
    that sizes the ring, so the page takes a few steps instead of one per precision level."""
    monkeypatch.setattr(engine, "COUNT_PAGES", 0)
    rng = random.Random(12)
    items = [item for item in make_items(13, 1500, clustered=False) if item["meta"].get("location_lat")]
    for item in items:  # one city: about 1,350 listings within a few km of the center
        item["meta"]["location_lat"] = f"{52.52 + rng.gauss(0, 0.03):.5f}"
        item["meta"]["location_lng"] = f"{13.40 + rng.gauss(0, 0.045):.5f}"
        item.update(index_attributes(item))
    index(items)
    params = {"meta.location_lat": "52.52", "meta.location_lng": "13.4", "radiusKm": "25", "category": "jobs"}
    found = nearest.page(parse_search(params), Position(scope="s", page=1, page_size=20))
    assert [i["listingId"] for _, i in found.rows] == brute_force(items, params)[:20]
    assert found.steps <= 4  # the walk one precision level per step took 8 here
    assert found.read <= 100
