"""Geo search on the geo indexes (in-process moto): every page through cursors equals a brute-force
evaluation (:func:`chalicelib.listings.search.filters.evaluate` over the stored listings, nearest
first, ties newest first), with and without a radius, with category, role and meta filters."""

from __future__ import annotations

import random
import uuid
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from chalicelib.kernel.config import settings as settings_
from chalicelib.listings import repository
from chalicelib.listings.search import filters
from chalicelib.listings.search.query import parse_search
from chalicelib.listings.search.service import search_listings
from chalicelib.listings.search.spec import NAMESPACE
from chalicelib.listings.status import Transition
from tests.integration.aws_session import Resources, reset
from tests.integration.conftest import Api, User
from tests.integration.helpers import (
    assert_error,
    aws_calls,
    error_fields,
    index_listings,
    moto_examples,
    newest_first,
    table_items,
    writes_one_at_a_time,
)

_ROLES = {"jobs": ["hiring", "seeking"], "housing": ["offering", "seeking"]}
_TYPES = ["full_time", "part_time"]
_PLACES = [(52.52, 13.405), (52.39, 13.06), (-17.0, 179.98), (-17.0, -179.98), (89.9, 0.0), (0.0, 0.0)]


def _store(seed: int, count: int) -> None:
    """``count`` listings around a few places (some across the antimeridian or by the pole), some paused.

    Written one element at a time (the transactions are not under test here: the geo pages are)."""
    with writes_one_at_a_time():
        _write(seed, count)
    index_listings()  # the search index follows the Listings stream


def _write(seed: int, count: int) -> None:
    rng = random.Random(seed)
    run = uuid.uuid4().hex[:8]
    for n in range(count):
        category = rng.choice(sorted(_ROLES))
        lat, lng = rng.choice(_PLACES)
        lat = max(-90.0, min(90.0, lat + rng.gauss(0, 0.2)))
        lng = (lng + rng.gauss(0, 0.2) + 180.0) % 360.0 - 180.0
        meta = {"title": "T", "location": "X", "location_lat": f"{lat:.5f}", "location_lng": f"{lng:.5f}"}
        if category == "jobs":
            meta["employmentType"] = rng.choice(_TYPES)
        if rng.random() < 0.1:
            meta = {"title": "T"}  # no location: never in a geo result
        now = f"2026-05-01T00:00:{rng.randrange(4):02d}.000Z"  # equal times: ties by id
        item: Any = {"listingId": f"lst_{run}{n:03d}", "ownerId": "usr_geo", "categoryKey": category,
                     "roleKey": rng.choice(_ROLES[category]), "title": "T", "meta": meta, "channels": [], "webhookIds": [],
                     "status": "PENDING", "version": 1, "searchText": "t", "createdAt": now, "updatedAt": now}
        repository.create(item, [])
        written = repository.transition(item, Transition.APPROVE, now)
        if rng.random() < 0.15:
            repository.transition(written, Transition.PAUSE, now)


def _brute_force(params: dict[str, str]) -> list[str]:
    query = parse_search(params)
    found = [(m.distance_km, i["listingId"]) for i in newest_first(table_items(settings_().LISTINGS_TABLE))
             if i["status"] == "ACTIVE" and (m := filters.evaluate(query, i)) is not None]
    found.sort(key=lambda f: f[0])  # stable: equal distances stay newest first
    return [f[1] for f in found]


def _all_pages(params: dict[str, str]) -> list[str]:
    found: list[str] = []
    cursor: str | None = None
    expected = len(_brute_force(params))
    while True:
        page = search_listings(parse_search({**params, **({"cursor": cursor} if cursor else {})}))
        found += [listing.id for listing in page.listings]
        if page.totalRelation == "eq":
            assert page.total == expected
        else:
            assert len(found) <= page.total <= expected
        distances = [listing.distanceKm for listing in page.listings]
        assert distances == sorted(distances)  # type: ignore[type-var]
        cursor = page.nextCursor
        if cursor is None:
            return found
        assert len(found) <= expected + int(params["pageSize"])


