"""Backfill the search indexes of existing listings and profiles (operator command; the reindex path).

Reads the Listings table once (a Scan: this is an offline command, never a request path),
then for every ACTIVE listing writes the index attributes the current code expects
(:func:`chalicelib.listings.index.index_attributes`; e.g. the geo indexes'
``geoCell1/3/5`` + ``geoPoint``), removes the attributes of the replaced geo indexes
(``geo3/4/5``, ``geoSort``), files every listing in the search index
(:mod:`chalicelib.listings.search.indexer`: idempotent and version-checked, as the
Listings-stream consumer; a listing already at its version is skipped), rewrites the counters
(:mod:`chalicelib.listings.counters`, in the Counters table) with the exact counts and deletes
their items from the SearchIndex table, where they were kept before the counters had a table of
their own (docs/operations.md, "Upgrading"). Run it after deploying a change of
the search indexes, while listing status changes are quiet (a change committed between the
Scan and the counter write is not in the recount; run it again to settle). Then it files every
user in the profile index (:mod:`chalicelib.profiles.handlers`, the Users-stream consumer's
call; a Scan of the Users table), equally idempotent and version-checked.

Usage::

    python scripts/search_backfill.py            # tables from the environment (LISTINGS_TABLE, USERS_TABLE, ...)
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))


def scanned(table: str) -> Iterator[dict[str, Any]]:
    """Every item of ``table`` (paged Scan)."""
    from chalicelib.persistence import storage

    for page in storage.dynamodb().get_paginator("scan").paginate(TableName=table):
        for item in page.get("Items", []):
            yield storage.from_item(item) or {}


def listings() -> Iterator[dict[str, Any]]:
    """Every listing item (paged Scan)."""
    from chalicelib.kernel.config import settings

    return scanned(settings().LISTINGS_TABLE)


def backfill_profiles() -> dict[str, int]:
    """File every user in the profile index, 100 at a time, as the Users-stream consumer does
    (:func:`chalicelib.profiles.handlers.apply_changes`); a user whose stored document is at its
    version already is left alone. Returns ``{"users", "profiles"}`` (``profiles``: users filed
    afresh)."""
    from chalicelib.kernel.config import settings
    from chalicelib.profiles import handlers

    seen = filed = 0
    batch: list[dict[str, Any]] = []
    for item in [*scanned(settings().USERS_TABLE), None]:
        if item is not None:
            seen += 1
            batch.append(item)
        if batch and (item is None or len(batch) == 100):
            filed += handlers.apply_changes([(None, user) for user in batch])
            batch = []
    return {"users": seen, "profiles": filed}


def tally(active: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """The counter items (absolute counts per category and shard) of the ACTIVE listings ``active``."""
    from chalicelib.categories.registry import all_categories
    from chalicelib.listings import counters

    counts: dict[tuple[str, int], Counter[str]] = {
        (c, s): Counter() for c in all_categories() for s in range(counters.COUNTER_SHARDS)
    }
    for item in active:
        found = counts.setdefault((item["categoryKey"], counters.counter_shard(item["listingId"])), Counter())
        found["n"] += 1
        found[f"r#{item['roleKey']}"] += 1
    return [item for (category, shard), found in counts.items() for item in counters.put_counts_ops(category, shard, dict(found))]


def backfill_postings(items: Iterable[dict[str, Any]]) -> int:
    """File every listing of ``items`` in the search index, 100 at a time, as the stream consumer
    does (:func:`chalicelib.listings.search.indexer.apply_changes`).

    Idempotent and version-checked like the stream consumer: a listing whose stored document is
    at its version already is left alone, so the backfill can run while the stream flows and can
    be run again. After a change of the index namespace it files every listing afresh (the
    reindex path). Returns how many listings it changed.
    """
    from chalicelib.listings.search import indexer

    changed = 0
    listed = list(items)
    for start in range(0, len(listed), 100):
        changed += indexer.apply_changes([(None, item) for item in listed[start : start + 100]])
    return changed


#: The ``pk`` prefix of the listing counters (:mod:`chalicelib.listings.counters`).
COUNTER_PREFIX = "count#listings#"


def remove_legacy_counters() -> int:
    """Delete the listing counter items left in the SearchIndex table (a paged Scan filtered on
    :data:`COUNTER_PREFIX`); returns how many it deleted."""
    from chalicelib.kernel.config import settings
    from chalicelib.persistence import storage

    table = settings().SEARCH_INDEX_TABLE
    found = storage.dynamodb().get_paginator("scan").paginate(
        TableName=table, ProjectionExpression="pk, sk", FilterExpression="begins_with(pk, :c)",
        ExpressionAttributeValues={":c": {"S": COUNTER_PREFIX}},
    )
    deletes = [{"DeleteRequest": {"Key": key}} for page in found for key in page.get("Items", [])]
    storage.batch_write(table, deletes)
    return len(deletes)


def backfill() -> dict[str, int]:
    """Re-index every ACTIVE listing, file every listing's posting lists, rewrite the counters and
    delete the listing counters left in the SearchIndex table.

    Returns ``{"listings", "reindexed", "counters", "postings", "movedCounters"}`` (``postings``:
    listings whose posting lists were behind their version; ``movedCounters``: counter items
    deleted from the SearchIndex table, their counts rewritten in the Counters table).
    """
    from chalicelib.kernel.config import settings
    from chalicelib.listings.index import LEGACY_GEO_ATTRIBUTES, index_attributes
    from chalicelib.persistence import storage

    active: list[dict[str, Any]] = []
    seen = reindexed = filed = 0
    for item in listings():
        seen += 1
        filed += backfill_postings([item])
        if item.get("status") != "ACTIVE":
            continue
        attributes = index_attributes(item)
        stale = [k for k in LEGACY_GEO_ATTRIBUTES if k in item]  # the legacy geo index keys
        if stale or any(item.get(k) != v for k, v in attributes.items()):
            storage.update(
                settings().LISTINGS_TABLE, {"listingId": item["listingId"]},
                "SET " + ", ".join(f"{k} = :{k}" for k in attributes) + (f" REMOVE {', '.join(stale)}" if stale else ""),
                condition="#st = :active",
                ExpressionAttributeNames={"#st": "status"},
                ExpressionAttributeValues=storage.values(active="ACTIVE", **attributes),
            )
            reindexed += 1
        active.append({k: item[k] for k in ("listingId", "categoryKey", "roleKey")})
    requests = [{"PutRequest": {"Item": storage.to_item(counter)}} for counter in tally(active)]
    storage.batch_write(settings().COUNTERS_TABLE, requests)
    return {"listings": seen, "reindexed": reindexed, "counters": len(requests), "postings": filed,
            "movedCounters": remove_legacy_counters()}


def main() -> int:
    """Run the backfills of listings and profiles and print what they did."""
    print(backfill())
    print(backfill_profiles())
    return 0


if __name__ == "__main__":
    sys.exit(main())
