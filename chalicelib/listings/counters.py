"""Exact counts of ACTIVE listings per category and per category + role (Counters table).

Counter items per category: :data:`COUNTER_SHARDS` write shards, each kept in
:data:`COUNTER_REPLICAS` identical copies, every copy under a partition key of its own:
``{pk: "count#listings#<category>#<shard>#<replica>", sk: "<shard>", n, "r#<role>": ...}``. ``n``
counts the shard's ACTIVE listings of the category and ``r#<role>`` those of each role. Every state
change that moves a listing in or out of ACTIVE carries :func:`delta_ops` (one ``ADD`` per copy of
its shard) in its own transaction, conditional on the status it moves from, so every copy is exact
at every commit. A reader sums one copy of each shard, picked at random.

Why both (``bench/hot_keys.py``, docs/capacity.md; AWS, "Using write sharding to distribute
workloads evenly"): the write shards spread a large category's concurrent status changes over
several items (fewer transaction conflicts); the copies spread reads. No request reads these
counters now: search counts its matches in the SearchIndex table (docs/search.md,
"Consistency"), so they cost writes only, every copy of the shard on every change. Counters written under an older layout are rewritten by
``scripts/search_backfill.py`` (the old items are left unread).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from typing import Any

from chalicelib.kernel.config import settings
from chalicelib.listings.index import shard_of
from chalicelib.persistence import storage

#: Counter items per category. Fewer than the index shards: every page reads all of them, and two
#: items already spread a category's concurrent status changes (transaction conflicts retry).
COUNTER_SHARDS = 2
#: Copies of each shard (read spreading): a change updates them all, a reader reads one.
COUNTER_REPLICAS = 2


def counter_shard(listing_id: str) -> int:
    """The counter item (``0`` .. :data:`COUNTER_SHARDS` - 1) a listing is counted in."""
    return shard_of(listing_id) % COUNTER_SHARDS


def _table() -> str:
    """The table of the counter items: the list counters' (``COUNTERS_TABLE``), apart from the posting lists."""
    return settings().COUNTERS_TABLE


def _key(category_key: str, shard: int, replica: int) -> dict[str, str]:
    """The key of one copy of a counter shard (shard and copy in the partition key: a key of its own)."""
    return {"pk": f"count#listings#{category_key}#{shard}#{replica}", "sk": str(shard)}


def delta_ops(listing: Mapping[str, Any], delta: int) -> list[dict[str, Any]]:
    """Transaction ``Update``s adding ``delta`` (+1 into ACTIVE, -1 out) to every copy of the listing's counter shard.

    ``listing`` needs ``listingId``, ``categoryKey`` and ``roleKey``. Returns
    :data:`COUNTER_REPLICAS` ops, all to go into the change's transaction.
    """
    shard = counter_shard(listing["listingId"])
    return [
        storage.update_op(
            _table(),
            _key(listing["categoryKey"], shard, replica),
            "ADD n :d, #r :d",
            ExpressionAttributeNames={"#r": f"r#{listing['roleKey']}"},
            ExpressionAttributeValues=storage.values(d=delta),
        )
        for replica in range(COUNTER_REPLICAS)
    ]


def count_keys(category_keys: list[str]) -> list[dict[str, str]]:
    """The counter item keys to read for ``category_keys``: every shard, one copy of each (at random: reads spread)."""
    return [_key(c, s, random.randrange(COUNTER_REPLICAS)) for c in category_keys for s in range(COUNTER_SHARDS)]


def read_counts(category_keys: list[str], role_key: str | None) -> int:
    """ACTIVE listings in ``category_keys`` (of ``role_key`` when given), summed over the shards.

    One BatchGetItem of ``len(category_keys) * COUNTER_SHARDS`` small items.
    """
    return counted(storage.batch_get(_table(), count_keys(category_keys)), role_key)


def counted(items: Iterable[Mapping[str, Any]], role_key: str | None) -> int:
    """The sum of the counter items ``items`` read at :func:`count_keys` (in any read, e.g. a
    BatchGetItem with other tables' items): ACTIVE listings (of ``role_key`` when given)."""
    attribute = f"r#{role_key}" if role_key else "n"
    return sum(int(item.get(attribute, 0)) for item in items)


def put_counts_ops(category_key: str, shard: int, counts: dict[str, int]) -> list[dict[str, Any]]:
    """``PutRequest`` items overwriting every copy of one counter shard with absolute ``counts`` (backfill)."""
    return [{**_key(category_key, shard, replica), **counts} for replica in range(COUNTER_REPLICAS)]
