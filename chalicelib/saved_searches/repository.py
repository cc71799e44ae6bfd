"""Saved-search tables: the searches with each owner's counter, the posting lists, the matches.

* ``SavedSearchesTable`` (``ownerId``, ``savedSearchId``): saved searches
  ``{ownerId, savedSearchId, name, query, alerts, createdAt, postings}`` (``postings``: the
  posting items holding its entries) and, per owner, the counter item
  ``{ownerId, savedSearchId: "#count", n}`` that enforces the per-user limit atomically.
* ``PercolatorTable`` (``postingKey`` = ``<key>#<shard>``): one posting list per key, split in
  shards of at most :data:`SHARD_CAPACITY` entries. An entry is the attribute
  ``e_<savedSearchId>`` (its encoded :class:`~chalicelib.saved_searches.postings.Entry`);
  ``n`` counts the entries; shard 0 lists the other shards in use in the number set ``spill``.
  Posting lists are read by key only (BatchGetItem), never queried. One more item,
  ``{postingKey: "#scopes", s_<scope>: n}``, counts the saved searches per category scope (the
  category of the search, ``*`` for searches of every category), updated in the transactions that
  create and delete them, so the percolator learns from one read that no saved search can match.
* ``SavedSearchMatchesTable`` (``savedSearchId``, ``listingId``): one item per match, so a
  match is recorded once; GSI ``matchedNewest`` (partition ``savedSearchId``, sort
  ``matchedNewest = <matchedAt>#<listingId>``, projection ALL) lists a search's matches newest
  first, ties by listing id, so a key cursor can stand between any two of them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from chalicelib.kernel.config import settings
from chalicelib.persistence import queries, storage
from chalicelib.persistence.transact_items import TransactItem
from chalicelib.saved_searches.records import MatchRecord, PostingShard, SavedSearchRecord, match, saved_search
from chalicelib.search.keyset import ListIndex

#: Sort key of an owner's counter item (sorts before every ``ss_`` id).
COUNTER = "#count"
#: Most entries in one posting shard: at most about 400 bytes each (an id, the saver and a query of
#: at most ``chalicelib.search.percolator.MAX_EMBEDDED_QUERY_CHARS``), so a shard stays near half of DynamoDB's 400 KB per item.
SHARD_CAPACITY = 500
#: Prefix of the entry attributes of a posting item.
ENTRY_PREFIX = "e_"
#: ``postingKey`` of the item counting saved searches per scope (no posting key has a ``#`` first).
SCOPES = "#scopes"
#: Prefix of the count attributes of the scopes item.
SCOPE_PREFIX = "s_"


def _searches() -> str:
    return settings().SAVED_SEARCHES_TABLE


def _postings() -> str:
    return settings().PERCOLATOR_TABLE


def _matches() -> str:
    return settings().SAVED_SEARCH_MATCHES_TABLE


def shard_key(key: str, shard: int) -> str:
    """The ``postingKey`` of shard ``shard`` of posting list ``key``."""
    return f"{key}#{shard}"


def counter_op(owner_id: str, limit: int) -> TransactItem:
    """Transaction ``Update`` taking one of ``owner_id``'s ``limit`` saved-search slots (fails at the limit)."""
    return storage.tx_update(
        _searches(), {"ownerId": owner_id, "savedSearchId": COUNTER}, "ADD n :one",
        condition="attribute_not_exists(n) OR n < :limit",
        ExpressionAttributeValues=storage.values(one=1, limit=limit),
    )


def release_op(owner_id: str) -> TransactItem:
    """Transaction ``Update`` giving one saved-search slot back."""
    return storage.tx_update(
        _searches(), {"ownerId": owner_id, "savedSearchId": COUNTER}, "ADD n :minus",
        condition="n > :zero", ExpressionAttributeValues=storage.values(minus=-1, zero=0),
    )


def forget_counter_op(owner_id: str) -> TransactItem:
    """Transaction ``Delete`` of ``owner_id``'s counter item (the account erasure, once every
    search of the owner is deleted)."""
    return storage.tx_delete(_searches(), {"ownerId": owner_id, "savedSearchId": COUNTER})


def put_op(search: SavedSearchRecord) -> TransactItem:
    """Transaction ``Put`` of a new saved search (fails when its id exists already)."""
    return storage.tx_put(_searches(), search, condition="attribute_not_exists(savedSearchId)")


