"""Mixed-precision geohash coverings and distance bounds (``chalicelib.search.geo``): pure, no AWS.

Properties checked with hypothesis over the whole globe (poles and antimeridian included):
every point within the radius lies in a covering cell, the cells are disjoint, the distance
bounds of a cell hold for every point of it, and, away from the poles, the covering's area
stays within the target ratio of the circle's.
"""

from __future__ import annotations

import math

import pygeohash
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from chalicelib.search import geo
from tests.unit.test_geo import destination

latitudes = st.floats(min_value=-90, max_value=90, allow_nan=False)
longitudes = st.floats(min_value=-180, max_value=180, allow_nan=False)
radii = st.floats(min_value=0.05, max_value=geo.HALF_CIRCUMFERENCE_KM, allow_nan=False)
bearings = st.floats(min_value=0, max_value=360, allow_nan=False)
fractions = st.floats(min_value=0, max_value=1, allow_nan=False)


def _holder(cells: list[geo.Cell], lat: float, lng: float) -> list[str]:
    point = geo.cell_of(lat, lng, geo.POINT_PRECISION)
    return [c.geohash for c in cells if point.startswith(c.geohash)]


@settings(max_examples=150, deadline=None)
@given(latitudes, longitudes, radii, st.lists(st.tuples(bearings, fractions), min_size=1, max_size=20))
@example(89.99, 0.0, 25.0, [(180.0, 1.0), (0.0, 1.0)])
@example(-90.0, 0.0, 100.0, [(90.0, 0.999)])
@example(10.0, 179.95, 30.0, [(90.0, 0.999), (270.0, 0.999)])
@example(0.0, -180.0, 5.0, [(90.0, 0.5), (270.0, 0.5)])
@example(48.0, 10.0, geo.HALF_CIRCUMFERENCE_KM, [(0.0, 1.0)])
def test_every_point_inside_the_circle_lies_in_exactly_one_covering_cell(
    lat: float, lng: float, radius: float, points: list[tuple[float, float]]
) -> None:
    cells = geo.covering(lat, lng, radius)
    assert 1 <= len(cells) <= geo.MAX_COVERING_CELLS
    for bearing, fraction in points:
        inside = destination(lat, lng, bearing, radius * fraction)
        if geo.haversine_km(lat, lng, *inside) > radius:
            continue  # rounding at the very edge
        assert len(_holder(cells, *inside)) == 1, (inside, geo.haversine_km(lat, lng, *inside))


@settings(max_examples=150, deadline=None)
@given(latitudes, longitudes, st.text(alphabet=geo.BASE32, min_size=1, max_size=6), fractions, fractions)
def test_distance_bounds_hold_for_every_point_of_a_cell(lat: float, lng: float, geohash: str, u: float, v: float) -> None:
    box = pygeohash.get_bounding_box(geohash)
    found = geo.cell(lat, lng, geohash)
    corners_and_inner = [(box.min_lat + u * (box.max_lat - box.min_lat), box.min_lon + v * (box.max_lon - box.min_lon)),
                         (box.min_lat, box.min_lon), (box.max_lat, box.max_lon), (box.min_lat, box.max_lon)]
    for point in corners_and_inner:
        distance = geo.haversine_km(lat, lng, *point)
        assert found.min_km - 1e-6 <= distance <= found.max_km + 1e-6
    assert 0 <= found.min_km <= found.max_km <= geo.HALF_CIRCUMFERENCE_KM + 1e-9


def _min_distance_every_candidate(lat: float, lng: float, geohash: str) -> float:
    """The nearest point of a cell by trying every candidate: the four corners and the feet of
    both meridian edges (inside the longitudes: the nearer latitude edge, or 0)."""
    box = pygeohash.get_bounding_box(geohash)
    if box.min_lon <= lng <= box.max_lon:
        return 0.0 if box.min_lat <= lat <= box.max_lat else geo.haversine_km(lat, lng, min(max(lat, box.min_lat), box.max_lat), lng)
    phi = math.radians(lat)
    candidates = []
    for edge in (box.min_lon, box.max_lon):
        candidates += [geo.haversine_km(lat, lng, box.min_lat, edge), geo.haversine_km(lat, lng, box.max_lat, edge)]
        foot = math.degrees(math.atan2(math.sin(phi), math.cos(phi) * math.cos(math.radians(lng - edge))))
        if box.min_lat < foot < box.max_lat:
            candidates.append(geo.haversine_km(lat, lng, foot, edge))
    return min(candidates)


