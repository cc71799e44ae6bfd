"""Attributes that put an ACTIVE listing into the sparse search indexes.

* ``activeByCategoryShard``: ``activeCategoryShard`` = ``<category>#<shard>``,
  ``activeNewest`` = ``createdAt#id``; ``activeByRoleShard``: ``activeRoleShard`` =
  ``<category>#<role>#<shard>``, same sort key. Write sharding (AWS, "Using write sharding to
  distribute workloads evenly"): a listing goes to shard ``hash(id) mod`` :data:`SHARDS`, so a
  large category's writes spread over :data:`SHARDS` partitions; reads merge the shards
  newest first (:mod:`chalicelib.search.merge`).
* ``activeByGeoCell1/3/5`` (geo search, :mod:`chalicelib.listings.search.nearest`): partition
  ``geoCell1``/``geoCell3``/``geoCell5`` = ``<category>#<fieldKey>#<geohash prefix of 1/3/5>``,
  sort key ``geoPoint`` = ``<geohash of precision 12>#<listingId>``. Any geohash cell of
  precision ``p`` (and any run of consecutive cells sharing a prefix of ``p`` characters) is
  one key range inside the partition of the finest :data:`GEO_PARTITION_PRECISIONS` ``<= p``
  (a ``BETWEEN`` on ``geoPoint``), so a covering of mixed precision reads only its cells.

The attributes exist only while the listing is ACTIVE (DynamoDB leaves items without the key
attributes out of a GSI), so the indexes hold exactly the searchable listings.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from chalicelib.categories.registry import all_categories
from chalicelib.search.geo import POINT_PRECISION, cell_of

#: Write shards per category (and per category + role) of the newest-first indexes and counters.
SHARDS = 4
#: Geohash precisions of the geo indexes' partition keys (about 5,000, 156 and 4.9 km cells):
#: continent-wide cells read from the first, city-sized ones from the last, so reads of
#: different places spread over partitions.
GEO_PARTITION_PRECISIONS = (1, 3, 5)
#: Attributes of the geo indexes of an earlier layout (removed with the others).
LEGACY_GEO_ATTRIBUTES = ("geo3", "geo4", "geo5", "geoSort")
#: Every attribute :func:`index_attributes` may set (removed when a listing leaves ACTIVE).
INDEX_ATTRIBUTES = (
    "activeCategoryShard", "activeRoleShard", "activeNewest", "geoPoint",
    *(f"geoCell{p}" for p in GEO_PARTITION_PRECISIONS), *LEGACY_GEO_ATTRIBUTES,
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


def geo_index(precision: int) -> tuple[str, str]:
    """``(index name, partition key attribute)`` of the geo index partitioned at ``precision``
    (one of :data:`GEO_PARTITION_PRECISIONS`)."""
    return f"activeByGeoCell{precision}", f"geoCell{precision}"


def geo_partition(category_key: str, field_key: str, prefix: str) -> str:
    """Partition key value of a geo index: ``<category>#<fieldKey>#<geohash prefix>``."""
    return f"{category_key}#{field_key}#{prefix}"


def newest_key(listing: Mapping[str, Any]) -> str:
    """The newest-first sort key ``createdAt#listingId`` (ISO 8601 UTC sorts as text)."""
    return f"{listing['createdAt']}#{listing['listingId']}"


def location_of(listing: Mapping[str, Any]) -> tuple[str, float, float] | None:
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


def index_attributes(listing: Mapping[str, Any]) -> dict[str, str]:
    """The index attributes of an ACTIVE ``listing`` item (needs listingId, categoryKey, roleKey, createdAt, meta)."""
    shard = shard_of(listing["listingId"])
    attributes = {
        "activeCategoryShard": category_partition(listing["categoryKey"], shard),
        "activeRoleShard": role_partition(listing["categoryKey"], listing["roleKey"], shard),
        "activeNewest": newest_key(listing),
    }
    located = location_of(listing)
    if located is not None:
        field_key, lat, lng = located
        point = cell_of(lat, lng, POINT_PRECISION)
        attributes["geoPoint"] = f"{point}#{listing['listingId']}"
        for precision in GEO_PARTITION_PRECISIONS:
            attributes[geo_index(precision)[1]] = geo_partition(listing["categoryKey"], field_key, point[:precision])
    return attributes
