"""The distance from a point to a geohash cell (``chalicelib.search.geo.min_distance_km``): pure, no AWS.

Checked with hypothesis over the whole globe (poles and antimeridian included): the bound holds
for every point of the cell and is attained (the nearest point is an edge's foot or an end).
"""

from __future__ import annotations

import math

import pygeohash
import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from chalicelib.search import geo

latitudes = st.floats(min_value=-90, max_value=90, allow_nan=False)
longitudes = st.floats(min_value=-180, max_value=180, allow_nan=False)
fractions = st.floats(min_value=0, max_value=1, allow_nan=False)


@given(latitudes, longitudes, st.text(alphabet=geo.BASE32, min_size=1, max_size=6), fractions, fractions)
def test_the_distance_bound_holds_for_every_point_of_a_cell(lat: float, lng: float, geohash: str, u: float, v: float) -> None:
    box = pygeohash.get_bounding_box(geohash)
    nearest = geo.min_distance_km(lat, lng, geohash)
    corners_and_inner = [(box.min_lat + u * (box.max_lat - box.min_lat), box.min_lon + v * (box.max_lon - box.min_lon)),
                         (box.min_lat, box.min_lon), (box.max_lat, box.max_lon), (box.min_lat, box.max_lon)]
    for point in corners_and_inner:
        assert nearest - 1e-6 <= geo.haversine_km(lat, lng, *point)
    assert nearest >= 0


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


@given(latitudes, longitudes, st.text(alphabet=geo.BASE32, min_size=1, max_size=6))
@example(10.0, -160.0, "s")  # the nearer edge across the antimeridian
@example(89.0, 180.0, "g")  # the nearer end past the pole
def test_min_distance_takes_the_nearer_edge_and_end_only(lat: float, lng: float, geohash: str) -> None:
    assert geo.min_distance_km(lat, lng, geohash) == pytest.approx(_min_distance_every_candidate(lat, lng, geohash), abs=1e-9)


@pytest.mark.parametrize(("lat", "lng", "geohash"), [(52.52, 13.405, "u33"), (0.0, 0.0, "s0"), (-33.9, 151.2, "r3gx")])
def test_min_distance_is_zero_inside_and_tight_outside(lat: float, lng: float, geohash: str) -> None:
    nearest = geo.min_distance_km(lat, lng, geohash)
    if geo.cell_of(lat, lng, len(geohash)) == geohash:
        assert nearest == 0.0
    box = pygeohash.get_bounding_box(geohash)
    # The bound is attained: dense sampling of the box never gets nearer, and gets close to it.
    samples = [geo.haversine_km(lat, lng, box.min_lat + i / 40 * (box.max_lat - box.min_lat),
                                box.min_lon + j / 40 * (box.max_lon - box.min_lon)) for i in range(41) for j in range(41)]
    assert nearest <= min(samples) + 1e-9
    assert min(samples) - nearest < 0.05 * (max(samples) - nearest) + 1e-9


def test_distance_to_a_cell_across_the_antimeridian_and_over_the_pole() -> None:
    assert geo.min_distance_km(10.0, 179.99, geo.cell_of(10.0, -179.99, 4)) < 3.0
    assert geo.min_distance_km(89.0, 180.0, geo.cell_of(89.9, 0.0, 3)) < 112.0  # over the pole, not around it