@given(
    seed=st.integers(0, 10_000),
    center=st.sampled_from([(52.52, 13.405), (-17.0, 179.99), (89.95, 90.0), (10.0, 10.0)]),
    radius=st.sampled_from([None, "1", "30", "400", "20038"]),
    category=st.sampled_from([None, "jobs", "housing"]),
    role=st.sampled_from([None, "seeking"]),
    employment=st.sampled_from([None, "full_time"]),
    page_size=st.integers(3, 8),
)
@settings(max_examples=moto_examples(3), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
def test_geo_cursor_pages_equal_brute_force(
    aws: dict[str, str], aws_resources: Resources, seed: int, center: tuple[float, float], radius: str | None,
    category: str | None, role: str | None, employment: str | None, page_size: int,
) -> None:
    """Random listings around a few places (across the antimeridian, by the pole), random center,
    radius and filters: the pages concatenated are the brute-force nearest-first matches, and
    ``total`` is exact or a lower bound as it says. Nearest-first pages against brute force over
    the in-memory store, with many more examples: ``tests/unit/test_search_engine_property.py``."""
    reset(aws_resources)  # each example on empty tables: the writes' cost grows with what the tables hold
    _store(seed, 15)
    params = {"meta.location_lat": str(center[0]), "meta.location_lng": str(center[1]), "pageSize": str(page_size)}
    if radius is not None:
        params["radiusKm"] = radius
    if category is not None:
        params["category"] = category
    if role is not None:
        params["role"] = role
    if employment is not None and category == "jobs":
        params["meta.employmentType"] = employment
    assert _all_pages(params) == _brute_force({k: v for k, v in params.items() if k != "pageSize"})


def test_geo_pages_read_only_the_geo_indexes_and_the_page(aws: dict[str, str]) -> None:
    _store(1, 20)
    params = {"meta.location_lat": "52.52", "meta.location_lng": "13.405", "radiusKm": "50", "pageSize": "5"}
    assert len(_brute_force(params)) > 5  # more matches than the page
    with aws_calls("Query") as queries, aws_calls("Scan") as scans, aws_calls("BatchGetItem") as batches:
        page = search_listings(parse_search(params))
    assert [listing.id for listing in page.listings] == _brute_force(params)[:5]
    assert scans == []
    partitions = {q["ExpressionAttributeValues"][":pk"]["S"] for q in queries}
    assert all(p.startswith(NAMESPACE) and "|g" in p for p in partitions)  # geohash cells only
    assert len(batches) <= 3  # the cells' sizes; each block's listings with their owners


def test_paused_listing_leaves_geo_results(api: Api, alice: User, bob: User) -> None:
    from tests.integration.helpers import create_listing

    listing = create_listing(api, alice)
    item = repository.get(listing["id"])
    assert item is not None
    repository.transition(item, Transition.APPROVE, "2026-05-01T00:00:00.000Z")
    index_listings()
    query = "meta.location_lat=52.52&meta.location_lng=13.405"
    assert [i["id"] for i in api.call("GET", f"/v1/listings/search?{query}", bob.key).json["listings"]] == [listing["id"]]
    api.call("PATCH", f"/v1/listings/{listing['id']}/status", alice.key, {"status": "PAUSED"})
    index_listings()
    result = api.call("GET", f"/v1/listings/search?{query}", bob.key).json
    assert (result["listings"], result["total"], result["nextCursor"]) == ([], 0, None)


def test_geo_cursor_is_bound_to_its_query(api: Api, bob: User) -> None:
    _store(2, 6)
    query = "meta.location_lat=52.52&meta.location_lng=13.405&pageSize=2"
    cursor = api.call("GET", f"/v1/listings/search?{query}", bob.key).json["nextCursor"]
    assert cursor
    for other in (f"meta.location_lat=52.52&meta.location_lng=13.5&pageSize=2&cursor={cursor}",
                  f"{query}&radiusKm=100&cursor={cursor}", f"{query}&cursor={cursor[:-2]}{'yy' if cursor.endswith('xx') else 'xx'}"):
        response = api.call("GET", f"/v1/listings/search?{other}", bob.key)
        assert_error(response, 400, "VALIDATION_ERROR")
        assert error_fields(response) == ["cursor"]


def test_backfill_moves_listings_from_the_old_geo_attributes_to_the_new_ones(aws: dict[str, str]) -> None:
    from chalicelib.persistence import storage
    from scripts.search_backfill import backfill

    now = "2026-05-01T00:00:00.000Z"
    item: Any = {"listingId": "lst_old_geo", "ownerId": "usr_geo", "categoryKey": "jobs", "roleKey": "hiring", "title": "T",
                 "meta": {"title": "T", "location": "Berlin", "location_lat": "52.52", "location_lng": "13.405"},
                 "channels": [], "webhookIds": [], "status": "ACTIVE", "version": 1, "searchText": "t", "createdAt": now,
                 "updatedAt": now, "geo3": "location#u33", "geo4": "location#u33d", "geo5": "location#u33dc",
                 "geoSort": f"jobs#hiring#{now}#lst_old_geo"}  # indexed the legacy geo way
    storage.put(settings_().LISTINGS_TABLE, item)
    params = {"meta.location_lat": "52.52", "meta.location_lng": "13.405", "radiusKm": "5"}
    assert [listing.id for listing in search_listings(parse_search(params)).listings] == []
    assert backfill()["reindexed"] == 1
    stored = repository.get("lst_old_geo")
    assert stored is not None
    assert not {"geo3", "geo4", "geo5", "geoSort"} & set(stored)
    assert [listing.id for listing in search_listings(parse_search(params)).listings] == ["lst_old_geo"]
    assert backfill()["reindexed"] == 0  # idempotent
