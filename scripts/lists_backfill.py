"""Backfill the list indexes and counters of existing requests, conversations and listings (operator command, issue 13).

The list routes (``/v1/match-requests/mine``, ``/incoming``, ``/listing/{id}``,
``/v1/conversations`` and ``/v1/listings/mine``) read pages from list GSIs keyed by attributes that items written
before issue 13 part 6 lack, and take ``total`` from counter items that did not exist. This
command, run once after deploying the new indexes:

1. Scans the Requests table (an offline Scan, never a request path) and writes the list index
   attributes (:func:`chalicelib.match_requests.lists.index_attributes`) onto every request
   that lacks them or holds stale ones, conditional on the status it read (a decision in
   between wins; run again to settle);
2. Scans ConversationMembers and writes ``recent`` / ``memberType`` the same way, conditional
   on the ``updatedAt`` it read;
3. Scans Listings and writes the ``ownerNewest`` sort key
   (:func:`chalicelib.listings.owner_list.sort_key`) where missing, conditional on the listing
   still existing with the ``createdAt`` it read;
4. Rewrites every request, conversation and owner's-listings counter item with the exact counts of what it
   scanned (the same rule as the transactions: :func:`lists.deltas`,
   :func:`chalicelib.conversations.repository.member_delta`, :func:`chalicelib.listings.owner_list.delta`) and deletes counter items that
   count nothing any more.

Run it while requests, conversations and listings are quiet (or run it twice): a request created or
decided between the Scan and the counter write is not in the recount.

Usage::

    python scripts/lists_backfill.py        # tables from the environment (REQUESTS_TABLE, ...)
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

#: The counter items this command owns (``pk`` prefixes in the SearchIndex table).
COUNTER_PREFIXES = ("count#requests#", "count#conversations#", "count#ownerListings#")


def scan(table: str, **params: Any) -> Iterator[dict[str, Any]]:
    """Every item of ``table`` (paged Scan; offline only)."""
    from chalicelib import storage

    for page in storage.dynamodb().get_paginator("scan").paginate(TableName=table, **params):
        for item in page.get("Items", []):
            yield storage.from_item(item) or {}


def tally(
    requests: Iterable[dict[str, Any]], members: Iterable[dict[str, Any]], listings: Iterable[dict[str, Any]] = ()
) -> list[dict[str, Any]]:
    """The counter items (absolute counts) of ``requests``, conversation ``members`` and ``listings``."""
    from chalicelib import list_counters
    from chalicelib.conversations.repository import member_delta
    from chalicelib.listings import owner_list
    from chalicelib.match_requests import lists

    deltas = [delta for request in requests for delta in lists.deltas(request, None, str(request["status"]))]
    deltas += [member_delta(member) for member in members]
    deltas += [owner_list.delta(str(listing["ownerId"]), 1) for listing in listings]
    return [list_counters.put_request(name, counts) for name, counts in list_counters.merge(deltas).items()]


def _set_missing(table: str, key: dict[str, Any], item: dict[str, Any], wanted: dict[str, str],
                 guard: str, guard_value: Any) -> bool:
    """Write ``wanted`` onto ``item`` when it differs, conditional on ``guard`` unchanged; True when written."""
    from chalicelib import storage

    if all(item.get(name) == value for name, value in wanted.items()):
        return False
    try:
        storage.update(
            table, key, "SET " + ", ".join(f"#a{i} = :a{i}" for i in range(len(wanted))),
            condition="#g = :g",
            ExpressionAttributeNames={"#g": guard, **{f"#a{i}": name for i, name in enumerate(wanted)}},
            ExpressionAttributeValues=storage.values(g=guard_value, **{f"a{i}": v for i, v in enumerate(wanted.values())}),
        )
    except storage.ConditionFailed:
        return False  # changed meanwhile: the change wrote its own attributes
    return True


def _write_counters(counters: list[dict[str, Any]]) -> int:
    """Overwrite the counter items with ``counters`` and delete the other ones this command owns."""
    from chalicelib import storage
    from chalicelib.config import settings

    table = settings().SEARCH_INDEX_TABLE
    kept = {(c["pk"], c["sk"]) for c in counters}
    stale = [
        {"DeleteRequest": {"Key": storage.to_item({"pk": item["pk"], "sk": item["sk"]})}}
        for item in scan(table, ProjectionExpression="pk, sk")
        if str(item["pk"]).startswith(COUNTER_PREFIXES) and (item["pk"], item["sk"]) not in kept
    ]
    writes = [{"PutRequest": {"Item": storage.to_item(counter)}} for counter in counters] + stale
    for start in range(0, len(writes), 25):
        pending: dict[str, Any] = {table: writes[start : start + 25]}
        while pending:
            pending = storage.dynamodb().batch_write_item(RequestItems=pending).get("UnprocessedItems") or {}
    return len(stale)


def backfill() -> dict[str, int]:
    """Re-index every request, member and listing item and rewrite the list counters.

    Returns ``{"requests", "reindexedRequests", "members", "reindexedMembers", "listings",
    "reindexedListings", "counters", "deletedCounters"}``.
    """
    from chalicelib.config import settings
    from chalicelib.conversations.repository import member_index_attributes
    from chalicelib.listings import owner_list
    from chalicelib.match_requests import lists

    config = settings()
    requests = list(scan(config.REQUESTS_TABLE))
    reindexed_requests = sum(
        _set_missing(config.REQUESTS_TABLE, {"requestId": r["requestId"]}, r, lists.index_attributes(r), "status", r["status"])
        for r in requests
    )
    members = list(scan(config.CONVERSATION_MEMBERS_TABLE))
    reindexed_members = sum(
        _set_missing(config.CONVERSATION_MEMBERS_TABLE, {"userId": m["userId"], "conversationId": m["conversationId"]},
                     m, member_index_attributes(m), "updatedAt", m["updatedAt"])
        for m in members
    )
    listings = list(scan(config.LISTINGS_TABLE))
    reindexed_listings = sum(
        _set_missing(config.LISTINGS_TABLE, {"listingId": item["listingId"]}, item,
                     {owner_list.SORT: owner_list.sort_key(item)}, "createdAt", item["createdAt"])
        for item in listings
    )
    counters = tally(requests, members, listings)
    deleted = _write_counters(counters)
    return {"requests": len(requests), "reindexedRequests": reindexed_requests, "members": len(members),
            "reindexedMembers": reindexed_members, "listings": len(listings), "reindexedListings": reindexed_listings,
            "counters": len(counters), "deletedCounters": deleted}


def main() -> int:
    """Run the backfill and print what it did."""
    print(backfill())
    return 0


if __name__ == "__main__":
    sys.exit(main())