def delete_op(owner_id: str, saved_search_id: str) -> TransactItem:
    """Transaction ``Delete`` of a saved search, conditional on its existence."""
    return storage.tx_delete(
        _searches(), {"ownerId": owner_id, "savedSearchId": saved_search_id}, condition="attribute_exists(savedSearchId)"
    )


def exists_op(owner_id: str, saved_search_id: str) -> TransactItem:
    """Transaction ``ConditionCheck`` that the saved search still exists (not deleted meanwhile)."""
    return storage.tx_check(
        _searches(), {"ownerId": owner_id, "savedSearchId": saved_search_id}, "attribute_exists(savedSearchId)"
    )


def add_entry_op(key: str, shard: int, saved_search_id: str, entry: str) -> TransactItem:
    """Transaction ``Update`` adding an entry to a posting shard (fails when the shard is full)."""
    return storage.tx_update(
        _postings(), {"postingKey": shard_key(key, shard)}, "SET #e = :e ADD n :one",
        condition="attribute_not_exists(n) OR n < :cap",
        ExpressionAttributeNames={"#e": ENTRY_PREFIX + saved_search_id},
        ExpressionAttributeValues=storage.values(e=entry, one=1, cap=SHARD_CAPACITY),
    )


def spill_op(key: str, shard: int) -> TransactItem:
    """Transaction ``Update`` recording on shard 0 that posting list ``key`` uses shard ``shard``."""
    return storage.tx_update(
        _postings(), {"postingKey": shard_key(key, 0)}, "ADD spill :s",
        ExpressionAttributeValues={":s": {"NS": [str(shard)]}},
    )


def remove_entry_op(posting_key: str, saved_search_id: str) -> TransactItem:
    """Transaction ``Update`` removing an entry from the posting shard ``posting_key``."""
    return storage.tx_update(
        _postings(), {"postingKey": posting_key}, "REMOVE #e ADD n :minus",
        condition="attribute_exists(#e)",
        ExpressionAttributeNames={"#e": ENTRY_PREFIX + saved_search_id},
        ExpressionAttributeValues=storage.values(minus=-1),
    )


def scope_op(scope: str, change: int) -> TransactItem:
    """Transaction ``Update`` adding ``change`` (+1 on create, -1 on delete) to the count of ``scope``."""
    return storage.tx_update(
        _postings(), {"postingKey": SCOPES}, "ADD #s :d",
        ExpressionAttributeNames={"#s": SCOPE_PREFIX + scope}, ExpressionAttributeValues=storage.values(d=change),
    )


def scope_counts() -> dict[str, int]:
    """``{scope: saved searches}`` of every scope counted (one strongly consistent GetItem, so a
    search whose creation committed before the call is counted); empty when none was ever saved."""
    item = storage.get(_postings(), {"postingKey": SCOPES}, consistent=True) or {}
    return {k[len(SCOPE_PREFIX):]: int(v) for k, v in item.items() if k.startswith(SCOPE_PREFIX)}


def get(owner_id: str, saved_search_id: str) -> SavedSearchRecord | None:
    """One saved search of ``owner_id``, or ``None`` (also for an id that is no ``ss_`` id: no read)."""
    if not saved_search_id.startswith("ss_"):
        return None
    item = storage.get(_searches(), {"ownerId": owner_id, "savedSearchId": saved_search_id})
    return None if item is None else saved_search(item)


def get_many(keys: Iterable[tuple[str, str]]) -> list[SavedSearchRecord]:
    """Saved searches by ``(ownerId, savedSearchId)`` (BatchGetItem); missing ones are absent, order is arbitrary."""
    return [saved_search(i) for i in storage.batch_get(_searches(), [{"ownerId": o, "savedSearchId": s} for o, s in keys])]


def list_by_owner(owner_id: str) -> list[SavedSearchRecord]:
    """Every saved search of ``owner_id``, newest first (ids are time-ordered ULIDs; the counter item is left out)."""
    items = storage.query(
        _searches(),
        KeyConditionExpression="ownerId = :o AND begins_with(savedSearchId, :p)",
        ExpressionAttributeValues=storage.values(o=owner_id, p="ss_"),
        ScanIndexForward=False,
    )
    return [saved_search(i) for i in items]