@settings(max_examples=300, deadline=None)
@given(latitudes, longitudes, st.text(alphabet=geo.BASE32, min_size=1, max_size=6))
@example(10.0, -160.0, "s")  # the nearer edge across the antimeridian
@example(89.0, 180.0, "g")  # the nearer end past the pole
def test_min_distance_takes_the_nearer_edge_and_end_only(lat: float, lng: float, geohash: str) -> None:
    assert geo.min_distance_km(lat, lng, geohash) == pytest.approx(_min_distance_every_candidate(lat, lng, geohash), abs=1e-9)


@pytest.mark.parametrize(("lat", "lng", "geohash"), [(52.52, 13.405, "u33"), (0.0, 0.0, "s0"), (-33.9, 151.2, "r3gx")])
def test_min_distance_is_zero_inside_and_tight_outside(lat: float, lng: float, geohash: str) -> None:
    found = geo.cell(lat, lng, geohash)
    if geo.cell_of(lat, lng, len(geohash)) == geohash:
        assert found.min_km == 0.0
    box = pygeohash.get_bounding_box(geohash)
    # The bound is attained: dense sampling of the box never gets nearer, and gets close to it.
    samples = [geo.haversine_km(lat, lng, box.min_lat + i / 40 * (box.max_lat - box.min_lat),
                                box.min_lon + j / 40 * (box.max_lon - box.min_lon)) for i in range(41) for j in range(41)]
    assert found.min_km <= min(samples) + 1e-9
    assert min(samples) - found.min_km < 0.05 * (found.max_km - found.min_km) + 1e-9
    assert max(samples) <= found.max_km + 1e-9


def test_distance_to_a_cell_across_the_antimeridian_and_over_the_pole() -> None:
    east_edge = geo.cell(10.0, 179.99, geo.cell_of(10.0, -179.99, 4))
    assert east_edge.min_km < 3.0
    north = geo.cell(89.0, 180.0, geo.cell_of(89.9, 0.0, 3))
    assert north.min_km < 112.0  # over the pole, not around it


@pytest.mark.parametrize("lat", [-60.0, -30.0, 0.0, 23.5, 48.0, 60.0])
@pytest.mark.parametrize("radius_km", [1.0, 10.0, 25.0, 100.0, 500.0, 2000.0, 5000.0, 10000.0])
def test_covering_area_stays_within_the_target_of_the_circle(lat: float, radius_km: float) -> None:
    cells = geo.covering(lat, 10.0, radius_km)
    ratio = sum(c.area_km2() for c in cells) / geo.cap_area_km2(radius_km)
    assert 1.0 <= ratio <= 1.8, ratio  # typically 1.3 (TARGET_AREA_RATIO); more where the cell budget ends the splitting


def test_whole_earth_is_the_32_top_cells() -> None:
    for radius in (geo.HALF_CIRCUMFERENCE_KM, 20_038.0):
        cells = geo.covering(52.52, 13.405, radius)
        assert [c.geohash for c in cells] == list(geo.BASE32)
    assert [c.geohash for c in geo.covering(52.52, 13.405, None)] == list(geo.BASE32)
    assert geo.cap_area_km2(geo.HALF_CIRCUMFERENCE_KM) == pytest.approx(4 * math.pi * geo.EARTH_RADIUS_KM**2)


def test_covering_at_the_poles_holds_the_pole_and_stays_within_budget() -> None:
    for lat in (90.0, -90.0, 89.9):
        cells = geo.covering(lat, 0.0, 50.0)
        assert len(cells) <= geo.MAX_COVERING_CELLS
        pole = 90.0 if lat > 0 else -90.0
        for lng in (-180.0, -90.0, 0.0, 90.0, 179.9):
            assert len(_holder(cells, pole, lng)) == 1


def test_covering_across_the_antimeridian_has_cells_on_both_sides() -> None:
    cells = geo.covering(-17.0, -179.95, 60.0)
    sides = {pygeohash.get_bounding_box(c.geohash).min_lon > 0 for c in cells}
    assert sides == {True, False}
