"""Attributes that put an ACTIVE listing into the sparse search indexes.

* ``activeByCategory``: ``activeCategory`` = category key, ``activeSort`` = ``role#createdAt#id``
  (so a role filter is a ``begins_with`` on the sort key).
* ``activeByGeo3/4/5``: ``geo3``/``geo4``/``geo5`` = ``<fieldKey>#<geohash>``, ``geoSort`` =
  ``category#role#createdAt#id``.

The attributes exist only while the listing is ACTIVE (DynamoDB leaves items without the key
attributes out of a GSI), so the indexes hold exactly the searchable listings.
"""

from __future__ import annotations

from typing import Any

from chalicelib.categories.registry import all_categories
from chalicelib.listings.search.geo import INDEX_PRECISIONS, cell_of

#: Every attribute :func:`index_attributes` may set (removed when a listing leaves ACTIVE).
INDEX_ATTRIBUTES = ("activeCategory", "activeSort", "geoSort", *(f"geo{p}" for p in INDEX_PRECISIONS))


def location_of(listing: dict[str, Any]) -> tuple[str, float, float] | None:
    """``(fieldKey, lat, lng)`` of the listing's location field, or ``None`` when it has none."""
    category = all_categories().get(listing["categoryKey"])
    if category is None:
        return None
    meta = listing.get("meta") or {}
    for field in category.location_fields():
        lat, lng = meta.get(f"{field.key}_lat"), meta.get(f"{field.key}_lng")
        if lat and lng:
            return field.key, float(lat), float(lng)
    return None


def index_attributes(listing: dict[str, Any]) -> dict[str, str]:
    """The index attributes of an ACTIVE ``listing`` item (needs listingId, categoryKey, roleKey, createdAt, meta)."""
    tail = f"{listing['createdAt']}#{listing['listingId']}"
    attributes = {
        "activeCategory": listing["categoryKey"],
        "activeSort": f"{listing['roleKey']}#{tail}",
    }
    located = location_of(listing)
    if located is not None:
        field_key, lat, lng = located
        attributes["geoSort"] = f"{listing['categoryKey']}#{listing['roleKey']}#{tail}"
        for precision in INDEX_PRECISIONS:
            attributes[f"geo{precision}"] = f"{field_key}#{cell_of(lat, lng, precision)}"
    return attributes
