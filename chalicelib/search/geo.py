"""Spherical geometry of the geo search: haversine distance, geohash cells, distance bounds
from a point to a cell, and mixed-precision coverings of a circle (pure; no store).

Geohash (G. Niemeyer, 2008; encoding and cell boxes via the ``pygeohash`` library) cuts the
globe into 32 cells of 45 x 45 degrees and every cell into 32 children, alternately 8 x 4 and
4 x 8; a cell's children are exactly the geohashes that extend it by one character, so any
cell is a key prefix of the points inside it. Precision 1 cells are about 5,000 km across,
3 about 156 km, 5 about 4.9 km, 7 about 150 m (at the equator; narrower in longitude towards
the poles).

A circle (spherical cap) is covered by :func:`covering`: start from the 32 precision-1 cells,
drop the cells that cannot reach the circle, keep the cells inside it, and split the boundary
cells, largest first, until the cells' area is within :data:`TARGET_AREA_RATIO` of the
circle's or the cell budget is spent (the region-covering scheme of S2's ``S2RegionCoverer``,
on geohash cells). Distances are great-circle distances on a sphere of radius
:data:`EARTH_RADIUS_KM`.
"""

from __future__ import annotations

import functools
import heapq
import math
from dataclasses import dataclass

import pygeohash

#: Mean Earth radius in km (IUGG R1 = 6371.0088 km), as used by the haversine formula.
EARTH_RADIUS_KM = 6371.0088
#: Half the great circle (km): no two points are farther apart.
HALF_CIRCUMFERENCE_KM = math.pi * EARTH_RADIUS_KM
#: The geohash alphabet (Niemeyer's base 32: digits and lower-case letters without a, i, l, o).
BASE32 = "0123456789bcdefghjkmnpqrstuvwxyz"
#: Geohash precision of an indexed point (12 characters: a few cm; pygeohash's maximum).
POINT_PRECISION = 12
#: Cells a covering may hold (each is a key range to read; consecutive ones share a Query).
MAX_COVERING_CELLS = 160
#: A covering stops refining once its area is at most this multiple of the circle's area.
TARGET_AREA_RATIO = 1.3
#: Finest cell a covering splits down to (about 38 x 19 m): finer cells save nothing.
MAX_COVERING_PRECISION = 8
#: Safety margin (km) of the distance bounds against floating-point error: a cell is dropped or
#: skipped only when it is farther than the bound by more than this.
BOUND_MARGIN_KM = 1e-3
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


def cap_area_km2(radius_km: float) -> float:
    """Area in km² of the spherical cap of great-circle radius ``radius_km`` (the whole sphere beyond
    half the circumference): ``2 pi R² (1 - cos(r / R))``."""
    angle = min(radius_km / EARTH_RADIUS_KM, math.pi)
    return 2 * math.pi * EARTH_RADIUS_KM**2 * (1 - math.cos(angle))


@dataclass(frozen=True)
class Cell:
    """A geohash cell as seen from a search center.

    Attributes
    ----------
    geohash:
        The cell (1..12 base-32 characters).
    min_km, max_km:
        Lower and upper bounds of the great-circle distance in km from the center to any point
        of the cell (exact up to floating point: the nearest and farthest points of the box).
    """

    geohash: str
    min_km: float
    max_km: float

    @property
    def precision(self) -> int:
        """Characters of the geohash."""
        return len(self.geohash)

    def area_km2(self) -> float:
        """Area of the cell in km² (a latitude-longitude box on the sphere: ``R² dλ (sin φ2 - sin φ1)``)."""
        box = _bounding_box(self.geohash)
        width = math.radians(box.max_lon - box.min_lon)
        return EARTH_RADIUS_KM**2 * width * (math.sin(math.radians(box.max_lat)) - math.sin(math.radians(box.min_lat)))


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


@functools.lru_cache(maxsize=1 << 16)
def _bounding_box(geohash: str) -> pygeohash.BoundingBox:
    """The cell's box (pygeohash), decoded once per cell: a covering asks each cell's box for both
    of its distance bounds and its area, on every search from every center."""
    return pygeohash.get_bounding_box(geohash)


def max_distance_km(lat: float, lng: float, geohash: str) -> float:
    """Great-circle distance in km from a point (degrees) to the farthest point of a geohash cell:
    half the circumference minus the distance from the point's antipode to the cell."""
    antipode_lng = lng + 180.0 if lng <= 0 else lng - 180.0
    return HALF_CIRCUMFERENCE_KM - min_distance_km(-lat, antipode_lng, geohash)


def cell(lat: float, lng: float, geohash: str) -> Cell:
    """The cell ``geohash`` with its distance bounds from the center (``lat``, ``lng``; degrees)."""
    return Cell(geohash, min_distance_km(lat, lng, geohash), max_distance_km(lat, lng, geohash))


def children(lat: float, lng: float, parent: Cell) -> list[Cell]:
    """The 32 children of ``parent`` (one more character), in key order, with their distance bounds."""
    return [cell(lat, lng, parent.geohash + char) for char in BASE32]


def roots(lat: float, lng: float) -> list[Cell]:
    """The 32 precision-1 cells (the whole globe) with their distance bounds, in key order."""
    return [cell(lat, lng, char) for char in BASE32]


def reaches(found: Cell, radius_km: float | None) -> bool:
    """Whether a cell may hold points within ``radius_km`` of the center (``None``: no radius)."""
    return radius_km is None or found.min_km - BOUND_MARGIN_KM <= radius_km


def covering(lat: float, lng: float, radius_km: float | None, max_cells: int = MAX_COVERING_CELLS) -> list[Cell]:
    """Geohash cells of mixed precision whose union holds every point within ``radius_km`` of the center.

    Parameters
    ----------
    lat, lng:
        Center in decimal degrees (WGS 84; any latitude, the poles included).
    radius_km:
        Great-circle radius in km (up to and beyond half the circumference); ``None`` covers the
        globe (the 32 precision-1 cells).
    max_cells:
        Most cells returned (at least 32).

    Returns
    -------
    list of Cell
        Disjoint cells in key order. A cell is left out only when its nearest point is farther
        than the radius (plus :data:`BOUND_MARGIN_KM`), so every point of the circle lies in
        exactly one of them. Boundary cells are split, largest first, while the cells' total
        area exceeds :data:`TARGET_AREA_RATIO` times the circle's (:func:`cap_area_km2`) and
        the budget allows; cells fully inside are never split.
    """
    cells = [c for c in roots(lat, lng) if reaches(c, radius_km)]
    if radius_km is None:
        return cells
    target = TARGET_AREA_RATIO * cap_area_km2(radius_km)
    areas = {c.geohash: c.area_km2() for c in cells}
    total = sum(areas.values())
    kept = {c.geohash: c for c in cells}
    boundary = [(-areas[c.geohash], c.geohash) for c in cells if c.max_km > radius_km and c.precision < MAX_COVERING_PRECISION]
    heapq.heapify(boundary)
    while boundary and total > target:
        _, geohash = heapq.heappop(boundary)
        parent = kept.pop(geohash)
        inner = [c for c in children(lat, lng, parent) if reaches(c, radius_km)]
        if len(kept) + len(inner) > max_cells:
            kept[geohash] = parent
            break
        total -= areas.pop(geohash)
        for child in inner:
            kept[child.geohash] = child
            areas[child.geohash] = child.area_km2()
            total += areas[child.geohash]
            if child.max_km > radius_km and child.precision < MAX_COVERING_PRECISION:
                heapq.heappush(boundary, (-areas[child.geohash], child.geohash))
    return [kept[g] for g in sorted(kept)]
