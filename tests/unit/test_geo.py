"""Great-circle distance and the saved searches' bounding-box cells (``chalicelib.search.geo``), and the
index attributes an ACTIVE listing gets (``chalicelib.listings.index``). Pure functions: no AWS."""

from __future__ import annotations

import math

import pytest

from chalicelib.listings.index import INDEX_ATTRIBUTES, index_attributes, location_of, shard_of
from chalicelib.search import geo

BERLIN = (52.5200, 13.4050)
PARIS = (48.8566, 2.3522)


def destination(lat: float, lng: float, bearing_deg: float, distance_km: float) -> tuple[float, float]:
    """The point ``distance_km`` from (lat, lng) along ``bearing_deg`` on a sphere (independent of the code under test)."""
    phi1, lmb1, theta = math.radians(lat), math.radians(lng), math.radians(bearing_deg)
    delta = distance_km / geo.EARTH_RADIUS_KM
    phi2 = math.asin(math.sin(phi1) * math.cos(delta) + math.cos(phi1) * math.sin(delta) * math.cos(theta))
    lmb2 = lmb1 + math.atan2(math.sin(theta) * math.sin(delta) * math.cos(phi1), math.cos(delta) - math.sin(phi1) * math.sin(phi2))
    return math.degrees(phi2), (math.degrees(lmb2) + 540.0) % 360.0 - 180.0


# --- haversine -----------------------------------------------------------------------


def test_berlin_to_paris_is_about_878_km() -> None:
    assert geo.haversine_km(*BERLIN, *PARIS) == pytest.approx(878, abs=5)


@pytest.mark.parametrize(
    ("a", "b", "km"),
    [
        ((51.5074, -0.1278), (40.7128, -74.0060), 5570),  # London - New York
        ((-33.8688, 151.2093), (-37.8136, 144.9631), 714),  # Sydney - Melbourne
        ((35.6762, 139.6503), (34.6937, 135.5023), 392),  # Tokyo - Osaka
    ],
)
def test_known_city_distances(a: tuple[float, float], b: tuple[float, float], km: float) -> None:
    assert geo.haversine_km(*a, *b) == pytest.approx(km, rel=0.01)


def test_distance_to_itself_is_zero_and_distance_is_symmetric() -> None:
    assert geo.haversine_km(*BERLIN, *BERLIN) == 0.0
    assert geo.haversine_km(*BERLIN, *PARIS) == geo.haversine_km(*PARIS, *BERLIN)


def test_one_degree_of_latitude_is_about_111_km() -> None:
    assert geo.haversine_km(0, 0, 1, 0) == pytest.approx(111.195, abs=0.01)


def test_antipodes_are_half_the_circumference_apart() -> None:
    assert geo.haversine_km(0, 0, 0, 180) == pytest.approx(math.pi * geo.EARTH_RADIUS_KM, rel=1e-9)
    assert geo.haversine_km(90, 0, -90, 0) == pytest.approx(math.pi * geo.EARTH_RADIUS_KM, rel=1e-9)


def test_distance_across_the_antimeridian_is_short() -> None:
    assert geo.haversine_km(0, 179.9, 0, -179.9) == pytest.approx(22.24, abs=0.01)


# --- cells -----------------------------------------------------------------------------


def test_cell_of_berlin() -> None:
    assert geo.cell_of(*BERLIN, 5) == "u33dc"
    assert geo.cell_of(*BERLIN, 3) == "u33"


@pytest.mark.parametrize("precision", [3, 4, 5])
def test_covering_cells_contain_the_center_cell(precision: int) -> None:
    cells = geo.covering_cells(*BERLIN, 10, precision)
    assert geo.cell_of(*BERLIN, precision) in cells
    assert cells == sorted(set(cells))
    assert all(len(c) == precision for c in cells)


def test_covering_cells_span_the_antimeridian() -> None:
    lat, lng, radius = 10.0, 179.9, 30.0
    cells = geo.covering_cells(lat, lng, radius, 4)
    assert geo.cell_of(lat, lng, 4) in cells
    east_of_line = destination(lat, lng, 90, radius * 0.999)
    assert east_of_line[1] < 0  # the circle crosses into negative longitudes
    assert geo.cell_of(*east_of_line, 4) in cells
    assert geo.cell_of(*destination(lat, lng, 270, radius * 0.999), 4) in cells
    assert {c[0] for c in cells} >= {geo.cell_of(lat, -179.95, 4)[0], geo.cell_of(lat, 179.95, 4)[0]}


# --- index attributes ----------------------------------------------------------------


def _listing(meta: dict[str, str], category: str = "jobs", role: str = "hiring") -> dict[str, object]:
    return {"listingId": "lst_1", "categoryKey": category, "roleKey": role, "createdAt": "2026-01-02T03:04:05.006Z", "meta": meta}


def test_index_attributes_of_a_located_listing() -> None:
    attributes = index_attributes(_listing({"location": "Berlin", "location_lat": "52.52", "location_lng": "13.405"}))
    assert attributes == {
        "geoPoint": f"{geo.cell_of(52.52, 13.405, 12)}#lst_1",
        "geoCell1": "jobs#location#u",
        "geoCell3": "jobs#location#u33",
        "geoCell5": "jobs#location#u33dc",
        "activeCategoryShard": f"jobs#{shard_of('lst_1')}",
        "activeRoleShard": f"jobs#hiring#{shard_of('lst_1')}",
        "activeNewest": "2026-01-02T03:04:05.006Z#lst_1",
    }
    assert set(attributes) <= set(INDEX_ATTRIBUTES)
    assert set(INDEX_ATTRIBUTES) - set(attributes) == {"geo3", "geo4", "geo5", "geoSort"}  # the old geo indexes' attributes, removed


def test_index_attributes_of_a_listing_without_location_skip_the_geo_indexes() -> None:
    attributes = index_attributes(_listing({"title": "Mentor"}, "mentoring", "mentor"))
    assert set(attributes) == {"activeCategoryShard", "activeRoleShard", "activeNewest"}


def test_location_of_needs_both_coordinates() -> None:
    assert location_of(_listing({"location": "X", "location_lat": "1.5", "location_lng": "2"})) == ("location", 1.5, 2.0)
    assert location_of(_listing({"location": "X", "location_lat": "1.5"})) is None
    assert location_of(_listing({"location": "X"}, category="nope")) is None