def read_postings(keys: Sequence[str]) -> list[PostingShard]:
    """Every existing shard of the posting lists ``keys``: shard 0 of each, then the shards
    their ``spill`` sets name (two BatchGetItem rounds at most); missing lists are absent."""
    first = storage.batch_get(_postings(), [{"postingKey": shard_key(k, 0)} for k in keys])
    spilled = [
        shard_key(item["postingKey"].rsplit("#", 1)[0], int(shard)) for item in first for shard in item.get("spill") or []
    ]
    more = storage.batch_get(_postings(), [{"postingKey": k} for k in spilled]) if spilled else []
    return [
        {"postingKey": str(item["postingKey"]), "n": int(item.get("n") or 0), "entries": entries(item)} for item in first + more
    ]


def entries(posting: Mapping[str, Any]) -> dict[str, str]:
    """``{savedSearchId: encoded entry}`` of one PercolatorTable item (its ``e_<savedSearchId>`` attributes)."""
    return {k[len(ENTRY_PREFIX):]: str(v) for k, v in posting.items() if k.startswith(ENTRY_PREFIX)}


def match_op(record: MatchRecord) -> TransactItem:
    """Transaction ``Put`` of a match, conditional on it being the first for (saved search, listing)."""
    return storage.tx_put(_matches(), record, condition="attribute_not_exists(listingId)")


def match_sort_key(matched_at: str, listing_id: str) -> str:
    """The ``matchedNewest`` sort key of a match: ``<matchedAt>#<listingId>`` (ISO 8601 UTC, fixed width)."""
    return f"{matched_at}#{listing_id}"


def _match_table_key(_partition: str, sort_value: str) -> dict[str, str]:
    return {"listingId": sort_value.rpartition("#")[2]}


#: A saved search's matches, newest first (the template declares it on SavedSearchMatchesTable).
MATCHES_INDEX = ListIndex("matchedNewest", "savedSearchId", "matchedNewest", _match_table_key)


def matches_after(saved_search_id: str, limit: int, after: str | None = None) -> tuple[list[MatchRecord], bool]:
    """At most ``limit`` matches of a saved search, newest first, after sort key ``after``, and
    whether more may follow.

    One Query of ``matchedNewest`` with ``Limit = limit`` (more only when the 1 MB response limit
    cuts it short), starting after ``after`` (``ExclusiveStartKey``; ``None``: from the newest).

    Parameters
    ----------
    saved_search_id:
        The saved search.
    limit:
        Most matches to read (>= 1).
    after:
        ``matchedNewest`` of the last match already read (:func:`match_sort_key`).

    Returns
    -------
    tuple[list[MatchRecord], bool]
        The matches in index order and ``True`` unless the list is known to end with them.
    """
    params: dict[str, Any] = {
        "IndexName": MATCHES_INDEX.name,
        "KeyConditionExpression": "savedSearchId = :s",
        "ExpressionAttributeValues": storage.values(s=saved_search_id),
        "ScanIndexForward": False,
    }
    if after is not None:
        params["ExclusiveStartKey"] = storage.to_item(MATCHES_INDEX.start_key(saved_search_id, after))
    found, ended = queries.query_up_to(_matches(), limit, **params)
    return [match(i) for i in found], not ended



def match_listing_ids(saved_search_id: str, limit: int) -> tuple[list[str], bool]:
    """The ``listingId`` of at most ``limit`` stored matches of a saved search (key order), and
    whether more may follow (DynamoDB returned a ``LastEvaluatedKey``).

    One strongly consistent Query of the search's partition projecting the key only: it reads
    ``limit`` items at most (the match cleanup deletes what it read before asking again, so it
    needs no start key and never reads a match twice).
    """
    items, last = storage.query_page(
        _matches(), KeyConditionExpression="savedSearchId = :s", ExpressionAttributeValues=storage.values(s=saved_search_id),
        ProjectionExpression="listingId", Limit=limit, ConsistentRead=True,
    )
    return [str(i["listingId"]) for i in items], last is not None


def delete_match_op(saved_search_id: str, listing_id: str) -> TransactItem:
    """Transaction ``Delete`` of one stored match (no condition: deleting a deleted match is a no-op)."""
    return storage.tx_delete(_matches(), {"savedSearchId": saved_search_id, "listingId": listing_id})
