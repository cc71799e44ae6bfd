"""Backfill the list indexes and counters of existing requests, conversations and listings (operator command).

The list routes (``/v1/match-requests/mine``, ``/incoming``, ``/listing/{id}``,
``/v1/conversations`` and ``/v1/listings/mine``) read pages from list GSIs keyed by attributes that items written
written before the list indexes lack, and take ``total`` from counter items that did not exist. This
command, run once after deploying the new indexes:

1. Scans the Requests table (an offline Scan, never a request path) and writes the list index
   attributes (:func:`chalicelib.match_requests.list_indexes.index_attributes`) onto every request
   that lacks them or holds stale ones, conditional on the status it read (a decision in
   between wins; run again to settle);
2. Scans ConversationMembers and writes ``recent`` / ``memberType`` the same way, conditional
   on the ``updatedAt`` it read;
3. Scans Listings and writes the ``ownerNewest`` sort key
   (:func:`chalicelib.listings.owner_list.sort_key`) where missing, conditional on the listing
   still existing with the ``createdAt`` it read, and sets each listing's ``requestCount`` to the
   requests about it in the scan where it differs, conditional on the count it read (a deletion
   compares that count with the requests it finds, so a drifted count refused it with 409);
4. Rewrites every request, conversation and owner's-listings counter item of the Counters table
   (``COUNTERS_TABLE``) with the exact counts of what it scanned (the same rule as the transactions:
   :func:`list_indexes.deltas`, :func:`chalicelib.conversations.repository.member_delta`,
   :func:`chalicelib.listings.owner_list.delta`), deletes counter items that count nothing any more,
   and deletes these counters' items from the SearchIndex table, where they were kept before the
   counters had a table of their own (docs/operations.md, "Upgrading");
5. Scans SavedSearchMatches and writes the ``matchedNewest`` sort key
   (:func:`chalicelib.saved_searches.repository.match_sort_key`) where missing, conditional on the
   match still existing with the ``matchedAt`` it read;
6. Scans Deliveries: moves every logged attempt's ``expiresAt`` to the day-based retention rule
   (:func:`chalicelib.webhooks.delivery.attempt_log.log_expires_at`, conditional on the item still
   existing) and rewrites each webhook's log counter (``COUNT``: attempts per UTC day) from the scan.

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

#: The counter items this command owns (``pk`` prefixes in the Counters table).
COUNTER_PREFIXES = ("count#requests#", "count#conversations#", "count#ownerListings#")


def scan(table: str, **params: Any) -> Iterator[dict[str, Any]]:
    """Every item of ``table`` (paged Scan; offline only)."""
    from chalicelib.persistence import storage

    for page in storage.dynamodb().get_paginator("scan").paginate(TableName=table, **params):
        for item in page.get("Items", []):
            yield storage.from_item(item) or {}


def tally(
    requests: Iterable[dict[str, Any]], members: Iterable[dict[str, Any]], listings: Iterable[dict[str, Any]] = ()
) -> list[dict[str, Any]]:
    """The counter items (absolute counts) of ``requests``, conversation ``members`` and ``listings``."""
    from chalicelib.conversations.repository import member_delta
    from chalicelib.listings import owner_list
    from chalicelib.match_requests import list_indexes
    from chalicelib.search import counters as list_counters

    deltas = [delta for request in requests for delta in list_indexes.deltas(request, None, str(request["status"]))]
    deltas += [member_delta(member) for member in members]
    deltas += [owner_list.delta(str(listing["ownerId"]), 1) for listing in listings]
    return [list_counters.put_request(name, counts) for name, counts in list_counters.merge(deltas).items()]


def _set_missing(table: str, key: dict[str, Any], item: dict[str, Any], wanted: dict[str, str],
                 guard: str, guard_value: Any) -> bool:
    """Write ``wanted`` onto ``item`` when it differs, conditional on ``guard`` unchanged; True when written."""
    from chalicelib.persistence import storage

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


def recount_requests(listing: dict[str, Any], counted: int) -> bool:
    """Set ``listing``'s ``requestCount`` to ``counted`` when it holds another count (absent reads
    as 0), conditional on the count read and on the listing existing; True when written."""
    from chalicelib.kernel.config import settings
    from chalicelib.persistence import storage

    if int(listing.get("requestCount", 0)) == counted:
        return False
    held = "requestCount = :held" if "requestCount" in listing else "attribute_not_exists(requestCount)"
    try:
        storage.update(
            settings().LISTINGS_TABLE, {"listingId": listing["listingId"]}, "SET requestCount = :n",
            condition=f"attribute_exists(listingId) AND {held}",
            ExpressionAttributeValues=storage.values(n=counted, **({"held": listing["requestCount"]} if "requestCount" in listing else {})),
        )
    except storage.ConditionFailed:
        return False  # a request or the deletion moved it meanwhile: run again to settle
    return True


def _counter_keys(table: str) -> Iterator[tuple[Any, Any]]:
    """The keys ``(pk, sk)`` of the items of ``table`` whose ``pk`` starts with one of :data:`COUNTER_PREFIXES`."""
    counted = {"ProjectionExpression": "pk, sk", "FilterExpression": "begins_with(pk, :c)",
               "ExpressionAttributeValues": {":c": {"S": "count#"}}}
    for item in scan(table, **counted):
        if str(item["pk"]).startswith(COUNTER_PREFIXES):
            yield item["pk"], item["sk"]


def _write_counters(counters: list[dict[str, Any]]) -> tuple[int, int]:
    """Overwrite the counter items with ``counters``, delete the other ones this command owns, and
    delete this command's counter items left in the SearchIndex table.

    Returns ``(deleted, legacy)``: stale items deleted from the Counters table, and items deleted
    from the SearchIndex table.
    """
    from chalicelib.kernel.config import settings
    from chalicelib.persistence import storage

    def delete(keys: Iterable[tuple[Any, Any]]) -> list[dict[str, Any]]:
        return [{"DeleteRequest": {"Key": storage.to_item({"pk": pk, "sk": sk})}} for pk, sk in keys]

    config = settings()
    kept = {(c["pk"], c["sk"]) for c in counters}
    stale = delete(key for key in _counter_keys(config.COUNTERS_TABLE) if key not in kept)
    storage.batch_write(config.COUNTERS_TABLE, [{"PutRequest": {"Item": storage.to_item(counter)}} for counter in counters] + stale)
    legacy = delete(_counter_keys(config.SEARCH_INDEX_TABLE))
    storage.batch_write(config.SEARCH_INDEX_TABLE, legacy)
    return len(stale), len(legacy)


def backfill() -> dict[str, int]:
    """Re-index every request, member and listing item and rewrite the list counters.

    Returns ``{"requests", "reindexedRequests", "members", "reindexedMembers", "listings",
    "reindexedListings", "recountedListings", "counters", "deletedCounters", "movedCounters", "matches",
    "reindexedMatches"}`` (``movedCounters``: counter items deleted from the SearchIndex table,
    their counts rewritten in the Counters table) and the counts of :func:`backfill_delivery_log`.
    """
    from collections import Counter

    from chalicelib.conversations.repository import member_index_attributes
    from chalicelib.kernel.config import settings
    from chalicelib.listings import owner_list
    from chalicelib.match_requests import list_indexes
    from chalicelib.saved_searches.repository import match_sort_key

    config = settings()
    requests = list(scan(config.REQUESTS_TABLE))
    reindexed_requests = sum(
        _set_missing(config.REQUESTS_TABLE, {"requestId": r["requestId"]}, r, list_indexes.index_attributes(r), "status", r["status"])
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
    about = Counter(str(r["subjectId"]) for r in requests if r.get("subjectType") == "LISTING")
    recounted = sum(recount_requests(item, about[str(item["listingId"])]) for item in listings)
    counters = tally(requests, members, listings)
    deleted, moved = _write_counters(counters)
    matches = list(scan(config.SAVED_SEARCH_MATCHES_TABLE))
    reindexed_matches = sum(
        _set_missing(config.SAVED_SEARCH_MATCHES_TABLE, {"savedSearchId": m["savedSearchId"], "listingId": m["listingId"]}, m,
                     {"matchedNewest": match_sort_key(m["matchedAt"], m["listingId"])}, "matchedAt", m["matchedAt"])
        for m in matches
    )
    return {"requests": len(requests), "reindexedRequests": reindexed_requests, "members": len(members),
            "reindexedMembers": reindexed_members, "listings": len(listings), "reindexedListings": reindexed_listings,
            "recountedListings": recounted, "counters": len(counters), "deletedCounters": deleted, "movedCounters": moved,
            "matches": len(matches), "reindexedMatches": reindexed_matches, **backfill_delivery_log()}


def backfill_delivery_log() -> dict[str, int]:
    """Step 6: every logged attempt's ``expiresAt`` by the day rule, and every webhook's log counter from the scan.

    Returns ``{"loggedAttempts", "retimedAttempts", "deliveryCounters"}``.
    """
    from collections import Counter, defaultdict

    from chalicelib.kernel.config import settings
    from chalicelib.persistence import storage
    from chalicelib.webhooks.delivery import attempt_log

    table = settings().DELIVERIES_TABLE
    logged = [i for i in scan(table) if str(i["deliveryKey"]).startswith("LOG#")]
    retimed = 0
    days: dict[str, Counter[str]] = defaultdict(Counter)
    for item in logged:
        expires_at = attempt_log.log_expires_at(str(item["attemptedAt"]))
        days[str(item["webhookId"])][str(item["attemptedAt"])[:10]] += 1
        if int(item.get("expiresAt") or 0) == expires_at:
            continue
        try:
            storage.update(table, {"webhookId": item["webhookId"], "deliveryKey": item["deliveryKey"]}, "SET expiresAt = :e",
                           condition="attribute_exists(deliveryKey)", ExpressionAttributeValues=storage.values(e=expires_at))
            retimed += 1
        except storage.ConditionFailed:
            continue  # expired and deleted meanwhile
    for webhook_id, counts in days.items():
        storage.put(table, {
            "webhookId": webhook_id, "deliveryKey": attempt_log.COUNTER_KEY,
            **{f"d#{day}": n for day, n in counts.items()},
            "expiresAt": max(attempt_log.log_expires_at(f"{day}T00:00:00.000Z") for day in counts),
        })
    return {"loggedAttempts": len(logged), "retimedAttempts": retimed, "deliveryCounters": len(days)}


def main() -> int:
    """Run the backfill and print what it did."""
    print(backfill())
    return 0


if __name__ == "__main__":
    sys.exit(main())
