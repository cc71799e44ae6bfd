"""Attributes that put an ACTIVE listing into the sparse search indexes.

* ``activeByCategoryShard``: ``activeCategoryShard`` = ``<category>#<shard>``,
  ``activeNewest`` = ``createdAt#id``; ``activeByRoleShard``: ``activeRoleShard`` =
  ``<category>#<role>#<shard>``, same sort key. Write sharding (AWS, "Using write sharding to
  distribute workloads evenly"): a listing goes to shard ``hash(id) mod`` :data:`SHARDS`, so a
  large category's writes spread over :data:`SHARDS` partitions; reads merge the shards
  newest first (:mod:`chalicelib.listings.search.merge`).
* ``activeByGeo3/4/5``: ``geo3``/``geo4``/``geo5`` = ``<fieldKey>#<geohash>``, ``geoSort`` =
  ``category#role#createdAt#id``.

The attributes exist only while the listing is ACTIVE (DynamoDB leaves items without the key
attributes out of a GSI), so the indexes hold exactly the searchable listings.
"""

from __future__ import annotations

import hashlib
from typing import Any

from chalicelib.categories.registry import all_categories
from chalicelib.listings.search.geo import INDEX_PRECISIONS, cell_of

#: Write shards per category (and per category + role) of the newest-first indexes and counters.
SHARDS = 4
#: Every attribute :func:`index_attributes` may set (removed when a listing leaves ACTIVE).
INDEX_ATTRIBUTES = (
    "activeCategoryShard", "activeRoleShard", "activeNewest", "geoSort",
    *(f"geo{p}" for p in INDEX_PRECISIONS),
)


def shard_of(listing_id: str) -> int:
    """The write shard (``0`` .. :data:`SHARDS` - 1) of a listing, from a stable hash of its id."""
    return int(hashlib.sha256(listing_id.encode()).hexdigest()[:8], 16) % SHARDS


def category_partition(category_key: str, shard: int) -> str:
    """Partition key of one shard of a category in ``activeByCategoryShard``."""
    return f"{category_key}#{shard}"


def role_partition(category_key: str, role_key: str, shard: int) -> str:
    """Partition key of one shard of a category + role in ``activeByRoleShard``."""
    return f"{category_key}#{role_key}#{shard}"


def newest_key(listing: dict[str, Any]) -> str:
    """The newest-first sort key ``createdAt#listingId`` (ISO 8601 UTC sorts as text)."""
    return f"{listing['createdAt']}#{listing['listingId']}"


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
    shard = shard_of(listing["listingId"])
    attributes = {
        "activeCategoryShard": category_partition(listing["categoryKey"], shard),
        "activeRoleShard": role_partition(listing["categoryKey"], listing["roleKey"], shard),
        "activeNewest": newest_key(listing),
    }
    located = location_of(listing)
    if located is not None:
        field_key, lat, lng = located
        attributes["geoSort"] = f"{listing['categoryKey']}#{listing['roleKey']}#{tail}"
        for precision in INDEX_PRECISIONS:
            attributes[f"geo{precision}"] = f"{field_key}#{cell_of(lat, lng, precision)}"
    return attributes
