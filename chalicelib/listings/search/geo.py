"""Great-circle distance and geohash cells for the geo index.

Geohash (G. Niemeyer, 2008; cells via the ``pygeohash`` library) cuts the globe into a grid;
precision 3 cells are about 156 x 156 km, 4 about 39 x 19.5 km, 5 about 4.9 x 4.9 km (at the
equator; narrower in longitude towards the poles). A listing is indexed under its cell at each
of :data:`INDEX_PRECISIONS`; a search reads the cells covering its circle's bounding box at
the finest precision that needs at most :data:`MAX_CELLS` queries.
"""

from __future__ import annotations

import math

import pygeohash

#: Mean Earth radius in km (IUGG R1 = 6371.0088 km), as used by the haversine formula.
EARTH_RADIUS_KM = 6371.0088
#: Precisions the listings are indexed at, coarsest first (one GSI each: activeByGeo3/4/5).
INDEX_PRECISIONS = (3, 4, 5)
#: Most cells (= Query calls) one geo search reads before falling back to a coarser precision.
MAX_CELLS = 32
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
    """The geohash of a point at ``precision`` characters."""
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
    """Every geohash cell of ``precision`` that intersects the circle's bounding box (sorted, unique)."""
    cells: set[str] = set()
    for box in _boxes(lat, lng, radius_km):
        cells.update(pygeohash.geohashes_in_box(box, precision))
    return sorted(cells)


def plan_cells(lat: float, lng: float, radius_km: float) -> tuple[int, list[str]] | None:
    """Choose the finest indexed precision whose covering needs at most :data:`MAX_CELLS` cells.

    Returns
    -------
    tuple or None
        ``(precision, cells)``, or ``None`` when even the coarsest precision needs more
        cells (a radius of roughly 400 km or more): the caller then reads the category index.
    """
    for precision in sorted(INDEX_PRECISIONS, reverse=True):
        # Estimate the count from the cell size before enumerating, to skip hopeless precisions cheaply.
        cells = covering_cells(lat, lng, radius_km, precision) if _estimate(lat, radius_km, precision) <= 4 * MAX_CELLS else []
        if cells and len(cells) <= MAX_CELLS:
            return precision, cells
    return None


def _estimate(lat: float, radius_km: float, precision: int) -> float:
    bits = 5 * precision
    lat_deg = 180.0 / float(2 ** (bits // 2))
    lng_deg = 360.0 / float(2 ** (bits - bits // 2))
    height = 2 * radius_km / _KM_PER_DEGREE_LAT
    width = 2 * radius_km / (_KM_PER_DEGREE_LAT * max(math.cos(math.radians(min(abs(lat), 89.0))), 1e-6))
    return (height / lat_deg + 1) * (min(width, 360.0) / lng_deg + 1)
