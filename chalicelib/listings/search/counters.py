"""Exact counts of ACTIVE listings per category and per category + role (SearchIndex table).

One counter item per category and write shard, each under a partition key of its own:
``{pk: "count#listings#<category>#<shard>", sk: "<shard>", n, "r#<role>": ...}``. ``n`` counts the
shard's ACTIVE listings of the category and ``r#<role>`` those of each role. Every state change that moves a listing in or out of ACTIVE
carries :func:`delta_op` in its own transaction, conditional on the status it moves from, so
the counts are exact at every commit; the counter shards (:data:`COUNTER_SHARDS`) spread a large
category's concurrent writes over several items, as its index partitions are. The shard is part
of the partition key (it was only the sort key, under one partition key per category): every
search reads a category's counters, so at 5,000 searches/s the category's one partition key took
about 2,900 read units/s, above half of a partition's 3,000 (``bench/hot_keys.py``,
docs/capacity.md); split over two keys each takes half. Deployed counters written under the old
key are rewritten by ``scripts/search_backfill.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from chalicelib import storage
from chalicelib.config import settings
from chalicelib.listings.search.index import shard_of

#: Counter items per category. Fewer than the index shards: every page reads all of them, and two
#: items already spread a category's concurrent status changes (transaction conflicts retry).
COUNTER_SHARDS = 2


def counter_shard(listing_id: str) -> int:
    """The counter item (``0`` .. :data:`COUNTER_SHARDS` - 1) a listing is counted in."""
    return shard_of(listing_id) % COUNTER_SHARDS


def _table() -> str:
    return settings().SEARCH_INDEX_TABLE


def _key(category_key: str, shard: int) -> dict[str, str]:
    """The key of one counter shard: the shard in the partition key (its own partition key)."""
    return {"pk": f"count#listings#{category_key}#{shard}", "sk": str(shard)}


def delta_op(listing: Mapping[str, Any], delta: int) -> dict[str, Any]:
    """Transaction ``Update`` adding ``delta`` (+1 into ACTIVE, -1 out) to the listing's counters.

    ``listing`` needs ``listingId``, ``categoryKey`` and ``roleKey``.
    """
    return storage.update_op(
        _table(),
        _key(listing["categoryKey"], counter_shard(listing["listingId"])),
        "ADD n :d, #r :d",
        ExpressionAttributeNames={"#r": f"r#{listing['roleKey']}"},
        ExpressionAttributeValues=storage.values(d=delta),
    )


def count_keys(category_keys: list[str]) -> list[dict[str, str]]:
    """The counter item keys to read for ``category_keys`` (every shard)."""
    return [_key(c, s) for c in category_keys for s in range(COUNTER_SHARDS)]


def read_counts(category_keys: list[str], role_key: str | None) -> int:
    """ACTIVE listings in ``category_keys`` (of ``role_key`` when given), summed over the shards.

    One BatchGetItem of ``len(category_keys) * COUNTER_SHARDS`` small items.
    """
    attribute = f"r#{role_key}" if role_key else "n"
    return sum(int(item.get(attribute, 0)) for item in storage.batch_get(_table(), count_keys(category_keys)))


def put_counts_op(category_key: str, shard: int, counts: dict[str, int]) -> dict[str, Any]:
    """A ``PutRequest`` item overwriting one counter shard with absolute ``counts`` (backfill)."""
    return {**_key(category_key, shard), **counts}
