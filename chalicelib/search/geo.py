"""Spherical geometry of the geo search: haversine distance, geohash cells and the distance
from a point to a cell (pure; no store).

Geohash (G. Niemeyer, 2008; encoding and cell boxes via the ``pygeohash`` library) cuts the
globe into 32 cells of 45 x 45 degrees and every cell into 32 children, alternately 8 x 4 and
4 x 8; a cell's children are exactly the geohashes that extend it by one character, so any
cell is a key prefix of the points inside it. Precision 1 cells are about 5,000 km across,
3 about 156 km, 5 about 4.9 km, 7 about 150 m (at the equator; narrower in longitude towards
the poles).

Distances are great-circle distances on a sphere of radius
:data:`EARTH_RADIUS_KM`.
"""

from __future__ import annotations

import functools
import math

import pygeohash

#: Mean Earth radius in km (IUGG R1 = 6371.0088 km), as used by the haversine formula.
EARTH_RADIUS_KM = 6371.0088
#: The geohash alphabet (Niemeyer's base 32: digits and lower-case letters without a, i, l, o).
BASE32 = "0123456789bcdefghjkmnpqrstuvwxyz"
#: Geohash precision of an indexed point (12 characters: a few cm; pygeohash's maximum).
POINT_PRECISION = 12
_KM_PER_DEGREE_LAT = math.pi * EARTH_RADIUS_KM / 180.0


def haversine_km(lat1: float, lng1: float, lat2: float, lng2: float) -> float:
    """Great-circle distance in km between two points given in decimal degrees (haversine formula,
    R. W. Sinnott, "Virtues of the Haversine", Sky and Telescope 68(2), 1984)."""
    phi1, phi2 = math.radians(lat1), math.radians(lat2)
    dphi = phi2 - phi1
    dlmb = math.radians(lng2 - lng1)
    a = math.sin(dphi / 2) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(dlmb / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(min(1.0, math.sqrt(a)))


def cell_of(lat: float, lng: float, precision: int) -> str:
    """The geohash of a point (degrees) at ``precision`` characters (1..12)."""
    return str(pygeohash.encode(lat, lng, precision))


def _boxes(lat: float, lng: float, radius_km: float) -> list[pygeohash.BoundingBox]:
    """Bounding boxes (split at the antimeridian) that contain the circle."""
    dlat = radius_km / _KM_PER_DEGREE_LAT
    min_lat, max_lat = max(-90.0, lat - dlat), min(90.0, lat + dlat)
    cos_lat = min(math.cos(math.radians(min_lat)), math.cos(math.radians(max_lat)))
    if cos_lat <= 1e-9 or radius_km / (_KM_PER_DEGREE_LAT * cos_lat) >= 180.0:
        return [pygeohash.BoundingBox(min_lat, -180.0, max_lat, 180.0)]
    dlng = radius_km / (_KM_PER_DEGREE_LAT * cos_lat)
    west, east = lng - dlng, lng + dlng
    if west < -180.0:
        return [pygeohash.BoundingBox(min_lat, west + 360.0, max_lat, 180.0), pygeohash.BoundingBox(min_lat, -180.0, max_lat, east)]
    if east > 180.0:
        return [pygeohash.BoundingBox(min_lat, west, max_lat, 180.0), pygeohash.BoundingBox(min_lat, -180.0, max_lat, east - 360.0)]
    return [pygeohash.BoundingBox(min_lat, west, max_lat, east)]


def covering_cells(lat: float, lng: float, radius_km: float, precision: int) -> list[str]:
    """Every geohash cell of one ``precision`` that intersects the circle's bounding box (sorted,
    unique): the percolator's filing cells (:mod:`chalicelib.search.percolator`)."""
    cells: set[str] = set()
    for box in _boxes(lat, lng, radius_km):
        cells.update(pygeohash.geohashes_in_box(box, precision))
    return sorted(cells)


def min_distance_km(lat: float, lng: float, geohash: str) -> float:
    """Great-circle distance in km from a point (degrees) to the nearest point of a geohash cell.

    Inside the cell's longitudes the nearest point lies on the same meridian (the haversine
    grows with the longitude difference), so it is the nearer latitude edge, or 0 inside the
    cell. Otherwise it lies on the meridian edge nearer in longitude (for each point of the far
    edge, the near edge's point at the same latitude is nearer, for the same reason). Along a
    meridian, ``cos d = C cos(φ' - φ0)`` with ``tan φ0 = tan φ / cos Δλ`` (spherical law of
    cosines), one peak per turn, so the nearest point of the edge is its foot ``φ0`` when that
    lies on the edge, else the end whose ``cos(φ' - φ0)`` is larger: one haversine in all.
    """
    box = _bounding_box(geohash)
    if box.min_lon <= lng <= box.max_lon:
        if lat < box.min_lat:
            return haversine_km(lat, lng, box.min_lat, lng)
        if lat > box.max_lat:
            return haversine_km(lat, lng, box.max_lat, lng)
        return 0.0
    west, east = box.min_lon, box.max_lon
    edge = west if abs((lng - west + 180.0) % 360.0 - 180.0) <= abs((lng - east + 180.0) % 360.0 - 180.0) else east
    phi = math.radians(lat)
    foot = math.degrees(math.atan2(math.sin(phi), math.cos(phi) * math.cos(math.radians(lng - edge))))
    south, north = box.min_lat, box.max_lat
    if south < foot < north:
        return haversine_km(lat, lng, foot, edge)
    near = south if math.cos(math.radians(south - foot)) >= math.cos(math.radians(north - foot)) else north
    return haversine_km(lat, lng, near, edge)


def cell_area_km2(geohash: str) -> float:
    """A geohash cell's area in km², taken as a rectangle whose width is measured at its mid
    latitude (exact enough for a density: cells are small against the Earth's curvature)."""
    box = _bounding_box(geohash)
    height = (box.max_lat - box.min_lat) * _KM_PER_DEGREE_LAT
    width = (box.max_lon - box.min_lon) * _KM_PER_DEGREE_LAT * math.cos(math.radians((box.min_lat + box.max_lat) / 2))
    return height * width


def touches_pole(geohash: str, direction: str) -> bool:
    """Whether ``geohash``'s neighbour in ``direction`` (``"top"``, ``"bottom"``, ``"left"`` or
    ``"right"``) would lie beyond a pole: its box reaches latitude 90 (top) or -90 (bottom)."""
    box = _bounding_box(geohash)
    return (direction == "top" and box.max_lat >= 90.0) or (direction == "bottom" and box.min_lat <= -90.0)


@functools.lru_cache(maxsize=1 << 16)
def _bounding_box(geohash: str) -> pygeohash.BoundingBox:
    """The cell's box (pygeohash), decoded once per cell: a covering asks each cell's box for both
    of its distance bounds and its area, on every search from every center."""
    return pygeohash.get_bounding_box(geohash)
